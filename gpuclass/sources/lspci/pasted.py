"""A dump as pasted into an issue, a ticket or a chat, given back its lines' shape.

Pasting keeps the IDs but adds markup: indentation, quote markers (``>``), list
bullets (``*``, ``-``), ``**bold**``, backticks, table cells (``|``), line numbers
(``cat -n``, an editor's gutter: stripped only where a device line or a line
of the paste's own follows), ``grep --color`` escapes, and lines of its own:
``IOMMU group N`` headers of the common shell loop, ``[...]`` elisions and grep's
``--`` separators.  :func:`unpaste` strips that markup from a line that then
starts with a PCI address (or a ``-vmm`` key), turns the lines of their own into
blank lines, and leaves every other line as it was (a ``-v`` detail keeps its
indentation).  A table row of several cells (``| slot | class | ... |``, ASCII and
box-drawing frames, their rules and headers) is joined back into its line by
:mod:`.tables`.  The result is read by the same form rules as a clean dump.

>>> unpaste("> **`01:00.0 0300: 10de:26b1 (rev a1)`**")
'01:00.0 0300: 10de:26b1 (rev a1)'
>>> unpaste("  12 | 01:00.0 0300: 10de:26b1 (rev a1) |"), unpaste("[...]"), unpaste("\\tSubsystem: x")
('01:00.0 0300: 10de:26b1 (rev a1)', '', '\\tSubsystem: x')
"""

from __future__ import annotations

import re

from .columns import ADDR
from .tables import untable

__all__ = ["unpaste", "group_header"]

_ANSI = re.compile(r"\x1b\[[0-9;?]{0,32}[A-Za-z]")
# one marker at a time, from the left
_LEAD = re.compile(r"^(?:[ \t]+|>|[*+\-](?=[ \t])|\*\*|`{1,3}|\|)")
_NUMBER = re.compile(r"^[0-9]{1,7}(?:[:.)\]]|[ \t]*\|)?[ \t]+")
_START = re.compile(rf"^(?:{ADDR}[ \t]|IOMMU [Gg]roup [0-9]|[A-Z][A-Za-z]{{1,15}}:\t)")
_TRAIL = " \t*`|"  # closing bold, code and table cell
# lines of the paste's own: elisions, grep separators, group headers alone on their line
_OWN = re.compile(r"^[ \t>*`|+\-]{0,16}(?:\[(?:\.\.\.|\u2026)\]|\.\.\.|\u2026|--|\**IOMMU [Gg]roup [0-9]{1,6}:?\**)"
                  r"[ \t*`|]{0,16}$")


_HEADER = re.compile(r"^[ \t>*`|]{0,16}\**IOMMU [Gg]roup ([0-9]{1,6}):?\**[ \t*`|]{0,16}$")


def group_header(line: str) -> int:
    """The group of an ``IOMMU group N`` header alone on its line (the shell loop's), or -1.

    >>> group_header("IOMMU group 17"), group_header("IOMMU group 17 41:00.0 0300: 10de:1b80")
    (17, -1)
    """
    m = _HEADER.match(line)
    return int(m.group(1)) if m else -1


def unpaste(line: str) -> str:
    """``line`` without the markup of a paste (see the module docstring)."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if _OWN.match(line):
        return ""
    if "|" in line or "+-" in line or max(line, default=" ") >= "\u2500":  # a table's row or rule
        cells = untable(line)
        if cells is not None:
            return cells
    if _START.match(line):
        return line
    s = line
    for _ in range(16):  # markers are stripped only where a device line is under them
        m = _LEAD.match(s) or _NUMBER.match(s)
        if not m or not m.end():
            break
        s = s[m.end():]
        if _OWN.match(s):  # an elision or a header, under markup or numbered by the gutter
            return ""
        if _START.match(s):
            return s.rstrip(_TRAIL)
    return line
