"""Listing text as the auction writes it: counts wherever they stand, reordered and
shortened names, editions, look-alikes, absence asides, and properties of them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass.textmatch import default_matcher


@pytest.fixture(scope="module")
def m():
    return default_matcher()


def cards(m, text):
    return [(x.card, x.count) for x in m.find(text) if x.kind in ("supported", "editions")]


COUNTS = [
    ("2x GPU - Nvidia RTX 6000 Ada Generation", "rtx-6000-ada", 2),
    ("2 x GPU - NVIDIA GeForce GTX 1080", "gtx-1080", 2),
    ("4x GPU - PNY NVIDIA RTX 4000 SFF Ada Generation 20 GB", "rtx-4000-sff-ada", 4),
    ("GPU - 2x Nvidia RTX 6000 Ada Generation", "rtx-6000-ada", 2),
    ("GPU: 2 x RTX 6000 Ada", "rtx-6000-ada", 2),
    ("GPU: 3x GeForce GTX 1080 Ti", "gtx-1080-ti", 3),
    ("RTX 6000 Ada x 2", "rtx-6000-ada", 2),
    ("RTX 6000 Ada Generation 48 GB x2", "rtx-6000-ada", 2),
    ("Nvidia RTX 6000 Ada (2x)", "rtx-6000-ada", 2),
    ("RTX 4000 SFF Ada (4 pcs)", "rtx-4000-sff-ada", 4),
    ("RTX 4000 SFF Ada, 2 pcs", "rtx-4000-sff-ada", 2),
    ("Dual RTX 6000 Ada", "rtx-6000-ada", 2),
    ("Quad GPU - Nvidia GeForce GTX 1080", "gtx-1080", 4),
    ("two NVIDIA GTX 1080 Ti", "gtx-1080-ti", 2),
    ("2 pcs GTX 1080", "gtx-1080", 2),
    ("2 GPUs: RTX 6000 Ada", "rtx-6000-ada", 2),
    ("4 GPUs: NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-blackwell-server", 4),
    ("2x GPU (RTX 6000 Ada Generation)", "rtx-6000-ada", 2),
    ("RTX 6000 Ada: 2x", "rtx-6000-ada", 2),
    ("2 RTX 6000 Ada", "rtx-6000-ada", 2),
    ("2x 48GB RTX 6000 Ada", "rtx-6000-ada", 2),
    ("Grafikkarte: 2x NVIDIA GeForce GTX 1080", "gtx-1080", 2),
    ("GPU - 2 x Nvidia RTX 6000 Ada Generation (48 GB)", "rtx-6000-ada", 2),
    ("RTX 6000 Ada Generation \u00d72", "rtx-6000-ada", 2),
]


@pytest.mark.parametrize("text, card, count", COUNTS)
def test_counts_attach_whatever_stands_between(m, text, card, count):
    assert cards(m, text) == [(card, count)]


@pytest.mark.parametrize("text, card", [
    ("2x SSD, RTX 6000 Ada", "rtx-6000-ada"),
    ("RTX 6000 Ada 48 GB", "rtx-6000-ada"),
    ("RTX 4000 SFF Ada 20GB GDDR6", "rtx-4000-sff-ada"),
    ("RTX 6000 Ada 2x SSD", "rtx-6000-ada"),
    ("1: GTX 1080", "gtx-1080"),
    ("Intel Xeon 2 GTX 1080", "gtx-1080"),
    ("Dual-slot RTX 6000 Ada", "rtx-6000-ada"),
    ("2x RAM 32 GB | GPU - Nvidia GeForce GTX 1080", "gtx-1080"),
    ("RTX 6000 Ada, 2x 1,92 TB NVMe", "rtx-6000-ada"),
])
def test_counts_are_never_guessed(m, text, card):
    assert cards(m, text) == [(card, 1)]


@pytest.mark.parametrize("text, card", [
    ("RTX 4000 Ada SFF", "rtx-4000-sff-ada"),
    ("RTX 4000 Ada Generation SFF", "rtx-4000-sff-ada"),
    ("NVIDIA RTX 4000 Small Form Factor Ada Generation", "rtx-4000-sff-ada"),
    ("RTX 4000 Ada Small Form Factor", "rtx-4000-sff-ada"),
    ("RTX 6000 (Ada Generation)", "rtx-6000-ada"),
    ("RTX PRO 6000 Max-Q", "rtx-pro-6000-blackwell-max-q"),
    ("RTX PRO 6000 MaxQ Workstation Edition", "rtx-pro-6000-blackwell-max-q"),
    ("RTX PRO 6000 Blackwell Max Q", "rtx-pro-6000-blackwell-max-q"),
    ("RTX PRO 6000 Workstation Edition Blackwell Max-Q", "rtx-pro-6000-blackwell-max-q"),
    ("RTX PRO 6000 Server Edition", "rtx-pro-6000-blackwell-server"),
    ("RTX PRO 6000 Server Blackwell", "rtx-pro-6000-blackwell-server"),
    ("RTX PRO 6000 Workstation", "rtx-pro-6000-blackwell-workstation"),
    ("RTX PRO 6000 (Blackwell, Workstation Edition)".replace(",", ""), "rtx-pro-6000-blackwell-workstation"),
])
def test_reordered_and_shortened_names_of_one_edition(m, text, card):
    assert [(x.kind, x.card) for x in m.find(text)] == [("supported", card)]


def test_a_name_of_several_allowlisted_editions_counts_with_its_editions(m):
    [x] = m.find("2x NVIDIA RTX PRO 6000 Blackwell 96GB")
    assert (x.kind, x.count) == ("editions", 2)
    assert x.card.startswith("rtx-pro-6000-blackwell")
    for edition in ("Workstation Edition", "Max-Q Workstation Edition", "Server Edition"):
        assert edition in x.name


@pytest.mark.parametrize("text", ["RTX 6000", "RTX 4000", "RTX PRO 6000", "RTX 6000 Generation"])
def test_names_of_editions_that_differ_in_support_stay_ambiguous(m, text):
    assert [x.kind for x in m.find(text)] in (["ambiguous"], ["unsupported"])


@pytest.mark.parametrize("text", [
    "Nvidia P104-100", "P104-100 (GTX 1080 mining card)", "GTX 1080 P104-100 8GB", "P102-100 (GTX 1080 Ti)",
    "GTX 1080 Mining Edition", "Nvidia GeForce GTX 1080 mining", "GeForce GTX 1080 Ti 10GB",
    "GTX 1080 MaxQ", "GTX 1080 (Max-Q)", "RTX 4000 Ada Embedded", "RTX PRO 6000D Blackwell Max-Q",
    "RTX 6000 Ada (Laptop GPU)",
])
def test_look_alikes_stay_unsupported(m, text):
    kinds = [x.kind for x in m.find(text)]
    assert kinds and "supported" not in kinds and "editions" not in kinds, m.find(text)


def test_a_look_alike_beside_the_card_leaves_the_card(m):
    assert cards(m, "GTX 1080 and P104-100") == [("gtx-1080", 1)]


@pytest.mark.parametrize("text", [
    "RTX 6000 Ada not included", "GPU: RTX 6000 Ada (not included)", "ready for 2x RTX 6000 Ada",
    "fits RTX 4000 SFF Ada", "supports up to 4x RTX 6000 Ada", "optional: RTX PRO 6000 Blackwell Server",
    "GTX 1080 optional", "upgradeable to 2x GTX 1080 Ti", "Upgradable to RTX 6000 Ada on request",
    "RTX 4000 SFF Ada (optional)", "GPU option: RTX 6000 Ada",
])
def test_a_card_named_in_an_absence_aside_does_not_count(m, text):
    assert cards(m, text) == []


def test_an_aside_reaches_only_its_own_clause(m):
    assert cards(m, "RTX 4000 SFF Ada, optional: RTX 6000 Ada") == [("rtx-4000-sff-ada", 1)]
    assert cards(m, "2x RTX 6000 Ada; GPU slot for a third card") == [("rtx-6000-ada", 2)]
    assert cards(m, "Optionality RTX 6000 Ada") == [("rtx-6000-ada", 1)]  # a whole word only


# -- properties ------------------------------------------------------------------

CARDS = ["Nvidia GeForce GTX 1080", "GeForce GTX 1080 Ti", "RTX 4000 SFF Ada Generation", "RTX 6000 Ada",
         "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX PRO 6000 Blackwell Server Edition"]
COUNT = st.integers(1, 16)
COUNT_FORM = st.sampled_from(["{n}x", "{n} x", "{n}x GPU -", "{n} x GPU:"])
FILLER = st.lists(st.sampled_from(["GPU -", "GPU", "Nvidia", "NVIDIA", "GeForce", "PNY", "Graphics card",
                                   "GPU:", "-", "graphics"]), max_size=3).map(" ".join)
ABSENT = st.sampled_from(["not included", "(optional)", "ready for", "supports up to", "fits",
                          "upgradeable to", "optional:", "on request"])
LINE = st.sampled_from(["Intel Xeon Gold 5412U", "2x SSD M.2 NVMe 1,92 TB", "128 GB DDR5 ECC", "",
                        "GPU - Nvidia Quadro RTX 6000", "RTX A6000 48GB", "GPU - Nvidia"])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(CARDS), COUNT, COUNT_FORM, FILLER)
def test_labels_and_brands_between_count_and_card_never_change_the_count(card, n, form, filler):
    m = default_matcher()
    plain = cards(m, f"{n}x {card}")
    assert [c for _, c in plain] == [n]
    assert cards(m, f"{form.format(n=n)} {filler} {card}") == plain


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(LINE, st.sampled_from(CARDS)), max_size=4), st.integers(0, 4), ABSENT,
       st.booleans())
def test_an_absence_phrase_never_adds_a_card(lines, at, phrase, after):
    m = default_matcher()
    text = ", ".join(lines)
    base = m.find_many([text]).supported_cards().sum()
    words = text.split(" ")
    at = min(at, len(words))
    changed = " ".join(words[:at] + [phrase] + words[at:]) if not after else f"{text} {phrase}"
    assert m.find_many([changed]).supported_cards().sum() <= base
