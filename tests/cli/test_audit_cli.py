"""``gpuclass audit``: its answers through ``gpuclass.cli.main`` in this process, and the
command's own process (``console``) where what it imports matters."""

from __future__ import annotations

import json

import pytest

from audit_samples import AUCTION, LSPCI
from helpers import run_in_process as run


def test_audit_feed_json(tmp_path):
    p = tmp_path / "auction.json"
    p.write_text(json.dumps({"server": AUCTION}))
    proc = run("audit", str(p), "--format", "json")
    assert proc.returncode == 1, proc.stderr  # one record lists GPU without a card
    doc = json.loads(proc.stdout)
    assert len(doc["reports"]) == len(AUCTION)
    assert doc["summary"]["gpu_capable"] == 6 and doc["summary"]["slices"] == 32
    assert proc.stderr == ""  # no progress bar: stderr is not a terminal


def test_audit_several_files_table(tmp_path):
    d = tmp_path / "dumps"
    d.mkdir()
    for name, text in LSPCI.items():
        if name != "broken":
            (d / name).write_text(text)
    nd = tmp_path / "x.ndjson"
    nd.write_text(json.dumps(AUCTION[0]) + "\n")
    proc = run("audit", str(d), str(nd), check_rc=0)
    assert "gex130-1" in proc.stdout and "6 servers from 6 input rows" in proc.stdout


def test_audit_csv_and_ndjson_formats(tmp_path):
    p = tmp_path / "ids.csv"
    p.write_text("server,vendor,device,subvendor,subdevice,class\ns1,10de,27b0,10de,16fa,0300\n")
    proc = run("audit", str(p), "--format", "csv", check_rc=0)
    assert proc.stdout.splitlines()[1].startswith("1,") and "rtx-4000-sff-ada x1" in proc.stdout
    proc = run("audit", str(p), "--format", "ndjson", check_rc=0)
    assert [json.loads(x)["server"] for x in proc.stdout.splitlines()] == ["s1"]  # servers only
    assert "1 servers from 1 input rows" in proc.stderr
    proc = run("audit", str(p), "--format", "ndjson", "--ndjson-summary", check_rc=0)
    assert json.loads(proc.stdout.splitlines()[-1])["summary"]["slices"] == 4


def test_audit_errors(tmp_path):
    proc = run("audit", str(tmp_path / "missing.json"))
    assert proc.returncode == 3 and proc.stderr.count("\n") == 1
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    proc = run("audit", str(p))
    assert proc.returncode == 2 and "text column" in proc.stderr
    proc = run("audit", str(p), "--format", "xml")
    assert proc.returncode == 2


_CONSOLE = """import sys
{first}
from gpuclass.cli import console
sys.argv = ["gpuclass", "audit", *sys.argv[1:]]
code = console()
print(code, *(m in sys.modules and sys.modules[m] is not None for m in ("pandas", "cloudpickle")),
      "concurrent.futures" in sys.modules, "argparse" in sys.modules)
"""


def test_the_command_audits_parquet_without_pandas_and_answers_alike(tmp_path):
    """pyarrow would import pandas (0.2 s) to ask whether objects are pandas ones, and
    cloudpickle where it is installed: the command's process does without them, with the
    same output as a process that has them loaded already (as a user's own process may).
    Its writer thread is a thread of its own (``concurrent.futures`` imports ``logging``),
    and its command line is read without argparse (:mod:`gpuclass.cli.quickargs`)."""
    import subprocess
    import sys

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pytest.importorskip("pandas")
    pytest.importorskip("cloudpickle")  # the test extra installs it (with dask)
    from helpers import outside_tree

    rows = {"server": ["a", "a", "b", "c", "c"], "vendor": ["10de", "10de", "10de", "8086", "zz"],
            "device": ["27b0", "22bc", "1e30", "1533", "1"], "class": ["0300", "0403", "0300", "0200", "0300"]}
    src = tmp_path / "devices.parquet"
    pq.write_table(pa.table(rows), src)
    outs = {}
    for first in ("", "import pandas, cloudpickle"):
        out = tmp_path / f"servers{len(first)}.{{}}"
        for fmt in ("parquet", "csv"):
            proc = subprocess.run([sys.executable, "-c", _CONSOLE.format(first=first), str(src), "-o",
                                   str(out).format(fmt)], capture_output=True, text=True, cwd=outside_tree(),
                                  timeout=120)
            said = proc.stdout.split()
            assert said[:3] == ["1", *(["True" if first else "False"] * 2)], proc.stderr
            assert first or said[3:] == ["False", "False"]  # pandas itself may import them
        outs[first] = (pq.read_table(str(out).format("parquet")), (tmp_path / str(out).format("csv")).read_text())
    loaded = outs["import pandas, cloudpickle"]
    assert outs[""][0].equals(loaded[0]) and outs[""][1] == loaded[1]
    assert outs[""][0]["slices"].to_pylist() == [4, 0, 0]


_MODULES = """import sys
{first}
from gpuclass.cli import console
sys.argv = ["gpuclass", "audit", *sys.argv[1:]]
code = console()
print(code, " ".join(sorted(sys.modules)))
"""

# modules only a text input needs (feeds, NDJSON, CSV, the csv sink), and pathlib (a
# Parquet path is opened as a str)
_TEXT_ONLY = {"json", "csv", "pathlib", "gpuclass.audit.ingest.records", "gpuclass.audit.ingest.text",
              "gpuclass.audit.ingest.csv"}


def test_a_parquet_audit_imports_none_of_the_text_readers_modules(tmp_path):
    """What a process that imports numpy and pyarrow's Parquet reader has not loaded, a
    Parquet to Parquet audit does not load either, where only text inputs use it; a feed's
    audit does (the control)."""
    import subprocess
    import sys

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from helpers import outside_tree

    src = tmp_path / "devices.parquet"
    pq.write_table(pa.table({"server": ["a", "b"], "vendor": ["10de", "8086"], "device": ["27b0", "1533"],
                             "class": ["0300", "0200"]}), src)
    feed = tmp_path / "feed.json"
    feed.write_text('[{"id": 1, "description": ["1x RTX 6000 Ada"]}]')

    def modules(code: str, *args: str) -> tuple[str, set[str]]:
        proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                              cwd=outside_tree(), timeout=120)
        assert proc.returncode == 0, proc.stderr
        said = proc.stdout.split()
        return said[0], set(said[1:])

    _, base = modules("import sys, numpy, pyarrow, pyarrow._parquet\nprint(0, ' '.join(sys.modules))")
    code, loaded = modules(_MODULES.format(first=""), str(src), "-o", str(tmp_path / "out.parquet"))
    assert code == "0"
    assert not (loaded - base) & _TEXT_ONLY
    assert pq.read_table(tmp_path / "out.parquet")["slices"].to_pylist() == [4, 0]
    code, loaded = modules(_MODULES.format(first=""), str(feed), "-o", str(tmp_path / "feed.parquet"))
    assert code == "0" and {"json", "gpuclass.audit.ingest.records"} <= loaded
