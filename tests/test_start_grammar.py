"""Grammars read without ``re`` on a command's start, held equal to their regular expressions.

``gpuclass scan`` starts without importing :mod:`re` (with :mod:`enum`, a few ms of it):
a sysfs entry's address (``gpuclass.ids.parse_address``) and a cache alias's target
(``gpuclass.db.aliases.is_cache_name``) are read by hand, and the patterns that stay
(:class:`gpuclass.lazy.Pattern`) compile when first used.  Each hand reader must accept
exactly what its expression accepts, with the same parts, on text drawn near the grammar's
edges and from all of Unicode.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass import ids, lazy
from gpuclass.db import aliases

SETTINGS = settings(max_examples=600, deadline=None)

# Digits of other scripts and letters that look like hex digits: int() would read some.
LOOKALIKES = ["\u0660", "\uff10", "\uff41", "\u0431", "\U0001d7ce", "\u00b2", "G", "g", "x", " ", "\t",
              "\n", "\x00", "-", "+", "_", "\u200b", "\u00e9"]
ADDRESS_ALPHABET = list("0123456789abcdefABCDEF:.") + LOOKALIKES


def oracle_address(text: str, domain: bool) -> tuple[int, int, int, int] | None:
    m = re.fullmatch(ids.ADDRESS_PATTERN, text)
    if m is None or (domain and m.group(1) is None):
        return None
    d, b, s, f = m.groups()
    return int(d, 16) if d else 0, int(b, 16), int(s, 16), int(f)


@st.composite
def address_text(draw):
    """An address with each part's length and characters near the edges, sometimes mangled."""
    hexdigit = st.sampled_from("0123456789abcdefABCDEF")
    parts = []
    if draw(st.booleans()):
        parts.append(draw(st.text(hexdigit, min_size=0, max_size=10)) + ":")
    parts.append(draw(st.text(hexdigit, min_size=0, max_size=3)) + ":")
    parts.append(draw(st.sampled_from("0123456789abcdefABCDEF")) * draw(st.integers(0, 1))
                 + draw(st.text(hexdigit, min_size=0, max_size=2)))
    parts.append(draw(st.sampled_from([".", "", ".."])) + draw(st.text(st.sampled_from("0123456789"), max_size=2)))
    text = "".join(parts)
    for _ in range(draw(st.integers(0, 2))):
        k = draw(st.integers(0, len(text)))
        text = text[:k] + draw(st.sampled_from(ADDRESS_ALPHABET)) + text[k + draw(st.integers(0, 1)):]
    return text


@SETTINGS
@given(st.one_of(address_text(), st.text(st.sampled_from(ADDRESS_ALPHABET), max_size=20), st.text(max_size=20)),
       st.booleans())
def test_parse_address_is_the_pattern(text, domain):
    assert ids.parse_address(text, domain=domain) == oracle_address(text, domain)


def test_parse_address_edges():
    # every written form the pattern accepts and refuses at its edges
    for text in ("0000:00:00.0", "ffffffff:ff:1f.7", "FFFF:E1:1F.7", "10000:e1:00.0", "e1:00.0",
                 "000:00:00.0", "123456789:00:00.0", "00:20.0", "00:1f.8", "00:1f.", "00:1f.00",
                 "0000:00:00.0\n", "\u0660\u0660:00.0", "00:00.0.0", "::00.0", "0000::00:00.0"):
        for domain in (False, True):
            assert ids.parse_address(text, domain=domain) == oracle_address(text, domain), (text, domain)


CACHE = r"pciids-[0-9a-f]{32}\.gpcdb"


@st.composite
def cache_name(draw):
    """A cache file name, then up to two characters replaced, put in or taken out."""
    name = "pciids-" + draw(st.text(st.sampled_from("0123456789abcdef"), min_size=32, max_size=32)) + ".gpcdb"
    for _ in range(draw(st.integers(0, 2))):
        k = draw(st.integers(0, len(name)))
        char = draw(st.sampled_from(list("0aAfFgG./-_\n") + ["\u0660", "\uff41", "\u00e9"]))
        cut = draw(st.integers(0, 1))
        name = name[:k] + draw(st.sampled_from([char, ""])) + name[k + cut:]
    return name


@SETTINGS
@given(st.one_of(cache_name(), st.text(max_size=50)))
def test_cache_name_is_the_pattern(name):
    assert aliases.is_cache_name(name) == (re.fullmatch(CACHE, name) is not None)


def test_cache_name_edges():
    """Every character of a cache name replaced, dropped or doubled, one at a time."""
    name = "pciids-" + "0123456789abcdef" * 2 + ".gpcdb"
    variants = [name, name + "\n", "x" + name]
    for k in range(len(name)):
        variants += [name[:k] + name[k + 1:], name[:k] + name[k] + name[k:]]
        variants += [name[:k] + c + name[k + 1:] for c in "0aAgG.-/\n\u0660\uff41"]
    for text in variants:
        assert aliases.is_cache_name(text) == (re.fullmatch(CACHE, text) is not None), text


def test_a_lazy_pattern_is_the_compiled_one():
    for pattern, text in ((r"(?<![0-9])([0-9]{3,5})", "GTX 1080 Ti 11GB, 6000 Ada"),
                          (rb"(?m)^#[ \t]*(Version|Date):([^\n]*)", b"#\tVersion: 1\n# Date: 2\nx")):
        lazy_one, compiled = lazy.Pattern(pattern), re.compile(pattern)
        assert lazy_one.findall(text) == compiled.findall(text)
        assert [m.groups() for m in lazy_one.finditer(text)] == [m.groups() for m in compiled.finditer(text)]
        assert lazy_one.sub(type(text)(), text) == compiled.sub(type(text)(), text)
        assert lazy_one.search(text).span() == compiled.search(text).span()
    unused = lazy.Pattern("(")  # compiled when used: the error comes then, not at import
    try:
        unused.search("x")
    except re.error:
        pass
    else:
        raise AssertionError("a bad pattern compiled")
