"""A listing audit's reports a batch at a time, each made only when it is asked for.

Most records of a listing say what many others say: their report is their row, source,
server id and passthrough fields around one shared :class:`SharedOutcome` (what their
text says).  A :class:`ReportBatch` keeps them that way: iterating it makes the
:class:`~gpuclass.audit.results.reports.ServerReport` objects (once), while the totals read
the shared outcomes directly and the CSV sink takes each record's line from the compiled
line maker (``gpuclass._feed.csv_lines``: the row, source and server, the outcome's cells
rendered once by the csv module, the passthrough fields), which ``tests/audit`` holds
equal, byte for byte, to the csv module's line of the report.

An entry of a batch is a finished report, or a :data:`Shared` tuple ``(row, source,
server, outcome, record)``: a record (its mapping) with no problem of its own.

>>> from gpuclass.audit.render import finish
>>> from gpuclass.audit.results.reports import ServerReport
>>> shared = SharedOutcome(finish(ServerReport(0, "", None)), ("gtx-1080",))
>>> batch = ReportBatch([(7, "feed.json", "a1", shared, {"id": "a1", "price": 9.5})])
>>> [(r.server, r.reason, r.extra) for r in batch]
[('a1', 'no GPU', {'price': 9.5})]
>>> shared.cells()
'False,,0,0,,0,no GPU,,1,0'
"""

from __future__ import annotations

import io

from ...lazy import compiled_function
from ..render import finish, flat_row
from .columns import PASSTHROUGH
from .reports import AuditSummary, ServerReport, passthrough

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Union

    Shared = tuple[int, str, "str | None", "SharedOutcome", "dict[str, Any]"]
    Entry = Union[ServerReport, Shared]

__all__ = ["SharedOutcome", "ReportBatch"]


# the compiled line maker (gpuclass._feed.csv_lines), or None
_compiled_lines = compiled_function("gpuclass._feed", "csv_lines")


class SharedOutcome:
    """What a text says (a finished report of no server: cards, unsupported GPUs, the
    text's problems), shared by every record whose text says it; ``card_ids``: the
    policy's cards, whose counts its flat row holds."""

    __slots__ = ("report", "card_ids", "_sample", "_cells")

    def __init__(self, report: ServerReport, card_ids: tuple[str, ...]) -> None:
        self.report = report
        self.card_ids = card_ids
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
        """The CSV cells from ``gpu_capable`` to the last card count of such a record, as the
        csv module writes them in a line (quoted where a cell needs it)."""
        if self._cells is None:
            import csv

            buf = io.StringIO()
            row = flat_row(self.sample(), self.card_ids)
            csv.writer(buf, lineterminator="\n").writerow(row[3:len(row) - len(PASSTHROUGH)])
            self._cells = buf.getvalue()[:-1]
        return self._cells


class ReportBatch:
    """The reports of consecutive records (see the module docstring)."""

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

    def summary(self) -> AuditSummary:
        s = AuditSummary()
        self.add_to(s)
        return s

    def csv_lines(self) -> list[str | None]:
        """Each report's CSV line (``\\n`` ended) where the compiled line maker makes it, else
        None (the sink writes that report's flat row with the csv module): a finished report,
        a record whose own cells would need quoting, or no compiled maker at all."""
        if _compiled_lines is None:
            return [None] * len(self.entries)
        # a record of another mapping type is read as its report reads it (by its keys)
        direct = [type(e) is tuple and type(e[4]) is dict for e in self.entries]
        shared = [e for e, d in zip(self.entries, direct) if d]
        made = iter(_compiled_lines(shared, PASSTHROUGH) if shared else ())
        return [next(made) if d else None for d in direct]

    def csv_parts(self, card_ids: tuple[str, ...]) -> list[Any]:
        """Each report as a ready CSV line (str) or as its flat row (list, for the csv
        module): see :meth:`csv_lines`."""
        lines = self.csv_lines()
        if None not in lines:
            return lines
        reports = self.reports()
        return [line if line is not None else flat_row(reports[i], card_ids) for i, line in enumerate(lines)]

    def typed(self, card_ids: tuple[str, ...]) -> Any:
        """The batch's reports as typed columns (:func:`~gpuclass.audit.results.columns.typed_schema`)."""
        from .columns import typed_schema

        return typed_rows(self.reports(), card_ids, typed_schema(card_ids))


def _price(value: Any) -> float | None:
    """A price as a number; anything else is no price in a typed column (CSV and JSON keep
    the value as given)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def typed_rows(reports: list[ServerReport], card_ids: tuple[str, ...], schema: Any) -> Any:
    """Reports as rows of ``schema`` (a pyarrow Table)."""
    import pyarrow as pa

    from .columns import flat_columns

    names = flat_columns(card_ids)
    rows = [dict(zip(names, flat_row(r, card_ids))) for r in reports]
    cols: dict[str, list[Any]] = {}
    for field in schema:
        name = field.name
        if name in ("price", "hourly_price"):
            cols[name] = [_price(r.extra.get(name)) for r in reports]
        elif field.type == pa.string():
            cols[name] = [None if f[name] is None else str(f[name]) for f in rows]
        else:
            cols[name] = [f[name] for f in rows]
    try:
        return pa.table(cols, schema=schema)
    except UnicodeEncodeError:  # a lone surrogate: written as every other format writes it
        from ...printable import utf8_text

        for field in schema:
            if field.type == pa.string():
                cols[field.name] = [None if v is None else utf8_text(v) for v in cols[field.name]]
        return pa.table(cols, schema=schema)
