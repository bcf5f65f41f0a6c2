"""Hostile input, second round: the readers (issue 28).

Four classes, each generated (sizes, places and ratios drawn from a seeded generator) and
held to what RELIABILITY.md's section "Hostile input, second round: the readers" promises:
a CSV row with a stray quote or a field over the csv module's limit; an input's kind told
wherever its first record ends or its content starts; a tar.gz bomb refused early and in
bounded memory; a record that never closes read in bounded memory and linear time."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import random
import sys
import tarfile
import time
import tracemalloc

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from gpuclass.audit import Limits, audit_paths, detect_kind  # noqa: E402
from gpuclass.audit.ingest import records, text  # noqa: E402
from gpuclass.audit.ingest.archives import iter_tar  # noqa: E402
from gpuclass.audit.ingest.compressed import decompress  # noqa: E402
from gpuclass.audit.ingest.streams import read_at_most  # noqa: E402
from gpuclass.audit.ingest.kinds import HEAD, read_kind_head, sniff  # noqa: E402
from gpuclass.audit.ingest.text import Reader  # noqa: E402
from gpuclass.errors import SourceError  # noqa: E402
from helpers import run_in_process as run  # noqa: E402

SEEDS = range(6)


# -- CSV: a stray quote keeps the server id; a field over the limit invents no row ---------

@pytest.mark.parametrize("seed", SEEDS)
def test_a_device_row_with_a_stray_quote_keeps_its_server(tmp_path, seed):
    rnd = random.Random(seed)
    lines = ["server,vendor,device,subvendor,subdevice,class"]
    n = rnd.randint(3, 30)
    for i in range(n):
        lines.append(f"srv{i:03d},10de,27b0,10de,16fa,030000")
    bad = sorted(rnd.sample(range(1, n + 1), rnd.randint(1, min(3, n))))
    for k in bad:  # a quote somewhere after the server cell
        line = lines[k]
        at = rnd.randint(line.index(",") + 1, len(line))
        lines[k] = line[:at] + '"' + line[at:]
    p = tmp_path / "ids.csv"
    p.write_text("\n".join(lines) + "\n")
    reports = list(audit_paths([p]))
    assert sorted(r.server for r in reports) == [f"srv{i:03d}" for i in range(n)]
    flagged = [r for r in reports if r.problems]
    assert sorted(r.server for r in flagged) == sorted(f"srv{k - 1:03d}" for k in bad)
    for r in flagged:
        text_ = "; ".join(r.problems)
        assert "stray quote" in text_ and "no server name" not in text_


@pytest.mark.parametrize("seed", SEEDS)
def test_a_text_row_with_a_stray_quote_keeps_its_server(tmp_path, seed):
    rnd = random.Random(seed)
    n = rnd.randint(3, 20)
    rows = [f"{1000 + i},1x GTX 1080,{i}" for i in range(n)]
    k = rnd.randrange(n)
    rows[k] = f'{1000 + k},"1x GTX 1080 {"x" * rnd.randint(0, 50)},{k}'  # opens, never closes
    p = tmp_path / "x.csv"
    p.write_text("id,description,price\n" + "\n".join(rows) + "\n")
    reports = list(audit_paths([p]))
    assert [r.server for r in reports] == [str(1000 + i) for i in range(n)]
    assert [bool(r.problems) for r in reports] == [i == k for i in range(n)]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_quoted_field_over_the_csv_limit_invents_no_row(tmp_path, seed):
    """A quoted field larger than the csv module's limit, over any number of lines: one
    flagged row (naming its line and field), never rows made of the field's lines."""
    rnd = random.Random(seed)
    limit = csv.field_size_limit()
    n = rnd.randint(3, 8)
    k = rnd.randrange(n)
    size = rnd.randint(limit + 1, 3 * limit)
    breaks = rnd.randint(0, 40)
    big = "".join(rnd.choice("GTX 1080,") for _ in range(size))
    for _ in range(breaks):
        at = rnd.randrange(len(big))
        big = big[:at] + "\n" + big[at:]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", "description", "price"])
    for i in range(n):
        w.writerow([str(i), big if i == k else "1x GTX 1080", i])
    p = tmp_path / "x.csv"
    p.write_text(buf.getvalue())
    reports = list(audit_paths([p]))
    assert len(reports) == n
    assert [r.server for r in reports] == [str(i) for i in range(n)]
    (bad,) = [r for r in reports if r.problems]
    assert bad.server == str(k) and bad.source == str(p)
    assert f"line {k + 2}, field 2 ('description')" in bad.problems[0]
    assert "larger than the csv module's limit" in bad.problems[0]


# -- kinds: told wherever the first record ends or the content starts ---------------------

def _ndjson_with_first_record(size: int, n: int = 4) -> bytes:
    out = []
    for i in range(n):
        pad = "x" * max(0, size - 60) if i == 0 else ""
        out.append(json.dumps({"id": i, "description": ["1x GTX 1080"], "information": [pad]}))
    return ("\n".join(out) + "\n").encode()


@pytest.mark.parametrize("seed", SEEDS)
def test_ndjson_in_a_json_file_is_ndjson_whatever_its_first_record_size(tmp_path, seed):
    rnd = random.Random(seed)
    size = rnd.choice([rnd.randint(HEAD - 2000, HEAD + 2000), rnd.randint(HEAD, 8 * HEAD)])
    data = _ndjson_with_first_record(size)
    p = tmp_path / "x.json"
    p.write_bytes(data)
    assert detect_kind(p) == "ndjson"
    g = tmp_path / "x.json.gz"
    g.write_bytes(gzip.compress(data))
    assert detect_kind(g) == "ndjson"
    reports = list(audit_paths([p]))
    assert [r.server for r in reports] == ["0", "1", "2", "3"] and not any(r.problems for r in reports)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_feed_is_a_feed_whatever_its_first_record_size(tmp_path, seed):
    """A feed document over several lines, or one line alone, is not NDJSON."""
    rnd = random.Random(seed)
    size = rnd.randint(HEAD - 2000, 4 * HEAD)
    doc = {"server": [{"id": 1, "description": ["1x GTX 1080"], "information": ["x" * size]},
                      {"id": 2, "description": ["1x GTX 1080"]}]}
    for indent in (None, 1):
        p = tmp_path / f"f{indent}.json"
        p.write_text(json.dumps(doc, indent=indent) + "\n")
        assert detect_kind(p) == "feed"


def test_a_compact_feed_is_told_without_reading_its_list():
    """A one-line feed document is a feed once its "server" list opens: the head is not
    read on to the end of the document."""
    doc = json.dumps({"generated": {"at": [1, 2]}, "server": [{"id": i, "description": ["1x GTX 1080"]}
                                                             for i in range(100_000)]}).encode()
    head = read_kind_head(io.BytesIO(doc))
    assert len(head) == HEAD and sniff(head, "x.json") == "feed"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_feed_after_leading_blanks_is_a_feed(tmp_path, seed):
    rnd = random.Random(seed)
    blanks = "".join(rnd.choice(" \t\r\n") for _ in range(rnd.randint(HEAD - 100, 4 * HEAD)))
    doc = json.dumps({"server": [{"id": 7, "description": ["2x GTX 1080"]}]}, indent=rnd.choice([None, 1]))
    for name in ("feed", "feed.txt", "feed.json"):
        p = tmp_path / name
        p.write_text(blanks + doc)
        assert detect_kind(p) == "feed", name
        assert [(r.server, r.slices) for r in audit_paths([p])] == [("7", 8)]
    p = tmp_path / "n.ndjson.txt"
    p.write_bytes(blanks.encode() + _ndjson_with_first_record(rnd.randint(10, 3 * HEAD)))
    assert detect_kind(p) == "ndjson"


def test_the_kind_head_is_bounded():
    """Reading on stops at the bound, however much blank or however long a record."""
    from gpuclass.audit.ingest import kinds

    class Endless(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, b):
            b[:] = b" " * len(b)
            return len(b)

    head = read_kind_head(Endless())
    assert HEAD <= len(head) <= kinds.MAX_HEAD
    assert sniff(b'{"id": 1, "x": "' + b"a" * (3 * HEAD), "x.json") == "feed"  # never closes


# -- tar bomb: refused early, in bounded memory, before any output --------------------------

def _bomb(size: int, members: int) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tf:
        for i in range(members):
            data = b"01:00.0 0300: 10de:1b80\n" + b"\n" * (size // members)
            info = tarfile.TarInfo(f"host{i}/lspci.txt")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), 9)


@pytest.mark.parametrize("seed", range(3))
def test_a_tar_gz_bomb_is_refused_early_in_bounded_memory(tmp_path, seed):
    rnd = random.Random(seed)
    size = rnd.randint(96, 160) << 20
    p = tmp_path / "bomb.tar.gz"
    p.write_bytes(_bomb(size, rnd.randint(1, 3)))
    assert size / p.stat().st_size > 250
    tracemalloc.start()
    try:
        with pytest.raises(SourceError, match="expands more than 250 times"):
            list(audit_paths([p]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 48 << 20, peak  # the bomb expands to 96-160 MiB: refused long before


def test_a_tar_gz_bomb_is_exit_3_with_nothing_written(tmp_path):
    p = tmp_path / "bomb.tar.gz"
    p.write_bytes(_bomb(64 << 20, 2))
    proc = run("audit", p)
    assert proc.returncode == 3 and proc.stdout == ""
    assert "expands more than 250 times" in proc.stderr and proc.stderr.count("\n") == 1


def test_an_archive_under_the_ratio_is_read(tmp_path):
    """Expansion counted once: a tar.gz of about 200x past 16 MiB is read (the members'
    bytes counted again on top of the stream's made it 400x and refused it)."""
    rnd = random.Random(1)
    step = 64 << 10
    noise = os.urandom(1 << 16).hex().encode()
    data = bytearray(b"01:00.0 0300: 10de:1b80\n")
    while len(data) < 40 << 20:
        at = rnd.randrange(len(noise) - 450)
        data += noise[at:at + 450] + b"\n" * (step - 450)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tf:
        info = tarfile.TarInfo("host0/lspci.txt")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(bytes(data)))
    p = tmp_path / "ok.tar.gz"
    p.write_bytes(gzip.compress(raw.getvalue(), 6))
    ratio = len(raw.getvalue()) / p.stat().st_size
    assert 150 < ratio < 240, ratio
    with open(p, "rb") as fh:
        stream = decompress(fh, "gzip", str(p), Limits(), [0])
        for member in iter_tar(stream, str(p), Limits(), [0], counted=True):
            with member.open() as inner:
                assert len(read_at_most(inner, 1 << 30)) == len(data)


# -- records that never close: bounded memory, linear time --------------------------------

def _unclosed(kind: str, n: int) -> bytes:
    body = b"1x GTX 1080 " * (n // 12)
    if kind == "feed":
        return b'[{"id": 1, "description": ["1x GTX 1080"]}, {"id": 2, "description": ["' + body
    return b'{"id": 1, "description": ["1x GTX 1080"]}\n{"id": 2, "description": ["' + body + \
        b'\n{"id": 3, "description": ["1x GTX 1080"]}\n'


def _read(kind: str, data: bytes):
    reader = Reader(io.BytesIO(data))
    if kind == "feed":
        return list(records.iter_feed(reader, "x.json", ("id", "description")))
    return list(records.iter_ndjson(reader, "x.ndjson"))


@pytest.mark.parametrize("kind", ["feed", "ndjson"])
def test_a_record_that_never_closes_is_one_flagged_row_in_bounded_memory(monkeypatch, kind):
    limit = 1 << 20
    monkeypatch.setattr(text, "MAX_RECORD", limit)
    monkeypatch.setattr(records, "_MAX_RECORD", limit, raising=False)  # (the name before)
    peaks, times = [], []
    for n in (4 << 20, 40 << 20):
        data = _unclosed(kind, n)
        tracemalloc.start()
        t = time.perf_counter()
        try:
            out = _read(kind, data)
            times.append(time.perf_counter() - t)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert [row for row, *_ in out] == ([1, 2] if kind == "feed" else [1, 2, 3])
        assert out[1][2] is None and "longer than 1048576 characters" in out[1][3]
        del data, out
    # memory bounded by the limit and the read size, whatever the input's size
    assert peaks[1] < 2 * peaks[0] + (8 << 20), peaks
    assert peaks[1] < 4 * text.READ_SIZE + 8 * limit, peaks
    assert times[1] < 20 * times[0] + 0.05, times


def test_a_long_record_under_the_limit_is_read_in_linear_time(monkeypatch):
    """A record cut by many reads is decoded again only once its text doubled."""
    monkeypatch.setattr(text, "READ_SIZE", 1 << 14)
    times = []
    for n in (1 << 20, 10 << 20):
        doc = json.dumps([{"id": 1, "description": ["1x GTX 1080"], "information": ["x" * n]}]).encode()
        t = time.perf_counter()
        out = list(records.iter_feed(Reader(io.BytesIO(doc)), "x"))
        times.append(time.perf_counter() - t)
        assert [(row, err) for row, _, _, err in out] == [(1, None)]
    assert times[1] < 20 * times[0] + 0.05, times
