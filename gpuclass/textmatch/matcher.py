"""Free-text card names (server-auction listings) through Aho-Corasick automata.

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
allowlisted (:mod:`.overlaps`).  Asides in a name's clause can take it away (``not included``) or
make it a look-alike (``mining``): :mod:`.clauses`.  Quantities come from the count
next to the name, across brand words and category labels (:mod:`.quantity`);
repeated mentions add up.

pyahocorasick is imported when the first matcher is built, never at ``import
gpuclass``; the scan is linear in the text (no backtracking regex), and every step
after it is O(n log n) in the names a text holds (overlaps, clause rules, the rescan
of names that share a space: a listing of one name repeated thousands of times was
quadratic).  The
look-alike spellings are six names in seven and rare in listings: a cached matcher
scans with the automaton of the other names, and reads the whole one only for a
text that could hold a look-alike (:meth:`TextMatcher._automaton`), with the same
answers.

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
import os
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ..errors import InputError, MissingExtraError
from .clauses import refine
from .entries import (ABSENT_MARK, AMBIGUOUS_TEXT, EDITIONS_TEXT, KIND_NAMES, SUPPORTED_TEXT, UNSUPPORTED_TEXT, Entry,
                      EntryTable, WordTable)
from .matches import Mention, TextMatches
from .normalize import RS, normalize_bytes
from .overlaps import resolve
from .quantity import MEMORY_TOKENS, quantity

_SEP = chr(RS)
_ZWSP = "\u200b"  # a zero-width space: see TextMatcher._zero_width_spaces

__all__ = ["Mention", "TextMatcher", "TextMatches", "default_matcher",
           "SUPPORTED_TEXT", "UNSUPPORTED_TEXT", "AMBIGUOUS_TEXT", "EDITIONS_TEXT", "KIND_NAMES"]


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
            raise MissingExtraError("ahocorasick", "audit", "free-text matching") from exc
        self.compiled = compile_policy(policy)
        self.card_ids = self.compiled.card_ids
        self.card_names = tuple(c["name"] for c in self.compiled.cards)
        if db is None:
            from ..db import default_database
            db = default_database()
        self.entries: list[Entry] = []
        self.variant_of: dict[int, int] = {}  # supported entry -> its mining look-alike
        from .build import automaton_words, collect, gate_words, markers, overlap_free
        from .cache import automaton, gate

        patterns, lookalike = collect(self, db)   # normalized pattern -> entry
        # Markers are plain substrings (no spaces around them, so that they never take
        # the space a name next to them needs); whole words are checked after the scan.
        self._markers = markers(self.entries)
        words = automaton_words(patterns, self._markers)
        self._word = WordTable.of(words)  # a hit's value -> (its word's length less one, entry)
        self._words = [w for w, _ in words]   # what the cache keeps to build the automata again
        self._auto = automaton(ahocorasick, enumerate(self._words))
        rare = [p for p, e in patterns.items() if e in lookalike]
        self._common, self._gate, self._gate_words = self._auto, None, None
        self._common_index = range(len(words))
        if rare:
            self._common_index = [k for k, (_, e) in enumerate(words) if e not in lookalike]
            self._common = automaton(ahocorasick, ((k, self._words[k]) for k in self._common_index))
            self._gate_words = gate_words(rare)
            self._gate = gate(ahocorasick, self._gate_words)
        self.leftmost_longest = overlap_free(self.entries, patterns)
        self._heads = frozenset(p.split()[0] for p in (*patterns, *self._markers))
        self.n_patterns = len(patterns)
        self._key: str | None = None
        self._pci_ids: Any = None
        self._ready()

    def _ready(self) -> None:
        if type(self.entries) is EntryTable:  # a cached matcher's: its columns as they are
            self._kind, self._targets = self.entries.kinds, self.entries.targets
        else:
            self._kind, self._targets = [e.kind for e in self.entries], [e.target for e in self.entries]

    def _automaton(self, text: str) -> Any:
        """The automaton to scan ``text`` with.  Look-alike spellings (``RTX 4000 SFF Ada
        Mobile``, ``rtx4000sffada mobile`` ...) are most of the names and rare in listings:
        a text no look-alike can match (every spelling of one, its spaces taken out, is a
        gate word; a text without a gate word, its spaces taken out, holds none) is scanned
        with the automaton of the other names, which finds exactly the hits of the whole
        one there.  The whole automaton is read from the cache the first time a text needs it."""
        if self._auto is not None:
            return self._auto
        if next(self._gate.iter(text.replace(" ", "")), None) is None:
            return self._common
        return self._load_all()

    def _load_all(self) -> Any:
        from . import cache

        words = None
        if self._key is not None:
            words = cache.all_words(self, cache.load_state(self._key, "all"))
        if words is None:  # no file, or a damaged one: built again (what a cold cache costs)
            from ..db import default_database

            fresh = type(self)(self.compiled, default_database(self._pci_ids))
            if fresh.entries != self.entries or fresh.variant_of != self.variant_of:
                from ..errors import SourceError

                raise SourceError(str(self._pci_ids), None, "changed on disk while the matcher was in use")
            self._auto = fresh._auto
            if self._key is not None:
                cache.save_state(self._key, {"words": fresh._words}, "all")
            return self._auto
        import ahocorasick

        self._auto = cache.automaton(ahocorasick, enumerate(words))
        return self._auto

    def _scan(self, text: str) -> Any:
        """Hits ``(end, word)`` of ``text`` (``self._word[word]``: length less one, entry):
        leftmost-longest where that gives the same answer (no trap name can begin inside a
        supported name and run past its end), else every hit, overlaps resolved after (:meth:`_resolve`)."""
        auto = self._automaton(text)
        return auto.iter_long(text) if self.leftmost_longest else auto.iter(text)

    @classmethod
    def cached(cls, policy: Any = None, pci_ids: str | os.PathLike | None = None) -> "TextMatcher":
        """The matcher of ``policy`` and ``pci_ids`` (default: the database in use), loaded
        from the cache (:mod:`gpuclass.textmatch.cache`: no numpy, no database, no pickle;
        a few milliseconds, its automata built again from their words) or built and cached.

        >>> TextMatcher.cached().find("GTX 1080 Ti")[0].card
        'gtx-1080-ti'
        """
        from ..db.locate import resolve_name
        from ..policy import compile_policy
        from . import cache

        compiled = compile_policy(policy)
        path = resolve_name(pci_ids)
        try:
            key = cache.matcher_key(compiled.data, path)
        except OSError:  # the database cannot be read: building says so
            key = None
        state = None if key is None else cache.load_state(key)
        if state is not None:
            m = cls.__new__(cls)
            m.compiled = compiled
            m.card_ids = compiled.card_ids
            m.card_names = tuple(c["name"] for c in compiled.cards)
            if cache.restore(m, state):  # its values checked, its automata built from their words
                m._key, m._pci_ids = key, path
                m._ready()
                return m
        from ..db import default_database

        m = cls(compiled, default_database(path))
        m._pci_ids = path
        if key is not None:
            cache.save_state(key, {"words": m._words}, "all")
            try:
                state = cache.common_state(m)
            except ValueError:  # a name the columns cannot hold (a policy's own text): built each time
                return m
            cache.save_state(key, state)
        return m

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
        rows, found, groups = self._found(big)
        if _ZWSP in big:
            rows, found = self._zero_width_spaces(texts, rows, found, {g[0] for g in groups})
        out_rec = [r for r, f in zip(rows, found) for _ in f]
        flat = list(itertools.chain.from_iterable(found))
        if not flat:
            return TextMatches(self, n, [], [], [], [], [], [])
        out_entry, out_count, out_text = (list(c) for c in zip(*flat))
        kinds, targets = self._kind, self._targets
        kind = [kinds[e] for e in out_entry]
        card = [targets[e] if k in (SUPPORTED_TEXT, EDITIONS_TEXT) else -1 for e, k in zip(out_entry, kind)]
        return TextMatches(self, n, out_rec, kind, card, out_count, out_entry, out_text)

    def _zero_width_spaces(self, texts: Sequence[str], rows: list[int], found: list[list[tuple[int, int, str]]],
                           read: set[int]) -> tuple[list[int], list[list[Any]]]:
        """A text with a zero-width space (U+200B) in which, as read (the space dropped, as
        every format character is: ``G\u200bTX 1080`` is ``GTX 1080``), the automaton finds
        nothing it knows (no name, not even one an aside takes away, and no aside's words)
        is read again with each one a space, as a line break it marks
        (``NVIDIA\u200bRTX\u200b6000`` copied from a web page is ``NVIDIA RTX 6000``): what
        that reading names is the text's.  A text in which anything was found keeps its
        reading: a space there could break a name into another (``RTX 4000 Ada S\u200bFF``)
        or an aside into words (``1080 Ti (not i\u200bncluded)``).  ``rows``, ``found``:
        the texts' mentions as read, in text order; ``read``: the texts in which the
        automaton found something."""
        again = [i for i, t in enumerate(texts) if i not in read and _ZWSP in t]
        if not again:
            return rows, found
        more_rows, more, _ = self._found(" \x1f ".join(texts[i].replace(_ZWSP, " ").replace("\x1f", " ")
                                                        for i in again))
        if not more_rows:
            return rows, found
        kept = sorted([*zip(rows, found), *((again[r], f) for r, f in zip(more_rows, more))], key=lambda rf: rf[0])
        return [r for r, _ in kept], [f for _, f in kept]

    def _found(self, big: str) -> tuple[list[int], list[list[tuple[int, int, str]]], list[list[int]]]:
        """The texts of ``big`` (joined by the record separator) that name something, by
        their place, and their mentions ``(entry, count, words)``, in text order; and the
        automaton's hits grouped by text, ``[text, first hit, after its last]``, for every
        text in which it found something (its mentions may be none: an aside takes a name
        away, or stands alone)."""
        norm = normalize_bytes(big).decode("ascii")
        hits = list(self._scan(norm))
        if not hits:
            return [], [], []
        # the hits of each text: a text's index counts the separators before its hits
        sep = _SEP
        groups = []  # (text, first hit, after its last hit)
        r, at, cur = 0, 0, -1
        for k, (e, _) in enumerate(hits):
            r += norm.count(sep, at, e)
            at = e
            if r != cur:
                groups.append([r, k, k + 1])
                cur = r
            else:
                groups[-1][2] = k + 1
        # Listings repeat the same lines over and over: each distinct text is resolved
        # once per batch (its mentions depend on its own words only).
        memo: dict[str, list[tuple[int, int, str]]] = {}
        get, mentions = memo.get, self._mentions
        kinds, heads, plain, word = self._kind, self._heads, self.leftmost_longest, self._word
        rows: list[int] = []
        found: list[list[tuple[int, int, str]]] = []
        for r, a, b in groups:
            e0 = hits[a][0]
            lo = max(norm.rfind(sep, 0, e0), 0)
            hi = norm.find(sep, e0)
            hi = len(norm) if hi < 0 else hi
            key = norm[lo:hi]
            done = get(key)
            if done is None:
                if b - a == 1 and plain:
                    # the common case: one plain name, nothing after it that could begin another
                    e, k = hits[a]
                    ln, ent = word[k]
                    if kinds[ent] <= UNSUPPORTED_TEXT and norm[e + 1:norm.find(" ", e + 1)] not in heads:
                        done = memo[key] = [(ent, quantity(norm, e - ln, e), norm[e - ln + 1:e])]
                        rows.append(r)
                        found.append(done)
                        continue
                done = memo[key] = mentions(norm, lo, hi, self._spans(hits[a:b]))
            if done:
                rows.append(r)
                found.append(done)
        return rows, found, groups

    def _spans(self, hits: Any) -> list[tuple[int, int, int]]:
        """``(start, end, entry)`` of automaton hits ``(end, word index)``."""
        word = self._word
        return [(e - word[k][0], e, word[k][1]) for e, k in hits]

    def _mentions(self, norm: str, lo: int, hi: int,
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
                found, text = self._without_memory(norm, lo, min(hi + 1, len(norm)), found)
                break
        return [(ent, quantity(text, start, end), text[start + 1:end]) for start, end, ent in found]

    def _adjacent(self, norm: str, lo: int, hi: int) -> list[tuple[int, int, int]]:
        """Leftmost-longest hits of ``norm[lo:hi]`` where a name may start at the space that
        ends the one before it (one scan of the batch shares no character between hits).

        The automaton converts the whole string it is given on every call, so each hit is
        looked for in a window from where the last one ended (a call over the rest of the
        text made a listing of thousands of names quadratic).  A hit stands when it ends more
        than the longest word before the window's end: the automaton decides on a hit within
        that many characters after it, so it read nothing the whole text would not have
        given it; else the window doubles."""
        out = []
        text = norm[lo:hi]
        longest = self._longest_word()
        pos, end, scan, kinds = 0, len(text), self._automaton(text).iter_long, self._kind
        base = width = max(256, 4 * longest)
        while pos < end:
            stop = min(pos + width, end)
            hit = next(scan(text[pos:stop]), None)
            if stop < end and (hit is None or hit[0] + longest >= stop - pos):
                width *= 2  # the window may have cut a hit short, or ended before one
                continue
            if hit is None:
                break
            e, k = hit
            e += pos
            ln, ent = self._word[k]
            out.append((lo + e - ln, lo + e, ent))
            pos = e if kinds[ent] < ABSENT_MARK else e + 1
            width = base  # each hit costs the text up to it, not the widest window yet
        return out

    def _longest_word(self) -> int:
        """The length of the automata's longest word."""
        n = self.__dict__.get("_longest")
        if n is None:
            n = self._longest = max(self._word.lengths, default=0) + 1
        return n

    def _without_memory(self, norm: str, lo: int, hi: int,
                        found: list[tuple[int, int, int]]) -> tuple[list[tuple[int, int, int]], str]:
        """Rescan one text (``norm[lo:hi]``) with memory sizes taken out (``RTX PRO 6000
        Blackwell 96GB Server Edition``); kept only when that resolves what was ambiguous."""
        segment = MEMORY_TOKENS.sub("", norm[lo:hi])
        spans = self._spans(self._scan(segment))
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
        return resolve(spans, self._kind)


def _first(pair):
    return pair[0]


@functools.cache
def default_matcher() -> TextMatcher:
    """The matcher of the default policy and the database in use, once per process (from
    the cache where it holds one: :meth:`TextMatcher.cached`)."""
    return TextMatcher.cached(None)
