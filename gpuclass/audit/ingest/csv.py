"""CSV inputs: rows that survive stray quotes, a text column or a device table.

A text CSV gives records (:func:`iter_text_csv`) for the listing engine; a device table
gives Arrow record batches of its device columns (:func:`device_batches`) for the device
engine, the one every device table reaches.

>>> import io
>>> from .text import Reader
>>> rows = list(csv_rows(Reader(io.BytesIO(b'\\xef\\xbb\\xbfid,description\\n1,"5 GPU\\n2,GTX 1080\\n'))))
>>> rows[0], type(rows[1]).__name__, rows[2]
(['id', 'description'], 'BadCsvRow', ['2', 'GTX 1080'])
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Sequence

from typing import Any

from ...errors import InputError
from ..results.columns import PASSTHROUGH
from . import columns
from .columns import DEVICE_FIELDS, SERVER_COLUMNS, TEXT_COLUMNS, device_columns, pick_column
from .text import MAX_RECORD, LongLine, Reader

__all__ = ["BadCsvRow", "CsvRows", "csv_rows", "check_header", "iter_text_csv", "device_batches"]


class BadCsvRow(list):
    """A CSV row the csv module could not split (kept, so that it becomes a flagged row).

    It holds the cells that could still be read from its line (a stray quote's line
    split as if the quote were a character: the server id before or after it kept), and
    ``problem`` says where (line, field) and why."""

    def __init__(self, problem: str, cells: Sequence[str] = ()) -> None:
        super().__init__(cells)
        self.problem = problem

    limit = False  # whether a field over the csv module's limit made it


_QUOTE_OR_COMMA = re.compile(r'[",]')
_SPANS = object()  # CsvRows.line_row: a quote that may open a field over several lines
_MAX_SPAN_LINES = 10_000   # a quoted field may run over this many lines, no more
_MAX_SPAN_CHARS = 16 << 20  # ... and this many characters (held to be read back as rows)


def _salvage(line: str, width: int | None) -> list[str]:
    """The cells of a line with a stray quote, as far as they can be read: split by the
    csv module, and a last cell that swallowed the rest of the line (an unclosed quote)
    split again at its commas, where the row is short of the header's width."""
    text = line.rstrip("\r\n")
    try:
        cells = next(csv.reader([text]), [])
    except csv.Error:
        cells = text.split(",")
    if cells and (width is None or len(cells) < width) and "," in cells[-1]:
        cells = cells[:-1] + cells[-1].split(",")
    return [c.strip('"') for c in cells]


class CsvRows:
    """CSV rows of a text stream, each from its own physical record.

    A row the csv module rejects (a bare carriage return in an unquoted field, a
    field larger than its limit) is a :class:`BadCsvRow` naming its line and field; a
    quoted field over the limit is one bad row however many lines it spans (never rows
    made of its lines).  A quote that opens a field and never closes it, or a stray one,
    would make the csv module read every line after it into one field: where the lines
    up to the closing quote do not give a row of the header's width, the line with the
    quote alone is a bad row and the lines after it are read as rows of their own.  Where
    no field may span lines (``one_line``: a device table's IDs and names), a line with
    an odd number of quotes is a bad row at once.  A bad row keeps the cells its line
    still gives (:func:`_salvage`), the server id among them.
    """

    def __init__(self, reader: Reader) -> None:
        self.lines = reader.lines()
        self.pending: list[tuple[int, str]] = []  # lines read ahead, next first (reversed)
        self.width: int | None = None  # the header's, once read
        self.header: list[str] | None = None
        self.one_line = False          # may be set once the header is read
        self.lineno = 0                # of the last line read

    def _next_line(self) -> tuple[int, str] | None:
        if self.pending:
            return self.pending.pop()
        line = next(self.lines, None)
        if line is None:
            return None
        self.lineno += 1
        return self.lineno, line

    def _stray(self, at: int, line: str) -> BadCsvRow:
        return BadCsvRow(f"line {at}: unterminated or stray quote: {line.strip()[:80]!r}",
                         _salvage(line, self.width))

    def __iter__(self) -> Iterator[list[str]]:
        while True:
            got = self._next_line()
            if got is None:
                return
            at, line = got
            row = self.line_row(at, line)
            if row is None:
                continue
            if row is not _SPANS:
                yield row
                continue
            parts, size, quotes = [line], len(line), line.count('"')
            extra: list[tuple[int, str]] = []
            while quotes % 2 and len(extra) < _MAX_SPAN_LINES and size < _MAX_SPAN_CHARS:
                nxt = self._next_line()
                if nxt is None:
                    break
                extra.append(nxt)
                parts.append(nxt[1])
                quotes += nxt[1].count('"')
                size += nxt[1].size if isinstance(nxt[1], LongLine) else len(nxt[1])
            if quotes % 2 == 0:
                cells = self._row("".join(parts), at)
                if isinstance(cells, BadCsvRow) and cells.limit:
                    yield cells  # a quoted field too large: one row, whatever its lines hold
                    continue
                if not isinstance(cells, BadCsvRow) and (self.width is None or len(cells) == self.width):
                    yield cells
                    continue
            self.pending.extend(reversed(extra))
            yield self._stray(at, line)

    def line_row(self, at: int, line: str) -> Any:
        """The row of line ``at`` read alone: its cells, a :class:`BadCsvRow`, None for a
        blank line, or ``_SPANS`` for a line whose quote may open a field that goes on
        over the next lines (never where ``one_line`` is set)."""
        if isinstance(line, LongLine):  # past the limit on a record: read past, not held
            return BadCsvRow(f"line {at}: a line of {line.size} characters, longer than the "
                             f"limit on one record ({MAX_RECORD})", _salvage(line, self.width))
        if line.count('"') % 2 == 0:
            # a blank line is no row (as the csv module's DictReader has it)
            return self._row(line, at) if line.strip() else None
        return self._stray(at, line) if self.one_line else _SPANS

    def rest(self) -> Iterator[tuple[int, str]]:
        """What is left to read: ``(line number, line)`` for each line read ahead, then
        ``(0, piece)`` for each piece of whole lines
        (:meth:`~gpuclass.audit.ingest.text.Reader.pieces`), whose lines are numbered on
        from :attr:`lineno` as it was when this began."""
        while self.pending:
            yield self.pending.pop()
        for piece in self.lines.rest():
            yield 0, piece

    def _row(self, record: str, at: int) -> list[str]:
        try:
            cells = next(csv.reader([record]), [])
        except csv.Error as exc:
            msg = str(exc)
            limit = "field limit" in msg
            if limit:
                msg = f"a field larger than the csv module's limit ({csv.field_size_limit()} characters)"
            bad = BadCsvRow(f"malformed CSV row at {self._where(record, at, limit)}: {msg}",
                            _salvage(record.split("\n", 1)[0], self.width) if limit else ())
            bad.limit = limit
            return bad
        if self.width is None:
            self.width, self.header = len(cells), cells
        return cells

    def _where(self, record: str, at: int, limit: bool) -> str:
        """``line N`` and, for a field over the limit, ``field K ('name')``: the first
        field whose text passes the limit, counted by a quote-aware split."""
        where = f"line {at}"
        if not limit:
            return where
        cap = csv.field_size_limit()
        field, quoted, begin = 0, False, 0
        for m in _QUOTE_OR_COMMA.finditer(record):
            if m.group() == '"':
                quoted = not quoted
            elif not quoted:
                if m.start() - begin > cap:
                    break
                field, begin = field + 1, m.end()
        name = f" ({self.header[field]!r})" if self.header and field < len(self.header) else ""
        return f"{where}, field {field + 1}{name}"


def csv_rows(reader: Reader) -> Iterator[list[str]]:
    """The rows of a CSV stream (see :class:`CsvRows`)."""
    return iter(CsvRows(reader))


def check_header(header: list[str], source: str) -> None:
    """A header in one field holding another separator: a CSV gpuclass cannot read as one."""
    if len(header) == 1:
        for sep, what in ((";", "semicolons"), ("\t", "tabs"), ("|", "bars")):
            if sep in header[0]:
                raise InputError(f"{source}: the CSV header {header[0][:80]!r} is separated by {what}; "
                                 f"gpuclass reads comma-separated CSV (convert it first)")


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
        if isinstance(cells, BadCsvRow):  # flagged, under the server id its line still gives
            sid = cells[si].strip() if si is not None and si < len(cells) else ""
            yield row, source, ({"id": sid} if sid else None), cells.problem
            continue
        if len(cells) != len(header):
            yield row, source, None, f"expected {len(header)} fields, got {len(cells)}"
            continue
        rec: dict[str, Any] = {"id": cells[si] if si is not None else str(row),
                               "description": cells[ti].split("\n")}
        for k, i in extra.items():
            rec[k] = [x.strip() for x in cells[i].split(",") if x.strip()] if k == "specials" else cells[i]
        yield row, source, rec, None


def _device_row(cells: list[str], k: int, width: int, idx: dict[str, int | None], present: list[str],
                cols: dict[str, list[str | None]], errors: dict[int, str]) -> None:
    """Row ``k`` of a batch read by the csv module: its cells (missing past the row's end)
    added to ``cols``; a bad row's ID cells missing, its problem in ``errors``."""
    if isinstance(cells, BadCsvRow):
        errors[k] = cells.problem
    elif len(cells) != width:
        errors[k] = f"expected {width} fields, got {len(cells)}"
    for f in present:
        i = idx[f]
        assert i is not None
        cell = cells[i] if i < len(cells) else None
        cols[f].append(None if k in errors and f != "server" else cell)


def device_batches(table: CsvRows, header: list[str], server_column: str | None,
                   where: str | None = None) -> Iterator[tuple[Any, dict[str, str | None], dict[int, str]]]:
    """The rows of a device-table CSV after its header (``table``, with ``one_line`` set)
    as ``(record batch, fields, errors)`` of :data:`~.columns.BATCH_ROWS` rows (the last
    fewer): the device columns as text, ``fields`` the column of each device field,
    ``errors`` the rows that could not be read (a stray quote, a wrong number of fields),
    whose ID cells are left missing and whose server cell is kept where the row has one.

    The core splits the plain lines (the native ``csv_cells``: cells as the csv module
    reads them, copied as they lie in the text), a piece of the text at a time; a line it
    does not take (quotes inside a cell, a bare carriage return, a blank line, a row of
    another width ...) is read by :meth:`CsvRows.line_row`, as every line was before.
    ``tests/audit/test_csv_cells.py`` holds the batches equal to the csv module's rows."""
    import pyarrow as pa

    from ..._native import core

    idx = device_columns(header, server_column, where)
    present = [f for f in DEVICE_FIELDS if idx[f] is not None]
    fields = {f: (f if f in present else None) for f in DEVICE_FIELDS}
    want = [idx[f] for f in present]
    width, full = len(header), columns.BATCH_ROWS
    limit = csv.field_size_limit()
    parts: dict[str, list[Any]] = {f: [] for f in present}  # the batch's arrays so far
    cols: dict[str, list[str | None]] = {f: [] for f in present}  # its rows read by the csv module
    errors: dict[int, str] = {}
    n = 0

    def flush() -> None:
        if cols[present[0]] or not parts[present[0]]:
            for f in present:
                parts[f].append(pa.array(cols[f], pa.string()))
                cols[f] = []

    def batch() -> tuple[Any, dict[str, str | None], dict[int, str]]:
        nonlocal errors, n
        flush()
        arrays = [p[0] if len(p) == 1 else pa.concat_arrays(p) for p in parts.values()]
        for p in parts.values():
            p.clear()
        out, errors, n = (pa.record_batch(arrays, names=present), fields, errors), {}, 0
        return out

    def one(at: int, line: str) -> bool:
        """Line ``at`` read by the csv module; whether the batch is full."""
        nonlocal n
        row = table.line_row(at, line)
        if row is None:
            return False
        _device_row(row, n, width, idx, present, cols, errors)
        n += 1
        return n == full

    last = table.lineno  # the number of the last line taken from the text
    for at, piece in table.rest():
        if at or isinstance(piece, LongLine):  # a line read ahead, or one too long
            if not at:
                last += 1
            if one(at or last, piece):
                yield batch()
            continue
        data = piece.encode()
        pos, size = 0, len(data)
        while pos < size:
            room = full - n
            rows, pos, got = core.csv_cells(data, pos, width, want, limit, room)
            if rows:
                if cols[present[0]]:
                    flush()
                for f, (offsets, cells) in zip(present, got):
                    parts[f].append(pa.Array.from_buffers(pa.string(), rows, [
                        None, pa.py_buffer(offsets), pa.py_buffer(cells)]))
                n += rows
                last += rows
            if n == full:
                yield batch()
            if pos >= size or rows == room:
                continue
            end = data.find(b"\n", pos) + 1 or size  # a line the core did not take
            last += 1
            if one(last, data[pos:end].decode()):
                yield batch()
            pos = end
    if n:
        yield batch()
