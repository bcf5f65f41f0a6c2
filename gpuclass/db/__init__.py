"""The PCI ID database: pci.ids into sorted arrays and one name blob, cached.

- :mod:`~gpuclass.db.database`: :class:`PciDatabase` (names, vectorized lookups)
  and :func:`default_database`;
- :mod:`~gpuclass.db.cache`: the compiled cache file (a trust boundary), and who may
  write a cache (:func:`~gpuclass.db.cache.trust_problem`);
- :mod:`~gpuclass.db.aliases`: the cache directory's aliases and stale temp files;
- :mod:`~gpuclass.db.locate`: which pci.ids to use, and reading it.

>>> default_database().vendor_name(0x10DE)
'NVIDIA Corporation'
"""

from __future__ import annotations

from .cache import cache_dir
from .database import TABLES, PciDatabase, default_database
from .locate import bundled_path, read_pci_ids, resolve_path, system_pci_ids

__all__ = ["PciDatabase", "default_database", "cache_dir", "TABLES", "bundled_path",
           "system_pci_ids", "resolve_path", "read_pci_ids"]
