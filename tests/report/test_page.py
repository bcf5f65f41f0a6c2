"""The HTML page: self-contained, every listing text escaped, hostile input inert, large fleets
summarised; and ``gpuclass audit --format html``."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from report_samples import SAMPLE, hostile_feed

from gpuclass.audit import ServerReport, audit_records
from gpuclass.audit.render import finish
from gpuclass.cli import main
from gpuclass.errors import InputError
from gpuclass.report import fleet_summary, render_html, write_html_report
from gpuclass.report.assets import CSP, SCRIPT, STYLE
from gpuclass.report.page import FLAGGED_ROWS, TABLE_ROWS


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)
        else:
            self.text.append(data)


ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4", "p", "span",
                "section", "dl", "div", "dt", "dd", "small", "figure", "img", "figcaption", "table", "thead",
                "tbody", "tr", "th", "td", "button", "code", "br", "footer", "script", "bdi"}


def check_inert(page: str) -> _Tags:
    """What escaping must guarantee, whatever the listing said."""
    p = _Tags()
    p.feed(page)
    p.close()
    assert {t for t, _ in p.tags} <= ALLOWED_TAGS
    assert [t for t, _ in p.tags].count("script") == 1 and p.scripts == [SCRIPT]
    assert [t for t, _ in p.tags].count("style") == 1 and p.styles == [STYLE]
    for tag, attrs in p.tags:
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            assert name in {"lang", "charset", "http-equiv", "content", "name", "class", "id", "src", "alt",
                            "scope", "type", "data-type", "data-v"}, (tag, name)
            if name == "src":
                assert tag == "img" and value.startswith("data:image/svg+xml;base64,")
            else:
                assert "javascript:" not in (value or "").replace(" ", "").lower() or name == "alt"
        if tag == "meta" and ("http-equiv", "Content-Security-Policy") in attrs:
            assert ("content", CSP) in attrs
    metas = [a for t, a in p.tags if t == "meta"]
    assert ("http-equiv", "Content-Security-Policy") in metas[1]  # right after the charset
    # the CSP allows exactly the page's own style and script
    for text, kind in ((SCRIPT, "script-src"), (STYLE, "style-src")):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"{kind} 'sha256-{digest}'" in CSP
    assert "default-src 'none'" in CSP and "unsafe" not in CSP
    page.encode("utf-8")  # lone surrogates do not reach the file
    return p


def charts(page: str) -> list[ET.Element]:
    """Every chart, decoded and parsed as the SVG it must be."""
    out = []
    for uri in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page):
        root = ET.fromstring(base64.b64decode(uri))
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        tags = {el.tag.split("}")[-1] for el in root.iter()}
        assert not tags & {"script", "foreignObject", "a", "iframe", "image"}
        assert not [k for el in root.iter() for k in el.attrib if k.lower().startswith("on")]
        assert len(root.findall(".//{http://www.w3.org/2000/svg}path")) > 10
        out.append(root)
    return out


def test_hostile_listing_text_is_escaped_and_inert():
    reports = list(audit_records(hostile_feed(), source="x_EUR.json"))
    page = render_html(fleet_summary(reports))
    p = check_inert(page)
    shown = html.unescape("".join(p.text))
    assert "window.__pwned" in shown        # the text is there, as text
    assert "<U+202E>" in shown and "<U+200B>" in shown and "<U+0000>" in shown
    assert "lone \\ud800 surrogate" in shown  # as every audit output writes it (utf8_text)
    assert "\u202e" not in page and "\x00" not in page
    assert "日本のサーバー 🚀" in shown
    assert "x" * 1000 not in page           # a 100 kB datacenter name is cut
    assert len(charts(page)) == 3


def test_hostile_file_names_and_problems(tmp_path):
    name = tmp_path / "a\"'><script>window.__pwned=1<_EUR.json"
    name.write_text('{"server": [{"id": 1, "description": ["<script>x</script> RTX 6000"], "price": 9}, 7, '
                    '{"id": "</td><td>", "description": 5}, {"id": 3, "description": "GTX 1080", "price": 40}]}')
    out = tmp_path / "r.html"
    assert main(["audit", str(name), "--format", "html", "-o", str(out)]) == 1
    page = out.read_text(encoding="utf-8")
    p = check_inert(page)
    shown = html.unescape("".join(p.text))
    assert "<script>window.__pwned=1<_EUR.json" in shown
    assert "Flagged rows: 3" in shown and "does not say which card" in shown and "malformed record" in shown
    assert "Prices in EUR" in shown


def test_sample_feed_page(tmp_path):
    out = tmp_path / "report.html"
    assert main(["audit", str(SAMPLE), "--format", "html", "-o", str(out)]) == 1  # 2 flagged listings
    page = out.read_text(encoding="utf-8")
    p = check_inert(page)
    shown = html.unescape(" ".join(p.text))
    assert "Servers audited 37" in shown and "GPU-capable 21" in shown and "GPU slices 92" in shown
    assert "Rows flagged 2" in shown
    assert "look-alike: not the RTX 6000 Ada Generation" in shown           # Quadro RTX 6000
    assert "look-alike: not the RTX 4000 SFF Ada Generation" in shown       # RTX 4000 Ada, not SFF
    assert "1 GPU-capable server without a usable price is counted above" in shown
    assert "Prices in EUR, as the input gives them." in shown
    assert not re.search("[€$£]", shown)                # no symbol invented
    assert len(charts(page)) == 3
    assert len(page) < 400_000


def test_unknown_and_mixed_currencies_are_said_not_invented(tmp_path):
    rec = {"id": 1, "description": ["GTX 1080"], "price": 40, "datacenter": "FSN1-DC14"}
    for name in ("a_EUR.json", "b_USD.json", "c.json"):
        (tmp_path / name).write_text(json.dumps({"server": [rec]}))
    out = tmp_path / "r.html"
    files = [str(tmp_path / n) for n in ("a_EUR.json", "b_USD.json", "c.json")]
    assert main(["audit", *files, "--format", "html", "-o", str(out)]) == 0
    shown = html.unescape(" ".join(check_inert(out.read_text()).text))
    assert "Prices come in 3 currencies (EUR, USD, currency not given); they are never converted" in shown
    assert "1 priced server comes from inputs that do not state their currency" in shown
    assert not re.search("[€$£]", shown)


def test_hourly_prices_get_columns_of_their_own():
    def report(row, price, hourly):
        r = ServerReport(row, "f_EUR.json", f"s{row}")
        r.cards = [{"card": "gtx-1080", "name": "GeForce GTX 1080", "count": 1, "slices": 4}]
        r.extra = {"price": price, "hourly_price": hourly, "datacenter": "FSN1-DC14"}
        return finish(r)

    page = render_html(fleet_summary([report(1, 40, 0.064), report(2, 44, None)]))
    shown = html.unescape(" ".join(check_inert(page).text))
    assert "Hourly / slice" in shown and "Median / slice / h" in shown and "0.0160" in shown
    plain = render_html(fleet_summary([report(1, 40, None)]))
    assert "Hourly" not in html.unescape(" ".join(check_inert(plain).text))


def test_inputs_the_audit_skipped_are_listed():
    class Reports(list):
        skipped = [{"input": "dumps.tar/<b>x</b>", "reason": "a symlink leaving the archive"}]

    reports = Reports(audit_records([{"id": 1, "description": "GTX 1080", "price": 40}]))
    s = fleet_summary(reports, currency="EUR")
    assert s.skipped == Reports.skipped and s.headline()["skipped_inputs"] == 1
    shown = html.unescape(" ".join(check_inert(render_html(s)).text))
    assert "Inputs skipped: 1" in shown and "dumps.tar/<b>x</b>" in shown
    assert fleet_summary(list(reports)).skipped == []


def test_a_large_fleet_is_summarised_not_listed():
    n = 60_000

    def reports():
        for i in range(n):
            r = ServerReport(i + 1, "big_EUR.json", f"srv-{i}")
            if i % 3 == 0:
                r.cards = [{"card": "gtx-1080", "name": "GeForce GTX 1080", "count": 1, "slices": 4}]
            if i % 7 == 0:
                r.unsupported, r.unsupported_gpus = [f"1x Some GPU {i % 500} (10de:{i % 500:04x})"], 1
            if i % 5 == 0:
                r.problems = [f"row {i + 1}: vendor 'zz' is not a hex ID"]
            r.extra = {"price": 30 + i % 97, "datacenter": f"DC-{i % 1000}"}
            yield finish(r)

    s = fleet_summary(reports())
    assert s.totals.servers == n and s.totals.flagged == n // 5 and s.flagged.num_rows == 1000
    assert s.by_datacenter.num_rows == 1000 and s.cheapest.num_rows == 50
    page = render_html(s)
    check_inert(page)
    assert page.count("<tr>") < 2 * TABLE_ROWS + 50 + FLAGGED_ROWS + 10
    assert len(page) < 1_000_000
    assert "900 more groups not shown" in page
    assert f"{n // 5 - FLAGGED_ROWS:,} more flagged rows not shown here" in page
    assert "the 20 cheapest of 1,000" in page


def test_write_html_report_to_a_stream_and_a_path(tmp_path):
    import io

    buf = io.StringIO()
    s = write_html_report(audit_records([{"id": 1, "description": "GTX 1080", "price": 40}]), buf,
                          currency="EUR", title="<Fleet>")
    assert s.priced == 1 and "<title>&lt;Fleet&gt;</title>" in buf.getvalue()
    write_html_report([], tmp_path / "empty.html")
    shown = html.unescape(" ".join(check_inert((tmp_path / "empty.html").read_text()).text))
    assert "No GPU-capable server has a usable price" in shown and "Servers audited 0" in shown


def test_cli_output_option(tmp_path, capsys):
    feed = tmp_path / "f.json"
    feed.write_text(json.dumps({"server": [{"id": 1, "description": ["GTX 1080"], "price": 40}]}))
    assert main(["audit", str(feed), "--format", "csv", "-o", str(tmp_path / "out.csv")]) == 0
    assert (tmp_path / "out.csv").read_text().startswith("row,source,server,gpu_capable")
    assert capsys.readouterr().out == ""
    assert main(["audit", str(feed), "--format", "html"]) == 0           # no -o: standard output
    assert capsys.readouterr().out.startswith("<!DOCTYPE html>")
    assert main(["audit", str(feed), "-o", "json"]) == 2                 # kubectl's habit: a usage error
    assert "--format json" in capsys.readouterr().err
    assert main(["audit", str(feed), "--format", "html", "-o", str(tmp_path / "no" / "r.html")]) == 3


@pytest.mark.parametrize("missing", ["matplotlib", "pyarrow"])
def test_a_missing_extra_is_a_clear_error(monkeypatch, tmp_path, capsys, missing):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == missing or name.startswith(missing + "."):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    feed = tmp_path / "f.json"
    feed.write_text(json.dumps({"server": [{"id": 1, "description": ["GTX 1080"], "price": 40}]}))
    assert main(["audit", str(feed), "--format", "html", "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gpuclass[report]" in err and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()
    # before any input is read
    with pytest.raises(InputError, match="gpuclass.report."):
        write_html_report(_never_read(), tmp_path / "r.html")


def _never_read():
    raise AssertionError("the input was read before the missing extra was found")
    yield
