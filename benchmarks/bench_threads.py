"""Threaded classification: the matcher kernel releases the GIL, so threads scale.

Group ``classify threads`` times the same 8M devices (2M with
GPUCLASS_BENCH_QUICK=1) classified by the compiled kernel:

- gpuclass: split into one chunk per CPU (at most 4), one thread each (the calling thread
  one of them), each writing its answers into its slice of three output arrays allocated
  once for the call (``match_devices(..., out=...)``): no copy joins them;
- baseline: the whole array in one call on one thread (which allocates its outputs too).

The ratio (one thread / threaded) is the speed-up threads buy; the goal is
1.3x on a 2-core machine (the kernel is partly memory-bound, so not 2x).  A
kernel that held the GIL would give about 1.0x.  The threaded result must
equal the serial one.

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
    n = 2_000_000 if os.environ.get("GPUCLASS_BENCH_QUICK") == "1" else 8_000_000
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
        core.match_devices(tables, *(a[at] for a in arrays), out=tuple(o[at] for o in out))
    others = [pool.submit(part, k) for k in range(1, WORKERS)]
    part(0)  # this thread takes a slice too, rather than wait for the pool's
    for f in others:
        f.result()
    return out


@pytest.mark.benchmark(group="classify threads")
def test_classify_threaded(benchmark, fleet, tables, pool):
    benchmark.extra_info.update(role="gpuclass", threads=WORKERS)
    got = benchmark(threaded, pool, tables, fleet)
    want = core.match_devices(tables, *fleet)
    for a, b in zip(got, want):
        assert np.array_equal(a, b)


@pytest.mark.benchmark(group="classify threads")
def test_classify_one_thread(benchmark, fleet, tables):
    benchmark.extra_info.update(role="baseline", goal=1.3, threads=1)
    benchmark(core.match_devices, tables, *fleet)
