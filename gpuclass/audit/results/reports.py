"""What an audit says of one server (:class:`ServerReport`) and of a whole run (:class:`AuditSummary`).

Every engine fills a report the same way (:mod:`gpuclass.audit.render`): the cards from a
rollup's card counts, the unsupported GPUs by label, the problems, then ``finish`` for
``gpu_capable`` and the one-line reason.

>>> from gpuclass.audit.render import finish
>>> r = ServerReport(1, "x", "a", cards=[{"card": "gtx-1080", "name": "GeForce GTX 1080",
...                                        "count": 2, "slices": 8}])
>>> finish(r).reason, r.to_flat()["cards"]
('2x GeForce GTX 1080: 8 slices', 'gtx-1080 x2')
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

from .columns import PASSTHROUGH

__all__ = ["ServerReport", "AuditSummary", "passthrough"]

_FIELDS = ("row", "source", "server", "gpu_capable", "cards", "supported_cards", "slices", "unsupported",
           "unsupported_gpus", "reason", "problems", "rows", "extra")


class ServerReport:
    """What one server (one input row, or one server's rows of a device table) holds.

    ``cards`` lists ``{"card", "name", "count", "slices", "source", "evidence"}``
    per supported model (``source`` is ``"id"`` or ``"text"``; ``evidence`` the
    IDs or the words matched); ``unsupported`` names each unsupported GPU seen
    (``"Nx label"``); ``row`` is the first input row it covers (1-based, per source) and
    ``rows`` how many.  Reports compare equal field by field.  (A plain class, not a
    dataclass: a listing audit builds one per record and starts without the dataclasses
    machinery.)
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

    def card_count(self, card_id: str) -> int:
        """How many cards of ``card_id`` the report holds."""
        return sum(c["count"] for c in self.cards if c["card"] == card_id)

    def to_flat(self, card_ids: Sequence[str] = ()) -> dict[str, Any]:
        """One flat row (CSV, data frames): lists joined with ``"; "``, a ``cards.<id>``
        count for each of ``card_ids``.

        >>> ServerReport(1, "x", "a", cards=[{"card": "gtx-1080", "count": 2}]).to_flat()["cards"]
        'gtx-1080 x2'
        """
        from ..render import flat_row
        from .columns import flat_columns

        return dict(zip(flat_columns(card_ids), flat_row(self, card_ids)))


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


class AuditSummary:
    """Totals over the reports written.

    :meth:`add_counts` is the one rule of what the totals count; :meth:`add` (a report),
    :meth:`add_repeated` (reports that say the same) and a device audit's columns
    (:meth:`gpuclass.audit.results.table.AuditTable.add_to`) all feed it.
    """

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

    def reset_counts(self) -> None:
        """Every total back to zero (the skipped inputs kept): a run written again."""
        self.__init__(skipped=self.skipped)  # type: ignore[misc]

    def add_counts(self, servers: int, input_rows: int, capable: int, supported_cards: int, slices: int,
                   unsupported_gpus: int, with_unsupported: int, flagged: int,
                   cards: Iterable[tuple[str, int]] = ()) -> None:
        """Add the totals of ``servers`` reports: ``capable`` of them hold a supported card,
        ``with_unsupported`` an unsupported GPU, ``flagged`` a problem; ``cards`` the
        supported cards by card id."""
        self.servers += servers
        self.input_rows += input_rows
        self.gpu_capable += capable
        self.supported_cards += supported_cards
        self.slices += slices
        self.unsupported_gpus += unsupported_gpus
        self.with_unsupported += with_unsupported
        self.flagged += flagged
        for card, k in cards:
            if k:
                self.cards[card] = self.cards.get(card, 0) + k

    def add(self, r: ServerReport) -> None:
        self.add_repeated(r, 1)

    def add_many(self, reports: Iterable[ServerReport]) -> None:
        for r in reports:
            self.add_repeated(r, 1)

    def add_repeated(self, r: ServerReport, n: int) -> None:
        """:meth:`add` of ``n`` reports that say what ``r`` says (a listing's shared outcome)."""
        self.add_counts(n, n * r.rows, n * r.gpu_capable, n * r.supported_cards, n * r.slices,
                        n * r.unsupported_gpus, n * (r.unsupported_gpus > 0), n * bool(r.problems),
                        [(c["card"], n * c["count"]) for c in r.cards])

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
