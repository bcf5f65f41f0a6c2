"""Writing audit reports as they come: an aligned table, JSON, NDJSON, CSV or Parquet.

>>> import io
>>> from gpuclass.audit.listings import audit_texts
>>> buf = io.StringIO()
>>> s = write_reports(audit_texts([("a", "2x RTX 6000 Ada")]), "csv", buf)
>>> buf.getvalue().splitlines()[1].split(",")[:7]
['1', 'texts', 'a', 'True', 'rtx-6000-ada x2', '2', '8']
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterable, Iterator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ..errors import InputError
from ..printable import printable, safe_json
from .batch import ReportBatch
from .report import CSV_COLUMNS, AuditSummary, ServerReport

__all__ = ["write_reports", "OUTPUT_FORMATS"]

OUTPUT_FORMATS = ("table", "json", "ndjson", "csv", "parquet")
_PARQUET_BATCH = 65536  # reports per row group when reports come one by one
_CSV_BATCH = 256        # CSV lines joined into one write (at least)


def write_reports(reports: Iterable[Any], fmt: str = "table", out: Any = None, *,
                  summary_line: bool = False, policy: Any = None) -> AuditSummary:
    """Write reports as they come (``fmt`` one of ``OUTPUT_FORMATS``); return the totals.

    Text that is not printable (controls, bidi overrides) is escaped in the table and
    written as ``\\u`` escapes in JSON (readers get the same strings back); CSV and
    Parquet keep the data as it is (quoted, typed).

    ``json`` writes ``{"reports": [...], "summary": {...}}``; ``ndjson`` one report
    per line and nothing else (``summary_line`` adds a last ``{"summary": ...}``
    line); ``csv`` the ``CSV_COLUMNS`` (no summary); ``table`` aligned columns and
    the totals; ``parquet`` (``out`` a path or a binary file) the ``CSV_COLUMNS`` typed,
    with a ``cards.<card id>`` count per card of ``policy`` (the audit's), a row group
    at a time.  Inputs that ``reports`` skipped (its ``skipped`` list, as
    :func:`~gpuclass.audit.audit_paths` gives it) go into the summary.  Device tables
    audited a column at a time (:class:`~gpuclass.audit.columnar.AuditTable` chunks, as
    ``audit_paths(...).pieces()`` gives them) are written as columns in CSV and Parquet.
    """
    if fmt not in OUTPUT_FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {', '.join(OUTPUT_FORMATS)}")
    summary = AuditSummary()
    if fmt == "parquet":
        if out is None or isinstance(out, io.TextIOBase):
            raise InputError("parquet output needs a file: give a path or a binary file (-o FILE)")
        _write_parquet(_pieces(reports), out, policy, summary)
        _skipped(summary, reports)
        return summary
    out = out or sys.stdout
    if fmt == "json":
        out.write('{"reports": [')
        sep = "\n  "
        for r in _each(reports):
            summary.add(r)
            out.write(sep + safe_json(json.dumps(r.to_dict(), ensure_ascii=False)))
            sep = ",\n  "
        _skipped(summary, reports)
        out.write('\n], "summary": ' + safe_json(json.dumps(summary.to_dict(), ensure_ascii=False)) + "}\n")
    elif fmt == "ndjson":
        for r in _each(reports):
            summary.add(r)
            out.write(safe_json(json.dumps(r.to_dict(), ensure_ascii=False)) + "\n")
        _skipped(summary, reports)
        if summary_line:
            out.write(safe_json(json.dumps({"summary": summary.to_dict()}, ensure_ascii=False)) + "\n")
    elif fmt == "csv":
        rows = csv.writer(out, lineterminator="\n")
        rows.writerow(CSV_COLUMNS)
        lines: list[str] = []  # written a batch at a time
        for item in _pieces(reports):
            if isinstance(item, (ServerReport, ReportBatch)):
                if type(item) is ReportBatch:
                    item.add_to(summary)
                    made = item.csv_lines()
                else:
                    summary.add(item)
                    made = [item.csv_line()]
                if None not in made:
                    lines += made
                else:
                    for line, r in zip(made, item.reports() if type(item) is ReportBatch else (item,)):
                        if line is not None:
                            lines.append(line)
                            continue
                        out.write("".join(lines))
                        lines.clear()
                        rows.writerow(r.csv_row())  # a cell that needs quoting
                if len(lines) >= _CSV_BATCH:
                    out.write("".join(lines))
                    lines.clear()
                continue
            out.write("".join(lines))
            lines.clear()
            _add_table(summary, item)  # the same cells, made a column at a time
            flat = item.flat()
            rows.writerows(zip(*(flat.column(c).to_pylist() for c in CSV_COLUMNS)))
        out.write("".join(lines))
        _skipped(summary, reports)
    else:
        out.write(f"{'ROW':>7}  {'SERVER':<20} {'GPU':<3}  {'SLICES':>6}  REASON\n")
        for r in _each(reports):
            summary.add(r)
            flag = " !" if r.problems else ""
            text = r.reason + (f" [problems: {'; '.join(r.problems)}]" if r.problems and
                               not r.reason.startswith("flagged") else "")
            out.write(f"{r.row:>7}  {_cut(printable(r.server or '-'), 20):<20} {'yes' if r.gpu_capable else 'no':<3}"
                      f"  {r.slices:>6}  {printable(text)}{flag}\n")
        _skipped(summary, reports)
        out.write("\n" + printable(summary.line()) + "\n")
    return summary


def _pieces(reports: Iterable[Any]) -> Iterator[Any]:
    """ServerReport objects, ReportBatch lists of them and AuditTable chunks, as the run
    gives them."""
    if _is_table(reports):
        return iter((reports,))
    pieces = getattr(reports, "pieces", None)
    return pieces() if pieces is not None else iter(reports)


def _is_table(item: Any) -> bool:
    """An AuditTable chunk (none can exist before the columnar module is imported)."""
    columnar = sys.modules.get(f"{__package__}.columnar")
    return columnar is not None and isinstance(item, columnar.AuditTable)


def _each(reports: Iterable[Any]) -> Iterator[ServerReport]:
    for item in _pieces(reports):
        if isinstance(item, ServerReport):
            yield item
        else:
            yield from item


def _add_table(summary: AuditSummary, result: Any) -> None:
    """:meth:`AuditSummary.add` of every server of a chunk, a column at a time."""
    t = result.table
    total = {c: int(t.column(c).to_numpy().sum()) for c in ("rows", "supported_cards", "slices",
                                                            "unsupported_gpus")}
    summary.servers += t.num_rows
    summary.input_rows += total["rows"]
    summary.gpu_capable += int(t.column("gpu_capable").to_numpy(zero_copy_only=False).sum())
    summary.supported_cards += total["supported_cards"]
    summary.slices += total["slices"]
    summary.unsupported_gpus += total["unsupported_gpus"]
    summary.with_unsupported += int((t.column("unsupported_gpus").to_numpy() > 0).sum())
    summary.flagged += t.num_rows - t.column("problems").null_count
    for cid in result.compiled.card_ids:
        k = int(t.column(cid).to_numpy().sum())
        if k:
            summary.cards[cid] = summary.cards.get(cid, 0) + k


def _write_parquet(pieces: Iterator[Any], out: Any, policy: Any, summary: AuditSummary) -> None:
    from ..policy import compile_policy
    from .stream import output_schema, output_table, parquet_writer, reports_table

    compiled = compile_policy(policy)
    writer = parquet_writer(out, output_schema(compiled))
    held: list[ServerReport] = []
    try:
        for item in pieces:
            if isinstance(item, (ServerReport, ReportBatch)):
                group = item.reports() if type(item) is ReportBatch else (item,)
                summary.add_many(group)
                held.extend(group)
                if len(held) >= _PARQUET_BATCH:
                    writer.write_table(reports_table(held, compiled))
                    held = []
                continue
            if held:
                writer.write_table(reports_table(held, compiled))
                held = []
            _add_table(summary, item)
            writer.write_table(output_table(item))
        if held:
            writer.write_table(reports_table(held, compiled))
    finally:
        writer.close()


def _skipped(summary: AuditSummary, reports: Iterable[ServerReport]) -> None:
    summary.skipped = list(getattr(reports, "skipped", ()))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"
