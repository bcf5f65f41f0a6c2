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

An ARI run that fills its bus goes on at the next bus's ``00.0`` (the PF's port
claims that bus: no other device can sit on it), so where a bus's virtual functions
of an ID run to its last routing ID (the last one, ``1f.7``, or one stride short of
past it), every GPU function of that ID on the next bus is virtual too, its ``00.0``
included, run after run.  The one exception is a next
bus whose ``00.0`` of that ID has a card's companion function (audio, USB, serial:
a non-GPU function of the same vendor in slot 0): that is a physical card, as on
any multi-GPU host, where each card sits at its own bus's ``00.0`` with its audio at
``00.1`` (dumps of two hosts pasted together can put one after the other).

Rows whose SR-IOV capability (``-vvv``) made them physical functions (``FLAG_PF``)
are never virtual.

>>> import numpy as np
>>> bus, slot, fn = np.array([0x8c] * 4), np.array([3, 4, 4, 4]), np.array([7, 0, 1, 2])
>>> virtual_functions(bus, slot, fn, np.zeros(4, np.uint64), np.ones(4, bool)).tolist()
[True, True, True, True]
>>> virtual_functions(np.array([0x81, 0x81, 0x82]), np.array([0, 0, 0]), np.array([0, 4, 0]),
...                   np.zeros(3, np.uint64), np.ones(3, bool)).tolist()
[False, True, False]
>>> bus = np.array([0x8c, 0x8c, 0x8d, 0x8d])  # 8c:1f.6, 8c:1f.7, then 8d:00.0, 8d:00.1
>>> virtual_functions(bus, np.array([0x1f, 0x1f, 0, 0]), np.array([6, 7, 0, 1]),
...                   np.zeros(4, np.uint64), np.ones(4, bool)).tolist()
[True, True, True, True]
"""

from __future__ import annotations

import numpy as np

__all__ = ["virtual_functions"]


def virtual_functions(bus: np.ndarray, slot: np.ndarray, function: np.ndarray, ids: np.ndarray,
                      candidates: np.ndarray, companions: np.ndarray | None = None) -> np.ndarray:
    """The rows among ``candidates`` (readable GPU functions, not physical functions)
    that are virtual functions; ``bus`` is domain and bus in one key, ``ids``
    vendor:device in one key (vendor in the high 16 bits); ``companions``: the readable
    functions that are no GPU (a card's audio, USB, serial)."""
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
    _next_bus_runs(out, bus, slot, function, ids, candidates, companions)
    return out


def _next_bus_runs(out: np.ndarray, bus: np.ndarray, slot: np.ndarray, function: np.ndarray,
                   ids: np.ndarray, candidates: np.ndarray, companions: np.ndarray | None) -> None:
    """Mark the GPU functions that continue a run of virtual functions filling the bus
    before theirs (see the module docstring), in place."""
    if not (out & (slot == 0x1F)).any():
        return
    by_bus: dict[tuple[int, int], list[int]] = {}
    for j in np.flatnonzero(candidates).tolist():
        by_bus.setdefault((int(bus[j]), int(ids[j])), []).append(j)
    cards: set[tuple[int, int]] = set()  # (bus, vendor) with a companion function in slot 0
    if companions is not None:
        for k in np.flatnonzero(companions & (slot == 0) & (function > 0)).tolist():
            cards.add((int(bus[k]), int(ids[k]) >> 16))
    filled = {k for k, members in by_bus.items() if _fills([j for j in members if out[j]], slot, function)}
    for b, x in sorted(by_bus):  # ascending buses: a run may fill several
        if (b & 0xFF) == 0 or (b - 1, x) not in filled:
            continue
        members = by_bus[(b, x)]
        if (b, x >> 16) in cards and any(slot[j] == 0 and function[j] == 0 for j in members):
            continue  # a physical card at this bus's 00.0, its audio beside it
        out[members] = True
        if _fills(members, slot, function):
            filled.add((b, x))


def _fills(vfs: list[int], slot: np.ndarray, function: np.ndarray) -> bool:
    """The virtual functions ``vfs`` of one bus and ID run to the bus's end: the next one,
    at the run's stride (the least step between their routing IDs), would lie past ``1f.7``."""
    if not vfs:
        return False
    rid = sorted({int(slot[j]) * 8 + int(function[j]) for j in vfs})
    if rid[-1] < 0xF8:
        return False
    stride = min((b - a for a, b in zip(rid, rid[1:])), default=1)
    return rid[-1] + stride > 0xFF
