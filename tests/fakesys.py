"""Fake sysfs trees for the hardware-source tests and benchmarks.

``write_tree(root, devices)`` lays out ``<root>/sys/devices/pci*/<addr>`` with
the attribute files the kernel shows (plus a 64-byte ``config`` consistent with
them, which ``lspci -A linux-sysfs`` reads) and the
``<root>/sys/bus/pci/devices/<addr>`` symlinks pointing at them, like a real
sysfs.  The server builders below describe the machines the platform rents.

``expected(devices)`` is the DeviceTable a correct scan must return, computed
straight from the declarations, so tests compare whole tables.

>>> import tempfile
>>> root = tempfile.mkdtemp()
>>> write_tree(root, gex44())  # doctest: +ELLIPSIS
'...'
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field

import numpy as np

from gpuclass.devices import FLAG_BOOT_VGA, FLAG_PF, FLAG_VF, NO_ADDRESS, DeviceTable
from gpuclass.sources.sysfs import parse_address

# A raw override: text or bytes to write, None to delete the file, or a Link.


@dataclass(frozen=True)
class Link:
    """Make the attribute a symlink to ``target`` (relative or absolute)."""

    target: str


@dataclass
class FakeDevice:
    address: str
    vendor: int
    device: int
    class_code: int
    subvendor: int | None = None
    subdevice: int | None = None
    revision: int = 0
    driver: str | None = None
    numa_node: int | None = -1  # None: no file at all (a kernel without CONFIG_NUMA)
    iommu_group: int | None = None
    physfn: str | None = None  # the PF's address, for a virtual function
    sriov_totalvfs: int | None = None
    sriov_numvfs: int | None = None
    boot_vga: int | None = None  # written for display-class devices only, like the kernel
    header_type: int = 0
    config: bool = True
    raw: dict[str, str | bytes | Link | None] = field(default_factory=dict)
    # A broken device: the scan must flag it with a problem containing this text.
    problem: str | None = None
    # The device entry itself is a link out of the root (written by write_tree).
    escape: bool = False


def _config(d: FakeDevice) -> bytes:
    """The standard 64-byte header, consistent with the attribute files."""
    b = bytearray(64)
    struct.pack_into("<HHHHB", b, 0, d.vendor, d.device, 0x0406, 0x0010, d.revision & 0xFF)
    b[9] = d.class_code & 0xFF
    b[10] = (d.class_code >> 8) & 0xFF
    b[11] = (d.class_code >> 16) & 0xFF
    b[14] = d.header_type
    if d.header_type & 0x7F == 0:
        struct.pack_into("<HH", b, 0x2C, d.subvendor or 0, d.subdevice or 0)
    return bytes(b)


def _write(path: str, content: str | bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(content.encode() if isinstance(content, str) else content)


def write_tree(root: str | os.PathLike, devices: list[FakeDevice]) -> str:
    """Write ``devices`` under ``root`` (created if needed); returns ``root``."""
    root = os.fspath(root)
    bus_dir = os.path.join(root, "sys", "bus", "pci", "devices")
    os.makedirs(bus_dir, exist_ok=True)
    os.makedirs(os.path.join(root, "sys", "bus", "pci", "drivers"), exist_ok=True)
    by_addr = {d.address: d for d in devices}
    vfs_of: dict[str, list[FakeDevice]] = {}
    for d in devices:
        if d.physfn is not None:
            vfs_of.setdefault(d.physfn, []).append(d)
    for d in devices:
        addr = parse_address(d.address)
        host = f"pci{addr[0]:04x}:{addr[1]:02x}" if addr else "pci-odd"
        real = os.path.join(root, "sys", "devices", host, d.address)
        os.makedirs(real, exist_ok=True)
        link = os.path.join(bus_dir, d.address)
        if d.escape:
            # A device entry that leads outside the root: the scan must not follow it.
            outside = os.path.join(os.path.dirname(os.path.abspath(root)),
                                   os.path.basename(root) + "-outside", d.address)
            os.makedirs(outside, exist_ok=True)
            _write(os.path.join(outside, "vendor"), "0x10de\n")
            os.symlink(outside, link)
            continue
        os.symlink(os.path.relpath(real, bus_dir), link)
        files: dict[str, str | bytes | Link | None] = {
            "vendor": f"0x{d.vendor:04x}\n",
            "device": f"0x{d.device:04x}\n",
            "class": f"0x{d.class_code:06x}\n",
            "revision": f"0x{d.revision:02x}\n",
            # decoys a scanner has no business reading (irq and resource: for lspci -v)
            "remove": "", "rescan": "", "reset": "", "uevent": "DRIVER=decoy\n", "irq": "0\n",
            "resource": "0x0000000000000000 0x0000000000000000 0x0000000000000000\n" * 13,
        }
        if d.subvendor is not None:
            files["subsystem_vendor"] = f"0x{d.subvendor:04x}\n"
        if d.subdevice is not None:
            files["subsystem_device"] = f"0x{d.subdevice:04x}\n"
        if d.numa_node is not None:
            files["numa_node"] = f"{d.numa_node}\n"
        if d.sriov_totalvfs is not None:
            files["sriov_totalvfs"] = f"{d.sriov_totalvfs}\n"
            files["sriov_numvfs"] = f"{d.sriov_numvfs or 0}\n"
        if d.boot_vga is not None and d.class_code >> 16 == 0x03:
            files["boot_vga"] = f"{d.boot_vga}\n"
        if d.config:
            files["config"] = _config(d)
        if d.driver is not None:
            files["driver"] = Link(f"../../../bus/pci/drivers/{d.driver}")
            os.makedirs(os.path.join(root, "sys", "bus", "pci", "drivers", d.driver), exist_ok=True)
        if d.iommu_group is not None:
            files["iommu_group"] = Link(f"../../../kernel/iommu_groups/{d.iommu_group}")
            # the link resolves, as in a real sysfs (lspci shows only groups that do)
            os.makedirs(os.path.join(root, "sys", "kernel", "iommu_groups", str(d.iommu_group)),
                        exist_ok=True)
        if d.physfn is not None:
            files["physfn"] = Link(f"../{d.physfn}")
        vfs = vfs_of.get(d.address, [])
        for i, vf in enumerate(vfs):
            files[f"virtfn{i}"] = Link(f"../{vf.address}")
        files.update(d.raw)
        for name, content in files.items():
            path = os.path.join(real, name)
            if os.path.lexists(path):
                os.unlink(path)
            if content is None:
                continue
            if isinstance(content, Link):
                os.symlink(content.target, path)
            else:
                _write(path, content)
    del by_addr
    return root


def expected(devices: list[FakeDevice], source: str = "") -> DeviceTable:
    """The table a correct scan returns for ``devices`` (problems compared by substring)."""
    rows = []
    for d in devices:
        addr = parse_address(d.address)
        bad = d.problem is not None or d.escape
        key = (0, *addr) if addr else (1, 0, 0, 0, 0)
        flags = 0
        if not bad:
            if d.physfn is not None:
                flags |= FLAG_VF
            if d.sriov_totalvfs:
                flags |= FLAG_PF
            if d.boot_vga == 1 and d.class_code >> 16 == 0x03:
                flags |= FLAG_BOOT_VGA
        # a subsystem vendor of 0000 or ffff is no subsystem (lspci prints "" "")
        has_sub = (d.subvendor is not None and d.subdevice is not None and not bad
                   and d.subvendor not in (0, 0xFFFF))
        rows.append((key, addr or (0, 0, 0, NO_ADDRESS), d, bad, flags, has_sub))
    rows.sort(key=lambda r: (r[0], r[2].address))
    cols: dict[str, list] = {k: [] for k in (
        "domain", "bus", "slot", "function", "vendor", "device", "subvendor", "subdevice",
        "has_subsystem", "class_code", "revision", "flags", "numa_node", "iommu_group",
        "sriov_totalvfs", "sriov_numvfs", "driver", "problems")}
    for _, addr, d, bad, flags, has_sub in rows:
        cols["domain"].append(addr[0])
        cols["bus"].append(addr[1])
        cols["slot"].append(addr[2])
        cols["function"].append(addr[3])
        cols["vendor"].append(0 if bad else d.vendor)
        cols["device"].append(0 if bad else d.device)
        cols["class_code"].append(0 if bad else d.class_code)
        cols["subvendor"].append(d.subvendor if has_sub else 0)
        cols["subdevice"].append(d.subdevice if has_sub else 0)
        cols["has_subsystem"].append(has_sub)
        cols["revision"].append(-1 if bad else d.revision)
        cols["flags"].append(flags)
        numa = d.numa_node if d.numa_node is not None and d.numa_node >= 0 else -1
        cols["numa_node"].append(-1 if bad else numa)
        cols["iommu_group"].append(-1 if bad or d.iommu_group is None else d.iommu_group)
        cols["sriov_totalvfs"].append(-1 if bad or d.sriov_totalvfs is None else d.sriov_totalvfs)
        cols["sriov_numvfs"].append(-1 if bad or d.sriov_totalvfs is None else (d.sriov_numvfs or 0))
        cols["driver"].append(None if bad else d.driver)
        cols["problems"].append(d.problem or ("outside the root" if d.escape else None))
    if not rows:
        return DeviceTable.empty(source)
    return DeviceTable.from_columns(source, **{k: (np.array(v, dtype=np.int64) if k not in (
        "driver", "problems", "has_subsystem") else v) for k, v in cols.items()})


# -- the machines -------------------------------------------------------------

NV = 0x10DE


def _intel_host(domain: str = "0000") -> list[FakeDevice]:
    return [
        FakeDevice(f"{domain}:00:00.0", 0x8086, 0xA700, 0x060000, 0x8086, 0x7270, revision=0x01,
                   numa_node=0),
        FakeDevice(f"{domain}:00:01.0", 0x8086, 0xA70D, 0x060400, 0x8086, 0x7270, revision=0x01,
                   driver="pcieport", header_type=0x01, numa_node=0, iommu_group=1),
    ]


def gex44() -> list[FakeDevice]:
    """i5-13500 with its UHD 770 iGPU, an RTX 4000 SFF Ada and its HDMI audio, NVMe, NIC."""
    return [
        *_intel_host(),
        FakeDevice("0000:00:02.0", 0x8086, 0xA780, 0x030000, 0x8086, 0x7270, revision=0x04,
                   driver="i915", boot_vga=1, iommu_group=0),
        FakeDevice("0000:01:00.0", NV, 0x27B0, 0x030000, NV, 0x16FA, revision=0xA1,
                   driver="nvidia", boot_vga=0, iommu_group=12, header_type=0x80),
        FakeDevice("0000:01:00.1", NV, 0x22BC, 0x040300, NV, 0x16FA, revision=0xA1,
                   driver="snd_hda_intel", iommu_group=12),
        FakeDevice("0000:02:00.0", 0x144D, 0xA80A, 0x010802, 0x144D, 0xA801, driver="nvme",
                   iommu_group=13),
        FakeDevice("0000:03:00.0", 0x8086, 0x125B, 0x020000, 0x8086, 0x0000, revision=0x04,
                   driver="igc", iommu_group=14),
    ]


def gex130() -> list[FakeDevice]:
    """Xeon Gold 5412U with the ASPEED BMC display and an RTX 6000 Ada (two NUMA nodes)."""
    return [
        *_intel_host(),
        FakeDevice("0000:03:00.0", 0x1A03, 0x2000, 0x030000, 0x1A03, 0x2000, revision=0x52,
                   driver="ast", boot_vga=1, numa_node=0, iommu_group=20),
        FakeDevice("0000:16:00.0", 0x8086, 0x1593, 0x020000, 0x8086, 0x0005, revision=0x02,
                   driver="ice", numa_node=0, iommu_group=30),
        FakeDevice("0000:17:00.0", NV, 0x26B1, 0x030000, NV, 0x16A1, revision=0xA1,
                   driver="nvidia", boot_vga=0, numa_node=1, iommu_group=40, header_type=0x80),
        FakeDevice("0000:17:00.1", NV, 0x22BA, 0x040300, NV, 0x16A1, revision=0xA1,
                   driver="snd_hda_intel", numa_node=1, iommu_group=40),
    ]


def gex131() -> list[FakeDevice]:
    """An RTX PRO 6000 Blackwell Max-Q Workstation with its audio function, no driver bound."""
    return [
        *_intel_host(),
        FakeDevice("0000:03:00.0", 0x1A03, 0x2000, 0x030000, 0x1A03, 0x2000, revision=0x52,
                   driver="ast", boot_vga=1, iommu_group=20),
        FakeDevice("0000:c1:00.0", NV, 0x2BB4, 0x030000, NV, 0x204C, revision=0xA1,
                   boot_vga=0, numa_node=1, iommu_group=50, header_type=0x80),
        FakeDevice("0000:c1:00.1", NV, 0x22E8, 0x040300, NV, 0x204C, revision=0xA1,
                   numa_node=1, iommu_group=50),
    ]


def gtx1080_box() -> list[FakeDevice]:
    """An old desktop-class box: GTX 1080, no NUMA support, no IOMMU."""
    return [
        FakeDevice("0000:00:00.0", 0x8086, 0x591F, 0x060000, 0x1458, 0x5000, revision=0x05,
                   numa_node=None),
        FakeDevice("0000:01:00.0", NV, 0x1B80, 0x030000, 0x1458, 0x3702, revision=0xA1,
                   driver="nvidia", boot_vga=1, numa_node=None, header_type=0x80),
        FakeDevice("0000:01:00.1", NV, 0x10F0, 0x040300, 0x1458, 0x3702, revision=0xA1,
                   driver="snd_hda_intel", numa_node=None),
    ]


def turing_box() -> list[FakeDevice]:
    """A Quadro RTX 6000 (the trap card) with its audio, USB and UCSI functions."""
    return [
        FakeDevice("0000:65:00.0", NV, 0x1E30, 0x030000, NV, 0x12BA, revision=0xA1,
                   driver="nouveau", boot_vga=1, header_type=0x80),
        FakeDevice("0000:65:00.1", NV, 0x10F7, 0x040300, NV, 0x12BA, revision=0xA1),
        FakeDevice("0000:65:00.2", NV, 0x1AD6, 0x0C0330, NV, 0x12BA, revision=0xA1,
                   driver="xhci_hcd"),
        FakeDevice("0000:65:00.3", NV, 0x1AD7, 0x0C8000, NV, 0x12BA, revision=0xA1,
                   driver="nvidia-gpu"),
    ]


def sriov_server() -> list[FakeDevice]:
    """An X710 NIC and an RTX PRO 6000 Blackwell Server Edition, each with two VFs."""
    return [
        FakeDevice("0000:3b:00.0", 0x8086, 0x1572, 0x020000, 0x8086, 0x0001, revision=0x02,
                   driver="i40e", sriov_totalvfs=64, sriov_numvfs=2, iommu_group=60),
        FakeDevice("0000:3b:02.0", 0x8086, 0x154C, 0x020000, 0x8086, 0x0000, revision=0x02,
                   driver="iavf", physfn="0000:3b:00.0", iommu_group=61),
        FakeDevice("0000:3b:02.1", 0x8086, 0x154C, 0x020000, 0x8086, 0x0000, revision=0x02,
                   physfn="0000:3b:00.0", iommu_group=62),
        FakeDevice("0000:81:00.0", NV, 0x2BB5, 0x030200, NV, 0x204E, revision=0xA1,
                   driver="nvidia", sriov_totalvfs=4, sriov_numvfs=2, numa_node=1, iommu_group=70),
        FakeDevice("0000:81:00.4", NV, 0x2BB5, 0x030200, NV, 0x204E, revision=0xA1,
                   driver="nvidia", physfn="0000:81:00.0", numa_node=1, iommu_group=71),
        FakeDevice("0000:81:00.5", NV, 0x2BB5, 0x030200, NV, 0x204E, revision=0xA1,
                   physfn="0000:81:00.0", numa_node=1, iommu_group=72),
        # SR-IOV capable but not enabled: a PF with zero VFs still counts as capable
        FakeDevice("0000:82:00.0", 0x15B3, 0x101D, 0x020000, 0x15B3, 0x0040,
                   driver="mlx5_core", sriov_totalvfs=8, sriov_numvfs=0, numa_node=1),
    ]


def wide_domains() -> list[FakeDevice]:
    """Domains of 4, 5 (Intel VMD) and 6 hex digits."""
    return [
        FakeDevice("0000:00:00.0", 0x8086, 0x09A2, 0x088000, 0x8086, 0x0000, revision=0x04),
        FakeDevice("10000:e1:00.0", 0x144D, 0xA80A, 0x010802, 0x144D, 0xA801, driver="nvme"),
        FakeDevice("100000:01:00.0", NV, 0x2BB1, 0x030000, NV, 0x204B, revision=0xA1,
                   driver="nvidia"),
        FakeDevice("100000:01:00.1", NV, 0x22E8, 0x040300, NV, 0x204B, revision=0xA1),
    ]


def broken() -> list[FakeDevice]:
    """Partial and malformed devices next to a good GPU that must survive them."""
    gpu = FakeDevice("0000:01:00.0", NV, 0x27B0, 0x030000, NV, 0x16FA, revision=0xA1,
                     driver="nvidia", header_type=0x80,
                     # optional attributes that are malformed: missing values, not problems
                     raw={"numa_node": "banana\n", "iommu_group": "12\n", "sriov_totalvfs": "x\n"})
    return [
        gpu,
        FakeDevice("0000:02:00.0", NV, 0x2BB4, 0x030000, problem="vendor: missing",
                   raw={"vendor": None}),
        FakeDevice("0000:03:00.0", NV, 0x2BB4, 0x030000, problem="class: malformed",
                   raw={"class": "0xZZ0000\n"}),
        FakeDevice("0000:04:00.0", NV, 0x2BB4, 0x030000, problem="device: malformed",
                   raw={"device": ""}),
        FakeDevice("0000:05:00.0", NV, 0x2BB4, 0x030000, problem="vendor: malformed",
                   raw={"vendor": "0x10de10de\n"}),
        FakeDevice("0000:06:00.0", NV, 0x2BB4, 0x030000, problem="class: malformed",
                   raw={"class": "0x03000000\n"}),
        FakeDevice("0000:07:00.0", NV, 0x2BB4, 0x030000, problem="vendor: unreadable",
                   raw={"vendor": Link("/etc/hostname")}),
        FakeDevice("0000:08:00.0", NV, 0x2BB4, 0x030000, problem="device: unreadable",
                   raw={"device": Link("../0000:01:00.0/device")}),
        FakeDevice("0000:09:00.0", NV, 0x2BB4, 0x030000, escape=True),
        FakeDevice("0000:0a:00.0", NV, 0x2BB4, 0x030000, problem="class: missing",
                   raw={"class": None}),
        # no subsystem files and no config: fine for the scan (lspci would give up)
        FakeDevice("0000:0b:00.0", NV, 0x2BB4, 0x030200, config=False),
        FakeDevice("garbage", NV, 0x2BB4, 0x030000, problem="not a PCI address"),
    ]


def quirks() -> list[FakeDevice]:
    """A storage and network box whose IDs reach lspci's corners.

    Unprogrammed subsystems (``0000:0000``, ``ffff:ffff``, ``0000:1234``: lspci
    prints none), a quote in a subsystem name (escaped in ``-mm``), a subsystem
    name longer than lspci's 128-byte name buffer, a known class with an unknown
    subclass, an unknown class, vendor and subsystem vendor, and IDE prog-ifs
    (one named in pci.ids, one only described by its bits).
    """
    return [
        FakeDevice("0000:00:00.0", 0x8086, 0xA700, 0x060000, 0x0000, 0x0000, revision=0x01,
                   numa_node=0),
        FakeDevice("0000:00:14.0", 0x8086, 0x7A60, 0x0C0330, 0xFFFF, 0xFFFF, revision=0x11,
                   driver="xhci_hcd", numa_node=0, iommu_group=3),
        FakeDevice("0000:00:17.0", 0x8086, 0x7010, 0x01018A, 0x0000, 0x1234, driver="ata_piix",
                   iommu_group=4),
        FakeDevice("0000:00:17.1", 0x8086, 0x7010, 0x010182, 0x8086, 0x7010, iommu_group=4),
        FakeDevice("0000:01:00.0", 0x144D, 0xA802, 0x010802, 0x144D, 0xA801, driver="nvme",
                   numa_node=0, iommu_group=14),
        FakeDevice("0000:02:00.0", 0x15B3, 0x1017, 0x020000, 0x15B3, 0x0068, driver="mlx5_core",
                   numa_node=1, iommu_group=15, header_type=0x80),
        FakeDevice("0000:03:00.0", 0x8086, 0x0998, 0x0B8000, 0x8086, 0x0000, revision=0x02,
                   iommu_group=16),
        FakeDevice("0000:04:00.0", 0x1BAE, 0x0001, 0x140000, 0x1BAF, 0x0002, revision=0x05),
    ]


SERVERS = {
    "gex44": gex44,
    "gex130": gex130,
    "gex131": gex131,
    "gtx1080": gtx1080_box,
    "turing": turing_box,
    "sriov": sriov_server,
    "wide_domains": wide_domains,
    "quirks": quirks,
}


def generated(n: int, seed: int = 0) -> list[FakeDevice]:
    """``n`` plausible devices (for benchmarks): GPU cards with audio, NICs with VFs, NVMe."""
    rng = np.random.default_rng(seed)
    out: list[FakeDevice] = []
    bus = 0
    while len(out) < n:
        bus += 1
        dom, b = divmod(bus, 256)
        kind = int(rng.integers(0, 3))
        base = f"{dom:04x}:{b:02x}"
        if kind == 0:
            dev = int(rng.choice([0x27B0, 0x26B1, 0x2BB4, 0x1B80, 0x1E30]))
            out.append(FakeDevice(f"{base}:00.0", NV, dev, 0x030000, NV, 0x1000 + bus % 4096,
                                  revision=0xA1, driver="nvidia", boot_vga=0,
                                  iommu_group=bus, numa_node=bus % 2))
            out.append(FakeDevice(f"{base}:00.1", NV, 0x22BC, 0x040300, NV, 0x1000 + bus % 4096,
                                  revision=0xA1, driver="snd_hda_intel", iommu_group=bus))
        elif kind == 1:
            out.append(FakeDevice(f"{base}:00.0", 0x8086, 0x1572, 0x020000, 0x8086, 1,
                                  revision=2, driver="i40e", sriov_totalvfs=64, sriov_numvfs=2,
                                  iommu_group=bus))
            for fn in range(2):
                out.append(FakeDevice(f"{base}:02.{fn}", 0x8086, 0x154C, 0x020000, 0x8086, 0,
                                      revision=2, physfn=f"{base}:00.0"))
        else:
            out.append(FakeDevice(f"{base}:00.0", 0x144D, 0xA80A, 0x010802, 0x144D, 0xA801,
                                  driver="nvme", iommu_group=bus))
    return out[:n]
