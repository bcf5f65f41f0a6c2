"""Compressed data, in one place: which compression a stream holds (by its first bytes), a
file name less its compression suffix, and the reader that decompresses each kind.

The PCI ID database (:mod:`gpuclass.db.locate`) and the audit's inputs
(:mod:`gpuclass.audit.ingest.compressed`, which bounds what a stream may expand to) both
read compressed data through here.  The compression modules are imported only when a
compressed stream is read.

>>> import gzip
>>> compression_of(gzip.compress(b"x")), compression_of(b"x"), plain_name("pci.ids.xz")
('gzip', None, 'pci.ids')
"""

from __future__ import annotations

import sys
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

from .errors import InputError

__all__ = ["MAGIC", "SUFFIXES", "STDLIB_KINDS", "compression_of", "plain_name", "decompressing", "errors"]

MAGIC = ((b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"), (b"BZh", "bz2"), (b"\x28\xb5\x2f\xfd", "zstd"))
# a compressed file's suffix, what its name ends with without it, and its kind
SUFFIXES = ((".gz", "", "gzip"), (".xz", "", "xz"), (".bz2", "", "bz2"), (".zst", "", "zstd"),
            (".tgz", ".tar", "gzip"), (".txz", ".tar", "xz"), (".tbz2", ".tar", "bz2"))
STDLIB_KINDS = ("gzip", "xz", "bz2")  # read without an extra (zstd needs zstandard)
_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error, ValueError)


def compression_of(head: bytes) -> str | None:
    """``gzip``, ``xz``, ``bz2``, ``zstd`` or None, from the first bytes of a stream."""
    return next((name for magic, name in MAGIC if head.startswith(magic)), None)


def plain_name(name: str) -> str:
    """A compressed file's name less its compression suffix (``sb-1200.json.gz``:
    ``sb-1200.json``; ``dumps.tgz``: ``dumps.tar``)."""
    low = name.lower()
    for suffix, plain, _ in SUFFIXES:
        if low.endswith(suffix):
            return name[: -len(suffix)] + plain
    return name


def decompressing(raw: IO[bytes], kind: str, name: str) -> IO[bytes]:
    """A reader of what ``raw`` (compressed as ``kind``) holds."""
    if kind == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "xz":
        import lzma

        return lzma.LZMAFile(raw, "rb")
    if kind == "bz2":
        import bz2

        return bz2.BZ2File(raw, "rb")
    if kind == "zstd":
        try:
            import zstandard
        except ImportError as exc:
            raise InputError(f"{name}: reading zstd needs zstandard: pip install 'gpuclass[audit]'") from exc
        return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    raise InputError(f"unknown compression {kind!r}")


def errors() -> tuple[type[BaseException], ...]:
    """What damaged compressed data raises (xz's and zstd's errors too once their modules
    are loaded: they load with the first such stream, not with every input)."""
    found = list(_ERRORS)
    lzma = sys.modules.get("lzma")
    if lzma is not None:
        found.append(lzma.LZMAError)
    zstd = sys.modules.get("zstandard")
    if zstd is not None:
        found.append(zstd.ZstdError)
    return tuple(found)
