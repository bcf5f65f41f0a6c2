"""``-o FILE`` of an audit: errors name the user's path, and SIGTERM cleans up as Ctrl-C does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import helpers
import pytest

from gpuclass.cli import main

FEED = {"server": [{"id": 1, "description": ["GTX 1080"], "price": 40}]}


@pytest.mark.parametrize("name", ["report.html", "x.csv", "servers.parquet", "s.ndjson", "t.txt"])
def test_an_output_in_a_missing_folder_names_the_users_path(tmp_path, capsys, name):
    feed = tmp_path / "feed.json"
    feed.write_text(json.dumps(FEED))
    target = tmp_path / "nodir" / name
    assert main(["audit", str(feed), "-o", str(target)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(target) in err and ".gpuclass-" not in err, err
    assert not (tmp_path / "nodir").exists()


def _default_signals() -> None:
    # a suite started in the background of a shell (``cmd &``) has SIGINT ignored, and a
    # child inherits that: Python then keeps it ignored, as a program should
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_while_writing_leaves_no_temporary_file(tmp_path, signum, code):
    out = tmp_path / "out.csv"
    proc = subprocess.Popen([*helpers.COMMAND, "audit", "-", "--kind", "ndjson", "-o", str(out)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=helpers.outside_tree(), preexec_fn=_default_signals)
    try:
        proc.stdin.write(b'{"id": 1, "description": ["GTX 1080"]}\n')
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while not [p for p in os.listdir(tmp_path) if p.startswith(".gpuclass-")]:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.02)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert b"Traceback" not in err and err.count(b"\n") == 1, err
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["report.html", "x.csv", "servers.parquet", "s.ndjson", "t.txt", "a.json"])
def test_an_audit_written_with_o_says_what_it_wrote_on_stderr(tmp_path, capsys, name):
    feed = tmp_path / "feed.json"
    feed.write_text(json.dumps({"server": [*FEED["server"], {"id": 2, "description": ["GPU - RTX 9090"]}]}))
    target = tmp_path / name
    code = main(["audit", str(feed), "-o", str(target)])
    out, err = capsys.readouterr()
    assert out == "" and target.stat().st_size > 0
    assert err.count("\n") == 1 and err.startswith(f"gpuclass audit: wrote {target}: 2 servers from 2 input rows"), err
    flagged = int(err.rsplit("; ", 1)[1].split()[0])
    assert code == (1 if flagged else 0), err
