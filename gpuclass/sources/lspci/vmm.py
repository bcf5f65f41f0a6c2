"""``lspci -vmm -nn [-D] [-k]``: ``Key:<TAB>value`` blocks separated by blank lines.

Canonical dumps are decoded a column at a time (:func:`_vmm_columns`); the
rest block by block, each well-formed block from a dict of its lines and any
other through :func:`_vmm_record`, the reference both faster paths agree with.

>>> t = parse_lspci_vmm("Slot:\\t0000:41:00.0\\nClass:\\t3D controller [0302]\\n"
...                     "Vendor:\\tNVIDIA Corporation [10de]\\nDevice:\\tDevice [2bb5]\\n"
...                     "ProgIf:\\t00\\nDriver:\\tnvidia\\n")
>>> t.addresses(), hex(t.device[0]), t.driver[0]
(['0000:41:00.0'], '0x2bb5', 'nvidia')
"""

from __future__ import annotations

import re
from operator import itemgetter, methodcaller

import numpy as np

from ...devices import DeviceTable
from ...ids import ascii_matrix, hex_matrix, parse_address
from .columns import (
    H2,
    NAMED_ID,
    Rows,
    addresses,
    dec_field,
    named_ids,
    object_array,
    range_problem,
    set_address,
)

__all__ = ["parse_lspci_vmm"]

_VMM_NAMED = ("Class", "Vendor", "Device", "SVendor", "SDevice")
_VMM_TEXTS = ("class_text", "vendor_text", "device_text", "subvendor_text", "subdevice_text")


def _vmm_record(lines: list[str], start: int, source: str) -> dict:
    """One ``-vmm`` block (its non-blank lines, the first numbered ``start``) as a record.

    This is the reference: every block the fast path in :func:`parse_lspci_vmm`
    does not take comes here, and the fast path gives exactly its answer.
    """
    rec: dict = {}
    ranges = []  # numbers past an int32: flag the block unless something worse does
    for lineno, line in enumerate(lines, start):
        key, sep, value = line.partition(":")
        if not sep or not (key.isalnum() and key.isascii()) or value[:1] not in ("\t", ""):
            # lspci -vmm prints "Key:<TAB>value", the key one word
            rec.setdefault("problems", f"{source}:{lineno}: not a 'Key:<TAB>value' line: {line.strip()[:80]!r}")
            continue
        value = value.strip()
        if key == "Slot":
            if "function" in rec or not set_address(rec, value):
                rec.setdefault("problems", f"{source}:{lineno}: bad or repeated Slot {value!r}")
            continue
        if key in _VMM_NAMED:
            m = NAMED_ID.match(value)
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
            if not re.fullmatch(H2, value):
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
            number = dec_field(value)
            if number is None:  # unknown, and the device flagged (as by sysfs)
                ranges.append(range_problem(f"{source}:{lineno}", key, value))
                number = -1
            rec["numa_node" if key == "NUMANode" else "iommu_group"] = number
        # other keys (Module, PhySlot, DeviceName, ...) carry nothing we classify by
    missing = [k for k, col in (("Class", "class_code"), ("Vendor", "vendor"),
                                ("Device", "device")) if col not in rec]
    if "function" not in rec and "problems" not in rec:
        rec["problems"] = f"{source}:{start}: no valid Slot line"
    if missing and "problems" not in rec:
        rec["problems"] = f"{source}:{start}: missing or malformed {', '.join(missing)}"
    if ranges and "problems" not in rec:
        rec["problems"] = "; ".join(ranges)
    if "_sub" in rec:
        rec["has_subsystem"] = rec["_sub"] == 2
    return rec


_VMM_COLUMNS = Rows.NUM + Rows.OBJ
_VMM_DEFAULTS = tuple(Rows.DEFAULTS.get(k) for k in _VMM_COLUMNS)
_SPLIT_KEY = methodcaller("split", ":", 1)


def _record_row(rec: dict) -> tuple:
    return tuple(rec.get(k, d) for k, d in zip(_VMM_COLUMNS, _VMM_DEFAULTS))


class _Unusual(Exception):
    """A block the fast path does not take (it goes through _vmm_record)."""


def _vmm_fast_rows(chunks: list[str], source: str, first_line: int = 1) -> list[tuple] | None:
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
    lineno = first_line
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
            if not all(map(str.isalnum, kv)) or not all(v[:1] in ("\t", "") for v in kv.values()):
                raise _Unusual  # not "Key:<TAB>value": _vmm_record says which line
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
                    numa = dec[raw] = dec_field(raw)
                if numa is None:  # past an int32: _vmm_record flags the block
                    raise _Unusual
            raw = get("IOMMUGroup")
            if raw is not None:
                group = dec.get(raw, miss)
                if group is miss:
                    group = dec[raw] = dec_field(raw)
                if group is None:
                    raise _Unusual
            driver = get("Driver")
            if driver is not None:
                driver = driver.strip() or None
        except (_Unusual, KeyError, ValueError):  # ValueError: a line without ':'
            if any(not line.strip() for line in lines):
                return None
            append(_record_row(_vmm_record(lines, lineno + first, source)))
        else:
            append((*slot, ven[1], dev[1], 0 if sv is None else sv[1], 0 if sd is None else sd[1],
                    sv is not None and sd is not None, cls[1] << 8 | prog, rev, numa, group, 0, -1, -1, driver,
                    None, cls[0], ven[0], dev[0], None if sv is None else sv[0],
                    None if sd is None else sd[0]))
        lineno += n_lines + 1
    return out


def _named_value(raw: str) -> tuple | None:
    m = NAMED_ID.match(raw.strip())
    return None if m is None else (m.group(1), int(m.group(2), 16))


def _slot_value(raw: str) -> tuple | None:
    return parse_address(raw.strip())


def _hex2_value(raw: str) -> int | None:
    v = raw.strip()
    return int(v, 16) if re.fullmatch(H2, v) else None


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
        for i in unknown.tolist():  # and the form "Key:<TAB>value", the key one word
            key, _, value = text[int(starts[i]):int(starts[i] + lens[i])].partition(":")
            if not (key.isalnum() and value[:1] in ("\t", "")):
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
    addr = addresses(slot_v)  # Slot: [domain:]bb:ss.f
    if addr is None:
        return None
    domain, bus, slot, fn = addr
    cls, ven, dev = (named_ids(v, False) for v in (cls_v, ven_v, dev_v))
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
        got = named_ids(per_key[k][1], True) if per_key[k][1] else (np.empty(0, np.uint32), [], np.empty(0, bool))
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
        arr = ascii_matrix(vals, 2)
        got = None if arr is None else hex_matrix(arr)
        if got is None:
            return None
        small.append(scatter(k, got, 0))
    numbers = []
    for k in (9, 10):  # NUMANode, IOMMUGroup: a value that is not a number is no value
        vals = per_key[k][1]
        cache = {v: dec_field(v) for v in set(vals)}
        if None in cache.values():
            return None  # a number past an int32: the exact path flags its block
        numbers.append(scatter(k, list(map(cache.__getitem__, vals)), -1))
    drivers = [v or None for v in per_key[8][1]]
    (subvendor, subvendor_text, has_sv), (subdevice, subdevice_text, has_sd) = subs
    return DeviceTable.from_columns(
        source, domain=domain, bus=bus, slot=slot, function=fn, vendor=ven[0], device=dev[0],
        subvendor=subvendor, subdevice=subdevice, has_subsystem=has_sv & has_sd,
        class_code=(cls[0].astype(np.int64) << 8) | small[1], revision=small[0],
        numa_node=numbers[0], iommu_group=numbers[1], driver=texts(8, drivers),
        class_text=object_array(cls[1]), vendor_text=object_array(ven[1]),
        device_text=object_array(dev[1]), subvendor_text=subvendor_text, subdevice_text=subdevice_text)


def parse_lspci_vmm(text: str, source: str = "lspci -vmm -nn", first_line: int = 1) -> DeviceTable:
    """``lspci -vmm -nn [-D] [-k]`` text: one row per ``Slot:`` block.

    >>> t = parse_lspci_vmm("Slot:\\t0000:41:00.0\\nClass:\\t3D controller [0302]\\n"
    ...                     "Vendor:\\tNVIDIA Corporation [10de]\\nDevice:\\tDevice [2bb5]\\n"
    ...                     "ProgIf:\\t00\\nDriver:\\tnvidia\\n")
    >>> t.addresses(), hex(t.device[0]), t.driver[0]
    (['0000:41:00.0'], '0x2bb5', 'nvidia')
    """
    table = _vmm_columns(text, source)
    return table if table is not None else _vmm_exact(text, source, first_line)


def _vmm_exact(text: str, source: str, first_line: int = 1) -> DeviceTable:
    """``parse_lspci_vmm`` without the column-wise path: every block as _vmm_record reads it."""
    rows = _vmm_fast_rows(text.split("\n\n"), source, first_line)
    if rows is None:
        # Some blank line holds blanks: find the blocks line by line.
        rows = []
        block: list[str] = []
        start = 0
        for lineno, line in enumerate(text.split("\n"), first_line):
            if line.strip():
                if not block:
                    start = lineno
                block.append(line)
            elif block:
                rows.append(_record_row(_vmm_record(block, start, source)))
                block = []
        if block:
            rows.append(_record_row(_vmm_record(block, start, source)))
    table = Rows()
    if rows:
        for k, col in zip(_VMM_COLUMNS, zip(*rows)):
            table.cols[k] = list(col)
    return table.table(source, _VMM_TEXTS)
