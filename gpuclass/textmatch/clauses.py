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

from bisect import bisect_left
from collections.abc import Sequence

from .entries import ABSENT_MARK, SUPPORTED_TEXT, UNSUPPORTED_TEXT, VARIANT_MARK, Entry

__all__ = ["refine", "CONJUNCTIONS"]

CONJUNCTIONS = (" and ", " plus ", " with ", " und ", " + ")

Span = tuple[int, int, int]


def refine(norm: str, lo: int, hi: int, names: list[Span], marks: Sequence[Span],
           entries: list[Entry], variant_of: dict[int, int]) -> list[Span]:
    """The names of one text (``norm[lo:hi]``) after the clause rules above.

    ``names`` as :func:`~gpuclass.textmatch.matcher.resolve` leaves them: in text order,
    none inside another, no supported one overlapping another name.  ``marks`` are the
    marker hits of the text (plain substrings: kept only where they stand as whole words).
    O(n log n) in the names and marks (a listing can hold thousands of each: every name
    looked at every mark and every trap, which was quadratic): clause ends, marks and each
    chip's traps are looked up by bisection.
    """
    seps = _separators(norm, lo, hi)
    words = [m for m in marks if norm[m[0] - 1:m[0]] == " " and norm[m[1] + 1:m[1] + 2] == " "]
    absent = _Marks([m for m in words if entries[m[2]].kind == ABSENT_MARK])
    variant = _Marks([m for m in words if entries[m[2]].kind == VARIANT_MARK])
    traps: dict[str, list[Span]] = {}   # chip -> its traps among the names, in text order
    for t in names:
        te = entries[t[2]]
        if te.kind == UNSUPPORTED_TEXT and te.chip is not None:
            traps.setdefault(te.chip, []).append(t)
    starts = {chip: [t[0] for t in ts] for chip, ts in traps.items()}
    out: list[Span] = []
    for s in names:
        c_lo, c_hi = _clause(seps, lo, hi, s[0], s[1])
        if absent.any_inside(c_lo, c_hi):
            continue
        e = entries[s[2]]
        if e.kind == SUPPORTED_TEXT:
            if s[2] in variant_of and variant.any_inside(c_lo, c_hi):
                out.append((s[0], s[1], variant_of[s[2]]))
                continue
            if e.chip and e.chip in traps and _described_trap(norm, s, traps[e.chip], starts[e.chip], c_lo, c_hi):
                continue
        out.append(s)
    return out


def _separators(norm: str, lo: int, hi: int) -> list[int]:
    """Where the clauses of ``norm[lo:hi]`` end (``|`` and ``,``), in order."""
    out = []
    for ch in "|,":
        at = norm.find(ch, lo, hi)
        while at >= 0:
            out.append(at)
            at = norm.find(ch, at + 1, hi)
    out.sort()
    return out


def _clause(seps: list[int], lo: int, hi: int, start: int, end: int) -> tuple[int, int]:
    """The clause of the name at ``start:end``: from the last separator before it (or ``lo``)
    to the first one from its end on (or ``hi``)."""
    i = bisect_left(seps, start)
    j = bisect_left(seps, end)
    return (seps[i - 1] if i else lo), (seps[j] if j < len(seps) else hi)


class _Marks:
    """Marker hits, asked whether one lies inside a clause: by start, with the least end
    from each on."""

    __slots__ = ("starts", "least_end")

    def __init__(self, marks: list[Span]) -> None:
        marks = sorted(marks)
        self.starts = [m[0] for m in marks]
        self.least_end = [m[1] for m in marks]
        for i in range(len(marks) - 2, -1, -1):
            if self.least_end[i + 1] < self.least_end[i]:
                self.least_end[i] = self.least_end[i + 1]

    def any_inside(self, c_lo: int, c_hi: int) -> bool:
        i = bisect_left(self.starts, c_lo)
        return i < len(self.starts) and self.least_end[i] <= c_hi


def _described_trap(norm: str, s: Span, traps: list[Span], starts: list[int], c_lo: int, c_hi: int) -> bool:
    """A trap of the supported name's chip (``traps``, in text order) stands in its clause,
    with no conjunction between.  Only the nearest one on each side needs a look: the text
    between the name and a farther trap holds the text between it and the nearer one."""
    i = bisect_left(starts, s[1])      # the traps after the name begin from here
    if i < len(traps):
        t = traps[i]
        if t[1] <= c_hi and not _joined(norm[s[1]:t[0] + 1]):
            return True
    if i:
        t = traps[i - 1]               # the nearest before it (none overlaps it)
        if c_lo <= t[0] and not _joined(norm[t[1]:s[0] + 1]):
            return True
    return False


def _joined(between: str) -> bool:
    return any(c in between for c in CONJUNCTIONS)
