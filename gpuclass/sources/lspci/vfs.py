"""Virtual functions told apart in a dump that may lack their physical function.

A physical GPU is function 0 of its device; its other functions are audio, USB or
serial, never a GPU class.  So a GPU function above ``.0`` is a virtual function,
and where a bus shows such functions of one vendor:device, that bus carries SR-IOV
for the ID: its physical function (if the dump has it at all) is the first of them,
at function 0, with its virtual functions after it in its own slot, or at ``00.0``
with an ARI run of them (offset and stride counted across slot boundaries:
``8c:03.7``, ``8c:04.0``, ``8c:04.1``) after it.  Every other GPU function of that ID
on that bus is virtual, the ``.0`` of the run's later slots included.  A bus whose
GPUs of one ID are all at function 0 (cards in slots of a virtual machine's bus 00)
has no virtual functions of it.

Rows whose SR-IOV capability (``-vvv``) made them physical functions (``FLAG_PF``)
are never virtual.

>>> import numpy as np
>>> bus, slot, fn = np.array([0x8c] * 4), np.array([3, 4, 4, 4]), np.array([7, 0, 1, 2])
>>> virtual_functions(bus, slot, fn, np.zeros(4, np.uint64), np.ones(4, bool)).tolist()
[True, True, True, True]
>>> virtual_functions(np.array([0x81, 0x81, 0x82]), np.array([0, 0, 0]), np.array([0, 4, 0]),
...                   np.zeros(3, np.uint64), np.ones(3, bool)).tolist()
[False, True, False]
"""

from __future__ import annotations

import numpy as np

__all__ = ["virtual_functions"]


def virtual_functions(bus: np.ndarray, slot: np.ndarray, function: np.ndarray, ids: np.ndarray,
                      candidates: np.ndarray) -> np.ndarray:
    """The rows among ``candidates`` (readable GPU functions, not physical functions)
    that are virtual functions; ``bus`` is domain and bus in one key, ``ids``
    vendor:device in one key."""
    out = np.zeros(len(bus), dtype=bool)
    rows = np.flatnonzero(candidates & (function > 0))
    if rows.size == 0:
        return out
    groups: dict[tuple[int, int], list[int]] = {}
    sriov = {(int(bus[j]), int(ids[j])) for j in rows.tolist()}
    for j in np.flatnonzero(candidates).tolist():
        k = (int(bus[j]), int(ids[j]))
        if k in sriov:
            groups.setdefault(k, []).append(j)
    for members in groups.values():
        members.sort(key=lambda j: (int(slot[j]), int(function[j])))
        out[members] = True
        head = members[0]
        if function[head] == 0:
            one_slot = all(slot[j] == slot[head] for j in members)
            if one_slot or slot[head] == 0:
                out[head] = False
    return out
