"""The matcher's and the rollup's rules as plain data (``contract/rules.py``,
``contract/rollup_rules.py``): ``match_rows`` over lists, on a policy's own rules
(``compile_rules``, no numpy), gives what the compiled kernel gives on the tables laid out
from them, device for device; the tables read back give the rules they were laid out from;
``rollup_rows`` gives one group's totals as the compiled rollup does."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from helpers import outside_tree
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass._native import build_match_tables, compile_rules, match_rows, rollup_rows, tables_from_rules
from gpuclass._native.match_py import _rule_maps
from gpuclass.errors import InputError

from conftest import CORES
from match_samples import draw_classes_and_vendors, draw_devices, draw_rule

compiled, twin = CORES["compiled"], CORES["python"]
pytestmark = pytest.mark.usefixtures("compiled_core")


@st.composite
def policies(draw):
    """(rules, card_slices, gpu_classes, companion_classes, gpu_vendors), sometimes with a
    rule that is refused (a second rule for a key, a card out of range, half a subsystem)."""
    n_cards = draw(st.integers(0, 4))
    rules = [draw_rule(draw, n_cards) for _ in range(draw(st.integers(0, 12)))]
    if draw(st.integers(0, 9)) == 0:
        rules.append(draw(st.sampled_from([(0x10DE, 1, None, None, n_cards), (0x10DE, 1, 2, None, -1),
                                           (0x10000, 1, None, None, -1), (1, 2, 3)])))
    slices, gpu_classes, companions, vendors = draw_classes_and_vendors(draw, n_cards)
    return rules, slices, gpu_classes, companions, vendors


@st.composite
def devices(draw):
    """Valid inputs (what a source's DeviceTable holds) as lists, and which optional ones."""
    args, kw = draw_devices(draw)
    return {**args, **kw}


def _outcome(f, *args, **kw):
    try:
        return f(*args, **kw)
    except InputError as exc:
        return ("error", str(exc))


@settings(max_examples=300, deadline=None)
@given(policies(), devices())
def test_match_rows_on_the_rules_equals_the_kernels_on_the_tables(policy, dev):
    maps = _outcome(compile_rules, *policy)
    tables = _outcome(build_match_tables, *policy)
    if isinstance(maps, tuple) and maps[0] == "error":
        assert tables == maps  # refused alike, with the same words
        return
    assert _rule_maps(tables) == maps  # the layout loses nothing
    got = match_rows(maps, **dev)
    args = [dev.get(k) for k in ("vendor", "device", "subvendor", "subdevice", "class_code")]
    kw = {k: v for k, v in dev.items() if k in ("has_subsystem", "flags", "group", "domain", "bus", "slot")}
    if "has_subsystem" in kw:  # as a DeviceTable holds it (the kernels refuse an empty list: float64)
        kw["has_subsystem"] = np.array(kw["has_subsystem"], dtype=bool)
    for core in (compiled, twin):
        want = core.match_devices(tables, *args, **kw)
        assert got == tuple(a.tolist() for a in want), core
        # one machine's totals: the row of the rollup's one group
        assert rollup_rows(*got) == core.rollup(*want, None, 1).tolist()[0], core


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_rollup_rows_equals_the_rollup_of_one_group(data):
    n = data.draw(st.integers(0, 60))
    status = data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    card = data.draw(st.lists(st.integers(-1, 3), min_size=n, max_size=n))
    slices = data.draw(st.lists(st.sampled_from([0, 1, 4, 0xFFFF]), min_size=n, max_size=n))
    for core in (compiled, twin):
        assert rollup_rows(status, card, slices) == core.rollup(status, card, slices, None, 1).tolist()[0]


def test_the_default_policy_without_numpy():
    """A process classifies a machine's devices on the default policy's rules without
    loading numpy (what a scan of a few devices can build on)."""
    code = """import sys
from gpuclass.policy import compile_default
from gpuclass._native import match_rows
policy = compile_default()
print(match_rows(policy.rules, [0x10de, 0x10de, 0x10de], [0x27b0, 0x22bc, 0x1e30], [0x10de] * 3,
                 [0x16fa, 0x16fa, 0x12ba], [0x030000, 0x040300, 0x030200],
                 domain=[0] * 3, bus=[1, 1, 2], slot=[0, 0, 0]))
from gpuclass._native import read_device_rows, rollup_rows
print(rollup_rows([1, 3, 2], [2, 2, -1], [4, 0, 0]))
print(policy.card_ids[2], "numpy" in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=outside_tree(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    totals = compiled.rollup([1, 3, 2], [2, 2, -1], [4, 0, 0], None, 1).tolist()[0]
    assert proc.stdout.split("\n")[:3] == ["([1, 3, 2], [2, 2, -1], [4, 0, 0])", str(totals),
                                            "rtx-4000-sff-ada False"]


def test_the_policy_tables_are_laid_out_from_its_rules():
    from gpuclass.policy import compile_default

    p = compile_default()
    assert _rule_maps(p.tables) == p.rules
    fresh = tables_from_rules(p.rules)
    assert all((a == b).all() for a, b in zip(fresh, p.tables))
