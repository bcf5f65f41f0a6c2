"""Opening user-named inputs: regular files and stdin only, never a hang, always bounded."""

from __future__ import annotations

import io
import os
import socket
import sys
import threading
import time

import pytest

from gpuclass.errors import SourceError
from gpuclass.inputs import open_input, read_input


def _timed(fn, *args, **kw):
    t0 = time.perf_counter()
    try:
        out = fn(*args, **kw)
    except SourceError as exc:
        out = exc
    return out, time.perf_counter() - t0


def test_regular_file_is_read(tmp_path):
    p = tmp_path / "a.txt"
    p.write_bytes(b"abc")
    assert read_input(p, "text") == b"abc"


def test_a_fifo_is_refused_at_once_without_a_writer(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    err, dt = _timed(read_input, fifo, "policy")
    assert isinstance(err, SourceError) and "FIFO" in str(err) and dt < 1


@pytest.mark.parametrize("dev", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_devices_are_refused(dev):
    err, dt = _timed(read_input, dev, "manifest")
    assert isinstance(err, SourceError) and "character device" in str(err) and dt < 1


def test_a_directory_is_refused(tmp_path):
    err, _ = _timed(read_input, tmp_path, "report")
    assert isinstance(err, SourceError) and "a directory" in str(err)


def test_a_socket_is_refused(tmp_path):
    path = str(tmp_path / "s.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.bind(path)
        err, dt = _timed(read_input, path, "lspci")
    assert isinstance(err, SourceError) and "socket" in str(err) and dt < 1


def test_the_limit_stops_the_read(tmp_path):
    p = tmp_path / "big"
    p.write_bytes(b"x" * 1001)
    assert read_input(p, "text", limit=1001) == b"x" * 1001
    err, _ = _timed(read_input, p, "text", limit=1000)
    assert isinstance(err, SourceError) and "larger than 1000 bytes" in str(err)


def test_stdin_is_read_with_the_same_limit(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"y" * 10)))
    assert read_input("-", "manifest", limit=10) == b"y" * 10
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"y" * 11)))
    err, _ = _timed(read_input, "-", "manifest", limit=10)
    assert isinstance(err, SourceError) and "<stdin>" in str(err)


def test_symlinks_are_refused_where_asked(tmp_path):
    target = tmp_path / "t"
    target.write_bytes(b"t")
    link = tmp_path / "l"
    link.symlink_to(target)
    assert read_input(link, "text") == b"t"
    err, _ = _timed(read_input, link, "text", follow=False)
    assert isinstance(err, SourceError) and "symlink" in str(err)


def test_a_fifo_with_a_writer_is_still_refused(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    stop = threading.Event()

    def writer():
        fd = os.open(fifo, os.O_RDWR)  # keeps the FIFO open for reading and writing
        stop.wait(5)
        os.close(fd)

    t = threading.Thread(target=writer)
    t.start()
    try:
        err, dt = _timed(open_input, fifo, "database")
    finally:
        stop.set()
        t.join()
    assert isinstance(err, SourceError) and "FIFO" in str(err) and dt < 1
