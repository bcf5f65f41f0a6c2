"""What the command's own process sets up before it imports anything heavy
(:func:`gpuclass.cli.console`): costs of numpy's and pydantic's start that no command
needs are turned off where the user has not asked for them, and left as the user set them
where the user has."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import outside_tree

from gpuclass.cli import PROCESS_DEFAULTS

_CONSOLE = """import os, sys
from gpuclass.cli import console
sys.argv = ["gpuclass", *sys.argv[1:]]
code = console()
import numpy  # already loaded by the command: the OpenBLAS it started is the one asked for
sys.stdout.flush()
threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None
print("\\n" + repr((code, [os.environ.get(n) for n in {names!r}], threads)))
"""


def _console(*args: str, env: dict[str, str]) -> tuple[int, list[str | None], int | None]:
    code = _CONSOLE.format(names=sorted(PROCESS_DEFAULTS))
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, cwd=outside_tree(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    return eval(proc.stdout.splitlines()[-1])


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PROCESS_DEFAULTS}
    env.update(values)
    return env


def test_defaults_are_one_blas_thread_no_pydantic_plugin_discovery_and_the_system_allocator():
    assert PROCESS_DEFAULTS == {"OPENBLAS_NUM_THREADS": "1", "PYDANTIC_DISABLE_PLUGINS": "__all__",
                                "ARROW_DEFAULT_MEMORY_POOL": "system"}
    # no OMP_NUM_THREADS: pyarrow sizes its CPU pool from it (Parquet decoding)
    assert "OMP_NUM_THREADS" not in PROCESS_DEFAULTS


@pytest.mark.parametrize("command", [("lookup", "10de:27b0"), ("scan", "--no-names")])
def test_the_command_sets_them_where_unset(command):
    code, values, threads = _console(*command, env=_env())
    assert code in (0, 1)
    assert values == [PROCESS_DEFAULTS[n] for n in sorted(PROCESS_DEFAULTS)]
    # set before numpy loaded: OpenBLAS started no thread of its own
    assert threads in (None, 1)


def test_what_the_user_set_is_kept():
    code, values, threads = _console("lookup", "10de:27b0",
                                     env=_env(OPENBLAS_NUM_THREADS="2", PYDANTIC_DISABLE_PLUGINS="logfire",
                                              ARROW_DEFAULT_MEMORY_POOL="mimalloc"))
    assert code == 0 and values == ["mimalloc", "2", "logfire"]
    # OpenBLAS: the main thread and one of its own (it takes no more threads than cores)
    assert threads in (None, min(2, os.cpu_count() or 1))


_POOL = """import sys
from gpuclass.cli import console
sys.argv = ["gpuclass", "audit", sys.argv[1], "-o", sys.argv[2]]
code = console()
import pyarrow
print("\\n" + repr((code, pyarrow.default_memory_pool().backend_name)))
"""


@pytest.mark.parametrize("chosen", [None, "mimalloc"])
def test_a_parquet_audit_takes_arrows_memory_from_the_allocator_asked_for(tmp_path, chosen):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    if chosen and chosen not in pa.supported_memory_backends():
        pytest.skip(f"this pyarrow has no {chosen}")
    pq.write_table(pa.table({"server": ["a"], "vendor": ["10de"], "device": ["27b0"], "class": ["0300"]}),
                   tmp_path / "in.parquet")
    env = _env(**({"ARROW_DEFAULT_MEMORY_POOL": chosen} if chosen else {}))
    proc = subprocess.run([sys.executable, "-c", _POOL, str(tmp_path / "in.parquet"), str(tmp_path / "out.parquet")],
                          capture_output=True, text=True, env=env, cwd=outside_tree(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert eval(proc.stdout.splitlines()[-1]) == (0, chosen or "system")


_ARENAS = """import ctypes, os, sys, tempfile, threading
libc = ctypes.CDLL(None)
if sys.argv[1] == "limit":
    from gpuclass.cli import fewer_malloc_arenas
    print(fewer_malloc_arenas(), end=" ")
go = threading.Barrier(6)

def work():
    go.wait()  # every thread allocates at once: each meets a busy arena
    held = [ctypes.create_string_buffer(4096) for _ in range(2000)]
    go.wait()

threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
libc.fopen.restype = ctypes.c_void_p
path = tempfile.mktemp()
f = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, ctypes.c_void_p(f))
libc.fclose(ctypes.c_void_p(f))
print(open(path).read().count("<heap nr="))
os.unlink(path)
"""


def _glibc() -> bool:
    import platform

    return sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not _glibc(), reason="malloc arenas are glibc's (mallopt, malloc_info)")
def test_an_audit_process_keeps_to_two_malloc_arenas():
    """``fewer_malloc_arenas`` (an audit's process, before its threads start) holds six
    threads that allocate at once to two glibc arenas, where without it they take more;
    a MALLOC_ARENA_MAX the user set is left to glibc."""
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}

    def arenas(mode: str, **extra: str) -> str:
        return subprocess.run([sys.executable, "-c", _ARENAS, mode], capture_output=True, text=True, check=True,
                              env={**env, **extra}, cwd=outside_tree(), timeout=60).stdout.split()

    assert arenas("limit") == ["True", "2"]
    assert int(arenas("none")[0]) > 2
    assert arenas("limit", MALLOC_ARENA_MAX="3") == ["False", "3"]


def test_the_audit_command_limits_its_arenas(monkeypatch, tmp_path):
    """The audit command asks for the limit before it reads anything."""
    from gpuclass import cli
    from gpuclass.cli import audit

    calls = []
    monkeypatch.setattr(cli, "fewer_malloc_arenas", lambda: calls.append(True) or True)
    (tmp_path / "f.json").write_text('{"server": []}')
    assert cli.main(["audit", str(tmp_path / "f.json")]) in (0, 1)
    assert calls == [True] and audit.run
