"""The CSV sink writes the csv module's lines, byte for byte, whichever way a line is made
(the csv module on a report's flat row, or the compiled line maker on a listing batch's
shared outcome); the totals of a batch are its reports' totals; the reports a listing audit
builds keep the record's passthrough fields in order."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import compiled_feed
from gpuclass.audit import write_reports
from gpuclass.audit.render import finish, flat_row
from gpuclass.audit.results.columns import PASSTHROUGH, flat_columns
from gpuclass.audit.results.listing import ReportBatch, SharedOutcome
from gpuclass.audit.results.reports import AuditSummary, ServerReport, passthrough
from gpuclass.policy import compile_policy

CARD_IDS = tuple(compile_policy().card_ids)

# texts as auction feeds hold them, and the characters that need quoting
TEXT = st.text(st.sampled_from(list("ab 1,\";\n\r\t'x\u00e9\u2122\u2028\\")) | st.characters(), max_size=12)
VALUE = (TEXT | st.none() | st.booleans() | st.integers(-10**20, 10**20)
         | st.floats(allow_nan=True, allow_infinity=True)
         | st.lists(st.integers(), max_size=2) | st.dictionaries(TEXT, st.integers(), max_size=2))
CARD = st.fixed_dictionaries({"card": st.sampled_from(CARD_IDS) | TEXT, "name": TEXT, "count": st.integers(0, 9),
                              "slices": st.integers(0, 36)})


@st.composite
def reports(draw):
    extra = draw(st.dictionaries(st.sampled_from(PASSTHROUGH), VALUE, max_size=4))
    return ServerReport(draw(st.integers(1, 10**6)), draw(TEXT), draw(st.none() | TEXT), draw(st.booleans()),
                        draw(st.lists(CARD, max_size=2)), draw(st.integers(0, 9)), draw(st.integers(0, 40)),
                        draw(st.lists(TEXT, max_size=2)), draw(st.integers(0, 9)), draw(TEXT),
                        draw(st.lists(TEXT, max_size=2)), draw(st.integers(1, 3)), extra)


def _csv_module(rows) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(flat_columns(CARD_IDS))
    w.writerows(rows)
    return buf.getvalue()


@settings(max_examples=200, deadline=None)
@given(st.lists(reports(), max_size=40))
def test_the_csv_output_is_the_csv_modules_output(rs):
    buf = io.StringIO()
    write_reports(rs, "csv", buf)
    assert buf.getvalue() == _csv_module(flat_row(r, CARD_IDS) for r in rs)


def test_passthrough_keeps_the_passthrough_fields_in_their_order():
    full = {"id": 1, **{k: i for i, k in reversed(list(enumerate(PASSTHROUGH)))}}
    assert tuple(passthrough(full)) == PASSTHROUGH
    assert passthrough(full) == {k: i for i, k in enumerate(PASSTHROUGH)}
    assert passthrough({"id": 1, "datacenter": "FSN1", "cpu": None}) == {"cpu": None, "datacenter": "FSN1"}
    assert passthrough({}) == {}


# -- a listing's batches: reports made on demand, the CSV and totals read from the shared outcome

@st.composite
def batches(draw):
    outcomes = [SharedOutcome(finish(draw(reports())), CARD_IDS) for _ in range(draw(st.integers(1, 3)))]
    entries = []
    for row in range(draw(st.integers(0, 12))):
        if draw(st.booleans()):
            entries.append(finish(draw(reports())))  # a record of its own (problems, a malformed one)
        else:
            record = {"id": row, "description": ["GTX 1080"],  # a record: only its passthrough fields stay
                      **draw(st.dictionaries(st.sampled_from(PASSTHROUGH), VALUE, max_size=4))}
            entries.append((row + 1, draw(TEXT), draw(st.none() | TEXT), draw(st.sampled_from(outcomes)), record))
    return ReportBatch(entries)


@settings(max_examples=300, deadline=None)
@given(batches())
def test_a_batch_writes_and_counts_what_its_reports_say(batch):
    made = [flat_row(r, CARD_IDS) for r in ReportBatch(batch.entries)]  # another batch: reports made apart
    buf = io.StringIO()
    summary = write_reports([batch], "csv", buf)
    assert buf.getvalue() == _csv_module(made)
    alone = AuditSummary()
    alone.add_many(batch)
    assert summary == alone


@pytest.fixture(scope="module")
def compiled_lines():
    return compiled_feed("csv_lines")


class _Record(dict):
    """A record whose mapping is not a plain dict (a reader's own type): read through its get."""

    def get(self, key, default=None):
        return "via get" if key == "datacenter" else super().get(key, default)


@st.composite
def odd_batches(draw):
    """Batches as :func:`batches` makes them, and records of another mapping type, servers
    that are not text, floats of every kind and texts of wide characters."""
    batch = draw(batches())
    floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([-0.0, 0.0, 5e-324, 1e300, 329.0])
    entries = []
    for e in batch.entries:
        if type(e) is tuple and draw(st.booleans()):
            row, source, server, outcome, rec = e
            rec = {**rec, "price": draw(floats), "hourly_price": draw(floats),
                   "cpu": draw(st.sampled_from(["Ryzen 9", "Xeon™", "\U0001f600 CPU", "Ä,b"]))}
            if draw(st.booleans()):
                rec = _Record(rec)
            e = (row, source, draw(st.none() | TEXT | st.integers(0, 9)), outcome, rec)
        entries.append(e)
    return ReportBatch(entries)


@settings(max_examples=300, deadline=None)
@given(odd_batches())
def test_the_compiled_lines_are_the_csv_modules_lines(compiled_lines, batch):
    """The compiled line maker (gpuclass._feed.csv_lines) gives each shared entry the csv
    module's line of its report, or None (then the csv module writes it): never another."""
    shared = [e for e in batch.entries if type(e) is tuple and type(e[4]) is dict]
    lines = compiled_lines(shared, PASSTHROUGH)
    assert ReportBatch(batch.entries).csv_lines().count(None) >= len(batch.entries) - len(shared)
    assert len(lines) == len(shared)
    reports = ReportBatch(shared).reports()
    for line, r in zip(lines, reports):
        assert line is None or line == _csv_module([flat_row(r, CARD_IDS)]).split("\n", 1)[1]
    plain = [line for line, e in zip(lines, shared) if isinstance(e[2], str) and "," not in e[2]
             and '"' not in e[2] and "\n" not in e[2] and "\r" not in e[2] and type(e[4]) is dict
             and all(v is None or type(v) in (str, int, float) and "," not in str(v) and '"' not in str(v)
                     and "\n" not in str(v) and "\r" not in str(v) for v in map(e[4].get, PASSTHROUGH))
             and "," not in e[1] and '"' not in e[1] and "\n" not in e[1] and "\r" not in e[1]]
    assert None not in plain  # a record of plain cells takes the direct way


def test_the_compiled_lines_take_four_passthrough_keys(compiled_lines):
    with pytest.raises(ValueError):
        compiled_lines([], ("cpu",))
    with pytest.raises(TypeError):
        compiled_lines(None, PASSTHROUGH)


def test_a_batch_makes_each_report_once_and_apart_from_its_outcome():
    shared = SharedOutcome(finish(ServerReport(0, "", None, cards=[
        {"card": "gtx-1080", "name": "GeForce GTX 1080", "count": 1, "slices": 4, "source": "text",
         "evidence": "gtx 1080"}])), CARD_IDS)
    batch = ReportBatch([(1, "f", "a", shared, {}), (2, "f", "b", shared, {"cpu": "x"})])
    first = batch.reports()
    assert batch.reports() is first and [r.server for r in batch] == ["a", "b"]
    first[0].cards[0]["count"] = 99  # a report's data is its own
    assert shared.report.cards[0]["count"] == 1 and first[1].cards[0]["count"] == 1
    line = batch.csv_lines()[1]
    assert line is None or line == "2,f,b,True,gtx-1080 x1,1,4,,0,1x GeForce GTX 1080: 4 slices,,1,1,0,0,0,0,0,0,x,,,\n"
