"""Which of one text's name matches stand where they overlap (see
:mod:`gpuclass.textmatch.matcher`): a match inside another goes, a supported name that
overlaps any other kind of name goes, and of overlapping other names the longest stands.

>>> resolve([(0, 9, 0), (0, 12, 0)], [0])  # GTX 1080 inside GTX 1080 Ti
[(0, 12, 0)]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from .entries import SUPPORTED_TEXT

__all__ = ["resolve"]


def resolve(spans: list[tuple[int, int, int]], kinds: Sequence[int]) -> list[tuple[int, int, int]]:
    """The matches ``(start, end, entry)`` of one text that stand, in text order: a match
    inside another goes (of equal ones the first stays), then a supported name that overlaps
    any other kind of name goes, and of overlapping other names only the longest (then the
    first) stays.  ``kinds[entry]`` is an entry's kind.

    O(n log n) in the matches (a listing can hold thousands: it was quadratic): after the
    first step no match holds another, so ordered by start their ends rise too, and the
    matches that overlap one form a window around it that only moves right.

    >>> resolve([(0, 9, 0), (0, 12, 1), (12, 20, 2)], [0, 0, 1])  # GTX 1080 in GTX 1080 Ti; a trap after
    [(0, 12, 1), (12, 20, 2)]
    >>> resolve([(0, 12, 1), (9, 20, 2)], [0, 0, 1])  # a supported name overlapping a trap goes
    [(9, 20, 2)]
    """
    if len(spans) <= 1:
        return spans
    # Fast path: one match holds all the others (GTX 1080 inside GTX 1080 Ti).
    longest = max(spans, key=_length)
    lo, hi = longest[0], longest[1]
    if all(lo <= s[0] and s[1] <= hi for s in spans):
        return [longest]
    # A match inside another goes: by start, the longest first (a stable sort: of equal
    # matches the first stays); one that ends no later than a match before it lies inside it.
    kept: list[tuple[int, int, int]] = []
    reach = -1
    for s in sorted(spans, key=_start_longest):
        if s[1] > reach:
            kept.append(s)
            reach = s[1]
    n = len(kept)
    if n == 1:
        return kept
    trap = [kinds[k[2]] != SUPPORTED_TEXT for k in kept]
    before = [0] * (n + 1)  # traps among kept[:i]
    for i, t in enumerate(trap):
        before[i + 1] = before[i] + t
    out = []
    left = right = 0        # the window of matches overlapping kept[i]: kept[left:right]
    best: deque[int] = deque()  # the window's traps by falling (length, -start): a monotonic queue
    for i, k in enumerate(kept):
        while kept[left][1] <= k[0]:
            left += 1
        while right < n and kept[right][0] < k[1]:
            if trap[right]:
                r = kept[right]
                key = (r[1] - r[0], -r[0])
                while best and (kept[best[-1]][1] - kept[best[-1]][0], -kept[best[-1]][0]) < key:
                    best.pop()
                best.append(right)
            right += 1
        while best and best[0] < left:
            best.popleft()
        if not trap[i]:
            if before[right] - before[left] == 0:
                out.append(k)  # touches no trap
        elif best[0] == i:
            out.append(k)  # of overlapping traps, the longest (then first) stands
    return out


def _start_longest(span):
    return span[0], -span[1]


def _length(span):
    return span[1] - span[0]
