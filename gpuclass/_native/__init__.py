"""The kernels: the compiled core (``gpuclass._core``) or its pure-Python twin.

``core`` is the one in use: the compiled core when it imports, else the twin (chosen on
first use: every name here is imported when first asked for, so that
``compile_rules``, ``match_rows`` and ``rollup_rows``, the matcher's and the rollup's rules
over lists, and ``read_device_rows``, the twin's sysfs reader, load no numpy);
``GPUCLASS_NO_EXTENSIONS=1`` forces the twin.  ``COMPILED_IMPORT_ERROR`` keeps
the reason the compiled core is not used (tests fail on it where the build
should have produced the extension).  ``compiled`` (or None) and ``twin`` are
both reachable, for the differential tests.

Each kernel pair has one stem: ``X.pxi`` (compiled, C in ``include/``, declared
in ``kernels.pxd``), ``X_py.py`` (twin) and ``contract/X.py`` (what both share:
layouts, argument checks, codes).  Nothing outside this package imports the
inside of a pair: it uses ``core`` and the names re-exported here.

>>> core.parse_pci_ids(b"10de  NVIDIA\\n")[0]["vendor_keys"].tolist()
[4318]
"""

from __future__ import annotations

import os

from ..lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

    from .contract.args import as_id_array, as_key_array, as_unsigned
    from .contract.audit import bitmap_bools, cell_text, cell_value, numpy_dtype, numpy_values
    from .contract.audit import problem_text
    from .contract.audit import column_of as key_column
    from .contract.audit import table_columns as audit_columns
    from .contract.match import MatchTables, build_match_tables, tables_from_rules
    from .contract.parquet import uvarint, zigzag
    from .contract.pciids import KEY_DTYPES, TABLES
    from .contract.rollup_rules import rollup_rows
    from .sysfs_py import read_device_rows
    from .contract.rules import RuleMaps, compile_rules, match_rows
    from .contract.sysfs import DEFAULTS as SYSFS_DEFAULTS
    from .contract.sysfs import DIRFLAGS, Root, why
    from .contract.sysfs import VALUE_COLUMNS as SYSFS_COLUMNS

    core: ModuleType
    compiled: ModuleType | None
    COMPILED_IMPORT_ERROR: str | None

__all__ = ["core", "compiled", "twin", "COMPILED_IMPORT_ERROR", "MatchTables", "build_match_tables",
           "TABLES", "KEY_DTYPES", "SYSFS_COLUMNS", "SYSFS_DEFAULTS", "DIRFLAGS", "Root", "why",
           "as_id_array", "as_key_array", "as_unsigned", "audit_columns", "cell_text", "cell_value",
           "bitmap_bools", "numpy_dtype", "numpy_values",
           "problem_text", "key_column", "RuleMaps", "compile_rules", "match_rows", "tables_from_rules", "rollup_rows", "read_device_rows",
           "uvarint", "zigzag"]

# name -> (module, its name there).  Imported on first use: the compiled core and
# most contracts load numpy, and a caller of the rules alone (contract/rules.py) does without.
_EXPORTS = {
    "as_id_array": ("contract.args", "as_id_array"), "as_key_array": ("contract.args", "as_key_array"),
    "as_unsigned": ("contract.args", "as_unsigned"),
    "cell_text": ("contract.audit", "cell_text"), "cell_value": ("contract.audit", "cell_value"),
    "problem_text": ("contract.audit", "problem_text"), "key_column": ("contract.audit", "column_of"),
    "bitmap_bools": ("contract.audit", "bitmap_bools"), "numpy_dtype": ("contract.audit", "numpy_dtype"),
    "numpy_values": ("contract.audit", "numpy_values"),
    "audit_columns": ("contract.audit", "table_columns"),
    "MatchTables": ("contract.match", "MatchTables"), "build_match_tables": ("contract.match", "build_match_tables"),
    "tables_from_rules": ("contract.match", "tables_from_rules"),
    "uvarint": ("contract.parquet", "uvarint"), "zigzag": ("contract.parquet", "zigzag"),
    "KEY_DTYPES": ("contract.pciids", "KEY_DTYPES"), "TABLES": ("contract.pciids", "TABLES"),
    "RuleMaps": ("contract.rules", "RuleMaps"), "compile_rules": ("contract.rules", "compile_rules"),
    "match_rows": ("contract.rules", "match_rows"), "rollup_rows": ("contract.rollup_rules", "rollup_rows"),
    "SYSFS_DEFAULTS": ("contract.sysfs", "DEFAULTS"), "DIRFLAGS": ("contract.sysfs", "DIRFLAGS"),
    "Root": ("contract.sysfs", "Root"), "why": ("contract.sysfs", "why"), "SYSFS_COLUMNS": ("contract.sysfs", "VALUE_COLUMNS"),
    # the twin's reader with its values as lists: device directories read without numpy
    "read_device_rows": ("sysfs_py", "read_device_rows"),
}


def _choose() -> None:
    """Load the compiled core (or say why not) and pick the one in use: on first use of
    ``core``, ``compiled`` or ``COMPILED_IMPORT_ERROR``."""
    import importlib

    chosen, error = None, None
    if os.environ.get("GPUCLASS_NO_EXTENSIONS", "") not in ("", "0"):
        error = "disabled by GPUCLASS_NO_EXTENSIONS"
    else:
        try:
            from .. import _core as chosen  # type: ignore[no-redef]
        except ImportError as exc:  # pragma: no cover - exercised in the no-build CI leg
            import importlib.util

            if importlib.util.find_spec(f"{__name__.rpartition('.')[0]}._core") is None:
                error = ("the compiled core is not built here (installed without a C compiler, "
                         "or a checkout without build_ext --inplace)")
            else:  # built, and failed to load: say why
                error = f"{type(exc).__name__}: {exc}"
    g = globals()
    g.setdefault("compiled", chosen)
    g.setdefault("COMPILED_IMPORT_ERROR", error)
    g.setdefault("core", chosen if chosen is not None else importlib.import_module(f"{__name__}.twin"))


_exported = lazy_exports(__name__, _EXPORTS, globals())


def __getattr__(name: str):
    # The twin is imported when asked for (tests, the no-build fallback): a process on
    # the compiled core does not pay for it.
    import importlib

    if name in ("core", "compiled", "COMPILED_IMPORT_ERROR"):
        _choose()
        return globals()[name]
    if name == "twin":
        return importlib.import_module(f"{__name__}.twin")
    return _exported(name)
