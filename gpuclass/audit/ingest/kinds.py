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

import os
import re

from ...compression import plain_name
from ...inputs import open_input
from .columns import is_device_header
from .compressed import Limits, archive_kind, compression_of, decompress, decompress_errors
from .streams import read_head

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

__all__ = ["KINDS", "HEAD", "MAX_HEAD", "SKIP_REASONS", "sniff", "read_kind_head", "detect_kind"]

KINDS = ("feed", "ndjson", "csv", "lspci", "lspci-dir", "archive", "table-csv", "parquet")
HEAD = 65536            # bytes of content looked at to tell a stream's kind
MAX_HEAD = 64 << 20     # read on at most this far (leading blanks, a long first record)
_BLANK = b" \t\r\n\f\v"
_BOM = b"\xef\xbb\xbf"
_OUTSIDE = re.compile(rb'["{}\[\]\n]')  # what changes the state outside a JSON string
_INSIDE = re.compile(rb'["\\\n]')       # ... and inside one
_SERVER_LIST = re.compile(rb'"server"[ \t\r\n]*:[ \t\r\n]*\Z')
# why a member of a directory or archive that is no input is skipped, by what sniff found
SKIP_REASONS = {"binary": "a binary file, not an audit input",
                "archive": "an archive inside a collection (not read)",
                "text": "a text file with no lspci output, not an audit input"}
# a line of lspci output: an address (maybe after an IOMMU-group prefix), or one of the
# fields every -vmm record has (a record's Slot line damaged, as the first line of a
# one-device dump may be, leaves its Class, Vendor and Device lines: JSON has no such line)
_LSPCI_LINE = re.compile(r"^(?:IOMMU [Gg]roup [0-9]{1,6}:? )?[ \t]*(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:"
                         r"[01][0-9a-fA-F]\.[0-7][ \t]|^(?:Slot|Class|Vendor|Device):\t", re.MULTILINE)


class _Lead:
    """What the start of a stream shows, fed a piece at a time (each byte looked at
    once): where its content begins (past a byte-order mark and blanks), and, where that
    is ``{``, whether the first JSON value ends on its first line and another value
    follows it (NDJSON) or not (a feed document).  JSON's structure is ASCII, which no
    byte of a UTF-8 sequence is, so the bytes are scanned as they are."""

    def __init__(self) -> None:
        self.size = 0
        self.start: int | None = None    # offset of the first content byte
        self.json: bool | None = None    # the content starts with "{"
        self.depth = 0
        self.in_str = False
        self.esc = False
        self.ended = False               # the first value closed ...
        self.one_line = True             # ... without a line break outside its strings
        self.follows: bool | None = None  # another value after it (None: not seen yet)
        self.feed_doc = False            # a top-level "server" list seen: a feed document
        self.tail = b""                  # the last bytes of the previous piece

    def done(self) -> bool:
        """Whether the kind can be told from what was fed (given ``HEAD`` bytes of content)."""
        if self.start is None:
            return False
        if self.size - self.start < HEAD:
            return False
        return not self.json or not self.one_line or self.follows is not None or self.feed_doc

    def feed(self, data: bytes) -> None:
        base, self.size = self.size, self.size + len(data)
        k = 0
        if self.start is None:
            if base == 0 and data.startswith(_BOM):
                k = len(_BOM)
            k = len(data) - len(data[k:].lstrip(_BLANK))
            if k == len(data):
                return
            self.start = base + k
            self.json = data[k] == 0x7B
            if not self.json:
                return
            self.depth, k = 1, k + 1
        if not self.json or not self.one_line or self.follows is not None or self.feed_doc:
            return
        n = len(data)
        try:
            self._scan(data, k)
        finally:
            self.tail = data[-64:]

    def _scan(self, data: bytes, k: int) -> None:
        n = len(data)
        while k < n and not self.ended:
            if self.esc:
                self.esc, k = False, k + 1
                continue
            m = (_INSIDE if self.in_str else _OUTSIDE).search(data, k)
            if m is None:
                return
            c, k = data[m.start()], m.end()
            if c == 0x0A:
                self.one_line = False  # a record over several lines: no NDJSON line
                return
            if self.in_str:
                if c == 0x5C:
                    self.esc = True
                else:
                    self.in_str = False
            elif c == 0x22:
                self.in_str = True
            elif c in (0x7B, 0x5B):
                if c == 0x5B and self.depth == 1 and _SERVER_LIST.search(
                        (self.tail if m.start() < 64 else b"") + data[max(0, m.start() - 64):m.start()]):
                    self.feed_doc = True  # {"server": [...]: a feed, however long its list
                    return
                self.depth += 1
            else:
                self.depth -= 1
                self.ended = self.depth == 0
        if self.ended:
            rest = data[k:].lstrip(_BLANK)
            if rest:
                self.follows = True


def read_kind_head(fh: IO[bytes], head: bytes | None = None) -> bytes:
    """The first bytes of ``fh``, enough to tell its kind: ``HEAD`` bytes of content past
    any leading blanks, and, where the content opens a JSON object on one line, on to where
    that first value ends and what follows it shows (another value: NDJSON), reading on
    as needed up to ``MAX_HEAD`` bytes (``head``: what was read from the start already).
    The caller puts them back (:class:`~gpuclass.audit.ingest.streams.Prefixed`)."""
    if head is None:
        head = read_head(fh, HEAD)
    if len(head) < HEAD or archive_kind(head) or head.startswith(b"PAR1"):
        return head
    lead = _Lead()
    lead.feed(head)
    parts, size = [head], len(head)
    while not lead.done() and size < MAX_HEAD:
        piece = fh.read(min(1 << 20, MAX_HEAD - size))
        if not piece:
            break
        parts.append(piece)
        size += len(piece)
        lead.feed(piece)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def sniff(head: bytes, name: str) -> str:
    """The kind of a stream from its first bytes (decompressed; see
    :func:`read_kind_head`) and its name: one of ``KINDS``, ``binary``, or ``text`` (no
    lspci line among the first ones).

    JSON that opens with ``{`` is NDJSON where its first value ends on its first line and
    another value follows, a feed document otherwise, however long that first value is.
    """
    low = name.lower()
    if archive_kind(head):
        return "archive"
    if head.startswith(b"PAR1") or low.endswith(".parquet"):
        return "parquet"
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    stripped = text.lstrip()
    if low.endswith((".csv", ".tsv")):
        import csv

        try:
            first = next(csv.reader([stripped.split("\n", 1)[0]]), [])
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
        lead = _Lead()
        lead.feed(head)
        return "ndjson" if lead.ended and lead.one_line and lead.follows else "feed"
    # a text input may hold a stray control byte; a binary holds many
    sample = head[-HEAD:] if len(text) > len(stripped) else head[:HEAD]
    sample_text = sample.decode("utf-8", "replace")
    if sample.count(b"\0") * 200 > len(sample) or sample_text.count("\ufffd") * 20 > len(sample_text) + 20:
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
        if kind is None:
            head = read_kind_head(fh, head)
        else:
            fh.seek(0)
            try:
                head = read_kind_head(decompress(fh, kind, name, limits or Limits()))
            except decompress_errors():
                return "binary"
            name = plain_name(name)
    return sniff(head, name)
