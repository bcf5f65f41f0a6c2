"""The rollup's rules over one group's totals as a list, no numpy: :func:`add_row` adds one
classified row, :func:`merge_row` another group's totals; both meet the row's card model
(the first supported card, a second one mixed) and mark supported cards beside
unsupported GPUs the same way.  The C writes them once (``include/gpuclass_rollup.h``), the
twin (``rollup_py``) loops over these, and :func:`rollup_rows` gives one group's totals
from lists (a machine's few devices, without numpy); ``tests/native/test_match_rules.py``
holds it equal to the compiled rollup.

>>> rollup_rows([1, 2, 1], [0, -1, 3], [4, 0, 4])
[2, 8, 1, 0, 0, 0, 0, 3]
"""

from __future__ import annotations

from ... import constants as C
from ...errors import InputError

__all__ = ["empty_row", "add_row", "merge_row", "rollup_rows"]

_INT32_MAX = 0x7FFFFFFF
# the column each status counts in (NOT_GPU counts nowhere)
_COLUMN = {C.SUPPORTED: C.R_CARDS, C.UNSUPPORTED: C.R_UNSUPPORTED, C.COMPANION: C.R_COMPANIONS,
           C.VIRTUAL_FUNCTION: C.R_VFS, C.INVALID: C.R_INVALID}


def empty_row() -> list[int]:
    """A group with no rows: zeros, no card model (-1)."""
    row = [0] * C.ROLLUP_COLUMNS
    row[C.R_MODEL] = -1
    return row


def _meet_model(row: list[int], model: int) -> None:
    """The first supported card model (-1: none) is the row's; another sets MIXED_MODELS."""
    if model == -1:
        return
    if row[C.R_MODEL] == -1:
        row[C.R_MODEL] = model
    elif row[C.R_MODEL] != model:
        row[C.R_MIXED] |= C.MIXED_MODELS


def _mark_mixed(row: list[int]) -> None:
    if row[C.R_CARDS] > 0 and row[C.R_UNSUPPORTED] > 0:
        row[C.R_MIXED] |= C.MIXED_UNSUPPORTED


def add_row(row: list[int], status: int, card: int, slices: int) -> bool:
    """Add one classified row (a status other than NOT_GPU) to ``row``; False, and ``row``
    unchanged, where the slices would pass the int32 range."""
    if status == C.SUPPORTED:
        if row[C.R_SLICES] + slices > _INT32_MAX:
            return False
        row[C.R_SLICES] += slices
        _meet_model(row, card)
    row[_COLUMN[status]] += 1
    _mark_mixed(row)
    return True


def merge_row(row: list[int], t: list[int]) -> bool:
    """Add a group's totals ``t`` to ``row``, as adding its rows one by one would; False,
    and ``row`` unchanged, where the slices would pass the int32 range."""
    if row[C.R_SLICES] + t[C.R_SLICES] > _INT32_MAX:
        return False
    for col in range(C.ROLLUP_COLUMNS):
        if col not in (C.R_MODEL, C.R_MIXED):
            row[col] += t[col]
    _meet_model(row, t[C.R_MODEL])
    row[C.R_MIXED] |= t[C.R_MIXED] & C.MIXED_MODELS
    _mark_mixed(row)
    return True


def rollup_rows(status: list[int], card: list[int], slices: list[int]) -> list[int]:
    """One group's totals (the row of ``rollup``'s matrix) from checked lists: statuses of
    ``gpuclass.constants``, cards, slices (uint16)."""
    row = empty_row()
    for i, st in enumerate(status):
        if st == C.NOT_GPU:
            continue
        if st not in _COLUMN:
            raise InputError(f"status: value {st} at index {i} is not a status code")
        if not add_row(row, st, card[i], slices[i]):
            raise InputError(f"slices: the total passes the int32 range at index {i}")
    return row
