"""lspci text parsers, the writer, and the round trip between them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lspci_samples import GEX44_NNMM_D, N_VK, NN, VMM, tables

from gpuclass.constants import NO_ADDRESS
from gpuclass.errors import InputError, NotLspciOutput, SourceError
from gpuclass.sources.lspci import (
    detect_format,
    parse_lspci,
    parse_lspci_mm,
    parse_lspci_n,
    parse_lspci_vmm,
    read_lspci,
)
from gpuclass.sources.lspci.dump import finish
from gpuclass.sources.lspci.write import LSPCI_FORMATS

def test_nnmm_keeps_ids_and_names():
    t = parse_lspci_mm(GEX44_NNMM_D)
    assert t.addresses()[2] == "0000:01:00.0"
    assert t.vendor.tolist() == [0x8086, 0x8086, 0x10DE, 0x10DE, 0x144D]
    assert t.device.tolist() == [0xA700, 0xA780, 0x27B0, 0x22BC, 0xA80A]
    assert t.class_code.tolist() == [0x060000, 0x030000, 0x030000, 0x040300, 0x010802]
    # lspci omits -r for revision 0
    assert t.revision.tolist() == [1, 4, 0xA1, 0xA1, 0]
    assert t.subdevice.tolist() == [0x7270, 0x7270, 0x16FA, 0x16FA, 0xA801]
    assert t.has_subsystem.all()
    # a bracket inside a name does not confuse the ID
    assert t.device_text[1] == "Raptor Lake-S GT1 [UHD Graphics 770]"
    assert t.device_text[2] == "AD104GL [RTX 4000 SFF Ada Generation]"
    assert t.gpu_mask().tolist() == [False, True, True, False, False]
    assert t.companion_mask().tolist() == [False, False, False, True, False]


def test_names_are_never_trusted():
    # an old database names the card "Device"; a lying one names it something else
    text = ('01:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation [10de]" '
            '"GeForce GTX 1080 [2bb1]" -ra1 -p00 "NVIDIA Corporation [10de]" "Device [204b]"\n')
    t = parse_lspci_mm(text)
    assert t.device[0] == 0x2BB1 and t.device_text[0] == "GeForce GTX 1080"


def test_nnmm_without_domain_and_without_subsystem():
    text = ('01:00.0 "3D controller [0302]" "NVIDIA Corporation [10de]" "Device [2bb5]" -p00 "" ""\n'
            '10000:e1:00.0 "Non-Volatile memory controller [0108]" "Samsung [144d]" "X [a80a]" -p02 "" ""\n')
    t = parse_lspci_mm(text)
    assert t.addresses() == ["0000:01:00.0", "10000:e1:00.0"]
    assert not t.has_subsystem.any() and t.subvendor_text[0] is None


def test_nmm_numeric_only():
    t = parse_lspci('01:00.0 "0300" "10de" "27b0" -ra1 -p00 "10de" "16fa"\n')
    assert (t.vendor[0], t.device[0], t.subdevice[0], t.class_code[0]) == (0x10DE, 0x27B0, 0x16FA, 0x030000)
    assert t.vendor_text[0] is None


def test_bad_lines_are_flagged_in_place():
    lines = GEX44_NNMM_D.splitlines()
    lines.insert(2, '0000:00:14.0 "USB controller" "Intel Corporation" "Device a7ed" -r11 -p30 "" ""')
    lines.insert(4, "this is not lspci")
    t = parse_lspci_mm("\n".join(lines) + "\n\n")
    assert len(t) == 7
    assert t.invalid_mask().tolist() == [False, False, True, False, True, False, False]
    assert "no numeric class, vendor, device ID" in t.problems[2] and ":3:" in t.problems[2]
    assert t.addresses()[2] == "0000:00:14.0"  # the address still reads
    assert t.addresses()[4] == "-" and ":5:" in t.problems[4]
    assert not t.gpu_mask()[2]
    good = ~t.invalid_mask()
    assert t.take(good).equals(parse_lspci_mm(GEX44_NNMM_D), text=True)


def test_vmm():
    t = parse_lspci_vmm(VMM)
    assert t.addresses() == ["0000:01:00.0", "0000:01:00.1"]
    assert (t.device[0], t.subdevice[0], t.driver[0]) == (0x2BB4, 0x204C, "nvidia")
    assert (t.numa_node[0], t.iommu_group[0]) == (1, 50)
    assert t.has_subsystem.tolist() == [True, False]
    assert t.revision.tolist() == [0xA1, 0xA1]
    assert t.companion_mask().tolist() == [False, True]


# NUMA node and IOMMU group past an int32: unknown, and that device alone flagged, as a
# sysfs attribute past an int32 is (lspci prints what the kernel gives it, as %d)
PAST_INT32 = ["2147483648", "-2147483649", "4294967296", "0" * 20 + "9" * 11, "9" * 5000]


def _details(form: str, numa, group) -> str:
    """A dump whose NVIDIA GPU has these NUMA node and IOMMU group values (detail lines
    after them, such as the driver, must still be read)."""
    if form == "vmm":
        return VMM.replace("NUMANode:\t1", f"NUMANode:\t{numa}").replace("IOMMUGroup:\t50",
                                                                         f"IOMMUGroup:\t{group}")
    return N_VK.replace("latency 0, IRQ 130\n", f"latency 0, IRQ 130\n\tNUMA node: {numa}\n"
                                                f"\tIOMMU group: {group}\n")


@pytest.mark.parametrize("value", PAST_INT32)
@pytest.mark.parametrize("field", ["numa_node", "iommu_group"])
@pytest.mark.parametrize("form", ["vmm", "n"])
def test_a_number_past_int32_flags_its_device_only(form, field, value):
    clean = parse_lspci(_details(form, 1, 7))
    numa, group = (value, 7) if field == "numa_node" else (1, value)
    t = parse_lspci(_details(form, numa, group))
    i = int(np.flatnonzero(clean.gpu_mask())[0])
    assert t.invalid_mask().tolist() == [j == i for j in range(len(t))]
    assert "out of range" in t.problems[i] and repr(value[:32]) in t.problems[i]
    assert getattr(t, field)[i] == -1
    other = "iommu_group" if field == "numa_node" else "numa_node"
    assert getattr(t, other)[i] == getattr(clean, other)[i] != -1
    assert (t.vendor[i], t.device[i], t.driver[i]) == (clean.vendor[i], clean.device[i], "nvidia")
    keep = np.arange(len(t)) != i
    assert t.take(keep).equals(clean.take(keep), text=True)


@pytest.mark.parametrize("form", ["vmm", "n"])
def test_numbers_at_the_edge_of_int32_are_values(form):
    t = parse_lspci(_details(form, "2147483647", "0002147483647"))
    assert not t.invalid_mask().any()
    i = int(np.flatnonzero(t.gpu_mask())[0])
    assert t.numa_node[i] == t.iommu_group[i] == 2**31 - 1


def test_scan_of_a_dump_past_int32_flags_one_device(tmp_path):
    import json

    from helpers import run_in_process as run

    p = tmp_path / "lspci-vmm.txt"
    p.write_text(VMM + "NUMANode:\t4294967296\nIOMMUGroup:\t" + "9" * 40 + "\n")
    proc = run("scan", "--lspci", p, "-o", "json")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    out = json.loads(proc.stdout)
    assert out["count"] == 2 and out["summary"]["supported_cards"] == 1
    bad = [d for d in out["devices"] if d["problem"]]
    assert len(bad) == 1 and bad[0]["slot"] == "0000:01:00.1" and bad[0]["numa_node"] is None
    assert "NUMANode out of range '4294967296'" in bad[0]["problem"]


def test_vmm_progif_before_class_and_broken_block():
    text = ("Slot:\t00:14.0\nProgIf:\t30\nClass:\tUSB controller [0c03]\nVendor:\tIntel [8086]\n"
            "Device:\tX [a7ed]\n\nSlot:\t00:15.0\nClass:\tSerial bus controller\n"
            "Vendor:\tIntel Corporation\nDevice:\tDevice a7e8\n\nClass:\tX [0300]\n")
    t = parse_lspci_vmm(text)
    assert t.class_code[0] == 0x0C0330
    assert t.invalid_mask().tolist() == [False, True, True]
    assert "no numeric Class ID" in t.problems[1] and t.addresses()[1] == "0000:00:15.0"
    assert "no valid Slot" in t.problems[2] and t.function[2] == NO_ADDRESS


def test_n_with_details():
    t = parse_lspci_n(N_VK)
    assert t.addresses() == ["0000:00:00.0", "0000:01:00.0", "0000:01:00.1"]
    assert t.subvendor.tolist() == [0x1458] * 3 and t.has_subsystem.all()
    assert t.driver.tolist() == [None, "nvidia", None]
    assert t.revision.tolist() == [5, 0xA1, 0xA1]


def test_nn_plain():
    t = parse_lspci(NN)
    assert detect_format(NN) == "n"
    assert t.device.tolist() == [0x1E30, 0x1AD6]
    assert t.class_code.tolist() == [0x030000, 0x0C0330]
    assert t.device_text[0] == "NVIDIA Corporation TU102GL [Quadro RTX 6000/8000]"
    assert not t.has_subsystem.any()


def test_plain_lspci_without_numbers_is_flagged():
    t = parse_lspci("01:00.0 VGA compatible controller: NVIDIA Corporation Device 2bb1 (rev a1)\n")
    assert t.invalid_mask().all() and "no numeric class code and no vendor:device IDs" in t.problems[0]
    assert t.addresses() == ["0000:01:00.0"]


def test_detect_format():
    assert detect_format(GEX44_NNMM_D) == "mm"
    assert detect_format("\n" + VMM) == "vmm"
    assert detect_format(N_VK) == "n"
    with pytest.raises(NotLspciOutput, match="the input is empty"):
        parse_lspci("")


def test_unknown_format_and_unreadable_file(tmp_path):
    with pytest.raises(SourceError, match="unknown lspci format"):
        parse_lspci("x", fmt="xml")
    with pytest.raises(SourceError, match="No such file"):
        read_lspci(tmp_path / "missing.txt")
    (tmp_path / "dump.txt").write_text(VMM)
    assert read_lspci(tmp_path / "dump.txt").source == str(tmp_path / "dump.txt")


def test_writer_refuses_flagged_rows_unless_skipping():
    t = parse_lspci_mm("garbage\n" + GEX44_NNMM_D)
    with pytest.raises(InputError, match="row 0 cannot be written"):
        t.to_lspci_text()
    assert len(parse_lspci(t.to_lspci_text(invalid="skip"))) == 5
    with pytest.raises(InputError, match="unknown lspci format"):
        t.to_lspci_text("-x")


def test_text_round_trip_reproduces_real_lspci_output():
    t = parse_lspci_mm(GEX44_NNMM_D)
    assert t.to_lspci_text("-nnmm -D") == GEX44_NNMM_D


def test_fast_and_line_by_line_paths_agree():
    text = GEX44_NNMM_D * 50
    fast = parse_lspci_mm(text)
    slow = parse_lspci_mm(text + "junk\n")  # one bad line sends it line by line
    assert slow.take(np.arange(len(fast))).equals(fast, text=True)
    assert slow.invalid_mask().sum() == 1


@given(data=tables(with_details=False), fmt=st.sampled_from(["-nnmm", "-nnmm -D"]))
def test_round_trip_mm(data, fmt):
    t, texts = data
    if not len(t):  # no device: lspci prints nothing, which is no dump
        with pytest.raises(NotLspciOutput, match="empty"):
            parse_lspci(t.to_lspci_text(fmt))
        return
    back = parse_lspci(t.to_lspci_text(fmt))
    t = finish(t)  # a GPU function above .0 reads back as a virtual function (dump.finish)
    assert back.equals(t), back.diff(t)
    if texts and len(t):
        for col in ("class_text", "vendor_text", "device_text"):
            assert list(getattr(back, col)) == list(getattr(t, col))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(with_details=True), fmt=st.sampled_from(["-vmm -nnk", "-vmm -nnk -D", "-nk", "-nk -D"]))
def test_round_trip_detailed(data, fmt):
    t, _ = data
    if not len(t):
        with pytest.raises(NotLspciOutput, match="empty"):
            parse_lspci(t.to_lspci_text(fmt))
        return
    back = parse_lspci(t.to_lspci_text(fmt))
    if fmt.startswith("-nk"):  # terse lines print no prog-if, NUMA node or IOMMU group
        t = t.take(slice(None))
        t.class_code = t.class_code & np.uint32(0xFFFF00)
        t.numa_node = np.full(len(t), -1, dtype=np.int32)
        t.iommu_group = np.full(len(t), -1, dtype=np.int32)
    t = finish(t)
    assert back.equals(t), back.diff(t)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=["Cs"]), max_size=60), max_size=20))
def test_arbitrary_text_never_raises_and_keeps_one_row_per_line(lines):
    # only NotLspciOutput, where no line reads as a device
    text = "\n".join(lines)
    for fmt in ("mm", "n"):
        try:
            t = parse_lspci(text, fmt=fmt)
        except NotLspciOutput:
            continue
        assert t.has_address_mask().any() or not t.invalid_mask().all()
        nonblank = [x for x in text.split("\n") if x.strip()]
        if fmt == "mm":
            assert len(t) == len(nonblank)
        assert len(t) <= len(nonblank)
    try:
        parse_lspci(text, fmt="vmm")
    except NotLspciOutput:
        pass


def test_all_formats_listed():
    assert set(LSPCI_FORMATS) == {"-nnmm", "-nnmm -D", "-nmm", "-nmm -D", "-vmm -nn", "-vmm -nn -D",
                                  "-vmm -nnk", "-vmm -nnk -D", "-n", "-n -D", "-nn", "-nn -D", "-nk",
                                  "-nk -D", "-nnk"}


def test_quote_in_a_name_takes_the_exact_path():
    from gpuclass.sources.lspci import mm as L

    text = GEX44_NNMM_D.replace("SSD 980 PRO", 'SSD "980" PRO')
    assert L._mm_fast(text, "x") is None  # the column-wise path declines
    t = parse_lspci_mm(text)
    assert not t.invalid_mask().any() and t.subdevice_text[4] == 'SSD "980" PRO'


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(with_details=False), fmt=st.sampled_from(["-nnmm", "-nnmm -D"]))
def test_column_wise_path_equals_the_regex_path(data, fmt):
    from gpuclass.sources.lspci import mm as L

    t, _ = data
    text = t.to_lspci_text(fmt)
    fast = L._mm_fast(text, "x")
    exact = L._mm_table(L._MM.findall(text), "x")
    if len(t):
        assert fast is not None
        assert fast.equals(exact, text=True), fast.diff(exact)
