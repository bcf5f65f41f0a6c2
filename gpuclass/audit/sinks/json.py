"""An audit as JSON (``{"reports": [...], "summary": {...}}``) or NDJSON (one report a line).

JSON output is JSON in every locale: every character outside ASCII is a ``\\u`` escape.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import IO, Any

    from ..results.reports import AuditSummary

__all__ = ["write_json", "write_ndjson", "dumps"]


def dumps(obj: Any) -> str:
    """One JSON text, ASCII only (readers get the same strings back, whatever the locale)."""
    return json.dumps(obj, ensure_ascii=True)


def write_json(chunks: Iterable[Any], out: IO[str], summary: AuditSummary, done: Callable[[], None]) -> None:
    out.write('{"reports": [')
    sep = "\n  "
    for chunk in chunks:
        chunk.add_to(summary)
        for r in chunk.reports():
            out.write(sep + dumps(r.to_dict()))
            sep = ",\n  "
    done()
    out.write('\n], "summary": ' + dumps(summary.to_dict()) + "}\n")


def write_ndjson(chunks: Iterable[Any], out: IO[str], summary: AuditSummary, summary_line: bool,
                 done: Callable[[], None]) -> None:
    for chunk in chunks:
        chunk.add_to(summary)
        out.write("".join(dumps(r.to_dict()) + "\n" for r in chunk.reports()))
    done()
    if summary_line:
        out.write(dumps({"summary": summary.to_dict()}) + "\n")
