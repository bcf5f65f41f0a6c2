"""Free-text card names (server-auction listings) through one Aho-Corasick automaton.

Text is normalized (:mod:`.normalize`) into space-separated tokens.  The
automaton holds the names :mod:`.build` collects, each as space-delimited tokens so
a match always covers whole tokens:

- **supported**: the policy's card names and aliases, the pci.ids names of
  allowlisted devices, and reordered or shortened forms that still name one card;
- **unsupported**: pci.ids names of other NVIDIA GPUs (the traps: ``GTX 1080
  Mobile``, ``Quadro RTX 6000``, ``RTX PRO 6000D``, ``P104-100`` ...) plus
  look-alike suffixes of supported names (``... Mobile``, ``... Laptop GPU``);
- **ambiguous**: a shortened supported name that does not say which card it is
  (``RTX 6000`` could be the Quadro or the Ada card);
- **editions**: a shortened name that fits only allowlisted cards of equal slices
  (``RTX PRO 6000 Blackwell``): counted, and reported as not saying which.

Brand words (``NVIDIA``, ``GeForce``) are dropped from the names, so they may
or may not appear in the text.  Where matches overlap, a name contained in a
longer one yields to it (``GTX 1080`` inside ``GTX 1080 Ti``), and a supported
name that overlaps any unsupported one is dropped: text never makes a trap look
allowlisted.  Asides in a name's clause can take it away (``not included``) or
make it a look-alike (``mining``): :mod:`.clauses`.  Quantities come from the count
next to the name, across brand words and category labels (:mod:`.quantity`);
repeated mentions add up.

pyahocorasick is imported when the first matcher is built, never at ``import
gpuclass``; the whole scan is linear in the text (no backtracking regex).

>>> m = default_matcher()
>>> [(x.kind, x.card, x.count) for x in m.find("2x NVIDIA RTX 6000 Ada Generation 48 GB")]
[('supported', 'rtx-6000-ada', 2)]
>>> [(x.kind, x.name) for x in m.find("GPU - Nvidia GeForce GTX 1080 Ti")]
[('supported', 'GeForce GTX 1080 Ti')]
>>> [(x.kind, x.name) for x in m.find("Quadro RTX 6000")]
[('unsupported', 'Quadro RTX 6000')]
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..errors import InputError
from .build import (
    ABSENT_MARK,
    AMBIGUOUS_TEXT,
    EDITIONS_TEXT,
    KIND_NAMES,
    SUPPORTED_TEXT,
    UNSUPPORTED_TEXT,
    Entry,
    collect,
    markers,
    overlap_free,
)
from .clauses import refine
from .normalize import RS, normalize_bytes
from .quantity import MEMORY_TOKENS, quantity

__all__ = ["Mention", "TextMatcher", "TextMatches", "default_matcher",
           "SUPPORTED_TEXT", "UNSUPPORTED_TEXT", "AMBIGUOUS_TEXT", "EDITIONS_TEXT", "KIND_NAMES"]


class Mention(NamedTuple):
    """One card named in a text.

    ``kind`` is ``supported``, ``unsupported``, ``ambiguous`` or ``editions``;
    ``card`` the policy's card id (supported; for editions the card it is counted
    as); ``name`` what the text names;
    ``device_id`` the ``vendor:device`` of that product where pci.ids knows it;
    ``count`` the quantity; ``text`` the matched words (normalized).
    """

    kind: str
    card: str | None
    name: str
    count: int
    text: str
    device_id: str | None = None


class TextMatches:
    """Matches of a batch, as arrays over the accepted mentions (text order).

    ``record`` (int64) is the index of the text, ``kind`` (uint8), ``card``
    (int16, -1 unless supported), ``count`` (int32), ``entry`` (int32) an index
    into the matcher's name table.
    """

    __slots__ = ("matcher", "n_texts", "record", "kind", "card", "count", "entry", "text")

    def __init__(self, matcher: "TextMatcher", n_texts: int, record, kind, card, count, entry,
                 text: list[str]) -> None:
        self.matcher = matcher
        self.n_texts = n_texts
        self.record = np.asarray(record, dtype=np.int64)
        self.kind = np.asarray(kind, dtype=np.uint8)
        self.card = np.asarray(card, dtype=np.int16)
        self.count = np.asarray(count, dtype=np.int32)
        self.entry = np.asarray(entry, dtype=np.int32)
        self.text = text

    def __len__(self) -> int:
        return int(self.record.shape[0])

    def supported_cards(self) -> np.ndarray:
        """Supported cards named per text (int64, length ``n_texts``)."""
        sel = self.card >= 0
        return np.bincount(self.record[sel], weights=self.count[sel],
                           minlength=self.n_texts).astype(np.int64)

    def unsupported_gpus(self) -> np.ndarray:
        """Unsupported GPUs named per text (int64, length ``n_texts``)."""
        sel = self.kind == UNSUPPORTED_TEXT
        return np.bincount(self.record[sel], weights=self.count[sel],
                           minlength=self.n_texts).astype(np.int64)

    def mentions(self, i: int) -> list[Mention]:
        """The mentions of text ``i`` as :class:`Mention` tuples."""
        lo, hi = np.searchsorted(self.record, [i, i + 1])
        return [self.mention(j) for j in range(int(lo), int(hi))]

    def mention(self, j: int) -> Mention:
        """Match ``j`` as a :class:`Mention`."""
        e = self.matcher.entries[int(self.entry[j])]
        card = self.matcher.card_ids[e.target] if e.kind in (SUPPORTED_TEXT, EDITIONS_TEXT) else None
        return Mention(KIND_NAMES[e.kind], card, e.name, int(self.count[j]), self.text[j], e.device_id)


class TextMatcher:
    """Finds card names in free text for one policy (see the module docstring).

    >>> m = TextMatcher()
    >>> [x.card for x in m.find("RTX4000 SFF ADA")]
    ['rtx-4000-sff-ada']
    >>> m.find("RTX 4000 Ada Generation")[0].kind
    'unsupported'
    """

    def __init__(self, policy: Any = None, db: Any = None) -> None:
        from ..policy import compile_policy

        try:
            import ahocorasick
        except ImportError as exc:  # an optional extra: say which
            raise InputError("free-text matching needs pyahocorasick: "
                             "pip install 'gpuclass[audit]'") from exc
        self.compiled = compile_policy(policy)
        self.card_ids = self.compiled.card_ids
        self.card_names = tuple(c["name"] for c in self.compiled.cards)
        if db is None:
            from ..db import default_database
            db = default_database()
        self.entries: list[Entry] = []
        self.variant_of: dict[int, int] = {}  # supported entry -> its mining look-alike
        patterns = collect(self, db)   # normalized pattern -> entry
        auto = ahocorasick.Automaton()
        for pattern, entry in patterns.items():
            key = f" {pattern} "
            # the value carries what a hit needs: its length (for the start) and its name
            auto.add_word(key, (len(key) - 1, entry))
        # Markers are plain substrings (no spaces around them, so that they never take
        # the space a name next to them needs); whole words are checked after the scan.
        self._markers = markers(self.entries)
        for phrase, entry in self._markers.items():
            auto.add_word(phrase, (len(phrase) - 1, entry))
        auto.make_automaton()
        self._kind = [e.kind for e in self.entries]
        self.leftmost_longest = overlap_free(self.entries, patterns)
        self._heads = frozenset(p.split()[0] for p in (*patterns, *self._markers))
        # Leftmost-longest scanning (fewer hits, no overlap resolution) gives the same
        # answer whenever no trap name can begin inside a supported name and run past
        # its end; otherwise every overlapping hit is resolved (see _resolve).
        self._scan = auto.iter_long if self.leftmost_longest else auto.iter
        self._auto = auto
        self.n_patterns = len(patterns)

    # -- matching -----------------------------------------------------------------

    def find(self, text: str) -> list[Mention]:
        """The cards one text names, in text order.

        >>> [(x.name, x.count) for x in default_matcher().find("RTX 6000 Ada x2")]
        [('RTX 6000 Ada', 2)]
        """
        return self.find_many([text]).mentions(0)

    def find_many(self, texts: Sequence[str]) -> TextMatches:
        """Match many texts in one pass (the batch is joined, normalized and scanned once).

        >>> r = default_matcher().find_many(["GTX 1080", "Intel Xeon", "2 × GTX 1080 Max-Q"])
        >>> r.supported_cards().tolist(), r.unsupported_gpus().tolist()
        ([1, 0, 0], [0, 0, 2])
        """
        if isinstance(texts, str):
            raise InputError("find_many: expected a sequence of texts, not one string")
        try:
            big = " \x1f ".join(texts)
        except TypeError:  # None or numbers among the texts (a CSV cell, a JSON value)
            texts = [t if isinstance(t, str) else ("" if t is None else str(t)) for t in texts]
            big = " \x1f ".join(texts)
        n = len(texts)
        if big.count("\x1f") != max(n - 1, 0):  # a text carries the separator itself
            big = " \x1f ".join(t.replace("\x1f", " ") for t in texts)
        raw = normalize_bytes(big)
        seps = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == RS)
        norm = raw.decode("ascii")
        hits = list(self._scan(norm))
        if not hits:
            return TextMatches(self, n, [], [], [], [], [], [])
        ends = np.fromiter((h[0] for h in hits), dtype=np.int64, count=len(hits))
        recs = np.searchsorted(seps, ends)
        first = np.flatnonzero(np.r_[True, recs[1:] != recs[:-1]])
        stop = np.append(first[1:], len(hits))
        grec = recs[first]
        padded = np.concatenate(([0], seps, [len(norm)]))
        # Listings repeat the same lines over and over: each distinct text is resolved
        # once per batch (its mentions depend on its own words only).
        memo: dict[str, list[tuple[int, int, str]]] = {}
        get, mentions = memo.get, self._mentions
        kinds, heads, plain = self._kind, self._heads, self.leftmost_longest
        rows: list[int] = []
        found: list[list[tuple[int, int, str]]] = []
        for r, a, b, lo, hi in zip(grec.tolist(), first.tolist(), stop.tolist(),
                                   padded[grec].tolist(), padded[grec + 1].tolist()):
            key = norm[lo:hi]
            done = get(key)
            if done is None:
                if b - a == 1 and plain:
                    # the common case: one plain name, nothing after it that could begin another
                    e, (ln, ent) = hits[a]
                    if kinds[ent] <= UNSUPPORTED_TEXT and norm[e + 1:norm.find(" ", e + 1)] not in heads:
                        done = memo[key] = [(ent, quantity(norm, e - ln, e), norm[e - ln + 1:e])]
                        rows.append(r)
                        found.append(done)
                        continue
                done = memo[key] = mentions(norm, lo, hi, seps, r,
                                            [(e - ln, e, ent) for e, (ln, ent) in hits[a:b]])
            if done:
                rows.append(r)
                found.append(done)
        flat = list(itertools.chain.from_iterable(found))
        if not flat:
            return TextMatches(self, n, [], [], [], [], [], [])
        out_rec = np.repeat(np.asarray(rows, dtype=np.int64), list(map(len, found)))
        out_entry, out_count, out_text = (list(c) for c in zip(*flat))
        entry = np.asarray(out_entry, dtype=np.int32)
        kind = np.asarray(self._kind, dtype=np.uint8)[entry]
        target = np.asarray([e.target for e in self.entries], dtype=np.int16)[entry]
        card = np.where((kind == SUPPORTED_TEXT) | (kind == EDITIONS_TEXT), target, -1)
        return TextMatches(self, n, out_rec, kind, card, out_count, entry, out_text)

    def _mentions(self, norm: str, lo: int, hi: int, seps: np.ndarray, r: int,
                  spans: list[tuple[int, int, int]]) -> list[tuple[int, int, str]]:
        """(entry, count, words) of the names one text's hits stand for."""
        kinds = self._kind
        if self.leftmost_longest:
            # one scan shares no character between hits: where the word after a name may
            # begin another name, the text is scanned again name by name
            heads = self._heads
            for s in spans:
                e = s[1]
                if kinds[s[2]] < ABSENT_MARK and norm[e + 1:norm.find(" ", e + 1)] in heads:
                    spans = self._adjacent(norm, lo, hi)
                    break
        if len(spans) == 1:
            if kinds[spans[0][2]] >= ABSENT_MARK:
                return []
            found = spans
        else:
            marks = [s for s in spans if kinds[s[2]] >= ABSENT_MARK]
            if marks:
                spans = [s for s in spans if kinds[s[2]] < ABSENT_MARK]
            found = self._resolve(spans) if len(spans) > 1 else spans
            if found and (marks or len({kinds[f[2]] for f in found}) > 1):
                found = refine(norm, lo, hi, found, marks, self.entries, self.variant_of)
        text = norm
        for f in found:
            if kinds[f[2]] in (AMBIGUOUS_TEXT, EDITIONS_TEXT):
                found, text = self._without_memory(norm, seps, r, found)
                break
        return [(ent, quantity(text, start, end), text[start + 1:end]) for start, end, ent in found]

    def _adjacent(self, norm: str, lo: int, hi: int) -> list[tuple[int, int, int]]:
        """Leftmost-longest hits of ``norm[lo:hi]`` where a name may start at the space that
        ends the one before it (one scan of the batch shares no character between hits)."""
        out = []
        text = norm[lo:hi]  # the automaton reads its whole argument: give it the text only
        pos, end, scan, kinds = 0, len(text), self._auto.iter_long, self._kind
        while pos < end:
            hit = next(scan(text, pos, end), None)
            if hit is None:
                break
            e, (ln, ent) = hit
            out.append((lo + e - ln, lo + e, ent))
            pos = e if kinds[ent] < ABSENT_MARK else e + 1
        return out

    def _without_memory(self, norm: str, seps: np.ndarray, r: int,
                        found: list[tuple[int, int, int]]) -> tuple[list[tuple[int, int, int]], str]:
        """Rescan one text with memory sizes taken out (``RTX PRO 6000 Blackwell 96GB Server
        Edition``); kept only when that resolves what was ambiguous."""
        lo = int(seps[r - 1]) if r > 0 else 0
        hi = int(seps[r]) + 1 if r < len(seps) else len(norm)
        segment = MEMORY_TOKENS.sub("", norm[lo:hi])
        spans = [(e - ln, e, ent) for e, (ln, ent) in self._scan(segment)]
        marks = [s for s in spans if self._kind[s[2]] >= ABSENT_MARK]
        spans = [s for s in spans if self._kind[s[2]] < ABSENT_MARK]
        again = self._resolve(spans) if spans else []
        if again:
            again = refine(segment, 0, len(segment), again, marks, self.entries, self.variant_of)
        vague = (AMBIGUOUS_TEXT, EDITIONS_TEXT)
        before = sum(self.entries[f[2]].kind in vague for f in found)
        after = sum(self.entries[f[2]].kind in vague for f in again)
        if after < before:
            return again, segment
        return found, norm

    def _resolve(self, spans: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """Keep the most specific matches of one text (see the module docstring)."""
        if len(spans) == 1:
            return spans
        # Fast path: one match holds all the others (GTX 1080 inside GTX 1080 Ti).
        longest = max(spans, key=_length)
        lo, hi = longest[0], longest[1]
        if all(lo <= s[0] and s[1] <= hi for s in spans):
            return [longest]
        # Longest first; a match inside a kept one is less specific and goes.
        spans.sort(key=lambda s: (s[0] - s[1], s[0]))
        kept: list[tuple[int, int, int]] = []
        for s in spans:
            if any(k[0] <= s[0] and s[1] <= k[1] for k in kept):
                continue
            kept.append(s)
        entries = self.entries
        if len(kept) > 1:
            traps = [k for k in kept if entries[k[2]].kind != SUPPORTED_TEXT]
            out = []
            for k in kept:
                overlaps = [t for t in (traps if entries[k[2]].kind == SUPPORTED_TEXT else kept)
                            if t is not k and max(t[0], k[0]) < min(t[1], k[1])]
                if not overlaps:
                    out.append(k)
                elif entries[k[2]].kind == SUPPORTED_TEXT:
                    continue  # touches a trap: never call it allowlisted
                elif all((t[1] - t[0], -t[0]) < (k[1] - k[0], -k[0]) for t in overlaps
                         if entries[t[2]].kind != SUPPORTED_TEXT):
                    out.append(k)  # of overlapping traps, the longest (then first) stands
            kept = out
        kept.sort()
        return kept


def _first(pair):
    return pair[0]


def _length(span):
    return span[1] - span[0]


@functools.cache
def default_matcher() -> TextMatcher:
    """The matcher of the default policy and bundled pci.ids, built once per process."""
    return TextMatcher(None)
