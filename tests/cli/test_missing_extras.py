"""A missing optional dependency, on every path that needs one: one line naming the extra
that installs it, exit 2, nothing on standard output (and no output file), never a traceback.

Each case runs the installed command in a fresh process where one optional module cannot be
imported (a module of that name that raises ``ModuleNotFoundError``, first on the path), as
on a machine where the extra was never installed.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess

import helpers
import pytest

from gpuclass.errors import EXTRAS, InputError, MissingExtraError, missing_extra

FEED = {"server": [{"id": 7, "description": ["GPU - GeForce GTX 1080"], "price": 40}]}
CSV = "server,vendor,device,class\nsrv1,10de,1b80,0300\n"


def _blocker(tmp_path, module: str) -> str:
    d = tmp_path / f"no-{module}"
    d.mkdir()
    (d / f"{module}.py").write_text(
        f"raise ModuleNotFoundError(\"No module named '{module}'\", name={module!r})\n")
    return str(d)


def _inputs(tmp_path) -> dict[str, str]:
    feed = tmp_path / "feed.json"
    feed.write_text(json.dumps(FEED))
    csv = tmp_path / "devices.csv"
    csv.write_text(CSV)
    out = {"feed": str(feed), "csv": str(csv)}
    try:
        import zstandard
    except ImportError:  # pragma: no cover - a [test] install has it
        pytest.fail("the test extra installs zstandard")
    zst = tmp_path / "feed.json.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(json.dumps(FEED).encode()))
    out["zst"] = str(zst)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"server": ["srv1"], "vendor": ["10de"], "device": ["1b80"]}),
                   tmp_path / "devices.parquet")
    out["parquet"] = str(tmp_path / "devices.parquet")
    gz = tmp_path / "feed.json.gz"
    gz.write_bytes(gzip.compress(json.dumps(FEED).encode()))
    out["gz"] = str(gz)
    return out


# (missing module, argv with {input names} and {out}, the extra the one line must name)
CASES = [
    ("ahocorasick", ["audit", "{feed}"], "audit"),
    ("ahocorasick", ["audit", "{gz}", "--format", "json"], "audit"),
    ("ahocorasick", ["audit", "{feed}", "-o", "{out}.csv"], "audit"),
    ("zstandard", ["audit", "{zst}"], "audit"),
    ("pyarrow", ["audit", "{parquet}"], "dataframes"),
    ("pyarrow", ["audit", "{csv}", "-o", "{out}.parquet"], "dataframes"),
    ("pyarrow", ["audit", "{feed}", "--format", "html"], "report"),
    ("matplotlib", ["audit", "{feed}", "-o", "{out}.html"], "report"),
]


@pytest.mark.parametrize("module,argv,extra", CASES, ids=[f"{m}-{'-'.join(a[1:])}" for m, a, _ in CASES])
def test_a_missing_extra_is_one_line_exit_2_and_nothing_written(tmp_path, module, argv, extra):
    files = _inputs(tmp_path)
    out = str(tmp_path / "result")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [_blocker(tmp_path, module), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([*helpers.COMMAND, *(a.format(out=out, **files) for a in argv)],
                          capture_output=True, text=True, env=env, cwd=helpers.outside_tree(),
                          check=False, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert f"gpuclass[{extra}]" in proc.stderr and EXTRAS[module][1] in proc.stderr
    assert not [p for p in os.listdir(tmp_path) if p.startswith("result")]


@pytest.mark.parametrize("module", ["tqdm"])
def test_a_missing_extra_that_only_adds_comfort_is_no_error(tmp_path, module):
    """Without tqdm the audit draws no progress bar and answers as it does with it."""
    files = _inputs(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [_blocker(tmp_path, module), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cmd = [*helpers.COMMAND, "audit", files["feed"], "--format", "json", "--progress", "always"]
    without = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=helpers.outside_tree(),
                             check=False, timeout=120)
    plain = subprocess.run(cmd[:-2], capture_output=True, text=True, cwd=helpers.outside_tree(),
                           check=False, timeout=120)
    assert without.returncode == plain.returncode and "Traceback" not in without.stderr
    assert json.loads(without.stdout) == json.loads(plain.stdout)


def test_every_optional_module_names_an_extra_that_pyproject_declares():
    import tomllib
    from pathlib import Path

    extras = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())[
        "project"]["optional-dependencies"]
    import re

    def names(reqs):  # "dask[dataframe,distributed]>=2024.1": dask, and distributed with it
        out = set()
        for req in reqs:
            m = re.match(r"([A-Za-z0-9_.-]+)(?:\[([^\]]*)\])?", req)
            out.add(m.group(1))
            out.update(x.strip() for x in (m.group(2) or "").split(",") if m.group(1) == "dask")
        return out

    for module, (extra, dist) in EXTRAS.items():
        assert dist in names(extras[extra]), module
        assert dist in names(extras["all"]), module


def test_missing_extra_reads_the_import_failure_and_its_causes():
    assert missing_extra(ModuleNotFoundError("x", name="pyarrow.parquet")).extra == "dataframes"
    assert missing_extra(ImportError("No module named 'matplotlib.pyplot'")).extra == "report"
    assert missing_extra(ModuleNotFoundError("x", name="not_an_extra")) is None
    try:
        try:
            raise ModuleNotFoundError("x", name="ahocorasick")
        except ImportError as inner:
            raise ImportError("a wrapper failed to load") from inner
    except ImportError as outer:
        found = missing_extra(outer)
    assert found is not None and found.module == "ahocorasick" and found.extra == "audit"
    err = MissingExtraError("zstandard", "audit", "reading zstd")
    assert isinstance(err, InputError) and isinstance(err, ImportError) and err.name == "zstandard"
