"""What the lspci parsers share: the ID and address patterns, column decoding, flagged rows.

>>> hex_fixed(["10de", "1B80"], 4).tolist(), addresses(["0000:01:00.0", "0000:e1:1f.7"])[1:]
([4318, 7040], (array([  1, 225], dtype=uint32), array([ 0, 31], dtype=uint32), array([0, 7], dtype=uint32)))
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from operator import itemgetter

import numpy as np

from ...constants import NO_ADDRESS
from ...devices import DeviceTable
from ...ids import ADDRESS_PATTERN, ascii_matrix, hex_matrix, parse_address

__all__ = ["H2", "H4", "ADDR", "ADDR_ONLY", "NAMED_ID", "DEC", "HEX4", "DOMAIN", "ADDRESS_COLUMNS",
           "dec_field", "range_problem", "hex_fixed", "hex_optional", "hex_variable", "texts", "named_ids", "addresses", "flagged",
           "object_array", "Rows", "set_address"]

H2 = r"[0-9a-fA-F]{2}"
H4 = r"[0-9a-fA-F]{4}"
ADDR = ADDRESS_PATTERN
ADDR_ONLY = re.compile(rf"^[ \t]*{ADDR}(?=\s)")
NAMED_ID = re.compile(rf"^(?:(.*?) \[)?({H4})\]?$")
DEC = re.compile(r"-?[0-9]+")
HEX4 = re.compile(H4)
DOMAIN = re.compile(r"[0-9a-fA-F]{4,8}:")
_INT32 = (-2**31, 2**31 - 1)


def dec_field(value: str) -> int | None:
    """An optional decimal field of lspci (``NUMA node``, ``IOMMU group``): its value, -1 for
    none (a negative number, or text that is not a number), or None when it lies past an
    int32, as a sysfs attribute's would: the caller flags the device, the value unknown.

    >>> dec_field(" 3 "), dec_field("-1"), dec_field("n/a"), dec_field("4294967296")
    (3, -1, -1, None)
    """
    v = value.strip()
    if not DEC.fullmatch(v):
        return -1
    # the length first: int() of thousands of digits is refused (and slow)
    if len(v.lstrip("-").lstrip("0")) > 10 or not _INT32[0] <= int(v) <= _INT32[1]:
        return None
    return max(int(v), -1)


def range_problem(where: str, key: str, value: str) -> str:
    """The problem of a device whose ``key`` lies past an int32 (see :func:`dec_field`)."""
    return f"{where}: {key} out of range {value.strip()[:32]!r} (taken as unknown)"


def hex_fixed(col: Sequence[str], width: int) -> np.ndarray:
    """Hex strings of exactly ``width`` digits (a regex checked them) to uint32, vectorized."""
    if len(col) == 0:
        return np.empty(0, dtype=np.uint32)
    out = hex_matrix(ascii_matrix(col, width))
    assert out is not None, "hex_fixed takes checked digits only"
    return out


def hex_optional(col: Sequence[str], width: int, fill: str) -> tuple[np.ndarray, np.ndarray]:
    """Like ``hex_fixed`` where some entries are '' (absent); (values, present)."""
    n = len(col)
    empty = col.count("") if isinstance(col, tuple) else sum(1 for s in col if not s)
    if empty == 0:
        return hex_fixed(col, width), np.ones(n, dtype=bool)
    present = np.fromiter((s != "" for s in col), dtype=bool, count=n)
    return hex_fixed([s or fill for s in col], width), present


def hex_variable(col: Sequence[str], default: int = 0) -> np.ndarray:
    """Domains: few distinct values of 4..8 digits, or '' (domain 0)."""
    lookup = {s: (int(s, 16) if s else default) for s in set(col)}
    if len(lookup) == 1:
        return np.full(len(col), next(iter(lookup.values())), dtype=np.uint32)
    return np.fromiter((lookup[s] for s in col), dtype=np.uint32, count=len(col))


def texts(col: Sequence[str]) -> np.ndarray:
    arr = np.array(col, dtype=object)
    if len(arr):
        arr[arr == ""] = None
    return arr


def named_ids(col: list[str], optional: bool):
    """'Name [abcd]' fields: (ids, names, present) or None when any field is not one.

    Dumps repeat the same few hundred names, so each distinct field is decoded
    once and the column is mapped through dicts at C speed.
    """
    id_of: dict[str, int] = {}
    name_of: dict[str, str | None] = {}
    for f in set(col):
        if not f and optional:
            id_of[f], name_of[f] = -1, None
            continue
        if f[-7:-5] != " [" or f[-1:] != "]" or not HEX4.fullmatch(f, len(f) - 5, len(f) - 1):
            return None
        id_of[f], name_of[f] = int(f[-5:-1], 16), f[:-7]
    ids = np.fromiter(map(id_of.__getitem__, col), dtype=np.int32, count=len(col))
    names = list(map(name_of.__getitem__, col))
    present = ids >= 0
    return np.where(present, ids, 0).astype(np.uint32), names, (present if optional else None)


_LAST7, _BUT_LAST7 = itemgetter(slice(-7, None)), itemgetter(slice(None, -7))
ADDRESS_COLUMNS = ("domain", "bus", "slot", "function")


def addresses(strings: list[str]):
    """``[domain:]bb:ss.f`` strings as (domain, bus, slot, function) arrays, or None."""
    tail = ascii_matrix(list(map(_LAST7, strings)), 7)
    if tail is None or not ((tail[:, 2] == 0x3A) & (tail[:, 5] == 0x2E)).all():
        return None
    bus, slot, fn = hex_matrix(tail[:, 0:2]), hex_matrix(tail[:, 3:5]), hex_matrix(tail[:, 6:7])
    if bus is None or slot is None or fn is None or (slot > 0x1F).any() or (fn > 7).any():
        return None
    doms = {}
    dom_text = list(map(_BUT_LAST7, strings))
    for d in set(dom_text):
        if d == "":
            doms[d] = 0
        elif DOMAIN.fullmatch(d):
            doms[d] = int(d[:-1], 16)
        else:
            return None
    n = len(strings)
    domain = (np.full(n, doms.popitem()[1], dtype=np.uint32) if len(doms) == 1 else
              np.fromiter(map(doms.__getitem__, dom_text), dtype=np.uint32, count=n))
    return domain, bus, slot, fn


def flagged(rows: list[tuple[int, str, str]], source: str) -> DeviceTable:
    """Rows for lines that did not parse: the address when it can be read, and the reason."""
    cols: dict[str, list] = {k: [] for k in ("domain", "bus", "slot", "function", "problems")}
    for lineno, text, reason in rows:
        m = ADDR_ONLY.match(text)
        addr = parse_address(m.group(0).strip()) if m else None
        d, b, s, f = addr if addr is not None else (0, 0, 0, NO_ADDRESS)
        for name, value in zip(ADDRESS_COLUMNS, (d, b, s, f)):
            cols[name].append(value)
        cols["problems"].append(f"{source}:{lineno}: {reason}: {text.strip()[:120]!r}")
    n = len(rows)
    return DeviceTable.from_columns(source, vendor=np.zeros(n, np.uint16),
                                    device=np.zeros(n, np.uint16),
                                    class_code=np.zeros(n, np.uint32), **cols)


def object_array(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


class Rows:
    """Column lists for the line-by-line parsers (``-vmm`` and ``-n``)."""

    NUM = ("domain", "bus", "slot", "function", "vendor", "device", "subvendor", "subdevice",
           "has_subsystem", "class_code", "revision", "numa_node", "iommu_group", "flags",
           "sriov_totalvfs", "sriov_numvfs")
    OBJ = ("driver", "problems", "class_text", "vendor_text", "device_text", "subvendor_text",
           "subdevice_text")
    DEFAULTS = {"subvendor": 0, "subdevice": 0, "has_subsystem": False, "revision": 0,
                "numa_node": -1, "iommu_group": -1, "flags": 0, "sriov_totalvfs": -1, "sriov_numvfs": -1}

    def __init__(self) -> None:
        self.cols: dict[str, list] = {k: [] for k in (*self.NUM, *self.OBJ)}
        self.vf: list[tuple[int, int] | None] = []   # SR-IOV (VF offset, stride) per row

    def add(self, rec: dict) -> None:
        for k, lst in self.cols.items():
            lst.append(rec.get(k, self.DEFAULTS.get(k)))
        self.vf.append(rec.get("_vf"))

    def table(self, source: str, text_columns: Sequence[str]) -> DeviceTable:
        cols = {k: v for k, v in self.cols.items() if k in self.NUM or k in ("driver", "problems")}
        for k in text_columns:
            cols[k] = self.cols[k]
        n = len(self.cols["vendor"])
        for k in ("vendor", "device", "class_code"):
            cols[k] = np.array([0 if x is None else x for x in cols[k]], dtype=np.int64)
        for k in ("domain", "bus", "slot"):
            cols[k] = np.array([0 if x is None else x for x in cols[k]], dtype=np.int64)
        cols["function"] = np.array([NO_ADDRESS if x is None else x for x in cols["function"]],
                                    dtype=np.int64)
        if n == 0:
            return DeviceTable.empty(source)
        return DeviceTable.from_columns(source, **cols)


def set_address(rec: dict, value: str) -> bool:
    addr = parse_address(value.strip())
    if addr is None:
        return False
    rec.update(zip(ADDRESS_COLUMNS, addr))
    return True


