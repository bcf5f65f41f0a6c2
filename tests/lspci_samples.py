"""lspci text shared by the source tests: real output of lspci 3.9, and a hypothesis strategy
for any DeviceTable that lspci can represent."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from gpuclass.devices import DeviceTable

# Real output of lspci 3.9 (names from a current pci.ids), trimmed.
GEX44_NNMM_D = """\
0000:00:00.0 "Host bridge [0600]" "Intel Corporation [8086]" "Device [a700]" -r01 -p00 "Intel Corporation [8086]" "Device [7270]"
0000:00:02.0 "VGA compatible controller [0300]" "Intel Corporation [8086]" "Raptor Lake-S GT1 [UHD Graphics 770] [a780]" -r04 -p00 "Intel Corporation [8086]" "Device [7270]"
0000:01:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation [10de]" "AD104GL [RTX 4000 SFF Ada Generation] [27b0]" -ra1 -p00 "NVIDIA Corporation [10de]" "Device [16fa]"
0000:01:00.1 "Audio device [0403]" "NVIDIA Corporation [10de]" "AD104 High Definition Audio Controller [22bc]" -ra1 -p00 "NVIDIA Corporation [10de]" "Device [16fa]"
0000:02:00.0 "Non-Volatile memory controller [0108]" "Samsung Electronics Co Ltd [144d]" "NVMe SSD Controller PM9A1/PM9A3/980PRO [a80a]" -p02 "Samsung Electronics Co Ltd [144d]" "SSD 980 PRO [a801]"
"""

VMM = """\
Slot:	0000:01:00.0
Class:	VGA compatible controller [0300]
Vendor:	NVIDIA Corporation [10de]
Device:	Device [2bb4]
SVendor:	NVIDIA Corporation [10de]
SDevice:	Device [204c]
Rev:	a1
ProgIf:	00
Driver:	nvidia
Module:	nvidia
NUMANode:	1
IOMMUGroup:	50

Slot:	0000:01:00.1
Class:	Audio device [0403]
Vendor:	NVIDIA Corporation [10de]
Device:	Device [22e8]
Rev:	a1
ProgIf:	00
"""

N_VK = """\
00:00.0 0600: 8086:591f (rev 05)
	Subsystem: 1458:5000
	Flags: bus master, fast devsel, latency 0
01:00.0 0300: 10de:1b80 (rev a1) (prog-if 00 [VGA controller])
	Subsystem: 1458:3702
	Flags: bus master, fast devsel, latency 0, IRQ 130
	Kernel driver in use: nvidia
	Kernel modules: nvidiafb, nouveau, nvidia
01:00.1 0403: 10de:10f0 (rev a1)
	Subsystem: 1458:3702
"""

NN = """\
0000:65:00.0 VGA compatible controller [0300]: NVIDIA Corporation TU102GL [Quadro RTX 6000/8000] [10de:1e30] (rev a1)
0000:65:00.2 USB controller [0c03]: NVIDIA Corporation TU102 USB 3.1 Host Controller [10de:1ad6] (rev a1) (prog-if 30 [XHCI])
"""


# -- hypothesis: any table lspci can represent survives a round trip ---------

_u16 = st.integers(0, 0xFFFF)


@st.composite
def tables(draw, with_details: bool):
    n = draw(st.integers(0, 12))
    addrs = draw(st.lists(st.tuples(st.sampled_from([0, 0, 1, 0x10000, 0x100000, 0xFFFFFFFF]),
                                    st.integers(0, 255), st.integers(0, 31), st.integers(0, 7)),
                          min_size=n, max_size=n, unique=True))
    # no quote or backslash: lspci escapes them in -mm names and the parsers keep the escapes
    name = st.one_of(st.none(), st.text(st.characters(min_codepoint=32, max_codepoint=126,
                                                      blacklist_characters='"\\'),
                                        min_size=1, max_size=20).map(str.strip).filter(bool))
    cols = {
        "domain": [a[0] for a in addrs], "bus": [a[1] for a in addrs],
        "slot": [a[2] for a in addrs], "function": [a[3] for a in addrs],
        "vendor": draw(st.lists(_u16, min_size=n, max_size=n)),
        "device": draw(st.lists(_u16, min_size=n, max_size=n)),
        "class_code": draw(st.lists(st.integers(0, 0xFFFFFF), min_size=n, max_size=n)),
        "revision": draw(st.lists(st.integers(0, 255), min_size=n, max_size=n)),
        "has_subsystem": draw(st.lists(st.booleans(), min_size=n, max_size=n)),
    }
    subs = draw(st.lists(st.tuples(_u16, _u16), min_size=n, max_size=n))
    # lspci shows no subsystem whose vendor is 0000 or ffff
    cols["has_subsystem"] = [h and s[0] not in (0, 0xFFFF) for s, h in zip(subs, cols["has_subsystem"])]
    cols["subvendor"] = [s[0] if h else 0 for s, h in zip(subs, cols["has_subsystem"])]
    cols["subdevice"] = [s[1] if h else 0 for s, h in zip(subs, cols["has_subsystem"])]
    if with_details:
        cols["driver"] = draw(st.lists(st.one_of(st.none(), st.from_regex(r"[a-z][a-z0-9_-]{0,12}",
                                                                          fullmatch=True)),
                                       min_size=n, max_size=n))
        cols["numa_node"] = draw(st.lists(st.integers(-1, 7), min_size=n, max_size=n))
        cols["iommu_group"] = draw(st.lists(st.integers(-1, 500), min_size=n, max_size=n))
    texts = draw(st.booleans())
    if texts:
        for col in ("class_text", "vendor_text", "device_text"):
            cols[col] = draw(st.lists(name.filter(lambda x: x is not None), min_size=n, max_size=n))
    return DeviceTable.from_columns("hypothesis", **{k: np.array(v, dtype=np.int64)
                                                     if k not in ("driver", "has_subsystem")
                                                     and not k.endswith("_text") else v
                                                     for k, v in cols.items()}), texts


# -- collected dumps as they reach an auditor: real lspci 3.9 line formats ----------

# `lspci -nn` of a GEX44 in the rescue system, pasted with the prompt and the libkmod
# warning lspci prints there (no kernel modules in the rescue image).
GEX44_NN_RESCUE = """\
root@rescue ~ # lspci -nn
lspci: Unable to load libkmod resources: error -2
00:00.0 Host bridge [0600]: Intel Corporation Device [8086:a700] (rev 01)
00:02.0 VGA compatible controller [0300]: Intel Corporation Raptor Lake-S GT1 [UHD Graphics 770] [8086:a780] (rev 04)
00:14.0 USB controller [0c03]: Intel Corporation Raptor Lake USB 3.2 Gen 2x2 (20 Gb/s) XHCI Host Controller [8086:7a60] (rev 11)
01:00.0 VGA compatible controller [0300]: NVIDIA Corporation AD104GL [RTX 4000 SFF Ada Generation] [10de:27b0] (rev a1)
01:00.1 Audio device [0403]: NVIDIA Corporation AD104 High Definition Audio Controller [10de:22bc] (rev a1)
02:00.0 Non-Volatile memory controller [0108]: Samsung Electronics Co Ltd NVMe SSD Controller PM9A1/PM9A3/980PRO [144d:a80a]
root@rescue ~ #
"""

# `for d in /sys/kernel/iommu_groups/*/devices/*; do ... lspci -nns ...; done`, as posted,
# with the revision glued to the IDs by an editor.
GEX130_IOMMU_LOOP = """\
IOMMU Group 0 00:00.0 Host bridge [0600]: Intel Corporation Device [8086:1bfe] (rev 03)
IOMMU Group 13 00:1f.0 ISA bridge [0601]: Intel Corporation Device [8086:1b81] (rev 09)
IOMMU Group 29 41:00.0 VGA compatible controller [0300]: NVIDIA Corporation AD102GL [RTX 6000 Ada Generation] [10de:26b1](rev a1)
IOMMU Group 29 41:00.1 Audio device [0403]: NVIDIA Corporation AD102 High Definition Audio Controller [10de:22ba](rev a1)
IOMMU Group 57 c1:00.0 VGA compatible controller [0300]: NVIDIA Corporation AD102GL [RTX 6000 Ada Generation] [10de:26b1] (rev a1)
IOMMU Group 57 c1:00.1 Audio device [0403]: NVIDIA Corporation AD102 High Definition Audio Controller [10de:22ba] (rev a1)
"""

# `lspci -nnk` pasted into a ticket: the detail lines lost their indentation.
GEX44_NNK_FLAT = """\
00:00.0 Host bridge [0600]: Intel Corporation Device [8086:a700] (rev 01)
Subsystem: Intel Corporation Device [8086:7270]
Kernel driver in use: skl_uncore
01:00.0 VGA compatible controller [0300]: NVIDIA Corporation AD104GL [RTX 4000 SFF Ada Generation] [10de:27b0] (rev a1)
Subsystem: NVIDIA Corporation Device [10de:16fa]
Kernel driver in use: nvidia
Kernel modules: nvidiafb, nouveau, nvidia_drm, nvidia
01:00.1 Audio device [0403]: NVIDIA Corporation AD104 High Definition Audio Controller [10de:22bc] (rev a1)
Subsystem: NVIDIA Corporation Device [10de:16fa]
Kernel driver in use: snd_hda_intel
Kernel modules: snd_hda_intel
"""

# `lspci -nnmm` of a GEX131 whose collector appended an error and then the dump again.
GEX131_NNMM_TWICE = """\
00:00.0 "Host bridge [0600]" "Intel Corporation [8086]" "Device [1bfe]" -r03 "Intel Corporation [8086]" "Device [0000]"
01:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation [10de]" "Device [2bb4]" -ra1 "NVIDIA Corporation [10de]" "Device [204c]"
01:00.1 "Audio device [0403]" "NVIDIA Corporation [10de]" "Device [22e8]" -ra1 "NVIDIA Corporation [10de]" "Device [204c]"
ssh: connect to host 10.0.0.31 port 22: Connection timed out
01:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation [10de]" "Device [2bb4]" -ra1 "NVIDIA Corporation [10de]" "Device [204c]"
"""

# `lspci -nn` of a vGPU host: an RTX PRO 6000 Blackwell Server Edition with 8 VFs
# enabled (ARI: VF offset 4, stride 1, so 41:00.4 .. 41:01.3).
_VF = ("41:0{s}.{f} 3D controller [0302]: NVIDIA Corporation GB202GL [RTX PRO 6000 Blackwell Server Edition] "
       "[10de:2bb5] (rev a1)\n")
SRIOV_NN = ("00:00.0 Host bridge [0600]: Intel Corporation Device [8086:1bfe] (rev 03)\n"
            "41:00.0 3D controller [0302]: NVIDIA Corporation GB202GL [RTX PRO 6000 Blackwell Server Edition] "
            "[10de:2bb5] (rev a1)\n"
            + "".join(_VF.format(s=(4 + k) // 8, f=(4 + k) % 8) for k in range(8)))

# The same host's `lspci -nnvvv` (trimmed): the physical function's SR-IOV capability.
SRIOV_VVV = """\
41:00.0 3D controller [0302]: NVIDIA Corporation GB202GL [RTX PRO 6000 Blackwell Server Edition] [10de:2bb5] (rev a1)
	Subsystem: NVIDIA Corporation Device [10de:204e]
	Physical Slot: 3
	Control: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- DisINTx+
	Latency: 0
	Interrupt: pin A routed to IRQ 255
	NUMA node: 0
	IOMMU group: 44
	Region 0: Memory at d8000000 (32-bit, non-prefetchable) [size=64M]
	Capabilities: [60] Power Management version 3
		Flags: PMEClk- DSI- D1- D2- AuxCurrent=0mA PME(D0-,D1-,D2-,D3hot-,D3cold-)
	Capabilities: [bcc v1] Single Root I/O Virtualization (SR-IOV)
		IOVCap:	Migration-, Interrupt Message Number: 000
		IOVCtl:	Enable+ Migration- Interrupt- MSE+ ARIHierarchy+
		IOVSta:	Migration-
		Initial VFs: 32, Total VFs: 32, Number of VFs: 8, Function Dependency Link: 00
		VF offset: 4, stride: 1, Device ID: 2bb5
		Supported Page Size: 00000573, System Page Size: 00000001
	Capabilities: [c14 v1] Alternative Routing-ID Interpretation (ARI)
		ARICap:	MFVC- ACS-, Next Function: 0
	Kernel driver in use: nvidia
	Kernel modules: nvidiafb, nouveau, nvidia_vgpu_vfio, nvidia
""" + "".join(
    f"41:0{(4 + k) // 8}.{(4 + k) % 8} 3D controller [0302]: NVIDIA Corporation GB202GL "
    "[RTX PRO 6000 Blackwell Server Edition] [10de:2bb5] (rev a1)\n"
    "\tSubsystem: NVIDIA Corporation Device [10de:0000]\n\tIOMMU group: "
    f"{45 + k}\n\tKernel driver in use: nvidia\n" for k in range(8))

# VFs beyond .0 of the card's own slot (no ARI), in -nnmm.
SRIOV_SAME_SLOT_NNMM = (
    '81:00.0 "3D controller [0302]" "NVIDIA Corporation [10de]" "Device [2bb5]" -ra1 "NVIDIA Corporation [10de]" "Device [204e]"\n'
    + "".join(f'81:00.{f} "3D controller [0302]" "NVIDIA Corporation [10de]" "Device [2bb5]" -ra1 '
              '"NVIDIA Corporation [10de]" "Device [0000]"\n' for f in range(1, 8)))
