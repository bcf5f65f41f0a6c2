"""Hostile input, second round: the output side and the command line (issue 28).

Each class is generated over the commands and options it concerns, and each asserts what
gpuclass now does; RELIABILITY.md's section "Hostile input, second round: outputs and
commands" names these tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from audit_samples import auction_listing  # noqa: E402
from helpers import COMMAND, outside_tree  # noqa: E402


def _feed(tmp_path, n=40, name="feed.json"):
    p = tmp_path / name
    p.write_text(json.dumps([{k: v for k, v in r.items() if k != "expected"}
                             for r in auction_listing(n)]))
    return p


def _commands(feed) -> dict[str, list[str]]:
    """Every command that writes to standard output, in each of its output formats."""
    cmds = {f"audit-{fmt}": ["audit", str(feed), "--format", fmt]
            for fmt in ("table", "json", "ndjson", "csv", "html")}
    cmds.update({
        "policy-show": ["policy", "show"], "policy-show-json": ["policy", "show", "-o", "json"],
        "scan": ["scan"], "scan-json": ["scan", "-o", "json"],
        "lookup": ["lookup", "10de:27b0"], "lookup-yaml": ["lookup", "10de:27b0", "-o", "yaml"],
        "db-info": ["db", "info"], "labels-configmap": ["labels", "--configmap"],
        "plan": ["plan"], "version": ["--version"], "help": ["--help"], "scan-help": ["scan", "--help"],
    })
    return cmds


COMMAND_NAMES = sorted(_commands("feed.json"))


def _close_stdout():
    os.close(1)


def _readonly_stdout():
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 1)
    os.close(fd)


def _assert_one_line(proc):
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Exception ignored" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines()[-1] == "gpuclass: error: cannot write to standard output: it is closed"


# ---- closed standard output ----------------------------------------------------------------

@pytest.mark.parametrize("how", [_close_stdout, _readonly_stdout], ids=["closed", "read-only"])
@pytest.mark.parametrize("name", COMMAND_NAMES)
def test_closed_stdout_is_one_line_and_an_error(tmp_path, name, how):
    """fd 1 closed (``>&-``: Python's sys.stdout is None) or open read-only (every write and
    the flush at exit fail with EBADF): one line on stderr, exit 3, never a traceback."""
    if name.endswith("help") and how is _readonly_stdout:
        pytest.skip("argparse drops a failed --help write itself; nothing reaches gpuclass")
    cmd = COMMAND + _commands(_feed(tmp_path))[name]
    proc = subprocess.run(cmd, stdout=None, stderr=subprocess.PIPE, text=True, timeout=60,
                          preexec_fn=how, cwd=outside_tree())
    assert proc.returncode == 3, proc.stderr
    _assert_one_line(proc)


@pytest.mark.parametrize("fmt", ["csv", "ndjson", "json", "table"])
def test_closed_stdout_shell(tmp_path, fmt):
    """The same through the shell, as a user writes it."""
    feed = _feed(tmp_path)
    line = " ".join(map(str, COMMAND + ["audit", feed, "--format", fmt])) + " >&-"
    proc = subprocess.run(["sh", "-c", line], stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 3
    _assert_one_line(proc)


def test_stdout_closed_inside_the_process(capsys):
    """A stream object already closed (ValueError "I/O operation on closed file"), as an
    embedding program may hand main(): one line, exit 3."""
    import io

    from gpuclass.cli import main

    old, sys.stdout = sys.stdout, io.StringIO()
    sys.stdout.close()
    try:
        code = main(["lookup", "10de:27b0"])
    finally:
        sys.stdout.close()  # the null device main() left in its place
        sys.stdout = old
    assert code == 3
    assert capsys.readouterr().err == "gpuclass: error: cannot write to standard output: it is closed\n"


@pytest.mark.parametrize("fmt", ["csv", "ndjson", "table", "json"])
def test_pipe_closed_early_is_quiet(tmp_path, fmt):
    """``gpuclass audit ... | head -1``: the reader leaving is not an error (exit 0, nothing
    on stderr but what the command says anyway)."""
    feed = _feed(tmp_path, n=3000)
    proc = subprocess.Popen(COMMAND + ["audit", str(feed), "--format", fmt], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=outside_tree())
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) in (0, 1)  # 1: the listing has flagged servers
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert "error" not in err, err


# ---- linear work: the policy's duplicate-ID check ------------------------------------------

def _policy_with_vendors(n: int, dup_at: int | None = None):
    import copy

    from gpuclass.policy import DEFAULT_POLICY
    from gpuclass.policy.model import Policy

    data = copy.deepcopy(DEFAULT_POLICY)
    vendors = list(range(n))
    if dup_at is not None:
        vendors.append(vendors[dup_at])
    data["gpu_vendors"] = vendors
    return Policy.model_validate(data)


@pytest.mark.parametrize("dup_at", [0, 1, 500, 999])
def test_policy_duplicate_id_message(dup_at):
    """The first repeated value is named where it repeats, as before."""
    with pytest.raises(Exception) as info:
        _policy_with_vendors(1000, dup_at)
    assert f"duplicate {dup_at:04x}" in str(info.value)


def test_policy_duplicate_check_scales_linearly():
    """N and 10N IDs: the time grows far less than 20x (it was quadratic)."""
    import time

    import gc

    def timed(n):
        gc.collect()
        gc.disable()  # a collection inside one round is noise, not the check's cost
        try:
            t = time.perf_counter()
            _policy_with_vendors(n)
            return time.perf_counter() - t
        finally:
            gc.enable()
    # interleaved rounds, the best of each: a busy machine slows some rounds, not the rule
    rounds = [(timed(4000), timed(40000)) for _ in range(5)]
    small, large = min(r[0] for r in rounds), min(r[1] for r in rounds)
    assert large < 20 * small + 0.05, (small, large)
