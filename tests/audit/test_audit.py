"""Fleet audits: every input kind, every malformed-row kind, rows in == rows out."""

from __future__ import annotations

import csv
import io
import json
import tarfile
import zipfile

import pytest

from audit_samples import AUCTION, DEVICE_ROWS, LSPCI
from gpuclass import audit as A
from gpuclass.audit import (audit_device_rows, audit_frame, audit_lspci_dumps, audit_paths,
                            audit_records, detect_kind, write_reports)
from gpuclass.errors import InputError, SourceError

EXPECTED = {  # id -> (gpu_capable, slices, supported cards, unsupported GPUs, flagged)
    "2130001": (True, 4, 1, 0, False), "2130002": (True, 4, 1, 0, False),
    "2130003": (True, 4, 1, 0, False), "2130004": (True, 8, 2, 0, False),
    "2130005": (True, 4, 1, 0, False), "2130006": (False, 0, 0, 0, False),
    "2130007": (False, 0, 0, 1, False), "2130008": (False, 0, 0, 0, True),
    "2130009": (True, 8, 2, 0, False),
}


def check_auction(reports):
    got = {r.server: (r.gpu_capable, r.slices, r.supported_cards, r.unsupported_gpus, bool(r.problems))
           for r in reports}
    assert got == EXPECTED


def test_auction_records():
    reports = list(audit_records(AUCTION))
    check_auction(reports)
    r = reports[3]
    assert r.cards == [{"card": "rtx-6000-ada", "name": "RTX 6000 Ada Generation", "count": 2, "slices": 8,
                        "source": "text", "evidence": "rtx 6000 ada generation"}]
    assert r.extra == {"cpu": "Intel Xeon Gold 5412U", "price": 813.0, "datacenter": "NBG1-DC3"}
    assert "GPU" in reports[7].problems[0]
    assert reports[6].unsupported == ["1x TU102GL [Quadro RTX 6000/8000] (10de:1e30)"]  # as a device table


def test_information_counts_only_without_description():
    [r] = audit_records([{"id": 1, "description": ["Intel Xeon"], "information": ["RTX 6000 Ada"]}])
    assert r.supported_cards == 1
    [r] = audit_records([{"id": 1, "description": ["GTX 1080"], "information": ["GTX 1080"]}])
    assert r.supported_cards == 1


MALFORMED = [
    ("not an object", ["a", "list"], "malformed record"),
    ("no id", {"description": ["GTX 1080"]}, "no id"),
    ("description not a list", {"id": 1, "description": 5}, "description is int"),
    ("non-text line", {"id": 1, "description": ["GTX 1080", 3]}, "description[1] is int"),
    ("specials not a list", {"id": 1, "description": ["Xeon"], "specials": {"GPU": 1}}, "specials is dict"),
    ("no description", {"id": 1, "specials": ["ECC"]}, "no description"),
    ("null description", {"id": 1, "description": None, "specials": ["GPU"]}, "no description"),
    ("empty description", {"id": 1, "description": [" "], "specials": []}, "no description"),
    ("GPU special, no card", {"id": 1, "description": ["GPU - Nvidia"], "specials": ["GPU"]}, "GPU"),
    ("ambiguous card", {"id": 1, "description": ["RTX 6000"], "specials": ["GPU"]}, "does not say"),
]


@pytest.mark.parametrize("what, rec, problem", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_records_are_flagged(what, rec, problem):
    [r] = audit_records([rec])
    assert r.problems and problem in r.problems[0]
    assert r.rows == 1


def write_feed(path, records, extra_before=True):
    doc = {"server_add": [{"id": 1}], "server": records} if extra_before else {"server": records}
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def test_feed_streams_in_small_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(A.ingest.text, "READ_SIZE", 7)  # records straddle every read
    p = write_feed(tmp_path / "auction.json", AUCTION)
    assert detect_kind(p) == "feed"
    check_auction(audit_paths([p]))


def test_feed_with_a_broken_record_loses_no_row(tmp_path, monkeypatch):
    monkeypatch.setattr(A.ingest.text, "READ_SIZE", 64)
    good = json.dumps(AUCTION[0])
    text = '{"server": [' + good + ', {"id": 5, "description": ["GTX 1080",, ]}, ' + good + ']}'
    (tmp_path / "f.json").write_text(text)
    reports = list(audit_paths([tmp_path / "f.json"], kind="feed"))
    assert [r.row for r in reports] == [1, 2, 3]
    assert "malformed JSON" in reports[1].problems[0]
    assert reports[0].gpu_capable and reports[2].gpu_capable


@pytest.mark.parametrize("text, problem", [
    ('"a string"', "not an auction feed"),
    ('[1, 2]', "malformed record: int"),
    ('{"server": [{"id": 1}', "ends inside"),
    ('{"server": [], ', "ends before"),
])
def test_feed_structure_errors_are_flagged_rows(tmp_path, text, problem):
    (tmp_path / "f.json").write_text(text)
    reports = list(audit_paths([tmp_path / "f.json"], kind="feed"))
    assert reports and problem in reports[-1].problems[0]


def test_ndjson(tmp_path):
    lines = [json.dumps(r) for r in AUCTION[:3]] + ["{not json", "", json.dumps(AUCTION[3])]
    p = tmp_path / "x.ndjson"
    p.write_text("\n".join(lines) + "\n")
    reports = list(audit_paths([p]))
    assert len(reports) == 5  # the blank line is not a row
    assert "malformed JSON line" in reports[3].problems[0]
    assert reports[4].slices == 8


def test_text_csv(tmp_path):
    p = tmp_path / "listings.csv"
    with open(p, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "description", "price", "specials"])
        w.writerow(["a", "GPU - Nvidia GeForce GTX 1080", "39", "GPU"])
        w.writerow(["b", "2x RTX 6000 Ada\nIntel Xeon", "800", "GPU,ECC"])
        w.writerow(["c", "too", "many", "fields", "here"])
        w.writerow(["d", "Intel Core i7", "30", "GPU"])
    reports = list(audit_paths([p]))
    assert [(r.server, r.slices, bool(r.problems)) for r in reports] == [
        ("a", 4, False), ("b", 8, False), (None, 0, True), ("d", 0, True)]
    assert reports[1].extra["price"] == "800"


def test_text_csv_needs_a_text_column(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("id,title\n1,GTX 1080\n")
    with pytest.raises(InputError):
        list(audit_paths([p]))
    assert [r.slices for r in audit_paths([p], text_column="title")] == [4]




def check_devices(reports):
    got = [(r.server, r.supported_cards, r.slices, r.unsupported_gpus, len(r.problems), r.rows) for r in reports]
    # a server's rows are one report wherever they lie (gex44-1's last row is row 15)
    assert got == [("gex44-1", 2, 8, 0, 0, 4), ("gex130-1", 2, 8, 0, 0, 2), ("mixed", 1, 4, 1, 0, 2),
                   ("bad", 0, 0, 0, 4, 5), (None, 1, 4, 0, 1, 1), (None, 1, 4, 0, 1, 1)]
    assert [r.row for r in reports] == [1, 4, 6, 8, 13, 14]
    assert sum(r.rows for r in reports) == len(DEVICE_ROWS)
    assert reports[2].unsupported == ["1x TU102GL [Quadro RTX 6000/8000] (10de:1e30)"]
    assert "mixed" in reports[2].reason
    assert reports[3].problems == ["row 8: vendor 'zz' is not a hex ID", "row 9: device missing",
                                   "row 10: subvendor and subdevice go together",
                                   "row 12: class 'xyz' is not a hex ID"]


def test_device_rows():
    check_devices(list(audit_device_rows(DEVICE_ROWS)))


def test_device_rows_wrong_width():
    reports = list(audit_device_rows([("a", "10de", "27b0"), ("a", "10de", "27b0", "", "", "0300", "x")]))
    assert [r.rows for r in reports] == [2] and len(reports[0].problems) == 2


def test_device_table_across_chunks(monkeypatch):
    monkeypatch.setattr(A.ingest.columns, "BATCH_ROWS", 2)
    check_devices(list(audit_device_rows(DEVICE_ROWS)))


def write_device_csv(path):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["server", "vendor", "device", "subvendor", "subdevice", "class"])
        w.writerows(DEVICE_ROWS)
    return path


def test_device_csv(tmp_path):
    p = write_device_csv(tmp_path / "ids.csv")
    assert detect_kind(p) == "table-csv"
    check_devices(list(audit_paths([p])))


def test_parquet_and_frames(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pd = pytest.importorskip("pandas")
    cols = list(zip(*DEVICE_ROWS))
    table = pa.table({k: list(v) for k, v in zip(["server", "vendor", "device", "subvendor", "subdevice",
                                                  "class"], cols)})
    pq.write_table(table, tmp_path / "ids.parquet")
    check_devices(list(audit_paths([tmp_path / "ids.parquet"])))
    out = audit_frame(table)
    assert isinstance(out, pa.Table) and out.num_rows == 6
    df = audit_frame(table.to_pandas())
    assert isinstance(df, pd.DataFrame) and df["slices"].tolist() == [8, 8, 4, 0, 4, 4]
    assert df["rows"].sum() == len(DEVICE_ROWS)
    # integer IDs (a typed Parquet table)
    ints = pa.table({"server": ["a", "a"], "vendor": [0x10DE, 0x10DE], "device": [0x27B0, 0x22BC],
                     "class": [0x030000, 0x0403]})
    assert audit_frame(ints).column("slices").to_pylist() == [4]


def test_parquet_text_that_is_not_utf8_is_unreadable_data(tmp_path):
    """pyarrow does not check Parquet strings as it reads them: a damaged one must be the
    typed error of any damaged row group, not a UnicodeDecodeError at the first cell."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    good = ["10de", "27b0", "0300"]
    cols = {"server": pa.array([b"srv1", b"srv2", b"\xb0v3", b"srv4"]).view(pa.string()),
            **{k: [v] * 4 for k, v in zip(("vendor", "device", "class"), good)}}
    pq.write_table(pa.table(cols), tmp_path / "ids.parquet", row_group_size=2)
    with pytest.raises(SourceError, match=r"ids.parquet: unreadable Parquet data after row \d+: .*UTF-?8"):
        list(audit_paths([tmp_path / "ids.parquet"]))


def test_text_frames():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"id": [r["id"] for r in AUCTION], "description": [r["description"] for r in AUCTION],
                       "specials": [r["specials"] for r in AUCTION]})
    out = audit_frame(df)
    assert len(out) == len(df)
    assert dict(zip(out["server"], out["slices"])) == {int(k): v[1] for k, v in EXPECTED.items()}
    assert out["server"].dtype == df["id"].dtype
    with pytest.raises(InputError):
        audit_frame([1, 2])


def lspci_members():
    return sorted(LSPCI.items())


def check_lspci(reports):
    got = {r.server: (r.slices, r.unsupported_gpus, bool(r.problems)) for r in reports}
    assert got == {"gex44-1": (4, 0, False), "gex130-1": (8, 0, False), "gex131-1": (4, 0, False),
                   "ws-rtx4000ada": (0, 1, False), "ax-plain": (0, 0, False), "broken": (0, 0, True),
                   "empty": (0, 0, True)}


def test_lspci_dir_tar_zip(tmp_path):
    d = tmp_path / "dumps"
    d.mkdir()
    for name, text in lspci_members():
        (d / f"{name}.txt").write_text(text)
    (d / "empty.txt").write_text("")
    check_lspci(list(audit_paths([d])))
    tar = tmp_path / "dumps.tar.gz"
    with tarfile.open(tar, "w:gz") as tf:
        for p in sorted(d.iterdir()):
            tf.add(p, arcname=f"fleet/{p.name}")
    check_lspci(list(audit_paths([tar])))
    zp = tmp_path / "dumps.zip"
    with zipfile.ZipFile(zp, "w") as zf:
        for p in sorted(d.iterdir()):
            zf.write(p, arcname=p.name)
    check_lspci(list(audit_paths([zp])))


def test_lspci_unreadable_member_is_a_row():
    [r] = list(audit_lspci_dumps([("x", OSError("denied"))]))
    assert r.problems == ["cannot read: denied"]


def test_missing_file_is_a_source_error(tmp_path):
    with pytest.raises(SourceError):
        list(audit_paths([tmp_path / "nope.json"]))


@pytest.mark.parametrize("fmt", A.OUTPUT_FORMATS)
def test_formats_keep_every_row(fmt):
    buf = io.BytesIO() if fmt == "parquet" else io.StringIO()
    summary = write_reports(audit_records(AUCTION), fmt, buf)
    text = "" if fmt == "parquet" else buf.getvalue()
    assert summary.servers == summary.input_rows == len(AUCTION)
    assert summary.to_dict()["cards"] == {"gtx-1080": 3, "gtx-1080-ti": 1, "rtx-4000-sff-ada": 1,
                                          "rtx-6000-ada": 2, "rtx-pro-6000-blackwell-max-q": 1}
    if fmt == "json":
        doc = json.loads(text)
        assert len(doc["reports"]) == len(AUCTION) and doc["summary"]["slices"] == 32
    elif fmt == "ndjson":
        lines = [json.loads(x) for x in text.splitlines()]
        assert len(lines) == len(AUCTION) and all("server" in x for x in lines)  # jq reads them as they are
        buf = io.StringIO()
        write_reports(audit_records(AUCTION), fmt, buf, summary_line=True)
        assert json.loads(buf.getvalue().splitlines()[-1])["summary"]["flagged"] == 1
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == len(AUCTION) and rows[3]["cards"] == "rtx-6000-ada x2"
    elif fmt == "parquet":
        import pyarrow.parquet as pq
        t = pq.read_table(io.BytesIO(buf.getvalue()))
        assert t.num_rows == len(AUCTION) and t.column("cards.rtx-6000-ada")[3].as_py() == 2
        assert sum(t.column("slices").to_pylist()) == 32 and t.column("server").to_pylist() == [
            str(r["id"]) for r in AUCTION]
        with pytest.raises(InputError, match="needs a file"):
            write_reports(audit_records(AUCTION), fmt, io.StringIO())
    else:
        assert len(text.splitlines()) == len(AUCTION) + 3
        assert "GPU-capable" in text


def test_unknown_format_and_kind():
    with pytest.raises(InputError):
        write_reports([], "xml")
    with pytest.raises(InputError):
        audit_paths(["x"], kind="pdf")


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_draws_on_a_terminal_only(tmp_path):
    pytest.importorskip("tqdm")
    p = write_feed(tmp_path / "auction.json", AUCTION)
    out = Terminal()
    bar = A.progress.Progress(p.stat().st_size, out)
    list(audit_paths([p], progress=bar))
    text = out.getvalue()
    assert "100%" in text and f"{len(AUCTION)} servers" in text and "/s" in text
    quiet = io.StringIO()
    list(audit_paths([p], progress=A.progress.Progress(p.stat().st_size, quiet)))
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("body, kind", [
    ("id,description\n1,GPU - Nvidia GeForce GTX 1080\n2,bad\rrow\n3,2x NVIDIA RTX 6000 Ada Generation 48 GB\n",
     "csv"),
    ("server,vendor,device,class\ns1,10de,27b0,030000\ns2,10\rde,27b0,030000\ns3,10de,26b1,030000\n",
     "table-csv"),
])
def test_csv_row_the_csv_module_rejects_is_a_flagged_row(tmp_path, body, kind):
    # A bare carriage return in an unquoted field makes the csv module raise; the
    # row is flagged and the rows after it are still audited (found by fuzzing).
    path = tmp_path / "inventory.csv"
    path.write_bytes(body.encode())
    reports = list(audit_paths([path], kind=kind))
    assert sum(r.rows for r in reports) == 3
    assert [bool(r.problems) for r in reports] == [False, True, False]
    assert reports[2].gpu_capable and reports[2].slices > 0


def test_flat_rows_follow_the_csv_columns():
    """The CSV writer writes each flat row's values in order: the keys are the flat columns."""
    from gpuclass.audit import CSV_COLUMNS, flat_columns

    for r in audit_records(AUCTION):
        assert tuple(r.to_flat()) == CSV_COLUMNS
        assert tuple(r.to_flat(["gtx-1080"])) == flat_columns(["gtx-1080"])


@pytest.mark.parametrize("fmt", ["table", "json", "ndjson"])
def test_hostile_listing_text_is_escaped_on_the_terminal(fmt):
    """A server name or text with escape sequences, newlines or bidi overrides cannot drive
    the terminal or inject a row; JSON readers get the same strings back."""
    hostile = "evil\x1b[2J\nfake-row\u202e\x85"
    recs = [{"id": hostile, "description": [hostile + " RTX 6000 Ada"]}]
    buf = io.StringIO()
    write_reports(audit_records(recs), fmt, buf)
    text = buf.getvalue()
    assert "\x1b" not in text and "\u202e" not in text and "\x85" not in text
    if fmt == "table":
        assert "\\nfake-r" in text and len(text.splitlines()) == 4   # header, one row, blank, totals
    else:
        doc = json.loads(text) if fmt == "json" else json.loads(text.splitlines()[0])
        server = (doc["reports"][0] if fmt == "json" else doc)["server"]
        assert server == hostile


def test_records_of_the_same_text_share_nothing_but_the_answer(monkeypatch):
    """Each distinct text is resolved once per run; every record still gets its own report
    with its own problems first, exactly as if it had been resolved alone."""
    from audit_samples import auction_listing

    edge = [{"id": 1, "description": ["GTX 1080"]}, {"id": 1, "description": ["GTX 1080"]},
            {"description": []}, {"id": 3, "description": []}, {"id": 3, "description": []},
            {"id": 4, "description": [], "information": 5}, {"id": 5, "description": [], "information": 5},
            {"id": 6, "description": 7, "specials": ["GPU"]}, {"id": 7, "description": "RTX 6000", "specials": "GPU"},
            {"id": 8, "description": ["RTX 6000"], "specials": ["GPU"]}, {"id": 8, "description": ["x"], "specials": ["GPU"]},
            {"id": 9, "description": ["x", None], "information": ["2x GTX 1080 Ti"]}, "oops", None]
    records = (edge + auction_listing(60, seed=3) + AUCTION) * 3
    shared = [r.to_dict() for r in audit_records(records)]
    monkeypatch.setattr(A.engine.listings, "_BATCH", 1)
    monkeypatch.setattr(A.engine.listings, "_KNOWN", 0)  # every record resolved on its own
    alone = [r.to_dict() for r in audit_records(records)]
    assert shared == alone
    assert shared[1]["problems"] == ["duplicate server id '1' (first at row 1)"]
    assert shared[5]["problems"] == ["record has no description", "information is int, expected a list of text"]
    # the same text, and different texts that say the same (another CPU, the same card)
    a, b, c = audit_records(edge[:2] + [{"id": 2, "description": ["Intel Xeon E-2176G", "GTX 1080"]}])
    a.cards[0]["count"] = 99
    a.problems.append("mine")
    assert b.cards[0]["count"] == 1 and "mine" not in b.problems
    assert c.cards[0]["count"] == 1 and c.cards[0]["evidence"] == b.cards[0]["evidence"]


@pytest.mark.parametrize("kind", ["feed", "ndjson"])
def test_a_record_nested_past_the_decoders_limit_is_one_flagged_row(tmp_path, kind):
    """json raises RecursionError (not a decode error) on deep nesting: that record is a
    flagged row, its neighbours are read, and telling the input's kind does not fail."""
    deep = '{"id": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + ', "description": ["GTX 1080"]}'
    good = json.dumps({"id": 2, "description": ["RTX 6000 Ada"]})
    text = "[" + deep + ", " + good + "]" if kind == "feed" else deep + "\n" + good + "\n"
    path = tmp_path / ("f.json" if kind == "feed" else "f.ndjson")
    path.write_text(text)
    assert detect_kind(path) == kind
    reports = list(audit_paths([path]))
    assert [r.server for r in reports] == [None, "2"]
    assert reports[0].problems == ["malformed JSON: nested deeper than the decoder reads"]
    assert reports[1].gpu_capable and not reports[1].problems


@pytest.mark.parametrize("kind", ["feed", "ndjson"])
@pytest.mark.parametrize("where", ["id", "x"])
def test_an_integer_longer_than_python_reads_is_one_flagged_row(tmp_path, kind, where):
    """json raises a bare ValueError past sys.get_int_max_str_digits() (4300): that record
    is flagged wherever the number stands (a field a report reads or not), the next is read."""
    big = '{"id": %s, "x": %s, "description": ["GTX 1080"]}' % (
        ("1" * 5000, "1") if where == "id" else ("1", "1" * 5000))
    good = json.dumps({"id": 2, "description": ["RTX 6000 Ada"]})
    text = "[" + big + ", " + good + "]" if kind == "feed" else big + "\n" + good + "\n"
    path = tmp_path / ("f.json" if kind == "feed" else "f.ndjson")
    path.write_text(text)
    reports = list(audit_paths([path]))
    assert [r.server for r in reports] == [None, "2"]
    assert "an integer longer than Python reads" in reports[0].problems[0]
    assert reports[1].gpu_capable and not reports[1].problems
