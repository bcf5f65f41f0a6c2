"""A dump pasted as a table (markdown ``|`` rows, ASCII or box-drawing frames), read
as the lspci lines its rows hold.

A person who tabulates a dump splits its lines at their separators: the slot in a
cell, the class in the next (its ``:`` kept or dropped), the names, the ``-nnmm``
quoted fields, a ``-vmm`` key and its value, maybe a line-number column first and
a header row with a ``|---|`` rule under it.  :func:`untable` strips the frame,
drops the line-number cells before the slot, and joins the cells with the
separators lspci prints: a space, the ``: `` after the class of ``-n``/``-nn``
(where no cell kept it), ``Key:<TAB>`` for ``-vmm``, and quotes around the fields
of a ``-nnmm``/``-nmm`` line whose cells lost them.  Frame rules, rows of empty cells and
header rows (no digit, no ``-vmm`` key with a value) are lines of the paste's own
(blank).  Any other row is left as it was: it stays one flagged line.

>>> untable("| 12 | 0000:01:00.0 | VGA compatible controller [0300] | NVIDIA Corporation GA102 [10de:2204] |")
'0000:01:00.0 VGA compatible controller [0300]: NVIDIA Corporation GA102 [10de:2204]'
>>> untable("│ Driver │ nvidia │"), untable("|---|:---:|"), untable("| Slot | Class |")
('Driver:\\tnvidia', '', '')
>>> untable("01:00.0 0300: 10de:1b80") is None
True
"""

from __future__ import annotations

import re

from .columns import ADDR

__all__ = ["untable"]

_BARS = str.maketrans({"\u2502": "|", "\u2503": "|", "\u2551": "|", "\u250a": "|", "\u2506": "|"})
# a row: markup before the first bar, or a bare slot or -vmm key cell followed by one
_ROW = re.compile(rf"^[ \t>*`]{{0,16}}(?:[0-9]{{1,7}}[:.)\]]?[ \t]{{0,8}})?\|"
                  rf"|^[ \t]{{0,16}}(?:{ADDR}|[A-Z][A-Za-z]{{1,15}}:?)[ \t]{{0,8}}\|")
_CELL_SLOT = re.compile(rf"^{ADDR}(?:[ \t]|$)")
_LINE_NUMBER = re.compile(r"^[0-9]{1,7}[:.)\]]?$")
_BOX = re.compile("[\u2500-\u257f]")
_MARKED = re.compile(r'[\[\]"]')
_DIGIT = re.compile(r"[0-9]")
_HEX4 = frozenset("0123456789abcdefABCDEF")
_RULE_CHARS = frozenset("-|+:=_ \t") | frozenset(chr(c) for c in range(0x2500, 0x2580))
_RULE_MARKS = frozenset("-=_") | frozenset(chr(c) for c in range(0x2500, 0x2580))
_VMM_KEYS = frozenset({"Slot", "Class", "Vendor", "Device", "SVendor", "SDevice", "Rev", "ProgIf", "Driver",
                       "Module", "NUMANode", "IOMMUGroup", "PhySlot", "DeviceName"})
_MARKUP = " \t*`"


def _rule(line: str) -> bool:
    """Only bars, dashes, colons, pluses and box-drawing lines: a table's frame."""
    chars = set(line.lstrip(" \t>"))
    return bool(chars) and chars <= _RULE_CHARS and bool(chars & _RULE_MARKS)


def _hex4(s: str) -> bool:
    return len(s) == 4 and set(s) <= _HEX4


def _bracketed4(s: str) -> bool:
    """``s`` ends with ``[hhhh]``: the class of ``-nn``, the vendor of ``-nnmm``."""
    return len(s) >= 6 and s[-1] == "]" and s[-6] == "[" and _hex4(s[-5:-1])


def untable(line: str) -> str | None:
    """The lspci line a table row holds, ``""`` for a line of the table's own (a rule,
    a header, an empty row), or None where ``line`` is no table row or holds nothing."""
    if "|" not in line:
        line = line.translate(_BARS) if _BOX.search(line) else line
        if "|" not in line:  # a box's top or bottom edge, an ASCII rule
            return "" if _rule(line) else None
    if _rule(line):
        return ""
    if not _ROW.match(line):
        # a header row without the outer bars: words between bars, no digit
        return "" if line.count("|") >= 2 and not _DIGIT.search(line) else None
    cells = [c.strip(_MARKUP) for c in line.strip(" \t").lstrip(">* \t`").split("|")]
    if cells and _LINE_NUMBER.match(cells[0].rstrip(" \t")):  # a gutter number before the frame
        cells[0] = ""
    cells = [c for c in cells if c]
    if not cells:
        return ""
    start = 0
    while start < len(cells) and _LINE_NUMBER.match(cells[start]):
        start += 1
    if start == len(cells):
        return None
    head, rest = cells[start], cells[start + 1:]
    m = _CELL_SLOT.match(head)
    if m:
        return _join_device(head, m.end(), rest)
    key = head.rstrip(":").rstrip(" \t")
    digits = _DIGIT.search(line) is not None
    if key in _VMM_KEYS and rest and (digits or not any(c.rstrip(":") in _VMM_KEYS for c in rest)):
        value = " ".join(rest)
        if key != "Slot" or _CELL_SLOT.match(value):
            return f"{key}:\t{value}"
    if not digits:
        return ""  # a header row
    return None


def _join_device(head: str, slot: int, rest: list[str]) -> str:
    if (len(rest) >= 3 and _CELL_SLOT.fullmatch(head) and not rest[0].startswith('"')
            and ((_bracketed4(rest[0]) and _bracketed4(rest[1])) or (_hex4(rest[0]) and _hex4(rest[1])))):
        # -nnmm fields, one to a cell, their quotes lost: quote each but the options, and
        # give back the empty subsystem fields that lspci prints and the table dropped
        fields = [c if len(c) == 4 and c[:2] in ("-r", "-p") and set(c[2:]) <= _HEX4 else f'"{c}"'
                  for c in rest]
        named = sum(f.startswith('"') for f in fields)
        return " ".join([head, *fields] + ['""'] * max(0, 5 - named))
    tail = head[slot:].strip(" \t")  # what the slot's cell holds after the slot
    parts, last, chunks, plain = [head], tail, int(bool(tail)), True
    pending = ":" not in tail  # the ':' after the class of -n / -nn is still to come
    for cell in rest:
        # the class ends the text after the slot: a -n class alone, or a -nn name and
        # its [hhhh] with nothing bracketed or quoted before it
        if cell.startswith(":"):  # split before the class's ':'
            parts.append(cell)
        elif pending and chunks and '"' not in last and (
                (chunks == 1 and _hex4(last))
                or (plain and _bracketed4(last) and not _MARKED.search(last, 0, len(last) - 6))):
            parts.append(": " + cell)
            pending = False
        else:
            parts.append(" " + cell)
        pending = pending and ":" not in cell
        plain = plain and not _MARKED.search(last)
        last, chunks = cell, chunks + 1
    return "".join(parts)
