"""Every name and every verdict of the database equals libpci's: recorded, and live where installed.

``source`` is ``recorded`` (tests/reference/libpci.json.xz, always) or ``live``
(libpci3 through ctypes; skipped when it is not installed, unless
GPUCLASS_REQUIRE_PCIUTILS=1 makes that a failure).  Names are compared as a
UTF-8 reader of libpci's output shows them (``recorded.as_shown``).
"""

from __future__ import annotations

import numpy as np
import pytest
import recorded
from libpci_ref import PROBES, Names, find_libpci, record_bundled, record_probe

from gpuclass.db import PciDatabase
from gpuclass.db.locate import bundled_path
from gpuclass.errors import PciIdsError

pytestmark = pytest.mark.libpci


@pytest.fixture(scope="module")
def db() -> PciDatabase:
    path = bundled_path()
    return PciDatabase.from_bytes(path.read_bytes(), source=str(path))


def _live_or_missing():
    if find_libpci() is None:
        recorded.missing("libpci3", "apt-get install libpci3")


@pytest.fixture(scope="module", params=["recorded", "live"])
def bundled(request, db):
    """libpci's answers for the bundled pci.ids."""
    if request.param == "recorded":
        return recorded.libpci_answers()["bundled"]
    _live_or_missing()
    ref = Names(bundled_path())
    ref.load()
    try:
        return record_bundled(ref, db)
    finally:
        ref.close()


@pytest.fixture(params=["recorded", "live"])
def probe(request, tmp_path):
    """libpci's verdict and names for one probe text: ``probe(name)``."""
    if request.param == "recorded":
        return lambda name: recorded.libpci_answers()["probes"][name]
    _live_or_missing()
    return lambda name: record_probe(PROBES[name], tmp_path)


def _shown(names):
    return [recorded.as_shown(n) for n in names]


def _split64(keys):
    k = np.array(keys, dtype=np.uint64)
    return [((k >> np.uint64(s)) & np.uint64(0xFFFF)).astype(np.uint16) for s in (48, 32, 16, 0)]


def test_recorded_keys_are_the_bundled_entries(db):
    """The recording answers for exactly the entries of this pci.ids."""
    rec = recorded.libpci_answers()["bundled"]
    arrays = db.arrays()
    for table, key in (("vendor", "vendor"), ("device", "device"), ("subsys", "subsystem")):
        assert rec[key]["keys"] == arrays[f"{table}_keys"].tolist(), table
    assert rec["progif"]["keys"] == arrays["subclass_keys"].tolist()
    assert len(rec["subsystem"]["keys"]) > 15000  # the comparison really covers the file


def test_every_bundled_name_equals_libpci(bundled, db):
    mismatches = []

    def check(what, ours, theirs):
        theirs = _shown(theirs)
        mismatches.extend((what, k, o, t) for k, o, t in zip(keys, ours, theirs) if o != t)

    keys = bundled["vendor"]["keys"]
    check("vendor", [db.vendor_name(v) for v in keys], bundled["vendor"]["names"])
    check("subvendor", [db.subvendor_name(v) for v in keys], bundled["subvendor"]["names"])
    keys = bundled["device"]["keys"]
    check("device", [db.device_name(k >> 16, k & 0xFFFF) for k in keys], bundled["device"]["names"])
    check("subsystem=device", [db.subsystem_name(k >> 16, k & 0xFFFF, k >> 16, k & 0xFFFF) for k in keys],
          bundled["subsystem_self"]["names"])
    keys = bundled["subsystem"]["keys"]
    check("subsystem", [db.subsystem_name(k >> 48, (k >> 32) & 0xFFFF, (k >> 16) & 0xFFFF, k & 0xFFFF)
                        for k in keys], bundled["subsystem"]["names"])
    keys = [(b, s) for b in range(256) for s in range(256)]
    check("class", [db.class_name(b, s) for b, s in keys], [n for row in bundled["class"] for n in row])
    keys = [(k, p) for k in bundled["progif"]["keys"] for p in range(256)]
    check("progif", [db.progif_name(k >> 8, k & 0xFF, p) for k, p in keys],
          [n for row in bundled["progif"]["names"] for n in row])
    assert not mismatches, mismatches[:20]


def test_every_bundled_name_equals_libpci_through_the_array_lookups(bundled, db):
    """The vectorized lookups, fallbacks included, answer what libpci answers."""
    vendors = np.array(bundled["vendor"]["keys"], dtype=np.uint16)
    assert db.vendor_names(vendors) == _shown(bundled["vendor"]["names"])
    assert db.vendor_names(vendors) == _shown(bundled["subvendor"]["names"])
    dev = np.array(bundled["device"]["keys"], dtype=np.uint32)
    v, d = (dev >> 16).astype(np.uint16), (dev & 0xFFFF).astype(np.uint16)
    assert db.device_names(v, d) == _shown(bundled["device"]["names"])
    assert db.subsystem_names(v, d, v, d) == _shown(bundled["subsystem_self"]["names"])
    assert db.subsystem_names(*_split64(bundled["subsystem"]["keys"])) == _shown(bundled["subsystem"]["names"])
    codes = (np.arange(256 * 256, dtype=np.uint32) << np.uint32(8))
    assert db.class_names(codes) == _shown([n for row in bundled["class"] for n in row])
    sub = np.repeat(np.array(bundled["progif"]["keys"], dtype=np.uint32), 256)
    codes = (sub << np.uint32(8)) | np.tile(np.arange(256, dtype=np.uint32), len(bundled["progif"]["keys"]))
    assert db.progif_names(codes) == _shown([n for row in bundled["progif"]["names"] for n in row])


def test_unknown_ids_equal_libpci(bundled, db):
    unknown = bundled["unknown"]
    ids = unknown["ids"]
    assert [db.vendor_name(i[0]) for i in ids] == _shown(unknown["vendor"])
    assert [db.device_name(i[0], i[1]) for i in ids] == _shown(unknown["device"])
    assert [db.subvendor_name(i[2]) for i in ids] == _shown(unknown["subvendor"])
    assert [db.subsystem_name(*i) for i in ids] == _shown(unknown["subsystem"])
    cols = [np.array(c, dtype=np.uint16) for c in zip(*ids)]
    assert db.vendor_names(cols[0]) == _shown(unknown["vendor"])
    assert db.device_names(cols[0], cols[1]) == _shown(unknown["device"])
    assert db.subsystem_names(*cols) == _shown(unknown["subsystem"])
    # the sample reaches every fallback: a 0000 vendor or device, the device's own name
    assert any(v == 0 or d == 0 for v, d, _, _ in ids)
    assert any(v == sv and d == sd and n is not None for (v, d, sv, sd), n in zip(ids, unknown["subsystem"]))


_NAMES = {"vendor": "vendor_name", "device": "device_name", "subsystem": "subsystem_name",
          "class": "class_name", "progif": "progif_name"}


def _vector(db, kind, args):
    if kind == "vendor":
        return db.vendor_names([args[0]])[0]
    if kind == "device":
        return db.device_names([args[0]], [args[1]])[0]
    if kind == "subsystem":
        return db.subsystem_names(*([a] for a in args))[0]
    if kind == "class":
        return db.class_names([args[0] << 16 | args[1] << 8])[0]
    return db.progif_names([args[0] << 16 | args[1] << 8 | args[2]])[0]


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe_verdict_and_names_equal_libpci(probe, name):
    """What libpci rejects is rejected at the same line; what it accepts is named the same."""
    answer = probe(name)
    text = PROBES[name]
    assert recorded.as_shown(answer["text"]) == text.decode("utf-8", "replace")
    if answer["error"] is not None:
        with pytest.raises(PciIdsError) as info:
            PciDatabase.from_bytes(text, source="probe.ids")
        assert info.value.line == answer["error"]["line"], (info.value, answer["error"])
        return
    db = PciDatabase.from_bytes(text, source="probe.ids")
    for kind, args, theirs in answer["lookups"]:
        theirs = recorded.as_shown(theirs)
        assert getattr(db, _NAMES[kind])(*args) == theirs, (kind, args)
        assert _vector(db, kind, args) == theirs, (kind, args)


def test_every_recorded_probe_is_probed():
    assert sorted(recorded.libpci_answers()["probes"]) == sorted(PROBES)


def test_lenient_mode_flags_what_it_keeps_but_libpci_accepts_silently():
    latin1 = PciDatabase.from_bytes(PROBES["latin1-names"], strict=False, source="l1.ids")
    assert latin1.skipped == []
    assert [(f.line, f.reason.split(":")[0]) for f in latin1.flagged] == [
        (1, "vendor name"), (2, "device name"), (3, "subsystem name"), (6, "generic subsystem name"),
        (7, "class name"), (8, "subclass name"), (9, "prog-if name")]
    assert all(f.kept and "not UTF-8" in f.reason for f in latin1.flagged)
    assert latin1.device_name(0x10DE, 0x1B80) == "Dr\ufffdger GP104"
    strict = PciDatabase.from_bytes(PROBES["latin1-names"], source="l1.ids")
    assert strict.flagged == [] and strict.device_name(0x10DE, 0x1B80) == "Dr\ufffdger GP104"
    progif = PciDatabase.from_bytes(PROBES["progif-under-class"], strict=False)
    assert [(f.line, f.kept) for f in progif.flagged] == [(2, True)]
    assert "subclass 00" in progif.flagged[0].reason
    assert progif.progif_name(0x03, 0x00, 0x01) == "under the class"
    assert progif.subclass_name(0x03, 0x00) == "VGA"
