"""Realistic audit inputs written for the tests: auction records and lspci dumps of
GEX-like servers (our own samples in the shapes the real sources use)."""

from __future__ import annotations

AUCTION = [
    {"id": 2130001, "name": "SB", "cpu": "Intel Core i7-6700", "cpu_count": 1, "price": 39.0,
     "datacenter": "FSN1-DC14",
     "description": ["Intel Core i7-6700", "2x SSD SATA 250 GB", "4x RAM 16384 MB DDR4",
                     "NIC 1 Gbit Intel I219-LM", "GPU - Nvidia GeForce GTX 1080"],
     "information": ["Graphics card: GeForce GTX 1080"], "specials": ["GPU"]},
    {"id": 2130002, "name": "SB", "cpu": "Intel Core i7-7700", "price": 44.5, "datacenter": "FSN1-DC1",
     "description": ["Intel Core i7-7700", "2x HDD SATA 4,0 TB Enterprise", "2x RAM 32768 MB DDR4",
                     "GPU - Nvidia GeForce GTX 1080 Ti"],
     "information": [], "specials": ["GPU", "iNIC"]},
    {"id": 2130003, "name": "GEX44", "cpu": "Intel Core i5-13500", "price": 184.0, "datacenter": "FSN1-DC18",
     "description": ["Intel Core i5-13500", "2x SSD M.2 NVMe 1,92 TB Datacenter", "64 GB DDR4",
                     "GPU - Nvidia RTX\u2122 4000 SFF Ada Generation"],
     "information": ["20 GB GDDR6 ECC"], "specials": ["GPU", "ECC"]},
    {"id": 2130004, "name": "GEX130", "cpu": "Intel Xeon Gold 5412U", "price": 813.0, "datacenter": "NBG1-DC3",
     "description": ["Intel Xeon Gold 5412U", "2x SSD M.2 NVMe 1,92 TB Datacenter", "128 GB DDR5 ECC reg.",
                     "2x NVIDIA RTX 6000 Ada Generation 48 GB"],
     "information": [], "specials": ["GPU", "ECC"]},
    {"id": 2130005, "name": "GEX131", "cpu": "Intel Xeon Gold 5412U", "price": 889.0, "datacenter": "FSN1-DC8",
     "description": ["Intel Xeon Gold 5412U", "256 GB DDR5 ECC reg.",
                     "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition 96GB"],
     "information": [], "specials": ["GPU", "ECC"]},
    {"id": 2130006, "name": "SB", "cpu": "AMD Ryzen 7 3700X", "price": 37.0, "datacenter": "HEL1-DC2",
     "description": ["AMD Ryzen 7 3700X", "2x SSD M.2 NVMe 1 TB", "4x RAM 16384 MB DDR4 ECC"],
     "information": [], "specials": ["ECC"]},
    {"id": 2130007, "name": "SB", "cpu": "Intel Xeon W-2145", "price": 119.0, "datacenter": "FSN1-DC5",
     "description": ["Intel Xeon W-2145", "8x RAM 16384 MB DDR4 ECC reg.", "GPU - Nvidia Quadro RTX 6000"],
     "information": [], "specials": ["GPU", "ECC"]},
    {"id": 2130008, "name": "SB", "cpu": "Intel Core i9-9900K", "price": 49.0, "datacenter": "NBG1-DC1",
     "description": ["Intel Core i9-9900K", "2x SSD SATA 480 GB", "GPU - Nvidia"],
     "information": [], "specials": ["GPU"]},
    {"id": 2130009, "name": "SB", "cpu": "Intel Core i7-6700", "price": 39.0, "datacenter": "FSN1-DC14",
     "description": ["Intel Core i7-6700", "GPU - Nvidia GeForce GTX 1080", "GPU - Nvidia GeForce GTX 1080"],
     "information": [], "specials": ["GPU"]},
]

# lspci -nnmm of GEX-like machines (Intel/AMD host, one NVIDIA card with its audio function)
_HOST = (
    '00:00.0 "Host bridge [0600]" "Intel Corporation [8086]" "Device [a703]" -r01 "Intel Corporation [8086]" "Device [7270]"\n'
    '00:14.0 "USB controller [0c03]" "Intel Corporation [8086]" "Device [7ae0]" -r11 -p30 "Intel Corporation [8086]" "Device [7270]"\n'
    '00:1f.6 "Ethernet controller [0200]" "Intel Corporation [8086]" "Ethernet Connection (17) I219-LM [1a1c]" -r11 "Intel Corporation [8086]" "Device [0000]"\n'
    '02:00.0 "Non-Volatile memory controller [0108]" "Samsung Electronics Co Ltd [144d]" "NVMe SSD Controller PM9A1/PM9A3/980PRO [a80a]" -p02 "Samsung Electronics Co Ltd [144d]" "Device [aa0a]"\n'
)


def _card(device: str, name: str, audio: str, sub: str, bus: str = "01") -> str:
    return (f'{bus}:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation [10de]" "{name} [{device}]" -ra1 '
            f'"NVIDIA Corporation [10de]" "Device [{sub}]"\n'
            f'{bus}:00.1 "Audio device [0403]" "NVIDIA Corporation [10de]" "Device [{audio}]" -ra1 '
            f'"NVIDIA Corporation [10de]" "Device [{sub}]"\n')


LSPCI = {
    "gex44-1": _HOST + _card("27b0", "AD104GL [RTX 4000 SFF Ada Generation]", "22bc", "16fa"),
    "gex130-1": _HOST + _card("26b1", "AD102GL [RTX 6000 Ada Generation]", "22ba", "16a1")
                + _card("26b1", "AD102GL [RTX 6000 Ada Generation]", "22ba", "16a1", bus="81"),
    # a database older than the card prints "Device [2bb4]": classified by ID all the same
    "gex131-1": _HOST + _card("2bb4", "Device", "22e8", "204c"),
    "ws-rtx4000ada": _HOST + _card("27b2", "AD104GL [RTX 4000 Ada Generation]", "22bc", "181b"),
    "ax-plain": _HOST,
    "broken": _HOST + "this line is not lspci output\n",
}


# -- a larger listing in the auction's own style, for mutation and property tests ----

_CPUS = ["Intel Core i7-6700", "Intel Core i7-7700", "Intel Core i9-9900K", "Intel Xeon E5-1650V3",
         "AMD Ryzen 7 3700X", "Intel Core i5-13500", "Intel Xeon Gold 5412U", "AMD EPYC 7502P"]
_DISKS = ["2x SSD SATA 250 GB", "2x HDD SATA 4,0 TB Enterprise", "2x SSD M.2 NVMe 1,92 TB Datacenter",
          "1x SSD M.2 NVMe 512 GB", "4x HDD SATA 10,0 TB Enterprise"]
_RAM = ["4x RAM 16384 MB DDR4", "2x RAM 32768 MB DDR4 ECC", "64 GB DDR4", "128 GB DDR5 ECC reg.",
        "8x RAM 32768 MB DDR4 ECC reg."]
# (description line, supported cards it names)
_GPUS = [("GPU - Nvidia GeForce GTX 1080", 1), ("GPU - Nvidia GeForce GTX 1080 Ti", 1),
         ("GPU - Nvidia RTX\u2122 4000 SFF Ada Generation", 1), ("2x NVIDIA RTX 6000 Ada Generation 48 GB", 2),
         ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition 96GB", 1),
         ("GPU - Nvidia Quadro RTX 6000", 0), ("4x GPU - Nvidia RTX 4000 SFF Ada Generation", 4),
         ("GPU: 2 x NVIDIA RTX PRO 6000 Blackwell Server Edition", 2)]
_DCS = ["FSN1-DC1", "FSN1-DC14", "NBG1-DC3", "HEL1-DC2", "FSN1-DC18"]


def auction_listing(n: int, seed: int = 11) -> list[dict]:
    """``n`` auction records in the feed's shape, about one in three with a GPU line.

    ``expected`` (not a feed field) is how many supported cards the record names.
    """
    import random

    rng = random.Random(seed)
    out = []
    for i in range(n):
        desc = [rng.choice(_CPUS), rng.choice(_DISKS), rng.choice(_RAM), "NIC 1 Gbit Intel I219-LM"]
        specials = []
        expected = 0
        if rng.random() < 0.35:
            line, expected = rng.choice(_GPUS)
            desc.append(line)
            specials.append("GPU")
        if rng.random() < 0.4:
            specials.append("ECC")
        out.append({"id": 2200000 + i, "key": 2200000 + i, "name": rng.choice(["SB", "EX", "GEX44", "AX"]),
                    "description": desc, "information": [], "cpu": desc[0], "cpu_count": 1,
                    "is_highio": False, "traffic": "unlimited", "bandwidth": 1000,
                    "ram": [desc[2]], "ram_size": 64, "price": round(rng.uniform(30, 900), 2),
                    "setup_price": 0, "hourly_price": 0.0, "hdd_arr": [desc[1]],
                    "hdd_hr": [desc[1]], "hdd_size": 500, "hdd_count": 2,
                    "serverDiskData": {"nvme": [], "sata": [512, 512], "hdd": [], "general": []},
                    "datacenter": rng.choice(_DCS), "specials": specials, "dist": ["Rescue system"],
                    "fixed_price": False, "next_reduce": 3600, "next_reduce_hr": False,
                    "next_reduce_timestamp": 1780000000, "ip_price": {"Monthly": 1.7, "Hourly": 0.0027},
                    "expected": expected})
    return out


# A device table's rows (server, vendor, device, subvendor, subdevice, class): good servers,
# a mixed one, bad cells of every kind, nameless rows and a server that comes back later.
DEVICE_ROWS = [
    ("gex44-1", "10de", "27b0", "10de", "16fa", "0300"),
    ("gex44-1", "10de", "22bc", "10de", "16fa", "0403"),
    ("gex44-1", "8086", "1a1c", "", "", "0200"),
    ("gex130-1", "0x10de", "26b1", "10de", "16a1", "030000"),
    ("gex130-1", "10de", "26b1", "10de", "16a1", "030000"),
    ("mixed", "10de", "2bb5", "10de", "204e", "0302"),
    ("mixed", "10de", "1e30", "10de", "12ba", "0300"),
    ("bad", "zz", "27b0", "", "", "0300"),      # bad vendor
    ("bad", "10de", "", "", "", "0300"),        # device missing
    ("bad", "10de", "27b0", "10de", "", "0300"),  # half a subsystem
    ("bad", "10de", "27b0", "", "", "03"),       # fine: short class
    ("bad", "10de", "27b0", "", "", "xyz"),      # bad class
    ("", "10de", "27b0", "", "", "0300"),        # no server
    ("", "10de", "27b0", "", "", "0300"),        # no server, again: its own report
    ("gex44-1", "10de", "27b0", "", "", "0300"),  # the server again, not next to its rows
]
