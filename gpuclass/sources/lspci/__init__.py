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

One module per text form (:mod:`.mm`, :mod:`.vmm`, :mod:`.n`) and one writer
(:mod:`.write`, the other direction); :mod:`.columns` holds what they share.
"""

from __future__ import annotations

import os

from ...devices import DeviceTable
from ...errors import SourceError
from ...inputs import input_name, read_input
from .columns import ADDR_ONLY
from .mm import parse_lspci_mm
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
    """Any understood lspci output (``fmt`` ``"mm"``, ``"vmm"``, ``"n"`` or detected).

    >>> len(parse_lspci("00:00.0 0600: 8086:0d57\\n00:01.0 ffff: 1af4:1045 (rev 01)\\n"))
    2
    """
    fmt = fmt or detect_format(text)
    if fmt not in _FORMATS:
        raise SourceError(source, None, f"unknown lspci format {fmt!r} (expected mm, vmm or n)")
    return _FORMATS[fmt](text, source)


def read_lspci(path: str | os.PathLike, fmt: str | None = None) -> DeviceTable:
    """Parse an lspci dump file (``-``: standard input); an unreadable file, or one that
    is not a regular file or is larger than ``LIMITS["lspci"]``, is a :class:`SourceError`."""
    text = read_input(path, "lspci").decode("utf-8", errors="replace")
    return parse_lspci(text, fmt, source=input_name(path))
