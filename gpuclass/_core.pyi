"""Typed signatures of the compiled core (``_core.pyx``) and its twin (``_core_py.py``)."""

from typing import Final

import numpy as np
import numpy.typing as npt

from ._native.contract.sysfs import Root
from .errors import SkippedLine

IS_COMPILED: Final[bool]

Tables = dict[str, npt.NDArray[np.unsignedinteger]]

def scan_pci_ids(
    data: bytes | bytearray | memoryview, strict: bool = True
) -> tuple[
    list[npt.NDArray[np.uint64]],  # keys per table
    list[npt.NDArray[np.uint32]],  # entry numbers per table
    npt.NDArray[np.uint32],  # line of each entry
    npt.NDArray[np.uint32],  # name start offsets
    npt.NDArray[np.uint32],  # name end offsets
    list[tuple[int, int, int, int]],  # (line, code, field, start) per bad line
]: ...
def parse_pci_ids(
    data: bytes | bytearray | memoryview, strict: bool = True, filename: str = "<pci.ids>"
) -> tuple[Tables, list[SkippedLine]]: ...

class KeyIndex:
    keys: npt.NDArray[np.unsignedinteger]
    def __init__(self, keys: npt.ArrayLike, *, max_run: int | None = None) -> None: ...
    @property
    def strategy(self) -> str: ...
    def __len__(self) -> int: ...
    def find(self, key: int) -> int: ...
    def lookup(self, queries: npt.ArrayLike) -> npt.NDArray[np.int32]: ...

# -- the allowlist matcher (_match.pxi; twin: _match_py.py) ----------------------------

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
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int16], npt.NDArray[np.uint16]]: ...
def rollup(
    status: npt.ArrayLike,
    card: npt.ArrayLike,
    slices: npt.ArrayLike,
    group: npt.ArrayLike | None = None,
    n_groups: int = 1,
) -> npt.NDArray[np.int64]: ...

# -- sysfs device reading (_sysfs.pxi; twin: _sysfs_py.py) ------------------------------

def read_devices(
    dir_fd: int, names: list[str], devdir: str, root: Root | None
) -> tuple[npt.NDArray[np.int64], list[str | None], list[str | None]]: ...
