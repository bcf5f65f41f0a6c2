"""``lspci -nnmm [-D]`` (and ``-nmm``): one quoted line per device.

Three ways in, one answer: canonical dumps are decoded a column at a time
(:func:`_mm_fast`, or on the distinct lines only when they repeat,
:func:`_mm_dedup`); any text they do not take goes line by line through the
regex, which is exact and flags every line it cannot read.

>>> t = parse_lspci_mm('01:00.1 "Audio device [0403]" "NVIDIA Corporation [10de]" '
...                    '"Device [22bc]" -ra1 "" ""\\n')
>>> t.addresses(), hex(t.class_code[0]), bool(t.has_subsystem[0])
(['0000:01:00.1'], '0x40300', False)
"""

from __future__ import annotations

import re
from operator import itemgetter

import numpy as np

from ...devices import NUMERIC_COLUMNS, OBJECT_COLUMNS, TEXT_COLUMNS, DeviceTable
from .columns import (
    ADDR,
    ADDRESS_COLUMNS,
    H2,
    H4,
    addresses,
    flagged,
    hex_fixed,
    hex_optional,
    hex_variable,
    named_ids,
    texts,
)

__all__ = ["parse_lspci_mm"]

# A quoted field: "Name [id]" (-nnmm) or "id" (-nmm); the name ends at the last bracket.
# A name may hold a quote but never the field separator '" "': with names free to
# run across fields, a hostile line made the five lazy groups backtrack in O(n^5).
_NAME = r'(?:[^"\n]|"(?! "))*?'
_FIELD = rf'"(?:({_NAME}) \[)?({H4})\]?"'
_SUBFIELD = rf'"(?:(?:({_NAME}) \[)?({H4})\]?)?"'
_MM = re.compile(
    rf"^[ \t]*{ADDR} {_FIELD} {_FIELD} {_FIELD}(?: -r({H2}))?(?: -p({H2}))?"
    rf" {_SUBFIELD} {_SUBFIELD}[ \t\r]*$",
    re.MULTILINE,
)
_NONBLANK = re.compile(r"^[^\S\n]*\S", re.MULTILINE)
_NONBLANK = re.compile(r"^[^\S\n]*\S", re.MULTILINE)


def _mm_table(rows: list[tuple[str, ...]], source: str) -> DeviceTable:
    n = len(rows)
    if n == 0:
        return DeviceTable.empty(source)
    (dom, bus, slot, fn, cls_t, cls, ven_t, ven, dev_t, dev, rev, prog,
     sv_t, sv, sd_t, sd) = zip(*rows)
    revision, has_rev = hex_optional(rev, 2, "00")
    progif, _ = hex_optional(prog, 2, "00")
    subvendor, has_sv = hex_optional(sv, 4, "0000")
    subdevice, has_sd = hex_optional(sd, 4, "0000")
    return DeviceTable.from_columns(
        source,
        domain=hex_variable(dom),
        bus=hex_fixed(bus, 2).astype(np.uint8),
        slot=hex_fixed(slot, 2).astype(np.uint8),
        function=hex_fixed(fn, 1).astype(np.uint8),
        vendor=hex_fixed(ven, 4).astype(np.uint16),
        device=hex_fixed(dev, 4).astype(np.uint16),
        subvendor=subvendor.astype(np.uint16),
        subdevice=subdevice.astype(np.uint16),
        has_subsystem=has_sv & has_sd,
        class_code=(hex_fixed(cls, 4) << 8) | progif,
        # lspci prints the revision only when it is not 0
        revision=np.where(has_rev, revision, 0).astype(np.int16),
        class_text=texts(cls_t), vendor_text=texts(ven_t), device_text=texts(dev_t),
        subvendor_text=texts(sv_t), subdevice_text=texts(sd_t),
    )


_OPTIONS = re.compile(rf" (?:-r({H2}) )?(?:-p({H2}) )?")
# C-level slicers for map(): no Python frame per field
_FIRST, _BUT_FIRST = itemgetter(slice(0, 1)), itemgetter(slice(1, None))
_LAST1, _BUT_LAST1 = itemgetter(slice(-1, None)), itemgetter(slice(None, -1))



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
    parsed = addresses(list(map(_BUT_LAST1, addrs)))
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
    cls, ven, dev = (named_ids(parts[k::10], False) for k in (1, 3, 5))
    sv, sd = (named_ids(parts[k::10], True) for k in (7, 9))
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
    addr = addresses(heads)
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
            if name not in ADDRESS_COLUMNS}
    for name in TEXT_COLUMNS:
        col = getattr(sub, name)
        if col is not None:
            cols[name] = col[inverse]
    return DeviceTable.from_columns(source, **dict(zip(ADDRESS_COLUMNS, addr)), **cols)


_QUOTED = re.compile(r'"([^"\n]*)"')
_FIELD_ID = re.compile(rf"(?:^|\[){H4}\]?$")


def _mm_reason(line: str) -> str:
    """What an unreadable ``-mm`` line lacks, in words."""
    if '"' not in line:
        return "not an lspci -mm line"
    fields = _QUOTED.findall(line)
    if len(fields) < 3:
        return f"expected the class, vendor and device fields in quotes, found {len(fields)}"
    missing = [what for what, f in zip(("class", "vendor", "device"), fields)
               if not _FIELD_ID.search(f.strip())]
    if missing:
        return f"no numeric {', '.join(missing)} ID (collect with lspci -nnmm)"
    return "malformed lspci -mm line (unexpected text around the fields)"


def parse_lspci_mm(text: str, source: str = "lspci -nnmm", first_line: int = 1) -> DeviceTable:
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
    for lineno, line in enumerate(text.split("\n"), first_line):
        if not line.strip():
            continue
        m = line_re.match(line)
        if m:
            if bad:
                parts.append(flagged(bad, source))
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
        parts.append(flagged(bad, source))
    return DeviceTable.concat(parts, source=source)
