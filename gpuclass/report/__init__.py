"""Fleet reports: which listings are GPU-capable, how many slices each gives, what a slice costs.

:func:`fleet_summary` turns an audit's reports into figures (pyarrow tables: price per
slice by card model and by datacenter, the cheapest capable servers, the unsupported GPUs
seen with their look-alikes, the flagged rows); :func:`render_html` and
:func:`write_html_report` make one self-contained HTML page of them (``gpuclass audit
FILE... --format html -o report.html``).  Charts are drawn by matplotlib, imported only
when a page is rendered; the ``report`` extra installs it and pyarrow.

Modules: :mod:`.prices` (amounts and currencies as given), :mod:`.summary` (the figures),
:mod:`.charts` (SVG charts), :mod:`.page` (the HTML page), :mod:`.assets` (its style and
script).

>>> from gpuclass.audit import audit_records
>>> s = fleet_summary(audit_records([{"id": 1, "description": "2x RTX 4000 SFF Ada", "price": 368}]),
...                   currency="EUR")
>>> s.cheapest.select(["server", "slices", "monthly_per_slice", "currency"]).to_pylist()
[{'server': '1', 'slices': 8, 'monthly_per_slice': 46.0, 'currency': 'EUR'}]
"""

from __future__ import annotations

from .page import render_html, write_html_report
from .summary import FleetSummary, fleet_summary

__all__ = ["FleetSummary", "fleet_summary", "render_html", "write_html_report"]
