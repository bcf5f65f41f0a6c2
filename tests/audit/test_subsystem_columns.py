"""What a device table's subsystem columns feed, under a policy with and without subsystem rules.

Under the default policy (no rule names a subsystem) the subsystem *values* never change
an answer, but their *validity* does (a malformed cell or a lone half flags the row, and
its card does not count: RELIABILITY.md), so the columns are still read; the engine skips
parsing them only where no row can be flagged for them (``_subsystem_feed``: dictionary
columns whose entries are all good and that miss no cell, or columns missing every cell),
and these tests hold that shortcut equal to the full parse.  Under a policy with
subsystem rules the values decide the card, as ``CompiledPolicy.rule_for`` says.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gpuclass.audit import audit_table  # noqa: E402
from gpuclass.audit.engine import devices as engine  # noqa: E402
from gpuclass.errors import InputError  # noqa: E402
from gpuclass.ids import CELL_OK, cell_parts  # noqa: E402
from gpuclass.policy import compile_policy  # noqa: E402

EXAMPLE_POLICY = Path(__file__).resolve().parents[2] / "examples" / "policy.yaml"

FIELDS = ("server", "vendor", "device", "subvendor", "subdevice", "class")
# clean vendor, device and class cells: only the subsystem cells are ever malformed
VENDORS = ["10de", "8086", " 10DE "]
DEVICES = ["26b1", "1e30", "27b0", "2bb5", "1533", "1b80"]
CLASSES = ["0300", "0302", "030000", "0403", "0200"]
# subsystem cells: good (text of several spellings), missing, blank and malformed
SUBSYSTEM = ["10de", "12ba", "129e", "0000", "ffff", " 0x12BA ", "[10de]", None, "", "  ",
             "zz", "12345", "1_0", "\u00a0"]

ROW = st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.sampled_from(VENDORS), st.sampled_from(DEVICES),
                st.sampled_from(SUBSYSTEM), st.sampled_from(SUBSYSTEM), st.sampled_from(CLASSES))
TABLES = st.lists(ROW, min_size=1, max_size=60)
# tables the shortcut applies to: good subsystems, all present, or all missing
GOOD = ["10de", "12ba", "129e", "0000", "ffff", " 0x12BA ", "[10de]"]
CLEAN_ROW = st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.sampled_from(VENDORS),
                      st.sampled_from(DEVICES), st.sampled_from(GOOD), st.sampled_from(GOOD),
                      st.sampled_from(CLASSES))
CLEAN_TABLES = st.one_of(
    st.lists(CLEAN_ROW, min_size=1, max_size=60),
    st.lists(CLEAN_ROW, min_size=1, max_size=60).map(lambda rows: [(*r[:3], None, None, r[5]) for r in rows]))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _table(rows, fields=FIELDS, dictionary=False):
    def col(f):
        a = pa.array([r[FIELDS.index(f)] for r in rows], pa.string())
        return a.dictionary_encode() if dictionary and f != "server" else a
    return pa.table({f: col(f) for f in fields})


@contextlib.contextmanager
def _full_parse():
    """The engine with its subsystem shortcut off: every subsystem column parsed."""
    old, engine._FULL_PARSE = engine._FULL_PARSE, True
    try:
        yield
    finally:
        engine._FULL_PARSE = old


def _both_ways(table, core, policy=None):
    """The answers with the shortcut and with the full parse (they must be equal)."""
    fast = _answers(audit_table(table, policy=policy, kernel=core))
    with _full_parse():
        full = _answers(audit_table(table, policy=policy, kernel=core))
    assert fast == full
    return fast


def _answers(result):
    return result.table.to_pylist()


def _state(cell):
    return cell_parts(cell, 4)[0] if cell is not None else 1


def _sub_ok(row):
    return _state(row[3]) == CELL_OK and _state(row[4]) == CELL_OK


def _sub_clean(row):
    """Whether a row's subsystem is a valid pair or wholly missing (nothing to flag)."""
    states = {_state(row[3]), _state(row[4])}
    return states == {CELL_OK} or CELL_OK not in states and all(s == 1 for s in states)


@SETTINGS
@given(rows=TABLES, other=st.sampled_from(["1234", "abcd", "0000"]), dictionary=st.booleans())
def test_default_policy_reads_only_the_subsystems_validity(core, rows, other, dictionary):
    """No rule of the default policy names a subsystem: replacing every good subsystem
    value with another good one changes nothing, whatever else the table holds."""
    swapped = [(*r[:3], other if _state(r[3]) == CELL_OK else r[3],
                other if _state(r[4]) == CELL_OK else r[4], r[5]) for r in rows]
    assert (_both_ways(_table(rows, dictionary=dictionary), core)
            == _both_ways(_table(swapped, dictionary=dictionary), core))


@SETTINGS
@given(rows=st.one_of(TABLES, CLEAN_TABLES), dictionary=st.booleans())
def test_default_policy_answers_as_without_the_columns_when_they_are_clean(core, rows, dictionary):
    """A table whose subsystems are all valid pairs or wholly missing answers, under the
    default policy, as the same table without its subsystem columns; one with a
    malformed cell or a lone half does not: that row is flagged (the contract that keeps
    the columns read)."""
    full = _both_ways(_table(rows, dictionary=dictionary), core)
    dropped = _answers(audit_table(_table(rows, ("server", "vendor", "device", "class")), kernel=core))
    if all(_sub_clean(r) for r in rows):
        assert full == dropped
    else:
        flagged = {r[0] for r in rows if not _sub_clean(r)}
        got = {s["server"]: s["invalid_rows"] for s in full}
        assert {s for s, n in got.items() if n} == flagged
        assert all(s["invalid_rows"] == 0 for s in dropped)


@SETTINGS
@given(rows=st.one_of(TABLES, CLEAN_TABLES), dictionary=st.booleans())
def test_subsystem_rules_decide_by_the_values(core, rows, dictionary):
    """Under a policy with subsystem rules (examples/policy.yaml: a Quadro RTX 6000 by its
    subsystem, the RTX 8000 denied) each server's slices and cards are those the one
    ``rule_for`` gives row by row; a row with a malformed or lone subsystem counts nothing."""
    compiled = compile_policy(EXAMPLE_POLICY)
    want: dict[str, list[int]] = {}
    for r in rows:
        s = want.setdefault(r[0], [0, 0])
        if not _sub_clean(r):
            s[1] += 1
            continue
        if r[5].strip() not in ("0300", "0302", "030000"):
            continue
        sub = (cell_parts(r[3], 4)[1], cell_parts(r[4], 4)[1]) if _sub_ok(r) else (None, None)
        hit = compiled.rule_for(cell_parts(r[1], 4)[1], cell_parts(r[2], 4)[1], *sub)
        if hit is not None and hit.card >= 0:
            s[0] += compiled.cards[hit.card]["slices"]
    got = {s["server"]: [s["slices"], s["invalid_rows"]]
           for s in _both_ways(_table(rows, dictionary=dictionary), core, compiled)}
    assert got == want


def test_needs_subsystem_is_whether_the_kernels_tables_have_subsystem_keys():
    deny_only = {"cards": [], "deny": [{"vendor": "10de", "device": "1e30", "subvendor": "10de",
                                        "subdevice": "129e", "reason": "x"}]}
    for policy, want in ((None, False), (EXAMPLE_POLICY, True), (deny_only, True)):
        compiled = compile_policy(policy)
        assert compiled.needs_subsystem is want
        assert (compiled.tables.sub_keys.shape[0] > 0) is want


def test_the_shortcut_applies_only_where_nothing_can_be_flagged(core):
    """Dictionary columns of good entries and no missing cell, or columns missing every
    cell, are dropped; a bad entry (even one no row uses), a missing cell, plain text or a
    policy with subsystem rules keeps them."""
    compiled = compile_policy()
    good = pa.array(["10de", "12ba"]).dictionary_encode()
    feed = engine._subsystem_feed
    assert feed([1, 2, 3, good, good], compiled, core)[3:] == [None, None]
    nulls = pa.array([None, None], pa.string())
    assert feed([1, 2, 3, nulls, None], compiled, core)[3:] == [None, None]
    unused_bad = pa.DictionaryArray.from_arrays(pa.array([0, 0], pa.int32()), pa.array(["10de", "zz"]))
    gap = pa.array(["10de", None]).dictionary_encode()
    text = pa.array(["10de", "12ba"])
    for sv, sd in ((good, unused_bad), (good, gap), (text, text), (good, None), (nulls, good)):
        assert feed([1, 2, 3, sv, sd], compiled, core)[3:] == [sv, sd]
    assert feed([1, 2, 3, good, good], compile_policy(EXAMPLE_POLICY), core)[3:] == [good, good]
    # lying buffers still reach the kernel, which refuses them (RELIABILITY.md)
    lying = pa.DictionaryArray.from_arrays(pa.array([0, 5], pa.int32()), pa.array(["10de", "12ba"]), safe=False)
    assert feed([1, 2, 3, good, lying], compiled, core)[3:] == [good, lying]
    table = pa.table({"server": ["a", "b"], "vendor": ["10de"] * 2, "device": ["27b0"] * 2, "class": ["0300"] * 2,
                      "subvendor": good, "subdevice": lying})
    with pytest.raises(InputError, match="subdevice"):
        audit_table(table, kernel=core)
