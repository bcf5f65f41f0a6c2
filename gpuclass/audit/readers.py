"""Reading audit inputs as streams of records: the auction feed, NDJSON, CSV, Parquet.

Files are read in chunks and decoded incrementally; the auction feed is decoded
one record at a time (``json.JSONDecoder.raw_decode`` over a sliding buffer; one
record must fit in memory).  A record that cannot be read comes out with its
error, never dropped.  :func:`detect_kind` tells the kinds apart.

>>> detect_kind("fleet/dumps.tar.gz"), detect_kind("fleet/ids.parquet")
('archive', 'parquet')
"""

from __future__ import annotations

import codecs
import csv
import itertools
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..errors import InputError, SourceError
from .progress import Progress
from .report import PASSTHROUGH

__all__ = ["KINDS", "TEXT_COLUMNS", "SERVER_COLUMNS", "DEVICE_FIELDS", "CHUNK_ROWS", "Reader",
           "iter_feed", "iter_ndjson", "BadCsvRow", "csv_rows", "pick_column", "iter_text_csv",
           "device_columns", "is_device_header", "iter_device_csv", "iter_parquet", "arrow_column",
           "detect_kind"]

KINDS = ("feed", "ndjson", "csv", "lspci", "lspci-dir", "archive", "table-csv", "parquet")
TEXT_COLUMNS = ("description", "text", "name", "gpu")
SERVER_COLUMNS = ("server", "id", "host", "hostname", "node")
CHUNK_ROWS = 65536      # device-table rows classified per kernel call
_READ = 1 << 20         # bytes read at a time
_MAX_RECORD = 64 << 20  # one feed record larger than this is malformed, not buffered on


class Reader:
    """Text chunks of a binary file, decoded incrementally, reporting progress."""

    def __init__(self, fh: IO[bytes], progress: Progress | None) -> None:
        self.fh = fh
        self.progress = progress
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.eof = False

    def read(self) -> str:
        data = self.fh.read(_READ)
        if self.progress:
            self.progress.advance(len(data))
        if not data:
            self.eof = True
            return self.decoder.decode(b"", final=True)
        return self.decoder.decode(data)

    def lines(self) -> Iterator[str]:
        """Lines with their ``\n`` (the csv module needs it inside quoted fields)."""
        tail = ""
        while not self.eof:
            chunk = tail + self.read()
            parts = chunk.split("\n")
            tail = parts.pop()
            for part in parts:
                yield part + "\n"
        if tail:
            yield tail


def iter_feed(reader: Reader, source: str) -> Iterator[tuple[int, str, Any, str | None]]:
    """Records of ``{"server": [...]}``, decoded one at a time from a sliding buffer."""
    dec = json.JSONDecoder()
    buf = ""
    pos = 0
    row = 0

    def fill(need_more: bool = True) -> bool:
        nonlocal buf, pos
        if reader.eof:
            return False
        if pos > len(buf) // 2:
            buf, pos = buf[pos:], 0
        buf += reader.read()
        return True

    def skip_ws() -> str:
        nonlocal pos
        while True:
            while pos < len(buf) and buf[pos] in " \t\r\n":
                pos += 1
            if pos < len(buf):
                return buf[pos]
            if not fill():
                return ""

    def value() -> tuple[Any, str | None]:
        """Decode the value at ``pos``: (value, None) or (None, error); reads on as needed."""
        nonlocal pos
        last = None
        while True:
            try:
                v, end = dec.raw_decode(buf, pos)
                pos = end
                return v, None
            except json.JSONDecodeError as exc:
                if reader.eof or len(buf) - pos > _MAX_RECORD:
                    return None, f"malformed JSON: {exc.msg} at byte {exc.pos - pos} of the record"
                key = (exc.msg, exc.pos)
                if key == last and not exc.msg.startswith("Unterminated"):
                    # more text did not change the error: it is in the record itself
                    return None, f"malformed JSON: {exc.msg} at byte {exc.pos - pos} of the record"
                last = key
                fill()

    if skip_ws() != "{":
        yield 1, source, None, "not an auction feed: expected a JSON object with a \"server\" list"
        return
    pos += 1
    while True:
        c = skip_ws()
        if c == "}" or c == "":
            if c == "":
                yield row + 1, source, None, "feed ends before its closing brace"
            return
        if c == ",":
            pos += 1
            continue
        key, err = value()
        if err is not None or not isinstance(key, str):
            yield row + 1, source, None, f"not an auction feed: {err or 'expected a key'}"
            return
        if skip_ws() != ":":
            yield row + 1, source, None, "not an auction feed: expected ':' after a key"
            return
        pos += 1
        c = skip_ws()
        if key != "server" or c != "[":
            _, err = value()  # another top-level field: decoded and left alone
            if err is not None:
                yield row + 1, source, None, f"not an auction feed: {err}"
                return
            continue
        pos += 1
        while True:
            c = skip_ws()
            if c == "]":
                pos += 1
                break
            if c == ",":
                pos += 1
                continue
            if c == "":
                yield row + 1, source, None, "feed ends inside the server list"
                return
            row += 1
            rec, err = value()
            if err is None:
                yield row, source, rec, None
                continue
            yield row, source, None, err
            # Resynchronise at the next record: after "}," and before "{".
            while True:
                nxt = buf.find("{", pos + 1)
                if nxt >= 0:
                    pos = nxt
                    break
                pos = len(buf)
                if not fill():
                    return


def iter_ndjson(reader: Reader, source: str) -> Iterator[tuple[int, str, Any, str | None]]:
    row = 0
    for line in reader.lines():
        if not line.strip():
            continue  # blank lines are not rows
        row += 1
        try:
            yield row, source, json.loads(line), None
        except json.JSONDecodeError as exc:
            yield row, source, None, f"malformed JSON line: {exc.msg} at column {exc.colno}"


class BadCsvRow(list):
    """A CSV row the csv module could not split (kept, so that it becomes a flagged row)."""

    def __init__(self, problem: str) -> None:
        super().__init__()
        self.problem = problem


def csv_rows(reader: Reader) -> Iterator[list[str]]:
    """CSV rows; a row the csv module rejects (a bare carriage return in an unquoted
    field, say) comes out as a :class:`BadCsvRow` instead of ending the file."""
    rows = csv.reader(reader.lines())
    while True:
        try:
            yield next(rows)
        except StopIteration:
            return
        except csv.Error as exc:
            yield BadCsvRow(f"malformed CSV row: {exc}")


def pick_column(header: list[str], wanted: Sequence[str], given: str | None, what: str) -> int | None:
    low = [h.strip().lower() for h in header]
    if given is not None:
        if given.lower() not in low:
            raise InputError(f"{what} column {given!r} not in the header {header}")
        return low.index(given.lower())
    return next((low.index(w) for w in wanted if w in low), None)


def iter_text_csv(rows: Iterator[list[str]], header: list[str], source: str, text_column: str | None,
                   server_column: str | None) -> Iterator[tuple[int, str, Any, str | None]]:
    ti = pick_column(header, TEXT_COLUMNS, text_column, "text")
    if ti is None:
        raise InputError(f"{source}: no text column (one of {', '.join(TEXT_COLUMNS)}) "
                         "and no vendor/device columns; name one with --text-column")
    si = pick_column(header, SERVER_COLUMNS, server_column, "server")
    low = [h.strip().lower() for h in header]
    extra = {k: low.index(k) for k in PASSTHROUGH + ("specials", "information") if k in low}
    for row, cells in enumerate(rows, 1):
        if isinstance(cells, BadCsvRow):
            yield row, source, None, cells.problem
            continue
        if len(cells) != len(header):
            yield row, source, None, f"expected {len(header)} fields, got {len(cells)}"
            continue
        rec: dict[str, Any] = {"id": cells[si] if si is not None else str(row),
                               "description": cells[ti].split("\n")}
        for k, i in extra.items():
            rec[k] = [x.strip() for x in cells[i].split(",") if x.strip()] if k == "specials" else cells[i]
        yield row, source, rec, None


DEVICE_FIELDS = ("server", "vendor", "device", "subvendor", "subdevice", "class")
DEVICE_ALIASES = {"server": SERVER_COLUMNS, "vendor": ("vendor", "vendor_id"),
                   "device": ("device", "device_id"), "subvendor": ("subvendor", "subsystem_vendor"),
                   "subdevice": ("subdevice", "subsystem_device", "subsystem_id"),
                   "class": ("class", "class_code", "class_id")}


def device_columns(header: Sequence[str], server_column: str | None) -> dict[str, int | None]:
    low = [str(h).strip().lower() for h in header]
    out: dict[str, int | None] = {}
    for f in DEVICE_FIELDS:
        names = (server_column.lower(),) if f == "server" and server_column else DEVICE_ALIASES[f]
        out[f] = next((low.index(n) for n in names if n in low), None)
    missing = [f for f in ("server", "vendor", "device", "class") if out[f] is None]
    if missing:
        raise InputError(f"device table lacks columns {missing} (header: {list(header)})")
    return out


def is_device_header(header: Sequence[str]) -> bool:
    low = {str(h).strip().lower() for h in header}
    return bool(low & set(DEVICE_ALIASES["vendor"])) and bool(low & set(DEVICE_ALIASES["device"]))


def iter_device_csv(rows: Iterator[list[str]], header: list[str],
                     server_column: str | None) -> Iterator[dict[str, Any]]:
    idx = device_columns(header, server_column)
    width = len(header)
    it = enumerate(rows, 1)
    while True:
        part = list(itertools.islice(it, CHUNK_ROWS))
        if not part:
            return
        cols: dict[str, list[Any]] = {k: [] for k in ("row", *DEVICE_FIELDS, "error")}
        for row, cells in part:
            cols["row"].append(row)
            if isinstance(cells, BadCsvRow):
                err = cells.problem
            else:
                err = None if len(cells) == width else f"expected {width} fields, got {len(cells)}"
            for f in DEVICE_FIELDS:
                i = idx[f]
                cols[f].append(cells[i] if i is not None and i < len(cells) else None)
            cols["error"].append(err)
        yield cols


def iter_parquet(path: Path, server_column: str | None,
                  progress: Progress | None) -> Iterator[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise InputError("reading Parquet needs pyarrow: pip install 'gpuclass[dataframes]'") from exc
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own error types
        raise SourceError(str(path), None, f"not a Parquet file: {exc}") from None
    idx = device_columns(pf.schema_arrow.names, server_column)
    names = pf.schema_arrow.names
    row = 0
    for i, batch in enumerate(pf.iter_batches(batch_size=CHUNK_ROWS)):
        n = batch.num_rows
        cols: dict[str, Any] = {"row": np.arange(row + 1, row + n + 1)}
        for f in DEVICE_FIELDS:
            j = idx[f]
            cols[f] = None if j is None else arrow_column(batch.column(names[j]))
        cols["error"] = None
        row += n
        if progress:  # Parquet has no byte position to show: rows read, scaled to the size
            progress.set(int(os.path.getsize(path) * row / max(pf.metadata.num_rows, 1)))
        yield cols


def arrow_column(col: Any) -> Any:
    import pyarrow as pa

    if pa.types.is_integer(col.type) and col.null_count == 0:
        return col.to_numpy()
    return col.to_pylist()


_ARCHIVES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".zip")


def detect_kind(path: str | os.PathLike) -> str:
    """The input kind of a path, by name and first bytes (one of ``KINDS``).

    """
    p = Path(path)
    name = p.name.lower()
    if p.is_dir():
        return "lspci-dir"
    if name.endswith(_ARCHIVES):
        return "archive"
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith((".ndjson", ".jsonl")):
        return "ndjson"
    head = b""
    if p.is_file():
        with open(p, "rb") as fh:
            head = fh.read(65536)
    text = head.decode("utf-8", "replace")
    if name.endswith((".csv", ".tsv")):
        first = next(csv.reader([text.split("\n", 1)[0]]), [])
        return "table-csv" if is_device_header(first) else "csv"
    stripped = text.lstrip()
    if name.endswith(".json") or stripped.startswith(("{", "[")):
        first_line = stripped.split("\n", 1)[0]
        try:
            obj = json.loads(first_line)
        except ValueError:
            return "feed"
        return "feed" if isinstance(obj, dict) and "server" in obj and isinstance(obj["server"], list) \
            and "\n" not in stripped.strip() else "ndjson"
    return "lspci"
