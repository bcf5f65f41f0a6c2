"""The PCI ID database: pci.ids into sorted arrays and one name blob, cached.

- :mod:`~gpuclass.db.database`: :class:`PciDatabase` (names, vectorized lookups)
  and :func:`default_database`;
- :mod:`~gpuclass.db.cache`: the compiled cache file (a trust boundary; who may write
  a cache: :func:`~gpuclass.cachedir.trust_problem`);
- :mod:`~gpuclass.db.aliases`: the cache directory's aliases and stale temp files;
- :mod:`~gpuclass.db.locate`: which pci.ids to use, and reading it.

>>> from gpuclass.db import default_database
>>> default_database().vendor_name(0x10DE)
'NVIDIA Corporation'
"""

from __future__ import annotations

TYPE_CHECKING = False

from ..lazy import lazy_exports

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from .cache import cache_dir
    from .database import TABLES, PciDatabase, default_database
    from .locate import bundled_path, read_pci_ids, resolve_path, system_pci_ids

# Imported on first use: reading where pci.ids is (locate) needs no numpy.
_LAZY = {"cache_dir": "cache", "TABLES": "database", "PciDatabase": "database",
         "default_database": "database", "bundled_path": "locate", "read_pci_ids": "locate",
         "resolve_path": "locate", "system_pci_ids": "locate"}


__getattr__ = lazy_exports(__name__, _LAZY, globals())


__all__ = ["PciDatabase", "default_database", "cache_dir", "TABLES", "bundled_path",
           "system_pci_ids", "resolve_path", "read_pci_ids"]
