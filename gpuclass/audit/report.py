"""Audit results: one :class:`ServerReport` per server, the run's :class:`AuditSummary`.

Every auditor fills a report the same way: the cards from a rollup's card counts
(:func:`card_entries`), the unsupported GPUs by label, the problems, then
:func:`finish` for ``gpu_capable`` and the one-line reason.

>>> r = ServerReport(1, "x", "a", cards=[{"card": "gtx-1080", "name": "GeForce GTX 1080",
...                                        "count": 2, "slices": 8}])
>>> finish(r).reason, r.to_flat()["cards"]
('2x GeForce GTX 1080: 8 slices', 'gtx-1080 x2')
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = ["ServerReport", "AuditSummary", "CSV_COLUMNS", "PASSTHROUGH", "passthrough", "passthrough_cells",
           "unquoted", "finish", "card_entries", "unsupported_entries"]

CSV_COLUMNS = ("row", "source", "server", "gpu_capable", "cards", "supported_cards", "slices",
               "unsupported", "unsupported_gpus", "reason", "problems", "rows",
               "cpu", "price", "datacenter", "hourly_price")
PASSTHROUGH = ("cpu", "price", "datacenter", "hourly_price")


_FIELDS = ("row", "source", "server", "gpu_capable", "cards", "supported_cards", "slices", "unsupported",
           "unsupported_gpus", "reason", "problems", "rows", "extra")


class ServerReport:
    """What one server (one input row, or one server's rows of a device table) holds.

    ``cards`` lists ``{"card", "name", "count", "slices", "source", "evidence"}``
    per supported model (``source`` is ``"id"`` or ``"text"``; ``evidence`` the
    IDs or the words matched); ``unsupported`` names each unsupported GPU seen.
    Reports compare equal field by field.  (A plain class, not a dataclass: a listing
    audit builds one per record and starts without the dataclasses machinery.)
    """

    __slots__ = _FIELDS
    __match_args__ = _FIELDS

    def __init__(self, row: int, source: str, server: str | None, gpu_capable: bool = False,
                 cards: list[dict[str, Any]] | None = None, supported_cards: int = 0, slices: int = 0,
                 unsupported: list[str] | None = None, unsupported_gpus: int = 0, reason: str = "",
                 problems: list[str] | None = None, rows: int = 1, extra: dict[str, Any] | None = None) -> None:
        self.row = row
        self.source = source
        self.server = server
        self.gpu_capable = gpu_capable
        self.cards = [] if cards is None else cards
        self.supported_cards = supported_cards
        self.slices = slices
        self.unsupported = [] if unsupported is None else unsupported
        self.unsupported_gpus = unsupported_gpus
        self.reason = reason
        self.problems = [] if problems is None else problems
        self.rows = rows
        self.extra = {} if extra is None else extra

    def __repr__(self) -> str:
        return "ServerReport(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in _FIELDS) + ")"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the passthrough fields ``cpu``, ``price``, ``datacenter`` inline)."""
        out = {
            "row": self.row, "source": self.source, "server": self.server,
            "gpu_capable": self.gpu_capable, "cards": self.cards,
            "supported_cards": self.supported_cards, "slices": self.slices,
            "unsupported": self.unsupported, "unsupported_gpus": self.unsupported_gpus,
            "reason": self.reason, "problems": self.problems, "rows": self.rows,
        }
        out.update(self.extra)
        return out

    def to_flat(self) -> dict[str, Any]:
        """One flat row (CSV, data frames): lists joined with ``"; "``.

        >>> ServerReport(1, "x", "a", cards=[{"card": "gtx-1080", "count": 2}]).to_flat()["cards"]
        'gtx-1080 x2'
        """
        return dict(zip(CSV_COLUMNS, self.csv_row()))

    def csv_row(self) -> list[Any]:
        """The flat row's values in ``CSV_COLUMNS`` order (what a CSV line holds)."""
        extra = self.extra
        cards, unsupported, problems = self._joined()
        return [self.row, self.source, self.server, self.gpu_capable, cards, self.supported_cards, self.slices,
                unsupported, self.unsupported_gpus, self.reason, problems, self.rows,
                *([v if v is None or type(v) in _SCALARS else _scalar(v) for v in map(extra.get, PASSTHROUGH)]
                  if extra else _NO_EXTRA)]

    def csv_line(self) -> str | None:
        """The line (``\n`` ended) the csv module writes for :meth:`csv_row`, made directly
        where no cell needs quoting, in a third of the time; None where one may (a comma,
        a quote or a line break in a cell, a value of another type): write csv_row() then.

        >>> ServerReport(1, "x", "a").csv_line()
        '1,x,a,False,,0,0,,0,,,1,,,,\\n'
        >>> ServerReport(1, "x", "a, b").csv_line() is None
        True
        """
        row, supported, slices, n_unsupported, rows = (self.row, self.supported_cards, self.slices,
                                                        self.unsupported_gpus, self.rows)
        server = self.server
        if server is None:
            server = ""
        if not (type(row) is int and type(supported) is int and type(slices) is int
                and type(n_unsupported) is int and type(rows) is int and type(server) is str
                and type(self.source) is str and type(self.reason) is str and type(self.gpu_capable) is bool):
            return None
        cells = passthrough_cells(self.extra.get) if self.extra else _NO_CELLS
        if cells is None:
            return None
        cpu, price, datacenter, hourly = cells
        cards, unsupported, problems = self._joined()
        line = (f"{row},{self.source},{server},{self.gpu_capable},{cards},{supported},{slices},{unsupported},"
                f"{n_unsupported},{self.reason},{problems},{rows},{cpu},{price},{datacenter},{hourly}\n")
        return line if unquoted(line, _COMMAS) else None

    def _joined(self) -> tuple[str, str, str]:
        """The list cells: cards (``card xN``), unsupported GPUs and problems, ``; ``-joined."""
        return ("; ".join([f"{c['card']} x{c['count']}" for c in self.cards]) if self.cards else "",
                "; ".join(self.unsupported), "; ".join(self.problems))


def passthrough(rec: dict[str, Any]) -> dict[str, Any]:
    """The ``PASSTHROUGH`` fields a record has, in that order (what a report keeps of it).

    >>> passthrough({"id": 1, "price": 9.5, "cpu": "Xeon"})
    {'cpu': 'Xeon', 'price': 9.5}
    """
    try:  # the usual record has them all: one dict display (a comprehension costs 3x)
        return {"cpu": rec["cpu"], "price": rec["price"], "datacenter": rec["datacenter"],
                "hourly_price": rec["hourly_price"]}
    except KeyError:
        return {k: rec[k] for k in PASSTHROUGH if k in rec}


_NO_EXTRA = (None,) * len(PASSTHROUGH)
_NO_CELLS = ("",) * len(PASSTHROUGH)
_COMMAS = len(CSV_COLUMNS) - 1
_PLAIN = frozenset((str, int, float, bool))  # written by an f-string as the csv module writes them


_CPU, _PRICE, _DATACENTER, _HOURLY = PASSTHROUGH


def passthrough_cells(get: Any) -> tuple[Any, ...] | None:
    """The ``PASSTHROUGH`` values (``get``: the record's or the extra's ``get``) as an
    f-string writes them into a CSV line: None as nothing, text and numbers as they are
    (repr for a float, as the csv module); None where one is of another type."""
    # written out field by field: a large feed's CSV calls this once a record
    cpu, price, datacenter, hourly = get(_CPU), get(_PRICE), get(_DATACENTER), get(_HOURLY)
    if cpu is None:
        cpu = ""
    if price is None:
        price = ""
    if datacenter is None:
        datacenter = ""
    if hourly is None:
        hourly = ""
    if (type(cpu) in _PLAIN and type(price) in _PLAIN and type(datacenter) in _PLAIN
            and type(hourly) in _PLAIN):
        return cpu, price, datacenter, hourly
    return None


def unquoted(line: str, commas: int) -> bool:
    """Whether the csv module writes the cells of ``line`` (``commas`` commas apart, one
    closing newline) as they are: no cell holds a comma, a quote or a line break."""
    return line.count(",") == commas and '"' not in line and "\r" not in line and line.find("\n") == len(line) - 1
_SCALARS = frozenset((str, int, float, bool))


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, ensure_ascii=False)


class AuditSummary:
    """Totals over the reports written (:meth:`add` one at a time)."""

    def __init__(self, servers: int = 0, input_rows: int = 0, gpu_capable: int = 0, supported_cards: int = 0,
                 slices: int = 0, unsupported_gpus: int = 0, with_unsupported: int = 0, flagged: int = 0,
                 cards: dict[str, int] | None = None, skipped: list[dict[str, str]] | None = None) -> None:
        self.servers = servers
        self.input_rows = input_rows
        self.gpu_capable = gpu_capable
        self.supported_cards = supported_cards
        self.slices = slices
        self.unsupported_gpus = unsupported_gpus
        self.with_unsupported = with_unsupported
        self.flagged = flagged
        self.cards: dict[str, int] = {} if cards is None else cards
        self.skipped: list[dict[str, str]] = [] if skipped is None else skipped

    def __repr__(self) -> str:
        return "AuditSummary(" + ", ".join(f"{k}={v!r}" for k, v in vars(self).items()) + ")"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]

    def add(self, r: ServerReport) -> None:
        self.add_repeated(r, 1)

    def add_many(self, reports: Iterable[ServerReport]) -> None:
        for r in reports:
            self.add_repeated(r, 1)

    def add_repeated(self, r: ServerReport, n: int) -> None:
        """:meth:`add` of ``n`` reports that say what ``r`` says (a listing's shared outcome)."""
        self.servers += n
        self.input_rows += n * r.rows
        self.gpu_capable += n * r.gpu_capable
        self.supported_cards += n * r.supported_cards
        self.slices += n * r.slices
        self.unsupported_gpus += n * r.unsupported_gpus
        self.with_unsupported += n * (r.unsupported_gpus > 0)
        self.flagged += n * bool(r.problems)
        for c in r.cards:
            self.cards[c["card"]] = self.cards.get(c["card"], 0) + n * c["count"]

    def to_dict(self) -> dict[str, Any]:
        return {"servers": self.servers, "input_rows": self.input_rows,
                "gpu_capable": self.gpu_capable, "supported_cards": self.supported_cards,
                "slices": self.slices, "unsupported_gpus": self.unsupported_gpus,
                "servers_with_unsupported": self.with_unsupported, "flagged": self.flagged,
                "cards": dict(sorted(self.cards.items())), "skipped": list(self.skipped)}

    def line(self) -> str:
        """The totals in one line of text."""
        cards = ", ".join(f"{k} {v}" for k, v in sorted(self.cards.items())) or "none"
        text = (f"{self.servers} servers from {self.input_rows} input rows: {self.gpu_capable} GPU-capable, "
                f"{self.supported_cards} supported cards ({cards}), {self.slices} slices; "
                f"{self.with_unsupported} with unsupported GPUs; {self.flagged} flagged")
        return text + (f"; {len(self.skipped)} inputs skipped" if self.skipped else "")


def finish(r: ServerReport) -> ServerReport:
    """Fill in ``gpu_capable`` and a one-line reason from the cards found."""
    r.supported_cards = sum(c["count"] for c in r.cards)
    r.slices = sum(c["slices"] for c in r.cards)
    r.gpu_capable = r.supported_cards > 0
    if r.gpu_capable:
        r.reason = ", ".join(f"{c['count']}x {c['name']}" for c in r.cards) + f": {r.slices} slices"
        if r.unsupported_gpus:
            r.reason += f"; mixed with {r.unsupported_gpus} unsupported GPU(s)"
    elif r.unsupported_gpus:
        r.reason = "unsupported GPU only: " + ", ".join(r.unsupported)
    elif r.problems:
        r.reason = "flagged: " + r.problems[0]
    else:
        r.reason = "no GPU"
    return r


def card_entries(compiled: Any, counts: dict[int, int], source: str,
                 evidence: dict[int, str]) -> list[dict[str, Any]]:
    """A report's ``cards``: one entry per supported model, from a rollup's card counts."""
    out = []
    for ci, k in sorted(counts.items()):
        card = compiled.cards[ci]
        out.append({"card": card["id"], "name": card["name"], "count": k,
                    "slices": k * card["slices"], "source": source, "evidence": evidence.get(ci, "")})
    return out


def unsupported_entries(r: ServerReport, labels: dict[str, int]) -> None:
    """Set a report's unsupported GPUs from ``{label: count}``."""
    r.unsupported = [f"{n}x {label}" for label, n in labels.items()]
    r.unsupported_gpus = sum(labels.values())
