"""The matcher's specialized kernels: every variant, chunk edges, cached tables.

The compiled core picks one of several kernels per call (subsystem rules or not,
a subsystem mask or not, flags or not, addresses or not) and rolls up a chunk
at a time; these tests walk each path and compare with the pure-Python twin.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuclass._native import twin
from gpuclass import constants as C
from gpuclass._native.contract import match as MS
from gpuclass._native.contract.match import MatchTables, build_match_tables
from gpuclass.errors import InputError

NV, AMD = 0x10DE, 0x1002
RULES = [
    (NV, 0x27B0, None, None, 0),
    (NV, 0x1E30, 0x10DE, 0x12BA, 1),   # subsystem rule: Quadro RTX 6000
    (NV, 0x1E30, 0x10DE, 0x129E, -1),  # subsystem deny
    (NV, 0x2BB5, None, None, 1),
    (NV, 0x2BB5, 0x10DE, 0x0000, -1),  # a deny that beats the device rule
    (NV, 0x1B80, None, None, -1),      # device deny
    (0x8086, 0x56C0, None, None, 2),   # a second vendor with rules
]


def _tables(sub_rules: bool = True):
    rules = RULES if sub_rules else [r for r in RULES if r[2] is None]
    # AMD: a GPU vendor without rules (its GPUs are "unsupported", not "not a GPU")
    return build_match_tables(rules, [4, 8, 2], gpu_vendors=(NV, AMD))


def _rows(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    pick = lambda pool, dt: rng.choice(np.array(pool, dtype=dt), n)  # noqa: E731
    v = pick([NV, NV, AMD, 0x8086, 0x1AF4, 0x0000, 0xFFFF], np.uint16)
    d = pick([0x27B0, 0x1E30, 0x2BB5, 0x1B80, 0x56C0, 0x0000, 0xFFFF], np.uint16)
    sv = pick([0x10DE, 0x1028, 0x0000], np.uint16)
    sd = pick([0x12BA, 0x129E, 0x0000, 0xFFFF], np.uint16)
    c = pick([0x030000, 0x030200, 0x038000, 0x040300, 0x0C0330, 0x020000, 0xFFFFFF, 0], np.uint32)
    return v, d, sv, sd, c, rng


def _same(a, b):
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and np.array_equal(x, y)


def _variant(rng, n, mask, flags, slots):
    """The optional arguments of a kernel variant: a subsystem mask, flags, addresses."""
    kw = {}
    if mask:
        kw["has_subsystem"] = rng.random(n) < 0.7
    if flags:
        kw["flags"] = rng.choice(np.array([0, 1, 2, 4, 8, 9, 15], np.uint32), n)
    if slots:
        kw.update(group=np.sort(rng.integers(0, 40, n)), domain=np.zeros(n, np.uint32),
                  bus=rng.choice(np.array([1, 2], np.uint8), n), slot=rng.choice(np.array([0, 1], np.uint8), n))
    return kw


# a subsystem mask goes only with subsystem IDs
VARIANTS = [p for p in itertools.product([False, True], repeat=5) if p[1] or not p[2]]


@pytest.mark.parametrize("sub_rules,subsystem,mask,flags,slots", VARIANTS)
def test_every_kernel_variant_matches_the_twin(compiled_core, sub_rules, subsystem, mask, flags, slots):
    t = _tables(sub_rules)
    n = 5000
    v, d, sv, sd, c, rng = _rows(n, seed=sub_rules * 16 + subsystem * 8 + mask * 4 + flags * 2 + slots)
    kw = _variant(rng, n, mask, flags, slots)
    args = (v, d, sv, sd, c) if subsystem else (v, d, None, None, c)
    got = compiled_core.match_devices(t, *args, **kw)
    want = twin.match_devices(t, *args, **kw)
    _same(got, want)
    assert (got[0] == C.SUPPORTED).any() and (got[0] == C.UNSUPPORTED).any()


@pytest.mark.parametrize("at", [0, 1, 4095, 4096, 9999])
def test_class_over_24_bits_reports_the_first_row(core, at):
    v, d, sv, sd, c, _ = _rows(10_000)
    c = c.copy()
    c[at] = 0x1000000
    c[-1] = 0xFFFFFFFF
    with pytest.raises(InputError, match=f"at index {at} exceeds 0xffffff"):
        core.match_devices(_tables(), v, d, sv, sd, c)


def test_tables_are_read_only_and_checked_once():
    t = _tables()
    assert MS.is_frozen(t)
    with pytest.raises(ValueError):
        t.dev_lut[0] = 1
    assert MS.check_tables(t) is t and MS._CHECKED.get(id(t)) is t


def test_hand_made_tables_are_checked_on_every_call(core):
    """Writable tables are never trusted from a cache: a change is seen on the next call."""
    t = _tables()
    loose = MatchTables(*(a.copy() for a in t))
    assert not MS.is_frozen(loose)
    v, d, sv, sd, c, _ = _rows(100)
    _same(core.match_devices(loose, v, d, sv, sd, c), core.match_devices(t, v, d, sv, sd, c))
    loose.dev_card[0] = 99
    with pytest.raises(InputError, match="dev_card"):
        core.match_devices(loose, v, d, sv, sd, c)


@pytest.mark.parametrize("order", ["sorted", "random", "none"])
def test_rollup_across_chunks_matches_the_twin(compiled_core, order):
    rng = np.random.default_rng(5)
    n, n_groups = 3 * 4096 + 17, 700
    status = rng.choice(np.arange(6, dtype=np.uint8), n, p=[0.7, 0.1, 0.05, 0.05, 0.05, 0.05])
    card = rng.integers(-1, 3, n).astype(np.int16)
    slices = rng.integers(0, 9, n).astype(np.uint16)
    group = None if order == "none" else rng.integers(0, n_groups, n)
    if order == "sorted":
        group = np.sort(group)
    ng = 1 if group is None else n_groups
    got = compiled_core.rollup(status, card, slices, group, ng)
    want = twin.rollup(status, card, slices, group, ng)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert (got[:, C.R_MIXED] == 3).any() or group is None


@pytest.mark.parametrize("bad_status,bad_group", [(4096, None), (None, 4096), (5000, 4097),
                                                  (4100, 8191), (8192, 8192), (None, 12300)])
def test_rollup_reports_the_first_bad_row(core, bad_status, bad_group):
    n = 3 * 4096 + 17
    status = np.ones(n, np.uint8)
    group = np.zeros(n, np.int64)
    if bad_status is not None:
        status[bad_status] = 6
    if bad_group is not None:
        group[bad_group] = -1 if bad_group % 2 else 5
    first = min(x for x in (bad_status, bad_group) if x is not None)
    with pytest.raises(InputError, match=f"at index {first} "):
        core.rollup(status, np.zeros(n, np.int16), np.zeros(n, np.uint16), group, 5)


# Classes around the compiled kernel's screening (class >> 8 compared as int16
# less 0x8000): the edges of that range, and both kinds of interesting class.
EDGE_CLASSES = [0x000000, 0x0000FF, 0x030000, 0x0302FF, 0x040300, 0x0C0330, 0x7FFF00, 0x800000,
                0x8000FF, 0xFFFF00, 0xFFFFFF, 0x020000]


@pytest.mark.parametrize("n", [1, 7, 8, 9, 2047, 2048, 2049, 4103])
@pytest.mark.parametrize("gpu_classes,companions", [
    ((0x0300, 0x0302), (0x0403, 0x0C03, 0x0C80)),                 # the default: screened
    ((0x0300,), ()),                                              # one class
    ((), ()),                                                     # no GPU class at all
    ((0x7FFF, 0x8000, 0xFFFF, 0x0000), (0x0001,)),                # the int16 edges
    (tuple(range(0x0300, 0x0306)), (0x0403, 0x0C03, 0x0C80)),     # nine: every row looked up
])
def test_screened_rows_match_the_twin(compiled_core, n, gpu_classes, companions):
    t = build_match_tables([r for r in RULES if r[2] is None], [4, 8, 2], gpu_classes=gpu_classes,
                           companion_classes=companions, gpu_vendors=(NV, AMD))
    v, d, sv, sd, _, rng = _rows(n, seed=n)
    c = rng.choice(np.array(EDGE_CLASSES, np.uint32), n)
    flags = rng.choice(np.array([0, 1, 8, 9], np.uint32), n)
    for kw in ({}, {"flags": flags},
               {"flags": flags, "domain": np.zeros(n, np.uint32), "bus": np.ones(n, np.uint8),
                "slot": (np.arange(n) % 4).astype(np.uint8)}):
        _same(compiled_core.match_devices(t, v, d, sv, sd, c, **kw),
              twin.match_devices(t, v, d, sv, sd, c, **kw))


# Vendors around the compiled kernel's vendor screen (rows of a vendor that is no GPU
# vendor and that no rule names are NOT_GPU unless a VF): the 16-bit edges, and policies
# with no such vendor at all, with one, and with nine (more than the screen holds: every
# vendor's rows looked up).
EDGE_VENDORS = [0x0000, 0x0001, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF, NV, AMD, 0x8086]


@pytest.mark.parametrize("n", [7, 8, 2049, 4103])
@pytest.mark.parametrize("rules,gpu_vendors", [
    ([r for r in RULES if r[2] is None], (NV, AMD)),       # rule vendor NV, GPU vendors NV and AMD
    ([], ()),                                              # no vendor: no screen by vendor
    ([], (0xFFFF,)),                                       # one vendor at an edge
    ([(0x8000, 0x27B0, None, None, 0)], (0x0000,)),        # a rule vendor that is also a GPU vendor
    ([], tuple(range(0x1000, 0x1009))),                    # nine: every vendor looked up
])
def test_vendor_screened_rows_match_the_twin(compiled_core, n, rules, gpu_vendors):
    t = build_match_tables(rules, [4, 8, 2], gpu_vendors=gpu_vendors)
    rng = np.random.default_rng(n)
    v = rng.choice(np.array(EDGE_VENDORS + [0x1000, 0x1008], np.uint16), n)
    d = rng.choice(np.array([0x27B0, 0x1E30, 0x0000, 0xFFFF], np.uint16), n)
    c = rng.choice(np.array([0x030000, 0x030200, 0x040300, 0x0C0330, 0x020000], np.uint32), n)
    flags = rng.choice(np.array([0, 1, 8, 9], np.uint32), n)  # VFs of every vendor
    for kw in ({}, {"flags": flags},
               {"domain": np.zeros(n, np.uint32), "bus": np.ones(n, np.uint8),
                "slot": (np.arange(n) % 4).astype(np.uint8)},
               {"flags": flags, "domain": np.zeros(n, np.uint32), "bus": np.ones(n, np.uint8),
                "slot": (np.arange(n) % 4).astype(np.uint8)}):
        _same(compiled_core.match_devices(t, v, d, None, None, c, **kw),
              twin.match_devices(t, v, d, None, None, c, **kw))


@pytest.mark.parametrize("at", [0, 8190, 10000, 10002])
def test_class_over_24_bits_in_the_tail(core, at):
    v, d, sv, sd, c, _ = _rows(10_003)
    c = c.copy()
    c[at] = 0x01030000  # its bits 8-23 name a GPU class
    with pytest.raises(InputError, match=f"at index {at} exceeds 0xffffff"):
        core.match_devices(_tables(), v, d, sv, sd, c)


def test_rollup_counts_cards_per_group_in_int32(core):
    status = np.array([1, 1, 1, 2, 1, 0], np.uint8)
    card = np.array([0, 2, 2, -1, 2, -1], np.int16)
    slices = np.array([4, 4, 4, 0, 4, 0], np.uint16)
    group = np.array([0, 0, 1, 1, 1, 1], np.int32)
    totals, counts = core.rollup(status, card, slices, group, 2, 3)
    assert totals.dtype == np.int32 and counts.dtype == np.int32
    assert counts.tolist() == [[1, 0, 1], [0, 0, 2]]
    assert totals[:, C.R_CARDS].tolist() == [2, 2] and totals[:, C.R_MIXED].tolist() == [
        C.MIXED_MODELS, C.MIXED_UNSUPPORTED]
    assert np.array_equal(core.rollup(status, card, slices, group.astype(np.int64), 2), totals)


def test_rollup_refuses_what_int32_cannot_hold(core):
    n = 40_000  # 40k cards of 65535 slices in one group: past 2**31
    status = np.ones(n, np.uint8)
    with pytest.raises(InputError, match="int32"):
        core.rollup(status, np.zeros(n, np.int16), np.full(n, 0xFFFF, np.uint16), None, 1)
    with pytest.raises(InputError, match="card: value 5 at index 1"):
        core.rollup(status[:3], np.array([0, 5, 0], np.int16), np.zeros(3, np.uint16), None, 1, 3)


def test_empty_lists_are_empty_inputs_in_every_argument(core):
    """No devices given as plain empty lists (numpy makes ``[]`` a float array): an empty
    answer, the subsystem mask and flags included, never a dtype error."""
    got = core.match_devices(_tables(), [], [], [], [], [], has_subsystem=[], flags=[])
    assert [len(a) for a in got] == [0, 0, 0]
    with pytest.raises(InputError, match="has_subsystem: expected a boolean mask"):
        core.match_devices(_tables(), [NV], [0x27B0], [0], [0], [0x030000], has_subsystem=[0.5])


@pytest.mark.parametrize("sub_rules,subsystem,mask,flags,slots", VARIANTS[::3])
def test_answers_written_into_given_arrays_are_the_returned_ones(core, sub_rules, subsystem, mask, flags, slots):
    """``out``: the answers go into the caller's three arrays (returned, the same
    objects), equal to the ones a call without them gives, in every kernel variant."""
    t = _tables(sub_rules)
    n = 3000 if core is twin else 9000
    v, d, sv, sd, c, rng = _rows(n, seed=7 + slots)
    kw = _variant(rng, n, mask, flags, slots)
    args = (v, d, sv, sd, c) if subsystem else (v, d, None, None, c)
    out = (np.full(n, 99, np.uint8), np.full(n, 99, np.int16), np.full(n, 99, np.uint16))
    got = core.match_devices(t, *args, **kw, out=out)
    assert all(g is o for g, o in zip(got, out))
    _same(got, core.match_devices(t, *args, **kw))


def test_threads_writing_slices_of_one_output_give_the_serial_answer(compiled_core):
    """The use ``out`` is for: threads each classify a slice of the rows into the same
    slice of three shared arrays (the kernel runs without the GIL), no copy to join them."""
    from concurrent.futures import ThreadPoolExecutor

    t = _tables(True)
    n = 200_003
    v, d, sv, sd, c, _ = _rows(n, seed=11)
    want = compiled_core.match_devices(t, v, d, sv, sd, c)
    out = (np.empty(n, np.uint8), np.empty(n, np.int16), np.empty(n, np.uint16))
    bounds = np.linspace(0, n, 5).astype(int)

    def part(k):
        lo, hi = bounds[k], bounds[k + 1]
        compiled_core.match_devices(t, v[lo:hi], d[lo:hi], sv[lo:hi], sd[lo:hi], c[lo:hi],
                                    out=tuple(o[lo:hi] for o in out))
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(part, range(4)))
    _same(out, want)


@pytest.fixture
def small_parts(monkeypatch):
    """Rows shared out to threads from 2048 a thread (a million by default), so that tests
    on a few thousand rows split them the way a large call does."""
    monkeypatch.setattr(MS, "ROWS_PER_THREAD", 2048)


@pytest.mark.parametrize("sub_rules,subsystem,mask,flags,slots", VARIANTS)
@pytest.mark.parametrize("n,threads", [(4096, 2), (2048 * 5 + 1, 3), (2048 * 7 - 5, 4), (30_011, 16)])
def test_rows_shared_out_to_threads_give_the_one_thread_answer(
        compiled_core, small_parts, sub_rules, subsystem, mask, flags, slots, n, threads):
    """Every kernel variant split into 2 to 16 parts (of whole 2048-row chunks, the last
    one short) answers as on one thread: each part reads and writes its own rows, the
    companions of a card on one side of a split are found from the other."""
    t = _tables(sub_rules)
    v, d, sv, sd, c, rng = _rows(n, seed=n + threads)
    kw = _variant(rng, n, mask, flags, slots)
    args = (v, d, sv, sd, c) if subsystem else (v, d, None, None, c)
    assert MS.match_threads(threads, n) == min(threads, n // 2048)
    _same(compiled_core.match_devices(t, *args, **kw, threads=threads),
          compiled_core.match_devices(t, *args, **kw, threads=1))
    out = (np.full(n, 99, np.uint8), np.full(n, 99, np.int16), np.full(n, 99, np.uint16))
    _same(compiled_core.match_devices(t, *args, **kw, threads=threads, out=out),
          compiled_core.match_devices(t, *args, **kw, threads=1))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.one_of(st.integers(1, 4095), st.integers(4096, 12_000)), threads=st.integers(1, 8),
       data=st.data())
def test_a_class_over_24_bits_is_reported_at_its_row_whatever_the_split(compiled_core, n, threads, data):
    """The first bad class code is the one named, in whichever part it falls (a part
    reports it at its own row number), and the twin names the same."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(MS, "ROWS_PER_THREAD", 2048)
        v, d, sv, sd, c, _ = _rows(n, seed=n)
        c = c.copy()
        bad = data.draw(st.lists(st.integers(0, n - 1), max_size=3))
        for i in bad:
            c[i] = data.draw(st.sampled_from([0x1000000, 0xFFFFFFFF, 0x80000000]))
        errors = []
        for kw in ({"threads": threads}, {"threads": 1}):
            try:
                compiled_core.match_devices(_tables(), v, d, sv, sd, c, **kw)
                errors.append(None)
            except InputError as exc:
                errors.append(str(exc))
        if n <= 3000:
            try:
                twin.match_devices(_tables(), v, d, sv, sd, c, threads=threads)
                errors.append(None)
            except InputError as exc:
                errors.append(str(exc))
    assert len(set(errors)) == 1
    assert (errors[0] is None) == (not bad)
    if bad:
        assert f"at index {min(bad)} exceeds" in errors[0]


@pytest.mark.parametrize("at", [[2048 * 3 + 5], [9000, 2048 * 3], [2047, 2048 * 4 + 1], [10_239]])
def test_a_class_over_24_bits_in_a_later_part_is_named_at_its_row(compiled_core, small_parts, at):
    """Bad class codes in the second to fifth of five parts: the first is named by its row
    in the whole call, not in its part."""
    v, d, sv, sd, c, _ = _rows(10_240)
    c = c.copy()
    c[at] = 0x1000000
    with pytest.raises(InputError, match=f"at index {min(at)} exceeds 0xffffff"):
        compiled_core.match_devices(_tables(), v, d, sv, sd, c, threads=5)


@pytest.mark.parametrize("threads", [0, -1, 1.5, "2", True, [2]])
def test_a_thread_count_that_is_no_positive_integer_is_refused_by_both_cores(compiled_core, threads):
    v, d, sv, sd, c, _ = _rows(10)
    errors = []
    for mod in (compiled_core, twin):
        with pytest.raises(InputError, match="threads: expected a positive integer or None") as exc:
            mod.match_devices(_tables(), v, d, sv, sd, c, threads=threads)
        errors.append(str(exc.value))
    assert errors[0] == errors[1]


def test_thread_counts_follow_the_rows_and_the_cpus(monkeypatch):
    """None is the usable CPUs, at most four; a given count is a ceiling; never fewer than
    ROWS_PER_THREAD rows a thread, never more than 16 threads."""
    r = MS.ROWS_PER_THREAD
    monkeypatch.setattr(MS, "usable_cpus", lambda: 2)
    assert [MS.match_threads(None, k * r) for k in (0, 1, 2, 3, 100)] == [1, 1, 2, 2, 2]
    monkeypatch.setattr(MS, "usable_cpus", lambda: 64)
    assert [MS.match_threads(None, k * r) for k in (1, 3, 100)] == [1, 3, MS.MAX_THREADS]
    assert [MS.match_threads(t, 100 * r) for t in (1, np.int64(5), 64)] == [1, 5, 16]
    assert MS.match_threads(8, 2 * r - 1) == 1


def _cgroup_tree(tmp_path, v2_line, files):
    """A made-up cgroup mount (``files``: path under it -> text) and /proc/self/cgroup."""
    root = tmp_path / "cgroup"
    for rel, text in files.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text(v2_line)
    return str(root), str(proc)


@pytest.mark.parametrize("line,files,want", [
    # cgroup v2: no quota, a quota of 1.5 CPUs, the tighter of a parent's and its own
    ("0::/pod/app\n", {"pod/app/cpu.max": "max 100000\n"}, None),
    ("0::/pod/app\n", {"pod/app/cpu.max": "150000 100000\n"}, 1.5),
    ("0::/pod/app\n", {"pod/cpu.max": "100000 100000\n", "pod/app/cpu.max": "300000 100000\n"}, 1.0),
    # a container's view: its host path is not under the mount, whose top is its cgroup
    ("0::/kubepods/burstable/pod1/c1\n", {"cpu.max": "250000 100000\n"}, 2.5),
    # cgroup v1: quota over period, -1 for none; the cpu,cpuacct hierarchy as "cpu"
    ("4:memory:/x\n3:cpu,cpuacct:/x\n", {"cpu/x/cpu.cfs_quota_us": "50000\n",
                                            "cpu/x/cpu.cfs_period_us": "100000\n"}, 0.5),
    ("3:cpu:/x\n", {"cpu/x/cpu.cfs_quota_us": "-1\n", "cpu/x/cpu.cfs_period_us": "100000\n"}, None),
    # unreadable or malformed files set no limit
    ("0::/a\n", {"a/cpu.max": "garbage\n"}, None),
    ("garbage\n", {"cpu.max": "100000 100000\n"}, None),
])
def test_a_cgroup_cpu_quota_is_read_as_a_container_sets_it(tmp_path, line, files, want):
    from gpuclass._native.contract import args as A

    root, proc = _cgroup_tree(tmp_path, line, files)
    assert A.cgroup_cpu_limit(root, proc) == want


def test_the_threads_of_a_call_stay_within_a_cgroup_cpu_quota(tmp_path, monkeypatch):
    """A container limited to 1.5 CPUs on a machine whose affinity shows many: two threads
    by default, not one per CPU of the machine; a quota-free cgroup leaves the affinity."""
    from gpuclass._native.contract import args as A

    root, proc = _cgroup_tree(tmp_path, "0::/\n", {"cpu.max": "150000 100000\n"})
    monkeypatch.setattr(A, "CGROUP_ROOT", root)
    monkeypatch.setattr(A, "PROC_CGROUP", proc)
    monkeypatch.setattr(A.os, "sched_getaffinity", lambda pid: set(range(64)))
    assert A.usable_cpus() == 2
    assert MS.match_threads(None, 100 * MS.ROWS_PER_THREAD) == 2
    (tmp_path / "cgroup" / "cpu.max").write_text("max 100000\n")
    assert A.usable_cpus() == 64
    assert MS.match_threads(None, 100 * MS.ROWS_PER_THREAD) == MS.MAX_THREADS


def _bad_outs(n, v):
    ok = lambda: (np.empty(n, np.uint8), np.empty(n, np.int16), np.empty(n, np.uint16))  # noqa: E731
    ro = ok()
    ro[2].flags.writeable = False
    shared = np.empty(2 * n, np.uint16)
    wide = ok()
    return {
        "two arrays": ok()[:2],
        "not a sequence": np.empty(n, np.uint8),
        "wrong dtype": (np.empty(n, np.uint8), np.empty(n, np.uint16), np.empty(n, np.uint16)),
        "wrong length": (np.empty(n, np.uint8), np.empty(n, np.int16), np.empty(n + 1, np.uint16)),
        "two-dimensional": (np.empty((n, 1), np.uint8), *ok()[1:]),
        "strided": (np.empty(2 * n, np.uint8)[::2], *ok()[1:]),
        "read-only": ro,
        "a list": (list(range(n)), *ok()[1:]),
        "overlapping outputs": (wide[0], shared[:n].view(np.int16), shared[n // 2:n // 2 + n]),
        "an input's memory": (v.view(np.uint8)[:n], *ok()[1:]),
    }


@pytest.mark.parametrize("case", list(_bad_outs(8, np.zeros(8, np.uint16))))
def test_bad_outputs_are_refused_alike_by_both_cores(compiled_core, case):
    """A wrong ``out`` (three arrays, each writeable, contiguous, 1-D, of the rows' length
    and its dtype, none sharing memory with another or an input) is an InputError naming
    it, the same from the compiled core and the twin, and nothing is written."""
    t = _tables(False)
    v, d, _, _, c, _ = _rows(8, seed=3)
    errors = []
    for mod in (compiled_core, twin):
        out = _bad_outs(8, v)[case]
        before = [np.array(o, copy=True) for o in out] if isinstance(out, tuple) else None
        with pytest.raises(InputError) as exc:
            mod.match_devices(t, v, d, None, None, c, out=out)
        errors.append(str(exc.value))
        if before is not None:
            assert all(np.array_equal(np.asarray(o), b) for o, b in zip(out, before))
    assert errors[0] == errors[1] and "out" in errors[0]
