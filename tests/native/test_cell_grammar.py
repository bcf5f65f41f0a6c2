"""One hex-cell grammar: the compiled cell parser, its twin and ``gpuclass.ids.cell_parts``.

``cell_parts`` is the rule (whitespace as ``str.isspace`` defines it stripped, an optional
``[ ]``, an optional ``0x``, 1..maxdigits ASCII hex digits).  Both cores' ``parse_id_cells``
and ``audit_rows`` must give every cell the rule's answer, whatever its text: drawn from all
of Unicode, from bytes that are not UTF-8, and from cells built to sit on the rule's edges
(every whitespace character around real IDs, brackets, 0x, too many digits, look-alikes of
blanks and digits), in plain, 64-bit-offset, binary and dictionary columns.
"""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

from gpuclass import ids  # noqa: E402
from gpuclass._native import twin  # noqa: E402
from gpuclass._native.contract import audit as A  # noqa: E402
from gpuclass.errors import InputError  # noqa: E402
from gpuclass.policy import compile_policy  # noqa: E402

SPACES = [chr(c) for c in range(0x110000) if chr(c).isspace()]
# characters next to the rule's edges: not whitespace, not digits, though some look so
NEAR = ["\u200b", "\u180e", "\ufeff", "\u00ad", "\u2060", "\x00", "\x1b", "\x7f", "_", "+", "-", "x",
        "X", "[", "]", "\u0660", "\uff10", "\uff41", "\u00e9", "\U0001f600"]
DIGITS = "0123456789abcdefABCDEF"
# bytes outside UTF-8 (lone continuation bytes, cut-off sequences, an encoded surrogate,
# an overlong space) and the whitespace characters' own encodings beside them
ODD_BYTES = [b"\x80", b"\x85", b"\xa0", b"\xc2", b"\xe2\x80", b"\xe3\x80", b"\xed\xa0\x80", b"\xc0\xa0",
             b"\xff", b"\xf0\x9f"] + [s.encode() for s in SPACES]
SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@st.composite
def structured_cell(draw):
    """A cell near the rule's edges: whitespace or look-alikes, brackets, 0x, 0 to 9 digits."""
    pad = st.text(st.sampled_from(SPACES + NEAR[:6]), max_size=3)
    body = draw(st.sampled_from(["", "0x", "0X", "x", "0"])) + draw(st.text(st.sampled_from(DIGITS), max_size=9))
    if draw(st.booleans()):
        body = draw(st.sampled_from(["[", "", "[ "])) + body + draw(st.sampled_from(["]", "", " ]"]))
    if draw(st.integers(0, 5)) == 0:  # a character inside
        k = draw(st.integers(0, len(body)))
        body = body[:k] + draw(st.sampled_from(SPACES + NEAR)) + body[k:]
    return draw(pad) + body + draw(pad)


@st.composite
def odd_bytes_cell(draw):
    """A structured cell's UTF-8 with bytes outside UTF-8 put in or around it."""
    raw = draw(structured_cell()).encode()
    for _ in range(draw(st.integers(0, 2))):
        k = draw(st.integers(0, len(raw)))
        raw = raw[:k] + draw(st.sampled_from(ODD_BYTES)) + raw[k:]
    return raw


text_cells = st.lists(st.one_of(st.none(), st.text(max_size=12), structured_cell()), max_size=60)
byte_cells = st.lists(st.one_of(st.none(), st.binary(max_size=12), odd_bytes_cell()), max_size=60)
FIELD = st.sampled_from(A.FIELDS)


def _rule(value, field):
    """What the grammar says of one cell of ``field`` (``(state, value)``; class rule applied)."""
    if value is None:
        return ids.CELL_MISSING, 0
    state, v, digits = ids.cell_parts(value, A.WIDTHS[A.FIELDS.index(field)])
    if state == ids.CELL_OK and field == "class":
        v = ids.class_value(v, digits)
    return state, v


@st.composite
def column_of_cells(draw):
    """``(values, arrow array)``: text cells as string, large_string or a dictionary of
    either; byte cells as binary, large_binary or a dictionary; a slice that starts inside."""
    if draw(st.booleans()):
        values = draw(text_cells)
        kind = draw(st.sampled_from([pa.string(), pa.large_string(), "dict", "dict large"]))
        base = pa.large_string() if kind in (pa.large_string(), "dict large") else pa.string()
    else:
        values = draw(byte_cells)
        kind = draw(st.sampled_from([pa.binary(), pa.large_binary(), "dict"]))
        base = pa.large_binary() if kind == pa.large_binary() else pa.binary()
    arr = pa.array(values, base)
    if isinstance(kind, str):
        arr = arr.dictionary_encode()
    if values and draw(st.booleans()):
        cut = draw(st.integers(0, len(values)))
        values, arr = values[cut:], arr.slice(cut)
    return values, arr


@SETTINGS
@given(cells=column_of_cells(), field=FIELD)
def test_both_cores_parse_every_cell_as_the_rule_says(core, cells, field):
    values, arr = cells
    state, value = core.parse_id_cells(A.column_of(arr, field), field)
    assert state.dtype == np.uint8 and value.dtype == np.uint32
    assert list(zip(state.tolist(), value.tolist())) == [_rule(v, field) for v in values]


@SETTINGS
@given(cells=column_of_cells(), field=FIELD)
def test_compiled_cells_equal_the_twins_and_cell_value(compiled_core, cells, field):
    _, arr = cells
    col = A.column_of(arr, field)
    a, b = compiled_core.parse_id_cells(col, field), twin.parse_id_cells(col, field)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    width = A.WIDTHS[A.FIELDS.index(field)]
    assert a[0].tolist() == [A.cell_value(col, i, width)[0] for i in range(col.n)]


@settings(max_examples=500, deadline=None)
@given(text=st.one_of(st.text(), structured_cell()), width=st.integers(1, 8))
def test_a_cell_reads_the_same_as_text_and_as_its_utf8(text, width):
    assert ids.cell_parts(text, width) == ids.cell_parts(text.encode(), width)
    stripped = text.strip()
    state = ids.cell_parts(text, width)[0]
    assert (state == ids.CELL_MISSING) == (stripped == "")
    # id_value and parse_id are the same grammar
    want = ids.cell_parts(text, 4)
    assert ids.id_value(text) == (want[1] if want[0] == ids.CELL_OK else None)
    if want[0] == ids.CELL_OK:
        assert ids.parse_id(text, "vendor") == want[1]
    else:
        with pytest.raises(InputError, match="vendor"):
            ids.parse_id(text, "vendor")


def test_every_code_point_is_whitespace_exactly_where_python_says(compiled_core):
    """Around an ID, each character of Unicode (surrogates too, as the bytes a surrogate
    would be) is stripped where ``str.isspace`` holds and makes the cell malformed where
    it does not, before and after the digits, in the compiled core."""
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for cells in ([c + "10de" for c in chars], ["10de" + c for c in chars], [c + c + "0x1b80" + c for c in chars]):
        state, value = compiled_core.parse_id_cells(A.column_of(pa.array(cells, pa.string()), "vendor"), "vendor")
        ok = state == ids.CELL_OK
        assert ok.tolist() == [c.isspace() for c in chars]
        assert set(value[ok].tolist()) <= {0x10DE, 0x1B80}
    surrogates = [chr(c).encode("utf-8", "surrogatepass") + b"10de" for c in range(0xD800, 0xE000)]
    state, _ = compiled_core.parse_id_cells(A.column_of(pa.array(surrogates, pa.binary()), "vendor"), "vendor")
    assert (state == ids.CELL_BAD).all()
    assert len(SPACES) == 29 and all(ids.cell_parts(s + "10de" + s, 4) == (0, 0x10DE, 4) for s in SPACES)


def test_blanks_at_the_cells_edges_are_stripped_in_both_cores(core):
    """The cells of the issue (Unicode spaces that one path stripped and another flagged):
    every door reads them as their ID now."""
    cells = ["\u00a010de", "\u200310de", "\u300010de", "10de\u202f", "\u200910de", "\u008510de", "10de\u2028",
             "\x1c10de\x1f", "\u00a0[0x10DE]\u3000", "\u00a0", "\u3000 \u2029"]
    want = [(ids.CELL_OK, 0x10DE)] * 9 + [(ids.CELL_MISSING, 0)] * 2
    for arr in (pa.array(cells), pa.array(cells, pa.large_string()), pa.array(cells).dictionary_encode()):
        state, value = core.parse_id_cells(A.column_of(arr, "vendor"), "vendor")
        assert list(zip(state.tolist(), value.tolist())) == want
    assert [ids.cell_parts(c, 4)[:2] for c in cells] == want


@pytest.mark.parametrize("cells,want", [
    (["0300", "030000", "0x0302", "[0302]", "3", "03000", "0c0330", "0403"],
     [0x030000, 0x030000, 0x030200, 0x030200, 0x000300, 0x003000, 0x0C0330, 0x040300]),
    ([0x0300, 0x030000, 0xFFFF, 0x10000, 0], [0x030000, 0x030000, 0xFFFF00, 0x010000, 0]),
])
def test_the_class_digit_rule(core, cells, want):
    """A class cell of up to 4 digits (or an integer up to 0xFFFF) is base class and
    subclass; 6 digits (or a larger integer) include the prog-if."""
    state, value = core.parse_id_cells(A.column_of(pa.array(cells), "class"), "class")
    assert (state == ids.CELL_OK).all() and value.tolist() == want
    state, value = core.parse_id_cells(A.column_of(pa.array(cells), "class"), "device")  # no class rule
    assert [v for s, v in zip(state.tolist(), value.tolist()) if s == ids.CELL_OK] == \
        [ids.cell_parts(c, 4)[1] if isinstance(c, str) else c for c in cells
         if (ids.cell_parts(c, 4)[0] if isinstance(c, str) else int(c > 0xFFFF) * 2) == ids.CELL_OK]


@SETTINGS
@given(cells=st.lists(st.tuples(st.integers(0, 0xFFFFFF), st.sampled_from([-1, 1, 2, 3, 4, 5, 6])), max_size=50),
       dictionary=st.booleans())
def test_both_cores_apply_the_class_rule_as_class_value_says(core, cells, dictionary):
    """A class cell written with ``digits`` digits (zero-padded; -1: an integer cell) reads
    as :func:`gpuclass.ids.class_value` of its value, in text, integer and dictionary columns."""
    cells = [(v % (16 ** d), d) if d > 0 else (v, d) for v, d in cells]
    texts = pa.array([f"{v:0{d}x}" for v, d in cells if d > 0], pa.string())
    ints = pa.array([v for v, d in cells if d < 0], pa.int64())
    for arr, group in ((texts, [c for c in cells if c[1] > 0]), (ints, [c for c in cells if c[1] < 0])):
        if dictionary:
            arr = arr.dictionary_encode()
        state, value = core.parse_id_cells(A.column_of(arr, "class"), "class")
        assert (state == ids.CELL_OK).all()
        assert value.tolist() == [ids.class_value(v, d) for v, d in group]


@SETTINGS
@given(servers=st.lists(st.one_of(st.none(), st.text(st.sampled_from(SPACES + NEAR[:4] + ["a"]), max_size=4)),
                        max_size=40))
def test_a_server_of_whitespace_names_no_server_in_both_cores(core, servers):
    """Server keys take the same whitespace rule: a cell of only ``str.isspace`` characters
    (or none) names no server, and is a run of its own."""
    n = len(servers)
    cols = [pa.array(servers, pa.string())] + [pa.array(["10de"] * n)] * 5
    runs = core.audit_rows(compile_policy().tables, [A.column_of(c, "x") for c in cols], 7)
    nameless = [s is None or s.strip() == "" for s in servers]
    starts = runs.starts[:-1].tolist()
    assert runs.nameless.tolist() == [nameless[i] for i in starts]
    assert all(i in starts and i + 1 in runs.starts.tolist() for i in range(n) if nameless[i])


@SETTINGS
@given(data=st.data())
def test_the_row_pass_reads_cells_as_parse_id_cells_does(core, data):
    """``audit_rows`` flags exactly the rows whose vendor cell the grammar calls missing or
    malformed, with the same state."""
    values, arr = data.draw(column_of_cells())
    n = len(values)
    cols = [pa.array(["s"] * n), arr, pa.array(["27b0"] * n), pa.array(["0300"] * n),
            pa.array([None] * n, pa.string()), pa.array([None] * n, pa.string())]
    runs = core.audit_rows(compile_policy().tables, [A.column_of(c, "x") for c in cols], 7)
    codes = dict(zip(runs.problem_rows.tolist(), runs.problem_codes.tolist()))
    state, _ = core.parse_id_cells(A.column_of(arr, "vendor"), "vendor")
    assert codes == {i: int(s) for i, s in enumerate(state.tolist()) if s != ids.CELL_OK}


def test_parse_id_cells_checks_its_arguments(core):
    col = A.column_of(pa.array(["10de"]), "vendor")
    with pytest.raises(InputError, match="field"):
        core.parse_id_cells(col, "model")
    with pytest.raises(InputError, match="Column"):
        core.parse_id_cells(["10de"], "vendor")
    broken = col._replace(offsets=np.array([0, 99], dtype=np.int32))
    with pytest.raises(InputError, match="string buffers"):
        core.parse_id_cells(broken, "vendor")
    state, value = core.parse_id_cells(A.absent(3), "device")
    assert state.tolist() == [ids.CELL_MISSING] * 3 and value.tolist() == [0, 0, 0]
    state, value = core.parse_id_cells(A.column_of(pa.array([], pa.string()), "x"), "class")
    assert state.shape == value.shape == (0,)
