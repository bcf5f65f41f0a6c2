"""Pure-Python twin of the matcher kernel (``match.pxi``).

A plain row-by-row loop over dicts: the reference the compiled kernels are
tested against, so it favours being obviously right over being fast.  It takes
the same :class:`~gpuclass._matchspec.MatchTables`, but finds rules through a
dict built from the sorted keys rather than the kernels' per-vendor lookup
tables, so a bug in either lookup shows up as a difference.

>>> from gpuclass._native.contract.match import build_match_tables
>>> t = build_match_tables([(0x10de, 0x27b0, None, None, 0)], card_slices=[4])
>>> st, card, sl = match_devices(t, [0x10de, 0x10de], [0x27b0, 0x27b2], None, None,
...                              [0x030000, 0x030000])
>>> st.tolist(), card.tolist(), sl.tolist()
([1, 2], [0, -1], [4, 0])
"""

from __future__ import annotations

import numpy as np

from .. import constants as C
from .contract import match as _MS

__all__ = ["match_devices"]


def _rule_maps(t: _MS.MatchTables):
    devices: dict[int, tuple[int, dict[int, int]]] = {}
    offsets = t.sub_offsets.tolist()
    sub_keys = t.sub_keys.tolist()
    sub_card = t.sub_card.tolist()
    for i, (key, card) in enumerate(zip(t.dev_keys.tolist(), t.dev_card.tolist())):
        lo, hi = offsets[i], offsets[i + 1]
        devices[key] = (card, dict(zip(sub_keys[lo:hi], sub_card[lo:hi])))
    return devices


def match_devices(tables, vendor, device, subvendor, subdevice, class_code,
                  has_subsystem=None, flags=None, group=None, domain=None, bus=None, slot=None):
    """Status, card index and slices of each device (see the compiled core's docstring)."""
    t, a = _MS.prepare_match_args(tables, vendor, device, subvendor, subdevice, class_code,
                                  has_subsystem, flags, group, domain, bus, slot)
    n = a.n
    classes = a.class_code.tolist()
    over = [i for i, c in enumerate(classes) if c > 0xFFFFFF]
    if over:
        raise _MS.class_range_error(a.class_code, over[0])
    devices = _rule_maps(t)
    gpu_vendors = set(np.flatnonzero(t.vendor_lut & _MS.VL_GPU_VENDOR).tolist())
    rule_vendors = set(np.flatnonzero(t.vendor_lut & _MS.VL_RULES).tolist())
    class_bits = t.class_lut.tolist()
    card_slices = t.card_slices.tolist()
    vendors, devs = a.vendor.tolist(), a.device.tolist()
    subv = a.subvendor.tolist() if a.subvendor is not None else None
    subd = a.subdevice.tolist() if a.subdevice is not None else None
    has_sub = a.has_subsystem.tolist() if a.has_subsystem is not None else None
    flag_list = a.flags.tolist() if a.flags is not None else [0] * n
    have_slots = a.domain is not None

    status = [C.NOT_GPU] * n
    card = [-1] * n
    slices = [0] * n
    for i in range(n):
        f = flag_list[i]
        if f & C.FLAG_INVALID:
            status[i] = C.INVALID
            continue
        v, cbits = vendors[i], class_bits[classes[i] >> 8]
        if cbits & _MS.CL_GPU:
            c = -1
            if v in rule_vendors and (v << 16 | devs[i]) in devices:
                c, subs = devices[v << 16 | devs[i]]
                if subv is not None and (has_sub is None or has_sub[i]):
                    c = subs.get(subv[i] << 16 | subd[i], c)
            card[i] = c
            if f & C.FLAG_VF:
                status[i] = C.VIRTUAL_FUNCTION
            elif c >= 0:
                status[i] = C.SUPPORTED
                slices[i] = card_slices[c]
            elif v in gpu_vendors:
                status[i] = C.UNSUPPORTED
        elif (not have_slots and cbits & _MS.CL_COMPANION and v in gpu_vendors
              and not f & C.FLAG_VF):
            status[i] = C.COMPANION

    if have_slots:
        groups = a.group.tolist() if a.group is not None else [0] * n
        keys = list(zip(groups, a.domain.tolist(), a.bus.tolist(), a.slot.tolist()))
        gpu_slots: dict[tuple, int] = {}
        for i in range(n):
            if status[i] in (C.SUPPORTED, C.UNSUPPORTED):
                gpu_slots.setdefault(keys[i], card[i])  # the first GPU function names the card
        for i in range(n):
            if status[i] == C.NOT_GPU and not flag_list[i] & C.FLAG_VF and keys[i] in gpu_slots:
                status[i] = C.COMPANION
                card[i] = gpu_slots[keys[i]]
    return (np.array(status, dtype=np.uint8), np.array(card, dtype=np.int16),
            np.array(slices, dtype=np.uint16))
