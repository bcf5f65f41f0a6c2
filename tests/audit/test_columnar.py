"""audit_table: device tables audited a column at a time, whatever their shape and order."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from audit_samples import DEVICE_ROWS

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

from gpuclass.audit import audit_device_rows, audit_table  # noqa: E402
from gpuclass.audit.pool import pooled_empty  # noqa: E402
from gpuclass.audit.results.columns import int32_columns, table_columns  # noqa: E402
from gpuclass.errors import InputError  # noqa: E402
from gpuclass.policy import compile_policy  # noqa: E402

FIELDS = ("server", "vendor", "device", "subvendor", "subdevice", "class")
# the shared device rows up to the bad class: good, mixed and bad servers, no nameless rows
ROWS = [r for r in DEVICE_ROWS[:12] if r[5] != "03"]


def _table(rows, **types):
    return pa.table({f: pa.array([r[i] for r in rows], types.get(f, pa.string()))
                     for i, f in enumerate(FIELDS)})


def _answers(reports):
    return [(r.server, r.supported_cards, r.slices, r.unsupported_gpus, sorted(r.unsupported), r.rows,
             sorted((c["card"], c["count"]) for c in r.cards), r.problems, r.gpu_capable, r.reason)
            for r in reports]


def test_columns_and_answers(core):
    result = audit_table(_table(ROWS), kernel=core)
    assert result.table.column_names == table_columns(compile_policy().card_ids)
    assert _answers(result) == _answers(audit_device_rows(ROWS))
    t = result.table.to_pydict()
    assert t["server"] == ["gex44-1", "gex130-1", "mixed", "bad"]
    assert t["cards.rtx-6000-ada"] == [0, 2, 0, 0] and t["slices"] == [4, 8, 4, 0]
    assert t["invalid_rows"] == [0, 0, 0, 4] and t["rows"] == [3, 2, 2, 4] and t["row"] == [1, 4, 6, 8]
    assert t["problems"][3] == ("row 8: vendor 'zz' is not a hex ID; row 9: device missing; "
                                "row 10: subvendor and subdevice go together; "
                                "row 11: class 'xyz' is not a hex ID")
    assert list(result)[2].unsupported == ["1x TU102GL [Quadro RTX 6000/8000] (10de:1e30)"]


@pytest.mark.parametrize("seed", range(40))
def test_random_tables_answer_as_their_rows_sorted_by_server(seed):
    """Unsorted tables too: a server's rows anywhere in the table make one row, the answer
    the same table sorted by server gives."""
    rng = random.Random(seed)
    cells = ["10de", "27b0", "22bc", "1b80", "1b06", "8086", "0300", "030000", "0403", "0302", "",
             None, " 10DE ", "[10de]", "0x2bb5", "zz", "1e30", "2bb1", "26b1", "0c0330"]
    names = [f"s{k}" for k in range(rng.randint(1, 6))]
    rows = [(rng.choice(names), *(rng.choice(cells) for _ in range(5))) for _ in range(rng.randint(1, 80))]
    got = audit_table(_table(rows))
    by_server = sorted(range(len(rows)), key=lambda i: rows[i][0])
    want = list(audit_table(_table([rows[i] for i in by_server])))

    def unnumbered(reports):  # row numbers differ once sorted
        out = _answers(reports)
        return sorted((*a[:7], sorted(re.sub(r"^row [0-9]+: ", "", p) for p in a[7]), *a[8:-1])
                      for a in out)
    assert unnumbered(got) == unnumbered(want)
    first = [min(i for i in range(len(rows)) if rows[i][0] == s) for s in got.table["server"].to_pylist()]
    assert first == sorted(first)  # servers in order of first appearance


@pytest.mark.parametrize("seed", range(20))
def test_dictionary_and_categorical_columns_answer_as_their_values(seed, core):
    """Arrow dictionaries (Parquet read with read_dictionary) and pandas categoricals: each
    distinct value parsed once, the same table and reports as the plain columns give."""
    rng = random.Random(seed)
    cells = ["10de", "27b0", "22bc", "1b80", "8086", "0300", "030000", "0403", "", None, " 10DE ",
             "zz", "1e30", "2bb5"]
    names = [f"s{k}" for k in range(rng.randint(1, 6))] + [None, " "]
    rows = [(rng.choice(names), *(rng.choice(cells) for _ in range(5))) for _ in range(rng.randint(1, 80))]
    plain = audit_table(_table(rows), kernel=core)
    encoded = [f for f in FIELDS if rng.random() < 0.6]
    t = _table(rows)
    t = pa.table({f: t[f].dictionary_encode() if f in encoded else t[f] for f in FIELDS})
    got = audit_table(t, kernel=core)
    assert got.table.equals(plain.table)
    assert _answers(got) == _answers(plain)
    frame = t.to_pandas()  # dictionaries become categoricals
    assert all(isinstance(frame[f].dtype, pd.CategoricalDtype) for f in encoded)
    from_pandas = audit_table(frame, kernel=core).table  # server names: pandas' large strings
    assert from_pandas.cast(plain.table.schema).equals(plain.table)


def test_pandas_integers_and_record_batches():
    df = pd.DataFrame({"host": ["a", "a", "b"], "vendor_id": [0x10DE, 0x10DE, 0x8086],
                       "device_id": [0x27B0, 0x22BC, 0x1533], "class_code": [0x0300, 0x0403, 0x0200],
                       "subsystem_vendor": [0x10DE, None, None], "subsystem_device": [0x16FA, None, None]})
    t = audit_table(df).table.to_pydict()
    assert t["server"] == ["a", "b"] and t["cards.rtx-4000-sff-ada"] == [1, 0] and t["problems"] == [None, None]
    batches = pa.Table.from_pandas(df, preserve_index=False).to_batches(max_chunksize=1)
    split = audit_table(pa.Table.from_batches(batches)).table
    assert split.equals(audit_table(df).table)  # a server across batches is one row


def test_a_server_split_anywhere_is_merged_by_the_rollup_rules():
    rows = [("a", "10de", "27b0", "", "", "0300"), ("b", "10de", "1b80", "", "", "0300"),
            ("a", "10de", "2bb5", "", "", "0302"), ("a", "10de", "1e30", "", "", "0300")]
    reports = list(audit_table(_table(rows)))
    a = reports[0]
    assert (a.server, a.supported_cards, a.slices, a.unsupported_gpus, a.rows) == ("a", 2, 8, 1, 3)
    assert "mixed" in a.reason and sorted(c["card"] for c in a.cards) == [
        "rtx-4000-sff-ada", "rtx-pro-6000-blackwell-server"]


def test_missing_columns_and_wrong_inputs_are_typed_errors():
    with pytest.raises(InputError, match="lacks columns"):
        audit_table(pa.table({"server": ["a"], "vendor": ["10de"]}))
    with pytest.raises(InputError, match="expected a pyarrow Table"):
        audit_table([("a", "10de")])


def test_an_empty_table_has_no_servers():
    empty = audit_table(_table([]))
    assert len(empty) == 0 and empty.table.column_names == table_columns(compile_policy().card_ids)
    assert list(empty) == []


def test_nulls_floats_and_dictionaries_are_read_as_users_have_them():
    t = pa.table({"server": pa.array(["a", "a", None]).dictionary_encode(),
                  "vendor": pa.array([4318.0, np.nan, 4318.0]), "device": pa.array([0x27B0, 0x27B0, 1.5]),
                  "class": pa.array(["0300"] * 3)})
    rows = audit_table(t).table.to_pydict()
    assert rows["server"] == ["a", None] and rows["supported_cards"] == [1, 0]
    assert rows["problems"] == ["row 2: vendor missing", "row has no server name; row 3: device '1.5' is not a hex ID"]


@pytest.mark.parametrize("unsorted", [False, True])
def test_the_int32_columns_are_one_block_shared_with_the_table(unsorted):
    """The counts are written once: the Arrow columns and int32_block() are one memory,
    read-only unless a caller done with the table takes it over."""
    rows = ROWS[::-1] if unsorted else ROWS
    result = audit_table(_table(rows))
    names = int32_columns(result.compiled.card_ids)
    block = result.int32_block()
    assert block.shape == (len(names), len(result)) and block.dtype == np.int32
    assert not block.flags.writeable
    for name, values in zip(names, block):
        column = result.table[name].to_numpy()
        assert np.shares_memory(column, block) and column.tolist() == values.tolist()
    with pytest.raises(ValueError):
        block[0, 0] = 1
    mine = result.int32_block(writeable=True)
    mine[1] += 100  # taken over: the table's column shows it
    assert result.table["slices"].to_numpy().tolist() == (block[1]).tolist()
    assert min(block[1]) >= 100


@pytest.mark.parametrize("shape,dtype", [(0, np.int64), (10, np.int32), ((3, 70_000), np.int32),
                                         (200_000, np.int64), ((11, 0), np.int32)])
def test_pooled_arrays_are_plain_writeable_arrays(shape, dtype):
    """pooled_empty: the shape and dtype asked for, C order, writeable; a large one is held
    by Arrow's pool while it lives and given back with it."""
    before = pa.total_allocated_bytes()
    a = pooled_empty(shape, dtype)
    want = shape if isinstance(shape, tuple) else (shape,)
    assert a.shape == want and a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable
    a[...] = 7
    assert (a == 7).all()
    grew = pa.total_allocated_bytes() - before
    assert grew >= a.nbytes if a.nbytes >= 1 << 16 else grew == 0
    del a
    assert pa.total_allocated_bytes() == before


def test_a_large_audits_run_level_arrays_live_in_arrows_pool():
    """The int32 block and the rows column of a large audit come from Arrow's pool (a
    process that returns freed memory to the system at once takes them without fresh
    pages, call after call), and go back to it with the result."""
    n = 60_000
    t = pa.table({"server": [f"s{i:06d}" for i in range(n)], "vendor": ["10de"] * n,
                  "device": ["27b0"] * n, "class": ["0300"] * n})
    before = pa.total_allocated_bytes()
    result = audit_table(t)
    block = result.int32_block()
    assert pa.total_allocated_bytes() - before >= block.nbytes + 8 * n
    assert result.table["slices"].to_pylist() == [4] * n and result.table["rows"].to_pylist() == [1] * n
    del result, block
    assert pa.total_allocated_bytes() <= before


@pytest.mark.parametrize("seed", range(25))
def test_flat_rows_made_by_columns_equal_each_reports_flat_row(seed):
    """AuditTable.flat() (columns at a time, each text made once per distinct outcome)
    writes what ServerReport.to_flat() writes (a report at a time)."""
    rng = random.Random(seed)
    cells = ["10de", "27b0", "22bc", "1b80", "1b06", "2bb5", "26b1", "1e30", "1e36", "1b02", "1002",
             "731f", "0300", "030000", "0403", "0302", "", None, "zz", "8086", "1572", "0200"]
    names = [f"s{k}" for k in range(rng.randint(1, 12))] + [None, "", "  "]
    rows = [(rng.choice(names), *(rng.choice(cells) for _ in range(5))) for _ in range(rng.randint(1, 150))]
    result = audit_table(_table(rows))
    assert result.flat().to_pylist() == [r.to_flat(result.compiled.card_ids) for r in result]


@pytest.mark.parametrize("seed", range(12))
def test_audit_frame_of_a_device_table_equals_the_reports(seed):
    """audit_frame's rows of a device table are the flat rows of its reports, pandas and
    Arrow alike (a blank name is no name), and a pandas column mixing integers with hex
    text is read cell by cell."""
    from gpuclass.audit import audit_frame

    rng = random.Random(seed)
    cells = ["10de", "27b0", "22bc", "2bb5", "1e30", "0300", "030000", "0403", "", None, "zz", "8086"]
    names = [f"s{k}" for k in range(rng.randint(1, 8))] + [None, " "]
    rows = [(rng.choice(names), *(rng.choice(cells) for _ in range(5))) for _ in range(rng.randint(1, 120))]
    cards = [c["id"] for c in compile_policy().cards]
    want = [r.to_flat(cards) for r in audit_device_rows(rows, source="frame")]
    for frame in (_table(rows), _table(rows).to_pandas()):
        out = audit_frame(frame)
        got = out.to_pylist() if isinstance(out, pa.Table) else out.to_dict("records")
        got = [{k: (None if v is not None and v != v else v) for k, v in r.items()} for r in got]  # NaN: none
        assert [r["server"] for r in got] == [w["server"] for w in want]
        assert got == want
        assert all(sum(r[f"cards.{c}"] for c in cards) == r["supported_cards"] for r in got)
    mixed = pd.DataFrame({"server": ["a", "a", "b"], "vendor": [0x10DE, "10de", "10de"],
                          "device": ["27b0", 0x2BB5, "1e30"], "class": ["0300", "0302", 0x030000]})
    out = audit_frame(mixed)
    assert out["slices"].tolist() == [8, 0] and out["unsupported_gpus"].tolist() == [0, 1]
