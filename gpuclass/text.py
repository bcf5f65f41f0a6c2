"""Free-text card names (server-auction listings) through one Aho-Corasick automaton.

Text is normalized byte-wise (ASCII, lower case, punctuation to spaces, line
breaks and separators such as ``,;/()|`` to a hard break no name can span), so
``Nvidia RTX™ 4000 SFF Ada Generation`` and ``RTX4000 SFF ADA`` read alike.
The automaton holds three kinds of names, each as space-delimited tokens so a
match always covers whole tokens:

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
import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .errors import InputError

__all__ = ["Mention", "TextMatcher", "TextMatches", "default_matcher", "normalize",
           "SUPPORTED_TEXT", "UNSUPPORTED_TEXT", "AMBIGUOUS_TEXT", "KIND_NAMES"]

SUPPORTED_TEXT, UNSUPPORTED_TEXT, AMBIGUOUS_TEXT = 0, 1, 2
KIND_NAMES = ("supported", "unsupported", "ambiguous")

_RS = 0x1F          # record separator between texts of a batch (never left in a text)
_BREAK = ord("|")   # a hard break: no name spans it
# Brand words dropped from names: a listing may or may not carry them.
_BRAND = frozenset({"nvidia", "geforce"})
# Words that turn a supported name into a different (unsupported) product.
_LOOKALIKE_SUFFIXES = ("Mobile", "Laptop", "Laptop GPU", "Notebook", "Embedded",
                       "Embedded GPU", "Max-Q", "MXM", "D")
# Trailing words a listing often leaves out of a product name.
_FILLER = frozenset({"generation", "edition", "gpu"})
_MAX_COUNT = 1024   # "4096x RTX 6000 Ada" is a typo, not a quantity
_UNSPLIT_LIMIT = 7  # joined-token variants for names of up to this many tokens


def _byte_table() -> bytes:
    table = bytearray(b" " * 256)
    for c in b"abcdefghijklmnopqrstuvwxyz0123456789":
        table[c] = c
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        table[c] = c + 32
    for c in b",;|()[]{}/+&:\n\r<>=\\":
        table[c] = _BREAK
    table[_RS] = _RS
    return bytes(table)


_TABLE = _byte_table()
_SPACES = re.compile(rb"  +")
_MARKS = ("\u2122", "\u00ae", "\u00a9")  # ™ ® ©


def _normalize_bytes(text: str) -> bytes:
    """Normalize a text (or a batch joined with the record separator) into tokens."""
    if not text.isascii():
        if "\u00d7" in text:  # the multiplication sign of "2 × RTX ..."
            text = text.replace("\u00d7", " x ")
        for mark in _MARKS:  # "RTX™ 4000": a mark glued to a word, not a word break
            if mark in text:
                text = text.replace(mark, "")
    raw = text.encode("ascii", "replace").translate(_TABLE)
    if b"|" in raw:
        raw = raw.replace(b"|", b" | ")
    if b"  " in raw:  # one linear pass over runs of spaces
        raw = _SPACES.sub(b" ", raw)
    return b" " + raw.strip(b" ") + b" "


def normalize(text: str) -> str:
    """The token form the automaton scans: lower-case ASCII words between single spaces.

    >>> normalize("Nvidia RTX™ 4000 SFF-Ada (20GB)")
    ' nvidia rtx 4000 sff ada | 20gb | '
    """
    return _normalize_bytes(text.replace("\x1f", " ")).decode("ascii")


_ALNUM_SPLIT = re.compile(r"(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])")
_UNITS = frozenset({"gb", "g", "mb", "tb"})


def _words(name: str) -> list[str]:
    """A name's words as the normalizer spells them, without brand words, unless the
    name is a bare number without them (``GeForce 6800 GT`` keeps ``geforce``)."""
    words = [w for w in normalize(name).split() if w != "|"]
    bare = [w for w in words if w not in _BRAND]
    return words if bare and bare[0][0].isdigit() else bare


def _split(words: list[str]) -> list[str]:
    """Words with letter/digit runs split (``rtx4000`` -> ``rtx 4000``): the canonical tokens."""
    out: list[str] = []
    for w in words:
        out.extend(_ALNUM_SPLIT.sub(" ", w).split())
    return out


def _drop_memory(tokens: list[str]) -> list[str]:
    """Tokens without memory sizes (``48 gb``)."""
    out: list[str] = []
    for t in tokens:
        if t in _UNITS and out and out[-1].isdigit():
            out.pop()
            continue
        out.append(t)
    return out


def _variants(words: list[str], full: bool) -> Iterable[str]:
    """Spellings of a name: as written, and with letter/digit runs split or joined.

    ``full`` also tries every way of spacing or joining the canonical tokens
    (``rtx4000 sff``, ``rtx 4000sff`` ...), for names short enough; otherwise only
    the fully joined form is added (``l40`` never becomes ``l 40``).
    """
    tokens = _split(words)
    if not tokens:
        return
    yield " ".join(words)
    if full:
        yield " ".join(tokens)
    if full and len(tokens) <= _UNSPLIT_LIMIT:
        for seps in itertools.product((" ", ""), repeat=len(tokens) - 1):
            yield "".join(t + s for t, s in zip(tokens, seps)) + tokens[-1]
        return
    joined = [tokens[0]]
    for tok in tokens[1:]:
        if tok[0].isdigit() != joined[-1][-1].isdigit():
            joined[-1] += tok
        else:
            joined.append(tok)
    yield " ".join(joined)


# "[" excluded inside: otherwise "[[[[..." backtracks quadratically
_BRACKET = re.compile(r"\[([^\[\]]+)\]")
_MODEL = re.compile(r"[0-9]{3,}")


def _marketing_names(pci_name: str) -> list[str]:
    """The product names in a pci.ids device name: ``TU102GL [Quadro RTX 6000/8000]``
    -> ``Quadro RTX 6000``, ``Quadro RTX 8000``."""
    m = _BRACKET.search(pci_name)
    text = m.group(1) if m else pci_name
    out: list[str] = []
    for part in text.split(" / "):
        part = part.strip()
        pieces = part.split("/")
        first = pieces[0].strip()
        if out and not _MODEL.search(first):
            continue  # "Mobile / Max-Q 8GB": a qualifier, not another product
        if out and not _product_like(_words(first)):
            continue
        out.append(first)
        words = first.split()
        for alt in pieces[1:]:
            alt = alt.strip()
            if alt.isdigit() and words and words[-1].isdigit():
                out.append(" ".join(words[:-1] + [alt]))  # "6000/8000"
    return out


def _product_like(words: list[str]) -> bool:
    """At least two tokens besides memory sizes, one of them a model number (``1080``, ``a100``)."""
    bare = _drop_memory(_split(words))
    if len(bare) < 2:
        return False
    kept = [w for w in words if not _MEMORY_WORD.match(w)]
    return any(_MODEL.search(w) or (not w.isdigit() and not w.isalpha()) for w in kept)


_MEMORY_WORD = re.compile(r"^[0-9]+(?:gb|g|mb|tb)$")
# Series words of NVIDIA GPUs, and data-center model numbers (a100, h100, l40s, t4, gb200).
_GPU_SERIES = frozenset({"geforce", "quadro", "tesla", "titan", "rtx", "gtx", "gts", "gt", "nvs", "grid"})
_DC_MODEL = re.compile(r"^(?:[abhklmptv]|gh|gb)[0-9]{1,3}[a-z]?$")
_NOT_GPU = frozenset({"controller", "bridge", "ethernet", "smbus", "usb", "audio", "memory", "ide",
                      "sata", "lpc", "switch", "nvswitch", "network", "host", "modem", "coprocessor",
                      "pcie", "isa", "serial", "dma", "hdmi", "ufs", "mac"})


def _gpu_like(words: list[str]) -> bool:
    """A product name that names a GPU: a series word or a data-center model, nothing
    that names a chipset function (``nForce``'s USB and SMBus also carry NVIDIA IDs)."""
    if any(w in _NOT_GPU for w in words) and not any(w in _GPU_SERIES for w in words):
        return False
    return any(w in _GPU_SERIES or _DC_MODEL.match(w) for w in words)


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
        return [self._mention(j) for j in range(int(lo), int(hi))]

    def _mention(self, j: int) -> Mention:
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
        from .classify import compile_policy

        try:
            import ahocorasick
        except ImportError as exc:  # an optional extra: say which
            raise InputError("free-text matching needs pyahocorasick: "
                             "pip install 'gpuclass[audit]'") from exc
        self.compiled = compile_policy(policy)
        self.card_ids = self.compiled.card_ids
        self.card_names = tuple(c["name"] for c in self.compiled.cards)
        if db is None:
            from .db import default_database
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
                    names.extend(_marketing_names(pci))
            displays: dict[str, int] = {}
            for name in names:
                words = _words(name)
                key = " ".join(_split(words))
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
            for variant in _variants(spellings[key], full=True):
                patterns.setdefault(variant, e)
        # Traps: other NVIDIA products, from pci.ids and as look-alike suffixes.
        allowed_ids = {(v, d) for c in self.compiled.cards for v, d, sv, sd in c["match"] if sv is None}
        model_numbers = {t for key in supported for t in key.split() if _MODEL.fullmatch(t)}
        trap_heads: list[tuple[list[str], str, str, bool]] = []
        for vendor, device, name in self._gpu_names(db, allowed_ids):
            for product in _marketing_names(name):
                words = _words(product)
                toks = _split(words)
                if not _product_like(words) or not _gpu_like(words):
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
            m = next((i for i, w in enumerate(words) if _MODEL.search(w)), None)
            if m is None or m + 1 == len(words):
                continue
            head = words[:m + 1]
            key = " ".join(_split(head))
            if len(_split(head)) < 2 or key in prefixes or key in patterns:
                continue
            if key in heads:
                heads[key][2].add(dev)
                continue
            original = product.split()
            cut = next((i for i, w in enumerate(original) if _MODEL.search(w)), len(original) - 1)
            heads[key] = (head, " ".join(original[:cut + 1]), {dev}, near)
        for head, label, devs, near in heads.values():
            e = self._entry(UNSUPPORTED_TEXT, -1, label, devs.pop() if len(devs) == 1 else None)
            for variant in self._trap_variants(head, near, supported):
                patterns.setdefault(variant, e)
        for key, se in supported.items():
            base = self.entries[se]
            for suffix in _LOOKALIKE_SUFFIXES:
                words = spellings[key] + _words(suffix)
                if " ".join(_split(words)) in supported:
                    continue
                e = self._entry(UNSUPPORTED_TEXT, -1, f"{base.name} {suffix}", None)
                for variant in self._trap_variants(words, True, supported):
                    patterns.setdefault(variant, e)
        # Shortened supported names that do not say which card: ambiguous.
        for key in list(supported):
            toks = key.split()
            first_model = next((i for i, t in enumerate(toks) if _MODEL.fullmatch(t)), None)
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
                for variant in _variants(prefix, full=True):
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
        bare = _drop_memory(_split(words))
        if bare != _split(words) and len(bare) >= 2 and " ".join(bare) not in supported:
            forms.append(bare)
        for form in forms:
            for variant in _variants(form, full=full):
                if " ".join(_split(variant.split())) not in supported:
                    out.append(variant)
        return out

    @staticmethod
    def _gpu_names(db: Any, allowed: set[tuple[int, int]]) -> list[tuple[int, int, str]]:
        """Names of NVIDIA devices (and their subsystems) that are not allowlisted."""
        if db is None:
            return []
        arrays = db.arrays()
        keys = np.asarray(arrays["device_keys"]).astype(np.int64)
        rows = np.flatnonzero((keys >> 16) == 0x10DE)
        out = []
        for row, name in zip(rows.tolist(), db.names("device", rows)):
            v, d = 0x10DE, int(keys[row]) & 0xFFFF
            if name and (v, d) not in allowed:
                out.append((v, d, name))
        sub = np.asarray(arrays["subsys_keys"]).astype(np.uint64)
        srows = np.flatnonzero((sub >> np.uint64(48)) == np.uint64(0x10DE))
        for row, name in zip(srows.tolist(), db.names("subsys", srows)):
            d = int((sub[row] >> np.uint64(32)) & np.uint64(0xFFFF))
            if name and (0x10DE, d) not in allowed:
                out.append((0x10DE, d, name))
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
        raw = _normalize_bytes(big)
        seps = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == _RS)
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
        kinds, resolve, qty_before = self._kind, self._resolve, _QTY_BEFORE_END
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
                    out_count.append(_quantity(text, start, end))
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
        segment = _MEMORY_TOKENS.sub("", norm[lo:hi])
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


# " 96gb " / " 96 gb ": a memory size between spaces (bounded, linear: no nested repeats)
_MEMORY_TOKENS = re.compile(r"(?<= )[0-9]{1,4} ?(?:gb|g|mb|tb) ")
_QTY_BEFORE = re.compile(r"^([0-9]{1,4})x$")
_QTY_AFTER = re.compile(r"^x([0-9]{1,4})$")


def _first(pair):
    return pair[0]


def _length(span):
    return span[1] - span[0]


# last letters of the words that may stand between a quantity and a name ("2x NVIDIA ...")
_QTY_BEFORE_END = frozenset("x" + "".join(w[-1] for w in _BRAND))


def _quantity(norm: str, start: int, end: int) -> int:
    """``2x``/``2 x`` just before the name, or ``x2``/``x 2`` just after; else 1."""
    before_text = norm[max(0, start - 16):start]
    cut = max(before_text.rfind("|"), before_text.rfind("\x1f"))
    before = before_text[cut + 1:].split()
    while before and before[-1] in _BRAND:
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
    return count if 0 < count <= _MAX_COUNT else 1


@functools.cache
def default_matcher() -> TextMatcher:
    """The matcher of the default policy and bundled pci.ids, built once per process."""
    return TextMatcher(None)
