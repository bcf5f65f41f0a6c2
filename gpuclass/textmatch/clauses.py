"""What the words around a name do to it, within its clause (a part of a line between
commas, hard breaks ``;/|+`` and newlines; a colon does not end one).

- an absence aside (``not included``, ``ready for``, ``optional``, ``supports up to``
  ...) anywhere in the clause: the names in it are not part of the machine;
- a mining word (``mining``, ``miner``): a supported name in the clause is its chip's
  mining look-alike, not the card;
- a trap of the same chip named in the same clause (``P104-100 (GTX 1080 mining
  card)``): the trap is the product; the supported name only describes it, unless a
  conjunction (``and``, ``plus``, ``with``) stands between them.

>>> from gpuclass.textmatch import default_matcher
>>> [(x.kind, x.name) for x in default_matcher().find("2x RTX 6000 Ada (not included)")]
[]
"""

from __future__ import annotations

from collections.abc import Sequence

from .entries import ABSENT_MARK, SUPPORTED_TEXT, UNSUPPORTED_TEXT, VARIANT_MARK, Entry

__all__ = ["refine", "CONJUNCTIONS"]

CONJUNCTIONS = (" and ", " plus ", " with ", " und ", " + ")

Span = tuple[int, int, int]


def _clause(norm: str, lo: int, hi: int, start: int, end: int) -> tuple[int, int]:
    a = max(norm.rfind("|", lo, start), norm.rfind(",", lo, start))
    b1, b2 = norm.find("|", end, hi), norm.find(",", end, hi)
    b = min(b1, b2) if b1 >= 0 and b2 >= 0 else max(b1, b2)
    return (lo if a < 0 else a), (hi if b < 0 else b)


def refine(norm: str, lo: int, hi: int, names: list[Span], marks: Sequence[Span],
           entries: list[Entry], variant_of: dict[int, int]) -> list[Span]:
    """The names of one text (``norm[lo:hi]``) after the clause rules above.

    ``marks`` are the marker hits of the text (plain substrings: kept only where they
    stand as whole words).
    """
    words = [m for m in marks if norm[m[0] - 1:m[0]] == " " and norm[m[1] + 1:m[1] + 2] == " "]
    out: list[Span] = []
    for s in names:
        c_lo, c_hi = _clause(norm, lo, hi, s[0], s[1])
        inside = [m for m in words if c_lo <= m[0] and m[1] <= c_hi]
        if any(entries[m[2]].kind == ABSENT_MARK for m in inside):
            continue
        e = entries[s[2]]
        if e.kind == SUPPORTED_TEXT:
            if any(entries[m[2]].kind == VARIANT_MARK for m in inside) and s[2] in variant_of:
                out.append((s[0], s[1], variant_of[s[2]]))
                continue
            if e.chip and _described_trap(norm, s, names, entries, c_lo, c_hi):
                continue
        out.append(s)
    return out


def _described_trap(norm: str, s: Span, names: list[Span], entries: list[Entry],
                    c_lo: int, c_hi: int) -> bool:
    """A trap of the supported name's chip stands in its clause, with no conjunction between."""
    chip = entries[s[2]].chip
    for t in names:
        te = entries[t[2]]
        if te.kind != UNSUPPORTED_TEXT or te.chip != chip or not (c_lo <= t[0] and t[1] <= c_hi):
            continue
        a, b = (t[1], s[0]) if t[1] <= s[0] else (s[1], t[0])
        between = norm[a:b + 1]
        if not any(c in between for c in CONJUNCTIONS):
            return True
    return False
