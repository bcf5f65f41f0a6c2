"""Pure-Python twin of the matcher kernel (``match.pxi``).

A plain row-by-row loop over dicts (:func:`~gpuclass._native.contract.rules.match_rows`,
which a numpy-free caller runs on a policy's rules directly): the reference the compiled
kernels are tested against, so it favours being obviously right over being fast.  It takes
the same :class:`~gpuclass._native.contract.match.MatchTables`, but finds rules through a
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

from .contract import match as _MS
from .contract.rules import RuleMaps, match_rows

__all__ = ["match_devices"]


def _rule_maps(t: _MS.MatchTables) -> RuleMaps:
    """The rules read back from the tables (not taken from the policy: a table layout that
    lost a rule shows up as a difference from the compiled kernel)."""
    devices: dict[int, tuple[int, dict[int, int]]] = {}
    offsets = t.sub_offsets.tolist()
    sub_keys = t.sub_keys.tolist()
    sub_card = t.sub_card.tolist()
    for i, (key, card) in enumerate(zip(t.dev_keys.tolist(), t.dev_card.tolist())):
        lo, hi = offsets[i], offsets[i + 1]
        devices[key] = (card, dict(zip(sub_keys[lo:hi], sub_card[lo:hi])))
    bits = lambda lut, bit: frozenset(np.flatnonzero(lut & bit).tolist())  # noqa: E731
    return RuleMaps(devices, tuple(t.card_slices.tolist()), bits(t.vendor_lut, _MS.VL_GPU_VENDOR),
                    bits(t.vendor_lut, _MS.VL_RULES), bits(t.class_lut, _MS.CL_GPU),
                    bits(t.class_lut, _MS.CL_COMPANION))


def match_devices(tables, vendor, device, subvendor, subdevice, class_code,
                  has_subsystem=None, flags=None, group=None, domain=None, bus=None, slot=None,
                  out=None, threads=None):
    """Status, card index and slices of each device (see the compiled core's docstring):
    the arguments checked as the compiled core checks them, then the per-device rule
    (:func:`~gpuclass._native.contract.rules.match_rows`) over lists, on this thread
    (``threads`` is checked, and cannot change an answer)."""
    t, a = _MS.prepare_match_args(tables, vendor, device, subvendor, subdevice, class_code,
                                  has_subsystem, flags, group, domain, bus, slot)
    outs = _MS.prepare_match_out(out, a)
    _MS.match_threads(threads, a.n)
    classes = a.class_code.tolist()
    over = [i for i, c in enumerate(classes) if c > 0xFFFFFF]
    if over:
        raise _MS.class_range_error(a.class_code, over[0])
    lists = lambda x: None if x is None else x.tolist()  # noqa: E731
    status, card, slices = match_rows(
        _rule_maps(t), a.vendor.tolist(), a.device.tolist(), lists(a.subvendor), lists(a.subdevice),
        classes, lists(a.has_subsystem), lists(a.flags), lists(a.group), lists(a.domain),
        lists(a.bus), lists(a.slot))
    for target, values in zip(outs, (status, card, slices)):
        target[:] = values
    return outs
