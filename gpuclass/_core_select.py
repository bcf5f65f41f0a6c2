"""Pick the compiled core, or its pure-Python twin.

``GPUCLASS_NO_EXTENSIONS=1`` forces the twin.  Otherwise the compiled core is
used when it imports; when it does not, the twin is used and
``COMPILED_IMPORT_ERROR`` keeps the reason (tests fail on it where the build
should have produced the extension).

>>> core.parse_pci_ids(b"10de  NVIDIA\\n")[0]["vendor_keys"].tolist()
[4318]
"""

from __future__ import annotations

import os

COMPILED_IMPORT_ERROR: str | None = None

if os.environ.get("GPUCLASS_NO_EXTENSIONS", "") not in ("", "0"):
    from . import _core_py as core

    COMPILED_IMPORT_ERROR = "disabled by GPUCLASS_NO_EXTENSIONS"
else:
    try:
        from . import _core as core  # type: ignore[no-redef]
    except ImportError as exc:  # pragma: no cover - exercised in the no-build CI leg
        from . import _core_py as core

        COMPILED_IMPORT_ERROR = f"{type(exc).__name__}: {exc}"

__all__ = ["core", "COMPILED_IMPORT_ERROR"]
