"""The names a :class:`~gpuclass.textmatch.TextMatcher` looks for, and what each one means.

Four kinds of names go into the automaton, each spelled as space-delimited tokens:

- **supported**: the policy's card names and aliases, the pci.ids names of allowlisted
  devices, and the same names reordered or shortened where they still name exactly one
  allowlisted card (``RTX 4000 Ada SFF``, ``RTX PRO 6000 Max-Q``, ``Small Form Factor``,
  ``GeForce 1080 Ti``, ``NVIDIA 1080Ti``: a brand word for the series word);
- **unsupported**: pci.ids names of other GPUs of the policy's vendors (the traps, shortened
  as the supported names are: ``GeForce 1080 Mobile``) and
  look-alike suffixes of supported names (``... Mobile``, ``... Laptop GPU``, ``... Mining``);
- **ambiguous**: a shortened name that could be an allowlisted card or another one;
- **editions**: a shortened name that fits several allowlisted cards, all giving the
  same slices, and nothing else (``RTX PRO 6000 Blackwell``).

Besides names, *markers* are words that change what a name in their clause means: an
aside saying the card is absent (``not included``, ``ready for``, ``optional`` ...)
or a mining look-alike.  They are matched as plain substrings and checked for word
boundaries after the scan (:mod:`.clauses`).

>>> sorted(reorders(["rtx", "4000", "sff", "ada"], {"ada"}))[:4]
['rtx 4000 ada sff', 'rtx 4000 ada small form factor', 'rtx 4000 sff', 'rtx 4000 small form factor']
"""

from __future__ import annotations

import itertools

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from .entries import (
    ABSENT_MARK,
    AMBIGUOUS_TEXT,
    EDITIONS_TEXT,
    KIND_NAMES,
    SUPPORTED_TEXT,
    UNSUPPORTED_TEXT,
    VARIANT_MARK,
    Entry,
)
from ..pcinames import unsupported_label
from .names import MODEL, gpu_like, marketing_names, product_like, series_forms
from .normalize import drop_memory, name_words, split_tokens, variants

__all__ = ["SUPPORTED_TEXT", "UNSUPPORTED_TEXT", "AMBIGUOUS_TEXT", "EDITIONS_TEXT", "ABSENT_MARK",
           "VARIANT_MARK", "KIND_NAMES", "Entry", "collect", "overlap_free", "reorders",
           "ABSENT_PHRASES", "VARIANT_WORDS", "automaton_words", "gate_words"]


# Words that turn a supported name into a different (unsupported) product.
_LOOKALIKE_SUFFIXES = ("Mobile", "Laptop", "Laptop GPU", "Notebook", "Embedded", "Embedded GPU",
                       "Max-Q", "MaxQ", "MXM", "D", "Mining", "Mining Edition")
# Trailing words a listing often leaves out of a product name.
_FILLER = frozenset({"generation", "edition", "gpu"})
# Series words a listing may leave off a trap's name ("RTX 6000" for the Quadro RTX 6000).
_SERIES = frozenset({"quadro", "tesla", "titan", "geforce", "nvidia"})
# Spellings of the same edition word: every one is tried where a name has one of them.
_SYNONYMS = (("sff",), ("small", "form", "factor")), (("max", "q"), ("maxq",))
# An aside that says the card named in its clause is not part of the machine.
ABSENT_PHRASES = ("not included", "not incl", "not installed", "excluded", "excl", "without",
                  "optional", "optionally", "option", "options", "ready for", "prepared for",
                  "fits", "fit for", "supports", "supports up to", "support for", "supported up to",
                  "up to", "upgradeable", "upgradable", "upgradeable to", "upgradable to",
                  "upgrade to", "upgrade option", "can be upgraded", "on request", "sold separately",
                  "add on", "addon", "compatible with", "room for", "space for", "slot for")
# A card named next to these is a mining look-alike of its chip, not the card.
VARIANT_WORDS = ("mining", "miner", "mining edition")
# How a derived spelling was made (:meth:`_Builder.derived_forms`), the most telling first.
_REORDERED, _BRANDED, _BARE = 0, 1, 2


def _units(words: list[str]) -> list[tuple[str, ...]]:
    """Words grouped into edition units (``max q``, ``small form factor``), fillers
    (``edition``) glued to the word before them."""
    out: list[tuple[str, ...]] = []
    i = 0
    while i < len(words):
        for syn in _SYNONYMS:
            hit = next((s for s in syn if tuple(words[i:i + len(s)]) == s), None)
            if hit:
                out.append(hit)
                i += len(hit)
                break
        else:
            if words[i] in _FILLER and out:
                out[-1] = out[-1] + (words[i],)
            else:
                out.append((words[i],))
            i += 1
    return out


def _spell(unit: tuple[str, ...]) -> list[tuple[str, ...]]:
    for syn in _SYNONYMS:
        core = tuple(w for w in unit if w not in _FILLER)
        rest = unit[len(core):]
        if core in syn:
            return [s + rest for s in syn]
    return [unit]


def reorders(words: list[str], family: set[str]) -> set[str]:
    """Other spellings of a name that still name it: the words after the model number in
    any order, with or without trailing fillers, without the family word (``ada``) where
    an edition word is left, and with every synonym of an edition word."""
    split = split_tokens(words)
    first = next((i for i, t in enumerate(split) if MODEL.fullmatch(t)), None)
    if first is None:
        return set()
    head, tail = split[:first + 1], _units(split[first + 1:])
    if len(tail) > 4:
        return set()
    out: set[str] = set()
    bare = [tuple(w for w in u if w not in _FILLER) or u for u in tail]
    for units in (tail, bare):
        for spelled in itertools.product(*(_spell(u) for u in units)):
            for perm in itertools.permutations(spelled):
                out.add(" ".join(head + [w for u in perm for w in u]))
                kept = [u for u in perm if not set(u) & family]
                if kept and len(kept) < len(perm):
                    out.add(" ".join(head + [w for u in kept for w in u]))
    out.discard(" ".join(split))
    return out


class _Builder:
    def __init__(self, matcher: Any, db: Any) -> None:
        self.m = matcher
        self.db = db
        self.entries: list[Entry] = matcher.entries
        self.patterns: dict[str, int] = {}
        self.supported: dict[str, int] = {}        # canonical tokens -> entry
        self.spellings: dict[str, list[str]] = {}  # canonical tokens -> words as written
        self.traps: dict[str, int] = {}            # canonical tokens -> entry (pci.ids names)
        self.lookalike: set[int] = set()           # entries of look-alike suffixes

    def entry(self, kind: int, target: int, name: str, device_id: str | None,
              chip: str | None = None) -> int:
        label = None
        if kind == UNSUPPORTED_TEXT:  # named as every report names an unsupported GPU
            ids = None if device_id is None else [int(x, 16) for x in device_id.split(":")]
            label = unsupported_label(self.db, *ids, name) if ids else unsupported_label(None, None, None, name)
        self.entries.append(Entry(kind, target, name, device_id, chip, label))
        return len(self.entries) - 1

    def chip(self, vendor: int, device: int) -> str | None:
        name = self.db.device_name(vendor, device) if self.db is not None else None
        if not name:
            return None
        return name.split(" [", 1)[0].strip() or None

    def run(self) -> dict[str, int]:
        self.supported_names()
        self.original = list(self.supported)
        self.shortenings = self.derived_forms()
        self.pci_traps()
        self.derived()
        self.lookalikes()
        self.shortened()
        return self.patterns

    def supported_names(self) -> None:
        for ci, card in enumerate(self.m.compiled.cards):
            own = [card["name"], *card["aliases"]]
            names = list(own)
            ids, chip = [], None
            for v, d, sv, sd in card["match"]:
                if sv is None:
                    ids.append(f"{v:04x}:{d:04x}")
                    pci = self.db.device_name(v, d) if self.db is not None else None
                    chip = chip or self.chip(v, d)
                else:
                    pci = self.db.subsystem_name(v, d, sv, sd) if self.db is not None else None
                if pci:
                    names.extend(marketing_names(pci))
            displays: dict[str, int] = {}
            for name in names:
                words = name_words(name)
                key = " ".join(split_tokens(words))
                if not words or key in self.supported:
                    continue
                display = name if name in own else card["name"]
                e = displays.get(display)
                if e is None:
                    e = displays[display] = self.entry(SUPPORTED_TEXT, ci, display,
                                                       ids[0] if len(ids) == 1 else None, chip)
                self.supported[key] = e
                self.spellings[key] = words
        for key, e in self.supported.items():
            for variant in variants(self.spellings[key], full=True):
                self.patterns.setdefault(variant, e)

    def pci_traps(self) -> None:
        compiled = self.m.compiled
        allowed_ids = {(v, d) for c in compiled.cards for v, d, sv, sd in c["match"] if sv is None}
        model_numbers = {t for key in self.supported for t in key.split() if MODEL.fullmatch(t)}
        trap_heads: list[tuple[list[str], str, str, bool, str | None]] = []
        for vendor, device, name in _gpu_names(compiled, self.db, allowed_ids):
            for product in marketing_names(name):
                words = name_words(product)
                toks = split_tokens(words)
                if not product_like(words) or not gpu_like(words):
                    continue  # "480GB": a fragment; "MCP51 Ethernet Controller": not a GPU
                key = " ".join(toks)
                if key in self.supported:
                    continue  # text cannot tell them apart; the allowlisted name stands
                near = bool(model_numbers.intersection(toks))
                dev = f"{vendor:04x}:{device:04x}"
                chip = self.chip(vendor, device)
                e = self.entry(UNSUPPORTED_TEXT, -1, product, dev, chip)
                self.traps.setdefault(key, e)
                forms = [words]
                short = list(words)
                while len(short) > 2 and short[-1] in _FILLER:
                    short.pop()
                if short != words:
                    forms.append(short)
                    self.traps.setdefault(" ".join(split_tokens(short)), e)
                for form in list(forms):  # "GeForce 1080 Mobile", "1080 Ti 10GB": as a listing shortens them
                    for alt in series_forms(form):
                        alt_key = " ".join(alt)
                        if alt_key not in self.supported:
                            forms.append(alt)
                            self.traps.setdefault(alt_key, e)
                for form in forms:
                    for variant in self.trap_variants(form, near):
                        self.patterns.setdefault(variant, e)
                trap_heads.append((words, product, dev, near, chip))
        # "RTX PRO 6000D" alone: a trap's name up to its model number, unless that
        # could still begin a supported name (then it is ambiguous, below).
        prefixes = {" ".join(k.split()[:i]) for k in self.supported for i in range(1, len(k.split()) + 1)}
        heads: dict[str, tuple[list[str], str, set[str], bool, str | None]] = {}
        for words, product, dev, near, chip in trap_heads:
            m = next((i for i, w in enumerate(words) if MODEL.search(w)), None)
            if m is None or m + 1 == len(words):
                continue
            head = words[:m + 1]
            key = " ".join(split_tokens(head))
            if len(split_tokens(head)) < 2 or key in prefixes or key in self.patterns:
                continue
            if key in heads:
                heads[key][2].add(dev)
                continue
            original = product.split()
            cut = next((i for i, w in enumerate(original) if MODEL.search(w)), len(original) - 1)
            heads[key] = (head, " ".join(original[:cut + 1]), {dev}, near, chip)
        for key, (head, label, devs, near, chip) in heads.items():
            e = self.entry(UNSUPPORTED_TEXT, -1, label, devs.pop() if len(devs) == 1 else None, chip)
            self.traps.setdefault(key, e)
            for variant in self.trap_variants(head, near):
                self.patterns.setdefault(variant, e)

    def derived_forms(self) -> dict[str, tuple[set[int], int]]:
        """Reordered and shortened spellings of the supported names -> (the entries they
        spell, how): the words after the model number reordered (:func:`reorders`:
        ``_REORDERED``), the series word replaced by a brand word (``_BRANDED``:
        :func:`~.names.series_forms`) or left out (``_BARE``).  Made before the traps, so that
        a trap's shortened form never takes a card's (``GeForce GTX 1080 Ti 10GB`` without its
        memory size is the card)."""
        cards = self.m.compiled.cards
        owners: dict[str, tuple[set[int], int]] = {}
        for key, e in self.supported.items():
            ci = self.entries[e].target
            family = set(str(cards[ci].get("family") or "").replace("-", " ").split())
            forms = reorders(self.spellings[key], family)
            for form in forms:
                owners.setdefault(form, (set(), _REORDERED))[0].add(e)
            for base in (self.spellings[key], *(f.split() for f in forms)):
                branded = {" ".join(w) for w in series_forms(base, bare=False)}
                for alt in series_forms(base):
                    form = " ".join(alt)
                    es, how = owners.get(form, (set(), _BARE))
                    es.add(e)
                    owners[form] = (es, min(how, _BRANDED if form in branded else _BARE))
        return owners

    def derived(self) -> None:
        """Reordered and shortened spellings that name exactly one card (and no trap); those
        with a brand word for the series word in every spacing (``GeForce 1080Ti``).  A bare
        model number and word (``1080 Ti``) is not counted: any word may stand before it
        (``MGTX 1080 Ti``); it only keeps a trap from taking the card's name."""
        for form, (es, how) in self.shortenings.items():
            targets = {self.entries[e].target for e in es}
            if how == _BARE or len(targets) != 1 or form in self.supported or form in self.traps:
                continue
            e = min(es)
            self.supported[form] = e
            self.spellings[form] = form.split()
            for variant in variants(form.split(), full=how == _BRANDED):
                self.patterns.setdefault(variant, e)
            if how == _REORDERED:
                for variant in head_spacings(form.split()):
                    self.patterns.setdefault(variant, e)

    def lookalikes(self) -> None:
        for key, se in list(self.supported.items()):
            base = self.entries[se]
            for suffix in _LOOKALIKE_SUFFIXES:
                words = self.spellings[key] + name_words(suffix)
                if " ".join(split_tokens(words)) in self.supported:
                    continue
                e = self.entry(UNSUPPORTED_TEXT, -1, f"{base.name} {suffix}", None, base.chip)
                self.lookalike.add(e)
                if suffix == "Mining":
                    self.m.variant_of.setdefault(se, e)
                # every spacing, and (a long name has only some) the glued heads a card has
                for variant in (*self.trap_variants(words, True), *head_spacings(split_tokens(words))):
                    self.patterns.setdefault(variant, e)

    def shortened(self) -> None:
        """Shortened supported names that do not say which card: ambiguous, or, where only
        allowlisted cards of equal slices fit, editions."""
        cards = self.m.compiled.cards
        trap_keys = set(self.traps)
        trap_keys |= {" ".join(k.split()[1:]) for k in self.traps if k.split()[0] in _SERIES}
        for key in self.original:
            toks = key.split()
            first_model = next((i for i, t in enumerate(toks) if MODEL.fullmatch(t)), None)
            if first_model is None:
                continue
            for end in range(first_model + 1, len(toks)):
                prefix = toks[:end]
                short = " ".join(prefix)
                if short in self.supported or short in self.patterns:
                    continue
                cands = sorted({self.entries[e].target for k, e in self.supported.items()
                                if k.split()[:end] == prefix})
                names = [cards[c]["name"] for c in cands]
                label = " ".join(t.upper() if len(t) <= 3 else t.title() for t in prefix)
                others = any(k == short or k.startswith(short + " ") for k in trap_keys)
                if len(cands) > 1 and not others and len({cards[c]["slices"] for c in cands}) == 1:
                    e = self.entry(EDITIONS_TEXT, cands[0],
                                   f"{label} (one of {', '.join(names)}: "
                                   f"{cards[cands[0]]['slices']} slices each)", None)
                else:
                    e = self.entry(AMBIGUOUS_TEXT, -1,
                                   f"{label} (could be {' or '.join(names)} or another card)", None)
                for variant in variants(prefix, full=True):
                    self.patterns.setdefault(variant, e)

    def trap_variants(self, words: list[str], full: bool) -> list[str]:
        out = []
        forms = [words]
        bare = drop_memory(split_tokens(words))
        if bare != split_tokens(words) and len(bare) >= 2 and not self.a_card(" ".join(bare)):
            forms.append(bare)
        for form in forms:
            for variant in variants(form, full=full):
                if not self.a_card(" ".join(split_tokens(variant.split()))):
                    out.append(variant)
        return out

    def a_card(self, key: str) -> bool:
        """Whether canonical tokens ``key`` spell a supported name, or one shortened without
        its series word (counted or bare) that names one card."""
        if key in self.supported:
            return True
        derived = self.shortenings.get(key)
        return (derived is not None and derived[1] != _REORDERED
                and len({self.entries[e].target for e in derived[0]}) == 1)


def head_spacings(tokens: list[str]) -> list[str]:
    """A name's tokens with those up to its model number in every spacing and the rest as
    they are (``rtx4000 small form factor``): how a listing glues a reordered name.

    >>> head_spacings(["rtx", "4000", "ada", "sff"])
    ['rtx 4000 ada sff', 'rtx4000 ada sff']
    """
    first = next((i for i, t in enumerate(tokens) if MODEL.fullmatch(t)), None)
    if first is None:
        return []
    head, tail = tokens[:first + 1], tokens[first + 1:]
    return [" ".join(["".join(t + s for t, s in zip(head, seps)) + head[-1], *tail])
            for seps in itertools.product((" ", ""), repeat=len(head) - 1)]


def collect(matcher: Any, db: Any) -> tuple[dict[str, int], set[int]]:
    """Fill ``matcher.entries``; return the name patterns (normalized text -> entry) and
    the entries of look-alike suffixes (``RTX 4000 SFF Ada Mobile``: most of the patterns,
    every spacing of every supported name with every suffix, and rare in listings)."""
    builder = _Builder(matcher, db)
    return builder.run(), builder.lookalike


def automaton_words(patterns: dict[str, int], marks: dict[str, int]) -> list[tuple[str, int]]:
    """The words of a matcher's automata ``(word, entry)``, each name pattern between
    spaces (a hit covers whole tokens), then the marker substrings: a hit's value is its
    word's index here."""
    return [(f" {pattern} ", entry) for pattern, entry in patterns.items()] + list(marks.items())


def gate_words(rare: list[str]) -> list[str]:
    """The words that tell a text may hold one of the ``rare`` names: each name without
    its spaces (a text holding the name holds it too, once its own spaces are taken out).
    The gate automaton is :func:`gpuclass.textmatch.cache.gate` of them."""
    return sorted({p.replace(" ", "") for p in rare})


def markers(entries: list[Entry]) -> dict[str, int]:
    """The marker substrings (absence asides, look-alike words) -> entry, added to ``entries``."""
    out: dict[str, int] = {}
    for kind, phrases in ((ABSENT_MARK, ABSENT_PHRASES), (VARIANT_MARK, VARIANT_WORDS)):
        for phrase in phrases:
            entries.append(Entry(kind, -1, phrase, None))
            out[phrase] = len(entries) - 1
    return out


def overlap_free(entries: list[Entry], patterns: dict[str, int]) -> bool:
    """True when no non-supported name starts inside a supported one and ends past it,
    unless the two together are a name of their own (``gtx 1080`` and ``1080 ti 10 gb`` in
    ``gtx 1080 ti 10 gb``): a leftmost-longest scan then finds that one from the supported
    name's start, as resolving every hit would."""
    heads: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for pattern, e in patterns.items():
        if entries[e].kind != SUPPORTED_TEXT:
            toks = tuple(pattern.split())
            for k in range(1, len(toks)):
                heads.setdefault(toks[:k], []).append(toks)
    for pattern, e in patterns.items():
        if entries[e].kind == SUPPORTED_TEXT:
            toks = tuple(pattern.split())
            for k in range(1, len(toks)):
                for trap in heads.get(toks[k:], ()):
                    if " ".join(toks[:k] + trap) not in patterns:
                        return False
    return True


def _gpu_names(compiled: Any, db: Any, allowed: set[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """Names of the policy's GPU vendors' devices (and their subsystems) not allowlisted."""
    if db is None:
        return []
    import numpy as np  # at build time only: a cached matcher loads without it

    vendors = np.array(compiled.gpu_vendors, dtype=np.int64)
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
