"""Free-text card names: the platform's listings, every trap, quantities, and properties."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass.textmatch import TextMatcher, default_matcher, normalize


@pytest.fixture(scope="module")
def m():
    return default_matcher()


def found(m, text):
    return [(x.kind, x.card, x.count) for x in m.find(text)]


@pytest.mark.parametrize("text, card, count", [
    ("GPU - Nvidia GeForce GTX 1080", "gtx-1080", 1),
    ("2x NVIDIA RTX 6000 Ada Generation 48 GB", "rtx-6000-ada", 2),
    ("2 x NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada", 2),
    ("2 \u00d7 RTX 6000 Ada", "rtx-6000-ada", 2),
    ("RTX 6000 Ada x4", "rtx-6000-ada", 4),
    ("Nvidia RTX\u2122 4000 SFF Ada Generation", "rtx-4000-sff-ada", 1),
    ("NVIDIA\u00ae RTX\u00ae 4000 SFF Ada Generation (20GB)", "rtx-4000-sff-ada", 1),
    ("RTX4000 SFF ADA", "rtx-4000-sff-ada", 1),
    ("rtx 4000  sff-ada", "rtx-4000-sff-ada", 1),
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition 96GB", "rtx-pro-6000-blackwell-max-q", 1),
    ("RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-blackwell-server", 1),
    ("RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000-blackwell-workstation", 1),
    ("NVIDIA RTX PRO 6000 Blackwell 96GB Server Edition", "rtx-pro-6000-blackwell-server", 1),
    ("GeForce GTX 1080 Ti 11GB", "gtx-1080-ti", 1),
    ("GTX 1080Ti", "gtx-1080-ti", 1),
    ("GTX 1080-Ti", "gtx-1080-ti", 1),
    ("gtx1080", "gtx-1080", 1),
])
def test_supported_names(m, text, card, count):
    assert found(m, text) == [("supported", card, count)]


TRAPS = [
    "GTX 1080 Mobile", "GeForce GTX 1080 Max-Q", "GTX 1080 Max-Q", "RTX 4000 Ada",
    "RTX 4000 Ada Generation", "Quadro RTX 6000", "Quadro RTX 8000", "RTX 6000D", "RTX PRO 6000D",
    "RTX PRO 6000D Blackwell Workstation Edition", "RTX PRO 6000D Blackwell Max-Q Workstation Edition",
    "RTX PRO 5000 Blackwell", "RTX A6000", "RTX 6000 Ada Laptop GPU", "RTX 6000 Ada Generation Mobile",
    "RTX 4000 SFF Ada Embedded", "GeForce GTX 1080 Ti 10GB", "GeForce GTX 1070", "RTX 5000 Ada Generation",
    "RTX 5880 Ada Generation", "Quadro RTX 4000",
]


@pytest.mark.parametrize("trap", TRAPS)
def test_traps_are_never_allowlisted(m, trap):
    kinds = [x.kind for x in m.find(trap)]
    assert kinds and "supported" not in kinds, (trap, m.find(trap))


@pytest.mark.parametrize("trap, name, device", [
    ("GTX 1080 Mobile", "GeForce GTX 1080 Mobile", "10de:1ba0"),
    ("RTX 4000 Ada", "RTX 4000 Ada Generation", "10de:27b2"),
    ("Quadro RTX 6000", "Quadro RTX 6000", "10de:1e30"),
    ("RTX A6000", "RTX A6000", "10de:2230"),
    ("RTX PRO 5000 Blackwell", "RTX PRO 5000 Blackwell", "10de:2bb3"),
    ("RTX 6000D", "RTX 6000D", "10de:2bb9"),
])
def test_traps_are_recognised_as_what_they_are(m, trap, name, device):
    [x] = m.find(trap)
    assert (x.kind, x.name, x.device_id) == ("unsupported", name, device)


@pytest.mark.parametrize("text", ["RTX 6000", "RTX PRO 6000", "RTX 4000"])
def test_shortened_names_are_ambiguous(m, text):
    assert [x.kind for x in m.find(text)] == ["ambiguous"]


def test_whole_tokens_only(m):
    for text in ["GTX 10800", "XGTX 1080", "RTX 6000 Adaptive", "rtx 60000 ada", "MGTX 1080 Ti"]:
        assert [x for x in m.find(text) if x.kind == "supported"] == [], text


def test_repeated_lines_add_up(m):
    r = m.find_many(["GPU - Nvidia GeForce GTX 1080", "GPU - Nvidia GeForce GTX 1080", "Intel Xeon"])
    assert r.supported_cards().tolist() == [1, 1, 0]
    assert found(m, "RTX 6000 Ada, 2x RTX 6000 Ada") == [("supported", "rtx-6000-ada", 1),
                                                        ("supported", "rtx-6000-ada", 2)]


def test_quantity_does_not_cross_texts_or_breaks(m):
    r = m.find_many(["RAM 2x", "GTX 1080", "64 GB, x2"])
    assert r.count.tolist() == [1]
    assert found(m, "2x SSD, GTX 1080") == [("supported", "gtx-1080", 1)]


def test_batch_equals_single(m):
    texts = ["GTX 1080", "", "2x RTX 6000 Ada", None, 7, "Quadro RTX 6000 / RTX A6000", "\x1fGTX 1080 Ti"]
    batch = m.find_many(texts)
    for i, t in enumerate(texts):
        single = m.find("" if t is None else str(t))
        assert batch.mentions(i) == single


def test_find_many_refuses_one_string(m):
    from gpuclass.errors import InputError
    with pytest.raises(InputError):
        m.find_many("GTX 1080")


def test_custom_policy_aliases():
    policy = {"cards": [{"id": "l4", "name": "L4", "family": "ada-lovelace", "kernel_module": "open",
                         "match": [{"vendor": "10de", "device": "27b8"}], "aliases": ["Tesla L4 24GB"]}]}
    m = TextMatcher(policy)
    assert [x.card for x in m.find("NVIDIA L4")] == ["l4"]
    assert [x.kind for x in m.find("GTX 1080")] == ["unsupported"]


def test_import_gpuclass_does_not_import_ahocorasick():
    code = "import sys, gpuclass, gpuclass.textmatch; assert 'ahocorasick' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_normalize_is_linear_on_hostile_input(m):
    text = ("RTX " * 50_000) + "-" * 100_000 + "\u2122" * 10_000
    assert normalize(text).count("rtx") == 50_000
    assert m.find(text) == []


WORDS = st.sampled_from(["rtx", "gtx", "pro", "6000", "4000", "1080", "ti", "ada", "sff", "blackwell",
                         "max-q", "mobile", "quadro", "2x", "x", "nvidia", "geforce", "48gb", "generation",
                         "workstation", "edition", "server", "d", "6000d", "a6000", ",", "|", "\u2122", "\u00d7"])
PHRASE = st.lists(st.one_of(WORDS, st.text(max_size=6)), max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_random_text_never_crashes(text):
    m = default_matcher()
    for x in m.find(text):
        assert x.count >= 1 and x.kind in ("supported", "unsupported", "ambiguous", "editions")


@settings(max_examples=300, deadline=None)
@given(PHRASE, st.sampled_from(TRAPS), PHRASE)
def test_inserting_a_trap_never_creates_a_match(before, trap, after):
    m = default_matcher()

    def supported(text):
        return sorted((x.card, x.count) for x in m.find(text) if x.kind == "supported")
    # A trap set off as its own item adds nothing to what the rest names.
    assert supported(f"{before}\n{trap}\n{after}") == supported(f"{before}\n{after}")
    # Run into the words before it, it may hide a name but never adds one of its own.
    inner = supported(f"{before} {trap}, {after}")
    assert len(inner) <= len(supported(before)) + len(supported(after))
