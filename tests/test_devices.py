"""DeviceTable: construction, validation, masks, concatenation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass.devices import (
    FLAG_INVALID,
    FLAG_VF,
    NO_ADDRESS,
    NUMERIC_COLUMNS,
    DeviceTable,
    flag_names,
)
from gpuclass.errors import InputError


def _card(**extra):
    cols = dict(domain=[0, 0, 0, 0, 0], bus=[1, 1, 1, 1, 2], slot=[0, 0, 0, 0, 0],
                function=[0, 1, 2, 3, 0], vendor=[0x10DE] * 5,
                device=[0x1E30, 0x10F7, 0x1AD6, 0x1AD7, 0x2BB5],
                class_code=[0x030000, 0x040300, 0x0C0330, 0x0C8000, 0x030200])
    cols.update(extra)
    return DeviceTable.from_columns("test", **cols)


def test_dtypes_and_defaults():
    t = _card()
    for name, (dtype, default) in NUMERIC_COLUMNS.items():
        assert getattr(t, name).dtype == dtype, name
    assert t.revision.tolist() == [-1] * 5 and t.numa_node.tolist() == [-1] * 5
    assert not t.has_subsystem.any()
    assert t.driver.tolist() == [None] * 5 and t.vendor_text is None


def test_masks():
    t = _card()
    assert t.gpu_mask().tolist() == [True, False, False, False, True]
    assert t.companion_mask().tolist() == [False, True, True, True, False]
    assert not t.vf_mask().any()


def test_flagged_gpu_is_no_gpu_and_has_no_companions():
    t = _card(problems=["bad", None, None, None, None])
    assert t.flags[0] == FLAG_INVALID
    assert t.gpu_mask().tolist() == [False, False, False, False, True]
    assert not t.companion_mask().any()


def test_companions_need_the_same_domain():
    t = DeviceTable.from_columns(domain=[0, 1], bus=[1, 1], slot=[0, 0], function=[0, 1],
                                 vendor=[0x10DE] * 2, device=[1, 2], class_code=[0x030000, 0x040300])
    assert not t.companion_mask().any()


def test_rows_without_address_are_no_companions():
    t = DeviceTable.from_columns(vendor=[0x10DE] * 2, device=[1, 2], class_code=[0x030000, 0x040300])
    assert t.addresses() == ["-", "-"]
    assert t.gpu_mask().tolist() == [True, False] and not t.companion_mask().any()


@pytest.mark.parametrize("bad, match", [
    (dict(vendor=[0x10000] * 5), "outside"),
    (dict(class_code=[0x1000000] * 5), "outside"),
    (dict(revision=[256] * 5), "outside"),
    (dict(revision=[-2] * 5), "outside"),
    (dict(device=[1, 2]), "length"),
    (dict(vendor=["10de"] * 5), "integer"),
    (dict(driver=[1, None, None, None, None]), "str or None"),
    (dict(colour=[1] * 5), "unknown"),
])
def test_validation(bad, match):
    with pytest.raises(InputError, match=match):
        _card(**bad)


def test_missing_required_column():
    with pytest.raises(InputError, match="missing"):
        DeviceTable.from_columns(vendor=[1], device=[2])


def test_concat_take_sort():
    a = _card(vendor_text=["NVIDIA"] * 5)
    b = DeviceTable.from_columns("b", domain=[0], bus=[0], slot=[0], function=[0], vendor=[0x8086],
                                 device=[0xA700], class_code=[0x060000], flags=[FLAG_VF])
    c = DeviceTable.concat([a, b])
    assert len(c) == 6 and c.source == "test+b"
    assert c.vendor_text.tolist() == ["NVIDIA"] * 5 + [None]
    s = c.sorted()
    assert s.addresses()[0] == "0000:00:00.0" and s.vf_mask().tolist() == [True] + [False] * 5
    assert s.take(s.gpu_mask()).device.tolist() == [0x1E30, 0x2BB5]
    with pytest.raises(InputError, match="mask"):
        c.take(np.ones(2, dtype=bool))
    assert len(DeviceTable.concat([])) == 0


def test_addresses_print_wide_domains():
    t = DeviceTable.from_columns(domain=[0x10000, 0x100000, 0xFFFFFFFF], bus=[0xE1, 1, 0xFF],
                                 slot=[0, 0x1F, 0], function=[0, 7, NO_ADDRESS],
                                 vendor=[1, 2, 3], device=[1, 2, 3], class_code=[0, 0, 0])
    assert t.addresses() == ["10000:e1:00.0", "100000:01:1f.7", "-"]


def test_records_and_flag_names():
    t = _card(revision=[0xA1] * 5, has_subsystem=[True] * 5, subvendor=[0x10DE] * 5,
              subdevice=[0x12BA] * 5)
    rec = t.to_records()[0]
    assert rec["slot"] == "0000:01:00.0" and (rec["svendor"], rec["sdevice"]) == ("10de", "12ba")
    assert rec["class"] == "0300" and rec["progif"] == "00" and rec["rev"] == "a1"
    assert rec["numa_node"] is None and rec["vendor_name"] is None
    assert flag_names(FLAG_VF | FLAG_INVALID) == ["vf", "invalid"]


def test_equals_and_diff():
    a, b = _card(), _card(revision=[1, -1, -1, -1, -1])
    assert a.equals(_card()) and not a.equals(b)
    assert a.diff(b) == ["row 0 revision: np.int16(-1) != np.int16(1)"]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 31),
                          st.integers(0, 7), st.sampled_from([0x030000, 0x030200, 0x040300,
                                                              0x020000, 0x0C0330])),
                max_size=30))
def test_companion_mask_matches_a_naive_definition(rows):
    t = DeviceTable.from_columns(
        domain=[r[0] for r in rows], bus=[r[1] for r in rows], slot=[r[2] for r in rows],
        function=[r[3] for r in rows], vendor=[0x10DE] * len(rows), device=[0] * len(rows),
        class_code=[r[4] for r in rows])
    gpu_slots = {r[:3] for r in rows if r[4] >> 8 in (0x0300, 0x0302)}
    want = [r[4] >> 8 not in (0x0300, 0x0302) and r[:3] in gpu_slots for r in rows]
    assert t.companion_mask().tolist() == want
