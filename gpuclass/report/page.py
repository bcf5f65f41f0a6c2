"""The fleet report as one self-contained HTML page.

Everything is inline: the style sheet, the charts (SVG images as ``data:`` URIs) and one
small script that sorts tables, each allowed by hash in the page's Content-Security-Policy,
which forbids all else (no network access at all).  Every text that comes from a listing
is escaped and its hidden characters shown (:mod:`.escape`); nothing is a link.  A large
fleet is summarised, never listed: groups, unsupported GPUs and flagged rows are capped
(the rest counted), and the price spread is a histogram.

>>> from gpuclass.audit import audit_records
>>> from gpuclass.report import fleet_summary
>>> page = render_html(fleet_summary(audit_records([{"id": "<b>gex44</b>", "price": 184,
...     "description": "RTX 4000 SFF Ada Generation"}]), currency="EUR"))
>>> "&lt;b&gt;gex44&lt;/b&gt;" in page and "<b>gex44" not in page
True
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, IO

from .assets import CSP, SCRIPT, STYLE
from .escape import html_text
from .summary import FleetSummary, fleet_summary

if TYPE_CHECKING:
    from ..policy import PolicyArg

__all__ = ["render_html", "write_html_report", "CHART_GROUPS", "TABLE_ROWS", "FLAGGED_ROWS"]

CHART_GROUPS = 20   # groups drawn in a chart (the cheapest medians)
TABLE_ROWS = 100    # rows of a group or unsupported-GPU table
FLAGGED_ROWS = 200  # flagged rows listed
SOURCES_SHOWN = 10


def _num(x: Any, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:,.{digits}f}" if isinstance(x, float) else f"{x:,}"


def _td(x: Any, digits: int = 2) -> str:
    """A number cell (``data-v`` sorts it)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return '<td class="num" data-v=""></td>'
    return f'<td class="num" data-v="{x!r}">{_num(x, digits)}</td>'


def _tx(x: Any, none: str = "not given") -> str:
    """A text cell from a listing."""
    if x is None:
        return f'<td><span class="none">{none}</span></td>'
    return f"<td>{html_text(x)}</td>"


def _table(columns: list[tuple[str, bool]], rows: list[str], sortable: bool = True) -> str:
    """A table: ``columns`` as (title, numeric); ``rows`` as rendered ``<tr>`` bodies."""
    heads = []
    for title, numeric in columns:
        attrs = ' class="num" data-type="num"' if numeric else ""
        inner = f'<button type="button">{title}</button>' if sortable else title
        heads.append(f'<th scope="col"{attrs}>{inner}</th>')
    cls = ' class="sortable"' if sortable else ""
    body = "".join(f"<tr>{r}</tr>" for r in rows)
    return f'<div class="scroll"><table{cls}><thead><tr>{"".join(heads)}</tr></thead><tbody>{body}</tbody></table></div>'


def _card(title: str, value: Any, note: str = "") -> str:
    small = f"<small>{note}</small>" if note else ""
    return f"<div><dt>{title}</dt><dd>{_num(value) if not isinstance(value, str) else value}{small}</dd></div>"


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def _currency_name(c: str | None) -> str:
    return c if c is not None else "currency not given"


def _per_card(s: FleetSummary) -> str:
    """The slices a card gives under the audit's policy: ``4``, or ``2 to 8`` where cards differ."""
    n = s.slices_per_card
    return str(n[0]) if len(n) == 1 else f"{n[0]} to {n[-1]}"


def _headline(s: FleetSummary) -> str:
    h = s.headline()
    t = s.totals
    cards = "<br>".join(f"{n:,}× {html_text(name)}" for name, n in h["cards"].items())
    pct = f"{100 * t.gpu_capable / t.servers:.0f}% of servers" if t.servers else ""
    parts = [
        _card("Servers audited", t.servers, f"from {_plural(t.input_rows, 'input row')}"),
        _card("GPU-capable", t.gpu_capable, pct),
        _card("Supported cards", t.supported_cards, cards),
        _card("GPU slices", t.slices, f"time-sliced, {_per_card(s)} per card" if t.slices else ""),
        _card("Unsupported GPUs", t.unsupported_gpus, f"on {_plural(t.with_unsupported, 'server')}"),
        _card("Rows flagged", t.flagged, "see below" if t.flagged else "every row read cleanly"),
        _card("Priced GPU-capable", s.priced,
              f"{_plural(s.capable_unpriced, 'capable server')} without a usable price"),
    ]
    return f'<section id="headline"><h2>At a glance</h2><dl class="cards">{"".join(parts)}</dl></section>'


def _price_notes(s: FleetSummary) -> str:
    notes = []
    known = [c for c in s.currencies if c is not None]
    if len(s.currencies) > 1:
        notes.append(f"Prices come in {len(s.currencies)} currencies "
                     f"({', '.join(_currency_name(c) for c in s.currencies)}); they are never "
                     "converted, so each has figures of its own.")
    elif known:
        notes.append(f"Prices in {known[0]}, as the input gives them.")
    if None in s.currencies:
        verb = "comes" if s.currencies[None] == 1 else "come"
        notes.append(f"{_plural(s.currencies[None], 'priced server')} {verb} from inputs that do not state "
                     "their currency (the auction feed states it in its file name, as in "
                     "<code>live_data_sb_EUR.json</code>): their amounts are shown as given, "
                     "with no currency.")
    notes.append(f"Monthly prices unless marked hourly; a slice is one of the {_per_card(s)} time-sliced "
                 "shares of a supported card. Only supported slices count: an unsupported card adds none.")
    if s.capable_unpriced:
        verb = "is" if s.capable_unpriced == 1 else "are"
        notes.append(f'<span class="warn">{_plural(s.capable_unpriced, "GPU-capable server")} '
                     f"without a usable price {verb} counted above and left out of these figures.</span>")
    if s.bad_prices:
        notes.append(f'<span class="warn">{_plural(s.bad_prices, "price")} could not be read '
                     "(listed under the flagged rows).</span>")
    return "".join(f"<p>{n}</p>" for n in notes)


def _group_table(table: Any, what: str, title: str, hourly: bool) -> str:
    rows = table.to_pylist()
    shown = rows[:TABLE_ROWS]
    cols = [(title, False), ("Servers", True), ("Slices", True), ("Cheapest / slice", True),
            ("Median / slice", True), ("Dearest / slice", True), ("Pooled / slice", True)]
    if hourly:
        cols += [("Hourly: servers", True), ("Cheapest / slice / h", True), ("Median / slice / h", True)]
    body = []
    for r in shown:
        cells = [_tx(r[what]), _td(r["servers"]), _td(r["slices"]), _td(r["min_monthly_per_slice"]),
                 _td(r["median_monthly_per_slice"]), _td(r["max_monthly_per_slice"]),
                 _td(r["pooled_monthly_per_slice"])]
        if hourly:
            cells += [_td(r["hourly_servers"]), _td(r["min_hourly_per_slice"], 4),
                      _td(r["median_hourly_per_slice"], 4)]
        body.append("".join(cells))
    more = (f'<p class="muted">{_plural(len(rows) - len(shown), "more group")} not shown '
            "(<code>gpuclass.fleet_summary()</code> has them all).</p>") if len(rows) > len(shown) else ""
    return _table(cols, body) + more


def _chart(table: Any, what: str, title: str, unit: str) -> str:
    from .charts import data_uri, price_svg

    rows = table.to_pylist()[:CHART_GROUPS]
    svg = price_svg([r[what] for r in rows], [r["median_monthly_per_slice"] for r in rows],
                    [r["min_monthly_per_slice"] for r in rows], title=title, unit=unit)
    cut = f" (the {CHART_GROUPS} cheapest of {len(table):,})" if len(table) > CHART_GROUPS else ""
    alt = f"{title}{cut}: bars show the median, diamonds the cheapest; the table below has the figures"
    return (f'<figure><img src="{data_uri(svg)}" alt="{html_text(alt)}">'
            f"<figcaption>{html_text(title + cut)}: bar = median, diamond = cheapest.</figcaption></figure>")


def _histogram(s: FleetSummary, currency: str | None, unit: str) -> str:
    from .charts import data_uri, histogram_svg

    edges, counts = s.histograms.get(currency, ([], []))
    title = "GPU-capable servers by monthly price per slice"
    svg = histogram_svg(list(map(float, edges)), list(map(int, counts)), title=title, unit=unit)
    return (f'<figure><img src="{data_uri(svg)}" alt="{html_text(title)} (histogram)">'
            f"<figcaption>{html_text(title)}: how the whole fleet spreads, however large.</figcaption></figure>")


def _cheapest(s: FleetSummary, currency: str | None, hourly: bool) -> str:
    rows = [r for r in s.cheapest.to_pylist() if r["currency"] == currency]
    cols = [("Server", False), ("Cards", False), ("Slices", True), ("Monthly", True),
            ("Monthly / slice", True)]
    if hourly:
        cols += [("Hourly", True), ("Hourly / slice", True)]
    cols += [("Datacenter", False)]
    body = []
    for r in rows:
        cards = html_text(r["cards"])
        if r["unsupported_gpus"]:
            cards += f' <span class="warn">+ {_plural(r["unsupported_gpus"], "unsupported GPU")}</span>'
        cells = [_tx(r["server"], "no name"), f"<td>{cards}</td>", _td(r["slices"]), _td(r["monthly"]),
                 _td(r["monthly_per_slice"])]
        if hourly:
            cells += [_td(r["hourly"], 4), _td(r["hourly_per_slice"], 4)]
        cells.append(_tx(r["datacenter"]))
        body.append("".join(cells))
    return (f"<h4>The {_plural(len(rows), 'cheapest capable server')} by monthly price per slice</h4>"
            + _table(cols, body))


def _prices(s: FleetSummary) -> str:
    out = ['<section id="prices"><h2>Price per slice</h2>', _price_notes(s)]
    if not s.currencies:
        out.append("<p>No GPU-capable server has a usable price: no price figures.</p></section>")
        return "".join(out)
    for currency in s.currencies:
        unit = _currency_name(currency)
        by_model = s.by_model.filter(_is(s.by_model, currency))
        by_dc = s.by_datacenter.filter(_is(s.by_datacenter, currency))
        hourly = any(n for n in by_model.column("hourly_servers").to_pylist())
        out.append(f"<h3>{html_text(unit)}: {_plural(s.currencies[currency], 'priced capable server')}</h3>")
        out.append(_chart(by_model, "model", "Monthly price per slice by card model", unit))
        out.append(_group_table(by_model, "model", "Card model", hourly))
        out.append(_chart(by_dc, "datacenter", "Monthly price per slice by datacenter", unit))
        out.append(_group_table(by_dc, "datacenter", "Datacenter", hourly))
        out.append(_histogram(s, currency, unit))
        out.append(_cheapest(s, currency, hourly))
    out.append("</section>")
    return "".join(out)


def _is(table: Any, currency: str | None):
    import pyarrow.compute as pc

    col = table.column("currency")
    return pc.is_null(col) if currency is None else pc.fill_null(pc.equal(col, currency), False)


def _unsupported(s: FleetSummary) -> str:
    rows = s.unsupported.to_pylist()
    out = ['<section id="unsupported"><h2>Unsupported GPUs seen</h2>']
    if not rows:
        out.append("<p>None: every GPU named is on the allowlist.</p></section>")
        return "".join(out)
    out.append("<p>These give no slices. A look-alike is easily mistaken for an allowlisted card: "
               "only the listed IDs are supported.</p>")
    body = []
    for r in rows[:TABLE_ROWS]:
        if r["look_alike_of"]:
            what = (f'<td><span class="lookalike">look-alike: not the {html_text(r["look_alike_of"])}</span>'
                    f'<br><span class="muted">{html_text(r["note"])}</span></td>')
        else:
            what = '<td><span class="muted">not on the allowlist</span></td>'
        body.append(f"{_tx(r['gpu'])}{_td(r['gpus'])}{_td(r['servers'])}{what}")
    out.append(_table([("GPU", False), ("GPUs", True), ("Servers", True), ("Why it is not supported", False)],
                      body))
    if len(rows) > TABLE_ROWS:
        out.append(f'<p class="muted">{_plural(len(rows) - TABLE_ROWS, "more kind")} not shown.</p>')
    out.append("</section>")
    return "".join(out)


def _flagged(s: FleetSummary) -> str:
    rows = s.flagged.to_pylist()[:FLAGGED_ROWS]
    total = s.totals.flagged
    out = [f'<section id="flagged"><h2>Flagged rows: {total:,}</h2>']
    if not total and not s.skipped:
        out.append("<p>None: every row was read cleanly.</p>")
    elif total:
        out.append("<p>Rows the audit could not read fully, and why; they are counted in every figure "
                   "above as what could be read of them.</p>")
        body = [f"{_td(r['row'])}{_tx(r['source'])}{_tx(r['server'], 'no name')}{_tx(r['problems'])}"
                for r in rows]
        out.append(_table([("Row", True), ("Source", False), ("Server", False), ("Problems", False)], body))
        if total > len(rows):
            out.append(f'<p class="muted">{_plural(total - len(rows), "more flagged row")} not shown here; '
                       "<code>gpuclass audit --format csv</code> lists every row.</p>")
    if s.skipped:
        out.append(f"<h3>Inputs skipped: {len(s.skipped):,}</h3>")
        body = [f"{_tx(x.get('input'))}{_tx(x.get('reason'))}" for x in s.skipped[:FLAGGED_ROWS]]
        out.append(_table([("Input", False), ("Why", False)], body))
    if s.bad_prices:
        out.append(f"<h3>Prices that could not be read: {s.bad_prices:,}</h3>")
        body = [f"{_td(r['row'])}{_tx(r['source'])}{_tx(r['server'], 'no name')}{_tx(r['field'])}"
                f"{_tx(r['problem'])}" for r in s.bad_price_rows]
        out.append(_table([("Row", True), ("Source", False), ("Server", False), ("Field", False),
                           ("Problem", False)], body))
    out.append("</section>")
    return "".join(out)


def render_html(summary: FleetSummary, *, title: str = "GPU fleet report") -> str:
    """The report page of a :func:`~gpuclass.report.fleet_summary` (needs matplotlib)."""
    sources = summary.sources
    shown = ", ".join(f"<bdi>{html_text(x)}</bdi>" for x in sources[:SOURCES_SHOWN])
    if len(sources) > SOURCES_SHOWN:
        shown += f" and {_plural(len(sources) - SOURCES_SHOWN, 'more')}"
    intro = f"<p class=\"muted\">From {shown}.</p>" if shown else ""
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html_text(title)}</title><style>{STYLE}</style></head>\n<body>",
        f"<header><h1>{html_text(title)}</h1>{intro}</header>",
        _headline(summary), _prices(summary), _unsupported(summary), _flagged(summary),
        "<footer>Made by gpuclass. Self-contained: it loads nothing.</footer>",
        f"<script>{SCRIPT}</script></body></html>\n",
    ])


def write_html_report(reports: Iterable[Any], out: str | os.PathLike | IO[str] | None = None, *,
                      policy: PolicyArg = None, currency: str | Mapping[str, str | None] | None = None,
                      top: int = 50, title: str = "GPU fleet report") -> FleetSummary:
    """Summarise ``reports`` (:func:`~gpuclass.report.fleet_summary`) and write the page to
    ``out`` (a path, written whole at the end, or a text stream); return the summary."""
    from .charts import require

    require()  # before the audit is read, not after
    summary = fleet_summary(reports, policy=policy, currency=currency, top=top)
    page = render_html(summary, title=title)
    if out is None or isinstance(out, io.TextIOBase) or hasattr(out, "write"):
        import sys

        (out or sys.stdout).write(page)  # type: ignore[union-attr]
    else:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(page)
    return summary
