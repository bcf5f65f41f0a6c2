"""Fleet figures from audit reports: what a buyer reads before renting.

:func:`fleet_summary` reads the reports of any audit (``audit_paths``, ``audit_records``,
an :class:`~gpuclass.audit.AuditTable`, any iterable of
:class:`~gpuclass.audit.ServerReport`) once, as they stream, and keeps only what the
figures need: a few numbers per priced GPU-capable server, the cheapest ``top`` servers
per currency, the first ``keep_flagged`` flagged rows.  Its tables are pyarrow Tables
(``.to_pandas()`` for a notebook):

- ``by_model`` and ``by_datacenter``: monthly (and hourly, where given) price per slice
  per currency and group: cheapest, median, dearest and pooled (total price over total
  slices).  A server with more than one supported model is a group of its own, named
  by its models (``GeForce GTX 1080 + RTX 4000 SFF Ada Generation``): its price buys them
  together.  Slices are supported slices only; an unsupported card next to a supported
  one adds none.
- ``cheapest``: the capable servers with the lowest monthly price per slice.
- ``histograms``: per currency, bin edges and counts of the monthly price per slice.
- ``unsupported``: each unsupported GPU seen, how many and on how many servers, and the
  allowlisted card it is a look-alike of (``pcinames.near_miss``), if any.
- ``flagged``: the flagged rows and their problems; ``skipped``: the inputs the audit
  passed over (``{"input", "reason"}``, where the audit's reports list them).

Prices are used as given (:mod:`.prices`): per currency, never converted.  A server
without a price is counted (``unpriced``; ``capable_unpriced`` counts the GPU-capable ones
without a usable price) and left out of the price figures; a price that cannot be read
is counted in ``bad_prices`` and its first rows kept in ``bad_price_rows``.

>>> from gpuclass.audit import audit_records
>>> feed = [{"id": 1, "description": ["GPU - Nvidia GeForce GTX 1080"], "price": 40, "datacenter": "FSN1-DC14"},
...         {"id": 2, "description": ["2x RTX 6000 Ada Generation"], "price": 800.0, "datacenter": "NBG1-DC3"},
...         {"id": 3, "description": ["GPU - Nvidia GeForce GTX 1080"], "datacenter": "FSN1-DC14"},
...         {"id": 4, "description": ["Quadro RTX 6000"], "price": 99}]
>>> s = fleet_summary(audit_records(feed), currency="EUR")
>>> s.by_model.select(["currency", "model", "servers", "min_monthly_per_slice"]).to_pylist()[0]
{'currency': 'EUR', 'model': 'GeForce GTX 1080', 'servers': 1, 'min_monthly_per_slice': 10.0}
>>> s.headline()["capable_unpriced"], s.unsupported.column("look_alike_of").to_pylist()
(1, ['RTX 6000 Ada Generation'])
"""

from __future__ import annotations

import heapq
import json
import re
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..audit.results.reports import AuditSummary, ServerReport
from ..errors import InputError, MissingExtraError
from ..pcinames import near_miss
from ..policy import compile_policy
from .escape import storable
from .prices import read_price, source_currency

if TYPE_CHECKING:
    from ..policy import PolicyArg

__all__ = ["FleetSummary", "fleet_summary", "GROUP_COLUMNS", "CHEAPEST_COLUMNS"]

GROUP_COLUMNS = ("currency", "servers", "slices", "min_monthly_per_slice", "median_monthly_per_slice",
                 "max_monthly_per_slice", "pooled_monthly_per_slice", "hourly_servers",
                 "min_hourly_per_slice", "median_hourly_per_slice")
CHEAPEST_COLUMNS = ("currency", "row", "source", "server", "cards", "slices", "unsupported_gpus",
                    "monthly", "monthly_per_slice", "hourly", "hourly_per_slice", "datacenter")
# "Quadro RTX 6000 (10de:1e30)": the IDs pcinames.unsupported_label puts at the end
_IDS_AT_END = re.compile(r" \(([0-9a-f]{4}):([0-9a-f]{4})\)$")
_KEEP_BAD_PRICES = 50


@dataclass
class FleetSummary:
    """The figures of a fleet report (see the module docstring); tables are pyarrow Tables."""

    totals: AuditSummary
    card_names: dict[str, str]
    currencies: dict[str | None, int]
    sources: list[str]
    capable_unpriced: int
    unpriced: int
    bad_prices: int
    bad_price_rows: list[dict[str, Any]]
    by_model: Any
    by_datacenter: Any
    cheapest: Any
    histograms: dict[str | None, tuple[np.ndarray, np.ndarray]]
    unsupported: Any
    flagged: Any
    top: int = 50
    skipped: list[dict[str, str]] = field(default_factory=list)
    # the slices one card of each allowlisted model gives (the policy's): distinct, sorted
    slices_per_card: tuple[int, ...] = (4,)

    @property
    def priced(self) -> int:
        """GPU-capable servers in the price figures."""
        return sum(self.currencies.values())

    def headline(self) -> dict[str, Any]:
        """The headline figures as plain data (card counts by the cards' names)."""
        t = self.totals
        return {"servers": t.servers, "input_rows": t.input_rows, "gpu_capable": t.gpu_capable,
                "supported_cards": t.supported_cards,
                "cards": {self.card_names.get(k, k): v for k, v in sorted(t.cards.items())},
                "slices": t.slices, "unsupported_gpus": t.unsupported_gpus,
                "servers_with_unsupported": t.with_unsupported, "flagged": t.flagged,
                "priced": self.priced, "capable_unpriced": self.capable_unpriced,
                "unpriced": self.unpriced, "bad_prices": self.bad_prices, "skipped_inputs": len(self.skipped),
                "currencies": {("unknown" if k is None else k): v for k, v in self.currencies.items()}}


def _text(value: Any) -> str | None:
    """A passthrough field as text (None for none given)."""
    if value is None:
        return None
    if isinstance(value, str):
        return storable(value.strip()) or None
    try:
        return storable(json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr))
    except ValueError:  # a circular structure from a caller's own objects
        return repr(value)


class _Codes(dict):
    """Interned keys: each distinct key gets the next integer."""

    def code(self, key: Any) -> int:
        c = self.get(key)
        if c is None:
            c = self[key] = len(self)
        return c


class _Fleet:
    """One pass over the reports: counts, the priced servers' columns, bounded lists."""

    def __init__(self, compiled: Any, currency: Any, top: int, keep_flagged: int) -> None:
        self.compiled = compiled
        self.currency = currency
        self.top = top
        self.keep_flagged = keep_flagged
        self.totals = AuditSummary()
        self.card_names: dict[str, str] = {}
        self.sources: dict[str, str | None] = {}
        self.models, self.datacenters = _Codes(), _Codes()
        self.model_of, self.dc_of = array("q"), array("q")
        self.monthly, self.hourly, self.slices = array("d"), array("d"), array("q")
        self.currency_of = array("q")
        self.currency_codes = _Codes()
        self.heaps: dict[int, list[tuple[float, int, dict[str, Any]]]] = {}
        self.unsupported: dict[str, list[int]] = {}
        self.entries: dict[str, tuple[str, int]] = {}
        self.flagged: list[dict[str, Any]] = []
        self.capable_unpriced = self.unpriced = self.bad_prices = 0
        self.bad_price_rows: list[dict[str, Any]] = []
        self.seq = 0

    def _currency(self, source: str) -> str | None:
        """The currency of a source's prices (each source looked at once)."""
        cur = self.sources.get(source, ...)
        if cur is ...:
            if isinstance(self.currency, str):
                cur = self.currency
            elif isinstance(self.currency, Mapping):
                cur = self.currency.get(source)
            else:
                cur = source_currency(source)
            self.sources[source] = cur
        return cur

    def _price(self, r: ServerReport, name: str) -> tuple[float | None, bool]:
        """The amount of a price field, and whether the field held something unreadable."""
        amount, problem = read_price(r.extra.get(name))
        if problem is not None:
            self.bad_prices += 1
            if len(self.bad_price_rows) < _KEEP_BAD_PRICES:
                self.bad_price_rows.append({"row": r.row, "source": storable(r.source),
                                            "server": storable(r.server), "field": name,
                                            "problem": storable(problem)})
        return amount, problem is not None

    def add(self, r: ServerReport) -> None:
        if not isinstance(r, ServerReport):
            raise InputError(f"fleet_summary: expected ServerReport objects, got {type(r).__name__}")
        self.seq += 1
        self.totals.add(r)
        currency = self._currency(r.source)
        for c in r.cards:
            if c["card"] not in self.card_names:
                self.card_names[c["card"]] = c.get("name") or c["card"]
        if r.unsupported:
            self._unsupported(r)
        if r.problems:
            if len(self.flagged) < self.keep_flagged:
                self.flagged.append({"row": r.row, "source": storable(r.source), "server": storable(r.server),
                                     "problems": storable("; ".join(r.problems)), "reason": storable(r.reason)})
        monthly, bad = self._price(r, "price")
        hourly = self._price(r, "hourly_price")[0] if "hourly_price" in r.extra else None
        if monthly is None and not bad:
            self.unpriced += 1
        if not r.gpu_capable or r.slices <= 0:
            return
        if monthly is None:
            self.capable_unpriced += 1
            return
        model = storable(" + ".join(c.get("name") or c["card"] for c in r.cards))
        dc = _text(r.extra.get("datacenter"))
        cur = self.currency_codes.code(currency)
        self.currency_of.append(cur)
        self.model_of.append(self.models.code(model))
        self.dc_of.append(self.datacenters.code(dc))
        self.monthly.append(monthly)
        self.hourly.append(np.nan if hourly is None else hourly)
        self.slices.append(r.slices)
        per_slice = monthly / r.slices
        heap = self.heaps.setdefault(cur, [])
        item = (-per_slice, -self.seq)
        if len(heap) >= self.top and (not heap or item <= heap[0][:2]):
            return  # no dearer server kept to make room
        cards = storable(", ".join(f"{c['count']}x {c.get('name') or c['card']}" for c in r.cards))
        entry = {"currency": currency, "row": r.row, "source": storable(r.source), "server": storable(r.server),
                 "cards": cards, "slices": r.slices, "unsupported_gpus": r.unsupported_gpus,
                 "monthly": monthly, "monthly_per_slice": per_slice, "hourly": hourly,
                 "hourly_per_slice": None if hourly is None else hourly / r.slices, "datacenter": dc}
        if len(heap) < self.top:
            heapq.heappush(heap, (*item, entry))
        else:
            heapq.heapreplace(heap, (*item, entry))

    def _unsupported(self, r: ServerReport) -> None:
        seen = set()
        for entry in r.unsupported:
            parsed = self.entries.get(entry)
            if parsed is None:
                # "2x Quadro RTX 6000 (10de:1e30)": a count and a label (report.unsupported_entries)
                count, sep, label = entry.partition("x ")
                ok = sep and count.isascii() and count.isdigit()
                parsed = (storable(label), int(count)) if ok else (storable(entry), 1)
                if len(self.entries) < 100_000:  # distinct entries are few; a hostile input is not
                    self.entries[entry] = parsed
            label, n = parsed
            counts = self.unsupported.setdefault(label, [0, 0])
            counts[0] += n
            if label not in seen:
                counts[1] += 1
                seen.add(label)

    def finish(self) -> FleetSummary:
        import pyarrow as pa

        currencies = list(self.currency_codes)
        cur = np.frombuffer(self.currency_of, dtype=np.int64)
        monthly = np.frombuffer(self.monthly, dtype=np.float64)
        hourly = np.frombuffer(self.hourly, dtype=np.float64)
        slices = np.frombuffer(self.slices, dtype=np.int64)
        by_model = _groups(cur, np.frombuffer(self.model_of, dtype=np.int64), list(self.models),
                           currencies, monthly, hourly, slices, "model")
        by_dc = _groups(cur, np.frombuffer(self.dc_of, dtype=np.int64), list(self.datacenters),
                        currencies, monthly, hourly, slices, "datacenter")
        cheapest = []
        for code in range(len(currencies)):
            cheapest += [e for _, _, e in sorted(self.heaps.get(code, []), key=lambda x: (-x[0], -x[1]))]
        histograms = {}
        for code, name in enumerate(currencies):
            per_slice = monthly[cur == code] / slices[cur == code]
            histograms[name] = _histogram(per_slice)
        return FleetSummary(
            totals=self.totals, card_names=self.card_names,
            slices_per_card=tuple(sorted({int(c["slices"]) for c in self.compiled.cards})) or (0,),
            currencies={c: int(np.count_nonzero(cur == i)) for i, c in enumerate(currencies)},
            sources=[storable(x) for x in self.sources],
            capable_unpriced=self.capable_unpriced, unpriced=self.unpriced, bad_prices=self.bad_prices,
            bad_price_rows=self.bad_price_rows, by_model=by_model, by_datacenter=by_dc,
            cheapest=pa.Table.from_pylist(cheapest, schema=_cheapest_schema()),
            histograms=histograms, unsupported=self._unsupported_table(),
            flagged=pa.Table.from_pylist(self.flagged, schema=pa.schema([
                ("row", pa.int64()), ("source", pa.string()), ("server", pa.string()),
                ("problems", pa.string()), ("reason", pa.string())])),
            top=self.top)

    def _unsupported_table(self):
        import pyarrow as pa

        rows = []
        for label, (gpus, servers) in sorted(self.unsupported.items(), key=lambda kv: (-kv[1][0], kv[0])):
            m = _IDS_AT_END.search(label)
            name, vendor, device = (label[:m.start()], int(m.group(1), 16), int(m.group(2), 16)) if m \
                else (label, None, None)
            miss = near_miss(self.compiled, vendor, device, name)
            rows.append({"gpu": label, "gpus": gpus, "servers": servers,
                         "look_alike_of": miss.card_name if miss else None,
                         "look_alike_card": miss.card if miss else None,
                         "note": miss.reason if miss else None})
        return pa.Table.from_pylist(rows, schema=pa.schema([
            ("gpu", pa.string()), ("gpus", pa.int64()), ("servers", pa.int64()),
            ("look_alike_of", pa.string()), ("look_alike_card", pa.string()), ("note", pa.string())]))


def _cheapest_schema():
    import pyarrow as pa

    types = {"currency": pa.string(), "row": pa.int64(), "source": pa.string(), "server": pa.string(),
             "cards": pa.string(), "slices": pa.int64(), "unsupported_gpus": pa.int64(),
             "datacenter": pa.string()}
    return pa.schema([(c, types.get(c, pa.float64())) for c in CHEAPEST_COLUMNS])


def _groups(cur: np.ndarray, key: np.ndarray, names: list[Any], currencies: list[str | None],
            monthly: np.ndarray, hourly: np.ndarray, slices: np.ndarray, what: str):
    """Price per slice per (currency, key) group, cheapest median first within a currency."""
    import pyarrow as pa

    n = len(cur)
    per_slice = monthly / np.maximum(slices, 1)
    hourly_slice = hourly / np.maximum(slices, 1)
    group = cur * max(len(names), 1) + key
    order = np.lexsort((per_slice, group))
    g = group[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if n else np.empty(0, np.int64)
    ends = np.r_[starts[1:], n].astype(np.int64)
    ps = per_slice[order]
    count = ends - starts
    cols: dict[str, Any] = {
        "currency": [currencies[int(x) // max(len(names), 1)] for x in g[starts]],
        what: [names[int(x) % max(len(names), 1)] for x in g[starts]],
        "servers": count,
        "slices": np.add.reduceat(slices[order], starts) if n else np.empty(0, np.int64),
        "min_monthly_per_slice": ps[starts] if n else np.empty(0),
        "median_monthly_per_slice": _medians(ps, starts, count),
        "max_monthly_per_slice": ps[ends - 1] if n else np.empty(0),
    }
    price_sum = np.add.reduceat(monthly[order], starts) if n else np.empty(0)
    cols["pooled_monthly_per_slice"] = price_sum / np.maximum(cols["slices"], 1)
    # hourly: only the servers that give it, sorted within each group (NaN sorts last)
    order_h = np.lexsort((hourly_slice, group))
    hs = hourly_slice[order_h]
    given = np.add.reduceat(~np.isnan(hs), starts) if n else np.empty(0, np.int64)
    cols["hourly_servers"] = given
    cols["min_hourly_per_slice"] = np.where(given > 0, hs[starts] if n else np.empty(0), np.nan)
    cols["median_hourly_per_slice"] = np.where(given > 0, _medians(hs, starts, np.maximum(given, 1)), np.nan)
    table = pa.table({k: (pa.array(v, from_pandas=True) if isinstance(v, np.ndarray) and v.dtype.kind == "f"
                          else pa.array(v)) for k, v in cols.items()},
                     schema=pa.schema([("currency", pa.string()), (what, pa.string()),
                                       ("servers", pa.int64()), ("slices", pa.int64()),
                                       *[(c, pa.float64()) for c in GROUP_COLUMNS[3:7]],
                                       ("hourly_servers", pa.int64()),
                                       *[(c, pa.float64()) for c in GROUP_COLUMNS[8:]]]))
    if n:  # by currency (first seen first), then cheapest median, then name (none given last)
        rank = (g[starts] // max(len(names), 1)).tolist()
        med = cols["median_monthly_per_slice"].tolist()
        names_ = cols[what]
        table = table.take(sorted(range(len(starts)),
                                  key=lambda i: (rank[i], med[i], names_[i] is None, names_[i] or "")))
    return table


def _medians(sorted_values: np.ndarray, starts: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Per-group medians of values sorted within each group (the first ``count`` of each)."""
    if not len(starts):
        return np.empty(0)
    lo = starts + (count - 1) // 2
    hi = starts + count // 2
    return (sorted_values[lo] + sorted_values[hi]) / 2


def _histogram(values: np.ndarray, max_bins: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Counts and bin edges of price per slice (at most ``max_bins`` bins)."""
    if not len(values):
        return np.empty(0), np.empty(0, np.int64)
    edges = np.histogram_bin_edges(values, bins="auto")
    if len(edges) > max_bins + 1:
        edges = np.histogram_bin_edges(values, bins=max_bins)
    counts, edges = np.histogram(values, bins=edges)
    return edges, counts


def fleet_summary(reports: Iterable[ServerReport], *, policy: PolicyArg = None,
                  currency: str | Mapping[str, str | None] | None = None, top: int = 50,
                  keep_flagged: int = 1000) -> FleetSummary:
    """The fleet's figures from audit reports (read once, as they stream).

    ``currency``: the currency of every price (``"EUR"``), a mapping from a report's
    ``source`` to its currency, or None to read it from each source's file name
    (:func:`~gpuclass.report.prices.source_currency`); an unknown currency stays unknown.
    ``top``: servers kept per currency in ``cheapest``; ``keep_flagged``: flagged rows kept
    (all are counted).  ``policy`` names look-alikes of its cards (default: the platform's).
    Needs pyarrow (``pip install 'gpuclass[report]'``).
    """
    if top < 0 or keep_flagged < 0:
        raise InputError("fleet_summary: top and keep_flagged must be at least 0")
    if isinstance(currency, str) and not currency.strip():
        currency = None
    try:
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("pyarrow", "report", "fleet_summary") from exc
    fleet = _Fleet(compile_policy(policy), currency, top, keep_flagged)
    for r in reports:
        fleet.add(r)
    summary = fleet.finish()
    # inputs an audit passed over (members of an archive it would not open): its ``skipped``
    summary.skipped = [{k: storable(str(v)) for k, v in item.items()}
                       for item in getattr(reports, "skipped", None) or ()]
    return summary
