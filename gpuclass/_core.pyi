"""Typed signatures of the compiled core (``_core.pyx``) and its twin (``_core_py.py``)."""

from typing import Final

import numpy as np
import numpy.typing as npt

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
    def __init__(self, keys: npt.ArrayLike) -> None: ...
    def __len__(self) -> int: ...
    def find(self, key: int) -> int: ...
    def lookup(self, queries: npt.ArrayLike) -> npt.NDArray[np.int32]: ...
