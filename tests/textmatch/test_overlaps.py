"""The matcher's steps over many matches (issue 28): overlaps resolved, clause rules applied
and adjacent names rescanned in O(n log n), held equal to the quadratic algorithms they
replace (kept here as references), and a listing of repeated names timed at N and 10N."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("ahocorasick")

from gpuclass.textmatch import matcher  # noqa: E402
from gpuclass.textmatch.clauses import CONJUNCTIONS, refine  # noqa: E402
from gpuclass.textmatch.entries import (ABSENT_MARK, AMBIGUOUS_TEXT, EDITIONS_TEXT, SUPPORTED_TEXT,  # noqa: E402
                                        UNSUPPORTED_TEXT, VARIANT_MARK, Entry)
from gpuclass.textmatch.matcher import TextMatcher, default_matcher  # noqa: E402
from gpuclass.textmatch.overlaps import resolve  # noqa: E402

# -- the references: the algorithms before issue 28, as they were (quadratic) ---------------


def ref_resolve(spans, kinds):
    if len(spans) == 1:
        return spans
    longest = max(spans, key=lambda s: s[1] - s[0])
    lo, hi = longest[0], longest[1]
    if all(lo <= s[0] and s[1] <= hi for s in spans):
        return [longest]
    spans = sorted(spans, key=lambda s: (s[0] - s[1], s[0]))
    kept = []
    for s in spans:
        if any(k[0] <= s[0] and s[1] <= k[1] for k in kept):
            continue
        kept.append(s)
    if len(kept) > 1:
        traps = [k for k in kept if kinds[k[2]] != SUPPORTED_TEXT]
        out = []
        for k in kept:
            overlaps = [t for t in (traps if kinds[k[2]] == SUPPORTED_TEXT else kept)
                        if t is not k and max(t[0], k[0]) < min(t[1], k[1])]
            if not overlaps:
                out.append(k)
            elif kinds[k[2]] == SUPPORTED_TEXT:
                continue
            elif all((t[1] - t[0], -t[0]) < (k[1] - k[0], -k[0]) for t in overlaps
                     if kinds[t[2]] != SUPPORTED_TEXT):
                out.append(k)
        kept = out
    kept.sort()
    return kept


def _ref_clause(norm, lo, hi, start, end):
    a = max(norm.rfind("|", lo, start), norm.rfind(",", lo, start))
    b1, b2 = norm.find("|", end, hi), norm.find(",", end, hi)
    b = min(b1, b2) if b1 >= 0 and b2 >= 0 else max(b1, b2)
    return (lo if a < 0 else a), (hi if b < 0 else b)


def ref_refine(norm, lo, hi, names, marks, entries, variant_of):
    words = [m for m in marks if norm[m[0] - 1:m[0]] == " " and norm[m[1] + 1:m[1] + 2] == " "]
    out = []
    for s in names:
        c_lo, c_hi = _ref_clause(norm, lo, hi, s[0], s[1])
        inside = [m for m in words if c_lo <= m[0] and m[1] <= c_hi]
        if any(entries[m[2]].kind == ABSENT_MARK for m in inside):
            continue
        e = entries[s[2]]
        if e.kind == SUPPORTED_TEXT:
            if any(entries[m[2]].kind == VARIANT_MARK for m in inside) and s[2] in variant_of:
                out.append((s[0], s[1], variant_of[s[2]]))
                continue
            if e.chip and _ref_described_trap(norm, s, names, entries, c_lo, c_hi):
                continue
        out.append(s)
    return out


def _ref_described_trap(norm, s, names, entries, c_lo, c_hi):
    chip = entries[s[2]].chip
    for t in names:
        te = entries[t[2]]
        if te.kind != UNSUPPORTED_TEXT or te.chip != chip or not (c_lo <= t[0] and t[1] <= c_hi):
            continue
        a, b = (t[1], s[0]) if t[1] <= s[0] else (s[1], t[0])
        if not any(c in norm[a:b + 1] for c in CONJUNCTIONS):
            return True
    return False


def ref_adjacent(self, norm, lo, hi):
    out = []
    text = norm[lo:hi]
    pos, end, scan, kinds = 0, len(text), self._automaton(text).iter_long, self._kind
    while pos < end:
        hit = next(scan(text, pos, end), None)
        if hit is None:
            break
        e, k = hit
        ln, ent = self._word[k]
        out.append((lo + e - ln, lo + e, ent))
        pos = e if kinds[ent] < ABSENT_MARK else e + 1
    return out


# -- overlaps: random span lists ---------------------------------------------------------------

KINDS = st.lists(st.sampled_from([SUPPORTED_TEXT, UNSUPPORTED_TEXT, AMBIGUOUS_TEXT, EDITIONS_TEXT]),
                 min_size=1, max_size=8)


@st.composite
def spans_and_kinds(draw, width=40):
    kinds = draw(KINDS)
    # few positions and lengths: nested, overlapping, equal, equal-length and touching spans are common
    span = st.tuples(st.integers(0, width), st.integers(1, 12), st.integers(0, len(kinds) - 1)).map(
        lambda t: (t[0], t[0] + t[1], t[2]))
    spans = draw(st.lists(span, min_size=1, max_size=30))
    if draw(st.booleans()):  # the same span under several entries, in any order
        spans += draw(st.lists(st.sampled_from(spans), max_size=10))
        spans = draw(st.permutations(spans))
    return list(spans), kinds


@settings(max_examples=600, deadline=None)
@given(spans_and_kinds())
def test_resolve_equals_the_quadratic_reference(case):
    spans, kinds = case
    want = ref_resolve(list(spans), kinds)
    assert resolve(list(spans), kinds) == want


@pytest.mark.parametrize("spans, kinds, want", [
    ([(0, 9, 0), (0, 12, 1)], [0, 0], [(0, 12, 1)]),                       # GTX 1080 inside GTX 1080 Ti
    ([(0, 9, 0), (5, 14, 1)], [0, 1], [(5, 14, 1)]),                        # supported touching a trap
    ([(0, 9, 1), (5, 14, 1)], [1, 1], [(0, 9, 1)]),                         # equal traps: the first
    ([(0, 9, 1), (5, 15, 1)], [1, 1], [(5, 15, 1)]),                        # the longer trap
    ([(0, 9, 0), (9, 18, 0)], [0, 0], [(0, 9, 0), (9, 18, 0)]),             # sharing the space only
    ([(0, 9, 0), (0, 9, 1), (20, 29, 1)], [0, 1], [(0, 9, 0), (20, 29, 1)]),  # equal spans: the first entry
])
def test_resolve_examples(spans, kinds, want):
    assert resolve(list(spans), kinds) == ref_resolve(list(spans), kinds) == want


# -- clause rules: random texts, names as resolve leaves them -----------------------------------

CHIPS = ["GP104", "AD102", None]
TOKENS = ["a", "bb", " ", " ", ",", "|", " and ", " + ", " with ", "x"]


@st.composite
def refine_cases(draw):
    norm = " " + "".join(draw(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=40))) + " "
    n = len(norm)
    names = draw(st.lists(st.tuples(st.sampled_from([SUPPORTED_TEXT, UNSUPPORTED_TEXT, AMBIGUOUS_TEXT]),
                                    st.sampled_from(CHIPS)), min_size=1, max_size=6))
    entries = [Entry(k, 0 if k == SUPPORTED_TEXT else -1, f"n{i}", None, c) for i, (k, c) in enumerate(names)]
    first_mark = len(entries)
    entries += [Entry(ABSENT_MARK, -1, "optional", None), Entry(VARIANT_MARK, -1, "mining", None)]
    variant_of = {e: len(entries) for e in draw(st.sets(st.integers(0, first_mark - 1)))}
    entries.append(Entry(UNSUPPORTED_TEXT, -1, "look-alike", None))
    kinds = [e.kind for e in entries]

    def span(ents):
        return st.tuples(st.integers(0, n - 2), st.integers(1, 10), ents).map(
            lambda t: (t[0], min(t[0] + t[1], n - 1), t[2]))
    spans = draw(st.lists(span(st.integers(0, first_mark - 1)), min_size=1, max_size=25))
    marks = draw(st.lists(span(st.sampled_from([first_mark, first_mark + 1])), max_size=15))
    lo = draw(st.integers(0, min(s[0] for s in spans + marks)))
    hi = draw(st.integers(max(s[1] for s in spans + marks) + 1, n))
    return norm, lo, hi, resolve(spans, kinds), marks, entries, variant_of


@settings(max_examples=600, deadline=None)
@given(refine_cases())
def test_refine_equals_the_quadratic_reference(case):
    norm, lo, hi, names, marks, entries, variant_of = case
    assert refine(norm, lo, hi, names, marks, entries, variant_of) == \
        ref_refine(norm, lo, hi, names, marks, entries, variant_of)


# -- the whole matcher against the one made of the references -------------------------------------

@pytest.fixture(scope="module")
def reference():
    """A matcher whose steps are the references (the matcher before issue 28)."""
    m = TextMatcher()
    ref = TextMatcher.__new__(TextMatcher)
    ref.__dict__.update(m.__dict__)
    ref._resolve = lambda spans: ref_resolve(spans, ref._kind)
    ref._adjacent = ref_adjacent.__get__(ref)
    return m, ref


WORDS = ["rtx", "gtx", "pro", "6000", "4000", "1080", "ti", "ada", "sff", "blackwell", "max-q", "mobile",
         "quadro", "2x", "x", "nvidia", "geforce", "48gb", "96gb", "generation", "workstation", "edition",
         "server", "d", "6000d", "a6000", ",", "|", "and", "+", "with", "mining", "optional", "not", "included",
         "p104-100", "rtx6000", "gtx1080", "laptop", "gpu", "(", ")"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=40), st.integers(1, 30))
def test_the_matcher_answers_as_the_references_do(reference, words, repeat):
    m, ref = reference
    text = " ".join(words)
    many = " ".join([text] * repeat)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(matcher, "refine", ref_refine)
        want = [ref.find(t) for t in (text, many)]
    assert [m.find(t) for t in (text, many)] == want


def test_adjacent_hits_across_window_ends_are_the_references(reference):
    """Names and gaps of every length around the window the rescan reads at a time: a name
    the window's end cuts short, a window with no hit, a long gap before the next name."""
    m, ref = reference
    width = max(256, 4 * m._longest_word())
    gaps = [0, 1, 2 * width, 5 * width + 3] + list(range(width - 40, width + 3))
    for gap in gaps:
        for text in ("RTX 6000 " + "y" * gap + " RTX 6000 Ada Generation RTX 6000 " * 3,
                     "GTX 1080 Ti " + "-" * gap + " GTX 1080 Ti " * 30 + "RTX PRO 6000 Blackwell Max-Q",
                     "y" * gap + " GTX 1080 Ti optional RTX 4000 SFF Ada Generation " + "z" * gap):
            norm = matcher.normalize_bytes(text).decode("ascii")
            assert m._adjacent(norm, 0, len(norm)) == ref._adjacent(norm, 0, len(norm)), (gap, text[:40])


# -- scaling: N and 10N repeats -------------------------------------------------------------------

# (repeated part, tail, N): each a listing that was quadratic in some step; N takes 10-20 ms of CPU
LISTINGS = [
    ("RTX 6000 ", "RTX 6000 Ada", 2000),          # resolve: ambiguous names around one supported
    ("GTX 1080 ", "", 2000),                       # resolve: names sharing their spaces
    ("GTX 1080 and P104-100 and ", "", 1000),      # clause rules: a trap of the chip beside every name
    ("RTX 6000 Ada Quadro RTX 6000 ", "", 1000),   # clause rules and the rescan of adjacent names
    ("GTX 1080 optional ", "", 3000),              # clause rules: a marker beside every name
]


def _cpu(m, text):
    t0 = time.process_time()  # CPU time: other processes on a shared machine move it least
    m.find(text)
    return time.process_time() - t0


@pytest.mark.parametrize("part, tail, n", LISTINGS, ids=[p.strip() for p, _, _ in LISTINGS])
def test_a_listing_of_repeated_names_is_matched_in_linear_time(part, tail, n):
    m = default_matcher()
    m.find(part * 10 + tail)  # warm: the entries it names made
    small_text, large_text = part * n + tail, part * 10 * n + tail
    small = large = float("inf")
    for _ in range(5):  # the sizes in turn, the least of each: a slow patch hits both
        small = min(small, _cpu(m, small_text))
        large = min(large, _cpu(m, large_text))
    assert large <= 20 * small, f"{n} repeats {small * 1e3:.1f} ms, {10 * n}: {large * 1e3:.1f} ms"
