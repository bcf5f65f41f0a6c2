"""Small helpers shared by test modules (tests/ is on sys.path via pytest's pythonpath)."""

from __future__ import annotations

import functools
import io
import locale
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def names_of(tables, table):
    """{key: name} for one table of a parse result."""
    blob = tables["blob"].tobytes()
    start, end = tables["name_start"], tables["name_end"]
    return {
        int(k): blob[start[n] : end[n]].decode("utf-8", "replace")
        for k, n in zip(tables[f"{table}_keys"], tables[f"{table}_name"])
    }


def _entry_point():
    """The gpuclass script of this interpreter's environment (not whatever PATH finds first)."""
    beside = Path(sys.executable).with_name("gpuclass")
    return str(beside) if beside.exists() else shutil.which("gpuclass")


EXE = _entry_point()
# the command as a user runs it: the installed script, or the module beside this interpreter
COMMAND = [EXE] if EXE else [sys.executable, "-m", "gpuclass"]


def compiled_feed(name: str):
    """``name`` of the compiled feed module (``gpuclass._feed``) for a test of it: skipped
    where ``GPUCLASS_NO_EXTENSIONS`` disables extensions, a failure (never a skip) where
    it should have been built."""
    import pytest

    if os.environ.get("GPUCLASS_NO_EXTENSIONS", "") not in ("", "0"):
        pytest.skip("extensions disabled by GPUCLASS_NO_EXTENSIONS")
    try:
        from gpuclass import _feed
    except ImportError as exc:
        pytest.fail(f"the feed extension did not build: {exc}")
    if not hasattr(_feed, name):
        pytest.fail(f"the feed extension was built without {name}")
    return getattr(_feed, name)


@functools.lru_cache(maxsize=None)
def outside_tree() -> str:
    """An empty directory to start processes in, as a user's would start: from the
    repository's root, ``python -c``/``-m`` would import the sources, not the installed
    package (an unbuilt checkout runs the twin)."""
    return tempfile.mkdtemp(prefix="gpuclass-outside-")


def run(*args, env=None, check_rc=None, pure=None, stdin=None):
    """The installed ``gpuclass`` command in a subprocess; ``pure`` True/False forces the
    twin or the compiled core (None: the environment decides)."""
    cmd = COMMAND
    env = dict(os.environ if env is None else env)
    if pure is not None:
        env.pop("GPUCLASS_NO_EXTENSIONS", None)
        if pure:
            env["GPUCLASS_NO_EXTENSIONS"] = "1"
    proc = subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True, env=env,
                          input=stdin, timeout=60)
    if check_rc is not None:
        assert proc.returncode == check_rc, proc.stderr
    return proc



def run_in_process(*args, env=None, check_rc=None, stdin=None):
    """:func:`run` without the child process: ``gpuclass.cli.main(argv)`` in this one, for
    a test of what a command answers (exit code, stdout, stderr) where a process proves
    nothing.  Returns a ``CompletedProcess`` as :func:`run` does: ``stdin`` (str or bytes,
    default empty) is standard input, ``env`` replaces the environment for the call, a
    ``SystemExit`` is its exit code, and stdout/stderr are decoded as ``text=True`` decodes
    a child's (the locale's encoding, universal newlines).  What a process is needed for
    stays with :func:`run`: the core chosen at start (``pure``), signals, closed or broken
    streams, import-time behaviour, the locale and encodings read at start, the script."""
    from gpuclass.cli import main

    argv = [str(a) for a in args]
    data = stdin.encode(locale.getpreferredencoding(False)) if isinstance(stdin, str) else stdin
    out, err = io.BytesIO(), io.BytesIO()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_env = dict(os.environ)
    sys.stdin = io.TextIOWrapper(io.BytesIO(data or b""), encoding=locale.getpreferredencoding(False))
    sys.stdout = io.TextIOWrapper(out, encoding=locale.getpreferredencoding(False), write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding=locale.getpreferredencoding(False), write_through=True)
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
            if code is not None and not isinstance(code, int):  # as the interpreter does
                print(code, file=sys.stderr)
                code = 1
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        raw_out, raw_err = out.getvalue(), err.getvalue()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        if env is not None:
            os.environ.clear()
            os.environ.update(saved_env)

    def text(raw: bytes) -> str:
        return io.TextIOWrapper(io.BytesIO(raw), encoding=locale.getpreferredencoding(False)).read()

    proc = subprocess.CompletedProcess(["gpuclass", *argv], 0 if code is None else code,
                                       text(raw_out), text(raw_err))
    if check_rc is not None:
        assert proc.returncode == check_rc, proc.stderr
    return proc

# What sits at an output's path that is no regular file: what ``-o`` and ``db compile
# --write`` must refuse to replace.
NON_REGULAR = ["fifo", "symlink", "dangling-symlink", "dir", "socket", "chardev"]


def non_regular_target(tmp_path: Path, kind: str, name: str = "out") -> tuple[Path, Path]:
    """``(path, victim)``: ``tmp_path/name`` made a ``kind`` of :data:`NON_REGULAR` (a
    symlink points at ``victim``, a regular file holding ``keep me``)."""
    import socket
    import stat

    import pytest

    out = tmp_path / name
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    if kind == "fifo":
        os.mkfifo(out)
    elif kind == "symlink":
        out.symlink_to(victim)
    elif kind == "dangling-symlink":
        out.symlink_to(tmp_path / "nowhere")
    elif kind == "dir":
        out.mkdir()
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(out))
        sock.close()
    elif kind == "chardev":
        if os.geteuid() != 0:
            pytest.skip("making a character device (a /dev/null) needs root")
        os.mknod(out, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    else:
        raise ValueError(kind)
    return out, victim
