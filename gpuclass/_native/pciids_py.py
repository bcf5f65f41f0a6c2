"""Pure-Python twin of the pci.ids tokenizer (``pciids.pxi``).

The same grammar, states and codes as the compiled tokenizer, line by line in
Python: the reference the differential tests hold the C to.  Both hand their
entry stream to the contract's ``finish_parse``.

>>> tables, skipped = parse_pci_ids(b"10de  NVIDIA\\n\\t27b0  AD104GL\\n")
>>> [hex(k) for k in tables["device_keys"]], skipped
(['0x10de27b0'], [])
"""

from __future__ import annotations

from array import array

import numpy as np

from .contract import pciids as _P

__all__ = ["scan_pci_ids", "parse_pci_ids"]

_HEX = {c: int(chr(c), 16) for c in b"0123456789abcdefABCDEF"}
_WHITE = (0x20, 0x09)


def _hex(line: bytes, pos: int, width: int):
    """Value of ``width`` hex digits at ``pos``, or a negative error code."""
    value = 0
    for i in range(pos, pos + width):
        if i >= len(line):
            return -_P.E_WIDTH
        digit = _HEX.get(line[i])
        if digit is None:
            return -_P.E_WIDTH if line[i] in _WHITE else -_P.E_BAD_HEX
        value = value * 16 + digit
    return value


def _id_then_white(line: bytes, pos: int, width: int):
    """Parse an ID that must be followed by whitespace; (value, error)."""
    value = _hex(line, pos, width)
    if value < 0:
        return 0, -value
    end = pos + width
    if end >= len(line):
        return 0, _P.E_NO_NAME
    c = line[end]
    if c in _WHITE:
        return value, 0
    return 0, _P.E_WIDTH if c in _HEX else _P.E_BAD_HEX


def _name(line: bytes, pos: int, notes: list[int] | None):
    """The name after the ID's whitespace; (start, error).  A name that is not UTF-8 is
    kept (libpci takes any byte); with ``notes`` (lenient mode) it is noted there."""
    n = len(line)
    while pos < n and line[pos] in _WHITE:
        pos += 1
    if pos >= n:
        return pos, _P.E_NO_NAME
    if notes is not None and not notes:
        try:
            line[pos:].decode("utf-8")
        except UnicodeDecodeError:
            notes.append(_P.E_UTF8)
    return pos, 0


def scan_pci_ids(data, strict=True):
    """Tokenize pci.ids text into a flat entry stream (see ``_pciids.finish_parse``)."""
    data = bytes(data)
    if len(data) > 0xFFFFFFFF:
        raise _P.too_large(len(data))
    # typed arrays, not lists: a list holds a Python int object per value (about 36
    # bytes), five times the compiled tokenizer's memory on a large file
    keys = [array("Q") for _ in range(7)]
    entries = [array("I") for _ in range(7)]
    lines, name_start, name_end = array("I"), array("I"), array("I")
    errors: list[tuple[int, int, int, int]] = []

    TOP_NONE, TOP_VENDOR, TOP_CLASS, TOP_GENSUB, TOP_UNKNOWN, TOP_BAD = range(6)
    L1_NONE, L1_OK, L1_BAD = range(3)
    top, l1 = TOP_NONE, L1_NONE
    vendor = device = cls = subclass = gsvendor = 0
    seen_vendor = bytearray(65536)

    pos = 0
    total = len(data)
    lineno = 0
    while pos < total:
        nl = data.find(b"\n", pos)
        end = total if nl < 0 else nl
        lineno += 1
        start = pos
        pos = end + 1
        raw = data[start:end]

        def fail(code, field=0):
            errors.append((lineno, code, field, start))

        if len(raw) > _P.MAX_LINE:
            fail(_P.E_TOO_LONG)
            if strict:
                break
            continue
        if b"\0" in raw:
            fail(_P.E_NUL)
            if strict:
                break
            continue
        cr = raw.find(b"\r")
        line = raw if cr < 0 else raw[:cr]
        if line and line[-1] in _WHITE:
            line = line[:-1]
        stripped = line.lstrip(b" \t")
        if not stripped or stripped[0] == 0x23:  # '#'
            continue
        nest = len(line) - len(line.lstrip(b"\t"))

        kind = key = -1
        code = field = 0
        name_at = 0
        notes: list[int] | None = None if strict else []  # a kept line's note (lenient mode only)
        if nest == 0:
            l1 = L1_NONE
            if line[0] == 0x43 and len(line) > 1 and line[1] == 0x20:  # 'C '
                field = _P.F_CLASS
                value, code = _id_then_white(line, 2, 2)
                if not code:
                    name_at, code = _name(line, 5, notes)
                if code:
                    top = TOP_BAD
                else:
                    # a prog-if line straight under the class is subclass 00, as libpci reads it
                    top, cls, subclass = TOP_CLASS, value, 0
                    kind, key = _P.K_CLASS, value
            elif line[0] == 0x53 and len(line) > 1 and line[1] == 0x20:  # 'S '
                field = _P.F_GSVENDOR
                value = _hex(line, 2, 4)
                if value < 0:
                    code = -value
                elif len(line) != 6:
                    code, field = _P.E_GENSUB_HEADER, _P.F_NONE
                elif not seen_vendor[value]:
                    code = _P.E_GENSUB_VENDOR
                if code:
                    top = TOP_BAD
                else:
                    top, gsvendor = TOP_GENSUB, value
                    continue
            elif 0x41 <= line[0] <= 0x5A and len(line) > 1 and line[1] == 0x20:
                top = TOP_UNKNOWN
                continue
            else:
                field = _P.F_VENDOR
                value, code = _id_then_white(line, 0, 4)
                if not code:
                    name_at, code = _name(line, 5, notes)
                if code:
                    top = TOP_BAD
                else:
                    top, vendor = TOP_VENDOR, value
                    seen_vendor[value] = 1
                    kind, key = _P.K_VENDOR, value
        elif top == TOP_UNKNOWN:
            continue
        elif nest >= 3:
            code = _P.E_TABS
        elif nest == 1:
            body = nest
            if top == TOP_NONE:
                code = _P.E_DEVICE_FIRST
            elif top == TOP_BAD:
                code = _P.E_IN_SKIPPED
            elif top == TOP_VENDOR:
                field = _P.F_DEVICE
                value, code = _id_then_white(line, body, 4)
                if not code:
                    name_at, code = _name(line, body + 5, notes)
                if code:
                    l1 = L1_BAD
                else:
                    l1, device = L1_OK, value
                    kind, key = _P.K_DEVICE, (vendor << 16) | value
            elif top == TOP_CLASS:
                field = _P.F_SUBCLASS
                value, code = _id_then_white(line, body, 2)
                if not code:
                    name_at, code = _name(line, body + 3, notes)
                if code:
                    l1 = L1_BAD
                else:
                    l1, subclass = L1_OK, value
                    kind, key = _P.K_SUBCLASS, (cls << 8) | value
            else:  # generic subsystem block
                field = _P.F_GSDEVICE
                value, code = _id_then_white(line, body, 4)
                if not code:
                    name_at, code = _name(line, body + 5, notes)
                if not code:
                    kind, key = _P.K_GENSUB, (gsvendor << 16) | value
        else:  # nest == 2
            body = nest
            if top == TOP_NONE:
                code = _P.E_SUBSYS_FIRST
            elif top == TOP_BAD or l1 == L1_BAD:
                code = _P.E_IN_SKIPPED
            elif top == TOP_VENDOR:
                if l1 == L1_NONE:
                    code = _P.E_SUBSYS_FIRST
                else:
                    field = _P.F_SUBVENDOR
                    sv, code = _id_then_white(line, body, 4)
                    if not code:
                        field = _P.F_SUBDEVICE
                        sd, code = _id_then_white(line, body + 5, 4)
                    if not code:
                        field = _P.F_SUBDEVICE
                        name_at, code = _name(line, body + 10, notes)
                    if not code:
                        kind = _P.K_SUBSYS
                        key = (vendor << 48) | (device << 32) | (sv << 16) | sd
            elif top == TOP_CLASS:
                if l1 == L1_NONE and notes is not None:
                    notes.append(_P.E_PROGIF_IN_CLASS)  # libpci reads it as a prog-if of subclass 00
                field = _P.F_PROGIF
                value, code = _id_then_white(line, body, 2)
                if not code:
                    name_at, code = _name(line, body + 3, notes)
                if not code:
                    kind, key = _P.K_PROGIF, (cls << 16) | (subclass << 8) | value
            else:
                code = _P.E_GENSUB_NEST
        if code:
            fail(code, field)
            if strict:
                break
            continue
        if notes:  # kept as libpci keeps it, and listed as read but not as written
            fail(notes[0], field)
        keys[kind].append(key)
        entries[kind].append(len(lines))
        lines.append(lineno)
        name_start.append(start + name_at)
        name_end.append(start + len(line))

    return (
        [np.frombuffer(k, dtype=np.uint64) if len(k) else np.empty(0, np.uint64) for k in keys],
        [np.frombuffer(e, dtype=np.uint32) if len(e) else np.empty(0, np.uint32) for e in entries],
        *(np.frombuffer(a, dtype=np.uint32) if len(a) else np.empty(0, np.uint32)
          for a in (lines, name_start, name_end)),
        errors,
    )


def parse_pci_ids(data, strict=True, filename="<pci.ids>"):
    """Parse pci.ids text into sorted key arrays and one name blob (see the contract)."""
    return _P.parse_pci_ids(scan_pci_ids, data, strict, filename)
