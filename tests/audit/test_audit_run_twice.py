"""``audit_paths`` gives a run that can be read twice, or says that it cannot."""

from __future__ import annotations

import io
import json
import os
import sys

import pytest
from audit_samples import AUCTION, LSPCI

import gpuclass
from gpuclass.audit import audit_paths, write_reports
from gpuclass.errors import InputError


@pytest.fixture
def inputs(tmp_path):
    feed = tmp_path / "feed.json"
    feed.write_text(json.dumps({"server": AUCTION}))
    dumps = tmp_path / "dumps"
    for name, text in sorted(LSPCI.items())[:3]:
        (dumps / name).mkdir(parents=True)
        (dumps / name / "lspci.txt").write_text(text)
    csv = tmp_path / "devices.csv"
    csv.write_text("server,vendor,device,class\nsrv1,10de,1b80,0300\nsrv1,10de,1b06,0300\nsrv2,8086,1572,0200\n")
    return [str(feed), str(dumps), str(csv)]


def _view(reports):
    return [(r.server, r.gpu_capable, r.slices, r.reason, tuple(r.problems)) for r in reports]


def test_a_run_read_to_its_end_reads_the_same_again(inputs):
    run = audit_paths(inputs)
    first = _view(run)
    assert len(first) > 3
    assert _view(run) == first          # iterated again
    buf = io.StringIO()
    write_reports(run, "csv", buf)      # and through the sinks' chunks
    assert buf.getvalue().count("\n") == len(first) + 1
    assert _view(run) == first


def test_the_readme_order_summary_then_page_sees_every_server(inputs, tmp_path):
    pytest.importorskip("matplotlib")
    run = gpuclass.audit_paths(inputs)
    once = gpuclass.fleet_summary(run)
    twice = gpuclass.fleet_summary(run)
    assert once.totals.servers == twice.totals.servers == len(_view(audit_paths(inputs)))
    page = gpuclass.write_html_report(run, tmp_path / "r.html")
    assert page.totals.servers == once.totals.servers


def test_a_run_half_read_goes_on_where_it_stopped(inputs):
    run = audit_paths(inputs)
    whole = _view(audit_paths(inputs))
    head = [next(run), next(run)]
    assert _view(head) + _view(run) == whole


def test_a_run_of_standard_input_says_it_cannot_be_read_twice(monkeypatch):
    data = json.dumps({"server": AUCTION}).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    run = audit_paths(["-"])
    assert len(_view(run)) > 0
    with pytest.raises(InputError, match="standard input.*read once"):
        list(run)


def test_a_second_read_sees_the_inputs_as_they_are_then(tmp_path):
    feed = tmp_path / "feed.json"
    feed.write_text(json.dumps({"server": AUCTION}))
    run = audit_paths([os.fspath(feed)])
    n = len(list(run))
    feed.write_text(json.dumps({"server": AUCTION[:1]}))
    assert len(list(run)) == 1 < n
