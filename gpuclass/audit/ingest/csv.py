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
from collections.abc import Iterator, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ...errors import InputError
from ..results.columns import PASSTHROUGH
from . import columns
from .columns import DEVICE_FIELDS, SERVER_COLUMNS, TEXT_COLUMNS, device_columns, pick_column
from .text import Reader

__all__ = ["BadCsvRow", "CsvRows", "csv_rows", "check_header", "iter_text_csv", "device_batches"]


class BadCsvRow(list):
    """A CSV row the csv module could not split (kept, so that it becomes a flagged row)."""

    def __init__(self, problem: str) -> None:
        super().__init__()
        self.problem = problem


_MAX_SPAN_LINES = 10_000   # a quoted field may run over this many lines, no more
_MAX_SPAN_CHARS = 1 << 20


class CsvRows:
    """CSV rows of a text stream, each from its own physical record.

    A row the csv module rejects (a bare carriage return in an unquoted field, a
    field larger than its limit) is a :class:`BadCsvRow`.  A quote that opens a field
    and never closes it, or a stray one, would make the csv module read every line
    after it into one field: where the lines up to the closing quote do not give a
    row of the header's width, the line with the quote alone is a bad row and the
    lines after it are read as rows of their own.  Where no field may span lines
    (``one_line``: a device table's IDs and names), a line with an odd number of quotes
    is a bad row at once.
    """

    def __init__(self, reader: Reader) -> None:
        self.lines = reader.lines()
        self.pending: list[str] = []   # lines read ahead, next first (reversed)
        self.width: int | None = None  # the header's, once read
        self.one_line = False          # may be set once the header is read

    def _next_line(self) -> str | None:
        if self.pending:
            return self.pending.pop()
        return next(self.lines, None)

    def __iter__(self) -> Iterator[list[str]]:
        while True:
            line = self._next_line()
            if line is None:
                return
            if line.count('"') % 2 == 0:
                if line.strip():  # a blank line is no row (as the csv module's DictReader has it)
                    yield self._row(line)
                continue
            if self.one_line:
                yield BadCsvRow(f"unterminated or stray quote: {line.strip()[:80]!r}")
                continue
            record, extra = line, []
            while record.count('"') % 2 and len(extra) < _MAX_SPAN_LINES and len(record) < _MAX_SPAN_CHARS:
                nxt = self._next_line()
                if nxt is None:
                    break
                extra.append(nxt)
                record += nxt
            if record.count('"') % 2 == 0:
                cells = self._row(record)
                if not isinstance(cells, BadCsvRow) and (self.width is None or len(cells) == self.width):
                    yield cells
                    continue
            self.pending.extend(reversed(extra))
            yield BadCsvRow(f"unterminated or stray quote: {line.strip()[:80]!r}")

    def _row(self, record: str) -> list[str]:
        try:
            cells = next(csv.reader([record]), [])
        except csv.Error as exc:
            msg = str(exc)
            if "field limit" in msg:
                msg = f"a field larger than the csv module's limit ({csv.field_size_limit()} characters)"
            return BadCsvRow(f"malformed CSV row: {msg}")
        if self.width is None:
            self.width = len(cells)
        return cells


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


def device_batches(rows: Iterator[list[str]], header: list[str], server_column: str | None,
                   where: str | None = None) -> Iterator[tuple[Any, dict[str, str | None], dict[int, str]]]:
    """The rows of a device-table CSV as ``(record batch, fields, errors)``: the device
    columns as text, ``fields`` the column of each device field,
    ``errors`` the rows that could not be read (a stray quote, a wrong number of fields),
    whose ID cells are left missing and whose server cell is kept where the row has one."""
    import itertools

    import pyarrow as pa

    idx = device_columns(header, server_column, where)
    present = [f for f in DEVICE_FIELDS if idx[f] is not None]
    fields = {f: (f if f in present else None) for f in DEVICE_FIELDS}
    width = len(header)
    it = enumerate(rows)
    while True:
        part = list(itertools.islice(it, columns.BATCH_ROWS))
        if not part:
            return
        cols: dict[str, list[str | None]] = {f: [] for f in present}
        errors: dict[int, str] = {}
        for k, (_, cells) in enumerate(part):
            if isinstance(cells, BadCsvRow):
                errors[k] = cells.problem
            elif len(cells) != width:
                errors[k] = f"expected {width} fields, got {len(cells)}"
            for f in present:
                i = idx[f]
                cell = cells[i] if i < len(cells) else None
                cols[f].append(None if k in errors and f != "server" else cell)
        yield (pa.record_batch([pa.array(cols[f], pa.string()) for f in present], names=present),
               fields, errors)
