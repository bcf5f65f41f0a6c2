"""An audit as JSON (``{"reports": [...], "summary": {...}}``) or NDJSON (one report a line).

JSON output is JSON in every locale: every character outside ASCII is a ``\\u`` escape.  A
lone surrogate (a byte that was not UTF-8, read with surrogateescape) is no character JSON
readers agree on: it is written as :func:`gpuclass.printable.utf8_text` writes it in every
other format (the text ``\\xNN``), so a server id reads back the same from each.
"""

from __future__ import annotations

import json

from ...printable import utf8_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import IO, Any

    from ..results.reports import AuditSummary

__all__ = ["write_json", "write_ndjson", "dumps"]


def dumps(obj: Any) -> str:
    """One JSON text, ASCII only (readers get the same strings back, whatever the locale)."""
    text = json.dumps(obj, ensure_ascii=True)
    if "\\ud" in text:  # a surrogate pair, or a lone surrogate to write as the other formats do
        text = json.dumps(_utf8(obj), ensure_ascii=True)
    return text


def _utf8(obj: Any) -> Any:
    if isinstance(obj, str):
        return utf8_text(obj)
    if isinstance(obj, dict):
        return {_utf8(k) if isinstance(k, str) else k: _utf8(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_utf8(v) for v in obj]
    return obj


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
