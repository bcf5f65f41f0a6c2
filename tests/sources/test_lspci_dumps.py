"""Collected lspci dumps as they are: noise lines, IOMMU-group prefixes, lost indentation,
repeated addresses, virtual functions, and text that is a path."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gpuclass.classify import classify_table
from gpuclass.constants import FLAG_PF, FLAG_VF, SUPPORTED, VIRTUAL_FUNCTION
from gpuclass.errors import InputError, NotLspciOutput, SourceError
from gpuclass.sources.lspci import parse_lspci, read_lspci
from helpers import run_in_process as run
from lspci_samples import (
    GEX44_NN_RESCUE,
    GEX44_NNK_FLAT,
    GEX44_NNMM_D,
    GEX130_IOMMU_LOOP,
    GEX131_NNMM_TWICE,
    N_VK,
    SRIOV_NN,
    SRIOV_SAME_SLOT_NNMM,
    SRIOV_VVV,
    VMM,
)


def slices(table):
    return int(classify_table(table).slices.sum())


def valid(table):
    return table.take(~table.invalid_mask())


def test_prompt_and_tool_warning_are_flagged_and_the_dump_is_read():
    t = parse_lspci(GEX44_NN_RESCUE)
    assert len(valid(t)) == 6 and slices(t) == 4
    bad = [p for p in t.problems if p]
    assert len(bad) == 3 and all("not lspci output (skipped)" in p for p in bad)
    assert any("libkmod" in p for p in bad) and any(":1:" in p for p in bad)
    assert (t.function[t.invalid_mask()] == 0xFF).all()  # noise carries no address


@pytest.mark.parametrize("where", [0, 3, 5, 99])
@pytest.mark.parametrize("noise", ["lspci: Unable to load libkmod resources: error -2",
                                   "pcilib: Cannot open /sys/bus/pci/devices/0000:00:00.0/config",
                                   "$ sudo lspci -nnmm", "Warning: Permanently added 'gex44' to known hosts.",
                                   "\tstray indented line"])
@pytest.mark.parametrize("dump", [GEX44_NNMM_D, N_VK, VMM, GEX44_NNK_FLAT], ids=["nnmm", "n-vk", "vmm", "nnk"])
def test_a_noise_line_anywhere_never_discards_the_lines_after_it(dump, noise, where):
    clean = parse_lspci(dump)
    lines = dump.splitlines()
    if noise.startswith("\t") and dump in (N_VK, GEX44_NNK_FLAT):
        where = 0  # after a device line an indented line is one of its details
    if dump is VMM:
        where = min(where, len(lines))
        while where < len(lines) and where and lines[where - 1].strip():
            where += 1  # between -vmm blocks
    lines.insert(min(where, len(lines)), noise)
    t = parse_lspci("\n".join(lines) + "\n")
    assert valid(t).equals(valid(clean)), valid(t).diff(valid(clean))
    assert t.invalid_mask().sum() == clean.invalid_mask().sum() + 1


def test_forms_are_decided_line_by_line():
    vmm = VMM.replace("0000:01:00", "0000:81:00")
    n_vk = N_VK.replace("00:00.0", "00:1c.0").replace("01:00", "c1:00")
    text = GEX44_NNMM_D + "\n" + vmm + "\n" + n_vk
    t = parse_lspci(text)
    parts = [parse_lspci(x) for x in (GEX44_NNMM_D, vmm, n_vk)]
    assert len(t) == sum(map(len, parts)) and not t.invalid_mask().any()
    assert slices(t) == sum(slices(p) for p in parts)


def test_iommu_group_loop_and_glued_revision():
    t = parse_lspci(GEX130_IOMMU_LOOP)
    assert not t.invalid_mask().any() and len(t) == 6
    assert t.iommu_group.tolist() == [0, 13, 29, 29, 57, 57]
    assert t.revision.tolist()[2:] == [0xA1] * 4
    assert slices(t) == 8


def test_nnk_with_lost_indentation():
    t = parse_lspci(GEX44_NNK_FLAT)
    assert not t.invalid_mask().any() and len(t) == 3
    assert t.driver.tolist() == ["skl_uncore", "nvidia", "snd_hda_intel"]
    assert (int(t.subvendor[1]), int(t.subdevice[1])) == (0x10DE, 0x16FA)
    assert slices(t) == 4


def test_the_same_address_twice_is_flagged_and_counted_once():
    t = parse_lspci(GEX131_NNMM_TWICE)
    assert len(t) == 5 and slices(t) == 4
    problems = [p for p in t.problems if p]
    assert any("ssh: connect" in p for p in problems)
    assert any("0000:01:00.0 is listed again (counted once)" in p for p in problems)


@pytest.mark.parametrize("line, missing", [
    ("01:00.0 VGA compatible controller: NVIDIA Corporation Device 2bb1 (rev a1)",
     "no numeric class code and no vendor:device IDs"),
    ("01:00.0 VGA compatible controller [0300]: NVIDIA Corporation Device (rev a1)",
     "no numeric vendor:device IDs"),
    ("01:00.0 VGA compatible controller: NVIDIA Corporation Device [10de:2bb1] (rev a1)",
     "no numeric class code"),
    ('01:00.0 "VGA compatible controller" "NVIDIA Corporation [10de]" "Device [2bb1]" -ra1 "" ""',
     "no numeric class ID"),
    ('01:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation" "Device" -ra1 "" ""',
     "no numeric vendor, device ID"),
])
def test_the_message_says_exactly_what_is_missing(line, missing):
    t = parse_lspci(line + "\n")
    assert t.invalid_mask().all() and missing in t.problems[0], t.problems[0]
    assert t.addresses() == ["0000:01:00.0"]


def test_ids_that_are_there_are_never_called_missing():
    line = "01:00.0 VGA compatible controller [0300]: NVIDIA Corporation Device [10de:2bb1] (rev a1) junk"
    [p] = parse_lspci(line + "\n").problems
    assert "no numeric" not in p and "unexpected text" in p


def test_virtual_functions_at_ari_offsets_are_not_cards():
    t = parse_lspci(SRIOV_NN)
    res = classify_table(t)
    assert len(t) == 10 and int((t.flags & FLAG_VF != 0).sum()) == 8
    assert int((res.status == SUPPORTED).sum()) == 1 and int((res.status == VIRTUAL_FUNCTION).sum()) == 8
    assert res.total_slices == 4


def test_virtual_functions_of_one_slot_are_not_cards():
    t = parse_lspci(SRIOV_SAME_SLOT_NNMM)
    assert t.vf_mask().tolist() == [False] + [True] * 7 and slices(t) == 4


def test_sriov_capability_in_vvv_output():
    t = parse_lspci(SRIOV_VVV)
    assert len(t) == 9 and not t.invalid_mask().any()
    assert int(t.flags[0]) & FLAG_PF and (int(t.sriov_totalvfs[0]), int(t.sriov_numvfs[0])) == (32, 8)
    assert t.vf_mask().tolist() == [False] + [True] * 8
    assert t.iommu_group.tolist() == [44, *range(45, 53)]
    assert slices(t) == 4


def test_sriov_capability_finds_vfs_on_the_next_bus():
    # 300 VFs at stride 1 run past the functions of bus 41 into bus 42
    pf = SRIOV_VVV.split("\n41:00.4")[0].replace("Number of VFs: 8", "Number of VFs: 300") + "\n"
    vf = ("42:00.0 3D controller [0302]: NVIDIA Corporation GB202GL [RTX PRO 6000 Blackwell Server Edition] "
          "[10de:2bb5] (rev a1)\n")
    t = parse_lspci(pf + vf)
    assert t.vf_mask().tolist() == [False, True] and slices(t) == 4


def test_two_real_cards_on_their_own_buses_are_two_cards():
    assert slices(parse_lspci(GEX130_IOMMU_LOOP)) == 8
    # a VM that puts two passed-through cards on bus 00 beside its host bridge
    vm = ("00:00.0 Host bridge [0600]: Intel Corporation 440FX - 82441FX PMC [Natoma] [8086:1237] (rev 02)\n"
          "00:05.0 3D controller [0302]: NVIDIA Corporation Device [10de:26b1] (rev a1)\n"
          "00:06.0 3D controller [0302]: NVIDIA Corporation Device [10de:26b1] (rev a1)\n")
    assert slices(parse_lspci(vm)) == 8


def test_scan_lspci_does_not_count_virtual_functions(tmp_path):
    dump = tmp_path / "vgpu-host.txt"
    dump.write_text(SRIOV_NN)
    proc = run("scan", "--lspci", dump, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["summary"]["slices"] == 4 and doc["count"] == 10
    assert sum("vf" in d["flags"] for d in doc["devices"]) == 8


def test_text_that_is_a_path_says_so(tmp_path):
    p = tmp_path / "lspci.txt"
    p.write_text(GEX44_NNMM_D)
    with pytest.raises(InputError, match="is the path of a file, not lspci output"):
        parse_lspci(str(p))
    # a line that is no file, and no lspci output either
    with pytest.raises(NotLspciOutput, match="no line reads as a PCI device"):
        parse_lspci(str(tmp_path / "nope.txt"))
    assert read_lspci(p).equals(parse_lspci(GEX44_NNMM_D))


def test_read_lspci_reads_regular_files_only(tmp_path):
    with pytest.raises(SourceError, match="directory"):
        read_lspci(tmp_path)


def test_clean_dumps_take_the_fast_path_unchanged():
    # what a clean dump gives did not change: no row flagged, nothing added
    for dump in (GEX44_NNMM_D, VMM, N_VK):
        t = parse_lspci(dump)
        assert not t.invalid_mask().any() and not t.vf_mask().any()
        assert np.array_equal(t.iommu_group >= -1, np.ones(len(t), bool))
