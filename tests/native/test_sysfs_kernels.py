"""``read_devices``: the compiled sysfs reader and its twin agree on odd trees, byte for byte."""

from __future__ import annotations

import os

import fakesys
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass._native import Root, twin
from gpuclass._native import sysfs_py as SP
from gpuclass.inputs import walk_beneath
from gpuclass.sources.sysfs import PCI_DEVICES, scan_sysfs

from conftest import CORES

compiled = CORES["compiled"]
# The compiled_core fixture fails (never skips) when the compiled core should have loaded.
pytestmark = pytest.mark.usefixtures("compiled_core")


def _both(root: str, *, openat2: bool = True):
    """read_devices of every entry under root, by both cores (the compiled one through
    openat2 or, with ``openat2=False``, through its own user-space walk)."""
    root = os.path.realpath(root)
    devdir = os.path.join(root, PCI_DEVICES)
    chain = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    owned = list(chain)
    try:
        walk_beneath(chain, PCI_DEVICES, owned)
        names = sorted(os.listdir(chain[-1]))
        beneath = Root(tuple(chain), PCI_DEVICES if openat2 else None)
        return [core.read_devices(chain[-1], names, devdir, beneath) for core in (compiled, twin)]
    finally:
        for fd in owned:
            os.close(fd)


def _agree(root: str):
    (v1, d1, p1), (v2, d2, p2) = _both(root)
    assert v1.dtype == v2.dtype == np.int64 and v1.shape == v2.shape
    assert np.array_equal(v1, v2)
    assert d1 == d2
    assert p1 == p2
    # the compiled core's walk where openat2 is missing gives the same answers
    (v3, d3, p3), _ = _both(root, openat2=False)
    assert np.array_equal(v1, v3) and d1 == d3 and p1 == p3
    return v1, d1, p1


def _device(root, name: str, files: dict, links: dict | None = None, real: str | None = None):
    """A device directory with raw attribute contents (bytes/str) and links."""
    real = real or os.path.join(root, "sys", "devices", "pci0000:00", name)
    os.makedirs(real, exist_ok=True)
    devdir = os.path.join(root, PCI_DEVICES)
    os.makedirs(devdir, exist_ok=True)
    for k, v in files.items():
        with open(os.path.join(real, k), "wb") as fh:
            fh.write(v.encode() if isinstance(v, str) else v)
    for k, target in (links or {}).items():
        os.symlink(target, os.path.join(real, k))
    entry = os.path.join(devdir, name)
    if not os.path.lexists(entry):
        os.symlink(os.path.relpath(real, devdir), entry)
    return real


GOOD = {"vendor": "0x10de\n", "device": "0x27b0\n", "class": "0x030000\n"}


@pytest.mark.parametrize("name", [*fakesys.SERVERS, "broken"])
def test_cores_agree_on_the_fake_servers(tmp_path, name):
    devices = fakesys.SERVERS[name]() if name in fakesys.SERVERS else getattr(fakesys, name)()
    fakesys.write_tree(tmp_path, devices)
    _agree(str(tmp_path))


def test_cores_agree_on_odd_links_and_values(tmp_path):
    root = str(tmp_path / "root")
    long_driver = "d" * 300  # longer than the compiled reader's buffer: read again, same name
    _device(root, "0000:01:00.0", {**GOOD, "numa_node": " 3 \n", "revision": "0xA1\n"},
            {"driver": f"../../../bus/pci/drivers/{long_driver}", "iommu_group": "../../g/0042",
             "physfn": "../0000:00:00.0"})
    _device(root, "0000:02:00.0", {**GOOD, "numa_node": "-1\n", "sriov_totalvfs": "0\n",
                                   "sriov_numvfs": "0\n", "boot_vga": "1\n"},
            {"driver": "/abs/drivers/nvidia/", "iommu_group": "../../g/12345678901"})
    _device(root, "0000:03:00.0", {"vendor": "0x\n", "device": "0X27B0\n", "class": b"0x03\xff000\n"},
            {"iommu_group": "../../g/\u0663", "driver": "/"})
    _device(root, "0000:04:00.0", {**GOOD, "subsystem_vendor": "0x10de\n", "subsystem_device": "junk",
                                   "sriov_totalvfs": "8\n", "sriov_numvfs": "99999999999\n",
                                   "numa_node": "\t-0012\n"})
    os.makedirs(os.path.join(root, "sys", "devices", "pci0000:00", "0000:05:00.0", "vendor"))
    _device(root, "0000:05:00.0", {"device": "0x1\n", "class": "0x0\n\n\n"})  # vendor: a directory
    # an entry whose link is absolute, though to a place inside the root, and one that
    # leaves the root and comes back in: both would look above the root, both refused
    real6 = _device(root, "0000:06:00.0", GOOD, real=os.path.join(root, "sys", "devices", "x6"))
    os.symlink(real6, os.path.join(root, PCI_DEVICES, "0000:07:00.0"))
    back = os.path.join("..", "..", "..", "..", "..", "..", os.path.basename(str(tmp_path)), "root", "sys",
                        "devices", "x6")
    os.symlink(back, os.path.join(root, PCI_DEVICES, "0000:08:00.0"))
    # dangling, and a plain file
    os.symlink("nowhere", os.path.join(root, PCI_DEVICES, "0000:09:00.0"))
    with open(os.path.join(root, PCI_DEVICES, "0000:0a:00.0"), "w") as fh:
        fh.write("x")
    values, drivers, problems = _agree(root)
    assert drivers[0] == long_driver and drivers[1] == "nvidia" and drivers[2] is None
    assert values[0, 9] == 42 and values[1, 9] == -1 and values[2, 9] == -1
    assert values[0, 7] == SP.FLAG_VF and values[1, 7] == SP.FLAG_BOOT_VGA
    assert values[3, 7] == SP.FLAG_PF and values[3, 4] == 0 and values[3, 8] == -1
    assert "sriov_numvfs: out of range '99999999999'" in problems[3] and values[3, 11] == -1
    assert "iommu_group: out of range '12345678901'" in problems[1]
    assert "vendor: malformed '0x'" in problems[2] and "class: malformed" in problems[2]
    assert "vendor: unreadable" in problems[4]
    assert problems[5] is None and values[5, 1] == 0x27B0
    assert "outside the root" in problems[6] and "outside the root" in problems[7]
    assert values[6, 1] == values[7, 1] == 0
    assert "cannot open" in problems[8] and "cannot open" in problems[9]
    scan_sysfs(root)  # and the whole scan takes it


def test_cores_agree_outside_and_at_the_root(tmp_path):
    root = str(tmp_path / "root")
    _device(root, "0000:01:00.0", GOOD)
    outside = _device(str(tmp_path / "elsewhere"), "0000:02:00.0", GOOD)
    os.symlink(outside, os.path.join(root, PCI_DEVICES, "0000:02:00.0"))
    _, _, problems = _agree(root)
    assert problems[0] is None and "outside the root" in problems[1]
    # with "/" as the root nothing is outside
    devdir = os.path.join(os.path.realpath(root), PCI_DEVICES)
    fd = os.open(devdir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        got = [core.read_devices(fd, ["0000:02:00.0"], devdir, None) for core in (compiled, twin)]
    finally:
        os.close(fd)
    assert got[0][2] == got[1][2] == [None] and np.array_equal(got[0][0], got[1][0])


TEXTS = st.one_of(
    st.sampled_from(["0x10de\n", "0x0\n", "0xffff", "0x27b0\n\n", "12\n", "-1\n", " 7 ", "0x030000\n",
                     "0x03000000\n", "", "\n", "0xg1\n", "+3\n", "1\n", "0\n", "0x0300\n"]),
    st.binary(max_size=80),
)
ATTRS = ["vendor", "device", "class", "subsystem_vendor", "subsystem_device", "revision",
         "numa_node", "sriov_totalvfs", "sriov_numvfs", "boot_vga"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(ATTRS), TEXTS), min_size=1, max_size=4),
       st.lists(st.sampled_from(["nvidia", "", "a/b/", "42", "0042", "4" * 11, "x" * 260]), min_size=3,
                max_size=3))
def test_cores_agree_on_random_attributes(tmp_path_factory, devices, links):
    root = str(tmp_path_factory.mktemp("rand"))
    for i, files in enumerate(devices):
        link_map = {k: f"../../x/{t}" if t else "/" for k, t in zip(("driver", "iommu_group", "physfn"),
                                                                     links)}
        _device(root, f"0000:{i + 1:02x}:00.0", files, link_map)
    _agree(root)


@pytest.mark.parametrize("name", [*fakesys.SERVERS, "broken"])
def test_rows_read_without_numpy_are_the_compiled_values(tmp_path, name):
    """``read_device_rows`` (the twin's reading, values as lists: no numpy) answers as the
    compiled core does, value for value."""
    from gpuclass._native import read_device_rows

    devices = fakesys.SERVERS[name]() if name in fakesys.SERVERS else getattr(fakesys, name)()
    fakesys.write_tree(tmp_path, devices)
    root = os.path.realpath(tmp_path)
    chain = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    owned = list(chain)
    try:
        walk_beneath(chain, PCI_DEVICES, owned)
        names = sorted(os.listdir(chain[-1]))
        beneath, devdir = Root(tuple(chain), PCI_DEVICES), os.path.join(root, PCI_DEVICES)
        values, drivers, problems = compiled.read_devices(chain[-1], names, devdir, beneath)
        assert read_device_rows(chain[-1], names, devdir, beneath) == (values.tolist(), drivers, problems)
    finally:
        for fd in owned:
            os.close(fd)
