"""Modalias strings into DeviceTable rows."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpuclass.sources.modalias import parse_modalias, parse_modaliases


def test_either_case():
    upper = parse_modalias("pci:v000010DEd000027B0sv000010DEsd000016FAbc03sc00i00")
    lower = parse_modalias("pci:v000010ded000027b0sv000010desd000016fabc03sc00i00")
    assert upper.equals(lower)
    assert (upper.vendor[0], upper.device[0], upper.subvendor[0], upper.subdevice[0]) == (
        0x10DE, 0x27B0, 0x10DE, 0x16FA)
    assert upper.class_code[0] == 0x030000 and upper.has_subsystem[0] and upper.revision[0] == -1
    assert upper.gpu_mask().tolist() == [True]


def test_address_and_bad_items_are_flagged():
    t = parse_modaliases([
        ("0000:c1:00.0", "pci:v000010DEd00002BB4sv000010DEsd0000204Cbc03sc00i00"),
        ("c1:00.0", "pci:v000010DEd00002BB4sv000010DEsd0000204Cbc03sc00i00"),
        "pci:v000010DEd*sv*sd*bc03sc*i*",
        "usb:v1D6Bp0002",
        "pci:v000110DEd00002BB4sv000010DEsd0000204Cbc03sc00i00",
    ])
    assert t.addresses()[0] == "0000:c1:00.0"
    assert t.invalid_mask().tolist() == [False, True, True, True, True]
    assert "bad PCI address" in t.problems[1]
    assert "pattern" in t.problems[2] and "not a PCI modalias" in t.problems[3]
    assert "16 bits" in t.problems[4] and "[4]" in t.problems[4]
    assert not t.has_subsystem[1:].any()


def test_sysfs_modalias_of_this_machine_agrees_with_the_scan():
    import os

    from gpuclass.sources.sysfs import scan_sysfs

    scan = scan_sysfs("/")
    items = []
    for addr in scan.addresses():
        with open(os.path.join("/sys/bus/pci/devices", addr, "modalias")) as fh:
            items.append((addr, fh.read()))
    t = parse_modaliases(items)
    assert not t.invalid_mask().any()
    for col in ("domain", "bus", "slot", "function", "vendor", "device", "subvendor", "subdevice",
                "class_code"):
        assert getattr(t, col).tolist() == getattr(scan, col).tolist(), col


@given(st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 0xFFFF),
       st.integers(0, 0xFFFF), st.integers(0, 0xFFFFFF), st.booleans())
def test_round_trip(v, d, sv, sd, cls, upper):
    text = f"pci:v{v:08x}d{d:08x}sv{sv:08x}sd{sd:08x}bc{cls >> 16:02x}sc{(cls >> 8) & 255:02x}i{cls & 255:02x}"
    t = parse_modalias(text.upper().replace("PCI:V", "pci:v") if upper else text)
    assert (int(t.vendor[0]), int(t.device[0]), int(t.subvendor[0]), int(t.subdevice[0]),
            int(t.class_code[0])) == (v, d, sv, sd, cls)
    assert not t.invalid_mask().any()
