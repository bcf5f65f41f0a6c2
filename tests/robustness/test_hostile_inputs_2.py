"""Hostile input, second round: the input side (issue 28).

Each class is generated (parametrised over every compression and over where the input is
cut or padded), and each asserts what gpuclass now does with it; RELIABILITY.md's section
"Hostile input, second round: the input side" names these tests."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from audit_samples import auction_listing  # noqa: E402
from gpuclass import PciDatabase  # noqa: E402
from gpuclass.audit import audit_paths  # noqa: E402
from gpuclass.compression import decompressing, errors  # noqa: E402
from gpuclass.errors import PciIdsError, SourceError  # noqa: E402


def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


COMPRESS = {"gzip": gzip.compress, "xz": lzma.compress, "bz2": bz2.compress, "zstd": _zstd}
KINDS = sorted(COMPRESS)


def _ndjson(records) -> bytes:
    return b"".join(json.dumps({k: v for k, v in r.items() if k != "expected"}).encode() + b"\n"
                    for r in records)


def _ids(reports) -> list:
    return sorted(str(r.server) for r in reports)


def _split(data: bytes, parts: int) -> list[bytes]:
    """``data`` cut at line ends into ``parts`` pieces (each a separate stream)."""
    lines = data.splitlines(keepends=True)
    step = max(1, len(lines) // parts)
    return [b"".join(lines[i:i + step]) for i in range(0, len(lines), step)]


RECORDS = auction_listing(300)
DATA = _ndjson(RECORDS)


def _audit(tmp_path, blob: bytes, name="feed.ndjson.x"):
    p = tmp_path / name
    p.write_bytes(blob)
    return list(audit_paths([p]))


def _reference(tmp_path):
    return _ids(_audit(tmp_path, DATA, "plain.ndjson"))


# -- decompression reads every stream to the end and checks what follows ----------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("parts", [2, 3, 7])
def test_every_stream_is_read(tmp_path, kind, parts):
    blob = b"".join(COMPRESS[kind](piece) for piece in _split(DATA, parts))
    assert decompressing(io.BytesIO(blob), kind, "x").read() == DATA
    assert _ids(_audit(tmp_path, blob)) == _reference(tmp_path)


@pytest.mark.parametrize("pad", [4, 8, 4096, 1 << 16])
def test_xz_stream_padding_between_and_after_streams_is_read_through(tmp_path, pad):
    pieces = _split(DATA, 3)
    blob = (b"\0" * pad).join(lzma.compress(p) for p in pieces) + b"\0" * pad
    assert decompressing(io.BytesIO(blob), "xz", "x").read() == DATA
    assert _ids(_audit(tmp_path, blob)) == _reference(tmp_path)


@pytest.mark.parametrize("pad", [1, 3, 5])
def test_xz_padding_not_in_fours_is_damage(pad):
    blob = lzma.compress(DATA) + b"\0" * pad
    with pytest.raises(errors(), match="padding"):
        decompressing(io.BytesIO(blob), "xz", "x").read()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tail", [b"x", b"garbage after the stream\n", b"\x01" * 9000, b"BZ", b"\xfd7z"])
def test_trailing_garbage_is_a_typed_error(tmp_path, kind, tail):
    blob = COMPRESS[kind](DATA) + tail
    with pytest.raises(errors(), match="trailing data"):
        decompressing(io.BytesIO(blob), kind, "x").read()
    with pytest.raises(SourceError, match="trailing data"):
        _audit(tmp_path, blob)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("keep", [0.3, 0.5, 0.9, 0.999])
def test_a_last_stream_or_frame_cut_short_is_an_error(tmp_path, kind, keep):
    whole = b"".join(COMPRESS[kind](p) for p in _split(DATA, 4))
    last = COMPRESS[kind](_split(DATA, 4)[-1])
    cut = whole[: len(whole) - len(last) + max(1, int(len(last) * keep))]
    if cut == whole:
        cut = cut[:-1]
    with pytest.raises(SourceError):
        _audit(tmp_path, cut)


def test_a_zstd_checksum_mismatch_is_a_typed_error(tmp_path):
    blob = bytearray(_zstd(DATA))
    blob[-1] ^= 0x40
    with pytest.raises(SourceError, match="checksum"):
        _audit(tmp_path, bytes(blob))


def test_zstd_skippable_frames_are_skipped(tmp_path):
    skip = (0x184D2A50).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"hello"
    blob = skip + b"".join(_zstd(p) + skip for p in _split(DATA, 3))
    assert decompressing(io.BytesIO(blob), "zstd", "x").read() == DATA


# -- the pci.ids database, through the same reader ---------------------------------------

SMALL = b"10de  NVIDIA Corporation\n\t1e30  TU102GL [Quadro RTX 6000/8000]\n"


@pytest.mark.parametrize("pad", [4, 64, 1 << 15])
def test_a_padded_multi_stream_pci_ids_xz_loads_whole(tmp_path, pad):
    more = b"1234  Later Vendor\n\tabcd  Later Device\n"
    p = tmp_path / "pci.ids.xz"
    p.write_bytes(lzma.compress(SMALL) + b"\0" * pad + lzma.compress(more) + b"\0" * pad)
    db = PciDatabase.load(p)
    assert db.device_name(0x10DE, 0x1E30) == "TU102GL [Quadro RTX 6000/8000]"
    assert db.device_name(0x1234, 0xABCD) == "Later Device"


@pytest.mark.parametrize("kind", ["gzip", "xz", "bz2"])
def test_trailing_garbage_after_pci_ids_is_a_typed_error(tmp_path, kind):
    p = tmp_path / "pci.ids.any"
    p.write_bytes(COMPRESS[kind](SMALL) + b"not a stream")
    with pytest.raises(PciIdsError, match="trailing data"):
        PciDatabase.load(p)
