"""How the command's process ends (:func:`gpuclass.cli.exit_process`): at once, without the
interpreter's teardown, once its output is flushed and its exit handlers ran; as
``sys.exit`` would end it wherever ending at once could lose something (another thread
still running, a stream that cannot be flushed)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import COMMAND, outside_tree

# an object whose finaliser shows that the interpreter tore itself down: a module global,
# freed only by the teardown
_PRELUDE = """import os, sys, atexit, threading
from gpuclass.cli import exit_process

class Teardown:
    def __del__(self):
        os.write(1, b"[teardown]")

kept = Teardown()
"""


def _run(body: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _PRELUDE + body], capture_output=True, text=True,
                          cwd=outside_tree(), timeout=60, **kw)


@pytest.mark.parametrize("code, expected", [(0, 0), (1, 1), (3, 3), (None, 0)])
def test_the_process_ends_at_once_with_its_code_and_its_output_flushed(code, expected):
    proc = _run(f"print('written', end='')\nprint('warned', file=sys.stderr, end='')\nexit_process({code!r})\n"
                "print('after')\n")
    assert proc.returncode == expected
    assert proc.stdout == "written"  # buffered, flushed; no teardown, nothing after the call
    assert proc.stderr == "warned"


def test_sys_exit_would_have_torn_the_interpreter_down():
    """The control: the same process ended by ``sys.exit`` runs the finaliser."""
    proc = _run("print('written', end='')\nsys.exit(3)\n")
    assert proc.returncode == 3 and proc.stdout == "written[teardown]"


def test_exit_handlers_run_and_what_they_write_is_flushed():
    proc = _run("atexit.register(lambda: print('handler', end=''))\n"
                "import logging\n"
                "logging.basicConfig(stream=open(os.devnull, 'w'))\n"
                "atexit.register(lambda: sys.stderr.write('last'))\n"
                "print('main ', end='')\nexit_process(2)\n")
    assert proc.returncode == 2
    assert proc.stdout == "main handler"
    assert proc.stderr == "last"


def test_a_file_finalised_by_weakref_at_exit_is_finalised():
    proc = _run("import tempfile, weakref, pathlib\n"
                "d = tempfile.TemporaryDirectory()\n"  # removed by its finalizer at exit
                "p = pathlib.Path(d.name) / 'f'\np.write_text('x')\n"
                "print(d.name, end='')\nexit_process(0)\n")
    assert proc.returncode == 0
    import os

    assert proc.stdout and not os.path.exists(proc.stdout)


def test_another_running_thread_is_waited_for_as_sys_exit_waits(tmp_path):
    done = tmp_path / "done"
    proc = _run("import time\n"
                f"def work():\n    time.sleep(0.3)\n    open({str(done)!r}, 'w').write('finished')\n"
                "threading.Thread(target=work).start()\n"
                "exit_process(4)\n")
    assert proc.returncode == 4
    assert done.read_text() == "finished"
    assert proc.stdout == "[teardown]"  # the interpreter's own exit, as sys.exit's


def test_a_stream_that_cannot_be_flushed_is_left_to_the_interpreters_exit():
    """Python reports a standard output it cannot flush at exit and exits with 120; ending
    at once would hide that."""
    proc = _run("class Refusing:\n"
                "    def write(self, s):\n        return len(s)\n"
                "    def flush(self):\n        raise OSError(28, 'No space left on device')\n"
                "sys.stdout = Refusing()\n"
                "exit_process(0)\n")
    assert proc.returncode == 120
    assert "No space left on device" in proc.stderr


# loaded at start (sitecustomize): an object in __main__, whose finaliser writes to stderr
# when the interpreter tears __main__ down
_PROBE = """import __main__, os
class _Probe:
    def __del__(self, write=os.write):
        write(2, b"[teardown]")
__main__._teardown_probe = _Probe()
"""


@pytest.mark.parametrize("how", ["script", "module"])
def test_the_installed_command_and_python_m_end_this_way(how, tmp_path):
    """``bin/gpuclass`` and ``python -m gpuclass`` end through exit_process: the probe
    never writes."""
    import os

    (tmp_path / "sitecustomize.py").write_text(_PROBE)
    env = dict(os.environ, PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = COMMAND if how == "script" else [sys.executable, "-m", "gpuclass"]
    for args, code, out in ((["lookup", "10de:27b0"], 0, "RTX 4000 SFF Ada"), (["lookup", "10de:ffff"], 1, "")):
        proc = subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, cwd=outside_tree(),
                              timeout=60)
        assert proc.returncode == code, proc.stderr
        assert out in proc.stdout and "[teardown]" not in proc.stderr
    # the control: console() ended by sys.exit tears __main__ down, and the probe writes
    proc = subprocess.run([sys.executable, "-c", "import sys\nfrom gpuclass.cli import console\n"
                           "sys.argv[1:] = ['lookup', '10de:27b0']\nsys.exit(console())"],
                          capture_output=True, text=True, env=env, cwd=outside_tree(), timeout=60)
    assert proc.returncode == 0 and proc.stderr == "[teardown]"
