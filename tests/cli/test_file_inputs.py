"""Every file a command reads: a FIFO, a device, a directory or a socket is exit 3 at once,
every read has its limit, and ``-`` (standard input) is accepted wherever a path is."""

from __future__ import annotations

import io
import json
import os
import socket
import sys
import threading
import time

import fakesys
import pytest
from helpers import run

from gpuclass import inputs
from gpuclass.cli.main import main
from gpuclass.db import locate

LSPCI = ('0000:01:00.0 "3D controller [0302]" "NVIDIA Corporation [10de]" "Device [27b0]" '
         '-ra1 -p00 "NVIDIA Corporation [10de]" "Device [16fa]"\n')
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"
NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {}\n"
POLICY = '{"slices_per_card": 4}'

# (command line with {} where the path goes, the environment variable to use instead)
READERS = {
    "db": (["lookup", "10de", "--db", "{}"], None),
    "db-env": (["lookup", "10de"], "GPUCLASS_PCI_IDS"),
    "db-info": (["db", "info", "--db", "{}"], None),
    "lspci": (["scan", "--lspci", "{}"], None),
    "policy": (["scan", "--lspci", "LSPCI", "--policy", "{}"], None),
    "report": (["plan", "--report", "{}"], None),
    "labels-report": (["labels", "--report", "{}"], None),
    "pod": (["validate-pod", "{}"], None),
    "node": (["diagnose", "{}"], None),
}


@pytest.fixture
def bad_files(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    directory = tmp_path / "dir"
    directory.mkdir()
    sock_path = str(tmp_path / "sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(sock_path)
    sock.listen(1)
    lspci = tmp_path / "lspci.txt"
    lspci.write_text(LSPCI)
    yield {"fifo": str(fifo), "zero": "/dev/zero", "urandom": "/dev/urandom",
           "directory": str(directory), "socket": sock_path}, str(lspci)
    sock.close()


def _main(argv, capsys, monkeypatch, env=None, stdin: bytes | None = None):
    if env:
        for k, v in env.items():
            monkeypatch.setenv(k, v)
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    t0 = time.perf_counter()
    rc = main(argv)
    dt = time.perf_counter() - t0
    out, err = capsys.readouterr()
    return rc, out, err, dt


@pytest.mark.parametrize("kind", ["fifo", "zero", "urandom", "directory", "socket"])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_non_regular_inputs_are_exit_3_at_once(reader, kind, bad_files, capsys, monkeypatch):
    files, lspci = bad_files
    argv, env = READERS[reader]
    argv = [lspci if a == "LSPCI" else a.format(files[kind]) for a in argv]
    rc, out, err, dt = _main(argv, capsys, monkeypatch, {env: files[kind]} if env else None)
    lines = err.strip().splitlines()
    assert rc == 3 and len(lines) == 1 and lines[0].startswith("gpuclass: error:"), err
    what = {"fifo": "FIFO", "zero": "character device", "urandom": "character device",
            "directory": "directory", "socket": "socket"}[kind]
    assert what in lines[0] and dt < 2


@pytest.mark.parametrize("reader, limit_of", [
    ("lspci", "lspci"), ("report", "report"), ("pod", "manifest"), ("node", "manifest"),
    ("policy", "policy")])
def test_every_read_has_its_limit(reader, limit_of, bad_files, tmp_path, capsys, monkeypatch):
    _, lspci = bad_files
    big = tmp_path / "big.json"
    big.write_text(" " * 5000 + "{}")
    monkeypatch.setitem(inputs.LIMITS, limit_of, 4096)
    argv, _ = READERS[reader]
    argv = [lspci if a == "LSPCI" else a.format(big) for a in argv]
    rc, _, err, _ = _main(argv, capsys, monkeypatch)
    assert rc == 3 and "larger than 4096 bytes" in err, err


def test_the_database_limit(bad_files, tmp_path, capsys, monkeypatch):
    big = tmp_path / "big.ids"
    big.write_bytes(b"#" * 5000 + b"\n")
    monkeypatch.setattr(locate, "MAX_DECOMPRESSED", 4096)
    rc, _, err, _ = _main(["lookup", "10de", "--db", str(big)], capsys, monkeypatch)
    assert rc == 3 and "larger than 4096 bytes" in err


def test_endless_stdin_stops_at_the_limit(monkeypatch, capsys):
    """``< /dev/zero``: standard input is read up to the limit, then refused."""
    monkeypatch.setitem(inputs.LIMITS, "lspci", 1 << 20)
    with open("/dev/zero", "rb") as zero:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(zero))
        t0 = time.perf_counter()
        rc = main(["scan", "--lspci", "-"])
    assert rc == 3 and "larger than" in capsys.readouterr().err and time.perf_counter() - t0 < 5


# -- standard input ---------------------------------------------------------------------------

def _stdin_cases(tmp_path):
    from gpuclass.provisioner import HardwareReport

    report = tmp_path / "report.json"
    report.write_text(HardwareReport.example().model_dump_json())
    ids = locate.bundled_path().read_bytes()
    return {
        "db": (["lookup", "10de:27b0", "--db", "-"], ids, "AD104GL"),
        "lspci": (["scan", "--lspci", "-"], LSPCI.encode(), "10de:27b0"),
        "policy": (["scan", "--lspci", str(tmp_path / "l.txt"), "--policy", "-"], POLICY.encode(),
                   "10de:27b0"),
        "report": (["plan", "--report", "-"], report.read_bytes(), "nvidia-driver"),
        "labels": (["labels", "--report", "-"], report.read_bytes(), "node labels"),
        "pod": (["validate-pod", "-"], POD.encode(), "valid"),
        "node": (["diagnose", "-"], NODE.encode(), "node n"),
    }


@pytest.mark.parametrize("case", ["db", "lspci", "policy", "report", "labels", "pod", "node"])
def test_stdin_wherever_a_path_is(case, tmp_path, capsys, monkeypatch):
    (tmp_path / "l.txt").write_text(LSPCI)
    argv, data, expect = _stdin_cases(tmp_path)[case]
    rc, out, err, _ = _main(argv, capsys, monkeypatch, stdin=data)
    assert rc in (0, 1) and expect in out, err


def test_stdin_named_twice_is_an_error(tmp_path, capsys, monkeypatch):
    from gpuclass.provisioner import HardwareReport

    data = HardwareReport.example().model_dump_json().encode()
    rc, _, err, _ = _main(["diagnose", "-", "--report", "-"], capsys, monkeypatch, stdin=NODE.encode() + data)
    assert rc == 2 and "standard input can be read once" in err  # refused before any read


def test_stdin_through_a_real_pipe():
    proc = run("scan", "--lspci", "-", "--format", "json", stdin=LSPCI)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["source"] == "<stdin>"


def test_a_fifo_with_a_writer_is_refused_too(tmp_path, capsys, monkeypatch):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    stop = threading.Event()

    def writer():
        fd = os.open(fifo, os.O_RDWR)
        stop.wait(5)
        os.close(fd)

    t = threading.Thread(target=writer)
    t.start()
    try:
        rc, _, err, dt = _main(["validate-pod", str(fifo)], capsys, monkeypatch)
    finally:
        stop.set()
        t.join()
    assert rc == 3 and "FIFO" in err and dt < 2


def test_a_fake_machine_still_scans(tmp_path, capsys, monkeypatch):
    fakesys.write_tree(tmp_path, fakesys.gex44())
    rc, out, _, _ = _main(["scan", "--root", str(tmp_path)], capsys, monkeypatch)
    assert rc == 0 and "27b0" in out
