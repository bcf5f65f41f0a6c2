"""Every name in the bundled pci.ids, and random unknown IDs, equal libpci's.

libpci3 is installed by .ci/run; on a machine without it these tests fail
rather than skip, unless GPUCLASS_ALLOW_NO_LIBPCI=1 says so on purpose.
"""

from __future__ import annotations

import os
import random

import pytest

from gpuclass.db import PciDatabase
from gpuclass.db.locate import bundled_path
from libpci_ref import LibPci, find_libpci

pytestmark = pytest.mark.libpci


@pytest.fixture(scope="module")
def libpci_factory():
    if find_libpci() is None:
        if os.environ.get("GPUCLASS_ALLOW_NO_LIBPCI") == "1":
            pytest.skip("libpci3 not installed and GPUCLASS_ALLOW_NO_LIBPCI=1")
        pytest.fail("libpci3 is not installed (apt-get install libpci3), the reference is missing")
    made = []

    def make(path):
        ref = LibPci(path)
        ref.load()
        made.append(ref)
        return ref

    yield make
    for ref in made:
        ref.close()


def _every_key(db, table):
    return [int(k) for k in db.arrays()[f"{table}_keys"]]


def test_every_bundled_name_equals_libpci(libpci_factory):
    path = bundled_path()
    ref = libpci_factory(path)
    db = PciDatabase.from_bytes(path.read_bytes(), source=str(path))
    mismatches = []

    def check(what, ours, theirs):
        if ours != theirs:
            mismatches.append((what, ours, theirs))

    for v in _every_key(db, "vendor"):
        check(("vendor", v), db.vendor_name(v), ref.vendor(v))
        check(("subvendor", v), db.subvendor_name(v), ref.subvendor(v))
    for key in _every_key(db, "device"):
        v, d = key >> 16, key & 0xFFFF
        check(("device", v, d), db.device_name(v, d), ref.device(v, d))
        # subsystem equal to the device falls back to the device's name
        check(("subsys=dev", v, d), db.subsystem_name(v, d, v, d), ref.subsystem(v, d, v, d))
    for key in _every_key(db, "subsys"):
        ids = (key >> 48, (key >> 32) & 0xFFFF, (key >> 16) & 0xFFFF, key & 0xFFFF)
        check(("subsystem",) + ids, db.subsystem_name(*ids), ref.subsystem(*ids))
    classes = _every_key(db, "class")
    for base in classes:
        for sub in range(256):
            name = db.subclass_name(base, sub)
            expected = ref.cls(base, sub)
            if name is None:  # libpci falls back to the class and prints the number
                fallback = db.class_name(base, sub)
                name = None if fallback is None else f"{fallback} [{base:02x}{sub:02x}]"
            check(("class", base, sub), name, expected)
    for key in _every_key(db, "subclass"):
        base, sub = key >> 8, key & 0xFF
        for progif in range(256):
            check(("progif", base, sub, progif), db.progif_name(base, sub, progif), ref.progif(base, sub, progif))
    assert not mismatches, mismatches[:20]
    assert len(_every_key(db, "subsys")) > 15000  # the comparison really covered the file


def test_random_unknown_ids_equal_libpci(libpci_factory):
    path = bundled_path()
    ref = libpci_factory(path)
    db = PciDatabase.from_bytes(path.read_bytes())
    rng = random.Random(20260822)
    devices = _every_key(db, "device")
    for _ in range(4000):
        if rng.random() < 0.5:  # a known device with a random subsystem
            key = rng.choice(devices)
            v, d = key >> 16, key & 0xFFFF
        else:
            v, d = rng.randrange(0x10000), rng.randrange(0x10000)
        sv, sd = rng.choice([(v, d), (rng.randrange(0x10000), rng.randrange(0x10000)), (0x10DE, rng.randrange(0x10000))])
        assert db.vendor_name(v) == ref.vendor(v)
        assert db.device_name(v, d) == ref.device(v, d)
        assert db.subsystem_name(v, d, sv, sd) == ref.subsystem(v, d, sv, sd), (v, d, sv, sd)
    for _ in range(500):
        base, sub = rng.randrange(256), rng.randrange(256)
        ours = db.subclass_name(base, sub)
        if ours is None:
            fb = db.class_name(base, sub)
            ours = None if fb is None else f"{fb} [{base:02x}{sub:02x}]"
        assert ours == ref.cls(base, sub)


def test_generic_subsystems_and_zero_ids_equal_libpci(tmp_path, libpci_factory):
    text = (
        "0000  Zero vendor\n"
        "\t0000  Zero device\n"
        "\t\t1af4 1100  zero-vendor specific\n"
        "1af4  Red Hat, Inc.\n"
        "\t1041  Virtio network device\n"
        "\t\t1af4 1100  specific wins over generic\n"
        "10de  NVIDIA\n"
        "\t0000  device zero of NVIDIA\n"
        "\t\t1af4 1100  never consulted: device 0000\n"
        "S 1af4\n"
        "\t1100  QEMU Virtual Machine\n"
        "\t0000  generic zero\n"
    )
    path = tmp_path / "generic.ids"
    path.write_text(text)
    ref = libpci_factory(path)
    db = PciDatabase.from_bytes(path.read_bytes())
    cases = [(v, d, sv, sd)
             for v in (0x0000, 0x1AF4, 0x10DE, 0x8086)
             for d in (0x0000, 0x1041, 0x0001)
             for sv, sd in ((0x1AF4, 0x1100), (0x1AF4, 0x0000), (v, d), (0x1234, 0x5678))]
    for ids in cases:
        assert db.subsystem_name(*ids) == ref.subsystem(*ids), ids
