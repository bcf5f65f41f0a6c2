"""gpuclass.dask: audits over partitions on worker processes equal the single-process answer.

A ``distributed.LocalCluster`` with two worker processes runs the audit; servers whose rows
span partitions are joined by the rollup's rules.  The compiled policy and the database
travel small and arrive as one cached, frozen copy per process.
"""

from __future__ import annotations

import os
import pickle
import re

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import gpuclass  # noqa: E402
import gpuclass.dask as gdask  # noqa: E402
from gpuclass.audit.columnar import audit_table  # noqa: E402
from gpuclass.db import default_database  # noqa: E402
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
    frame = frame.drop(columns=[c for c in ("first_row",) if c in frame]).copy()
    frame["problems"] = [None if not isinstance(p, str) else
                         "; ".join(sorted(re.sub(r"^(partition [0-9]+ )?row [0-9]+: ", "", x)
                                          for x in p.split("; "))) for p in frame["problems"]]
    named = frame[frame["server"].notna()].sort_values("server").reset_index(drop=True)
    nameless = frame[frame["server"].isna()]
    return named, nameless.sort_values(list(nameless.columns[1:-1])).reset_index(drop=True)


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


def test_a_parquet_dataset_path(client, tmp_path):
    df = _frame(3000, seed=2)
    bounds = np.linspace(0, len(df), 5).astype(int)
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):  # a server may straddle two files
        df.iloc[lo:hi].to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    got = gdask.audit(str(tmp_path)).compute()
    local = audit_table(df).table.to_pandas()
    for a, b in zip(_comparable(got), _comparable(local)):
        pd.testing.assert_frame_equal(a, b, check_dtype=False)


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
