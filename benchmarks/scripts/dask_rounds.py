"""Interleaved rounds of ``gpuclass.dask.audit`` on a cluster of one worker process and one of
two: each round times the audit brought into this process by ``compute()`` ("computed")
and by ``gpuclass.dask.gather`` ("gathered", where the gpuclass installed has it), and
written by the workers (``to_parquet``), on each cluster in turn, so the machine's load
falls on all of them alike.

The clients connect to the workers (``direct_to_workers=True``), as in
``benchmarks/bench_dask.py``.  It uses only the public API, so the same command run with an
older gpuclass installed gives that version's figures (BENCHMARKS.md, "Dask's graph").

Usage: python dask_rounds.py DATASET [ROUNDS]   (a Parquet dataset: a directory of files)
Prints each figure's median and rounds (seconds), and two workers against one.
"""

import statistics
import sys
import tempfile
import time


def _idle(client) -> None:
    """Wait until the scheduler has let go of the last round's tasks."""
    while client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)):
        time.sleep(0.01)


def _round(client, path: str, mode: str, out: str) -> float:
    import dask.dataframe as dd

    import gpuclass.dask as gdask

    _idle(client)
    start = time.perf_counter()
    result = gdask.audit(dd.read_parquet(path))
    if mode == "computed":
        assert client.compute(result).result()["rows"].sum() > 0
    elif mode == "gathered":
        assert gdask.gather(result, client)["rows"].sum() > 0
    else:
        client.compute(result.to_parquet(out, write_index=False, compute=False)).result()
    return time.perf_counter() - start


def main(path: str, rounds: int) -> None:
    import distributed

    import gpuclass.dask as gdask

    clusters = {}
    for n in (1, 2):
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=":0", silence_logs=50)
        clusters[n] = (cluster, distributed.Client(cluster, set_as_default=False, direct_to_workers=True))
    modes = ("computed", "gathered", "written") if hasattr(gdask, "gather") else ("computed", "written")
    times: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        written = 0
        for r in range(rounds + 1):  # the first round warms the workers up, and is not kept
            for n in (1, 2):
                for mode in modes:
                    written += 1
                    t = _round(clusters[n][1], path, mode, f"{tmp}/{written}")
                    if r:
                        times.setdefault((mode, n), []).append(t)
    for (mode, n), ts in sorted(times.items()):
        print(f"{mode:8s} {n} worker(s): median {statistics.median(ts):.3f} s  rounds "
              f"{' '.join(f'{t:.2f}' for t in ts)}")
    for mode in modes:
        ratio = statistics.median(times[(mode, 1)]) / statistics.median(times[(mode, 2)])
        print(f"{mode:8s} two workers against one: {ratio:.2f}x")
    for cluster, client in clusters.values():
        client.close()
        cluster.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
