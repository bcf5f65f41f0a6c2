"""How many cards a mention names: ``2x``, ``2 x``, ``2 ×`` or ``x2`` next to the name.

The name spans ``norm[start:end + 1]`` with its spaces on either side:

>>> quantity(" 2x nvidia rtx 6000 ada ", 10, 23), quantity(" rtx 6000 ada x3 ", 0, 13)
(2, 3)
"""

from __future__ import annotations

import re

from .normalize import BRAND

__all__ = ["quantity", "MEMORY_TOKENS", "QTY_BEFORE_END", "MAX_COUNT"]

MAX_COUNT = 1024   # "4096x RTX 6000 Ada" is a typo, not a quantity

# " 96gb " / " 96 gb ": a memory size between spaces (bounded, linear: no nested repeats)
MEMORY_TOKENS = re.compile(r"(?<= )[0-9]{1,4} ?(?:gb|g|mb|tb) ")
_QTY_BEFORE = re.compile(r"^([0-9]{1,4})x$")
_QTY_AFTER = re.compile(r"^x([0-9]{1,4})$")


# last letters of the words that may stand between a quantity and a name ("2x NVIDIA ...")
QTY_BEFORE_END = frozenset("x" + "".join(w[-1] for w in BRAND))


def quantity(norm: str, start: int, end: int) -> int:
    """``2x``/``2 x`` just before the name, or ``x2``/``x 2`` just after; else 1."""
    before_text = norm[max(0, start - 16):start]
    cut = max(before_text.rfind("|"), before_text.rfind("\x1f"))
    before = before_text[cut + 1:].split()
    while before and before[-1] in BRAND:
        before.pop()
    count = 0
    if before:
        m = _QTY_BEFORE.match(before[-1])
        if m:
            count = int(m.group(1))
        elif before[-1] == "x" and len(before) > 1 and before[-2].isdigit() and len(before[-2]) <= 4:
            count = int(before[-2])
    if not count:
        after_text = norm[end:end + 16]
        cuts = [c for c in (after_text.find("|"), after_text.find("\x1f")) if c >= 0]
        after = (after_text[:min(cuts)] if cuts else after_text).split()
        if after:
            m = _QTY_AFTER.match(after[0])
            if m:
                count = int(m.group(1))
            elif after[0] == "x" and len(after) > 1 and after[1].isdigit() and len(after[1]) <= 4:
                count = int(after[1])
    return count if 0 < count <= MAX_COUNT else 1


