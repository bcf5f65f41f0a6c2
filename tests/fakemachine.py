"""Whole fake machines for the wrapper tests: a sysfs tree plus /proc/cpuinfo and /dev/kvm.

``write_machine(root, devices, cpu)`` lays out the PCI devices with
:mod:`fakesys` and a CPU of one of the kinds the provisioner must tell apart.

>>> sorted(CPUS)
['amd', 'intel', 'nested', 'vm']
"""

from __future__ import annotations

import os
import stat

import fakesys


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
