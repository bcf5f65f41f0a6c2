"""Concurrency: the kernels release the GIL, so threads really run them at once.

Eight threads classifying, looking up and parsing together must give exactly
the serial results, with both cores.
"""

from __future__ import annotations

import threading

import numpy as np
from gpuclass import PciDatabase
from gpuclass.classify import classify, compile_policy

THREADS = 8


def _inputs(n: int, seed: int):
    rng = np.random.default_rng(seed)
    db = PciDatabase.load()
    keys = db.arrays()["device_keys"]
    picks = keys[rng.integers(0, len(keys), n)]
    vendor = (picks >> 16).astype(np.uint16)
    device = (picks & 0xFFFF).astype(np.uint16)
    # a share of allowlisted cards and near misses, with and without subsystems
    special = np.array([0x1B80, 0x1B06, 0x27B0, 0x26B1, 0x2BB1, 0x2BB5, 0x1E30, 0x27B2, 0x2BB2], np.uint16)
    hot = rng.random(n) < 0.3
    vendor[hot] = 0x10DE
    device[hot] = special[rng.integers(0, len(special), hot.sum())]
    sv = rng.integers(0, 0x10000, n).astype(np.uint16)
    sd = rng.integers(0, 0x10000, n).astype(np.uint16)
    cls = rng.choice(np.array([0x030000, 0x030200, 0x040300, 0x020000, 0x0C0330], np.uint32), n)
    domain = np.zeros(n, np.uint32)
    bus = rng.integers(0, 256, n).astype(np.uint8)
    slot = rng.integers(0, 32, n).astype(np.uint8)
    group = np.sort(rng.integers(0, max(1, n // 8), n)).astype(np.int64)
    return dict(vendor=vendor, device=device, subvendor=sv, subdevice=sd, class_code=cls,
                domain=domain, bus=bus, slot=slot, group=group)


def _run_together(jobs):
    """Run every job at the same moment in its own thread; their results in order."""
    barrier = threading.Barrier(len(jobs))
    results: list = [None] * len(jobs)
    errors: list = []

    def worker(i, job):
        try:
            barrier.wait()
            results[i] = job()
        except BaseException as exc:  # re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i, j)) for i, j in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]
    return results


def _classify(core, args, policy):
    def job():
        r = classify(args["vendor"], args["device"], args["subvendor"], args["subdevice"],
                     args["class_code"], group=args["group"], domain=args["domain"], bus=args["bus"],
                     slot=args["slot"], policy=policy, core=core)
        return r.status.copy(), r.card.copy(), r.slices.copy(), r.summary().matrix.copy()
    return job


def test_threads_classify_like_serial(core):
    policy = compile_policy(None)
    n = 200_000 if core.IS_COMPILED else 20_000
    inputs = [_inputs(n, seed) for seed in range(THREADS)]
    serial = [_classify(core, a, policy)() for a in inputs]
    for _ in range(3):
        together = _run_together([_classify(core, a, policy) for a in inputs])
        for s, t in zip(serial, together):
            for a, b in zip(s, t):
                assert (a is None and b is None) or np.array_equal(a, b)


def test_threads_look_up_like_serial(core, bundled_bytes):
    tables, _ = core.parse_pci_ids(bundled_bytes)
    rng = np.random.default_rng(7)
    work = []
    for name in ("vendor", "device", "subsys"):
        keys = tables[f"{name}_keys"]
        q = np.concatenate([keys[rng.integers(0, len(keys), 50_000)],
                            rng.integers(0, np.iinfo(keys.dtype).max, 50_000, dtype=keys.dtype)])
        work.append((keys, q))
    indexes = [core.KeyIndex(k) for k, _ in work]  # shared between threads
    serial = [idx.lookup(q) for idx, (_, q) in zip(indexes, work)]
    jobs = [(lambda i=i: indexes[i % 3].lookup(work[i % 3][1])) for i in range(THREADS)]
    for _ in range(3):
        for i, res in enumerate(_run_together(jobs)):
            assert np.array_equal(res, serial[i % 3])


def test_threads_parse_like_serial(core, bundled_bytes):
    serial, _ = core.parse_pci_ids(bundled_bytes)
    for res, _skipped in _run_together([lambda: core.parse_pci_ids(bundled_bytes)] * 4):
        assert res.keys() == serial.keys()
        assert all(np.array_equal(res[k], serial[k]) for k in serial)


def test_threads_share_one_database(tmp_path):
    """One PciDatabase (lazily built indexes, lazily checked cache) used from 8 threads at once."""
    src = PciDatabase.load()
    db = PciDatabase.load_compiled(src.save_compiled(tmp_path / "c.gpcdb"))  # checks run lazily
    rng = np.random.default_rng(3)
    keys = src.arrays()["device_keys"]
    picks = keys[rng.integers(0, len(keys), 20_000)]
    v, d = (picks >> 16).astype(np.uint16), (picks & 0xFFFF).astype(np.uint16)
    expected = src.names("device", src.device_index(v, d))

    def job():
        return db.names("device", db.device_index(v, d)), db.vendor_name(0x10DE), db.class_name(3, 2)

    for res in _run_together([job] * THREADS):
        assert res == (expected, "NVIDIA Corporation", "3D controller")
