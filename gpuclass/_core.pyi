"""Typed signatures of the compiled core (``_core.pyx``, kernels in ``_native/*.pxi``) and of its
twin (``_native/twin.py``): the same names, signatures and results (``tests/test_types.py``)."""

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ._native.contract.audit import AuditRuns, Column
from ._native.contract.sysfs import Root
from .errors import SkippedLine

IS_COMPILED: Final[bool]

Tables = dict[str, npt.NDArray[np.unsignedinteger]]

# -- the pci.ids tokenizer (_native/pciids.pxi; twin: _native/pciids_py.py) -------------

def scan_pci_ids(
    data: bytes | bytearray | memoryview, strict: bool = True
) -> tuple[
    list[npt.NDArray[np.uint64]],  # keys per table
    list[npt.NDArray[np.uint32]],  # entry numbers per table
    npt.NDArray[np.uint32],  # line of each entry
    npt.NDArray[np.uint32],  # name start offsets
    npt.NDArray[np.uint32],  # name end offsets
    list[tuple[int, int, int, int]],  # (line, code, field, start) per bad or flagged line
]: ...
def parse_pci_ids(
    data: bytes | bytearray | memoryview, strict: bool = True, filename: str = "<pci.ids>"
) -> tuple[Tables, list[SkippedLine]]: ...

# -- hashed key lookups (_native/keyindex.pxi; twin: _native/keyindex_py.py) ------------

class KeyIndex:
    keys: npt.NDArray[np.unsignedinteger]
    def __init__(self, keys: npt.ArrayLike, *, max_run: int | None = None) -> None: ...
    @property
    def strategy(self) -> str: ...
    def __len__(self) -> int: ...
    def find(self, key: int) -> int: ...
    def lookup(self, queries: npt.ArrayLike) -> npt.NDArray[np.int32]: ...

# -- the allowlist matcher (_native/match.pxi; twin: _native/match_py.py) ----------------

def match_devices(
    tables: object,
    vendor: npt.ArrayLike,
    device: npt.ArrayLike,
    subvendor: npt.ArrayLike | None,
    subdevice: npt.ArrayLike | None,
    class_code: npt.ArrayLike,
    has_subsystem: npt.ArrayLike | None = None,
    flags: npt.ArrayLike | None = None,
    group: npt.ArrayLike | None = None,
    domain: npt.ArrayLike | None = None,
    bus: npt.ArrayLike | None = None,
    slot: npt.ArrayLike | None = None,
    out: tuple[npt.NDArray[np.uint8], npt.NDArray[np.int16], npt.NDArray[np.uint16]] | None = None,
    threads: int | None = None,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int16], npt.NDArray[np.uint16]]: ...

# -- the rollup (_native/rollup.pxi; twin: _native/rollup_py.py) ------------------------

def rollup(
    status: npt.ArrayLike,
    card: npt.ArrayLike,
    slices: npt.ArrayLike,
    group: npt.ArrayLike | None = None,
    n_groups: int = 1,
    n_cards: int | None = None,
) -> npt.NDArray[np.int32] | tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]: ...
def merge_runs(
    group: npt.ArrayLike,
    totals: npt.ArrayLike,
    counts: npt.ArrayLike,
    n_groups: int,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]: ...

# -- device tables (_native/audit.pxi; twin: _native/audit_py.py) -----------------------

def audit_rows(
    tables: object,
    columns: Sequence[Column],  # server, vendor, device, class, subvendor, subdevice
    n_cards: int,
) -> AuditRuns: ...
def parse_id_cells(
    column: Column,
    field: str,  # one of contract.audit.FIELDS: vendor, device, class, subvendor, subdevice
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint32]]: ...  # (CELL_* state, value)
def key_hashes(column: Column, seed: int) -> npt.NDArray[np.uint64]: ...
def text_rising(column: Column) -> bool: ...
def take_text(
    column: Column, indices: npt.ArrayLike, empty: Callable[[int, Any], npt.NDArray[Any]] | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]: ...

class KeySet:
    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def add(
        self, hashes: npt.ArrayLike, base: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...

# -- sysfs device reading (_native/sysfs.pxi; twin: _native/sysfs_py.py) ----------------

def read_devices(
    dir_fd: int, names: list[str], devdir: str, root: Root | None
) -> tuple[npt.NDArray[np.int64], list[str | None], list[str | None]]: ...

# -- Parquet page encodings (_native/parquet.pxi; twin: _native/parquet_py.py) ------------

def parquet_dictionary(
    values: npt.ArrayLike,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]] | None: ...
def parquet_hybrid(index: npt.ArrayLike, width: int) -> bytes: ...
def parquet_delta(values: npt.ArrayLike) -> bytes: ...
def parquet_text_bounds(starts: npt.ArrayLike, data: npt.ArrayLike | bytes) -> tuple[int, int]: ...

# -- CSV lines split into cells (_native/csv.pxi; twin: _native/csv_py.py) -----------------

def csv_cells(
    text: bytes | bytearray | memoryview, pos: int, width: int, wanted: npt.ArrayLike, limit: int, room: int
) -> tuple[int, int, list[tuple[npt.NDArray[np.int32], npt.NDArray[np.uint8]]]]: ...
