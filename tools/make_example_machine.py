"""Write examples/gpu-server: the sysfs tree of a GPU server with two RTX 6000 Ada (the
fake GEX130 of tests/fakesys.py with the second card the recorded GEX130 sample shows at
c1:00.0). examples/lspci-gpu-server.txt is lspci -nnmm -D run on it:

    lspci -nnmm -D -A linux-sysfs -O sysfs.path=$PWD/examples/gpu-server/sys/bus/pci \\
        -O hwdb.disable=1 -i data/pci.ids > examples/lspci-gpu-server.txt

Run from the repository root: python tools/make_example_machine.py
"""
import os, sys, shutil
sys.path.insert(0, "tests")
import fakesys, fakemachine
NV = fakesys.NV
FD = fakesys.FakeDevice
devs = fakesys.gex130() + [
    FD("0000:c1:00.0", NV, 0x26B1, 0x030000, NV, 0x16A1, revision=0xA1,
       driver="nvidia", boot_vga=0, numa_node=1, iommu_group=57, header_type=0x80),
    FD("0000:c1:00.1", NV, 0x22BA, 0x040300, NV, 0x16A1, revision=0xA1,
       driver="snd_hda_intel", numa_node=1, iommu_group=57),
]
root = "examples/gpu-server"
shutil.rmtree(root, ignore_errors=True)
fakesys.write_tree(root, devs)
text, _ = fakemachine.CPUS["intel"]
text = text.replace("Intel(R) Core(TM) i5-13500", "Intel(R) Xeon(R) Gold 5412U")
os.makedirs(f"{root}/proc", exist_ok=True)
open(f"{root}/proc/cpuinfo", "w").write(text)
# the decoys a scanner must not read are left out of the shipped tree
for dirpath, dirs, files in os.walk(root):
    for f in files:
        if f in ("remove", "rescan", "reset", "uevent"):
            os.unlink(os.path.join(dirpath, f))
# git keeps no empty folder: what the kernel shows in them, so the links resolve in a clone
for d in os.listdir(f"{root}/sys/bus/pci/drivers"):
    for f in ("bind", "unbind"):
        open(f"{root}/sys/bus/pci/drivers/{d}/{f}", "w").close()
for g in os.listdir(f"{root}/sys/kernel/iommu_groups"):
    open(f"{root}/sys/kernel/iommu_groups/{g}/type", "w").write("DMA-FQ\n")
