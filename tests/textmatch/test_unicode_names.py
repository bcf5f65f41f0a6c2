"""Card names with Unicode inside them (issue 28): format characters (zero-width, bidi marks,
soft hyphens) are dropped, compatibility forms (fullwidth letters) read as ASCII, and a name
that reads as a card only with look-alike letters of another script taken as Latin is
flagged, never counted.  Generated cases of each class, and the fold's table held equal to
the rule it caches."""

from __future__ import annotations

import importlib
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass.audit import audit_texts
from gpuclass.textmatch import default_matcher

normalize_mod = importlib.import_module("gpuclass.textmatch.normalize")
fold, fold_char, normalize = normalize_mod.fold, normalize_mod.fold_char, normalize_mod.normalize
CONFUSABLES, confusable_reading = normalize_mod.CONFUSABLES, normalize_mod.confusable_reading

# every format character of the Unicode version this Python knows, beyond the ASCII range
FORMAT_CHARS = [chr(c) for c in range(0x80, 0x110000) if unicodedata.category(chr(c)) == "Cf"]
NAMES = ["GTX 1080", "GeForce GTX 1080 Ti", "GTX1080Ti", "NVIDIA GeForce 1080 Ti", "RTX 4000 SFF Ada Generation",
         "RTX 4000 Ada SFF", "RTX 6000 Ada", "RTX PRO 6000 Blackwell Max-Q Workstation Edition",
         "RTX PRO 6000 Blackwell Server Edition", "Quadro RTX 6000", "RTX 4000 Ada Generation", "P104-100",
         "GTX 1080 Mobile", "RTX 6000"]
LINES = st.builds(lambda before, name, after: f"{before}{name}{after}",
                  st.sampled_from(["", "2x ", "GPU - ", "GPU: 2 x ", "Grafikkarte: "]), st.sampled_from(NAMES),
                  st.sampled_from(["", " 48 GB", " (not included)", ", 2x SSD", " x2"]))


def found(text):
    return [(x.kind, x.card, x.name, x.count) for x in default_matcher().find(text)]


def reference_fold(text: str) -> str:
    """The rule as README and the module say it, from unicodedata directly (no table)."""
    out = []
    for c in text:
        cat = unicodedata.category(c)
        if cat == "Cf":
            continue
        nfkc = unicodedata.normalize("NFKC", c)
        if not c.isascii() and nfkc.isascii() and (not cat.startswith("S") or len(nfkc) == 1):
            out.append(nfkc)
        else:
            out.append(c)
    return "".join(out)


@st.composite
def with_format_chars(draw, text: str) -> str:
    """``text`` with format characters inserted anywhere, inside words too."""
    chars = list(text)
    for _ in range(draw(st.integers(1, 6))):
        chars.insert(draw(st.integers(0, len(chars))), draw(st.sampled_from(FORMAT_CHARS)))
    return "".join(chars)


@st.composite
def fullwidth(draw, text: str) -> str:
    """``text`` with some of its characters in their fullwidth forms (U+FF01..U+FF5E, U+3000)."""
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join((chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c) if f else c
                   for c, f in zip(text, flips))


@settings(max_examples=300, deadline=None)
@given(st.data(), LINES)
def test_format_characters_inside_a_name_are_dropped(data, line):
    text = data.draw(with_format_chars(line))
    assert fold(text) == line
    assert normalize(text) == normalize(line)
    assert found(text) == found(line), text


@settings(max_examples=300, deadline=None)
@given(st.data(), LINES)
def test_fullwidth_letters_read_as_ascii(data, line):
    text = data.draw(fullwidth(line))
    assert normalize(text) == normalize(line)
    assert found(text) == found(line), text


@settings(max_examples=200, deadline=None)
@given(st.data(), LINES)
def test_both_together_read_as_the_plain_name(data, line):
    text = data.draw(with_format_chars(data.draw(fullwidth(line))))
    assert found(text) == found(line), text


FOLDING = st.one_of(st.characters(), st.sampled_from(FORMAT_CHARS),
                    st.characters(min_codepoint=0xFF01, max_codepoint=0xFF5E), st.characters(max_codepoint=0x7F),
                    st.sampled_from(["\ud800", "\udfff"]))  # lone surrogates: a JSON feed's escapes


@settings(max_examples=500, deadline=None)
@given(st.text(FOLDING, max_size=60), st.sampled_from([0, 1, 8, 10**6]))
def test_the_fold_table_is_the_rule_it_caches(text, replaces):
    # both ways fold takes (a replace per distinct character, or one translate through the
    # table filled as texts come) are the rule read character by character
    saved = normalize_mod._REPLACES
    normalize_mod._REPLACES = replaces
    try:
        assert fold(text) == "".join(map(fold_char, text)) == reference_fold(text)
        assert fold(fold(text)) == fold(text)
        assert normalize(text) == normalize(reference_fold(text))
    finally:
        normalize_mod._REPLACES = saved


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(max_codepoint=0x7F), max_size=60))
def test_the_ascii_fast_path_reads_as_the_unicode_path(text):
    # a character that reads as spaces sends the text down the path for non-ASCII text
    assert normalize_mod.normalize_bytes(text) == normalize_mod.normalize_bytes(text + "\u00e9")


def test_a_symbol_spelled_with_letters_stays_a_mark():
    assert found("Nvidia RTX\u2122 4000 SFF Ada") == found("Nvidia RTX 4000 SFF Ada")
    assert [x.count for x in default_matcher().find("RTX 6000 Ada \u00d72")] == [2]
    assert fold("\uff5c") == "|" and normalize("GTX 1080\uff5cRTX 6000 Ada").count("|") == 1


# -- look-alike letters of other scripts -----------------------------------------

LATIN_TO_LOOKALIKES: dict[str, list[str]] = {}
for _c, _latin in CONFUSABLES.items():
    LATIN_TO_LOOKALIKES.setdefault(_latin, []).append(_c)
CARD_NAMES = ["GTX 1080", "GTX 1080 Ti", "RTX 4000 SFF Ada", "RTX 6000 Ada", "RTX PRO 6000 Blackwell Server Edition",
              "RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX PRO 6000 Blackwell Workstation Edition"]


@st.composite
def disguised(draw, name: str) -> str:
    """``name`` with at least one of its letters replaced by a look-alike of another script."""
    spots = [i for i, c in enumerate(name) if c in LATIN_TO_LOOKALIKES]
    chosen = draw(st.sets(st.sampled_from(spots), min_size=1, max_size=min(3, len(spots))))
    return "".join(draw(st.sampled_from(LATIN_TO_LOOKALIKES[c])) if i in chosen else c for i, c in enumerate(name))


def report(text):
    return next(audit_texts([("srv", text)]))


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from(CARD_NAMES), st.sampled_from(["", "2x ", "GPU - NVIDIA ", "GPU: "]))
def test_a_name_disguised_with_look_alike_letters_is_flagged_not_counted(data, name, before):
    text = before + data.draw(disguised(name))
    assert report(before + name).supported_cards >= 1
    r = report(text)
    assert r.supported_cards == 0 and not r.gpu_capable, (text, r.reason)
    assert any("look-alike letters, not counted" in p for p in r.problems), (text, r.problems)
    assert r.reason.startswith("flagged: "), r.reason


@settings(max_examples=100, deadline=None)
@given(st.data(), st.sampled_from(CARD_NAMES), st.sampled_from(CARD_NAMES))
def test_a_disguised_name_takes_nothing_from_a_plain_one_beside_it(data, plain, other):
    text = f"2x {plain}, 1x {data.draw(disguised(other))}"
    r = report(text)
    assert r.supported_cards == 2, (text, r.reason)
    assert any("look-alike letters" in p for p in r.problems)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(CARD_NAMES),
       st.lists(st.sampled_from(["\u0421\u0435\u0440\u0432\u0435\u0440", "\u0441", "\u0432\u0438\u0434\u0435\u043e"
                                 "\u043a\u0430\u0440\u0442\u0430:", "\u043d\u043e\u0432\u044b\u0439", "\u0438",
                                 "\u039d\u03ad\u03bf\u03c2"]), min_size=1, max_size=4))
def test_words_of_another_language_beside_a_name_are_no_disguise(name, words):
    text = " ".join(words) + " " + name
    plain = report(name)
    r = report(text)
    assert (r.supported_cards, r.problems) == (plain.supported_cards, plain.problems), (text, r.problems)


ISSUE_28_EXAMPLES = [("GTX\u200b1080", 1), ("G\u200bT\u200dX 1080", 1),
                     ("\uff27\uff34\uff38 \uff11\uff10\uff18\uff10", 1),
                     ("2x \uff32\uff34\uff38\u3000\uff16\uff10\uff10\uff10 Ada", 2),
                     ("\ufeffRTX 6000 Ada\u200e", 1)]
# zero-width spaces between words, and inside a name or an aside
ZERO_WIDTH_EXAMPLES = [("NVIDIA GeForce 1080 Ti (not i\u200bncluded)", 0), ("2x RTX 4000 Ada S\u200bFF", 2),
                       ("NVIDIA\u200bRTX\u200b6000\u200bAda", 1), ("2x\u200bRTX\u200b6000\u200bAda\u200bGeneration", 2),
                       ("GPU:\u200b2\u200bx\u200bGeForce\u200bGTX\u200b1080\u200bTi", 2),
                       ("RTX\u200bPRO\u200b6000\u200bBlackwell\u200bServer\u200bEdition", 1), ("G\u200bTX 1080", 1)]


@pytest.mark.parametrize("text, cards", ISSUE_28_EXAMPLES + ZERO_WIDTH_EXAMPLES)
def test_the_examples_count(text, cards):
    r = report(text)
    assert r.supported_cards == cards and not r.problems, (r.reason, r.problems)


def test_a_cyrillic_te_in_rtx_is_flagged_with_its_letter():
    r = report("R\u0422X 6000 Ada")
    assert r.supported_cards == 0
    [p] = r.problems
    assert "U+0422 (CYRILLIC CAPITAL LETTER TE)" in p and "RTX 6000 Ada" in p


def test_a_look_alike_letter_in_an_aside_is_flagged_too():
    r = report("RTX 6000 Ada n\u043et included")  # a Cyrillic o: the aside no longer reads
    assert r.supported_cards == 0 and any("reads otherwise" in p for p in r.problems)


def test_confusable_reading():
    assert confusable_reading("GTX 1080") is None and confusable_reading("\uff27TX 1080") is None
    assert confusable_reading("\u0420\u0422X") == ("PTX", ["\u0420", "\u0422"])


# -- zero-width spaces between words, and inside them ------------------------------------------

ZWSP = "\u200b"


def finds_something(text: str) -> bool:
    """Whether the automaton finds a name or an aside's words in ``text`` (mentions or not)."""
    return bool(list(default_matcher()._scan(normalize(text))))


def supported(mentions) -> int:
    return sum(count for kind, card, _, count in mentions if card is not None)


def zero_width_reading(text: str):
    """The rule, from the two readings as the public matcher gives them: the text with its
    zero-width spaces dropped, unless the automaton finds nothing there; then with each
    one a space."""
    joined = text.replace(ZWSP, "")
    return found(joined) if finds_something(joined) else found(text.replace(ZWSP, " "))


@settings(max_examples=150, deadline=None)
@given(LINES, st.data())
def test_words_parted_only_by_zero_width_spaces_read_by_the_rule(line, data):
    """Spaces become zero-width ones at random (all of them, or some): the text reads as
    its two readings decide (see TextMatcher._zero_width_spaces), count and all."""
    spaces = [i for i, c in enumerate(line) if c == " "]
    chosen = data.draw(st.sets(st.sampled_from(spaces), min_size=1) if spaces else st.just(set()))
    text = "".join(ZWSP if i in chosen else c for i, c in enumerate(line))
    assert found(text) == zero_width_reading(text), text


@settings(max_examples=150, deadline=None)
@given(LINES, st.data())
def test_a_zero_width_space_inside_a_word_never_makes_a_text_count_more(line, data):
    """A zero-width space anywhere in a text that says something without it (a name's
    words, an aside's) counts no more cards than the text without it."""
    at = data.draw(st.integers(0, len(line)))
    text = line[:at] + ZWSP + line[at:]
    if finds_something(line):
        assert supported(found(text)) <= supported(found(line)), text
    assert found(text) == zero_width_reading(text), text


def test_a_trap_parted_by_zero_width_spaces_is_a_trap():
    assert [k for k, *_ in found("Quadro\u200bRTX\u200b6000")] == ["unsupported"]
    assert report("NVIDIA\u200bGeForce\u200bGTX\u200b1080\u200bMobile").supported_cards == 0


def test_each_text_of_a_batch_reads_as_it_reads_alone():
    """In one batch (one pass for the texts as read, one for those with zero-width spaces
    in which it found nothing, read spaced), each text gets the mentions it gets alone, in
    text order."""
    texts = ["Intel\u200bXeon", "NVIDIA\u200bRTX\u200b6000\u200bAda", "GTX\u200b1080", "", "x\u200b2",
             "2x\u200bGTX\u200b1080\u200bTi", "RTX 4000 SFF Ada"]
    r = default_matcher().find_many(texts)
    assert r.supported_cards().tolist() == [0, 1, 1, 0, 0, 2, 1]
    assert [[(x.name, x.count) for x in r.mentions(i)] for i in range(len(texts))] == \
        [[(x.name, x.count) for x in default_matcher().find(t)] for t in texts]


def test_a_look_alike_letter_between_zero_width_spaces_is_flagged():
    r = report("R\u0422X\u200b6000\u200bAda")
    assert r.supported_cards == 0
    [p] = r.problems
    assert "U+0422 (CYRILLIC CAPITAL LETTER TE)" in p and "RTX 6000 Ada" in p
