"""The report in a real browser: headless Chromium opens it offline from a file, and the
charts render, the tables sort, nothing is requested, nothing is logged as an error, and
hostile listing text runs no script.

Chromium is Debian's ``chromium`` package (``$GPUCLASS_CHROMIUM`` names another). Without
it these tests skip, unless ``GPUCLASS_REQUIRE_BROWSER=1`` (CI sets it): then they fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from headless import Chromium, find_chromium
from report_samples import SAMPLE, hostile_feed, wide_feed

from gpuclass.audit import audit_paths, audit_records
from gpuclass.report import write_html_report

BAR = (0x4C, 0x72, 0xB0)  # the charts' bar colour


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    binary = find_chromium()
    if binary is None:
        if os.environ.get("GPUCLASS_REQUIRE_BROWSER", "") not in ("", "0"):
            pytest.fail("Chromium is required (GPUCLASS_REQUIRE_BROWSER=1) but not installed: "
                        "apt-get install chromium, or set GPUCLASS_CHROMIUM")
        pytest.skip("no Chromium (apt-get install chromium); GPUCLASS_REQUIRE_BROWSER=1 makes this a failure")
    b = Chromium(binary, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


IMAGES = """Array.from(document.images).map(function (i) {
  var r = i.getBoundingClientRect();
  return {complete: i.complete, w: i.naturalWidth, h: i.naturalHeight,
          x: r.left + window.scrollX, y: r.top + window.scrollY, cw: r.width, ch: r.height};
})"""


def open_offline(browser, page: Path, width: int = 1100):
    tab = browser.open(page.as_uri(), width=width)
    assert tab.errors() == []
    assert tab.requests() == [page.as_uri()]  # the page itself; nothing else, not even a favicon
    return tab


def bar_pixels(shot: Path, box: dict) -> int:
    from PIL import Image

    with Image.open(shot) as im:
        crop = im.convert("RGB").crop((int(box["x"]), int(box["y"]), int(box["x"] + box["cw"]),
                                       int(box["y"] + box["ch"])))
        return sum(n for n, rgb in crop.getcolors(1 << 20) if max(abs(a - b) for a, b in zip(rgb, BAR)) < 12)


def test_the_sample_report_renders_offline(browser, tmp_path):
    page = tmp_path / "report.html"
    write_html_report(audit_paths([SAMPLE]), page)
    tab = open_offline(browser, page)
    images = tab.eval(IMAGES)
    assert len(images) == 3
    for img in images:
        assert img["complete"] and img["w"] > 300 and img["h"] > 100 and img["cw"] > 300 and img["ch"] > 100
    shot = tab.screenshot(tmp_path / "report.png")
    assert shot.stat().st_size > 20_000
    # every chart drew its bars: the bar colour covers part of each image on screen
    for img in images:
        assert bar_pixels(shot, img) > 500, img
    assert tab.errors() == []


def test_tables_sort_under_the_content_security_policy(browser, tmp_path):
    page = tmp_path / "report.html"
    write_html_report(audit_paths([SAMPLE]), page)
    tab = open_offline(browser, page)
    column = """(function (title) {
      var t = document.querySelector("#prices table.sortable:last-of-type");
      var tables = document.querySelectorAll("#prices table.sortable");
      t = tables[tables.length - 1];
      var col = Array.prototype.findIndex.call(t.tHead.rows[0].cells, function (c) { return c.textContent === title; });
      return Array.prototype.map.call(t.tBodies[0].rows, function (r) { return r.cells[col].getAttribute("data-v"); });
    })"""
    before = [float(v) for v in tab.eval(column + '("Monthly / slice")')]
    assert before == sorted(before)  # cheapest first, as written
    click = """(function (title) {
      var tables = document.querySelectorAll("#prices table.sortable");
      var t = tables[tables.length - 1];
      Array.prototype.find.call(t.tHead.rows[0].cells, function (c) { return c.textContent === title; })
        .querySelector("button").click();
    })"""
    tab.eval(click + '("Monthly / slice")')
    tab.eval(click + '("Monthly / slice")')  # the second click sorts descending
    after = [float(v) for v in tab.eval(column + '("Monthly / slice")')]
    assert after == sorted(before, reverse=True)
    tab.eval(click + '("Slices")')
    assert [int(v) for v in tab.eval(column + '("Slices")')] == sorted(int(v) for v in tab.eval(column + '("Slices")'))
    # the per-card table's header is two rows (column groups): a header's data-col names its
    # column; sorting by the hourly median orders that column, and each row moves whole
    grouped = """(function (col) {
      var t = document.querySelector("#prices table.groups");
      return Array.prototype.map.call(t.tBodies[0].rows, function (r) {
        return [r.cells[0].textContent, r.cells[col].getAttribute("data-v")];
      });
    })"""
    heads = tab.eval("""Array.prototype.map.call(document.querySelector("#prices table.groups").tHead
      .querySelectorAll("th[data-col]"), function (th) { return [th.textContent, +th.getAttribute("data-col")]; })""")
    assert [t for t, _ in heads][-3:] == ["Servers", "Cheapest", "Median"] and [c for _, c in heads] == list(range(10))
    rows = tab.eval(grouped + "(9)")
    for _ in range(2):  # the second click sorts descending (the table came cheapest first)
        tab.eval("""document.querySelector('#prices table.groups th[data-col="9"] button').click()""")
    after = tab.eval(grouped + "(9)")
    assert [float(v) for _, v in after] == sorted((float(v) for _, v in rows), reverse=True)
    assert after != rows and sorted(map(tuple, after)) == sorted(map(tuple, rows))
    assert tab.eval("""document.querySelector('#prices table.groups th[data-col="9"]').getAttribute("aria-sort")""") \
        == "descending"
    assert tab.errors() == []


def test_hostile_listing_text_runs_no_script(browser, tmp_path):
    page = tmp_path / "hostile.html"
    write_html_report(audit_records(hostile_feed(), source="x_EUR.json"), page)
    tab = open_offline(browser, page)
    assert tab.eval("typeof window.__pwned") == "undefined"
    assert tab.eval("document.scripts.length") == 1
    assert tab.eval("document.querySelectorAll('a, iframe, object, embed, base, form, link').length") == 0
    shown = tab.eval("document.body.innerText")
    assert "<script>window.__pwned=1</script>" in shown and "<U+202E>" in shown
    assert all(img["complete"] and img["w"] > 0 for img in tab.eval(IMAGES))
    assert tab.errors() == []


LAYOUT = """(function () {
  var doc = document.documentElement;
  var tables = Array.prototype.map.call(document.querySelectorAll("table"), function (t) {
    var box = t.parentElement;
    return {table: Math.ceil(t.getBoundingClientRect().width), box: box.clientWidth, scroll: box.scrollWidth,
            right: Math.ceil(t.getBoundingClientRect().right)};
  });
  return {scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth, innerWidth: window.innerWidth,
          tables: tables};
})()"""

# every word of each name cell (card models, datacenters, a server's cards, GPUs): the tops of
# the boxes its letters are drawn in; a word broken across two lines has two
NAME_WORDS = """(function (names) {
  var out = [];
  Array.prototype.forEach.call(document.querySelectorAll("table"), function (t) {
    var col = -1;
    Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, i) {
      if (names.indexOf(th.textContent) >= 0) { col = i; }
    });
    if (col < 0) { return; }
    Array.prototype.forEach.call(t.tBodies[0].rows, function (row) {
      var cell = row.cells[col], walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      var nodes = [], text = "", n, m, re = /\\S+/g;
      while ((n = walk.nextNode())) { nodes.push([n, text.length]); text += n.data; }
      function at(i) {
        for (var k = nodes.length - 1; k >= 0; k--) { if (nodes[k][1] <= i) { return [nodes[k][0], i - nodes[k][1]]; } }
      }
      while ((m = re.exec(text))) {
        var r = document.createRange(), a = at(m.index), b = at(m.index + m[0].length - 1);
        r.setStart(a[0], a[1]);
        r.setEnd(b[0], b[1] + 1);
        var tops = Array.prototype.filter.call(r.getClientRects(), function (x) { return x.width > 0; })
          .map(function (x) { return Math.round(x.top); });
        out.push({word: m[0], cell: text, top: Math.min.apply(null, tops), bottom: Math.max.apply(null, tops)});
      }
    });
  });
  return out;
})"""


def wide_report(tmp_path: Path) -> Path:
    page = tmp_path / "wide.html"
    write_html_report(audit_records(wide_feed(), source="wide_EUR.json"), page)
    return page


def sample_report(tmp_path: Path) -> Path:
    page = tmp_path / "report.html"
    write_html_report(audit_paths([SAMPLE]), page)
    return page


@pytest.mark.parametrize("make", [sample_report, wide_report], ids=["sample", "wide-fleet"])
def test_the_page_fits_1280_pixels_with_names_unbroken(browser, tmp_path, make):
    """At 1280 px nothing scrolls sideways: no table (ten columns with the hourly ones) is
    wider than the page, and a name wraps between its words only, never inside one
    (``Max-Q`` stays whole)."""
    tab = open_offline(browser, make(tmp_path), 1280)
    layout = tab.eval(LAYOUT)
    assert layout["innerWidth"] == 1280
    assert layout["scrollWidth"] <= layout["clientWidth"] <= 1280, layout
    assert len(layout["tables"]) >= 5
    for t in layout["tables"]:
        assert t["table"] <= t["box"] and t["scroll"] <= t["box"] and t["right"] <= layout["clientWidth"], t
    words = tab.eval(NAME_WORDS + '(["Card model", "Datacenter", "Cards", "GPU"])')
    assert len(words) > 50
    assert "Max-Q" in {w["word"] for w in words}
    broken = [w for w in words if w["bottom"] > w["top"] + 4]
    assert broken == []
    # names still wrap, between words: some cell's words stand on two lines (wide fleet)
    cells: dict[str, set[int]] = {}
    for w in words:
        cells.setdefault(w["cell"], set()).add(w["top"])
    if make is wide_report:
        assert any(len(tops) > 1 for tops in cells.values())
    assert tab.errors() == []


def test_the_harness_sees_what_it_must_catch(browser, tmp_path):
    """The checks above could fail: a blocked inline script, a script error and a request
    are all reported."""
    bad = tmp_path / "bad.html"
    bad.write_text("<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'\">"
                   "<script>window.__pwned = 1</script>")
    tab = browser.open(bad.as_uri())
    assert tab.eval("typeof window.__pwned") == "undefined"
    assert any("Content Security Policy" in e for e in tab.errors())
    worse = tmp_path / "worse.html"
    worse.write_text("<img src='http://127.0.0.1:9/x.png'><script>throw new Error('boom')</script>")
    tab = browser.open(worse.as_uri())
    assert "http://127.0.0.1:9/x.png" in tab.requests()
    assert any("boom" in e for e in tab.errors())


@pytest.mark.parametrize("required,code,says", [("1", 1, "Chromium is required"), ("", 0, "1 skipped")])
def test_a_missing_browser_fails_where_it_is_required(tmp_path, required, code, says):
    """CI sets GPUCLASS_REQUIRE_BROWSER=1: there a missing Chromium is a failure, never a skip."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("GPUCLASS_CHROMIUM", "PYTEST_ADDOPTS")}
    env.update(PATH=str(tmp_path), GPUCLASS_REQUIRE_BROWSER=required)  # no Chromium on this PATH
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           f"{Path(__file__)}::test_the_harness_sees_what_it_must_catch"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == code, proc.stdout[-2000:]
    assert says in proc.stdout
