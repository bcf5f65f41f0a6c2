"""What both CSV cell splitters (``csv.pxi``, ``csv_py.py``) share: their argument checks,
which reject the same inputs with the same errors before any scan.

>>> cells_arguments(b"a,b\\n", 0, 2, [1], 10, 5)[1].tolist()
[1]
>>> cells_arguments(b"a,b\\n", 0, 2, [2], 10, 5)
Traceback (most recent call last):
...
gpuclass.errors.InputError: wanted: cell 2 is not below the width 2
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError

__all__ = ["cells_arguments"]


def cells_arguments(text, pos: int, width: int, wanted, limit: int, room: int) -> tuple[memoryview, np.ndarray]:
    """``text`` as bytes (a bytes-like object of one-byte items) and ``wanted`` as int32,
    once every argument is in range: ``pos`` within the text, ``width`` 1 or more, each
    wanted cell below it and named once, ``limit`` and ``room`` 0 or more."""
    view = memoryview(text)
    if view.itemsize != 1 or view.ndim != 1 or not view.c_contiguous:
        raise InputError("text: expected contiguous bytes")
    if not 0 <= pos <= view.nbytes:
        raise InputError(f"pos: {pos} is outside the text's {view.nbytes} bytes")
    if width < 1:
        raise InputError(f"width: expected 1 or more, got {width}")
    if limit < 0 or room < 0:
        raise InputError(f"limit and room: expected 0 or more, got {limit} and {room}")
    want = np.asarray(wanted)
    if want.ndim != 1 or (want.size and want.dtype.kind not in "iu"):
        raise InputError("wanted: expected a 1-D array of cell numbers")
    seen: set[int] = set()
    for c in want.tolist():
        if not 0 <= c < width:
            raise InputError(f"wanted: cell {c} is not below the width {width}")
        if c in seen:
            raise InputError(f"wanted: cell {c} named twice")
        seen.add(c)
    return view.cast("B"), np.ascontiguousarray(want, dtype=np.int32)
