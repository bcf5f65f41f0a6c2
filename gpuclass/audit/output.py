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
                  out: IO[str] | None = None) -> AuditSummary:
    """Write reports as they come (``fmt`` one of ``OUTPUT_FORMATS``); return the totals.

    ``json`` writes ``{"reports": [...], "summary": {...}}``; ``ndjson`` one
    report per line and a last ``{"summary": ...}`` line; ``csv`` the
    ``CSV_COLUMNS`` (no summary); ``table`` aligned columns and the totals.
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
        out.write('\n], "summary": ' + json.dumps(summary.to_dict()) + "}\n")
    elif fmt == "ndjson":
        for r in reports:
            summary.add(r)
            out.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
        out.write(json.dumps({"summary": summary.to_dict()}) + "\n")
    elif fmt == "csv":
        w = csv.DictWriter(out, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
        w.writeheader()
        for r in reports:
            summary.add(r)
            w.writerow(r.to_flat())
    else:
        out.write(f"{'ROW':>7}  {'SERVER':<20} {'GPU':<3}  {'SLICES':>6}  REASON\n")
        for r in reports:
            summary.add(r)
            flag = " !" if r.problems else ""
            text = r.reason + (f" [problems: {'; '.join(r.problems)}]" if r.problems and
                               not r.reason.startswith("flagged") else "")
            out.write(f"{r.row:>7}  {_cut(r.server or '-', 20):<20} {'yes' if r.gpu_capable else 'no':<3}"
                      f"  {r.slices:>6}  {text}{flag}\n")
        s = summary.to_dict()
        cards = ", ".join(f"{k} {v}" for k, v in s["cards"].items()) or "none"
        out.write(f"\n{s['servers']} servers from {s['input_rows']} input rows: {s['gpu_capable']} GPU-capable, "
                  f"{s['supported_cards']} supported cards ({cards}), {s['slices']} slices; "
                  f"{s['servers_with_unsupported']} with unsupported GPUs; {s['flagged']} flagged\n")
    return summary


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"
