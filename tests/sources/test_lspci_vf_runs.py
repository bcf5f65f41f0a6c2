"""Generated hosts: physical multi-GPU hosts (each card at its own bus's ``00.0``, its
audio/USB/serial functions beside it, buses adjacent or not) and SR-IOV hosts (K virtual
functions per physical function at ARI offsets and strides, the PF present or absent,
runs that fill a bus and go on at the next one), and excerpts of their VF runs.  Each is
read by the library, ``scan --lspci`` and ``audit`` of a directory of dumps, in several
layouts (pasted as a table too), and all three must give the host's physical cards and
flag exactly its virtual functions.

One shape is ambiguous and not generated: a VF run that ends exactly at its bus's last
routing ID with a card of the same ID, without companion functions, at the next bus's
``00.0`` (it reads as the run going on); real GPUs offer at most 32 VFs, far from it.
Nor is an excerpt that starts at a ``.0`` (it reads as a card with its VFs in its slot)."""

from __future__ import annotations

import json
import random

import pytest

from gpuclass.audit import audit_paths
from gpuclass.cli.main import main
from gpuclass.sources.lspci import parse_lspci, write_lspci

from .test_lspci_tables import tabulate
from .test_lspci_vfs import HOST, LAYOUTS, as_nn, counted

NV = "10de"
# name: (class, class name, device, chip, companions as (class, class name, device, chip), supported, SR-IOV)
GPUS = {
    "gtx1080": ("0300", "VGA compatible controller", "1b80", "GP104 [GeForce GTX 1080]",
                [("0403", "Audio device", "10f0", "GP104 High Definition Audio Controller")], True, False),
    "gtx1080ti": ("0300", "VGA compatible controller", "1b06", "GP102 [GeForce GTX 1080 Ti]",
                  [("0403", "Audio device", "10ef", "GP102 HDMI Audio Controller")], True, False),
    "rtx4000sff": ("0300", "VGA compatible controller", "27b0", "AD104GL [RTX 4000 SFF Ada Generation]",
                   [("0403", "Audio device", "22bc", "AD104 High Definition Audio Controller")], True, False),
    "rtx6000ada": ("0300", "VGA compatible controller", "26b1", "AD102GL [RTX 6000 Ada Generation]",
                   [("0403", "Audio device", "22ba", "AD102 High Definition Audio Controller")], True, False),
    "quadro": ("0300", "VGA compatible controller", "1e30", "TU102GL [Quadro RTX 6000/8000]",
               [("0403", "Audio device", "10f7", "TU102 High Definition Audio Controller"),
                ("0c03", "USB controller", "1ad6", "TU102 USB 3.1 Host Controller"),
                ("0c80", "Serial bus controller", "1ad7", "TU102 USB Type-C UCSI Controller")], False, False),
    "pro6000ws": ("0300", "VGA compatible controller", "2bb1", "GB202GL [RTX PRO 6000 Blackwell Workstation Edition]",
                  [("0403", "Audio device", "22e8", "GB202 High Definition Audio Controller")], True, False),
    "pro6000server": ("0302", "3D controller", "2bb5", "GB202GL [RTX PRO 6000 Blackwell Server Edition]", [],
                      True, True),
    "a100": ("0302", "3D controller", "20b0", "GA100 [A100 SXM4 40GB]", [], False, True),
}


def _dev(cls, cls_name, device, chip, vendor=NV):
    return (cls, cls_name, vendor, device, chip)


def _addr(rid: int) -> str:
    return f"{rid >> 8:02x}:{(rid >> 3) & 31:02x}.{rid & 7}"


def generate(seed: int):
    """(rows, supported cards, virtual functions) of one host: physical cards and SR-IOV
    groups at increasing buses, or (one in four) an excerpt of one group's VF run."""
    rng = random.Random(seed)
    rows = [("00:00.0", HOST), ("02:00.0", _dev("0300", "VGA compatible controller", "2000",
                                                  "ASPEED Graphics Family", "1a03"))]
    cards = vfs = 0
    free, filled = 0x03, False  # the first bus after the last one used
    sriov = [n for n, g in GPUS.items() if g[6]]
    for _ in range(rng.randint(1, 6)):
        bus = free + rng.randint(1 if filled else 0, 2)
        kind = rng.choice(sorted(GPUS))
        cls, cname, device, chip, companions, supported, can_sriov = GPUS[kind]
        if can_sriov and rng.random() < 0.7:
            k = rng.choice((rng.randint(1, 32), rng.randint(200, 600)))
            offset, stride = rng.choice((1, 2, 4, 8)), rng.choice((1, 1, 2))
            present = rng.random() < 0.6
            if not present and offset == 8 and k * stride <= 8:
                offset = 4  # a lone slot of VFs from its .0 reads as a card with its own VFs
            last = bus * 256 + offset + (k - 1) * stride
            if last >> 8 > 0xFE or bus > 0xFE:
                break
            if present:
                rows.append((_addr(bus * 256), _dev(cls, cname, device, chip)))
                cards += supported
            rows += [(_addr(bus * 256 + offset + i * stride), _dev(cls, cname, device, chip)) for i in range(k)]
            vfs += k
            filled = (last & 0xFF) + stride > 0xFF
            free = (last >> 8) + 1
        else:
            rows.append((f"{bus:02x}:00.0", _dev(cls, cname, device, chip)))
            rows += [(f"{bus:02x}:00.{f}", _dev(*c)) for f, c in enumerate(companions, 1)]
            cards += supported
            filled, free = False, bus + 1
    if seed % 4 == 3:  # an excerpt: a window of one run, crossing a bus where it can
        kind = rng.choice(sriov)
        cls, cname, device, chip = GPUS[kind][:4]
        b = rng.randint(0x10, 0xF0)
        start = rng.choice((b * 256 + 0xFE - rng.randint(0, 8), b * 256 + rng.randint(1, 0xF0)))
        start += (start & 7) == 0  # a window from a .0 reads as a card with its own VFs
        n = rng.randint(2, 24)
        rows = [(_addr(start + i), _dev(cls, cname, device, chip)) for i in range(n)]
        cards, vfs = 0, n
    return rows, cards, vfs


SEEDS = range(48)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("seed", SEEDS)
def test_physical_cards_are_counted_and_virtual_functions_flagged(seed, layout):
    rows, cards, vfs = generate(seed)
    t = parse_lspci(LAYOUTS[layout](rows))
    assert not t.invalid_mask().any()
    assert counted(t) == (cards, vfs), (seed, layout)
    gpu = t.gpu_mask()
    assert not (t.vf_mask() & ~gpu).any()


def test_the_generator_covers_the_shapes():
    shapes = set()
    for seed in SEEDS:
        rows, cards, vfs = generate(seed)
        buses = {a.split(":")[0] for a, d in rows if d[0] in ("0300", "0302") and a.endswith(":00.0")}
        shapes.add("physical" if vfs == 0 else "sriov")
        if any(a.startswith(f"{int(b, 16) + 1:02x}:") for b in buses for a, _ in rows):
            shapes.add("adjacent buses")
        vf_buses = {a.split(":")[0] for a, d in rows if not a.endswith(".0") and d[0] in ("0300", "0302")}
        if vfs and any(a.split(":")[0] not in vf_buses and a.endswith(":00.0") and
                       f"{int(a.split(':')[0], 16) - 1:02x}" in vf_buses for a, d in rows):
            shapes.add("run onto the next bus")
    assert shapes >= {"physical", "sriov", "adjacent buses", "run onto the next bus"}, shapes


def test_a_run_across_buses_and_the_cards_around_it():
    pro = _dev(*GPUS["pro6000server"][:4])
    ada = _dev(*GPUS["rtx6000ada"][:4])
    audio = _dev(*GPUS["rtx6000ada"][4][0])
    run = [(_addr(0x8C00 + 1 + i), pro) for i in range(300)]  # 8c:00.1 .. 8d:05.4
    # the PF at 8c:00.0, its run onto 8d; a physical card of the same ID at 8e:00.0
    t = parse_lspci(as_nn([("8c:00.0", pro)] + run + [("8e:00.0", pro)]))
    assert counted(t) == (2, 300)
    assert t.addresses()[256] == "0000:8d:00.0" and t.vf_mask()[256]
    # the run without its PF; a lone VF at 8d:00.0 after 8c:1f.7
    assert counted(parse_lspci(as_nn(run))) == (0, 300)
    assert counted(parse_lspci(as_nn(run[:256]))) == (0, 256)
    # a run that stops short of the bus's end: the card at the next bus is a card
    t = parse_lspci(as_nn([("8c:00.0", pro)] + run[:200] + [("8d:00.0", pro)]))
    assert counted(t) == (2, 200)
    # a card of another ID at the next bus, and one of the same ID with its audio (two
    # hosts' dumps pasted together) are cards
    ada_run = [(_addr(0x8C00 + 1 + i), ada) for i in range(255)]
    assert counted(parse_lspci(as_nn(run[:255] + [("8d:00.0", ada), ("8d:00.1", audio)]))) == (1, 255)
    assert counted(parse_lspci(as_nn(ada_run + [("8d:00.0", ada), ("8d:00.1", audio)]))) == (1, 255)


# pasted as tables: (lspci form, table style)
TABLES = {"table-nn": ("-nn", "markdown"), "table-nnmm": ("-nnmm -D", "ascii"), "table-vmm": ("-vmm -nn", "box")}


@pytest.mark.parametrize("layout", [*LAYOUTS, *TABLES])
def test_library_scan_and_audit_agree(tmp_path, capsys, layout):
    d = tmp_path / "dumps"
    d.mkdir()
    hosts = {f"host{seed:02d}": generate(seed) for seed in range(0, 48, 3)}

    def text(rows):
        if layout in LAYOUTS:
            return LAYOUTS[layout](rows)
        fmt, style = TABLES[layout]
        return tabulate(write_lspci(parse_lspci(as_nn(rows)), fmt), style, len(rows))

    for name, (rows, _, _) in hosts.items():
        (d / f"{name}.txt").write_text(text(rows))
    audited = {r.server: (r.supported_cards, r.slices) for r in audit_paths([d])}
    for name, (rows, cards, vfs) in hosts.items():
        lib = counted(parse_lspci(text(rows)))
        rc = main(["scan", "--lspci", str(d / f"{name}.txt"), "--format", "json"])
        doc = json.loads(capsys.readouterr().out)
        assert rc == (1 if doc["summary"]["conflicts"] else 0), name  # Pascal beside Blackwell: 1
        assert doc["summary"]["invalid"] == 0
        scanned = (doc["summary"]["supported_cards"], sum("vf" in x["flags"] for x in doc["devices"]))
        assert lib == scanned == (cards, vfs), name
        assert audited[name] == (cards, 4 * cards) == (doc["summary"]["supported_cards"], doc["summary"]["slices"])
