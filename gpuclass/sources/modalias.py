"""PCI modalias strings (``pci:v000010DEd000027B0sv...bc03sc00i00``) into a DeviceTable.

A modalias is what the kernel shows in a device's ``modalias`` attribute and
udev's ``MODALIAS=``; either case is accepted.  It carries the IDs and the full
class but no address and no revision, so rows get ``NO_ADDRESS`` (or the
address given alongside) and revision -1.  A string that is not a concrete
device modalias (a ``*`` pattern from ``modules.alias``, a typo) becomes a
flagged row with the reason, never an exception.

>>> t = parse_modalias("pci:v000010DEd000027B0sv000010DEsd000016FAbc03sc00i00")
>>> hex(t.device[0]), hex(t.subdevice[0]), hex(t.class_code[0]), t.addresses()
('0x27b0', '0x16fa', '0x30000', ['-'])
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from ..constants import NO_ADDRESS
from ..devices import DeviceTable
from ..ids import parse_address

__all__ = ["parse_modalias", "parse_modaliases"]

_MODALIAS = re.compile(
    r"pci:v([0-9a-f]{8})d([0-9a-f]{8})sv([0-9a-f]{8})sd([0-9a-f]{8})"
    r"bc([0-9a-f]{2})sc([0-9a-f]{2})i([0-9a-f]{2})",
    re.IGNORECASE,
)


def _one(text: str) -> tuple[tuple[int, ...] | None, str | None]:
    """(vendor, device, subvendor, subdevice, class24) or a reason."""
    s = text.strip()
    m = _MODALIAS.fullmatch(s)
    if m is None:
        if "*" in s:
            return None, f"a modalias pattern, not a device: {s[:80]!r}"
        return None, f"not a PCI modalias: {s[:80]!r}"
    v, d, sv, sd, bc, sc, pi = (int(g, 16) for g in m.groups())
    # the kernel prints 16-bit IDs in 8 digits; anything above 0xffff is not a device
    if max(v, d, sv, sd) > 0xFFFF:
        return None, f"ID wider than 16 bits in modalias {s[:80]!r}"
    return (v, d, sv, sd, (bc << 16) | (sc << 8) | pi), None


def parse_modaliases(items: Iterable[str | tuple[str, str]], source: str = "modalias") -> DeviceTable:
    """One row per item: a modalias, or an ``(address, modalias)`` pair.

    >>> t = parse_modaliases([("0000:01:00.1", "pci:v000010DEd000022BCsv000010DEsd000016FAbc04sc03i00"),
    ...                       "pci:v*d*sv*sd*bc03sc*i*"])
    >>> t.addresses(), t.invalid_mask().tolist()
    (['0000:01:00.1', '-'], [False, True])
    """
    cols: dict[str, list] = {k: [] for k in ("domain", "bus", "slot", "function", "vendor", "device",
                                            "subvendor", "subdevice", "class_code", "problems")}
    for k, item in enumerate(items):
        address, text = (item if isinstance(item, tuple) else (None, item))
        addr = parse_address(address.strip(), domain=True) if address is not None else None
        values, reason = _one(text)
        if address is not None and addr is None and reason is None:
            reason = f"bad PCI address {address!r}"
        if reason is not None:
            reason = f"{source}[{k}]: {reason}"
        d, b, s, f = addr if addr is not None else (0, 0, 0, NO_ADDRESS)
        v, dv, sv, sd, cls = values if values is not None else (0, 0, 0, 0, 0)
        for name, val in (("domain", d), ("bus", b), ("slot", s), ("function", f), ("vendor", v),
                          ("device", dv), ("subvendor", sv), ("subdevice", sd), ("class_code", cls),
                          ("problems", reason)):
            cols[name].append(val)
    if not cols["vendor"]:
        return DeviceTable.empty(source)
    valid = np.array([p is None for p in cols["problems"]], dtype=bool)
    num = {k: np.array(v, dtype=np.int64) for k, v in cols.items() if k != "problems"}
    return DeviceTable.from_columns(source, has_subsystem=valid, problems=cols["problems"], **num)


def parse_modalias(text: str, address: str | None = None, source: str = "modalias") -> DeviceTable:
    """A one-row table for one modalias (see the module docstring)."""
    return parse_modaliases([(address, text) if address is not None else text], source)
