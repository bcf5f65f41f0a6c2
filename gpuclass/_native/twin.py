"""The pure-Python core: every kernel's twin under the compiled core's names.

``gpuclass._core`` (compiled) and this module expose the same functions with the
same signatures, results and exception types; the differential tests hold both
to that.  Selected with ``GPUCLASS_NO_EXTENSIONS=1`` or when the extension is
not built (see :mod:`gpuclass._native`).

>>> KeyIndex([3, 7, 9]).lookup([7, 8, 3]).tolist()
[1, -1, 0]
"""

from __future__ import annotations

from .audit_py import KeySet, audit_rows, key_hashes, parse_id_cells, take_text, text_rising
from .csv_py import csv_cells
from .keyindex_py import KeyIndex
from .match_py import match_devices
from .parquet_py import parquet_delta, parquet_dictionary, parquet_hybrid, parquet_text_bounds
from .pciids_py import parse_pci_ids, scan_pci_ids
from .rollup_py import merge_runs, rollup
from .sysfs_py import read_devices

__all__ = ["IS_COMPILED", "scan_pci_ids", "parse_pci_ids", "KeyIndex", "match_devices", "rollup",
           "read_devices", "audit_rows", "parse_id_cells", "key_hashes", "KeySet", "text_rising", "take_text",
           "merge_runs", "parquet_dictionary", "parquet_hybrid", "parquet_delta", "parquet_text_bounds",
           "csv_cells"]

IS_COMPILED = False
