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
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ServerReport", "AuditSummary", "CSV_COLUMNS", "PASSTHROUGH", "finish", "card_entries",
           "unsupported_entries"]

CSV_COLUMNS = ("row", "source", "server", "gpu_capable", "cards", "supported_cards", "slices",
               "unsupported", "unsupported_gpus", "reason", "problems", "rows",
               "cpu", "price", "datacenter", "hourly_price")
PASSTHROUGH = ("cpu", "price", "datacenter", "hourly_price")


@dataclass(slots=True)
class ServerReport:
    """What one server (one input row, or one server's rows of a device table) holds.

    ``cards`` lists ``{"card", "name", "count", "slices", "source", "evidence"}``
    per supported model (``source`` is ``"id"`` or ``"text"``; ``evidence`` the
    IDs or the words matched); ``unsupported`` names each unsupported GPU seen.
    """

    row: int
    source: str
    server: str | None
    gpu_capable: bool = False
    cards: list[dict[str, Any]] = field(default_factory=list)
    supported_cards: int = 0
    slices: int = 0
    unsupported: list[str] = field(default_factory=list)
    unsupported_gpus: int = 0
    reason: str = ""
    problems: list[str] = field(default_factory=list)
    rows: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

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
        return [self.row, self.source, self.server, self.gpu_capable,
                "; ".join([f"{c['card']} x{c['count']}" for c in self.cards]) if self.cards else "",
                self.supported_cards, self.slices, "; ".join(self.unsupported), self.unsupported_gpus,
                self.reason, "; ".join(self.problems), self.rows,
                *([v if v is None or type(v) in _SCALARS else _scalar(v) for v in map(extra.get, PASSTHROUGH)]
                  if extra else _NO_EXTRA)]


_NO_EXTRA = (None,) * len(PASSTHROUGH)
_SCALARS = frozenset((str, int, float, bool))


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass
class AuditSummary:
    """Totals over the reports written (:meth:`add` one at a time)."""

    servers: int = 0
    input_rows: int = 0
    gpu_capable: int = 0
    supported_cards: int = 0
    slices: int = 0
    unsupported_gpus: int = 0
    with_unsupported: int = 0
    flagged: int = 0
    cards: dict[str, int] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def add(self, r: ServerReport) -> None:
        self.servers += 1
        self.input_rows += r.rows
        self.gpu_capable += r.gpu_capable
        self.supported_cards += r.supported_cards
        self.slices += r.slices
        self.unsupported_gpus += r.unsupported_gpus
        self.with_unsupported += r.unsupported_gpus > 0
        self.flagged += bool(r.problems)
        for c in r.cards:
            self.cards[c["card"]] = self.cards.get(c["card"], 0) + c["count"]

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
