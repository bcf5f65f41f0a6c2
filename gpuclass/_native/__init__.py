"""The kernels: the compiled core (``gpuclass._core``) or its pure-Python twin.

``core`` is the one in use: the compiled core when it imports, else the twin;
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
from types import ModuleType

from .contract.args import as_id_array, as_key_array, as_unsigned
from .contract.audit import cell_text, cell_value, problem_text
from .contract.audit import column_of as key_column
from .contract.audit import table_columns as audit_columns
from .contract.match import MatchTables, build_match_tables
from .contract.pciids import KEY_DTYPES, TABLES
from .contract.sysfs import DEFAULTS as SYSFS_DEFAULTS
from .contract.sysfs import DIRFLAGS, Root, why
from .contract.sysfs import VALUE_COLUMNS as SYSFS_COLUMNS

__all__ = ["core", "compiled", "twin", "COMPILED_IMPORT_ERROR", "MatchTables", "build_match_tables",
           "TABLES", "KEY_DTYPES", "SYSFS_COLUMNS", "SYSFS_DEFAULTS", "DIRFLAGS", "Root", "why",
           "as_id_array", "as_key_array", "as_unsigned", "audit_columns", "cell_text", "cell_value",
           "problem_text", "key_column"]

compiled: ModuleType | None = None
COMPILED_IMPORT_ERROR: str | None = None
if os.environ.get("GPUCLASS_NO_EXTENSIONS", "") not in ("", "0"):
    COMPILED_IMPORT_ERROR = "disabled by GPUCLASS_NO_EXTENSIONS"
else:
    try:
        from .. import _core as compiled  # type: ignore[no-redef]
    except ImportError as exc:  # pragma: no cover - exercised in the no-build CI leg
        COMPILED_IMPORT_ERROR = f"{type(exc).__name__}: {exc}"
if compiled is not None:
    core: ModuleType = compiled
else:
    from . import twin
    core = twin


def __getattr__(name: str) -> ModuleType:
    # The twin is imported when asked for (tests, the no-build fallback): a process on
    # the compiled core does not pay for it.
    if name == "twin":
        import importlib
        return importlib.import_module(f"{__name__}.twin")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
