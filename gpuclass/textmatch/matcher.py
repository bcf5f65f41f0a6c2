"""Free-text card names (server-auction listings) through one Aho-Corasick automaton.

Text is normalized (:mod:`.normalize`) into space-separated tokens.  The
automaton holds three kinds of names, each as space-delimited tokens so a match
always covers whole tokens:

- **supported**: the policy's card names and aliases, plus the pci.ids names of
  allowlisted devices;
- **unsupported**: pci.ids names of other NVIDIA GPUs (the traps: ``GTX 1080
  Mobile``, ``Quadro RTX 6000``, ``RTX PRO 6000D``, ``RTX A6000`` ...) plus
  look-alike suffixes of supported names (``... Mobile``, ``... Laptop GPU``);
- **ambiguous**: a shortened supported name that does not say which card it is
  (``RTX 6000`` could be the Quadro or the Ada card).

Brand words (``NVIDIA``, ``GeForce``) are dropped from the names, so they may
or may not appear in the text.  Where matches overlap, a name contained in a
longer one yields to it (``GTX 1080`` inside ``GTX 1080 Ti``), and a supported
name that overlaps any unsupported one is dropped: text never makes a trap look
allowlisted.  Quantities come from ``2x``, ``2 x``, ``2 ×`` or ``x2`` next to
the name; repeated mentions add up.

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
from .names import MODEL, gpu_like, marketing_names, product_like
from .normalize import RS, drop_memory, name_words, normalize_bytes, split_tokens, variants
from .quantity import MEMORY_TOKENS, QTY_BEFORE_END, quantity

__all__ = ["Mention", "TextMatcher", "TextMatches", "default_matcher",
           "SUPPORTED_TEXT", "UNSUPPORTED_TEXT", "AMBIGUOUS_TEXT", "KIND_NAMES"]

SUPPORTED_TEXT, UNSUPPORTED_TEXT, AMBIGUOUS_TEXT = 0, 1, 2
KIND_NAMES = ("supported", "unsupported", "ambiguous")
# Words that turn a supported name into a different (unsupported) product.
_LOOKALIKE_SUFFIXES = ("Mobile", "Laptop", "Laptop GPU", "Notebook", "Embedded",
                       "Embedded GPU", "Max-Q", "MXM", "D")
# Trailing words a listing often leaves out of a product name.
_FILLER = frozenset({"generation", "edition", "gpu"})


class Mention(NamedTuple):
    """One card named in a text.

    ``kind`` is ``supported``, ``unsupported`` or ``ambiguous``; ``card`` the
    policy's card id (supported only); ``name`` what the text names;
    ``device_id`` the ``vendor:device`` of that product where pci.ids knows it;
    ``count`` the quantity; ``text`` the matched words (normalized).
    """

    kind: str
    card: str | None
    name: str
    count: int
    text: str
    device_id: str | None = None


class _Entry(NamedTuple):
    kind: int
    target: int          # card index (supported) or -1
    name: str
    device_id: str | None


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
        sel = self.kind == SUPPORTED_TEXT
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
        card = self.matcher.card_ids[e.target] if e.kind == SUPPORTED_TEXT else None
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
        self.entries: list[_Entry] = []
        patterns: dict[str, int] = {}   # normalized pattern -> entry
        self._collect(db, patterns)
        auto = ahocorasick.Automaton()
        for pattern, entry in patterns.items():
            key = f" {pattern} "
            # the value carries what a hit needs: its length (for the start) and its name
            auto.add_word(key, (len(key) - 1, entry))
        auto.make_automaton()
        self._kind = [e.kind for e in self.entries]
        self.leftmost_longest = self._overlap_free(patterns)
        # Leftmost-longest scanning (fewer hits, no overlap resolution) gives the same
        # answer whenever no trap name can begin inside a supported name and run past
        # its end; otherwise every overlapping hit is resolved (see _resolve).
        self._scan = auto.iter_long if self.leftmost_longest else auto.iter
        self._auto = auto
        self.n_patterns = len(patterns)

    # -- building -----------------------------------------------------------------

    def _entry(self, kind: int, target: int, name: str, device_id: str | None) -> int:
        self.entries.append(_Entry(kind, target, name, device_id))
        return len(self.entries) - 1

    def _collect(self, db: Any, patterns: dict[str, int]) -> None:
        supported: dict[str, int] = {}   # canonical tokens -> entry
        spellings: dict[str, list[str]] = {}  # canonical tokens -> words as written
        for ci, card in enumerate(self.compiled.cards):
            own = [card["name"], *card["aliases"]]
            names = list(own)
            ids = []
            for v, d, sv, sd in card["match"]:
                if sv is None:
                    ids.append(f"{v:04x}:{d:04x}")
                    pci = db.device_name(v, d) if db is not None else None
                else:
                    pci = db.subsystem_name(v, d, sv, sd) if db is not None else None
                if pci:
                    names.extend(marketing_names(pci))
            displays: dict[str, int] = {}
            for name in names:
                words = name_words(name)
                key = " ".join(split_tokens(words))
                if not words or key in supported:
                    continue
                display = name if name in own else card["name"]
                e = displays.get(display)
                if e is None:
                    e = displays[display] = self._entry(SUPPORTED_TEXT, ci, display,
                                                        ids[0] if len(ids) == 1 else None)
                supported[key] = e
                spellings[key] = words
        for key, e in supported.items():
            for variant in variants(spellings[key], full=True):
                patterns.setdefault(variant, e)
        # Traps: other NVIDIA products, from pci.ids and as look-alike suffixes.
        allowed_ids = {(v, d) for c in self.compiled.cards for v, d, sv, sd in c["match"] if sv is None}
        model_numbers = {t for key in supported for t in key.split() if MODEL.fullmatch(t)}
        trap_heads: list[tuple[list[str], str, str, bool]] = []
        for vendor, device, name in self._gpu_names(db, allowed_ids):
            for product in marketing_names(name):
                words = name_words(product)
                toks = split_tokens(words)
                if not product_like(words) or not gpu_like(words):
                    continue  # "480GB": a fragment; "MCP51 Ethernet Controller": not a GPU
                if " ".join(toks) in supported:
                    continue  # text cannot tell them apart; the allowlisted name stands
                near = bool(model_numbers.intersection(toks))
                dev = f"{vendor:04x}:{device:04x}"
                e = self._entry(UNSUPPORTED_TEXT, -1, product, dev)
                forms = [words]
                short = list(words)
                while len(short) > 2 and short[-1] in _FILLER:
                    short.pop()
                if short != words:
                    forms.append(short)
                for form in forms:
                    for variant in self._trap_variants(form, near, supported):
                        patterns.setdefault(variant, e)
                trap_heads.append((words, product, dev, near))
        # "RTX PRO 6000D" alone: a trap's name up to its model number, unless that
        # could still begin a supported name (then it is ambiguous, below).
        prefixes = {" ".join(k.split()[:i]) for k in supported for i in range(1, len(k.split()) + 1)}
        heads: dict[str, tuple[list[str], str, set[str], bool]] = {}
        for words, product, dev, near in trap_heads:
            m = next((i for i, w in enumerate(words) if MODEL.search(w)), None)
            if m is None or m + 1 == len(words):
                continue
            head = words[:m + 1]
            key = " ".join(split_tokens(head))
            if len(split_tokens(head)) < 2 or key in prefixes or key in patterns:
                continue
            if key in heads:
                heads[key][2].add(dev)
                continue
            original = product.split()
            cut = next((i for i, w in enumerate(original) if MODEL.search(w)), len(original) - 1)
            heads[key] = (head, " ".join(original[:cut + 1]), {dev}, near)
        for head, label, devs, near in heads.values():
            e = self._entry(UNSUPPORTED_TEXT, -1, label, devs.pop() if len(devs) == 1 else None)
            for variant in self._trap_variants(head, near, supported):
                patterns.setdefault(variant, e)
        for key, se in supported.items():
            base = self.entries[se]
            for suffix in _LOOKALIKE_SUFFIXES:
                words = spellings[key] + name_words(suffix)
                if " ".join(split_tokens(words)) in supported:
                    continue
                e = self._entry(UNSUPPORTED_TEXT, -1, f"{base.name} {suffix}", None)
                for variant in self._trap_variants(words, True, supported):
                    patterns.setdefault(variant, e)
        # Shortened supported names that do not say which card: ambiguous.
        for key in list(supported):
            toks = key.split()
            first_model = next((i for i, t in enumerate(toks) if MODEL.fullmatch(t)), None)
            if first_model is None:
                continue
            for end in range(first_model + 1, len(toks)):
                prefix = toks[:end]
                short = " ".join(prefix)
                if short in supported or short in patterns:
                    continue
                cands = sorted({self.card_names[self.entries[e].target] for k, e in supported.items()
                                if k.split()[:end] == prefix})
                label = " ".join(t.upper() if len(t) <= 3 else t.title() for t in prefix)
                e = self._entry(AMBIGUOUS_TEXT, -1,
                                f"{label} (could be {' or '.join(cands)} or another card)", None)
                for variant in variants(prefix, full=True):
                    patterns.setdefault(variant, e)

    def _overlap_free(self, patterns: dict[str, int]) -> bool:
        """True when no non-supported name starts inside a supported one and ends past it."""
        heads: set[tuple[str, ...]] = set()
        for pattern, e in patterns.items():
            if self.entries[e].kind != SUPPORTED_TEXT:
                toks = tuple(pattern.split())
                heads.update(toks[:k] for k in range(1, len(toks)))
        for pattern, e in patterns.items():
            if self.entries[e].kind == SUPPORTED_TEXT:
                toks = tuple(pattern.split())
                if any(toks[k:] in heads for k in range(1, len(toks))):
                    return False
        return True

    @staticmethod
    def _trap_variants(words: list[str], full: bool, supported: dict[str, int]) -> list[str]:
        out = []
        forms = [words]
        bare = drop_memory(split_tokens(words))
        if bare != split_tokens(words) and len(bare) >= 2 and " ".join(bare) not in supported:
            forms.append(bare)
        for form in forms:
            for variant in variants(form, full=full):
                if " ".join(split_tokens(variant.split())) not in supported:
                    out.append(variant)
        return out

    def _gpu_names(self, db: Any, allowed: set[tuple[int, int]]) -> list[tuple[int, int, str]]:
        """Names of the policy's GPU vendors' devices (and their subsystems) not allowlisted."""
        if db is None:
            return []
        vendors = np.array(self.compiled.gpu_vendors, dtype=np.int64)
        arrays = db.arrays()
        keys = np.asarray(arrays["device_keys"]).astype(np.int64)
        rows = np.flatnonzero(np.isin(keys >> 16, vendors))
        out = []
        for row, name in zip(rows.tolist(), db.names("device", rows)):
            v, d = int(keys[row]) >> 16, int(keys[row]) & 0xFFFF
            if name and (v, d) not in allowed:
                out.append((v, d, name))
        sub = np.asarray(arrays["subsys_keys"]).astype(np.uint64)
        srows = np.flatnonzero(np.isin((sub >> np.uint64(48)).astype(np.int64), vendors))
        for row, name in zip(srows.tolist(), db.names("subsys", srows)):
            v = int(sub[row] >> np.uint64(48))
            d = int((sub[row] >> np.uint64(32)) & np.uint64(0xFFFF))
            if name and (v, d) not in allowed:
                out.append((v, d, name))
        return out

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
        recs = np.searchsorted(seps, ends).tolist()
        out_rec: list[int] = []
        out_entry: list[int] = []
        out_count: list[int] = []
        out_text: list[str] = []
        kinds, resolve, qty_before = self._kind, self._resolve, QTY_BEFORE_END
        for r, group in itertools.groupby(zip(recs, hits), key=_first):
            spans = [(e - ln, e, ent) for _, (e, (ln, ent)) in group]
            found = resolve(spans) if len(spans) > 1 else spans
            text = norm
            for f in found:
                if kinds[f[2]] == AMBIGUOUS_TEXT:
                    found, text = self._without_memory(norm, seps, r, found)
                    break
            for start, end, ent in found:
                out_rec.append(r)
                out_entry.append(ent)
                c = text[start - 1]
                if c in qty_before or text[end + 1:end + 2] == "x":
                    out_count.append(quantity(text, start, end))
                else:  # most names stand alone: no quantity word next to them
                    out_count.append(1)
                out_text.append(text[start + 1:end])
        entry = np.asarray(out_entry, dtype=np.int32)
        kind = np.asarray(kinds, dtype=np.uint8)[entry]
        target = np.asarray([e.target for e in self.entries], dtype=np.int16)[entry]
        card = np.where(kind == SUPPORTED_TEXT, target, -1)
        return TextMatches(self, n, out_rec, kind, card, out_count, entry, out_text)

    def _without_memory(self, norm: str, seps: np.ndarray, r: int,
                        found: list[tuple[int, int, int]]) -> tuple[list[tuple[int, int, int]], str]:
        """Rescan one text with memory sizes taken out (``RTX PRO 6000 Blackwell 96GB Server
        Edition``); kept only when that resolves what was ambiguous."""
        lo = int(seps[r - 1]) if r > 0 else 0
        hi = int(seps[r]) + 1 if r < len(seps) else len(norm)
        segment = MEMORY_TOKENS.sub("", norm[lo:hi])
        spans = [(e - ln, e, ent) for e, (ln, ent) in self._scan(segment)]
        again = self._resolve(spans) if spans else []
        before = sum(self.entries[f[2]].kind == AMBIGUOUS_TEXT for f in found)
        after = sum(self.entries[f[2]].kind == AMBIGUOUS_TEXT for f in again)
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
