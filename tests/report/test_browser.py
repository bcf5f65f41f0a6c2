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
from report_samples import SAMPLE, hostile_feed

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


def open_offline(browser, page: Path):
    tab = browser.open(page.as_uri())
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
