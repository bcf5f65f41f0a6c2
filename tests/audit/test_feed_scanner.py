"""The compiled feed scanner (gpuclass._feed) against json, record by record and whole feeds.

The scanner may only take a record that json reads the same way (the asked-for fields
equal, the rest valid) and that a following ``,{`` or ``]`` closes; everything else is
left to the record-by-record reader.  So whatever the text (valid, escaped, deep,
damaged, cut at any read size), a feed read with the scanner gives the same rows,
errors and fields as one read by json alone.
"""

from __future__ import annotations

import io
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit_samples import AUCTION, auction_listing
from helpers import compiled_feed
from gpuclass import audit as A
from gpuclass.audit import audit_paths, write_reports
from gpuclass.audit.engine.listings import TextAuditor
from gpuclass.audit.ingest.records import iter_feed
from gpuclass.audit.ingest.text import Reader

FIELDS = TextAuditor.FIELDS
SETTINGS = settings(max_examples=int(os.environ.get("GPUCLASS_MUTATIONS", "60")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def scan():
    return compiled_feed("scan_records")


def narrow(rec):
    return {k: rec[k] for k in FIELDS if k in rec} if isinstance(rec, dict) else rec


def read(data: bytes, fields, chunk: int, monkeypatch) -> list:
    monkeypatch.setattr(A.ingest.text, "READ_SIZE", chunk)
    return [(row, narrow(rec), err) for row, _, rec, err in iter_feed(Reader(io.BytesIO(data)), "f", fields)]


def walk(buf: str, scan) -> list:
    """Every record the scanner takes from the start of a list, each checked against json."""
    dec = json.JSONDecoder()
    pos = skip(buf, 1)
    taken = []
    while True:
        sure, end = scan(buf, pos, FIELDS)
        if not sure:
            return taken
        for rec in sure:
            want, pos = dec.raw_decode(buf, pos)
            assert rec == narrow(want) and type(rec.get("id")) is type(want.get("id"))
            pos = skip(buf, pos)
            if buf[pos] == ",":
                pos = skip(buf, pos + 1)
                assert buf[pos] == "{"
            else:
                assert buf[pos] == "]"
            taken.append(rec)
        assert pos == end


def skip(buf: str, pos: int) -> int:
    while buf[pos] in " \t\r\n":
        pos += 1
    return pos


# -- what json would read ---------------------------------------------------------------

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["RTX™ 4000 SFF Ada", "2x GTX 1080 Ti", "", " ", "\\", '"', "\x00\x1f", "\ud83d\ude00", "GPU"])
SCALAR = st.none() | st.booleans() | st.integers(-2**70, 2**70) | TEXT | st.floats(allow_nan=True)
VALUE = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(TEXT, inner, max_size=3), max_leaves=12)
RECORD = st.dictionaries(st.sampled_from(FIELDS) | TEXT, VALUE | st.lists(TEXT, max_size=4), max_size=8)


@SETTINGS
@given(st.lists(RECORD, max_size=6), st.booleans(), st.sampled_from([0, 1, 2]))
def test_what_the_scanner_takes_is_what_json_reads(scan, records, ascii_only, indent):
    text = json.dumps(records, ensure_ascii=ascii_only, indent=indent or None)
    taken = walk(text, scan)
    # and it takes every record it is meant to: no NaN, plain keys, asked-for fields a
    # scalar or a list of strings, whatever else the record holds
    sure = 0
    while sure < len(records) and simple(records[sure], ascii_only):
        sure += 1
    assert len(taken) >= sure if sure < len(records) else len(taken) == len(records)


def simple(rec: dict, ascii_only: bool) -> bool:
    def plain(key: str) -> bool:
        return not any(c in '"\\' or c < " " or (ascii_only and c > "~") for c in key)

    def scalar(v) -> bool:
        return v is None or isinstance(v, (bool, int, str)) or (isinstance(v, float) and v == v and abs(v) != float("inf"))

    def finite(v) -> bool:  # json writes NaN and Infinity, which are not JSON
        if isinstance(v, float):
            return v == v and abs(v) != float("inf")
        if isinstance(v, list):
            return all(finite(x) for x in v)
        return all(finite(x) for x in v.values()) if isinstance(v, dict) else True

    return finite(rec) and all(plain(k) for k in rec) and all(
        scalar(v) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
        for k, v in rec.items() if k in FIELDS)


@SETTINGS
@given(st.lists(RECORD, max_size=5), st.booleans(), st.integers(1, 64))
def test_a_feed_reads_the_same_with_and_without_the_scanner(scan, monkeypatch_module, records, ascii_only, chunk):
    data = json.dumps({"server": records}, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    assert read(data, FIELDS, chunk, monkeypatch_module) == read(data, None, chunk, monkeypatch_module)


FEED = json.dumps({"server": auction_listing(12, seed=4) + AUCTION}, indent=1)
DAMAGE = st.lists(st.tuples(st.floats(0, 1), st.integers(0, 40),
                            st.sampled_from(["", '"', "{", "}", ",", "]", "[", "\\", ":", "x", "\n", "\u2122"])),
                  min_size=1, max_size=3)


@SETTINGS
@given(DAMAGE, st.integers(16, 4096))
def test_a_damaged_feed_reads_the_same_with_and_without_the_scanner(scan, monkeypatch_module, damage, chunk):
    """Cut, inserted or lost text anywhere: the same rows, the same errors, the same fields."""
    text = FEED
    for where, lost, put in damage:
        at = int(where * len(text))
        text = text[:at] + put + text[at + lost:]
    data = text.encode()
    assert read(data, FIELDS, chunk, monkeypatch_module) == read(data, None, chunk, monkeypatch_module)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_escapes_decode_as_json_decodes_them(scan):
    for raw in [r'"RTX\u2122 4000"', r'"\ud83d\ude00 pair"', r'"\ud83d lone high"', r'"\ude00 lone low"',
                r'"\ud83d\u0041 high then plain"', r'"\"\\\/\b\f\n\r\t"', r'"\uD83D\uDE00 upper hex"']:
        text = '[{"id": 1, "description": [' + raw + "]}]"
        (rec,), _ = scan(text, 1, FIELDS)
        assert rec["description"] == json.loads(text)[0]["description"], raw


@pytest.mark.parametrize("record", [
    '{"id": NaN}', '{"price": Infinity}', '{"price": -Infinity}', '{"id": 01}', '{"id": 1.}',
    '{"id": 1e}', '{"id": -}', '{"id": tru}', '{"id": "a\tb"}', '{"id": "\\x41"}', '{"id": "\\u12G4"}',
    '{"id": 1,}', '{"id" 1}', '{id: 1}', '{"id": [1, 2]}', '{"description": [1]}', '{"description": {"a": 1}}',
    '{"x": [1,]}', '{"x": {"a": 1,}}', '{"x": {"a" 1}}', '{"x": [}', '{"d\\u0065scription": ["GTX 1080"]}',
    '{"id": 1}}', '{"id": 1} {"id": 2}', '{"id": 1}, "cpu": 2',
    '{"id": 1, "x": ' + "[" * 600 + "]" * 600 + "}",
    '{"id": 1, "x": ' + "7" * 4301 + "}", '{"id": 1, "x": [-' + "7" * 4301 + "]}",
])
def test_what_the_scanner_leaves_to_json(record, scan):
    """Damage, json's extensions (NaN), shapes it does not decode and keys spelled with
    escapes stop it before the record; the record reader then decides."""
    text = "[" + record + ', {"id": 9}]'
    assert scan(text, 1, FIELDS) == ([], 1)


@pytest.mark.parametrize("cut", range(1, 60))
def test_a_record_cut_off_by_the_buffer_is_left_alone(cut, scan):
    whole = '{"id": 1, "price": 12.5e1, "description": ["RTX\\u2122 6000 Ada"], "x": [true, null]}, {"id": 2}]'
    got, end = scan(whole[:cut], 0, FIELDS)
    assert (got, end) == ([], 0)
    assert scan(whole, 0, FIELDS)[0] == [{"id": 1, "price": 125.0, "description": ["RTX™ 6000 Ada"]}, {"id": 2}]


def test_long_numbers_json_reads_are_taken(scan):
    """Past Python's integer limit json fails (left to it, above); a long float, a long
    integer within the limit, or any integer once the limit is lifted, json reads."""
    import sys

    text = '[{"id": 1, "x": [' + "7" * 4300 + ", 1." + "5" * 5000 + ', 2e9999], "price": 0.' + "1" * 400 + "}]"
    assert scan(text, 1, FIELDS)[0] == [narrow(json.loads(text)[0])]
    limit = sys.get_int_max_str_digits()
    try:
        sys.set_int_max_str_digits(0)
        text = '[{"id": 1, "x": ' + "7" * 5000 + "}]"
        assert scan(text, 1, FIELDS)[0] == [{"id": 1}]
    finally:
        sys.set_int_max_str_digits(limit)


# the scanner reads one-byte text eight characters at a time: whatever stops a string
# (its closing quote, an escape, a control character) at whatever place in a word
STOPS = ['"', "\\n", "\\u00e9", "\n", "\x01", "\x1f", "\x7f", "\x80", "\xe9", "\xff", "\u0100"]


@pytest.mark.parametrize("stop", STOPS)
@pytest.mark.parametrize("wide", [False, True])
def test_a_string_ends_wherever_its_stop_falls(scan, stop, wide):
    """Every place of a quote, an escape or a control character in a long string, in
    text of one-byte (ASCII and Latin-1) and two-byte characters, reads as json reads it
    or is left to json."""
    for length in range(0, 26):
        for at in range(0, length + 1):
            body = "x" * at + stop + ("yĀ" if wide else "y") * (length - at)
            if stop == '"':
                body = body.replace('"', '\\"')
            text = '[{"id": 1, "description": ["' + body + '", "' + "z" * length + '"], "cpu": "' + body + '"}]'
            try:
                want = [narrow(json.loads(text)[0])]
            except json.JSONDecodeError:
                want = []
            got, _ = scan(text, 1, FIELDS)
            assert got == want, (length, at)


def test_asked_for_keys_of_any_length_are_told_apart(scan):
    """Keys of one length, keys longer than the scanner's length table, keys in wider
    characters: each record's field found under its own key and no other."""
    keys = ("ab", "ac", "k" * 63, "k" * 64, "k" * 70, "k" * 69 + "j", "ключ", "ke\u00ff", "é" * 3)
    rec = {k: i for i, k in enumerate(keys)} | {"a": 0, "k" * 65: 1, "ab ": 2, "é" * 2: 3}
    for wider in ("", "Ā", "\U0001f600"):  # the text's characters one, two and four bytes wide
        text = json.dumps([rec | {"x": wider}, {"k" * 70: "x"}], ensure_ascii=False)
        got, _ = scan(text, 1, keys)
        assert got == [{k: i for i, k in enumerate(keys)}, {"k" * 70: "x"}]


def test_a_repeated_key_keeps_the_last_as_json_does(scan):
    text = '[{"id": 1, "description": ["a"], "id": "x7", "description": ["GTX 1080"]}]'
    assert scan(text, 1, FIELDS)[0] == [narrow(json.loads(text)[0])]


def test_bad_arguments_are_typed_errors(scan):
    with pytest.raises(TypeError):
        scan(b"[{}]", 1, FIELDS)
    with pytest.raises(TypeError):
        scan("[{}]", 1, (b"id",))
    with pytest.raises(IndexError):
        scan("[{}]", 9, FIELDS)
    with pytest.raises(ValueError):
        scan("[{}]", 1, tuple(str(i) for i in range(40)))


# -- whole audits -------------------------------------------------------------------------

def csv_of(path, monkeypatch, scanner: bool) -> str:
    if not scanner:
        monkeypatch.setattr(A.ingest.records, "_record_scanner", lambda: None)
    out = io.StringIO()
    write_reports(audit_paths([path]), "csv", out)
    monkeypatch.undo()
    return out.getvalue()


@pytest.mark.parametrize("damage", ["none", "cut", "brace", "escape", "deep", "nan", "bom"])
def test_audits_agree_with_and_without_the_scanner(tmp_path, monkeypatch, damage, scan):
    recs = auction_listing(40, seed=8) + [dict(r, id=9000 + i) for i, r in enumerate(AUCTION)]
    parts = [json.dumps(r) for r in recs]
    if damage == "cut":
        parts[5] = parts[5][: len(parts[5]) // 2]
    elif damage == "brace":
        parts[7] = parts[7].replace(', "cpu"', '}, "cpu"', 1)
    elif damage == "escape":
        parts[9] = parts[9].replace('"description": ["', '"description": ["\\u2122\\ud83d\\ude00 ', 1)
    elif damage == "deep":
        parts[3] = parts[3][:-1] + ', "x": ' + "[" * 5000 + "]" * 5000 + "}"
    elif damage == "nan":
        parts[4] = parts[4].replace('"price": ', '"price": NaN, "p": ', 1)
    text = ("\ufeff" if damage == "bom" else "") + '{"server": [' + ",\n ".join(parts) + "]}"
    path = tmp_path / "live_data_sb_EUR.json"
    path.write_text(text, encoding="utf-8")
    fast, slow = csv_of(path, monkeypatch, True), csv_of(path, monkeypatch, False)
    assert fast == slow
    assert fast.count("\n") - 1 == len(recs)  # one row per record, damaged ones flagged


def test_well_formed_records_never_reach_the_record_decoder(tmp_path, scan, monkeypatch):
    recs = auction_listing(30, seed=2)
    path = tmp_path / "feed.json"
    path.write_text(json.dumps(recs), encoding="utf-8")  # a snapshot: no top-level key to decode
    monkeypatch.setattr(A.ingest.text, "READ_SIZE", 1 << 20)  # the whole feed in one read
    calls = []
    real = json.JSONDecoder.raw_decode
    monkeypatch.setattr(json.JSONDecoder, "raw_decode", lambda self, s, idx=0: calls.append(idx) or real(self, s, idx))
    reports = list(audit_paths([path]))
    assert [r.server for r in reports] == [str(r["id"]) for r in recs]
    assert calls == []


def test_a_limit_hands_over_that_many_and_resumes_where_it_stopped(scan):
    recs = auction_listing(7, seed=1)
    text = json.dumps(recs)
    got, pos = [], 1
    while True:
        part, pos = scan(text, pos, FIELDS, 3)
        assert len(part) <= 3
        got += part
        if len(part) < 3 or text[pos] == "]":
            break
    assert text[pos] == "]" and got == [narrow(r) for r in recs]
    assert scan(text, 1, FIELDS, 0) == ([], 1)


@SETTINGS
@given(st.integers(0, 5), st.integers(1, 3000), st.booleans(), st.integers(64, 1024), st.integers(16, 2048))
def test_records_past_the_record_limit_read_the_same_with_and_without_the_scanner(
        scan, monkeypatch_module, at, size, closed, limit, chunk):
    """A record longer than the limit on one record (issue 28: bounded record buffers),
    closed or never closed, anywhere in the feed and at any read size: the same rows and
    errors with the scanner as with json alone."""
    records = [json.dumps({"id": i, "description": ["1x GTX 1080"]}) for i in range(6)]
    long = '{"id": 99, "description": ["' + "GTX 1080 " * (size // 9)
    records.insert(at, long + ('"]}' if closed else ""))
    data = ("[" + ", ".join(records if closed else records[:at + 1]) + ("]" if closed else "")).encode()
    with pytest.MonkeyPatch.context() as mp:  # the limit set for this example only
        mp.setattr(A.ingest.text, "MAX_RECORD", limit)
        with_scanner = read(data, FIELDS, chunk, monkeypatch_module)
        assert with_scanner == read(data, None, chunk, monkeypatch_module)
    rows = [row for row, _, _ in with_scanner]
    assert rows == list(range(1, len(rows) + 1))
