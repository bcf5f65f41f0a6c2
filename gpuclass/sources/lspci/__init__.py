"""lspci output, as collected from machines and rescue systems, into a DeviceTable.

Understood formats:

- ``lspci -nnmm`` / ``-nnmm -D`` / ``-nmm``: one quoted line per device;
- ``lspci -vmm -nn [-D] [-k]``: ``Key:<TAB>value`` blocks separated by blank lines;
- ``lspci -n`` / ``-nn`` with optional ``-v`` / ``-k`` / ``-vvv`` detail lines
  (``Subsystem:``, ``Kernel driver in use:``, ``NUMA node:``, ``IOMMU group:``, the
  SR-IOV capability), also with the indentation lost in pasting, ``(rev a1)`` with
  or without the space before it, and lines prefixed ``IOMMU Group N``.

A clean dump is read by its form's parser (:func:`detect_format`, from the first
line); anything else is decided line by line (:mod:`.dump`): lines that are not
lspci output (a tool's warning, a shell prompt) become flagged rows without an
address and never discard the lines after them.  The same address twice is flagged
and counted once; virtual functions are flagged ``FLAG_VF`` (:func:`.dump.finish`),
so ``classify`` never counts them as cards.

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

One module per text form (:mod:`.mm`, :mod:`.vmm`, :mod:`.n`) and one writer
(:mod:`.write`, the other direction); :mod:`.columns` holds what they share.
"""

from __future__ import annotations

import os

from ...devices import DeviceTable
from ...errors import InputError, SourceError
from ...inputs import input_name, read_input
from .columns import ADDR_ONLY
from .dump import finish, parse_dump
from .mm import parse_lspci_mm
from .notlspci import check_lspci
from .n import parse_lspci_n
from .vmm import parse_lspci_vmm
from .write import LSPCI_FORMATS, write_lspci

__all__ = ["parse_lspci", "parse_lspci_mm", "parse_lspci_vmm", "parse_lspci_n", "read_lspci",
           "detect_format", "write_lspci", "LSPCI_FORMATS"]

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
        m = ADDR_ONLY.match(s)
        if m and s[m.end():].lstrip().startswith('"'):
            return "mm"
        return "n"
    return "mm"


def parse_lspci(text: str, fmt: str | None = None, source: str = "lspci") -> DeviceTable:
    """Any understood lspci output (``fmt`` ``"mm"``, ``"vmm"``, ``"n"``, or decided per line).

    Text that looks like the path of a file instead of its contents (one line, no
    lspci output, an existing file) is an :class:`~gpuclass.errors.InputError`; text
    with no line in any form read here (empty, JSON, a hex dump, a tree) is a
    :class:`~gpuclass.errors.NotLspciOutput` naming what it looks like.

    >>> len(parse_lspci("00:00.0 0600: 8086:0d57\\n00:01.0 ffff: 1af4:1045 (rev 01)\\n"))
    2
    """
    if not isinstance(text, str):
        raise InputError(f"parse_lspci: expected lspci output as text, got {type(text).__name__}")
    if fmt is not None:
        if fmt not in _FORMATS:
            raise SourceError(source, None, f"unknown lspci format {fmt!r} (expected mm, vmm or n)")
        table = _FORMATS[fmt](text, source)
    else:
        table = _FORMATS[detect_format(text)](text, source)
        if table.invalid_mask().any():  # some line is not of that form: decide line by line
            table = parse_dump(text, source)
    _not_a_path(text, table)
    check_lspci(text, table)
    return finish(table)


def _not_a_path(text: str, table: DeviceTable) -> None:
    one = text.strip()
    if not one or "\n" in one or len(one) > 4096 or (~table.invalid_mask()).any():
        return
    try:
        is_file = os.path.isfile(one)
    except (OSError, ValueError):
        return
    if is_file:
        raise InputError(f"parse_lspci: {one!r} is the path of a file, not lspci output: "
                         "pass the file's contents, or call read_lspci(path)")


def read_lspci(path: str | os.PathLike, fmt: str | None = None) -> DeviceTable:
    """Parse an lspci dump file (``-``: standard input); an unreadable file, or one that
    is not a regular file or is larger than ``LIMITS["lspci"]``, is a :class:`SourceError`."""
    text = read_input(path, "lspci").decode("utf-8", errors="replace")
    return parse_lspci(text, fmt, source=input_name(path))
