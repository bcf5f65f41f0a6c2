"""Pure-Python twin of the CSV cell splitter (``csv.pxi``): the same rows and cells.

>>> rows, end, cols = csv_cells(b'a,"b,c"\\n\\nd,e\\n', 0, 2, [1], 100, 10)
>>> rows, end, bytes(cols[0][1])
(1, 8, b'b,c')
"""

from __future__ import annotations

import numpy as np

from .contract.csv import cells_arguments

__all__ = ["csv_cells"]

_SPACE = frozenset(b" \t\x0b\x0c\x1c\x1d\x1e\x1f")


def _cells(line: bytes, width: int, limit: int) -> list[bytes] | None:
    """The cells of one line (without its line end) where it is plain, else None."""
    if b"\r" in line or b"\x00" in line:
        return None
    if all(c >= 0x80 or c in _SPACE for c in line):
        return None  # blank to str.strip(), or only other characters it may strip
    cells: list[bytes] = []
    p, n = 0, len(line)
    while True:
        if p < n and line[p] == 0x22:
            q = line.find(b'"', p + 1)
            if q < 0 or (q + 1 < n and line[q + 1] != 0x2C):
                return None
            cell, q = line[p + 1:q], q + 1
        else:
            q = line.find(b",", p)
            q = n if q < 0 else q
            cell = line[p:q]
            if b'"' in cell:
                return None
        if len(cell) > limit or len(cells) >= width:
            return None
        cells.append(cell)
        if q >= n:
            break
        p = q + 1
    return cells if len(cells) == width else None


def csv_cells(text, pos: int, width: int, wanted, limit: int, room: int):
    """See the compiled ``csv_cells``."""
    view, want = cells_arguments(text, pos, width, wanted, limit, room)
    data = view.tobytes()
    n = len(data)
    picked: list[list[bytes]] = [[] for _ in want]
    rows = 0
    while pos < n and rows < room:
        nl = data.find(b"\n", pos)
        stop, nxt = (n, n) if nl < 0 else (nl, nl + 1)
        line = data[pos:stop]
        if line.endswith(b"\r"):
            line = line[:-1]
        cells = _cells(line, width, limit)
        if cells is None:
            break
        for j, c in enumerate(want.tolist()):
            picked[j].append(cells[c])
        rows += 1
        pos = nxt
    columns = []
    for cells in picked:
        offsets = np.zeros(rows + 1, np.int32)
        np.cumsum([len(c) for c in cells], out=offsets[1:])
        columns.append((offsets, np.frombuffer(b"".join(cells), np.uint8).copy()))
    return rows, pos, columns
