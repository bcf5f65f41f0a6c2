"""An audit as CSV: the flat columns (:func:`~gpuclass.audit.results.columns.flat_columns`),
one line per server, written by the csv module (a listing's usual lines by the compiled line
maker, held equal to the csv module's by the tests)."""

from __future__ import annotations

import csv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import IO, Any

    from ..results.reports import AuditSummary

from ..results.columns import flat_columns

__all__ = ["write_csv"]

_LINES = 256  # ready lines joined into one write (at least)


def write_csv(chunks: Iterable[Any], out: IO[str], card_ids: tuple[str, ...], summary: AuditSummary) -> None:
    rows = csv.writer(out, lineterminator="\n")
    rows.writerow(flat_columns(card_ids))
    lines: list[str] = []
    for chunk in chunks:
        chunk.add_to(summary)
        for part in chunk.csv_parts(card_ids):
            if type(part) is str:
                lines.append(part)
                if len(lines) >= _LINES:
                    out.write("".join(lines))
                    lines.clear()
                continue
            if lines:
                out.write("".join(lines))
                lines.clear()
            rows.writerow(part)
    out.write("".join(lines))
