"""Write the example machine of examples/: a GPU server with two RTX 6000 Ada.

- ``examples/gpu-server``: its sysfs tree (what gpuclass reads: ``sys/bus/pci/devices``,
  the device folders, ``proc/cpuinfo``), the fake GEX130 of tests/fakesys.py with the second
  card where the recorded GEX130 sample (tests/lspci_samples.py) has it, at ``c1:00.0``;
  no ``dev/kvm`` (git cannot carry a device node);
- ``examples/lspci-gpu-server.txt``: ``lspci -nnmm -D`` run on that tree with the bundled
  pci.ids and no udev hardware database (needs pciutils);
- ``examples/devices.csv``: a device table of five servers built from the same fakes.

Run from the repository root: ``python tools/make_example_machine.py``.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import fakemachine  # noqa: E402
import fakesys  # noqa: E402

NV = fakesys.NV
TREE = ROOT / "examples" / "gpu-server"


def gpu_server() -> list[fakesys.FakeDevice]:
    return fakesys.gex130() + [
        fakesys.FakeDevice("0000:c1:00.0", NV, 0x26B1, 0x030000, NV, 0x16A1, revision=0xA1,
                           driver="nvidia", boot_vga=0, numa_node=1, iommu_group=57,
                           header_type=0x80),
        fakesys.FakeDevice("0000:c1:00.1", NV, 0x22BA, 0x040300, NV, 0x16A1, revision=0xA1,
                           driver="snd_hda_intel", numa_node=1, iommu_group=57),
    ]


def write_tree() -> None:
    shutil.rmtree(TREE, ignore_errors=True)
    fakesys.write_tree(TREE, gpu_server())
    text, _ = fakemachine.CPUS["intel"]
    (TREE / "proc").mkdir()
    (TREE / "proc" / "cpuinfo").write_text(
        text.replace("Intel(R) Core(TM) i5-13500", "Intel(R) Xeon(R) Gold 5412U"))
    # the decoys a scanner must not touch are left out of the shipped tree
    for dirpath, _dirs, files in os.walk(TREE):
        for name in files:
            if name in ("remove", "rescan", "reset", "uevent"):
                os.unlink(os.path.join(dirpath, name))
    # git keeps no empty folder: what the kernel shows in them, so the links resolve in a clone
    for driver in (TREE / "sys" / "bus" / "pci" / "drivers").iterdir():
        for name in ("bind", "unbind"):
            (driver / name).touch()
    for group in (TREE / "sys" / "kernel" / "iommu_groups").iterdir():
        (group / "type").write_text("DMA-FQ\n")


def write_lspci() -> None:
    out = subprocess.run(
        ["lspci", "-nnmm", "-D", "-A", "linux-sysfs", "-O", f"sysfs.path={TREE}/sys/bus/pci",
         "-O", "hwdb.disable=1", "-i", str(ROOT / "data" / "pci.ids")],
        check=True, capture_output=True, text=True).stdout
    (ROOT / "examples" / "lspci-gpu-server.txt").write_text(out)


def write_devices_csv() -> None:
    machines = {"gex44-01": fakesys.gex44(), "gex130-01": gpu_server(),
                "gex131-01": fakesys.gex131(), "turing-01": fakesys.turing_box(),
                "mixed-01": fakemachine.pascal_and_blackwell()}
    with open(ROOT / "examples" / "devices.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["server", "vendor", "device", "subvendor", "subdevice", "class"])
        for name, devices in machines.items():
            for d in devices:
                w.writerow([name, f"{d.vendor:04x}", f"{d.device:04x}", f"{d.subvendor or 0:04x}",
                            f"{d.subdevice or 0:04x}", f"{d.class_code:06x}"])


if __name__ == "__main__":
    write_tree()
    write_devices_csv()
    if shutil.which("lspci"):
        write_lspci()
    else:
        print("lspci not found (pciutils): examples/lspci-gpu-server.txt left as it is",
              file=sys.stderr)
