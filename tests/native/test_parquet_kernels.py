"""The Parquet encoder pair (``parquet.pxi`` and its twin ``parquet_py.py``): the same bytes
from both, for any input, and the same errors; and bytes that decode back to the input
(a reference decoder of the format, written here from its specification)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gpuclass._native import twin
from gpuclass.errors import InputError

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

INT64 = st.integers(-2**63, 2**63 - 1)
INTS = st.one_of(
    hnp.arrays(np.int64, st.integers(0, 700), elements=st.integers(0, 9)),
    hnp.arrays(np.int64, st.integers(0, 700), elements=INT64),
    hnp.arrays(np.int32, st.integers(0, 700), elements=st.integers(-2**31, 2**31 - 1)),
    hnp.arrays(np.int32, st.integers(0, 700), elements=st.integers(-400, 400)),
    st.lists(st.integers(0, 40), max_size=700).map(lambda v: np.cumsum(v, dtype=np.int64)),
)


def _uvarint(buf: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[at]
        at += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, at


def _unzigzag(v: int) -> int:
    return (v >> 1) ^ -(v & 1)


def _unpack(buf: bytes, at: int, count: int, width: int) -> list[int]:
    bits = int.from_bytes(buf[at:at + (count * width + 7) // 8], "little")
    return [(bits >> (i * width)) & ((1 << width) - 1) for i in range(count)]


def decode_delta(buf: bytes) -> list[int]:
    """DELTA_BINARY_PACKED, as the format describes it."""
    block, at = _uvarint(buf, 0)
    minis, at = _uvarint(buf, at)
    total, at = _uvarint(buf, at)
    first, at = _uvarint(buf, at)
    out = [_unzigzag(first)] if total else []
    per = block // minis
    while len(out) < total:
        least, at = _uvarint(buf, at)
        least = _unzigzag(least)
        widths = buf[at:at + minis]
        at += minis
        for w in widths:
            if len(out) >= total:
                break
            for d in _unpack(buf, at, per, w):
                if len(out) < total:
                    out.append((out[-1] + least + d + 2**63) % 2**64 - 2**63)
            at += per * w // 8
    assert at == len(buf), "bytes left over"
    return out


def decode_hybrid(buf: bytes, width: int, count: int) -> list[int]:
    """The RLE / bit-packed hybrid, as the format describes it."""
    out: list[int] = []
    at = 0
    while at < len(buf):
        head, at = _uvarint(buf, at)
        if head & 1:
            n = (head >> 1) * 8
            out += _unpack(buf, at, n, width)
            at += (head >> 1) * width
        else:
            size = (width + 7) // 8
            out += [int.from_bytes(buf[at:at + size], "little")] * (head >> 1)
            at += size
    return out[:count]


@SETTINGS
@given(values=INTS)
def test_delta_compiled_equals_twin_and_decodes_back(compiled_core, values):
    got = compiled_core.parquet_delta(values)
    assert got == twin.parquet_delta(values)
    assert decode_delta(got) == values.astype(np.int64).tolist()


@SETTINGS
@given(values=INTS)
def test_dictionary_compiled_equals_twin(compiled_core, values):
    got, want = compiled_core.parquet_dictionary(values), twin.parquet_dictionary(values)
    assert (got is None) == (want is None)
    v = values.astype(np.int64)
    if got is None:  # too wide or too many: by the contract's limits
        assert len(np.unique(v)) > 256 or int(v.max()) - int(v.min()) >= 1 << 16
        return
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    distinct, index = got
    assert distinct.dtype == np.int64 and index.dtype == np.uint8
    assert np.array_equal(distinct, np.unique(v)) and np.array_equal(distinct[index], v)


@SETTINGS
@given(index=hnp.arrays(np.uint8, st.integers(0, 300), elements=st.integers(0, 255)), data=st.data())
def test_hybrid_compiled_equals_twin_and_decodes_back(compiled_core, index, data):
    width = data.draw(st.integers(max(1, int(index.max(initial=0)).bit_length()), 8))
    got = compiled_core.parquet_hybrid(index, width)
    assert got == twin.parquet_hybrid(index, width)
    assert decode_hybrid(got, width, len(index)) == index.tolist()


@SETTINGS
@given(texts=st.lists(st.binary(max_size=6), min_size=1, max_size=60))
def test_text_bounds_compiled_equals_twin(compiled_core, texts):
    starts = np.concatenate([[0], np.cumsum([len(t) for t in texts])]).astype(np.int64)
    data = b"".join(texts)
    got = compiled_core.parquet_text_bounds(starts, data)
    assert got == twin.parquet_text_bounds(starts, data)
    assert (texts[got[0]], texts[got[1]]) == (min(texts), max(texts))
    assert got == (texts.index(min(texts)), texts.index(max(texts)))


def test_bad_arguments_are_the_same_typed_errors(core):
    with pytest.raises(InputError, match="does not fit 2 bits"):
        core.parquet_hybrid(np.array([0, 4], np.uint8), 2)
    with pytest.raises(InputError, match="width must be 1 to 8"):
        core.parquet_hybrid(np.array([0], np.uint8), 9)
    with pytest.raises(InputError, match="expected an integer array"):
        core.parquet_delta(np.array([0.5]))
    with pytest.raises(InputError, match="1-D"):
        core.parquet_dictionary(np.zeros((2, 2), np.int64))
    with pytest.raises(InputError, match="at least one text"):
        core.parquet_text_bounds(np.array([0], np.int64), b"")
    with pytest.raises(InputError, match="must rise"):
        core.parquet_text_bounds(np.array([0, 3, 2], np.int64), b"abc")


def test_edges(core):
    assert core.parquet_dictionary(np.array([], np.int64))[0].tolist() == []
    assert core.parquet_dictionary(np.array([0, 1 << 16], np.int64)) is None  # too wide a range
    assert core.parquet_dictionary(np.arange(257)) is None                    # too many values
    assert core.parquet_dictionary(np.arange(256))[1].tolist() == list(range(256))
    extremes = np.array([2**63 - 1, -2**63, 0, 2**63 - 1], np.int64)
    assert decode_delta(core.parquet_delta(extremes)) == extremes.tolist()  # deltas wrap
    assert decode_delta(core.parquet_delta(np.array([7], np.int64))) == [7]
    assert core.parquet_hybrid(np.zeros(1000, np.uint8), 3) == bytes([0xD0, 0x0F, 0])  # one RLE run
