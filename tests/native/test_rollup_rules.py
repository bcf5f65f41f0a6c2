"""The rollup's rules, held in one place each side (C: gpuclass_rollup.h; twin: rollup_py.py).

Per group: each column sums; the model is the first supported card in row order; a second
model sets MIXED_MODELS; supported cards beside unsupported GPUs set MIXED_UNSUPPORTED.
Rolling rows up and merging runs' totals must both follow them, in both cores, and
``classify.summarize``'s per-card counts (its own loop over the mixed nodes) must be the
rollup's.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuclass import constants as C
from gpuclass._native import twin
from gpuclass.classify import summarize
from gpuclass.errors import InputError

SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
STATUSES = [C.NOT_GPU, C.SUPPORTED, C.UNSUPPORTED, C.COMPANION, C.VIRTUAL_FUNCTION, C.INVALID]


@st.composite
def classified_rows(draw, n_cards=4, max_groups=6):
    n = draw(st.integers(0, 200))
    ng = draw(st.integers(1, max_groups))
    status = np.array(draw(st.lists(st.sampled_from(STATUSES), min_size=n, max_size=n)), np.uint8)
    cards = draw(st.lists(st.integers(0, n_cards - 1), min_size=n, max_size=n))
    card = np.where(status == C.SUPPORTED, cards, -1).astype(np.int16)
    slices = np.where(status == C.SUPPORTED, draw(st.sampled_from([1, 4, 8])), 0).astype(np.uint16)
    group = np.array(draw(st.lists(st.integers(0, ng - 1), min_size=n, max_size=n)), np.int64)
    return status, card, slices, group, ng


def _by_definition(status, card, slices, group, ng):
    """The rules written out from their definition, group by group."""
    out = []
    for g in range(ng):
        rows = np.flatnonzero(group == g)
        st_g = status[rows].tolist()
        sup = [int(card[i]) for i in rows if status[i] == C.SUPPORTED]
        row = [sup.__len__(), int(slices[rows].sum()), st_g.count(C.UNSUPPORTED), st_g.count(C.COMPANION),
               st_g.count(C.VIRTUAL_FUNCTION), st_g.count(C.INVALID), sup[0] if sup else -1, 0]
        if len(set(sup)) > 1:
            row[C.R_MIXED] |= C.MIXED_MODELS
        if sup and row[C.R_UNSUPPORTED]:
            row[C.R_MIXED] |= C.MIXED_UNSUPPORTED
        out.append(row)
    return out


@SETTINGS
@given(rows=classified_rows())
def test_the_rollup_follows_its_rules(core, rows):
    status, card, slices, group, ng = rows
    totals, counts = core.rollup(status, card, slices, group, ng, 4)
    assert totals.tolist() == _by_definition(status, card, slices, group, ng)
    for g in range(ng):
        sel = (group == g) & (status == C.SUPPORTED)
        assert counts[g].tolist() == np.bincount(card[sel], minlength=4).tolist()


@SETTINGS
@given(rows=classified_rows(), data=st.data())
def test_merging_runs_follows_the_same_rules(core, rows, data):
    """Rows rolled up per run (runs cut anywhere inside a group, in row order), then the
    runs merged per group, give what rolling the rows up per group gives."""
    status, card, slices, group, ng = rows
    order = np.argsort(group, kind="stable")
    status, card, slices, group = status[order], card[order], slices[order], group[order]
    n = len(status)
    cut = np.array(data.draw(st.lists(st.booleans(), min_size=max(n - 1, 0), max_size=max(n - 1, 0))), bool)
    new = cut | (group[1:] != group[:-1]) if n else cut
    run = np.concatenate(([0], np.cumsum(new))).astype(np.int64)[:n]
    n_runs = int(run[-1]) + 1 if n else 0
    totals, counts = core.rollup(status, card, slices, run, n_runs, 4)
    run_group = np.zeros(n_runs, np.int64)
    run_group[run] = group
    got = core.merge_runs(run_group, totals, counts, ng)
    want = core.rollup(status, card, slices, group, ng, 4)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@SETTINGS
@given(data=st.data())
def test_merge_runs_compiled_equals_twin(compiled_core, data):
    """Any totals (not only the rollup's: models, mixed bits and sums drawn freely),
    including sums past int32: the same groups, or the same error."""
    n_runs = data.draw(st.integers(0, 40))
    ng = data.draw(st.integers(1, 5))
    col = st.integers(0, 3)
    totals = np.array([[data.draw(col), data.draw(st.sampled_from([0, 4, 2**30, 2**31 - 1])), data.draw(col),
                        data.draw(col), data.draw(col), data.draw(col), data.draw(st.integers(-1, 3)),
                        data.draw(st.integers(0, 3))] for _ in range(n_runs)], np.int32).reshape(n_runs, 8)
    counts = np.array(data.draw(st.lists(st.lists(st.integers(0, 5), min_size=2, max_size=2), min_size=n_runs,
                                         max_size=n_runs)), np.int32).reshape(n_runs, 2)
    group = np.array(data.draw(st.lists(st.integers(0, ng - 1), min_size=n_runs, max_size=n_runs)), np.int64)
    results = []
    for core in (compiled_core, twin):
        try:
            results.append(core.merge_runs(group, totals, counts, ng))
        except InputError as exc:
            results.append(str(exc))
    a, b = results
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
    else:
        assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_merge_runs_checks_its_arguments(core):
    t = np.zeros((2, 8), np.int32)
    c = np.zeros((2, 1), np.int32)
    with pytest.raises(InputError, match="group"):
        core.merge_runs([0, 3], t, c, 2)
    with pytest.raises(InputError, match="totals"):
        core.merge_runs([0, 1], t[:, :7], c, 2)
    with pytest.raises(InputError, match="counts"):
        core.merge_runs([0, 1], t, c.astype(np.int64), 2)
    big = t.copy()
    big[:, C.R_SLICES] = 2**31 - 1
    with pytest.raises(InputError, match="run 1"):
        core.merge_runs([0, 0], big, c, 1)


@SETTINGS
@given(rows=classified_rows(n_cards=7))
def test_summarize_counts_cards_as_the_rollup_does(core, rows):
    """``Rollup.card_counts`` (classify.py counts the mixed nodes' cards itself, and takes
    the model for the others) is the rollup's per-card count of every node."""
    status, card, slices, group, ng = rows
    r = summarize(status=status, card=card, slices=slices, group=group, n_groups=ng, core=core)
    _, counts = core.rollup(status, card, slices, group, ng, 7)
    for g in range(ng):
        assert r.card_counts(g) == {c: int(k) for c, k in enumerate(counts[g].tolist()) if k}
        assert bool(r.mixed[g] & C.MIXED_MODELS) == (np.count_nonzero(counts[g]) > 1)
