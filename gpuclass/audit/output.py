"""Writing audit reports as they come: an aligned table, JSON, NDJSON or CSV.

>>> import io
>>> from gpuclass.audit.listings import audit_texts
>>> buf = io.StringIO()
>>> s = write_reports(audit_texts([("a", "2x RTX 6000 Ada")]), "csv", buf)
>>> buf.getvalue().splitlines()[1].split(",")[:7]
['1', 'texts', 'a', 'True', 'rtx-6000-ada x2', '2', '8']
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterable
from typing import IO

from ..errors import InputError
from .report import CSV_COLUMNS, AuditSummary, ServerReport

__all__ = ["write_reports", "OUTPUT_FORMATS"]

OUTPUT_FORMATS = ("table", "json", "ndjson", "csv")


def write_reports(reports: Iterable[ServerReport], fmt: str = "table",
                  out: IO[str] | None = None, *, summary_line: bool = False) -> AuditSummary:
    """Write reports as they come (``fmt`` one of ``OUTPUT_FORMATS``); return the totals.

    ``json`` writes ``{"reports": [...], "summary": {...}}``; ``ndjson`` one report
    per line and nothing else (``summary_line`` adds a last ``{"summary": ...}``
    line); ``csv`` the ``CSV_COLUMNS`` (no summary); ``table`` aligned columns and
    the totals.  Inputs that ``reports`` skipped (its ``skipped`` list, as
    :func:`~gpuclass.audit.audit_paths` gives it) go into the summary.
    """
    if fmt not in OUTPUT_FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {', '.join(OUTPUT_FORMATS)}")
    out = out or sys.stdout
    summary = AuditSummary()
    if fmt == "json":
        out.write('{"reports": [')
        sep = "\n  "
        for r in reports:
            summary.add(r)
            out.write(sep + json.dumps(r.to_dict(), ensure_ascii=False))
            sep = ",\n  "
        _skipped(summary, reports)
        out.write('\n], "summary": ' + json.dumps(summary.to_dict(), ensure_ascii=False) + "}\n")
    elif fmt == "ndjson":
        for r in reports:
            summary.add(r)
            out.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
        _skipped(summary, reports)
        if summary_line:
            out.write(json.dumps({"summary": summary.to_dict()}, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        w = csv.DictWriter(out, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
        w.writeheader()
        for r in reports:
            summary.add(r)
            w.writerow(r.to_flat())
        _skipped(summary, reports)
    else:
        out.write(f"{'ROW':>7}  {'SERVER':<20} {'GPU':<3}  {'SLICES':>6}  REASON\n")
        for r in reports:
            summary.add(r)
            flag = " !" if r.problems else ""
            text = r.reason + (f" [problems: {'; '.join(r.problems)}]" if r.problems and
                               not r.reason.startswith("flagged") else "")
            out.write(f"{r.row:>7}  {_cut(r.server or '-', 20):<20} {'yes' if r.gpu_capable else 'no':<3}"
                      f"  {r.slices:>6}  {text}{flag}\n")
        _skipped(summary, reports)
        out.write("\n" + summary.line() + "\n")
    return summary


def _skipped(summary: AuditSummary, reports: Iterable[ServerReport]) -> None:
    summary.skipped = list(getattr(reports, "skipped", ()))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"
