"""What a matcher's names are: the kinds of name, and one entry per name it reports.

Apart from :mod:`.build` (which collects the names, reading pci.ids), so that a matcher
loaded from the cache needs none of the building code.

>>> Entry(SUPPORTED_TEXT, 0, "GeForce GTX 1080", "10de:1b80").chip is None
True
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from ..lazy import NamedTuple

__all__ = ["SUPPORTED_TEXT", "UNSUPPORTED_TEXT", "AMBIGUOUS_TEXT", "EDITIONS_TEXT", "ABSENT_MARK",
           "VARIANT_MARK", "KIND_NAMES", "Entry"]

SUPPORTED_TEXT, UNSUPPORTED_TEXT, AMBIGUOUS_TEXT, EDITIONS_TEXT = 0, 1, 2, 3
ABSENT_MARK, VARIANT_MARK = 4, 5   # markers: never reported as mentions themselves
KIND_NAMES = ("supported", "unsupported", "ambiguous", "editions")


class Entry(NamedTuple):
    kind: int
    target: int          # card index (supported, editions) or -1
    name: str
    device_id: str | None
    chip: str | None = None   # the pci.ids chip ("GP104"), for look-alikes of one chip
