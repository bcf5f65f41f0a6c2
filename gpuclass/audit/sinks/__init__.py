"""Writing an audit's chunks as they come: an aligned table, JSON, NDJSON, CSV or Parquet.

Each sink (:mod:`.table`, :mod:`.json`, :mod:`.csv`, :mod:`.parquet`) takes the chunks of a
run (:mod:`gpuclass.audit.results`), writes them, and adds them to the run's totals;
:func:`write_reports` picks one by format and returns the totals.

>>> import io
>>> from gpuclass.audit import audit_texts
>>> buf = io.StringIO()
>>> s = write_reports(audit_texts([("a", "2x RTX 6000 Ada")]), "csv", buf)
>>> buf.getvalue().splitlines()[1].split(",")[:7]
['1', 'texts', 'a', 'True', 'rtx-6000-ada x2', '2', '8']
"""

from __future__ import annotations

import io
import itertools
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ...policy import PolicyArg
    from collections.abc import Iterable, Iterator
    from typing import Any

from ...errors import InputError
from ..results.listing import ReportBatch
from ..results.reports import AuditSummary

__all__ = ["write_reports", "OUTPUT_FORMATS", "chunks_of"]

OUTPUT_FORMATS = ("table", "json", "ndjson", "csv", "parquet")
_BATCH = 512  # loose reports put in one chunk


def chunks_of(reports: Any) -> Iterator[Any]:
    """The chunks of ``reports``: an audit run's own (``chunks()``), a chunk itself, or an
    iterable of chunks and loose :class:`~gpuclass.audit.results.reports.ServerReport`
    objects (those a batch at a time)."""
    if hasattr(reports, "csv_parts"):  # one chunk
        return iter((reports,))
    chunks = getattr(reports, "chunks", None)
    if chunks is not None:
        return chunks()

    def batches() -> Iterator[Any]:
        loose: list[Any] = []
        for item in reports:
            if hasattr(item, "csv_parts"):
                if loose:
                    yield ReportBatch(loose)
                    loose = []
                yield item
                continue
            loose.append(item)
            if len(loose) >= _BATCH:
                yield ReportBatch(loose)
                loose = []
        if loose:
            yield ReportBatch(loose)
    return batches()


def _card_ids(reports: Any, policy: PolicyArg) -> tuple[str, ...]:
    compiled = getattr(reports, "compiled", None)
    if compiled is None:
        from ...policy import compile_policy

        compiled = compile_policy(policy)
    return tuple(compiled.card_ids)


def write_reports(reports: Iterable[Any], fmt: str = "table", out: Any = None, *,
                  summary_line: bool = False, policy: PolicyArg = None) -> AuditSummary:
    """Write reports as they come (``fmt`` one of ``OUTPUT_FORMATS``); return the totals.

    ``reports``: an audit run (:func:`~gpuclass.audit.audit_paths`), an audit's chunk
    (:func:`~gpuclass.audit.audit_table`'s result) or any iterable of reports; ``policy``
    the audit's, for the per-card count columns of CSV and Parquet where ``reports`` does
    not say.  Text that is not printable (controls, bidi overrides) is escaped in the table
    and written as ``\\u`` escapes in JSON (readers get the same strings back); CSV and
    Parquet keep the data as it is (quoted, typed).

    ``json`` writes ``{"reports": [...], "summary": {...}}``; ``ndjson`` one report per line
    and nothing else (``summary_line`` adds a last ``{"summary": ...}`` line); ``csv`` the
    flat columns (no summary); ``table`` aligned columns and the totals; ``parquet`` (``out``
    a path or a binary file) the typed columns, a row group at a time.  Inputs that
    ``reports`` skipped (its ``skipped`` list) go into the summary.
    """
    if fmt not in OUTPUT_FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {', '.join(OUTPUT_FORMATS)}")
    summary = AuditSummary()
    # a Parquet file gets a device table streamed as its servers settle, where the output
    # can be written again from its start should the run take them back
    settled = (fmt == "parquet" and hasattr(reports, "chunks") and not hasattr(reports, "csv_parts")
               and _rewritable(out))
    chunks = _first_read(reports.chunks(settled=True) if settled else chunks_of(reports))
    if fmt == "parquet":
        if out is None or isinstance(out, io.TextIOBase):
            raise InputError("parquet output needs a file: give a path or a binary file (-o FILE)")
        from .parquet import write_parquet

        again = (lambda: _first_read(chunks_of(reports))) if settled else None
        write_parquet(chunks, out, _card_ids(reports, policy), summary, again)
    elif fmt == "csv":
        from .csv import write_csv

        write_csv(chunks, out or sys.stdout, _card_ids(reports, policy), summary)
    elif fmt in ("json", "ndjson"):
        from .json import write_json, write_ndjson

        if fmt == "json":
            write_json(chunks, out or sys.stdout, summary, lambda: _skipped(summary, reports))
        else:
            write_ndjson(chunks, out or sys.stdout, summary, summary_line, lambda: _skipped(summary, reports))
    else:
        from .table import write_table

        write_table(chunks, out or sys.stdout, summary, lambda: _skipped(summary, reports))
    _skipped(summary, reports)
    return summary


def _rewritable(out: Any) -> bool:
    """Whether an output can be written again from its start: a path, or a file that seeks."""
    if isinstance(out, (str, bytes)) or hasattr(out, "__fspath__"):
        return True
    try:
        return bool(out.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _skipped(summary: AuditSummary, reports: Any) -> None:
    summary.skipped = list(getattr(reports, "skipped", ()))


def _first_read(chunks: Iterable[Any]) -> Iterator[Any]:
    """The chunks, the first one read before this returns: what fails before any report
    exists (an input that cannot be read, an optional dependency that is missing) fails
    before the sink writes a header, so the output holds nothing rather than a torn start."""
    it = iter(chunks)
    try:
        first = next(it)
    except StopIteration:
        return iter(())
    return itertools.chain((first,), it)
