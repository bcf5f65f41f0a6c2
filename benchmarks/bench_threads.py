"""Threaded classification: the matcher kernel releases the GIL and shares its rows out.

Group ``classify threads`` times the same 8M devices classified by the compiled kernel
(8M in CI's quick runs too, as ``classify 10M`` does: what threads share is memory
traffic, and until session 51 the outputs' new pages, which ``match_devices`` now keeps
from one call to the next; a call of 2M rows, about 2 ms with its inputs partly in cache,
shows it through the noise of a shared 2-vCPU machine only now and then: 1.08-1.48x in runs
where the 10M group read 1.27-1.72x for the same two calls):

- gpuclass: one call, ``match_devices(tables, ...)``, which shares the rows out to one
  thread per usable CPU (at most four, each a contiguous run of rows written into its part
  of the three output arrays: no copy joins them);
- baseline (goal 1.3x on a 2-core machine: the kernel is partly memory-bound, so not 2x):
  the same call with ``threads=1``, the whole array on the calling thread;
- baseline, no goal: the caller's own threads, one chunk per CPU, each calling
  ``match_devices(..., threads=1, out=...)`` on its slices, the way a caller shares out a
  kernel that releases the GIL; near the one call (both use every core), and near the
  one-thread call if the kernel held the GIL.

Every result must equal the one-thread one.

Run: ``python -m pytest benchmarks/bench_threads.py``.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from gpuclass._native import core
from gpuclass.classify import compile_policy

pytestmark = pytest.mark.skipif(not core.IS_COMPILED, reason="benchmarks measure the compiled core")

WORKERS = max(2, min(4, os.cpu_count() or 1))


@pytest.fixture(scope="module")
def fleet():
    n = 8_000_000
    rng = np.random.default_rng(2026)
    v = rng.choice(np.array([0x8086, 0x1022, 0x15B3, 0x10DE, 0x10DE], np.uint16), n)
    d = rng.choice(np.array([0x1B80, 0x27B0, 0x26B1, 0x2BB5, 0x27B2, 0x1E30, 0x22BC, 0x1533], np.uint16), n)
    sv = rng.choice(np.array([0x10DE, 0x1028, 0x17AA], np.uint16), n)
    sd = rng.integers(0, 0x10000, n, dtype=np.uint16)
    c = rng.choice(np.array([0x030000, 0x030200, 0x040300, 0x020000, 0x060400], np.uint32), n)
    return v, d, sv, sd, c


@pytest.fixture(scope="module")
def tables():
    return compile_policy().tables


@pytest.fixture(scope="module")
def pool():
    with ThreadPoolExecutor(WORKERS) as ex:
        yield ex


def threaded(pool, tables, arrays):
    n = len(arrays[0])
    bounds = np.linspace(0, n, WORKERS + 1).astype(int)
    out = (np.empty(n, np.uint8), np.empty(n, np.int16), np.empty(n, np.uint16))

    def part(k):
        at = slice(bounds[k], bounds[k + 1])
        core.match_devices(tables, *(a[at] for a in arrays), out=tuple(o[at] for o in out), threads=1)
    others = [pool.submit(part, k) for k in range(1, WORKERS)]
    part(0)  # this thread takes a slice too, rather than wait for the pool's
    for f in others:
        f.result()
    return out


@pytest.mark.benchmark(group="classify threads")
def test_classify_shared_out(benchmark, fleet, tables):
    benchmark.extra_info.update(role="gpuclass", threads=WORKERS)
    got = benchmark(core.match_devices, tables, *fleet)
    want = core.match_devices(tables, *fleet, threads=1)
    for a, b in zip(got, want):
        assert np.array_equal(a, b)


@pytest.mark.benchmark(group="classify threads")
def test_classify_callers_threads(benchmark, fleet, tables, pool):
    benchmark.extra_info.update(role="baseline", threads=WORKERS)
    got = benchmark(threaded, pool, tables, fleet)
    want = core.match_devices(tables, *fleet, threads=1)
    for a, b in zip(got, want):
        assert np.array_equal(a, b)


@pytest.mark.benchmark(group="classify threads")
def test_classify_one_thread(benchmark, fleet, tables):
    benchmark.extra_info.update(role="baseline", goal=1.3, threads=1)
    benchmark(core.match_devices, tables, *fleet, threads=1)
