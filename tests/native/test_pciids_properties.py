"""Hypothesis: round trips through pci.ids text, and compiled core == twin on any bytes."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuclass._native import twin
from gpuclass.errors import PciIdsError

from helpers import names_of

# The core fixtures are stateless modules, so sharing them across examples is safe.
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# Names: any text without line breaks or NUL, no leading/trailing blanks (the
# format strips one trailing blank and all leading ones), not starting with '#'.
name_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
    min_size=1,
    max_size=30,
).map(lambda s: s.strip(" \t")).filter(lambda s: s and not s.startswith("#") and len(s.encode()) < 900)

id16 = st.integers(0, 0xFFFF)
id8 = st.integers(0, 0xFF)


@st.composite
def databases(draw):
    vendors = draw(st.dictionaries(id16, st.tuples(name_text, st.dictionaries(
        id16, st.tuples(name_text, st.dictionaries(st.tuples(id16, id16), name_text, max_size=3)),
        max_size=4)), max_size=6))
    classes = draw(st.dictionaries(id8, st.tuples(name_text, st.dictionaries(
        id8, st.tuples(name_text, st.dictionaries(id8, name_text, max_size=3)), max_size=3)), max_size=3))
    gensub_vendor = draw(st.sampled_from(sorted(vendors)) if vendors else st.none())
    gensub = draw(st.dictionaries(id16, name_text, max_size=3)) if gensub_vendor is not None else {}
    return vendors, classes, gensub_vendor, gensub


@st.composite
def renderings(draw):
    """How to write the file: hex case, separators, comments, line ends."""
    return {
        "upper": draw(st.booleans()),
        "sep": draw(st.sampled_from(["  ", " ", "\t", " \t "])),
        "crlf": draw(st.booleans()),
        "comments": draw(st.booleans()),
        "final_newline": draw(st.booleans()),
    }


def render(db, how) -> bytes:
    vendors, classes, gensub_vendor, gensub = db
    h = (lambda v, w: f"{v:0{w}X}") if how["upper"] else (lambda v, w: f"{v:0{w}x}")
    sep = how["sep"]
    out = ["# generated", ""]
    for v, (vname, devices) in vendors.items():
        out.append(f"{h(v, 4)}{sep}{vname}")
        if how["comments"]:
            out.append("\t# comment in a vendor block")
        for d, (dname, subs) in devices.items():
            out.append(f"\t{h(d, 4)}{sep}{dname}")
            for (sv, sd), sname in subs.items():
                out.append(f"\t\t{h(sv, 4)} {h(sd, 4)}{sep}{sname}")
    for c, (cname, subs) in classes.items():
        out.append(f"C {h(c, 2)}{sep}{cname}")
        for s, (sname, progifs) in subs.items():
            out.append(f"\t{h(s, 2)}{sep}{sname}")
            for p, pname in progifs.items():
                out.append(f"\t\t{h(p, 2)}{sep}{pname}")
    if gensub_vendor is not None:
        out.append(f"S {h(gensub_vendor, 4)}")
        for sd, name in gensub.items():
            out.append(f"\t{h(sd, 4)}{sep}{name}")
    text = ("\r\n" if how["crlf"] else "\n").join(out)
    if how["final_newline"]:
        text += "\r\n" if how["crlf"] else "\n"
    return text.encode("utf-8")


def expected_tables(db):
    vendors, classes, gensub_vendor, gensub = db
    exp = {t: {} for t in ("vendor", "device", "subsys", "gensub", "class", "subclass", "progif")}
    for v, (vname, devices) in vendors.items():
        exp["vendor"][v] = vname
        for d, (dname, subs) in devices.items():
            exp["device"][(v << 16) | d] = dname
            for (sv, sd), sname in subs.items():
                exp["subsys"][(v << 48) | (d << 32) | (sv << 16) | sd] = sname
    for c, (cname, subs) in classes.items():
        exp["class"][c] = cname
        for s, (sname, progifs) in subs.items():
            exp["subclass"][(c << 8) | s] = sname
            for p, pname in progifs.items():
                exp["progif"][(c << 16) | (s << 8) | p] = pname
    for sd, name in gensub.items():
        exp["gensub"][(gensub_vendor << 16) | sd] = name
    return exp


@SETTINGS
@given(db=databases(), how=renderings())
def test_written_database_parses_back(core, db, how):
    tables, skipped = core.parse_pci_ids(render(db, how))
    assert skipped == []
    exp = expected_tables(db)
    for table, mapping in exp.items():
        assert names_of(tables, table) == mapping, table


FRAGMENTS = [b"10de", b"1B80", b"C ", b"S ", b"X ", b"\t", b"\t\t", b"\t\t\t", b" ", b"  ", b"\n", b"\r\n",
             b"\r", b"#", b"00", b"zz", b"name", b"\xc3\xa9", b"\xff", b"\x00", b"\xed\xa0\x80", b"0001 0002"]


@SETTINGS
@given(data=st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from(FRAGMENTS), max_size=80).map(b"".join),
), strict=st.booleans())
def test_any_bytes_give_identical_results_or_identical_errors(compiled_core, data, strict):
    outcomes = []
    for mod in (compiled_core, twin):
        try:
            tables, skipped = mod.parse_pci_ids(data, strict, "fuzz.ids")
        except PciIdsError as exc:  # the only error allowed
            outcomes.append(("error", exc.filename, exc.line, exc.reason))
        else:
            outcomes.append(("ok", {k: (v.dtype.str, v.tolist()) for k, v in tables.items()}, skipped))
    assert outcomes[0] == outcomes[1]
    if not strict:
        assert outcomes[0][0] == "ok", "lenient parsing never raises on content"


@SETTINGS
@given(keys=st.lists(st.integers(0, 2**64 - 1), unique=True, max_size=200),
       queries=st.lists(st.integers(0, 2**64 - 1), max_size=200),
       dtype=st.sampled_from([np.uint16, np.uint32, np.uint64]))
def test_key_index_agrees_with_twin(compiled_core, keys, queries, dtype):
    info = np.iinfo(dtype)
    keys = np.array(sorted({k & int(info.max) for k in keys}), dtype=dtype)
    queries = np.array([q & int(info.max) for q in queries] + keys[:5].tolist(), dtype=dtype)
    a = compiled_core.KeyIndex(keys).lookup(queries)
    b = twin.KeyIndex(keys).lookup(queries)
    assert a.dtype == b.dtype == np.int32
    assert np.array_equal(a, b)
    for q, pos in zip(queries.tolist(), a.tolist()):
        assert (pos >= 0) == (q in set(keys.tolist()))
        if pos >= 0:
            assert int(keys[pos]) == q
