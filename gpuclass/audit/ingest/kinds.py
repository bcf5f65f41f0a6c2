"""What an audit input is: one table of kinds, told by content (magic bytes first) and name.

:data:`KINDS` are the kinds an input may be forced to (``--kind``); :func:`sniff` tells a
stream's kind from its first bytes (decompressed) and its name, and also names what is no
input (``binary``, ``text`` without an lspci line); :data:`SKIP_REASONS` says why such a
member of a collection is skipped.  The compression suffixes are named once, in
:mod:`gpuclass.compression` (:func:`plain_name`).

>>> sniff(b'[{"id": 1}]', "sb-120000.json"), sniff(b"01:00.0 0300: 10de:1b80\\n", "x")
('feed', 'lspci')
>>> plain_name("sb-1200.json.gz"), plain_name("dumps.tgz")
('sb-1200.json', 'dumps.tar')
"""

from __future__ import annotations

import csv
import json
import os
import re

from ...compression import plain_name
from ...inputs import open_input
from .columns import is_device_header
from .compressed import Limits, archive_kind, compression_of, decompress, decompress_errors

__all__ = ["KINDS", "HEAD", "SKIP_REASONS", "sniff", "detect_kind"]

KINDS = ("feed", "ndjson", "csv", "lspci", "lspci-dir", "archive", "table-csv", "parquet")
HEAD = 65536            # bytes looked at to tell a stream's kind
# why a member of a directory or archive that is no input is skipped, by what sniff found
SKIP_REASONS = {"binary": "a binary file, not an audit input",
                "archive": "an archive inside a collection (not read)",
                "text": "a text file with no lspci output, not an audit input"}
# a line of lspci output: an address (maybe after an IOMMU-group prefix), or a -vmm Slot
_LSPCI_LINE = re.compile(r"^(?:IOMMU [Gg]roup [0-9]{1,6}:? )?[ \t]*(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:"
                         r"[01][0-9a-fA-F]\.[0-7][ \t]|^Slot:\t", re.MULTILINE)


def sniff(head: bytes, name: str) -> str:
    """The kind of a stream from its first bytes (decompressed) and its name: one of
    ``KINDS``, ``binary``, or ``text`` (no lspci line among the first ones)."""
    low = name.lower()
    if archive_kind(head):
        return "archive"
    if head.startswith(b"PAR1") or low.endswith(".parquet"):
        return "parquet"
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    stripped = text.lstrip()
    if low.endswith((".csv", ".tsv")):
        try:
            first = next(csv.reader([text.split("\n", 1)[0]]), [])
        except csv.Error:  # a header the csv module rejects: reading it says so
            first = []
        return "table-csv" if is_device_header(first) else "csv"
    if low.endswith((".ndjson", ".jsonl")):
        return "ndjson"
    json_like = stripped.startswith(("{", "["))
    if not low.endswith(".json") and _LSPCI_LINE.search(text):
        return "lspci"   # before the first byte: a dump whose first line is damaged is a dump
    if json_like:
        if stripped.startswith("["):
            return "feed"
        first_line, _, rest = stripped.partition("\n")
        try:
            json.loads(first_line)
        except (ValueError, RecursionError):
            return "feed"  # an object over several lines: a feed document
        return "ndjson" if rest.strip() else "feed"
    # a text input may hold a stray control byte; a binary holds many
    if head.count(b"\0") * 200 > len(head) or text.count("\ufffd") * 20 > len(text) + 20:
        return "binary"
    return "text"


def detect_kind(path: str | os.PathLike, limits: Limits | None = None) -> str:
    """The input kind of a path, by its first bytes (decompressed where compressed) and
    its name: one of ``KINDS``, ``binary`` or ``text``.

    >>> import tempfile, pathlib, gzip
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "sb-120000.json.gz").write_bytes(gzip.compress(b'[{"id": 1}]'))
    >>> detect_kind(d / "sb-120000.json.gz"), detect_kind(d)
    ('feed', 'lspci-dir')
    """
    if os.path.isdir(path):
        return "lspci-dir"
    name = os.fspath(path)
    with open_input(path, "audit input") as fh:
        head = fh.read(HEAD)
        kind = compression_of(head)
        if kind is not None:
            fh.seek(0)
            try:
                head = decompress(fh, kind, name, limits or Limits()).read(HEAD)
            except decompress_errors():
                return "binary"
            name = plain_name(name)
    return sniff(head, name)
