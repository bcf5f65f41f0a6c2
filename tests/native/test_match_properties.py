"""Differential properties: the compiled matcher and its twin agree on random policies and devices."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass._native import twin
from gpuclass._native.contract.match import build_match_tables
from gpuclass.errors import InputError

from conftest import CORES
from match_samples import CLASSES, DEVICES, SUBS, VENDORS, draw_classes_and_vendors, draw_devices, draw_rule

compiled = CORES["compiled"]
# The compiled_core fixture fails (never skips) when the compiled core should have loaded.
pytestmark = pytest.mark.usefixtures("compiled_core")


@st.composite
def policies(draw):
    n_cards = draw(st.integers(0, 4))
    keys = set()
    rules = []
    for _ in range(draw(st.integers(0, 12))):
        rule = draw_rule(draw, n_cards)
        key = rule[:4]
        if key in keys:
            continue
        keys.add(key)
        rules.append(rule)
    slices, gpu_classes, companions, vendors = draw_classes_and_vendors(draw, n_cards)
    return build_match_tables(rules, slices, gpu_classes, companions, vendors)


@st.composite
def devices(draw):
    args, kw = draw_devices(draw)
    if draw(st.booleans()):  # occasionally something out of range
        kw["bad"] = draw(st.sampled_from(["class", "slot", "vendor"]))
    return args, kw


def _call(core, tables, args, kw):
    kw = dict(kw)
    bad = kw.pop("bad", None)
    args = dict(args)
    if bad == "class" and args["class_code"]:
        args["class_code"] = np.array(args["class_code"], np.uint32)
        args["class_code"][-1] = 0x1000000
    elif bad == "slot" and "slot" in kw and kw["slot"]:
        kw["slot"] = kw["slot"][:-1] + [32]
    elif bad == "vendor" and args["vendor"]:
        args["vendor"] = args["vendor"][:-1] + [0x10000]
    try:
        return core.match_devices(tables, args["vendor"], args["device"], args["subvendor"],
                                  args["subdevice"], args["class_code"], **kw)
    except InputError as exc:
        return ("error", type(exc), str(exc))


def _is_error(x) -> bool:
    return isinstance(x, tuple) and len(x) == 3 and isinstance(x[0], str)


def _same(a, b):
    if _is_error(a):
        assert a == b
        return
    assert not _is_error(b), b
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and np.array_equal(x, y)


@settings(max_examples=200, deadline=None)
@given(policies(), devices())
def test_match_compiled_equals_twin(tables, dev):
    args, kw = dev
    _same(_call(compiled, tables, args, kw), _call(twin, tables, args, kw))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_rollup_compiled_equals_twin(data):
    n = data.draw(st.integers(0, 60))
    n_groups = data.draw(st.integers(0, 6))
    status = data.draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    card = data.draw(st.lists(st.integers(-1, 3), min_size=n, max_size=n))
    slices = data.draw(st.lists(st.integers(0, 0xFFFF), min_size=n, max_size=n))
    group = data.draw(st.one_of(st.none(), st.lists(st.integers(-1, 6), min_size=n, max_size=n)))
    out = []
    for core in (compiled, twin):
        try:
            out.append(core.rollup(status, card, slices, group, n_groups))
        except InputError as exc:
            out.append(("error", type(exc), str(exc)))
    if isinstance(out[0], tuple):
        assert out[0] == out[1]
    else:
        assert out[0].dtype == out[1].dtype and np.array_equal(out[0], out[1])


@settings(max_examples=25, deadline=None)
@given(policies(), st.integers(0, 2**32 - 1))
def test_large_random_arrays_agree(tables, seed):
    rng = np.random.default_rng(seed)
    n = 2000
    pick = lambda pool, dt: rng.choice(np.array(pool, dtype=dt), n)  # noqa: E731
    args = (pick(VENDORS, np.uint16), pick(DEVICES, np.uint16), pick(SUBS, np.uint16),
            pick(SUBS, np.uint16), pick(CLASSES, np.uint32))
    kw = dict(flags=pick([0, 1, 8], np.uint32), has_subsystem=rng.random(n) < 0.8,
              group=np.sort(rng.integers(0, 50, n)), domain=np.zeros(n, np.uint32),
              bus=pick([1, 2, 3], np.uint8), slot=pick([0, 1], np.uint8))
    a = compiled.match_devices(tables, *args, **kw)
    b = twin.match_devices(tables, *args, **kw)
    _same(a, b)
    _same([compiled.rollup(*a, kw["group"], 50)], [twin.rollup(*b, kw["group"], 50)])
