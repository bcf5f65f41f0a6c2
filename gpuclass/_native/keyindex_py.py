"""Pure-Python twin of KeyIndex (``keyindex.pxi``): the same answers through ``searchsorted``.

>>> idx = KeyIndex(np.array([3, 7, 9], dtype=np.uint32))
>>> idx.lookup(np.array([7, 8, 3], dtype=np.uint32)).tolist()
[1, -1, 0]
"""

from __future__ import annotations

import numpy as np

from .contract.args import as_key_array, check_sorted_keys

__all__ = ["KeyIndex"]


class KeyIndex:
    """Exact-match index over sorted, unique unsigned keys (``-1`` when absent).

    Binary search (``strategy`` ``"search"``): no hash, so no chosen keys can
    slow it; ``max_run`` is the compiled index's knob, accepted and unused here.
    """

    strategy = "search"

    def __init__(self, keys, *, max_run=None):
        self.keys = check_sorted_keys(keys)

    def __len__(self) -> int:
        return len(self.keys)

    def find(self, key) -> int:
        """Position of one key, or -1."""
        key = int(key)
        if key < 0 or key > 0xFFFFFFFFFFFFFFFF:
            return -1
        keys64 = self.keys.astype(np.uint64, copy=False)
        i = int(np.searchsorted(keys64, np.uint64(key)))
        if i < len(keys64) and int(keys64[i]) == key:
            return i
        return -1

    def lookup(self, queries):
        """Positions of many keys as an int32 array, -1 where absent."""
        q = as_key_array(queries)
        out = np.full(len(q), -1, dtype=np.int32)
        if len(self.keys) == 0 or len(q) == 0:
            return out
        keys64 = self.keys.astype(np.uint64, copy=False)
        q = q.astype(np.uint64, copy=False)
        pos = np.searchsorted(keys64, q)
        pos_c = np.minimum(pos, len(keys64) - 1)
        hit = keys64[pos_c] == q
        out[hit] = pos_c[hit].astype(np.int32)
        return out
