"""Arrow types in device columns (issue 28): every type a server or ID column can carry,
generated for each column role and passed through each door (``audit_table`` with an
Arrow table, a record batch and a pandas frame, a Parquet file through ``audit_paths``,
the CLI once), is either read (a report per server) or refused with an ``InputError``
naming the file (or "table"), the column and its type; never another exception type.
RELIABILITY.md's section "Hostile input, second round: the input side" names these tests."""

from __future__ import annotations

import datetime
import decimal
import json

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import gpuclass  # noqa: E402
from gpuclass.audit import audit_paths  # noqa: E402
from gpuclass.errors import InputError  # noqa: E402

ROLES = ("server", "vendor", "device", "subvendor", "subdevice", "class")
GOOD = {"server": ["srv1", "srv2"], "vendor": ["10de", "10de"], "device": ["27b0", "27b0"],
        "subvendor": ["10de", "10de"], "subdevice": ["16fa", "16fa"], "class": ["0300", "0300"]}
# what the good cells are as integers (the server: 1 and 2)
NUMBERS = {"server": [1, 2], "vendor": [0x10DE] * 2, "device": [0x27B0] * 2, "subvendor": [0x10DE] * 2,
           "subdevice": [0x16FA] * 2, "class": [0x0300] * 2}


def _text(role, t):
    return pa.array(GOOD[role], pa.string()).cast(t)


def _bytes(role, t):
    return pa.array([v.encode() for v in GOOD[role]], t)


def _ints(role, t):
    bits = t.bit_width
    values = [v if v < 1 << (bits - (1 if pa.types.is_signed_integer(t) else 0)) else v & 0x7F
              for v in NUMBERS[role]]
    return pa.array(values, t)


def _floats(role, t):
    import numpy as np

    return pa.array(np.array(NUMBERS[role], dtype={16: np.float16, 32: np.float32, 64: np.float64}[t.bit_width]), t)


# (type, how its cells are made, whether it is read)
TYPES = [
    (pa.string(), _text, True), (pa.large_string(), _text, True), (pa.string_view(), _text, True),
    (pa.binary(), _bytes, True), (pa.large_binary(), _bytes, True), (pa.binary_view(), _bytes, True),
    *[(t, _ints, True) for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64(),
                                 pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64())],
    *[(t, _floats, True) for t in (pa.float16(), pa.float32(), pa.float64())],
    (pa.bool_(), lambda r, t: pa.array([True, False]), True),
    (pa.null(), lambda r, t: pa.nulls(2), True),
    (pa.timestamp("s"), lambda r, t: pa.array([1, 2], t), True),
    (pa.timestamp("ms", "UTC"), lambda r, t: pa.array([1, 2], t), True),
    (pa.date32(), lambda r, t: pa.array([datetime.date(2024, 1, 1)] * 2, t), True),
    (pa.decimal128(6, 1), lambda r, t: pa.array([decimal.Decimal("1.5")] * 2, t), True),
    (pa.struct([("a", pa.int64())]), lambda r, t: pa.array([{"a": 1}, {"a": 2}], t), False),
    (pa.list_(pa.int64()), lambda r, t: pa.array([[1], [2]], t), False),
    (pa.large_list(pa.string()), lambda r, t: pa.array([["10de"], ["10de"]], t), False),
    (pa.list_(pa.int64(), 2), lambda r, t: pa.array([[1, 2], [3, 4]], t), False),
    (pa.map_(pa.string(), pa.int64()), lambda r, t: pa.array([[("a", 1)], [("b", 2)]], t), False),
    (pa.month_day_nano_interval(), lambda r, t: pa.array([pa.MonthDayNano([1, 2, 3])] * 2, t), False),
]
# a dictionary of each value type that Parquet writes
TYPES += [(pa.dictionary(pa.int32(), t), (lambda make: lambda r, d: make(r, d.value_type).dictionary_encode())(make),
           ok) for t, make, ok in TYPES
          if not pa.types.is_nested(t) and not pa.types.is_null(t) and not pa.types.is_interval(t)]
TYPES += [(pa.dictionary(pa.int8(), pa.list_(pa.int64())),
           lambda r, t: pa.DictionaryArray.from_arrays(pa.array([0, 0], pa.int8()), pa.array([[1]])), False)]

CASES = [pytest.param(role, t, make, ok, id=f"{role}-{t}") for role in ROLES for t, make, ok in TYPES]


def _table(role, t, make):
    cols = {k: pa.array(v) for k, v in GOOD.items()}
    cols[role] = make(role, t)
    return pa.table(cols)


def _check(get, role, t, ok, where):
    """Either a report per server, or the typed refusal naming where, the column and its type."""
    try:
        reports = get()
    except InputError as exc:
        assert not ok, f"{t} in {role} refused: {exc}"
        assert str(exc).startswith(f"{where}: column {role!r} holds "), exc
        return None
    assert ok, f"{t} in {role} read, expected a refusal"
    assert reports, "no reports"
    assert sum(r.rows for r in reports) == 2
    if role == "server" and t in (pa.binary(), pa.large_binary(), pa.binary_view(), pa.string_view()):
        assert [r.server for r in reports] == ["srv1", "srv2"]
    if role != "server":
        assert {r.server for r in reports} == {"srv1", "srv2"}
    return reports


@pytest.mark.parametrize("role, t, make, ok", CASES)
def test_every_type_in_process(role, t, make, ok):
    table = _table(role, t, make)
    _check(lambda: list(gpuclass.audit_table(table).reports()), role, t, ok, "table")
    _check(lambda: list(gpuclass.audit_table(table.to_batches()[0]).reports()), role, t, ok, "table")
    try:
        frame = gpuclass.audit_frame(table)
    except InputError as exc:
        assert not ok and str(exc).startswith(f"table: column {role!r} holds "), exc
    else:
        assert ok and sum(frame.column("rows").to_pylist()) == 2


@pytest.mark.parametrize("role, t, make, ok", CASES)
def test_every_type_through_parquet(role, t, make, ok, tmp_path):
    path = tmp_path / "x.parquet"
    try:
        pq.write_table(_table(role, t, make), path)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        pytest.skip(f"Parquet does not store {t}")
    _check(lambda: list(audit_paths([str(path)])), role, t, ok, str(path))


@pytest.mark.parametrize("role", ROLES)
def test_a_column_named_twice_is_refused_at_every_door(role, tmp_path):
    names = list(GOOD) + [role]
    table = pa.Table.from_arrays([pa.array(GOOD[n]) for n in names], names=names)
    for get, where in ((lambda: gpuclass.audit_table(table), "table"),
                       (lambda: gpuclass.audit_frame(table), "table"),
                       (lambda: gpuclass.audit_table(table.to_batches()[0]), "table")):
        with pytest.raises(InputError, match=f"^{where}: column '{role}' is named 2 times"):
            get()
    path = tmp_path / "twice.parquet"
    pq.write_table(table, path)
    csv = tmp_path / "twice.csv"
    csv.write_text(",".join(names) + "\n" + ",".join(GOOD[n][0] for n in names) + "\n")
    for p in (path, csv):
        with pytest.raises(InputError, match=f"column '{role}' is named 2 times"):
            list(audit_paths([str(p)]))
        with pytest.raises(InputError, match=str(p)):
            list(audit_paths([str(p)]))


@pytest.mark.parametrize("role, t, make, ok", CASES)
def test_every_type_through_pandas(role, t, make, ok):
    """The same columns as pandas holds them (lists as arrays of objects, view types as
    text): read, or the typed refusal."""
    try:
        frame = _table(role, t, make).to_pandas()
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, TypeError, NotImplementedError):
        pytest.skip(f"pandas does not hold {t}")
    try:
        reports = list(gpuclass.audit_table(frame).reports())
    except InputError as exc:
        assert not ok and str(exc).startswith(f"table: column {role!r} holds "), exc
    else:
        assert sum(r.rows for r in reports) == 2


def test_pandas_columns_mixing_text_and_numbers_are_read():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"server": ["a", b"b", 3], "vendor": ["10de", 0x10DE, b"10de"],
                          "device": [0x27B0, "27b0", 1.5], "class": ["0300", 0x0300, None]})
    reports = list(gpuclass.audit_table(frame).reports())
    assert [(r.server, r.slices) for r in reports] == [("a", 4), ("b", 4), ("3", 0)]
    assert reports[2].problems[0] == "row 3: device '1.5' is not a hex ID"
    out = gpuclass.audit_frame(frame)
    assert list(out["slices"]) == [4, 4, 0]


def test_a_binary_server_that_is_not_utf8_is_escaped_not_merged():
    table = pa.table({"server": pa.array([b"srv\xff", b"srv\xfe", b"srv\xff"]), "vendor": ["10de"] * 3,
                      "device": ["27b0"] * 3, "class": ["0300"] * 3})
    reports = list(gpuclass.audit_table(table).reports())
    assert [(r.server, r.rows) for r in reports] == [("srv\\xff", 2), ("srv\\xfe", 1)]


@pytest.mark.parametrize("fmt", ["json", "table", "csv"])
def test_the_cli_writes_a_binary_server_as_text(fmt, tmp_path, capsys):
    from gpuclass.cli.main import main

    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"server": pa.array([b"srv1", b"srv2"], pa.binary()), "vendor": ["10de"] * 2,
                             "device": ["27b0"] * 2, "class": ["0300"] * 2}), path)
    assert main(["audit", str(path), "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "srv1" in out and "b'srv1'" not in out
    if fmt == "json":
        assert [r["server"] for r in json.loads(out)["reports"]] == ["srv1", "srv2"]
    for ext in ("csv", "parquet"):
        target = tmp_path / f"out.{ext}"
        assert main(["audit", str(path), "-o", str(target)]) == 0
        servers = (pq.read_table(target).column("server").to_pylist() if ext == "parquet"
                   else [line.split(",")[2] for line in target.read_text().splitlines()[1:]])
        assert [str(s) for s in servers] == ["srv1", "srv2"]


def test_the_cli_refuses_a_list_column_in_one_line(tmp_path, capsys):
    from gpuclass.cli.main import main

    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"server": ["a"], "vendor": ["10de"], "device": pa.array([[0x27B0]]),
                             "class": ["0300"]}), path)
    assert main(["audit", str(path), "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: column 'device' holds list<element: int64>" in err
