"""The rollup pair's contract: argument checks and errors of ``rollup`` and ``merge_runs``.

Both versions (``rollup.pxi`` compiled, C in ``include/gpuclass_rollup.h``, and
``rollup_py.py``) call these checks, so they accept and reject the same inputs with the
same errors.  The rollup's columns and mixed-node bits are gpuclass.constants'.

>>> n, st, cd, sc, g, ng, nc = prepare_rollup_args([1, 0], [2, -1], [4, 0], None, 1, 7)
>>> n, st.dtype.name, cd.tolist(), ng, nc
(2, 'uint8', [2, -1], 1, 7)
"""

from typing import Any

import numpy as np

from ... import constants as C
from ...errors import InputError
from .args import as_int64, as_unsigned, contiguous
from .match import MAX_CARDS

__all__ = ["RU_STATUS", "RU_GROUP", "RU_OVERFLOW", "RU_CARD", "ROLLUP_CHUNK", "prepare_rollup_args",
           "rollup_error", "prepare_merge_args", "merge_overflow_error"]

# rollup error codes (the kernel's "what"; gpuclass_codes.h GPUCLASS_RU_*), and the rows
# the rollup checks at a time (its first bad row is the first of the first bad chunk)
RU_STATUS, RU_GROUP, RU_OVERFLOW, RU_CARD = range(4)
ROLLUP_CHUNK = 4096


def _same_length(arr: np.ndarray, n: int, name: str) -> None:
    if arr.shape[0] != n:
        raise InputError(f"{name}: length {arr.shape[0]} does not match the status' length {n}")


def prepare_rollup_args(status, card, slices, group, n_groups, n_cards=None):
    """Check ``rollup``'s arguments: uint8 status, int16 card, uint16 slices, int32 or int64
    group, and ``n_cards`` (None: no per-card counts)."""
    st = contiguous(as_unsigned(status, "status", np.uint8, 0xFF))
    n = st.shape[0]
    if n > 0x7FFFFFFF:
        raise InputError(f"status: {n} rows; the rollup's int32 counts take at most 2**31 - 1")
    cd = np.asarray(card)
    if cd.ndim == 1 and cd.size == 0:
        cd = cd.astype(np.int16)  # [] arrives as float64
    if cd.ndim != 1 or cd.dtype.kind not in "iu":
        raise InputError(f"card: expected a 1-D integer array, got {cd.dtype} of shape {cd.shape}")
    if cd.dtype != np.int16:
        if cd.size and (int(cd.min()) < -1 or int(cd.max()) > MAX_CARDS):
            raise InputError(f"card: values must lie in [-1, {MAX_CARDS}]")
        cd = cd.astype(np.int16)
    cd = contiguous(cd)
    _same_length(cd, n, "card")
    sc = contiguous(as_unsigned(slices, "slices", np.uint16, 0xFFFF))
    _same_length(sc, n, "slices")
    n_groups = int(n_groups)
    if n_groups < 0:
        raise InputError(f"n_groups: {n_groups} is negative")
    g = None
    if group is not None:
        g = np.asarray(group)
        g = contiguous(g if g.dtype == np.int32 and g.ndim == 1 else as_int64(group, "group"))
        _same_length(g, n, "group")
    elif n and n_groups < 1:
        raise InputError("n_groups: must be at least 1 without a group array")
    if n_cards is not None:
        n_cards = int(n_cards)
        if not 0 <= n_cards <= MAX_CARDS:
            raise InputError(f"n_cards: {n_cards} is not in [0, {MAX_CARDS}]")
    return n, st, cd, sc, g, n_groups, n_cards


def rollup_error(what: int, status, card, group, at: int, n_groups: int, n_cards) -> InputError:
    """The error for the rollup's first bad row (``what``: the kernel's reason code)."""
    if what == RU_STATUS:
        return InputError(f"status: value {int(status[at])} at index {at} is not a status code")
    if what == RU_GROUP:
        return InputError(f"group: value {int(group[at])} at index {at} is outside [0, {n_groups})")
    if what == RU_OVERFLOW:
        return InputError(f"slices: the group of index {at} sums past the int32 range")
    return InputError(f"card: value {int(card[at])} at index {at} of a supported row is outside "
                      f"[0, {n_cards})")


def prepare_merge_args(group: Any, totals: Any, counts: Any, n_groups: Any):
    """Check ``merge_runs``' arguments: a group per run in [0, n_groups), int32 totals and counts."""
    t = np.ascontiguousarray(totals)
    c = np.ascontiguousarray(counts)
    g = np.ascontiguousarray(np.asarray(group), dtype=np.int64)
    n_groups = int(n_groups)
    if t.dtype != np.int32 or t.ndim != 2 or t.shape[1] != C.ROLLUP_COLUMNS:
        raise InputError(f"totals: expected (runs, {C.ROLLUP_COLUMNS}) int32")
    if c.dtype != np.int32 or c.ndim != 2 or c.shape[0] != t.shape[0]:
        raise InputError("counts: expected (runs, cards) int32")
    if g.ndim != 1 or g.shape[0] != t.shape[0]:
        raise InputError("group: expected one group per run")
    if g.size and (int(g.min()) < 0 or int(g.max()) >= n_groups):
        raise InputError(f"group: values must lie in [0, {n_groups})")
    return g, t, c, n_groups, c.shape[1]


def merge_overflow_error(run: int) -> InputError:
    return InputError(f"slices: the server of run {run} sums past the int32 range")

