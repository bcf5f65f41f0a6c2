"""The array lookups give, element by element, what the scalar lookups give, fallbacks included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass.db import PciDatabase
from gpuclass.errors import InputError

TEXT = (
    b"0000  Zero vendor\n\t0000  Zero device\n\t\t1af4 1100  zero-vendor specific\n"
    b"10de  NVIDIA Corporation\n\t1e30  TU102GL [Quadro RTX 6000/8000]\n"
    b"\t\t10de 12ba  Quadro RTX 6000\n\t\t10de 12bb  Quadro RTX 8000\n\t27b0  AD104GL\n"
    b"1af4  Red Hat, Inc.\n\t1041  Virtio network device\n\t\t1af4 1100  specific wins over generic\n"
    b"S 1af4\n\t1100  QEMU Virtual Machine\n\t0000  generic zero\n"
    b"C 01  Mass storage controller\n\t01  IDE interface\n\t\t05  PCI native mode-only controller\n"
    b"C 03  Display controller\n\t00  VGA compatible controller\n\t\t00  VGA controller\n\t02  3D controller\n"
)
VENDORS = [0x0000, 0x10DE, 0x1AF4, 0x8086]
DEVICES = [0x0000, 0x1E30, 0x27B0, 0x1041, 0x0001]
SUBS = [0x0000, 0x1100, 0x12BA, 0x12BB, 0x1E30, 0x1041]


@pytest.fixture(scope="module")
def db():
    return PciDatabase.from_bytes(TEXT)


ids = st.sampled_from(VENDORS) | st.integers(0, 0xFFFF)
devs = st.sampled_from(DEVICES) | st.integers(0, 0xFFFF)
subs = st.sampled_from(SUBS) | st.integers(0, 0xFFFF)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(ids, devs, ids, subs), max_size=30), same=st.lists(st.booleans(), max_size=30))
def test_subsystem_names_equal_the_scalar_lookup(db, rows, same):
    # some rows name the device itself as subsystem: the last fallback
    rows = [(v, d, v, d) if s else (v, d, sv, sd) for (v, d, sv, sd), s in zip(rows, same + [False] * 30)]
    cols = [np.array(c, dtype=np.uint16) for c in zip(*rows)] if rows else [np.array([], np.uint16)] * 4
    assert db.subsystem_names(*cols) == [db.subsystem_name(*r) for r in rows]
    assert db.vendor_names(cols[2]) == [db.subvendor_name(r[2]) for r in rows]
    assert db.device_names(cols[0], cols[1]) == [db.device_name(r[0], r[1]) for r in rows]


@settings(max_examples=150, deadline=None)
@given(codes=st.lists(st.sampled_from([0x010100, 0x01018A, 0x010170, 0x030000, 0x030200, 0x037F00, 0x420000])
                      | st.integers(0, 0xFFFFFF), max_size=30))
def test_class_and_progif_names_equal_the_scalar_lookups(db, codes):
    arr = np.array(codes, dtype=np.uint32)
    assert db.class_names(arr) == [db.class_name(c >> 16, (c >> 8) & 0xFF) for c in codes]
    assert db.progif_names(arr) == [db.progif_name(c >> 16, (c >> 8) & 0xFF, c & 0xFF) for c in codes]


def test_every_fallback_is_reached(db):
    names = db.subsystem_names([0x1AF4, 0x10DE, 0x0000, 0x1AF4, 0x10DE], [0x1041, 0x27B0, 0x0000, 0x1041, 0x27B0],
                               [0x1AF4, 0x1AF4, 0x1AF4, 0x1AF4, 0x10DE], [0x1100, 0x1100, 0x1100, 0x1041, 0x0001])
    assert names == ["specific wins over generic", "QEMU Virtual Machine", "QEMU Virtual Machine",
                     "Virtio network device", None]
    assert db.class_names([0x030200, 0x038000, 0x420000]) == ["3D controller", "Display controller [0380]", None]
    assert db.progif_names([0x010105, 0x01018A, 0x010170, 0x030000]) == [
        "PCI native mode-only controller", "Master SecP PriP", None, "VGA controller"]
    assert db.names("gensub", db.gensub_index([0x1AF4, 0x1AF4], [0x0000, 0x0001])) == ["generic zero", None]
    assert db.names("class", db.base_class_index([0x030200, 0x420000])) == ["Display controller", None]
    assert db.names("progif", db.progif_index([0x030000])) == ["VGA controller"]


def test_array_lookups_check_their_arguments(db):
    with pytest.raises(InputError, match="subdevice"):
        db.subsystem_names([1], [1], [1], [1, 2])
    with pytest.raises(InputError, match="class_code"):
        db.class_names([0x1000000])
    assert db.class_names([]) == [] and db.subsystem_names([], [], [], []) == []
