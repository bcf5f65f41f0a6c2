"""Virtual functions in dumps that may lack their physical function, and the three doors
(``parse_lspci``, ``scan --lspci``, ``audit`` of a directory of dumps) agreeing on them.

The dumps are built here from (address, class, vendor:device) rows and written in the
``-nn``, ``-nnmm`` and ``-n`` forms, so every layout is read by each door."""

from __future__ import annotations

import json
import random

import pytest

from gpuclass.audit import audit_paths
from gpuclass.classify import classify_table
from gpuclass.cli.main import main
from gpuclass.sources.lspci import parse_lspci

BLACKWELL_SERVER = ("0302", "3D controller", "10de", "2bb5", "GB202GL [RTX PRO 6000 Blackwell Server Edition]")
ADA = ("0300", "VGA compatible controller", "10de", "26b1", "AD102GL [RTX 6000 Ada Generation]")
ADA_AUDIO = ("0403", "Audio device", "10de", "22ba", "AD102 High Definition Audio Controller")
QUADRO_RTX = ("0300", "VGA compatible controller", "10de", "1e30", "TU102GL [Quadro RTX 6000/8000]")
TU_AUDIO = ("0403", "Audio device", "10de", "10f7", "TU102 High Definition Audio Controller")
TU_USB = ("0c03", "USB controller", "10de", "1ad6", "TU102 USB 3.1 Host Controller")
TU_SERIAL = ("0c80", "Serial bus controller", "10de", "1ad7", "TU102 USB Type-C UCSI Controller")
BRIDGE = ("0604", "PCI bridge", "8086", "352a", "Device")
HOST = ("0600", "Host bridge", "8086", "09a2", "Device")
ASPEED = ("0300", "VGA compatible controller", "1a03", "2000", "ASPEED Graphics Family")


def vfs_from(bus: int, first: int, count: int, dev=BLACKWELL_SERVER):
    """``count`` functions from ARI routing ID ``first`` of ``bus`` on (stride 1)."""
    return [(f"{bus:02x}:{(first + k) // 8:02x}.{(first + k) % 8}", dev) for k in range(count)]


def card(bus: int, *functions):
    return [(f"{bus:02x}:00.{f}", d) for f, d in enumerate(functions)]


# name: (rows, supported cards, virtual functions)
DUMPS = {
    # an excerpt of four VFs across a slot boundary, their PF elsewhere
    "vf-excerpt-ari": (vfs_from(0x8c, 8 * 3 + 7, 4), 0, 4),
    # four VFs of one slot without its function 0
    "vf-excerpt-slot": (vfs_from(0x8c, 8 * 5 + 2, 4), 0, 4),
    # SR-IOV on four cards: each PF at 00.0, 12 VFs from offset 4 running into slot 1
    "sriov-host": ([("00:00.0", HOST)]
                   + [r for b in (0x17, 0x3a, 0x86, 0xaf)
                      for r in [(f"{b - 1:02x}:01.0", BRIDGE), (f"{b:02x}:00.0", BLACKWELL_SERVER),
                                *vfs_from(b, 4, 12)]], 4, 48),
    # the same host before SR-IOV
    "sriov-off": ([("00:00.0", HOST)]
                  + [r for b in (0x17, 0x3a, 0x86, 0xaf) for r in [(f"{b:02x}:00.0", BLACKWELL_SERVER)]], 4, 0),
    # a PF with its VFs in its own slot only
    "pf-own-slot": (card(0x81, BLACKWELL_SERVER) + vfs_from(0x81, 4, 4), 1, 4),
    # real cards: GPU and audio; Turing with USB and serial too; one per bus
    "ada-three-buses": (card(0x01, ADA, ADA_AUDIO) + card(0x41, ADA, ADA_AUDIO) + card(0xc1, ADA), 3, 0),
    "turing-and-ada": ([("02:00.0", ASPEED)] + card(0x03, QUADRO_RTX, TU_AUDIO, TU_USB, TU_SERIAL)
                       + card(0x04, ADA, ADA_AUDIO), 1, 0),
    # a virtual machine: two passed-through cards in slots of bus 00
    "vm-bus-00": ([("00:00.0", HOST), ("00:05.0", ADA), ("00:06.0", ADA), ("00:07.0", ADA)], 3, 0),
    # real Ada cards beside an excerpt of another host's VFs
    "ada-and-vf-excerpt": (card(0x01, ADA, ADA_AUDIO) + vfs_from(0x8c, 8 * 3 + 6, 5), 1, 5),
}


def as_nn(rows) -> str:
    return "".join(f"{a} {c[1]} [{c[0]}]: Vendor {c[4]} [{c[2]}:{c[3]}] (rev a1)\n" for a, c in rows)


def as_nnmm(rows) -> str:
    return "".join(f'{a} "{c[1]} [{c[0]}]" "Vendor [{c[2]}]" "{c[4]} [{c[3]}]" -ra1 -p00 "" ""\n'
                   for a, c in rows)


def as_n(rows) -> str:
    return "".join(f"0000:{a} {c[0]}: {c[2]}:{c[3]} (rev a1)\n" for a, c in rows)


LAYOUTS = {"nn": as_nn, "nnmm": as_nnmm, "n": as_n}


def counted(table):
    res = classify_table(table)
    return int(res.summary().node_data(0)["supported_cards"]), int(table.vf_mask().sum())


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", DUMPS)
def test_virtual_functions_with_or_without_their_physical_function(name, layout):
    rows, cards, vfs = DUMPS[name]
    t = parse_lspci(LAYOUTS[layout](rows))
    assert not t.invalid_mask().any()
    assert counted(t) == (cards, vfs)
    # never a non-GPU function, never a GPU at the start of a bus's slot 0
    for i in range(len(t)):
        if t.vf_mask()[i]:
            assert int(t.class_code[i]) >> 8 in (0x0300, 0x0302)


@pytest.mark.parametrize("name", DUMPS)
def test_the_order_of_the_lines_does_not_matter(name):
    rows, cards, vfs = DUMPS[name]
    rng = random.Random(name)
    for _ in range(3):
        shuffled = rows[:]
        rng.shuffle(shuffled)
        assert counted(parse_lspci(as_nn(shuffled))) == (cards, vfs)


def test_the_physical_function_is_kept_only_where_it_can_be(tmp_path):
    # the PF is 00.0: its VFs in slot 1 and beyond are VFs, the .0 of slot 1 included
    t = parse_lspci(as_nn(card(0x81, BLACKWELL_SERVER) + vfs_from(0x81, 4, 12)))
    assert t.vf_mask().tolist() == [False] + [True] * 12
    assert t.addresses()[5] == "0000:81:01.0" and t.vf_mask()[5]
    # the same run without its PF: slot 1's .0 is a VF too
    t = parse_lspci(as_nn(vfs_from(0x81, 4, 12)))
    assert t.vf_mask().all()
    # a GPU above .0 beside another GPU's .0 is a VF; the .0 stays a card
    t = parse_lspci(as_nn([("05:00.0", ADA), ("05:00.1", BLACKWELL_SERVER)]))
    assert t.vf_mask().tolist() == [False, True]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_library_scan_and_audit_agree(tmp_path, capsys, layout):
    d = tmp_path / "dumps"
    d.mkdir()
    for name, (rows, _, _) in DUMPS.items():
        (d / f"{name}.txt").write_text(LAYOUTS[layout](rows))
    audited = {r.server: (r.supported_cards, r.slices) for r in audit_paths([d])}
    for name, (rows, cards, vfs) in DUMPS.items():
        lib = counted(parse_lspci(LAYOUTS[layout](rows)))
        assert main(["scan", "--lspci", str(d / f"{name}.txt"), "--format", "json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        scanned = (doc["summary"]["supported_cards"], sum("vf" in x["flags"] for x in doc["devices"]))
        assert lib == scanned == (cards, vfs), name
        assert audited[name] == (cards, 4 * cards) == (doc["summary"]["supported_cards"], doc["summary"]["slices"])
