"""Whole fake machines for the wrapper tests: a sysfs tree plus /proc/cpuinfo and /dev/kvm.

``write_machine(root, devices, cpu)`` lays out the PCI devices with
:mod:`fakesys` and a CPU of one of the kinds the provisioner must tell apart;
``generated_machines()`` is a hypothesis strategy of machines' devices.

>>> sorted(CPUS)
['amd', 'intel', 'nested', 'vm']
"""

from __future__ import annotations

import os
import random
import stat

import fakesys
from fakesys import FakeDevice, Link
from hypothesis import strategies as st


def cpuinfo(vendor: str, model: str, flags: str, cpus: int = 2) -> str:
    return "".join(
        f"processor\t: {i}\nvendor_id\t: {vendor}\ncpu family\t: 6\nmodel\t\t: 183\n"
        f"model name\t: {model}\nflags\t\t: {flags}\n\n" for i in range(cpus))


# kind -> (cpuinfo text, /dev/kvm present)
CPUS = {
    # bare metal: vmx/svm, no hypervisor bit, the kvm module loaded
    "intel": (cpuinfo("GenuineIntel", "Intel(R) Core(TM) i5-13500", "fpu vme pse vmx ept smx"), True),
    "amd": (cpuinfo("AuthenticAMD", "AMD Ryzen 9 7950X3D 16-Core Processor", "fpu svm npt"), True),
    # a plain cloud VM: hypervisor bit, no vmx/svm, no /dev/kvm
    "vm": (cpuinfo("AuthenticAMD", "AMD EPYC-Milan Processor", "fpu hypervisor"), False),
    # nested KVM: vmx exposed inside a VM, and /dev/kvm: still not bare metal
    "nested": (cpuinfo("GenuineIntel", "Intel Xeon Processor (Icelake)", "fpu vmx hypervisor"), True),
}


def make_kvm(root) -> None:
    """``dev/kvm`` as the kernel has it: character device 10:232 (mknod needs root, which the
    test machines and CI have)."""
    os.makedirs(os.path.join(root, "dev"), exist_ok=True)
    os.mknod(os.path.join(root, "dev", "kvm"), stat.S_IFCHR | 0o660, os.makedev(10, 232))


def write_machine(root, devices, cpu: str | None = "intel", kvm: bool | None = None) -> str:
    """Write ``devices`` and a CPU of kind ``cpu`` (None: no proc/ at all) under ``root``."""
    root = os.fspath(root)
    fakesys.write_tree(root, devices)
    if cpu is not None:
        text, has_kvm = CPUS[cpu]
        os.makedirs(os.path.join(root, "proc"), exist_ok=True)
        with open(os.path.join(root, "proc", "cpuinfo"), "w") as fh:
            fh.write(text)
        if has_kvm if kvm is None else kvm:
            make_kvm(root)
    return root


def pascal_and_ada() -> list:
    """A GTX 1080 next to an RTX 4000 SFF Ada: one proprietary install (Ada takes either)."""
    NV = fakesys.NV
    return [
        fakesys.FakeDevice("0000:01:00.0", NV, 0x1B80, 0x030000, 0x1458, 0x3702, revision=0xA1,
                           driver="nvidia", header_type=0x80),
        fakesys.FakeDevice("0000:02:00.0", NV, 0x27B0, 0x030000, NV, 0x16FA, revision=0xA1,
                           driver="nvidia", header_type=0x80),
    ]


def pascal_and_blackwell() -> list:
    """A GTX 1080 Ti next to an RTX PRO 6000 Blackwell Server: proprietary-only next to
    open-only, a kernel-module conflict."""
    NV = fakesys.NV
    return [
        fakesys.FakeDevice("0000:01:00.0", NV, 0x1B06, 0x030000, 0x1458, 0x3752, revision=0xA1,
                           driver="nvidia", header_type=0x80),
        fakesys.FakeDevice("0000:01:00.1", NV, 0x10EF, 0x040300, 0x1458, 0x3752, revision=0xA1),
        fakesys.FakeDevice("0000:41:00.0", NV, 0x2BB5, 0x030200, NV, 0x204E, revision=0xA1,
                           driver="nvidia", header_type=0x80),
    ]


def two_ada() -> list:
    """Two RTX 6000 Ada cards with their audio functions: 8 slices."""
    NV = fakesys.NV
    out = []
    for bus in (0x17, 0x65):
        out += [fakesys.FakeDevice(f"0000:{bus:02x}:00.0", NV, 0x26B1, 0x030000, NV, 0x16A1,
                                   revision=0xA1, driver="nvidia", header_type=0x80),
                fakesys.FakeDevice(f"0000:{bus:02x}:00.1", NV, 0x22BA, 0x040300, NV, 0x16A1,
                                   revision=0xA1)]
    return out


def ada_next_to_turing() -> list:
    """A supported RTX 4000 SFF Ada in the same box as an unsupported Quadro RTX 6000."""
    return [d for d in fakesys.gex44() if d.vendor == fakesys.NV] + fakesys.turing_box()


# -- generated machines ------------------------------------------------------------

NV = 0x10DE
GPU_IDS = [0x1B80, 0x1B06, 0x27B0, 0x26B1, 0x2BB1, 0x2BB4, 0x2BB5, 0x27B2, 0x1E30, 0x2204, 0x1B38]
BROKEN = [{"vendor": None}, {"class": "0xZZ0000\n"}, {"device": ""}, {"vendor": Link("/etc/hostname")},
           {"numa_node": "99999999999\n"}, {"sriov_numvfs": "-99999999999\n"}]


@st.composite
def generated_machines(draw):
    """A machine of a few cards: GPUs (allowlisted, look-alikes, the subsystem-told Quadro)
    with their audio and USB functions, NICs with VFs, other devices, sometimes a
    broken one; subsystems present, absent or unprogrammed."""
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    out: list[FakeDevice] = []
    for bus in range(1, draw(st.integers(1, 7)) + 1):
        base = f"0000:{bus:02x}:00"
        kind = rng.randrange(5)
        sub = rng.choice([(NV, 0x12BA), (NV, 0x129E), (0x1028, 0x1234), (0, 0), (0xFFFF, 0xFFFF), (None, None)])
        if kind <= 1:
            vendor = NV if rng.random() < 0.85 else rng.choice([0x1002, 0x8086])
            cls = rng.choice([0x030000, 0x030200, 0x038000])
            out.append(FakeDevice(f"{base}.0", vendor, rng.choice(GPU_IDS), cls, *sub,
                                  revision=0xA1, driver=rng.choice(["nvidia", None, "vfio-pci"]),
                                  boot_vga=rng.choice([0, 1, None]), iommu_group=bus,
                                  numa_node=rng.choice([-1, 0, 1, None])))
            for fn, (dev, fcls) in enumerate([(0x22BC, 0x040300), (0x1AD8, 0x0C0330), (0x1AD9, 0x0C8000)][
                    :rng.randrange(4)], start=1):
                out.append(FakeDevice(f"{base}.{fn}", vendor, dev, fcls, *sub, iommu_group=bus))
        elif kind == 2:
            out.append(FakeDevice(f"{base}.0", 0x15B3, 0x101D, 0x020000, 0x15B3, 0x0043,
                                  driver="mlx5_core", sriov_totalvfs=8, sriov_numvfs=2))
            for fn in range(1, 3):
                out.append(FakeDevice(f"{base}.{fn}", 0x15B3, 0x101E, 0x020000, 0x15B3, 0x0043,
                                      physfn=f"{base}.0"))
        elif kind == 3:  # a GPU's virtual functions (a vGPU-capable card)
            out.append(FakeDevice(f"{base}.0", NV, 0x26B1, 0x030200, NV, 0x16A1, sriov_totalvfs=4,
                                  sriov_numvfs=2))
            for fn in range(4, 6):
                out.append(FakeDevice(f"{base}.{fn}", NV, 0x26B1, 0x030200, NV, 0x16A1, physfn=f"{base}.0"))
        else:
            out.append(FakeDevice(f"{base}.0", rng.choice([0x144D, 0x8086, 0x1A03]),
                                  rng.randrange(0x10000), rng.choice([0x010802, 0x060400, 0x030000]),
                                  *sub))
    if rng.random() < 0.3:
        victim = rng.randrange(len(out))
        out[victim].raw = dict(rng.choice(BROKEN))
    if rng.random() < 0.1:
        out.append(FakeDevice("garbage", NV, 0x2BB4, 0x030000))
    return out
