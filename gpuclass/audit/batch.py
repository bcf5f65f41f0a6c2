"""A listing audit's reports a batch at a time, each made only when it is asked for.

Most records of a listing say what many others say: their report is their row, source,
server id and passthrough fields around one shared :class:`SharedOutcome` (what their
text says).  A :class:`ReportBatch` keeps them that way: iterating it makes the
:class:`~gpuclass.audit.report.ServerReport` objects (once), while the CSV writer and
the totals read the shared outcome directly, its CSV cells rendered once by the csv
module, so that a row costs a few string joins.  The lines are the csv module's lines,
byte for byte.

>>> from gpuclass.audit.report import ServerReport, finish
>>> shared = SharedOutcome(finish(ServerReport(0, "", None)))
>>> batch = ReportBatch([(7, "feed.json", "a1", shared, {"id": "a1", "price": 9.5})])
>>> [(r.server, r.reason, r.extra) for r in batch]
[('a1', 'no GPU', {'price': 9.5})]
>>> batch.csv_lines()
['7,feed.json,a1,False,,0,0,,0,no GPU,,1,,9.5,,\\n']
"""

from __future__ import annotations

import csv
import io

from ..lazy import compiled_function
from .report import PASSTHROUGH, AuditSummary, ServerReport, finish, passthrough, passthrough_cells, unquoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Union

    Entry = Union[ServerReport, tuple[int, str, "str | None", "SharedOutcome", "dict[str, Any]"]]

__all__ = ["SharedOutcome", "ReportBatch"]


# the compiled line maker (gpuclass._feed.csv_lines: the same lines as ReportBatch.csv_lines
# makes here), or None
_compiled_lines = compiled_function("gpuclass._feed", "csv_lines")


class SharedOutcome:
    """What a text says (a finished report of no server: cards, unsupported GPUs, the
    text's problems), shared by every record whose text says it."""

    __slots__ = ("report", "_sample", "_cells")

    def __init__(self, report: ServerReport) -> None:
        self.report = report
        self._sample: ServerReport | None = None
        self._cells: str | None = None

    def report_for(self, row: int, source: str, server: str | None, problems: list[str],
                   extra: dict[str, Any]) -> ServerReport:
        """A record's report: what the text says after the record's own ``problems`` (which
        come first, and may then be the reason)."""
        found = self.report
        cards = [dict(c) for c in found.cards] if found.cards else []
        if problems:
            return finish(ServerReport(row, source, server, False, cards, 0, 0, list(found.unsupported),
                                       found.unsupported_gpus, "", problems + found.problems, 1, extra))
        return ServerReport(row, source, server, found.gpu_capable, cards, found.supported_cards, found.slices,
                            list(found.unsupported), found.unsupported_gpus, found.reason, list(found.problems),
                            1, extra)

    def sample(self) -> ServerReport:
        """The report of a record without problems of its own, but for its row, source,
        server and passthrough fields (made once)."""
        if self._sample is None:
            self._sample = self.report_for(0, "", None, [], {})
        return self._sample

    def cells(self) -> str:
        """The CSV cells from ``gpu_capable`` to ``rows`` of such a record, as the csv module
        writes them in a line (quoted where a cell needs it)."""
        if self._cells is None:
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerow(self.sample().csv_row()[3:12])
            self._cells = buf.getvalue()[:-1]
        return self._cells


class ReportBatch:
    """The reports of consecutive records: each entry a finished
    :class:`~gpuclass.audit.report.ServerReport`, or ``(row, source, server, outcome,
    record)`` for a record (its mapping) with no problem of its own, whose report is made on
    first use (its ``extra`` the record's :func:`~gpuclass.audit.report.passthrough` fields)."""

    __slots__ = ("entries", "_reports")

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        self._reports: list[ServerReport] | None = None

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self):
        return iter(self.reports())

    def reports(self) -> list[ServerReport]:
        """The batch's reports, made once."""
        if self._reports is None:
            self._reports = [e if type(e) is not tuple
                             else e[3].report_for(e[0], e[1], e[2], [], passthrough(e[4]))
                             for e in self.entries]
        return self._reports

    def add_to(self, summary: AuditSummary) -> None:
        """:meth:`AuditSummary.add` of every report, reading the shared outcomes."""
        if self._reports is not None:
            summary.add_many(self._reports)
            return
        shared: dict[SharedOutcome, int] = {}
        for e in self.entries:
            if type(e) is tuple:
                shared[e[3]] = shared.get(e[3], 0) + 1
            else:
                summary.add(e)
        for outcome, n in shared.items():
            summary.add_repeated(outcome.sample(), n)

    def csv_lines(self) -> list[str | None]:
        """Each report's CSV line (``\\n`` ended) as the csv module writes it, or None where
        a cell of the record's own may need quoting (write the report's ``csv_row()``)."""
        if self._reports is not None:
            return [r.csv_line() for r in self._reports]
        if _compiled_lines is not None:
            return _compiled_lines(self.entries, PASSTHROUGH)
        out: list[str | None] = []
        append = out.append
        for e in self.entries:
            if type(e) is not tuple:
                append(e.csv_line())
                continue
            row, source, server, outcome, rec = e
            cells = passthrough_cells(rec.get)
            if server is None:
                server = ""
            if cells is None or type(row) is not int or type(source) is not str or type(server) is not str:
                append(None)
                continue
            cpu, price, datacenter, hourly = cells
            head = f"{row},{source},{server},"
            tail = f",{cpu},{price},{datacenter},{hourly}\n"
            if not unquoted(head + tail, 7):  # the record's own cells: quoted by the csv module
                append(None)
                continue
            shared = outcome._cells  # rendered once per outcome
            append(head + (outcome.cells() if shared is None else shared) + tail)
        return out
