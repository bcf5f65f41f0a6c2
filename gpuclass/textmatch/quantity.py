"""How many cards a mention names: the count next to the name, whatever stands between.

Listings put the count before the name (``2x``, ``2 x``, ``2 ×``, ``Dual``, ``two``,
``2 pcs``), often with a category label and brand words between (``2x GPU - Nvidia
RTX 6000 Ada``), or after it (``x2``, ``(2x)``, ``2 pcs``); the count may also stand
in its own part of the line, before or after a colon or a comma (``2 GPUs: RTX 6000
Ada``, ``RTX 6000 Ada, 2 pcs``), never across a line break or a hard separator.  A count is never guessed: a number counts only when it is
marked as one (``x``, a count noun, a count word) or stands alone at the start of
its part of the line.

The name spans ``norm[start:end + 1]`` with its spaces on either side:

>>> quantity(" 2x nvidia rtx 6000 ada ", 10, 23), quantity(" rtx 6000 ada x3 ", 0, 13)
(2, 3)
>>> quantity(" 2x gpu nvidia rtx 6000 ada ", 14, 27), quantity(" 2 gpus : rtx 6000 ada ", 8, 21)
(2, 2)
"""

from __future__ import annotations

import re

from .normalize import BRAND

__all__ = ["quantity", "MEMORY_TOKENS", "MAX_COUNT", "COUNT_WORDS", "FILLER"]

MAX_COUNT = 1024   # "4096x RTX 6000 Ada" is a typo, not a quantity

# " 96gb " / " 96 gb ": a memory size between spaces (bounded, linear: no nested repeats)
MEMORY_TOKENS = re.compile(r"(?<= )[0-9]{1,4} ?(?:gb|g|mb|tb) ")

COUNT_WORDS = {"one": 1, "single": 1, "two": 2, "dual": 2, "twin": 2, "double": 2, "three": 3,
               "triple": 3, "four": 4, "quad": 4, "five": 5, "six": 6, "eight": 8, "octa": 8}
# Nouns that make the number before them a count ("2 GPUs", "2 pcs").
COUNT_NOUNS = frozenset({"gpu", "gpus", "card", "cards", "pcs", "pc", "pieces", "piece", "units",
                         "unit", "stk", "graphics", "grafikkarte", "grafikkarten"})
# Words that may stand between a count and the name: brands, category labels, count nouns.
FILLER = frozenset(BRAND | COUNT_NOUNS | {
    "graphic", "vga", "video", "accelerator", "accelerators", "of", "pny", "asus", "msi", "gigabyte",
    "zotac", "evga", "palit", "gainward", "inno3d", "leadtek", "galax", "kfa2", "hp", "dell",
    "lenovo", "fujitsu", "supermicro", "elsa", "manli", "colorful"})
_UNITS = frozenset({"gb", "g", "mb", "tb"})
_DIGITS = "0123456789"
_WINDOW = 128  # characters looked at on either side of a name


def _number(tok: str) -> int:
    return int(tok) if tok.isdigit() and len(tok) <= 4 else 0


def _times(tok: str) -> int:
    """``2x`` -> 2, ``x2`` -> 2, else 0."""
    if len(tok) < 2 or len(tok) > 5:
        return 0
    if tok[-1] == "x":
        return _number(tok[:-1])
    if tok[0] == "x":
        return _number(tok[1:])
    return 0


def _before(toks: list[str]) -> tuple[int, bool]:
    """The count ending ``toks`` (a part of a line, left to right): (count, only filler)."""
    i = len(toks) - 1
    noun = False
    while i >= 0:  # labels, brands and memory sizes between the count and the name
        t = toks[i]
        if t in FILLER:
            noun = noun or t in COUNT_NOUNS
            i -= 1
        elif t in _UNITS and i > 0 and toks[i - 1].isdigit():
            i -= 2
        elif t[:1].isdigit() and t.lstrip(_DIGITS) in _UNITS:
            i -= 1
        else:
            break
    if i < 0:
        return 0, True
    t = toks[i]
    n = _times(t) or COUNT_WORDS.get(t, 0)
    if n:
        return n, False
    if t == "x" and i > 0:
        return _number(toks[i - 1]), False
    if noun or i == 0:
        return _number(t), False
    return 0, False


def _only_count(toks: list[str]) -> int:
    """The count of a part of a line that holds nothing else (``2 GPUs``, ``2x``, ``x 2``)."""
    core = [t for t in toks if t not in FILLER]
    noun = len(core) < len(toks) and any(t in COUNT_NOUNS for t in toks)
    if len(core) == 1:
        t = core[0]
        return _times(t) or COUNT_WORDS.get(t, 0) or (_number(t) if noun else 0)
    if len(core) == 2 and "x" in core:
        other = core[1] if core[0] == "x" else core[0]
        return _number(other)
    return 0


def _after(toks: list[str]) -> tuple[int, bool]:
    """The count starting ``toks`` (after a name, up to the end of its part): (count, only filler)."""
    i, n = 0, len(toks)
    while i < n:  # labels, brands and memory sizes (48gb, 48 gb) before the count
        t = toks[i]
        if t in FILLER:
            i += 1
        elif t[0].isdigit() and t.lstrip(_DIGITS) in _UNITS:
            i += 1
        elif t.isdigit() and i + 1 < n and toks[i + 1] in _UNITS:
            i += 2
        else:
            break
    if i == n:
        return 0, True
    t = toks[i]
    if t[0] == "x":
        if t == "x":
            return (_number(toks[i + 1]) if i + 1 < n else 0), False
        return _times(t), False
    k = _times(t)
    if k:  # "2x" after a name counts only where nothing but filler follows it
        rest = toks[i + 1:]
        return (k if all(w in FILLER for w in rest) else 0), False
    if i + 1 < n and toks[i + 1] in COUNT_NOUNS:
        return _number(t), False
    return 0, False


def _parts(text: str) -> list[str]:
    return text.replace(":", ",").split(",")


def quantity(norm: str, start: int, end: int) -> int:
    """The count of the name at ``norm[start:end + 1]`` (see the module docstring); else 1."""
    lo = start - _WINDOW if start > _WINDOW else 0
    w = norm[lo:start]
    k = max(w.rfind("\x1f"), w.rfind("|"))   # the text's start, or a hard break
    if k >= 0:
        w = w[k + 1:]
    elif lo > 0:
        w = w[w.find(" "):]  # cut mid-word
    parts = _parts(w) if ("," in w or ":" in w) else [w]
    count, only_filler = _before(parts[-1].split())
    if not count and only_filler:
        # across parts that hold only labels, to one that holds only a count
        for part in reversed(parts[:-1]):
            toks = part.split()
            if any(t not in FILLER for t in toks):
                count = _only_count(toks)
                break
    if not count:
        hi = end + _WINDOW
        w = norm[end:hi]
        a, b = w.find("\x1f"), w.find("|")
        if a >= 0 or b >= 0:
            w = w[:min(a, b) if a >= 0 and b >= 0 else max(a, b)]
        elif hi < len(norm):
            w = w[:w.rfind(" ") + 1]
        if not w.strip():
            return 1  # nothing after the name: most names stand alone at the end
        parts = _parts(w) if ("," in w or ":" in w) else [w]
        count, only_filler = _after(parts[0].split())
        if not count and only_filler:
            for part in parts[1:]:
                toks = part.split()
                if any(t not in FILLER for t in toks):
                    count = _only_count(toks)
                    break
    return count if 0 < count <= MAX_COUNT else 1
