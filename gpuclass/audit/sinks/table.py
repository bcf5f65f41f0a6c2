"""The aligned table of an audit: a line per server, then the totals."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import IO, Any

    from ..results.reports import AuditSummary

from ...printable import printable

__all__ = ["write_table"]


def write_table(chunks: Iterable[Any], out: IO[str], summary: AuditSummary, done: Callable[[], None]) -> None:
    """Write the chunks' reports as aligned lines, then the totals (``done`` completes the
    summary first: the skipped inputs are known once the run is read)."""
    out.write(f"{'ROW':>7}  {'SERVER':<20} {'GPU':<3}  {'SLICES':>6}  REASON\n")
    for chunk in chunks:
        chunk.add_to(summary)
        for r in chunk.reports():
            flag = " !" if r.problems else ""
            text = r.reason + (f" [problems: {'; '.join(r.problems)}]" if r.problems and
                               not r.reason.startswith("flagged") else "")
            out.write(f"{r.row:>7}  {_cut(printable(r.server or '-'), 20):<20} {'yes' if r.gpu_capable else 'no':<3}"
                      f"  {r.slices:>6}  {printable(text)}{flag}\n")
    done()
    out.write("\n" + printable(summary.line()) + "\n")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"
