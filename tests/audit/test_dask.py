"""gpuclass.dask: audits over partitions on worker processes equal the single-process answer.

A ``distributed.LocalCluster`` with two worker processes runs the audit; servers whose rows
span partitions (sorted input, unsorted input, Parquet files, empty partitions) are joined
by the rollup's rules, rows without a server name stay rows of their own, and problems are
joined in partition order, rows numbered in the whole table.  Hypothesis cuts random tables into random partitions (the
synchronous scheduler, in process); a core whose hashes all collide still gives the exact
answer.  The compiled policy and the database travel small and arrive as one cached, frozen
copy per process.  ``gather`` gives the frame ``compute()`` gives, put together in this
process instead of on a worker.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402
import gpuclass  # noqa: E402
import gpuclass.dask as gdask  # noqa: E402
from gpuclass.audit import audit_table  # noqa: E402
from gpuclass.db import default_database  # noqa: E402
from gpuclass.errors import InputError  # noqa: E402
from gpuclass.audit.results.columns import table_columns  # noqa: E402
from gpuclass.policy import compile_policy  # noqa: E402

CELLS = ["10de", "27b0", "22bc", "1b80", "1b06", "8086", "0300", "030000", "0403", "0302", "zz", "1e30",
         "2bb5", "26b1"]


def _frame(n: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    servers = np.sort(rng.integers(0, n // 4 + 1, n))
    cells = np.array(CELLS, dtype=object)
    df = pd.DataFrame({"server": [f"srv{s:05d}" for s in servers],
                       "vendor": cells[rng.integers(0, len(CELLS), n)],
                       "device": cells[rng.integers(0, len(CELLS), n)],
                       "subvendor": cells[rng.integers(0, len(CELLS), n)],
                       "subdevice": cells[rng.integers(0, len(CELLS), n)],
                       "class": cells[rng.integers(0, len(CELLS), n)]})
    df.loc[rng.random(n) < 0.02, "server"] = None
    return df


def _comparable(frame: pd.DataFrame) -> pd.DataFrame:
    """Named servers by name, nameless rows by row: the answer, whatever the order (row
    numbers and problems count from the whole table's start, in every door)."""
    frame = frame.copy()
    frame["problems"] = [p if isinstance(p, str) else None for p in frame["problems"]]
    named = frame[frame["server"].notna()].sort_values("server").reset_index(drop=True)
    nameless = frame[frame["server"].isna()].drop(columns=["server"])  # None or NA, by dtype
    return named, nameless.sort_values("row").reset_index(drop=True)


def _cut(df: pd.DataFrame, bounds) -> dd.DataFrame:
    """``df`` as the partitions between ``bounds`` (a bound repeated: an empty partition)."""
    pieces = [df.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    return dd.from_delayed([dask.delayed(p) for p in pieces], meta=df.iloc[:0], verify_meta=False)


def _equal_to_local(got: pd.DataFrame, df: pd.DataFrame, **kw) -> None:
    local = audit_table(df, **kw).table.to_pandas()
    for a, b in zip(_comparable(got), _comparable(local)):
        pd.testing.assert_frame_equal(a, b, check_dtype=False)
    assert got["server"].dropna().is_unique


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=50)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.mark.parametrize("npartitions", [1, 3, 7])
def test_two_workers_equal_one_process(client, npartitions):
    df = _frame(4000)
    local = audit_table(df).table.to_pandas()
    got = gdask.audit(dd.from_pandas(df, npartitions=npartitions)).compute()
    assert list(got.columns) == [c for c in local.columns if c != "first_row"]
    for a, b in zip(_comparable(got), _comparable(local)):
        pd.testing.assert_frame_equal(a, b, check_dtype=False)
    assert got["rows"].sum() == len(df)


@pytest.mark.parametrize("shuffled", [False, True])
def test_a_parquet_dataset_path(client, tmp_path, shuffled):
    df = _frame(3000, seed=2)
    if shuffled:  # a server's rows in any of the files
        df = df.sample(frac=1, random_state=4).reset_index(drop=True)
    bounds = np.linspace(0, len(df), 5).astype(int)
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):  # a server may straddle two files
        df.iloc[lo:hi].to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    _equal_to_local(gdask.audit(str(tmp_path)).compute(), df)


def test_the_workers_run_the_same_core_as_this_process(client):
    """A worker that imported gpuclass from elsewhere (a source tree on its path, without
    the built core) would run the twin silently, many times slower."""
    import gpuclass._native as native

    def core():
        import gpuclass
        import gpuclass._native as there

        return there.core.IS_COMPILED, os.path.dirname(gpuclass.__file__)

    here = (native.core.IS_COMPILED, os.path.dirname(gpuclass.__file__))
    assert set(client.run(core).values()) == {here}


def test_the_policy_and_database_travel_small_and_arrive_frozen(client):
    compiled = compile_policy()
    assert len(pickle.dumps(compiled)) < 8 * 1024
    assert pickle.loads(pickle.dumps(compiled)) is compiled  # one copy per process

    def on_worker(p):
        from gpuclass._native.contract.match import is_frozen
        from gpuclass.policy import compile_policy as local

        return is_frozen(p.tables), p is local(), p.card_ids

    for frozen, same, ids in client.run(on_worker, compiled).values():
        assert frozen and same and ids == compiled.card_ids
    db = default_database()
    assert len(pickle.dumps(db)) < 1024  # a path and a digest: the worker loads its own cache
    names = client.run(lambda d: d.device_name(0x10DE, 0x27B0), db)
    assert set(names.values()) == {"AD104GL [RTX 4000 SFF Ada Generation]"}


def test_a_policy_of_a_file_reaches_the_workers(client, tmp_path):
    from gpuclass.policy import DEFAULT_POLICY, Policy

    data = {**DEFAULT_POLICY, "slices_per_card": 2}
    path = tmp_path / "two.json"
    Policy.from_data(data).save(path)
    df = _frame(1000, seed=3)
    got = gdask.audit(dd.from_pandas(df, npartitions=3), policy=str(path)).compute()
    local = audit_table(df, policy=str(path)).table.to_pandas()
    assert got["slices"].sum() == local["slices"].sum() == 2 * local["supported_cards"].sum()


def test_problems_are_joined_in_partition_order(client):
    df = pd.DataFrame([("s", "10de", "27b0", "0300"), ("s", "zz", "27b0", "0300"),  # partition 0
                       ("t", "10de", "1b80", "0300"),                                # partition 1
                       ("s", "10de", "q", "0300"), ("s", "10de", "27b0", "0300")],   # partition 2
                      columns=["server", "vendor", "device", "class"])
    got = gdask.audit(_cut(df, [0, 2, 3, 5])).compute().set_index("server")
    assert got.loc["s", "problems"] == ("row 2: vendor 'zz' is not a hex ID; "
                                        "row 4: device 'q' is not a hex ID")  # rows of the whole table
    assert got.loc["s", ["supported_cards", "slices", "invalid_rows", "rows", "row"]].tolist() == [2, 8, 2, 4, 1]
    assert pd.isna(got.loc["t", "problems"]) and got.loc["t", "cards.gtx-1080"] == 1
    assert got.loc["t", "row"] == 3


@pytest.mark.parametrize("npartitions,split_out", [(13, None), (13, 1), (40, 3)])
def test_unsorted_input_spread_over_many_partitions(client, npartitions, split_out):
    df = _frame(6000, seed=7).sample(frac=1, random_state=2).reset_index(drop=True)
    ddf = dd.from_pandas(df, npartitions=npartitions, sort=False)
    spread = pd.Series(np.arange(len(df)) * npartitions // len(df)).groupby(df["server"]).nunique()
    assert (spread >= 2).mean() > 0.8 and spread.max() >= 5  # most servers span partitions
    got = gdask.audit(ddf, split_out=split_out).compute()
    _equal_to_local(got, df)


def test_nameless_rows_stay_rows_of_their_own(client):
    df = _frame(2000, seed=8).sample(frac=1, random_state=3).reset_index(drop=True)
    df.loc[df.index % 7 == 3, "server"] = ""  # blank names are no names either
    got = gdask.audit(dd.from_pandas(df, npartitions=6, sort=False)).compute()
    nameless = got[got["server"].isna()]
    assert len(nameless) == int(df["server"].isna().sum() + (df["server"] == "").sum())
    assert (nameless["rows"] == 1).all()
    assert nameless["problems"].str.contains("row has no server name").all()
    _equal_to_local(got, df)


def test_empty_partitions(client):
    df = _frame(2000, seed=5).sample(frac=1, random_state=1).reset_index(drop=True)
    n = len(df)
    _equal_to_local(gdask.audit(_cut(df, [0, 0, 500, 500, 500, 1400, n, n])).compute(), df)
    empty = gdask.audit(_cut(df.iloc[:0], [0, 0, 0]))
    got = empty.compute()
    assert len(got) == 0 and list(got.columns) == list(empty.columns)
    assert got.dtypes.equals(empty.dtypes)


def test_the_columns_and_dtypes_are_those_declared(client):
    ddf = dd.from_pandas(_frame(1000), npartitions=4)
    lazy = gdask.audit(ddf)
    got = lazy.compute()
    assert list(got.columns) == table_columns(compile_policy().card_ids)
    assert got.dtypes.equals(lazy.dtypes)
    assert got["server"].dtype == ddf.dtypes["server"] and got["gpu_capable"].dtype == np.bool_
    counts = got.columns[2:-2]  # as audit_table has them: int32 counts, int64 rows and row
    local = audit_table(_frame(1000)).table.to_pandas()
    assert got.dtypes[counts].equals(local.dtypes[counts])
    assert got["rows"].dtype == np.int64 and got["slices"].dtype == np.int32


@pytest.mark.parametrize("n", [10, 60_000])
def test_a_partitions_frame_is_its_users_to_change(n):
    """Every column of partition_audit's frame takes a write (none is a read-only view of
    Arrow's memory), small frames and those whose arrays come from Arrow's pool alike."""
    frame = gdask.partition_audit(_frame(n), compile_policy())
    want = frame.copy(deep=True)
    for c in frame.columns:
        frame.loc[0, c] = "changed" if c in ("server", "problems") else want.loc[1, c]
    assert frame.loc[0, "rows"] == want.loc[1, "rows"] and frame.loc[0, "slices"] == want.loc[1, "slices"]
    assert frame.loc[0, "server"] == frame.loc[0, "problems"] == "changed"
    assert frame.loc[1:].equals(want.loc[1:]) and frame.dtypes.equals(want.dtypes)


def test_integer_server_names():
    rng = np.random.default_rng(9)
    df = _frame(3000, seed=9).assign(server=rng.integers(0, 400, 3000))
    got = gdask.audit(dd.from_pandas(df, npartitions=5, sort=False)).compute(scheduler="sync")
    assert got["server"].dtype == np.int64
    _equal_to_local(got, df)


def test_every_name_hashing_alike_gives_the_exact_answer(monkeypatch):
    """Hashes only choose which rows go through a merge; the merge compares the names."""
    import types

    colliding = types.SimpleNamespace(key_hashes=lambda column, seed: np.full(column.n, 7, np.uint64))
    monkeypatch.setattr(gdask, "core", colliding)
    df = _frame(3000, seed=4)
    got = gdask.audit(dd.from_pandas(df, npartitions=5), split_out=3).compute(scheduler="sync")
    _equal_to_local(got, df)


@pytest.mark.parametrize("npartitions,split_out,merges", [(1, None, 1), (8, None, 1), (16, None, 1),
                                                         (17, None, 2), (40, None, 3), (8, 5, 5)])
def test_the_result_is_the_audited_partitions_then_the_merged_ones(npartitions, split_out, merges):
    """One merge task for every 16 partitions unless told, and the result's partitions are
    the graph's own tasks: nothing runs between them and the audit (Dask's ``from_delayed``
    added two tasks per partition)."""
    df = _frame(40 * npartitions, seed=npartitions).sample(frac=1, random_state=5).reset_index(drop=True)
    got = gdask.audit(dd.from_pandas(df, npartitions=npartitions, sort=False), split_out=split_out)
    assert got.npartitions == npartitions + merges
    graph = dict(got.__dask_graph__())
    own = [k for k in graph if str(k[0]).startswith("gpuclass-audit-") and isinstance(k[1], str)]
    tree = sum(1 for k in own if k[1] in ("combine", "shared"))
    assert len(own) == npartitions * (merges + 4) + tree + merges
    # besides: the input's own tasks and one alias naming each of the result's partitions
    assert len(graph) == npartitions + len(own) + got.npartitions
    _equal_to_local(got.compute(scheduler="sync"), df)


def test_the_result_is_a_dask_dataframe_to_work_on(client, tmp_path):
    df = _frame(3000, seed=9).sample(frac=1, random_state=6).reset_index(drop=True)
    got = gdask.audit(dd.from_pandas(df, npartitions=5, sort=False))
    kept = got.persist()
    _equal_to_local(kept.compute(), df)
    assert kept["rows"].sum().compute() == len(df)
    assert int((got[got["supported_cards"] > 0]["slices"]).sum().compute()) == \
        int(audit_table(df).table["slices"].to_numpy().sum())
    got.to_parquet(tmp_path / "out", write_index=False)
    _equal_to_local(pd.read_parquet(tmp_path / "out"), df)


@pytest.mark.parametrize("bad", [0, -2, 2.5, "2"])
def test_split_out_is_a_whole_number(bad):
    with pytest.raises(InputError, match="split_out"):
        gdask.audit(dd.from_pandas(_frame(100), npartitions=2), split_out=bad)


ROWS = st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "", None]), st.sampled_from(CELLS),
                          st.sampled_from(CELLS), st.sampled_from(CELLS)), max_size=40)


@settings(max_examples=int(os.environ.get("GPUCLASS_MUTATIONS", "60")), deadline=None)
@given(rows=ROWS, cuts=st.lists(st.integers(0, 40), max_size=6), split_out=st.integers(1, 4))
def test_any_table_cut_anywhere_equals_one_process(rows, cuts, split_out):
    df = pd.DataFrame(rows, columns=["server", "vendor", "device", "class"], dtype=object)
    bounds = [0, *sorted(min(c, len(df)) for c in cuts), len(df)]
    servers = gdask.audit(_cut(df, bounds), split_out=split_out)
    got = servers.compute(scheduler="sync")
    _equal_to_local(got, df)  # problems and first rows included: numbered in the whole table
    with dask.config.set(scheduler="sync"):
        pd.testing.assert_frame_equal(gdask.gather(servers), got)


# -- gather: the partitions put together here ----------------------------------------------


def _ran(client, fn) -> list[str]:
    """The names of the tasks the cluster ran for ``fn()``."""
    with distributed.get_task_stream(client) as ts:
        fn()
    return [str(t["key"][0] if isinstance(t["key"], tuple) else t["key"]) for t in ts.data]


@pytest.mark.parametrize("bounds", [[0, 4000], [0, 900, 2100, 4000], [0, 0, 1500, 1500, 4000, 4000],
                                    [0, 0, 0]])
def test_gather_gives_the_frame_compute_gives(client, bounds):
    """Index, dtypes and order included, with empty partitions (which compute() leaves out
    when it puts the others together) and with nothing but empty ones."""
    df = _frame(4000, seed=11).sample(frac=1, random_state=2).reset_index(drop=True)
    servers = gdask.audit(_cut(df.iloc[:bounds[-1]], bounds))
    got = gdask.gather(servers, client)
    pd.testing.assert_frame_equal(got, servers.compute())
    if bounds[-1]:
        _equal_to_local(got, df)


def test_gather_puts_the_partitions_together_here_not_on_a_worker(client):
    servers = gdask.audit(dd.from_pandas(_frame(3000, seed=12), npartitions=4))
    computed = _ran(client, servers.compute)
    gathered = _ran(client, lambda: gdask.gather(servers, client))
    # compute() runs one task more: the partitions put together on a worker
    assert len(computed) == len(gathered) + 1
    assert any(k.startswith("repartitiontofewer") for k in computed)
    assert not any(k.startswith("repartitiontofewer") for k in gathered)


def test_gather_uses_the_default_client_or_the_scheduler_configured(client):
    """With no client given: the default client (the module's, made with the defaults),
    or a scheduler in this process where ``dask.config`` names one."""
    servers = gdask.audit(dd.from_pandas(_frame(2000, seed=13), npartitions=3))
    want = servers.compute()
    assert distributed.default_client() is client
    assert _ran(client, lambda: pd.testing.assert_frame_equal(gdask.gather(servers), want))
    for scheduler in ("sync", "threads"):
        with dask.config.set(scheduler=scheduler):
            assert not _ran(client, lambda: pd.testing.assert_frame_equal(gdask.gather(servers), want))


NOT_DASK_FRAMES = [lambda: _frame(10), lambda: dask.delayed(_frame)(10), lambda: 3]


@pytest.mark.parametrize("bad", [*NOT_DASK_FRAMES, lambda: "servers/"])
def test_gather_takes_a_dask_dataframe(bad):
    with pytest.raises(InputError, match="gather: expected a dask DataFrame, got"):
        gdask.gather(bad())


@pytest.mark.parametrize("bad", NOT_DASK_FRAMES)
def test_audit_takes_a_dask_dataframe_or_a_path(bad):
    """A pandas frame, or a Delayed (which answers every attribute), is refused by name."""
    with pytest.raises(InputError, match="audit: expected a dask DataFrame or a Parquet path, got"):
        gdask.audit(bad())
