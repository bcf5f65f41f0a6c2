"""The benchmark suite's processes inherit the run's environment, not what a module left.

Dask's LocalCluster writes its workers' settings (``MALLOC_TRIM_THRESHOLD_=65536`` among
them) into the starting process's ``os.environ`` and leaves them there; the whole-process
benchmarks that run after ``bench_dask`` would start gpuclass with glibc's trim threshold
fixed, and DuckDB and polars (on their own allocators) unaffected.  ``benchmarks/conftest.py``
restores the environment after each module; these runs hold it to that, with a real cluster.
"""

from __future__ import annotations

import os
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
