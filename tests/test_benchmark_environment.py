"""The benchmark suite's processes inherit the run's environment, not what a module left.

Dask's LocalCluster writes its workers' settings (``MALLOC_TRIM_THRESHOLD_=65536`` among
them) into the starting process's ``os.environ`` and leaves them there; the whole-process
benchmarks that run after ``bench_dask`` would start gpuclass with glibc's trim threshold
fixed, and DuckDB and polars (on their own allocators) unaffected.  ``benchmarks/conftest.py``
restores the environment after each module; these runs hold it to that, with a real cluster.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")

CONFTEST = Path(__file__).resolve().parents[1] / "benchmarks" / "conftest.py"

STARTS_A_CLUSTER = '''
import distributed

def test_a_cluster_comes_and_goes():
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=50)
    with cluster, distributed.Client(cluster) as client:
        assert client.submit(sum, [1, 2]).result(120) == 3
'''

STARTS_A_PROCESS = '''
import json, os, subprocess, sys

def test_a_later_process_sees_the_first_environment():
    seen = json.loads(subprocess.run([sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)))"],
                                     capture_output=True, text=True, check=True).stdout)
    print("LEFT:", sorted(k for k in ("MALLOC_TRIM_THRESHOLD_", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS") if k in seen))
    assert "MALLOC_TRIM_THRESHOLD_" not in seen
'''


def _run(tmp_path: Path, with_conftest: bool) -> subprocess.CompletedProcess:
    (tmp_path / "bench_a_dask.py").write_text(STARTS_A_CLUSTER)
    (tmp_path / "bench_b_whole.py").write_text(STARTS_A_PROCESS)
    if with_conftest:
        (tmp_path / "conftest.py").write_text(CONFTEST.read_text())
    env = {k: v for k, v in os.environ.items()
           if k not in ("MALLOC_TRIM_THRESHOLD_", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "-o", "python_files=bench_*.py", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_a_module_that_started_a_cluster_leaves_no_settings_to_later_processes(tmp_path):
    proc = _run(tmp_path, with_conftest=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "LEFT: []" in proc.stdout


def test_without_the_conftest_the_cluster_s_settings_reach_later_processes(tmp_path):
    """The leak is real (the check above could fail): the same two modules without the
    benchmark conftest, and the later process gets the workers' trim threshold."""
    proc = _run(tmp_path, with_conftest=False)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "MALLOC_TRIM_THRESHOLD_" in proc.stdout and "1 failed, 1 passed" in proc.stdout


def test_the_library_cache_drop_names_each_shared_library_once(tmp_path):
    """benchmarks/scripts/drop_library_cache.py (run by .ci/run before the benchmarks):
    every ``*.so`` and versioned ``*.so.N`` file under the roots, nothing else, no link."""
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "scripts" / "drop_library_cache.py"
    (tmp_path / "pkg" / "libs").mkdir(parents=True)
    for name in ("pkg/_core.cpython-311-x86_64-linux-gnu.so", "pkg/libs/libarrow.so.2300",
                 "pkg/libs/libz-abc.so.1.3.1", "pkg/module.py", "pkg/data.sosomething", "pkg/notes.so.txt.bak"):
        (tmp_path / name).write_bytes(b"\0" * 4096)
    (tmp_path / "pkg" / "link.so").symlink_to(tmp_path / "pkg" / "_core.cpython-311-x86_64-linux-gnu.so")
    import runpy

    mod = runpy.run_path(str(script))
    found = sorted(os.path.relpath(p, tmp_path) for p in mod["libraries"]([str(tmp_path)]))
    assert found == ["pkg/_core.cpython-311-x86_64-linux-gnu.so", "pkg/libs/libarrow.so.2300",
                     "pkg/libs/libz-abc.so.1.3.1"]
    # a file that cannot be opened is passed over; the others are advised
    assert mod["drop"](iter([str(tmp_path / "missing.so"), *map(str, (tmp_path / f for f in found))])) == 3
    out = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ("drop_library_cache: 3 libraries advised" if hasattr(os, "posix_fadvise")
                                  else "drop_library_cache: no posix_fadvise here; nothing dropped")


def test_the_interleaved_audit_script_times_every_command(tmp_path):
    """benchmarks/scripts/interleaved_audit.py (BENCHMARKS.md's whole-process figures): a
    line per command, the ratios, the table made once in --data."""
    pytest.importorskip("duckdb")
    pytest.importorskip("polars")
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "scripts" / "interleaved_audit.py"
    out = subprocess.run([sys.executable, str(script), "--rows", "300", "--rounds", "2", "--data", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "300 rows, 2 rounds interleaved (medians)"
    assert [ln.split()[0] for ln in lines[1:4]] == ["gpuclass", "duckdb", "polars"]
    assert lines[4].startswith("gpuclass: ") and "x DuckDB" in lines[4] and "x polars" in lines[4]
    assert (tmp_path / "devices-300.parquet").exists()


def test_the_partition_faults_script_measures_both_settings():
    """benchmarks/scripts/partition_faults.py (BENCHMARKS.md's ``dask partition`` figures):
    a line per malloc setting, each with a time and a count of page faults."""
    pytest.importorskip("pandas")
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("distributed")
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "scripts" / "partition_faults.py"
    out = subprocess.run([sys.executable, str(script), "--rows", "2000", "--calls", "3"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "partition_audit of 2000 rows, 3 calls (medians)"
    assert [ln.split(":")[0] for ln in lines[1:]] == ["as on a Dask worker (MALLOC_TRIM_THRESHOLD_=65536)",
                                                      "glibc's defaults"]
    for ln in lines[1:]:
        ms, faults = re.fullmatch(r".*: ([0-9.]+) ms, ([0-9]+) page faults a call", ln).groups()
        assert float(ms) > 0 and int(faults) >= 0
