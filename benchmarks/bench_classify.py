"""The allowlist matcher and the per-node rollup on 10 million devices.

Groups (each times gpuclass and its baselines in the same run):

- ``classify 10M``: the compiled kernel vs numpy-only, tuned as a numpy user would
  (class and vendor masks first, then the seven allowlisted IDs compared on those
  candidate rows only) vs ``np.copy`` of the five input arrays, the memory-bandwidth
  floor (goal: within 2x, i.e. a ratio >= 0.5).
- ``classify 10M public API``: ``gpuclass.classify`` (policy lookup, argument checks,
  the result object) vs the kernel alone (goal: within 1.2x, a ratio >= 0.83).
- ``classify 1M pure Python``: the kernel vs a dict loop over Python ints on
  the same 1 000 000 devices (a 10M-row dict loop takes too long; the rows are
  a prefix of the 10M set, and 1M rows are enough for the kernel's fixed
  per-call cost, a few microseconds, not to count).
- ``rollup 10M -> 1M``: per-node totals vs ``np.bincount`` per aggregate.

The numpy baseline implements only device-level rules (enough for the default
policy); the kernel also applies subsystem and deny rules, VFs and flags.

Run: ``python -m pytest benchmarks/bench_classify.py`` (GPUCLASS_BENCH_QUICK=1: the pure-Python
comparison on 100,000 rows instead of 1M).
"""

from __future__ import annotations


import numpy as np
import pytest

from gpuclass import constants as C
from gpuclass._native import core
from gpuclass.classify import compile_policy

pytestmark = pytest.mark.skipif(not core.IS_COMPILED, reason="benchmarks measure the compiled core")

NV = 0x10DE
ALLOWED = np.array([0x1B80, 0x1B06, 0x27B0, 0x26B1, 0x2BB1, 0x2BB4, 0x2BB5], dtype=np.uint32)


@pytest.fixture(scope="module")
def rows():
    # 10M rows even in CI's quick mode: the copy floor is a memory-speed goal, and
    # 1M rows fit in cache, which makes the copy unrealistically fast.
    return 10_000_000


@pytest.fixture(scope="module")
def fleet(rows):
    """A fleet-like mix: most functions are not GPUs; NVIDIA GPUs, audio and USB, a few traps."""
    rng = np.random.default_rng(2026)
    vendors = np.array([0x8086, 0x8086, 0x8086, 0x1022, 0x15B3, 0x14E4, 0x1A03, 0x144D, NV, NV], np.uint16)
    v = rng.choice(vendors, rows)
    devices = np.array([0x1B80, 0x1B06, 0x27B0, 0x26B1, 0x2BB5, 0x27B2, 0x2BB2, 0x1E30, 0x22BC, 0x1533,
                        0x2000, 0xA0C8, 0x1017], np.uint16)
    d = rng.choice(devices, rows)
    sv = rng.choice(np.array([NV, 0x1028, 0x15D9, 0x17AA], np.uint16), rows)
    sd = rng.integers(0, 0x10000, rows, dtype=np.uint16)
    classes = np.array([0x030000, 0x030200, 0x040300, 0x0C0330, 0x020000, 0x010802, 0x060400, 0x0C0500],
                       np.uint32)
    c = rng.choice(classes, rows, p=[0.08, 0.07, 0.05, 0.05, 0.3, 0.2, 0.2, 0.05])
    return v, d, sv, sd, c


@pytest.fixture(scope="module")
def tables():
    return compile_policy().tables


# -- classify 10M ---------------------------------------------------------------


@pytest.mark.benchmark(group="classify 10M")
def test_classify_compiled(benchmark, fleet, tables):
    benchmark.extra_info["role"] = "gpuclass"
    status, card, slices = benchmark(core.match_devices, tables, *fleet)
    assert np.count_nonzero(status == C.SUPPORTED) > 0


def numpy_classify(v, d, sv, sd, c):
    """Numpy-only classification as a tuned numpy user writes it: masks first, then the
    allowlisted IDs compared on the few candidate rows (device-level rules only)."""
    base = c >> 8
    nvidia = v == NV
    gpu = ((base == 0x0300) | (base == 0x0302)) & nvidia
    status = np.zeros(len(v), np.uint8)
    card = np.full(len(v), -1, np.int16)
    slices = np.zeros(len(v), np.uint16)
    status[((base == 0x0403) | (base == 0x0C03) | (base == 0x0C80)) & nvidia] = C.COMPANION
    cand = np.flatnonzero(gpu)
    dc = d[cand]
    cc = np.full(len(cand), -1, np.int16)
    for i, dev in enumerate(ALLOWED.tolist()):
        cc[dc == dev] = i
    hit = cc >= 0
    status[cand] = np.where(hit, C.SUPPORTED, C.UNSUPPORTED)
    card[cand] = cc
    slices[cand[hit]] = 4
    return status, card, slices


@pytest.mark.benchmark(group="classify 10M")
def test_classify_numpy(benchmark, fleet, tables):
    benchmark.extra_info.update(role="baseline", goal=4.0)
    got = benchmark(numpy_classify, *fleet)
    want = core.match_devices(tables, *fleet[:2], None, None, fleet[4])
    for a, b in zip(got, want):
        assert np.array_equal(a, b)


@pytest.mark.benchmark(group="classify 10M")
def test_classify_copy_floor(benchmark, fleet):
    benchmark.extra_info.update(role="baseline", goal=0.5)
    benchmark(lambda: [np.copy(a) for a in fleet])


@pytest.mark.benchmark(group="classify 10M public API")
def test_classify_public_api(benchmark, fleet):
    from gpuclass.classify import classify

    benchmark.extra_info["role"] = "gpuclass"
    result = benchmark(classify, *fleet)
    assert result.supported_cards > 0


@pytest.mark.benchmark(group="classify 10M public API")
def test_classify_kernel_alone(benchmark, fleet, tables):
    benchmark.extra_info.update(role="baseline", goal=1 / 1.2)
    benchmark(core.match_devices, tables, *fleet)


# -- the same devices through a pure-Python dict loop -------------------------------

@pytest.fixture(scope="module")
def sample_rows(rows, quick):
    return rows // 100 if quick else rows // 10


@pytest.mark.benchmark(group="classify 1M pure Python")
def test_sample_compiled(benchmark, fleet, tables, sample_rows):
    benchmark.extra_info["role"] = "gpuclass"
    sample = [a[:sample_rows] for a in fleet]
    benchmark(core.match_devices, tables, *sample)


def python_classify(v, d, c):
    allowed = {(NV, int(x)): i for i, x in enumerate(ALLOWED)}
    gpu_classes = {0x0300, 0x0302}
    companions = {0x0403, 0x0C03, 0x0C80}
    status, card, slices = [], [], []
    for vendor, device, cls in zip(v, d, c):
        k = allowed.get((vendor, device), -1)
        if cls >> 8 in gpu_classes:
            s = C.SUPPORTED if k >= 0 else (C.UNSUPPORTED if vendor == NV else C.NOT_GPU)
        else:
            k = -1
            s = C.COMPANION if cls >> 8 in companions and vendor == NV else C.NOT_GPU
        status.append(s)
        card.append(k if s == C.SUPPORTED else -1)
        slices.append(4 if s == C.SUPPORTED else 0)
    return status, card, slices


@pytest.mark.benchmark(group="classify 1M pure Python")
def test_sample_python_dict_loop(benchmark, fleet, tables, sample_rows):
    benchmark.extra_info.update(role="baseline", goal=100.0)
    n = sample_rows
    v, d, c = (fleet[i][:n].tolist() for i in (0, 1, 4))  # Python ints, as a dict loop would hold them
    status, card, slices = benchmark.pedantic(python_classify, args=(v, d, c), rounds=3, iterations=1)
    want = core.match_devices(tables, fleet[0][:n], fleet[1][:n], None, None, fleet[4][:n])
    assert status == want[0].tolist() and card == want[1].tolist()


# -- rollup 10M devices into 1M nodes -------------------------------------------------


@pytest.fixture(scope="module")
def classified(fleet, tables, rows):
    status, card, slices = core.match_devices(tables, *fleet)
    n_nodes = rows // 10
    # Devices arrive grouped by server, as inventories list them.
    group = np.sort(np.random.default_rng(7).integers(0, n_nodes, rows))
    return status, card, slices, group, n_nodes


@pytest.mark.benchmark(group="rollup 10M -> 1M")
def test_rollup_compiled(benchmark, classified):
    benchmark.extra_info["role"] = "gpuclass"
    out = benchmark(core.rollup, *classified)
    assert out.shape == (classified[4], C.ROLLUP_COLUMNS)


def numpy_rollup(status, card, slices, group, n_nodes):
    """What a numpy user writes, tuned: every status counted per node in one bincount of a
    combined key (one pass over the rows, not one per status), slices in a second."""
    per = np.bincount(group.astype(np.int64) * 8 + status, minlength=n_nodes * 8).reshape(n_nodes, 8)
    total = np.bincount(group, weights=slices, minlength=n_nodes)
    cards, unsupported = per[:, C.SUPPORTED], per[:, C.UNSUPPORTED]
    companions, vfs, invalid = per[:, C.COMPANION], per[:, C.VIRTUAL_FUNCTION], per[:, C.INVALID]
    mixed = (cards > 0) & (unsupported > 0)
    return cards, total, unsupported, companions, vfs, invalid, mixed


@pytest.mark.benchmark(group="rollup 10M -> 1M")
def test_rollup_numpy_bincount(benchmark, classified):
    benchmark.extra_info.update(role="baseline", goal=2.0)
    cards, total, unsupported, *_ = benchmark(numpy_rollup, *classified)
    out = core.rollup(*classified)
    assert np.array_equal(out[:, C.R_CARDS], cards)
    assert np.array_equal(out[:, C.R_SLICES], total.astype(np.int64))
    assert np.array_equal(out[:, C.R_UNSUPPORTED], unsupported)
