"""Card names as listings spell them: brand and series words on or off, ``Ti`` glued or apart,
any case, the words after the model number in any order; drawn for every allowlisted card,
and for its look-alikes, which must never count as it (issue 27)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass.policy import compile_policy
from gpuclass.textmatch import default_matcher
from gpuclass.textmatch.names import series_forms


@pytest.fixture(scope="module")
def m():
    return default_matcher()


def counted(m, text):
    return [(x.card, x.count) for x in m.find(text) if x.kind in ("supported", "editions")]


# How each allowlisted card may be spelled: brand words before it, its series word (and
# whether a listing may leave it out for a brand word), the words up to the model number,
# and the units after it, each (its spellings, whether it may be left out).
SPELLINGS = {
    "gtx-1080": dict(brands=["NVIDIA", "Nvidia", "GeForce", "NVIDIA GeForce"], series="GTX", optional=True,
                     head=[], model="1080", units=[]),
    "gtx-1080-ti": dict(brands=["NVIDIA", "Nvidia", "GeForce", "NVIDIA GeForce"], series="GTX", optional=True,
                        head=[], model="1080", units=[(["Ti"], False)]),
    "rtx-4000-sff-ada": dict(brands=["NVIDIA", "PNY NVIDIA"], series="RTX", optional=False, head=[], model="4000",
                             units=[(["SFF", "Small Form Factor"], False), (["Ada", "Ada Generation"], True)]),
    "rtx-6000-ada": dict(brands=["NVIDIA", "PNY Nvidia"], series="RTX", optional=False, head=[], model="6000",
                         units=[(["Ada", "Ada Generation"], False)]),
    "rtx-pro-6000-blackwell-workstation": dict(
        brands=["NVIDIA"], series="RTX", optional=False, head=["PRO"], model="6000",
        units=[(["Blackwell"], True), (["Workstation", "Workstation Edition"], False)]),
    "rtx-pro-6000-blackwell-max-q": dict(
        brands=["NVIDIA"], series="RTX", optional=False, head=["PRO"], model="6000",
        units=[(["Blackwell"], True), (["Max-Q", "MaxQ", "Max Q"], False),
               (["Workstation", "Workstation Edition"], True)]),
    "rtx-pro-6000-blackwell-server": dict(
        brands=["NVIDIA"], series="RTX", optional=False, head=["PRO"], model="6000",
        units=[(["Blackwell"], True), (["Server", "Server Edition"], False)]),
}
# What each card's look-alikes add to its name (``Max-Q`` is an edition of the RTX PRO 6000).
LOOKALIKE_SUFFIXES = {
    "gtx": ["Mobile", "Max-Q", "MaxQ", "Laptop GPU", "Notebook", "Mining", "Mining Edition", "Embedded", "MXM"],
    "rtx": ["Mobile", "Laptop GPU", "Laptop", "Embedded", "Embedded GPU", "Notebook", "Mining"],
}
CONTEXT = st.sampled_from([("", ""), ("GPU - ", ""), ("GPU: ", ""), ("Grafikkarte: ", ""), ("1x ", ""),
                           ("", " (new)"), ("Intel Xeon E-2276G, ", ", 2x SSD 960 GB")])


def test_every_allowlisted_card_has_its_spellings_drawn():
    assert set(SPELLINGS) == set(compile_policy(None).card_ids)


def _case(draw, text: str) -> str:
    style = draw(st.sampled_from(["as is", "upper", "lower", "title", "random"]))
    if style == "random":
        flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
        return "".join(c.swapcase() if f else c for c, f in zip(text, flips))
    return {"as is": text, "upper": text.upper(), "lower": text.lower(), "title": text.title()}[style]


def _join(draw, words: list[str]) -> str:
    return "".join(w + draw(st.sampled_from([" ", " ", "-", "  "])) for w in words[:-1]) + words[-1]


@st.composite
def spelling(draw, card: str, lookalike: bool = False, context: bool = True):
    """One spelling of ``card`` (with a look-alike word after it where ``lookalike``), in
    a line of a listing where ``context``."""
    spec = SPELLINGS[card]
    brand = draw(st.sampled_from(["", *spec["brands"]]))
    series = spec["series"]
    if spec["optional"] and brand and draw(st.booleans()):
        series = ""  # "GeForce 1080 Ti": a brand word for the series word
    units = [draw(st.sampled_from(alts)) for alts, optional in spec["units"]
             if not optional or draw(st.booleans())]
    if len(units) > 1 and draw(st.booleans()):
        units = draw(st.permutations(units))
    model = spec["model"]
    if series and not spec["head"] and draw(st.booleans()):
        model, series = series + draw(st.sampled_from(["", "-"])) + model, ""  # "GTX1080", "RTX-4000"
    if units and units[0] == "Ti" and draw(st.booleans()):
        model, units = model + units[0], units[1:]  # "1080Ti"
    words = [w for w in [*brand.split(), series, *spec["head"], model, *" ".join(units).split()] if w]
    if lookalike:
        words += draw(st.sampled_from(LOOKALIKE_SUFFIXES[spec["series"].lower()])).split()
    before, after = draw(CONTEXT) if context else ("", "")
    return before + _case(draw, _join(draw, words)) + after


CARDS = st.sampled_from(sorted(SPELLINGS))


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_spelling_of_one_card_counts_as_that_card(data):
    card = data.draw(CARDS)
    text = data.draw(spelling(card))
    found = default_matcher().find(text)
    assert [(x.kind, x.card, x.count) for x in found] == [("supported", card, 1)], (text, found)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_look_alike_of_a_card_never_counts(data):
    card = data.draw(CARDS)
    text = data.draw(spelling(card, lookalike=True))
    found = default_matcher().find(text)
    assert found and not [x for x in found if x.kind in ("supported", "editions")], (text, found)


@settings(max_examples=200, deadline=None)
@given(st.data(), st.integers(2, 8), st.sampled_from(["{n}x ", "{n} x ", "{n}x GPU - ", "{n} pcs "]))
def test_a_count_attaches_to_any_spelling(data, n, form):
    card = data.draw(CARDS)
    text = form.format(n=n) + data.draw(spelling(card, context=False))
    assert counted(default_matcher(), text) == [(card, n)], text


# -- traps: names that must never count as an allowlisted card ----------------------

@st.composite
def trap(draw, words: list[list[str]], brands=("", "NVIDIA", "Nvidia")):
    """A trap's name: each slot one of its spellings, a brand word before it, any case."""
    chosen = [w for slot in words if (w := draw(st.sampled_from(slot)))]
    brand = draw(st.sampled_from(brands))
    before, after = draw(CONTEXT)
    return before + _case(draw, _join(draw, [*brand.split(), *" ".join(chosen).split()])) + after


TRAPS = {
    # the mining card on the GTX 1080's chip
    "p104-100": trap([["P104-100", "P104 100", "P104100"], ["", "8GB", "4GB"]], ("", "NVIDIA", "Nvidia", "GPU -")),
    "p102-100": trap([["P102-100", "P102 100"], ["", "10GB", "5GB"]]),
    # RTX 4000 Ada (27b2), not the RTX 4000 SFF Ada
    "rtx-4000-ada": trap([["RTX 4000", "RTX4000", "RTX-4000"], ["Ada", "Ada Generation"], ["", "20GB", "20 GB"]]),
    # Quadro RTX 6000 (1e30), not the RTX 6000 Ada
    "quadro-rtx-6000": trap([["Quadro RTX 6000", "Quadro RTX6000", "Quadro-RTX 6000"], ["", "24GB", "24 GB"]]),
    # the 10 GB GP102, not the GTX 1080 Ti
    "gtx-1080-ti-10gb": trap([["GTX 1080 Ti", "GTX1080Ti", "1080 Ti", "1080Ti"], ["10GB", "10 GB"]],
                             ("", "NVIDIA", "GeForce", "NVIDIA GeForce")),
    # other GeForce cards shortened as the allowlisted ones are
    "other-geforce": trap([["GTX", ""], ["1070", "1070 Ti", "1060", "1050 Ti", "980 Ti", "1660 SUPER"]],
                          ("GeForce", "NVIDIA", "NVIDIA GeForce")),
}


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_trap_never_counts_as_an_allowlisted_card(data):
    name = data.draw(st.sampled_from(sorted(TRAPS)))
    text = data.draw(TRAPS[name])
    found = default_matcher().find(text)
    assert not [x for x in found if x.kind in ("supported", "editions")], (name, text, found)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["1920x1080", "1920 x 1080", "1920 X 1080", "1920\u00d71080", "1920*1080", "1080p",
                        "1920x1080@60Hz", "1280x1024 / 1920x1080", "Full HD (1080p)", "1080 lines"]),
       st.sampled_from(["IPMI / KVM-over-IP, {r}", "KVM {r}", "Remote console {r}", "{r}", "VGA onboard, {r}",
                        "GPU - onboard ({r})", "Monitor: 24\" {r}"]),
       st.sampled_from(["", "NVIDIA ", "GTX "]))
def test_a_screen_resolution_is_no_card(resolution, form, brand):
    text = form.format(r=resolution)
    assert default_matcher().find(text) == [], text
    if text.startswith("1080"):
        return  # "NVIDIA 1080 lines", "GTX 1080p": a brand word before a bare 1080 is the card's name
    assert counted(default_matcher(), brand + text) == [], brand + text


@pytest.mark.parametrize("text", ["GPU - NVIDIA GeForce 1080 Ti", "GeForce 1080", "GeForce 1080Ti", "NVIDIA 1080 Ti",
                                  "GTX1080Ti", "nvidia geforce 1080ti", "2x GeForce 1080 Ti"])
def test_the_listing_spellings_of_issue_27(m, text):
    [x] = m.find(text)
    assert x.kind == "supported" and x.card in ("gtx-1080", "gtx-1080-ti")


@pytest.mark.parametrize("text", ["1080 Ti", "MGTX 1080 Ti", "1080", "Port 1080", "GeForce 1080 Mobile",
                                  "NVIDIA 1080 Max-Q", "GeForce 1080 Ti 10GB", "NVIDIA 1080 mining"])
def test_a_model_number_without_a_brand_or_with_a_look_alike_word_is_no_card(m, text):
    assert counted(m, text) == []


@pytest.mark.parametrize("text", ["RTX 6000", "NVIDIA RTX 6000", "RTX 4000", "RTX PRO 6000", "Nvidia 6000"])
def test_shortened_names_of_cards_that_differ_in_support_stay_ambiguous(m, text):
    assert [x.kind for x in m.find(text)] in ([], ["ambiguous"], ["unsupported"]), m.find(text)


def test_series_forms_leave_the_series_word_out_only_before_a_model_number():
    assert series_forms(["gtx", "1080"]) == [["geforce", "1080"], ["nvidia", "1080"]]  # never a bare 1080
    assert series_forms(["gtx", "1080", "ti"], bare=False) == [["geforce", "1080", "ti"], ["nvidia", "1080", "ti"]]
    assert series_forms(["gtx", "1060", "6gb"])[-1] == ["nvidia", "1060", "6", "gb"]  # a memory size is no word
    assert series_forms(["gtx", "titan", "x"]) == series_forms(["rtx", "6000", "ada"]) == []
