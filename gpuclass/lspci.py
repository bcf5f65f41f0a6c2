"""lspci output, as collected from machines and rescue systems, into a DeviceTable.

Understood formats (:func:`detect_format` tells them apart):

- ``lspci -nnmm`` / ``-nnmm -D`` / ``-nmm``: one quoted line per device;
- ``lspci -vmm -nn [-D] [-k]``: ``Key:<TAB>value`` blocks separated by blank lines;
- ``lspci -n`` / ``-nn`` with optional ``-v`` / ``-k`` detail lines
  (``Subsystem:``, ``Kernel driver in use:``, ``NUMA node:``, ``IOMMU group:``).

Only the numbers in brackets are used: the names are kept in the text columns
but never trusted (an old database prints ``Device [2bb1]`` for a current card).
lspci prints the revision only when it is non-zero, so a missing revision reads
as 0; ``-n`` without ``-v`` does not print the prog-if, which then reads as 0.
A line that cannot be understood becomes a flagged row (``FLAG_INVALID``, with
the line number in ``problems``) and never stops the rest of the dump.

>>> t = parse_lspci('0000:01:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation [10de]" '
...                 '"Device [2bb1]" -ra1 -p00 "NVIDIA Corporation [10de]" "Device [204b]"\\n')
>>> hex(t.device[0]), hex(t.subdevice[0]), t.device_text[0]
('0x2bb1', '0x204b', 'Device')
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from operator import itemgetter, methodcaller

import numpy as np

from .devices import NO_ADDRESS, NUMERIC_COLUMNS, OBJECT_COLUMNS, TEXT_COLUMNS, DeviceTable
from .errors import SourceError

__all__ = ["parse_lspci", "parse_lspci_mm", "parse_lspci_vmm", "parse_lspci_n", "read_lspci",
           "detect_format"]

_H2 = r"[0-9a-fA-F]{2}"
_H4 = r"[0-9a-fA-F]{4}"
_ADDR = rf"(?:([0-9a-fA-F]{{4,8}}):)?({_H2}):([01][0-9a-fA-F])\.([0-7])"
# A quoted field: "Name [id]" (-nnmm) or "id" (-nmm); the name ends at the last bracket.
# A name may hold a quote but never the field separator '" "': with names free to
# run across fields, a hostile line made the five lazy groups backtrack in O(n^5).
_NAME = r'(?:[^"\n]|"(?! "))*?'
_FIELD = rf'"(?:({_NAME}) \[)?({_H4})\]?"'
_SUBFIELD = rf'"(?:(?:({_NAME}) \[)?({_H4})\]?)?"'
_MM = re.compile(
    rf"^[ \t]*{_ADDR} {_FIELD} {_FIELD} {_FIELD}(?: -r({_H2}))?(?: -p({_H2}))?"
    rf" {_SUBFIELD} {_SUBFIELD}[ \t\r]*$",
    re.MULTILINE,
)
_NONBLANK = re.compile(r"^[^\S\n]*\S", re.MULTILINE)
_ADDR_ONLY = re.compile(rf"^[ \t]*{_ADDR}(?=\s)")
_N = re.compile(
    rf"^{_ADDR} (?:((?:[^:\n]|:(?! ))*?) \[)?({_H4})\]?: (?:(.*?) \[)?({_H4}):({_H4})\]?"
    rf"(?: \(rev ({_H2})\))?(?: \(prog-if ({_H2})(?: \[[^\]]*\])?\))?[ \t\r]*$"
)
_NAMED_ID = re.compile(rf"^(?:(.*?) \[)?({_H4})\]?$")
# The IDs at the end of a Subsystem value; the name is what precedes " [" (searching
# for a lazy name group first was quadratic in the line length).
_SUB_IDS = re.compile(rf"({_H4}):({_H4})\]?\s*$")

_LUT = np.full(256, 0, dtype=np.uint32)
for _i, _c in enumerate(b"0123456789abcdef"):
    _LUT[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _LUT[_c] = 10 + _i


def _hex_fixed(col: Sequence[str], width: int) -> np.ndarray:
    """Hex strings of exactly ``width`` digits (the regex checked them) to uint32, vectorized."""
    n = len(col)
    if n == 0:
        return np.empty(0, dtype=np.uint32)
    raw = np.frombuffer("".join(col).encode("ascii"), dtype=np.uint8).reshape(n, width)
    digits = _LUT[raw]
    out = digits[:, 0].copy()
    for k in range(1, width):
        out <<= 4
        out |= digits[:, k]
    return out


def _hex_optional(col: Sequence[str], width: int, fill: str) -> tuple[np.ndarray, np.ndarray]:
    """Like ``_hex_fixed`` where some entries are '' (absent); (values, present)."""
    n = len(col)
    empty = col.count("") if isinstance(col, tuple) else sum(1 for s in col if not s)
    if empty == 0:
        return _hex_fixed(col, width), np.ones(n, dtype=bool)
    present = np.fromiter((s != "" for s in col), dtype=bool, count=n)
    return _hex_fixed([s or fill for s in col], width), present


def _hex_variable(col: Sequence[str], default: int = 0) -> np.ndarray:
    """Domains: few distinct values of 4..8 digits, or '' (domain 0)."""
    lookup = {s: (int(s, 16) if s else default) for s in set(col)}
    if len(lookup) == 1:
        return np.full(len(col), next(iter(lookup.values())), dtype=np.uint32)
    return np.fromiter((lookup[s] for s in col), dtype=np.uint32, count=len(col))


def _texts(col: Sequence[str]) -> np.ndarray:
    arr = np.array(col, dtype=object)
    if len(arr):
        arr[arr == ""] = None
    return arr


def _mm_table(rows: list[tuple[str, ...]], source: str) -> DeviceTable:
    n = len(rows)
    if n == 0:
        return DeviceTable.empty(source)
    (dom, bus, slot, fn, cls_t, cls, ven_t, ven, dev_t, dev, rev, prog,
     sv_t, sv, sd_t, sd) = zip(*rows)
    revision, has_rev = _hex_optional(rev, 2, "00")
    progif, _ = _hex_optional(prog, 2, "00")
    subvendor, has_sv = _hex_optional(sv, 4, "0000")
    subdevice, has_sd = _hex_optional(sd, 4, "0000")
    return DeviceTable.from_columns(
        source,
        domain=_hex_variable(dom),
        bus=_hex_fixed(bus, 2).astype(np.uint8),
        slot=_hex_fixed(slot, 2).astype(np.uint8),
        function=_hex_fixed(fn, 1).astype(np.uint8),
        vendor=_hex_fixed(ven, 4).astype(np.uint16),
        device=_hex_fixed(dev, 4).astype(np.uint16),
        subvendor=subvendor.astype(np.uint16),
        subdevice=subdevice.astype(np.uint16),
        has_subsystem=has_sv & has_sd,
        class_code=(_hex_fixed(cls, 4) << 8) | progif,
        # lspci prints the revision only when it is not 0
        revision=np.where(has_rev, revision, 0).astype(np.int16),
        class_text=_texts(cls_t), vendor_text=_texts(ven_t), device_text=_texts(dev_t),
        subvendor_text=_texts(sv_t), subdevice_text=_texts(sd_t),
    )


_BAD = np.uint32(0xFF)
_LUT_CHECKED = np.full(256, 0xFF, dtype=np.uint32)  # 0xFF marks a byte that is no hex digit
_LUT_CHECKED[np.frombuffer(b"0123456789abcdef", np.uint8)] = np.arange(16, dtype=np.uint32)
_LUT_CHECKED[np.frombuffer(b"ABCDEF", np.uint8)] = np.arange(10, 16, dtype=np.uint32)
_OPTIONS = re.compile(rf" (?:-r({_H2}) )?(?:-p({_H2}) )?")
_DOMAIN = re.compile(r"[0-9a-fA-F]{4,8}:")
_HEX4 = re.compile(_H4)
# C-level slicers for map(): no Python frame per field
_FIRST, _BUT_FIRST = itemgetter(slice(0, 1)), itemgetter(slice(1, None))
_LAST1, _BUT_LAST1 = itemgetter(slice(-1, None)), itemgetter(slice(None, -1))


def _fixed(strings: list[str], width: int) -> np.ndarray | None:
    """Equal-width ASCII strings as an (n, width) uint8 array, or None."""
    try:
        raw = "".join(strings).encode("ascii")
    except UnicodeEncodeError:
        return None
    if len(raw) != len(strings) * width:
        return None
    return np.frombuffer(raw, dtype=np.uint8).reshape(len(strings), width)


def _hex_cols(arr: np.ndarray, cols: range) -> np.ndarray | None:
    digits = _LUT_CHECKED[arr[:, cols.start:cols.stop]]
    if (digits == _BAD).any():
        return None
    out = digits[:, 0].copy()
    for k in range(1, digits.shape[1]):
        out <<= 4
        out |= digits[:, k]
    return out


def _named_ids(col: list[str], optional: bool):
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
        if f[-7:-5] != " [" or f[-1:] != "]" or not _HEX4.fullmatch(f, len(f) - 5, len(f) - 1):
            return None
        id_of[f], name_of[f] = int(f[-5:-1], 16), f[:-7]
    ids = np.fromiter(map(id_of.__getitem__, col), dtype=np.int32, count=len(col))
    names = list(map(name_of.__getitem__, col))
    present = ids >= 0
    return np.where(present, ids, 0).astype(np.uint32), names, (present if optional else None)


def _mm_fast(text: str, source: str) -> DeviceTable | None:
    """Canonical ``lspci -nnmm [-D]`` text parsed column-wise, or None to take the exact path.

    lspci prints ten double quotes per line, so one ``str.split('"')`` of the
    whole text puts every field in a fixed position; each column is then
    checked and decoded with numpy.  Anything unusual (a quote inside a name,
    ``-nmm`` numbers, a blank or broken line) fails a check, and the caller
    falls back to the line-by-line regex path, which is exact.
    """
    body = text[:-1] if text.endswith("\n") else text
    n = body.count("\n") + 1
    parts = body.split('"')
    if not body or len(parts) != 10 * n + 1 or "\r" in body:
        return None
    if parts[-1] != "" or parts[2::10] != parts[4::10] or parts[8::10] != parts[2::10]:
        return None
    if set(parts[2::10]) != {" "}:
        return None
    heads = parts[0::10][:-1]
    # Every line but the first starts with the newline after the previous line's last
    # quote; with n - 1 newlines in all, no field or address can hold another one.
    rest = heads[1:]
    if "".join(map(_FIRST, rest)) != "\n" * (n - 1):
        return None
    addrs = [heads[0], *map(_BUT_FIRST, rest)]
    # address: optional domain, then exactly "bb:ss.f " at the end
    if "".join(map(_LAST1, addrs)) != " " * n:
        return None
    parsed = _addresses(list(map(_BUT_LAST1, addrs)))
    if parsed is None:
        return None
    domain, bus, slot, fn = parsed
    opts = {}
    for o in set(parts[6::10]):
        m = _OPTIONS.fullmatch(o)
        if m is None:
            return None
        opts[o] = (int(m.group(1), 16) if m.group(1) else 0, int(m.group(2), 16) if m.group(2) else 0)
    rp = np.array(list(map(opts.__getitem__, parts[6::10])), dtype=np.int64).reshape(n, 2)
    revision = rp[:, 0].astype(np.int16)
    progif = rp[:, 1].astype(np.uint32)
    cls, ven, dev = (_named_ids(parts[k::10], False) for k in (1, 3, 5))
    sv, sd = (_named_ids(parts[k::10], True) for k in (7, 9))
    if cls is None or ven is None or dev is None or sv is None or sd is None:
        return None
    has_sub = sv[2] & sd[2]

    def texts(names, present=None):
        arr = np.array(names, dtype=object)
        if present is not None and not present.all():
            arr[~present] = None
        return arr

    return DeviceTable.from_columns(
        source, domain=domain, bus=bus.astype(np.uint8), slot=slot.astype(np.uint8),
        function=fn.astype(np.uint8), vendor=ven[0].astype(np.uint16), device=dev[0].astype(np.uint16),
        subvendor=np.where(has_sub, sv[0], 0).astype(np.uint16),
        subdevice=np.where(has_sub, sd[0], 0).astype(np.uint16), has_subsystem=has_sub,
        class_code=(cls[0] << 8) | progif, revision=revision,
        class_text=texts(cls[1]), vendor_text=texts(ven[1]), device_text=texts(dev[1]),
        subvendor_text=texts(sv[1], sv[2]), subdevice_text=texts(sd[1], sd[2]),
    )


_LAST7, _BUT_LAST7 = itemgetter(slice(-7, None)), itemgetter(slice(None, -7))
_ADDRESS_COLUMNS = ("domain", "bus", "slot", "function")


def _addresses(strings: list[str]):
    """``[domain:]bb:ss.f`` strings as (domain, bus, slot, function) arrays, or None."""
    tail = _fixed(list(map(_LAST7, strings)), 7)
    if tail is None or not ((tail[:, 2] == 0x3A) & (tail[:, 5] == 0x2E)).all():
        return None
    bus, slot, fn = _hex_cols(tail, range(0, 2)), _hex_cols(tail, range(3, 5)), _hex_cols(tail, range(6, 7))
    if bus is None or slot is None or fn is None or (slot > 0x1F).any() or (fn > 7).any():
        return None
    doms = {}
    dom_text = list(map(_BUT_LAST7, strings))
    for d in set(dom_text):
        if d == "":
            doms[d] = 0
        elif _DOMAIN.fullmatch(d):
            doms[d] = int(d[:-1], 16)
        else:
            return None
    n = len(strings)
    domain = (np.full(n, doms.popitem()[1], dtype=np.uint32) if len(doms) == 1 else
              np.fromiter(map(doms.__getitem__, dom_text), dtype=np.uint32, count=n))
    return domain, bus, slot, fn


def _mm_dedup(text: str, source: str) -> DeviceTable | None:
    """``_mm_fast`` on the distinct lines (less their addresses), or None for the other paths.

    A dump lists the same few card and chipset models again and again, so the
    part of each line after its address is decoded once per distinct text and
    the rows are taken from that; the addresses are decoded for every line.
    """
    body = text[:-1] if text.endswith("\n") else text
    if not body:
        return None
    lines = body.split("\n")
    n = len(lines)
    # Addresses of one width (with -D or without), then a space: cut every line
    # with C-level slicing (no tuple per line, which would also wake the GC).
    for width in (12, 7):
        try:
            if "".join(map(itemgetter(width), lines)) == " " * n:
                break
        except IndexError:
            pass
    else:
        return None
    heads = list(map(itemgetter(slice(0, width)), lines))
    rests = list(map(itemgetter(slice(width + 1, None)), lines))
    addr = _addresses(heads)
    if addr is None:
        return None
    distinct = dict.fromkeys(rests)
    if len(distinct) * 2 > len(rests):
        return None  # mostly distinct lines: nothing to share
    position = {r: i for i, r in enumerate(distinct)}
    inverse = np.fromiter(map(position.__getitem__, rests), dtype=np.int64, count=len(rests))
    # every distinct rest behind a dummy address: _mm_fast checks and decodes it as a line
    sub = _mm_fast("".join(map("00:00.0 {}\n".format, distinct)), source)
    if sub is None:
        return None
    cols = {name: getattr(sub, name)[inverse] for name in (*NUMERIC_COLUMNS, *OBJECT_COLUMNS)
            if name not in _ADDRESS_COLUMNS}
    for name in TEXT_COLUMNS:
        col = getattr(sub, name)
        if col is not None:
            cols[name] = col[inverse]
    return DeviceTable.from_columns(source, **dict(zip(_ADDRESS_COLUMNS, addr)), **cols)


def _flagged(rows: list[tuple[int, str, str]], source: str) -> DeviceTable:
    """Rows for lines that did not parse: the address when it can be read, and the reason."""
    cols: dict[str, list] = {k: [] for k in ("domain", "bus", "slot", "function", "problems")}
    for lineno, text, reason in rows:
        m = _ADDR_ONLY.match(text)
        if m:
            d, b, s, f = m.groups()
            cols["domain"].append(int(d, 16) if d else 0)
            cols["bus"].append(int(b, 16))
            cols["slot"].append(int(s, 16))
            cols["function"].append(int(f))
        else:
            cols["domain"].append(0)
            cols["bus"].append(0)
            cols["slot"].append(0)
            cols["function"].append(NO_ADDRESS)
        cols["problems"].append(f"{source}:{lineno}: {reason}: {text.strip()[:120]!r}")
    n = len(rows)
    return DeviceTable.from_columns(source, vendor=np.zeros(n, np.uint16),
                                    device=np.zeros(n, np.uint16),
                                    class_code=np.zeros(n, np.uint32), **cols)


def _mm_reason(line: str) -> str:
    if '"' not in line:
        return "not an lspci -mm line"
    if not re.search(r"\[[0-9a-fA-F]{4}\]\"", line) and not re.search(r' "[0-9a-fA-F]{4}"', line):
        return "no numeric IDs (collect with lspci -nnmm)"
    return "malformed lspci -mm line"


def parse_lspci_mm(text: str, source: str = "lspci -nnmm") -> DeviceTable:
    """``lspci -nnmm [-D]`` (or ``-nmm``) text, one row per non-blank line.

    >>> t = parse_lspci_mm('01:00.1 "Audio device [0403]" "NVIDIA Corporation [10de]" '
    ...                    '"Device [22bc]" -ra1 "" ""\\n')
    >>> t.addresses(), hex(t.class_code[0]), bool(t.has_subsystem[0])
    (['0000:01:00.1'], '0x40300', False)
    """
    table = _mm_dedup(text, source)
    if table is None:
        table = _mm_fast(text, source)
    if table is not None:
        return table
    rows = _MM.findall(text)
    if len(rows) == len(_NONBLANK.findall(text)):
        return _mm_table(rows, source)  # the fast path: every line parsed in one C loop
    # Some line is not understood: go line by line to keep the order and flag it.
    parts: list[DeviceTable] = []
    good: list[tuple[str, ...]] = []
    bad: list[tuple[int, str, str]] = []
    line_re = re.compile(_MM.pattern)  # without MULTILINE, on one line at a time
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        m = line_re.match(line)
        if m:
            if bad:
                parts.append(_flagged(bad, source))
                bad = []
            good.append(m.groups(default=""))
        else:
            if good:
                parts.append(_mm_table(good, source))
                good = []
            bad.append((lineno, line, _mm_reason(line)))
    if good:
        parts.append(_mm_table(good, source))
    if bad:
        parts.append(_flagged(bad, source))
    return DeviceTable.concat(parts, source=source)


class _Rows:
    """Column lists for the line-by-line parsers (``-vmm`` and ``-n``)."""

    NUM = ("domain", "bus", "slot", "function", "vendor", "device", "subvendor", "subdevice",
           "has_subsystem", "class_code", "revision", "numa_node", "iommu_group")
    OBJ = ("driver", "problems", "class_text", "vendor_text", "device_text", "subvendor_text",
           "subdevice_text")
    DEFAULTS = {"subvendor": 0, "subdevice": 0, "has_subsystem": False, "revision": 0,
                "numa_node": -1, "iommu_group": -1}

    def __init__(self) -> None:
        self.cols: dict[str, list] = {k: [] for k in (*self.NUM, *self.OBJ)}

    def add(self, rec: dict) -> None:
        for k, lst in self.cols.items():
            lst.append(rec.get(k, self.DEFAULTS.get(k)))

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


def _set_address(rec: dict, value: str) -> bool:
    m = re.fullmatch(_ADDR, value.strip())
    if not m:
        return False
    d, b, s, f = m.groups()
    rec.update(domain=int(d, 16) if d else 0, bus=int(b, 16), slot=int(s, 16), function=int(f))
    return True


_VMM_NAMED = ("Class", "Vendor", "Device", "SVendor", "SDevice")
_VMM_TEXTS = ("class_text", "vendor_text", "device_text", "subvendor_text", "subdevice_text")
_DEC = re.compile(r"-?[0-9]+")


def _vmm_record(lines: list[str], start: int, source: str) -> dict:
    """One ``-vmm`` block (its non-blank lines, the first numbered ``start``) as a record.

    This is the reference: every block the fast path in :func:`parse_lspci_vmm`
    does not take comes here, and the fast path gives exactly its answer.
    """
    rec: dict = {}
    for lineno, line in enumerate(lines, start):
        key, sep, value = line.partition(":")
        value = value.strip()
        if not sep:
            rec.setdefault("problems", f"{source}:{lineno}: not a 'Key: value' line: {line.strip()[:80]!r}")
            continue
        if key == "Slot":
            if "function" in rec or not _set_address(rec, value):
                rec.setdefault("problems", f"{source}:{lineno}: bad or repeated Slot {value!r}")
            continue
        if key in _VMM_NAMED:
            m = _NAMED_ID.match(value)
            if not m:
                if key in ("Class", "Vendor", "Device"):
                    rec.setdefault("problems",
                                   f"{source}:{lineno}: no numeric {key} ID (collect with lspci -vmm -nn)")
                continue
            name, ident = m.group(1), int(m.group(2), 16)
            if key == "Class":
                rec["class_code"] = (ident << 8) | rec.pop("_progif", 0)
                rec["class_text"] = name
            elif key == "Vendor":
                rec["vendor"], rec["vendor_text"] = ident, name
            elif key == "Device":
                rec["device"], rec["device_text"] = ident, name
            elif key == "SVendor":
                rec["subvendor"], rec["subvendor_text"] = ident, name
                rec["_sub"] = rec.get("_sub", 0) + 1
            else:
                rec["subdevice"], rec["subdevice_text"] = ident, name
                rec["_sub"] = rec.get("_sub", 0) + 1
        elif key in ("Rev", "ProgIf"):
            if not re.fullmatch(_H2, value):
                rec.setdefault("problems", f"{source}:{lineno}: bad {key} {value!r}")
                continue
            v = int(value, 16)
            if key == "Rev":
                rec["revision"] = v
            elif "class_code" in rec:
                rec["class_code"] = (rec["class_code"] & ~0xFF) | v
            else:
                rec["_progif"] = v
        elif key == "Driver":
            rec["driver"] = value or None
        elif key in ("NUMANode", "IOMMUGroup"):
            if _DEC.fullmatch(value):
                rec["numa_node" if key == "NUMANode" else "iommu_group"] = max(int(value), -1)
        # other keys (Module, PhySlot, DeviceName, ...) carry nothing we classify by
    missing = [k for k, col in (("Class", "class_code"), ("Vendor", "vendor"),
                                ("Device", "device")) if col not in rec]
    if "function" not in rec and "problems" not in rec:
        rec["problems"] = f"{source}:{start}: no valid Slot line"
    if missing and "problems" not in rec:
        rec["problems"] = f"{source}:{start}: missing or malformed {', '.join(missing)}"
    if "_sub" in rec:
        rec["has_subsystem"] = rec["_sub"] == 2
    return rec


_VMM_COLUMNS = _Rows.NUM + _Rows.OBJ
_VMM_DEFAULTS = tuple(_Rows.DEFAULTS.get(k) for k in _VMM_COLUMNS)
_SPLIT_KEY = methodcaller("split", ":", 1)


def _record_row(rec: dict) -> tuple:
    return tuple(rec.get(k, d) for k, d in zip(_VMM_COLUMNS, _VMM_DEFAULTS))


class _Unusual(Exception):
    """A block the fast path does not take (it goes through _vmm_record)."""


def _vmm_fast_rows(chunks: list[str], source: str) -> list[tuple] | None:
    """Rows of ``-vmm`` blocks (``text.split("\\n\\n")``), each equal to _vmm_record's.

    Well-formed blocks are decoded from dicts of their lines, each distinct
    field value parsed once (dumps repeat them); any other block is handed to
    _vmm_record with its line number.  None when some blank line is not empty
    (whitespace only): the caller then finds the blocks line by line.
    """
    miss = _Unusual  # a sentinel no cache holds
    named: dict[str, tuple | None] = {}
    slots: dict[str, tuple | None] = {}
    hex2: dict[str, int | None] = {}
    dec: dict[str, int | None] = {}
    split_key = _SPLIT_KEY
    out: list[tuple] = []
    append = out.append
    lineno = 1
    for chunk in chunks:
        lines = chunk.split("\n")
        n_lines = len(lines)
        # an odd run of newlines leaves an empty line at either end
        first = 0 if lines[0] else 1
        if not lines[-1]:
            lines = lines[first:-1]
        elif first:
            lines = lines[1:]
        if not lines:
            lineno += n_lines + 1
            continue
        try:
            kv = dict(map(split_key, lines))
            if len(kv) != len(lines):  # a repeated key
                raise _Unusual
            get = kv.get
            # Slot, Class, Vendor and Device, each parsed once per distinct value
            fields = []
            for key, cache in (("Slot", slots), ("Class", named), ("Vendor", named), ("Device", named)):
                raw = kv[key]
                hit = cache.get(raw, miss)
                if hit is miss:
                    hit = cache[raw] = _slot_value(raw) if key == "Slot" else _named_value(raw)
                if hit is None:
                    raise _Unusual
                fields.append(hit)
            slot, cls, ven, dev = fields
            sv = sd = None
            raw = get("SVendor")
            if raw is not None:
                sv = named.get(raw, miss)
                if sv is miss:
                    sv = named[raw] = _named_value(raw)
            raw = get("SDevice")
            if raw is not None:
                sd = named.get(raw, miss)
                if sd is miss:
                    sd = named[raw] = _named_value(raw)
            rev = prog = 0
            raw = get("Rev")
            if raw is not None:
                rev = hex2.get(raw, miss)
                if rev is miss:
                    rev = hex2[raw] = _hex2_value(raw)
                if rev is None:
                    raise _Unusual
            raw = get("ProgIf")
            if raw is not None:
                prog = hex2.get(raw, miss)
                if prog is miss:
                    prog = hex2[raw] = _hex2_value(raw)
                if prog is None:
                    raise _Unusual
            numa = group = -1
            raw = get("NUMANode")
            if raw is not None:
                numa = dec.get(raw, miss)
                if numa is miss:
                    numa = dec[raw] = _dec_value(raw)
                if numa is None:
                    numa = -1
            raw = get("IOMMUGroup")
            if raw is not None:
                group = dec.get(raw, miss)
                if group is miss:
                    group = dec[raw] = _dec_value(raw)
                if group is None:
                    group = -1
            driver = get("Driver")
            if driver is not None:
                driver = driver.strip() or None
        except (_Unusual, KeyError, ValueError):  # ValueError: a line without ':'
            if any(not line.strip() for line in lines):
                return None
            append(_record_row(_vmm_record(lines, lineno + first, source)))
        else:
            append((*slot, ven[1], dev[1], 0 if sv is None else sv[1], 0 if sd is None else sd[1],
                    sv is not None and sd is not None, cls[1] << 8 | prog, rev, numa, group, driver,
                    None, cls[0], ven[0], dev[0], None if sv is None else sv[0],
                    None if sd is None else sd[0]))
        lineno += n_lines + 1
    return out


def _named_value(raw: str) -> tuple | None:
    m = _NAMED_ID.match(raw.strip())
    return None if m is None else (m.group(1), int(m.group(2), 16))


def _slot_value(raw: str) -> tuple | None:
    m = re.fullmatch(_ADDR, raw.strip())
    if m is None:
        return None
    d, b, s, f = m.groups()
    return int(d, 16) if d else 0, int(b, 16), int(s, 16), int(f)


def _hex2_value(raw: str) -> int | None:
    v = raw.strip()
    return int(v, 16) if re.fullmatch(_H2, v) else None


def _dec_value(raw: str) -> int | None:
    v = raw.strip()
    return max(int(v), -1) if _DEC.fullmatch(v) else None


# Keys the column-wise -vmm path decodes, each with the ':' that ends it.
_VMM_KEYS = ("Slot", "Class", "Vendor", "Device", "SVendor", "SDevice", "Rev", "ProgIf", "Driver",
             "NUMANode", "IOMMUGroup")
_VMM_MANDATORY = 4  # the first four: exactly once in every block


def _vmm_columns(text: str, source: str) -> DeviceTable | None:
    """Canonical ``-vmm -nn`` text decoded a column at a time, or None to take the exact path.

    Lines are classified by their key with numpy (the text must be ASCII), the
    blocks are the runs of non-empty lines, and every known key's values are
    decoded for all blocks at once, each distinct value once.  Any block the
    exact path would flag or treat specially (a key missing or repeated, a
    malformed value, a line without ':', a blank line that is not empty) makes
    this return None.
    """
    if not text.isascii():
        return None
    raw = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    nl = np.flatnonzero(raw == 10)
    starts = np.concatenate(([0], nl + 1))
    lens = np.concatenate((nl, [raw.shape[0]])) - starts
    n = starts.shape[0]
    # the first 16 bytes of each line as two little-endian words: a uint64 view
    # starting at every byte of the (padded) text, read at the line starts
    head = np.zeros(raw.shape[0] + 16, dtype=np.uint8)
    head[:raw.shape[0]] = raw
    at_byte = np.ndarray((raw.shape[0] + 9,), dtype="<u8", buffer=head, strides=(1,))
    word0, word1 = at_byte[starts], at_byte[starts + 8]
    code = np.full(n, -1, dtype=np.int64)
    for k, key in enumerate(_VMM_KEYS):
        kb = (key + ":").encode("ascii")
        w0, w1 = np.frombuffer(kb.ljust(16, b"\0"), "<u8")
        m0 = np.uint64((1 << (8 * min(len(kb), 8))) - 1)
        hit = (word0 & m0) == w0
        if len(kb) > 8:
            m1 = np.uint64((1 << (8 * (len(kb) - 8))) - 1)
            hit &= (word1 & m1) == w1
        hit &= lens >= len(kb)
        code[hit] = k
    nonempty = lens > 0
    unknown = np.flatnonzero(nonempty & (code < 0))
    if unknown.size:
        # other keys (Module, PhySlot, ...) are ignored, but every line needs a ':'
        colon_line = np.searchsorted(starts, np.flatnonzero(raw == 58), side="right") - 1
        has_colon = np.zeros(n, dtype=bool)
        has_colon[colon_line] = True
        if not has_colon[unknown].all():
            return None
    block_start = nonempty.copy()
    block_start[1:] &= ~nonempty[:-1]
    nb = int(block_start.sum())
    if nb == 0:
        return None
    bid = np.cumsum(block_start) - 1
    lines = text.split("\n")
    per_key = []
    for k, key in enumerate(_VMM_KEYS):
        at = np.flatnonzero(code == k)
        blocks = bid[at]
        if k < _VMM_MANDATORY:
            if at.shape[0] != nb:
                return None
        if blocks.shape[0] > 1 and not (blocks[1:] > blocks[:-1]).all():
            return None  # a key twice in a block (lines are in order, so blocks must rise)
        cut = itemgetter(slice(len(key) + 1, None))
        values = list(map(str.strip, map(cut, map(lines.__getitem__, at.tolist()))))
        per_key.append((blocks, values))
    (_, slot_v), (_, cls_v), (_, ven_v), (_, dev_v) = per_key[:_VMM_MANDATORY]
    addr = _addresses(slot_v)  # Slot: [domain:]bb:ss.f
    if addr is None:
        return None
    domain, bus, slot, fn = addr
    cls, ven, dev = (_named_ids(v, False) for v in (cls_v, ven_v, dev_v))
    if cls is None or ven is None or dev is None:
        return None

    def scatter(k, values, default, dtype=np.int64):
        out = np.full(nb, default, dtype=dtype)
        out[per_key[k][0]] = values
        return out

    def texts(k, names):
        out = np.full(nb, None, dtype=object)
        if names:
            tmp = np.empty(len(names), dtype=object)
            tmp[:] = names
            out[per_key[k][0]] = tmp
        return out

    subs = []
    for k in (4, 5):  # SVendor, SDevice: a value that is not one is ignored, as the exact path does
        got = _named_ids(per_key[k][1], True) if per_key[k][1] else (np.empty(0, np.uint32), [], np.empty(0, bool))
        if got is None:
            return None
        ids, names, present = got
        present = np.ones(len(names), dtype=bool) if present is None else present
        names = [nm if p else None for nm, p in zip(names, present.tolist())] if not present.all() else names
        subs.append((scatter(k, np.where(present, ids, 0), 0), texts(k, names),
                     scatter(k, present, False, bool)))
    small = []
    for k in (6, 7):  # Rev, ProgIf: two hex digits, else the exact path flags the block
        vals = per_key[k][1]
        if not vals:
            small.append(np.zeros(nb, dtype=np.int64))
            continue
        arr = _fixed(vals, 2)
        got = None if arr is None else _hex_cols(arr, range(0, 2))
        if got is None:
            return None
        small.append(scatter(k, got, 0))
    numbers = []
    for k in (9, 10):  # NUMANode, IOMMUGroup: a value that is not a number is no value
        vals = per_key[k][1]
        cache = {v: (max(int(v), -1) if _DEC.fullmatch(v) else -1) for v in set(vals)}
        numbers.append(scatter(k, list(map(cache.__getitem__, vals)), -1))
    drivers = [v or None for v in per_key[8][1]]
    (subvendor, subvendor_text, has_sv), (subdevice, subdevice_text, has_sd) = subs
    return DeviceTable.from_columns(
        source, domain=domain, bus=bus, slot=slot, function=fn, vendor=ven[0], device=dev[0],
        subvendor=subvendor, subdevice=subdevice, has_subsystem=has_sv & has_sd,
        class_code=(cls[0].astype(np.int64) << 8) | small[1], revision=small[0],
        numa_node=numbers[0], iommu_group=numbers[1], driver=texts(8, drivers),
        class_text=_object_array(cls[1]), vendor_text=_object_array(ven[1]),
        device_text=_object_array(dev[1]), subvendor_text=subvendor_text, subdevice_text=subdevice_text)


def _object_array(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def parse_lspci_vmm(text: str, source: str = "lspci -vmm -nn") -> DeviceTable:
    """``lspci -vmm -nn [-D] [-k]`` text: one row per ``Slot:`` block.

    >>> t = parse_lspci_vmm("Slot:\\t0000:41:00.0\\nClass:\\t3D controller [0302]\\n"
    ...                     "Vendor:\\tNVIDIA Corporation [10de]\\nDevice:\\tDevice [2bb5]\\n"
    ...                     "ProgIf:\\t00\\nDriver:\\tnvidia\\n")
    >>> t.addresses(), hex(t.device[0]), t.driver[0]
    (['0000:41:00.0'], '0x2bb5', 'nvidia')
    """
    table = _vmm_columns(text, source)
    return table if table is not None else _vmm_exact(text, source)


def _vmm_exact(text: str, source: str) -> DeviceTable:
    """``parse_lspci_vmm`` without the column-wise path: every block as _vmm_record reads it."""
    rows = _vmm_fast_rows(text.split("\n\n"), source)
    if rows is None:
        # Some blank line holds blanks: find the blocks line by line.
        rows = []
        block: list[str] = []
        start = 0
        for lineno, line in enumerate(text.split("\n"), 1):
            if line.strip():
                if not block:
                    start = lineno
                block.append(line)
            elif block:
                rows.append(_record_row(_vmm_record(block, start, source)))
                block = []
        if block:
            rows.append(_record_row(_vmm_record(block, start, source)))
    table = _Rows()
    if rows:
        for k, col in zip(_VMM_COLUMNS, zip(*rows)):
            table.cols[k] = list(col)
    return table.table(source, _VMM_TEXTS)


def parse_lspci_n(text: str, source: str = "lspci -n") -> DeviceTable:
    """``lspci -n`` / ``-nn`` text, with the detail lines of ``-v`` / ``-k`` where present.

    >>> t = parse_lspci_n("01:00.0 0300: 10de:1b80 (rev a1)\\n\\tSubsystem: 1458:3702\\n"
    ...                   "\\tKernel driver in use: nvidia\\n")
    >>> hex(t.subdevice[0]), t.driver[0], int(t.revision[0])
    ('0x3702', 'nvidia', 161)
    """
    rows = _Rows()
    rec: dict | None = None
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        if line[0] in " \t":
            if rec is None or "problems" in rec:
                continue
            key, _, value = line.strip().partition(": ")
            if key == "Subsystem":
                m = _SUB_IDS.search(value)
                if m:
                    at = m.start()
                    rec.update(subvendor=int(m.group(1), 16), subdevice=int(m.group(2), 16),
                               has_subsystem=True,
                               subvendor_text=value[:at - 2] if value[at - 2:at] == " [" else None)
            elif key == "Kernel driver in use":
                rec["driver"] = value.strip() or None
            elif key == "NUMA node" and re.fullmatch(r"-?[0-9]+", value.strip()):
                rec["numa_node"] = max(int(value), -1)
            elif key == "IOMMU group" and re.fullmatch(r"[0-9]+", value.strip()):
                rec["iommu_group"] = int(value)
            continue
        if rec is not None:
            rows.add(rec)
        m = _N.match(line)
        if m is None:
            rec = {"problems": f"{source}:{lineno}: "
                               + ("no numeric IDs (collect with lspci -nn)" if _ADDR_ONLY.match(line)
                                  else "not an lspci -n line") + f": {line.strip()[:120]!r}"}
            am = _ADDR_ONLY.match(line)
            if am:
                _set_address(rec, am.group(0))
            continue
        d, b, s, f, cls_t, cls, vd_t, v, dv, rev, prog = m.groups()
        rec = {"domain": int(d, 16) if d else 0, "bus": int(b, 16), "slot": int(s, 16),
               "function": int(f), "class_code": (int(cls, 16) << 8) | (int(prog, 16) if prog else 0),
               "vendor": int(v, 16), "device": int(dv, 16), "revision": int(rev, 16) if rev else 0,
               "class_text": cls_t, "device_text": vd_t}
    if rec is not None:
        rows.add(rec)
    return rows.table(source, ("class_text", "device_text", "subvendor_text"))


_FORMATS = {"mm": parse_lspci_mm, "vmm": parse_lspci_vmm, "n": parse_lspci_n}


def detect_format(text: str) -> str:
    """``"mm"``, ``"vmm"`` or ``"n"``, from the first non-blank line.

    >>> detect_format("Slot:\\t00:00.0\\n"), detect_format('00:00.0 "Host bridge [0600]" ...')
    ('vmm', 'mm')
    """
    for line in text.split("\n"):
        s = line.strip()
        if not s:
            continue
        if s.startswith("Slot:"):
            return "vmm"
        m = _ADDR_ONLY.match(s)
        if m and s[m.end():].lstrip().startswith('"'):
            return "mm"
        return "n"
    return "mm"


def parse_lspci(text: str, fmt: str | None = None, source: str = "lspci") -> DeviceTable:
    """Any understood lspci output (``fmt`` ``"mm"``, ``"vmm"``, ``"n"`` or detected).

    >>> len(parse_lspci("00:00.0 0600: 8086:0d57\\n00:01.0 ffff: 1af4:1045 (rev 01)\\n"))
    2
    """
    fmt = fmt or detect_format(text)
    if fmt not in _FORMATS:
        raise SourceError(source, None, f"unknown lspci format {fmt!r} (expected mm, vmm or n)")
    return _FORMATS[fmt](text, source)


def read_lspci(path: str | os.PathLike, fmt: str | None = None) -> DeviceTable:
    """Parse an lspci dump file; an unreadable file is a :class:`SourceError`."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise SourceError(path, None, exc.strerror or str(exc)) from exc
    return parse_lspci(text, fmt, source=path)
