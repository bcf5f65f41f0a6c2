"""The report page's style sheet and its one script, and the Content-Security-Policy that
allows exactly these two (by hash) and forbids everything else: no network access, no
other script, no inline event handlers, no forms, no frames.

The script only sorts tables: it reorders existing rows, reading cells' ``data-v``
attributes and text, and never writes markup.

>>> "default-src 'none'" in CSP and f"'{hash_source(SCRIPT)}'" in CSP
True
"""

from __future__ import annotations

import base64
import hashlib

__all__ = ["STYLE", "SCRIPT", "CSP", "hash_source"]

STYLE = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #f6f8fa; --accent: #4c72b0;
        --warn: #9a6700; --bad: #c44e52; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1200px; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 16px; margin: 22px 0 8px; }
p, li { max-width: 80ch; }
.muted { color: var(--muted); }
.warn { color: var(--warn); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 10px;
         margin: 12px 0; padding: 0; }
.cards div { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
.cards dt { color: var(--muted); font-size: 12px; }
.cards dd { margin: 2px 0 0; font-size: 22px; font-weight: 600; }
.cards dd small { display: block; font-size: 12px; font-weight: 400; color: var(--muted); }
figure { margin: 12px 0; }
figure img { max-width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 12px; }
.scroll { overflow-x: auto; margin: 8px 0 16px; }
table { border-collapse: collapse; font-size: 13px; width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top;
         overflow-wrap: anywhere; }
th { background: var(--bg); font-weight: 600; white-space: nowrap; vertical-align: bottom; }
th.group { text-align: center; border-bottom-color: var(--muted); }
th.first, td.first { border-left: 1px solid var(--line); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.groups th, table.groups td { padding: 4px 7px; }
.w { white-space: nowrap; }
th button { font: inherit; color: inherit; background: none; border: 0; padding: 0; cursor: pointer; }
th button::after { content: " \\2195"; color: var(--muted); }
th[aria-sort="ascending"] button::after { content: " \\2191"; }
th[aria-sort="descending"] button::after { content: " \\2193"; }
.lookalike { color: var(--bad); font-weight: 600; }
.none { color: var(--muted); font-style: italic; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
"""

SCRIPT = """
(function () {
  "use strict";
  function key(cell, numeric) {
    var v = cell.getAttribute("data-v");
    if (v === null) { v = cell.textContent; }
    if (!numeric) { return v.toLowerCase(); }
    var n = parseFloat(v);
    return isNaN(n) ? Infinity : n;
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    var heads = table.tHead.querySelectorAll("th");
    Array.prototype.forEach.call(heads, function (th) {
      var button = th.querySelector("button");
      var col = parseInt(th.getAttribute("data-col"), 10);
      if (!button || isNaN(col)) { return; }
      button.addEventListener("click", function () {
        var numeric = th.getAttribute("data-type") === "num";
        var up = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
          var c = x < y ? -1 : (x > y ? 1 : 0);
          return up ? c : -c;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
}());
"""


def hash_source(text: str) -> str:
    """A CSP hash source (``sha256-...``) of an inline element's exact text."""
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


CSP = ("default-src 'none'; img-src data:; "
       f"style-src '{hash_source(STYLE)}'; script-src '{hash_source(SCRIPT)}'; "
       "base-uri 'none'; form-action 'none'")
