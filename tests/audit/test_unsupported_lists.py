"""``AuditTable.unsupported_lists`` (every server's unsupported GPUs at once, from the
distinct (server, ID) pairs) says what :meth:`AuditTable.unsupported` says server by server."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import gpuclass
from gpuclass.audit.render import unsupported_entry
from gpuclass.pcinames import NO_NAMES

# NVIDIA GPUs of no allowlisted card (a Quadro RTX 6000, a GTX 1660, an A100, an ID pci.ids
# lacks), an allowlisted one, and a host function
DEVICES = [("10de", "1e30", "030000"), ("10de", "2184", "030000"), ("10de", "20b0", "030200"),
           ("10de", "fffe", "030000"), ("10de", "26b1", "030000"), ("8086", "a703", "060000")]


@st.composite
def fleets(draw):
    rows = draw(st.lists(st.tuples(st.integers(0, 30), st.sampled_from(DEVICES)), max_size=300))
    return {"server": [f"s{s}" for s, _ in rows], "vendor": [d[0] for _, d in rows],
            "device": [d[1] for _, d in rows], "class": [d[2] for _, d in rows]}


def _per_server(table) -> dict[int, list[str]]:
    out = {}
    for g in range(len(table)):
        got = table.unsupported(g)
        if got:
            out[g] = [unsupported_entry(k, v) for k, v in got.items()]
    return out


@settings(max_examples=150, deadline=None)
@given(fleets(), st.booleans())
def test_all_servers_at_once_equal_server_by_server(columns, names):
    table = gpuclass.audit_table(columns, db=None if names else NO_NAMES)
    assert table.unsupported_lists() == _per_server(table)


def test_a_server_of_two_models_lists_both_in_row_order():
    columns = {"server": ["a", "a", "a", "b"], "vendor": ["10de"] * 4, "device": ["1e30", "2184", "1e30", "2184"],
               "class": ["030000"] * 4}
    table = gpuclass.audit_table(columns, db=NO_NAMES)
    lists = table.unsupported_lists()
    assert lists == _per_server(table)
    assert [e.split("x ", 1)[0] for e in lists[0]] == ["2", "1"] and "1e30" in lists[0][0]
    assert len(lists[1]) == 1 and lists[1][0].startswith("1x ") and "2184" in lists[1][0]


@settings(max_examples=150, deadline=None)
@given(fleets(), st.booleans())
def test_the_typed_column_joins_each_servers_list(columns, names):
    """The typed rows' ``unsupported`` column (made from the distinct pairs, without the
    lists) is each server's list joined, as the flat rows have it."""
    table = gpuclass.audit_table(columns, db=None if names else NO_NAMES)
    lists = table.unsupported_lists()
    want = ["; ".join(lists.get(g, [])) for g in range(len(table))]
    assert table.typed().column("unsupported").to_pylist() == want
    assert table.flat().column("unsupported").to_pylist() == want
    assert table.typed().equals(table.flat().drop_columns(["cards", "reason"]).cast(table.typed().schema))


@settings(max_examples=60, deadline=None)
@given(fleets(), st.booleans())
def test_the_narrow_typed_columns_are_the_typed_ones_with_int32_counts(columns, names):
    """``narrow_typed`` (the Parquet sink's: the counts as the table holds them) is
    ``typed`` but for the counts' int32, and cast to the typed schema is ``typed``."""
    import pyarrow as pa

    from gpuclass.audit.results.columns import COUNT_FIELDS, card_column

    table = gpuclass.audit_table(columns, db=None if names else NO_NAMES)
    typed, narrow = table.typed(), table.narrow_typed()
    counts = {"supported_cards", "slices", "unsupported_gpus", *map(card_column, table.compiled.card_ids)}
    assert narrow.schema.names == typed.schema.names
    for f, g in zip(narrow.schema, typed.schema):
        assert f.type == (pa.int32() if f.name in counts else g.type), f.name
    assert counts < set(COUNT_FIELDS) | {card_column(c) for c in table.compiled.card_ids}
    assert narrow.cast(typed.schema).equals(typed)
