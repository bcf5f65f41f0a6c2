"""The sysfs scanner against fake trees, real lspci and this machine's own /sys."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import fakesys
import numpy as np
import pytest
import recorded

from gpuclass.devices import FLAG_BOOT_VGA, FLAG_INVALID, FLAG_PF, NO_ADDRESS
from gpuclass.errors import GpuclassError, SourceError
from gpuclass.sources.lspci import parse_lspci_mm
from gpuclass.sources.sysfs import scan_sysfs

SERVERS = ["gex44", "gex130", "gex131", "gtx1080", "turing", "sriov", "wide_domains", "quirks"]
LSPCI = shutil.which("lspci")
STRACE = shutil.which("strace")


@pytest.fixture(autouse=True)
def scan_core(core, monkeypatch):
    """Every scan test reads the devices with the compiled core and with the twin."""
    import gpuclass.sources.sysfs as mod

    monkeypatch.setattr(mod, "_core", core)
    return core


def _tree(tmp_path, name):
    devices = fakesys.SERVERS[name]() if name in fakesys.SERVERS else getattr(fakesys, name)()
    fakesys.write_tree(tmp_path, devices)
    return devices


def _assert_same(got, want):
    """Whole-table equality for good rows; flagged rows by address, flag and reason."""
    assert got.addresses() == want.addresses()
    bad = want.problems != None  # noqa: E711 - elementwise on an object array
    assert (got.invalid_mask() == bad).all(), got.problems
    good = ~bad
    assert got.take(good).equals(want.take(good)), got.take(good).diff(want.take(good))
    for g, w in zip(got.problems[bad], want.problems[bad]):
        assert w in g


@pytest.mark.parametrize("name", SERVERS)
def test_scan_matches_declared_devices(tmp_path, name):
    devices = _tree(tmp_path, name)
    got = scan_sysfs(tmp_path)
    assert len(got) == len(devices)
    assert got.source == os.path.join(os.path.realpath(tmp_path), "sys", "bus", "pci", "devices")
    _assert_same(got, fakesys.expected(devices))
    assert not got.invalid_mask().any()


def test_gex44_masks(tmp_path):
    _tree(tmp_path, "gex44")
    t = scan_sysfs(tmp_path)
    addrs = np.array(t.addresses())
    # the iGPU is a GPU function too: which GPUs are supported is the matcher's business
    assert addrs[t.gpu_mask()].tolist() == ["0000:00:02.0", "0000:01:00.0"]
    assert addrs[t.companion_mask()].tolist() == ["0000:01:00.1"]
    assert not t.vf_mask().any()
    i = t.addresses().index("0000:00:02.0")
    assert t.flags[i] == FLAG_BOOT_VGA
    j = t.addresses().index("0000:01:00.0")
    assert t.class_code[j] == 0x030000 and t.revision[j] == 0xA1 and t.driver[j] == "nvidia"
    assert (t.subvendor[j], t.subdevice[j], bool(t.has_subsystem[j])) == (0x10DE, 0x16FA, True)
    assert t.iommu_group[j] == 12 and t.numa_node[j] == -1


def test_turing_companions_include_usb_and_ucsi(tmp_path):
    _tree(tmp_path, "turing")
    t = scan_sysfs(tmp_path)
    assert t.gpu_mask().tolist() == [True, False, False, False]
    assert t.companion_mask().tolist() == [False, True, True, True]
    assert (t.class_code >> 8).tolist() == [0x0300, 0x0403, 0x0C03, 0x0C80]


def test_sriov_flags(tmp_path):
    _tree(tmp_path, "sriov")
    t = scan_sysfs(tmp_path)
    a = t.addresses()
    assert [a[i] for i in np.flatnonzero(t.vf_mask())] == [
        "0000:3b:02.0", "0000:3b:02.1", "0000:81:00.4", "0000:81:00.5"]
    pf = {a[i] for i in np.flatnonzero(t.flags & FLAG_PF)}
    assert pf == {"0000:3b:00.0", "0000:81:00.0", "0000:82:00.0"}
    k = a.index("0000:81:00.0")
    assert (t.sriov_totalvfs[k], t.sriov_numvfs[k]) == (4, 2)
    m = a.index("0000:82:00.0")
    assert (t.sriov_totalvfs[m], t.sriov_numvfs[m]) == (8, 0)
    # the vGPU VFs are 3D-class functions: GPU functions that are also VFs
    assert (t.gpu_mask() & t.vf_mask()).sum() == 2
    assert (t.sriov_totalvfs[t.vf_mask()] == -1).all()


def test_wide_domains_sort_and_print(tmp_path):
    _tree(tmp_path, "wide_domains")
    t = scan_sysfs(tmp_path)
    assert t.addresses() == ["0000:00:00.0", "10000:e1:00.0", "100000:01:00.0", "100000:01:00.1"]
    assert t.domain.tolist() == [0, 0x10000, 0x100000, 0x100000]
    assert t.companion_mask().tolist() == [False, False, False, True]


def test_gtx1080_without_numa_or_iommu(tmp_path):
    _tree(tmp_path, "gtx1080")
    t = scan_sysfs(tmp_path)
    assert (t.numa_node == -1).all() and (t.iommu_group == -1).all()
    assert t.flags.tolist() == [0, FLAG_BOOT_VGA, 0]
    assert t.subvendor[1] == 0x1458


def test_broken_devices_are_flagged_never_dropped(tmp_path):
    devices = _tree(tmp_path, "broken")
    t = scan_sysfs(tmp_path)
    assert len(t) == len(devices)
    _assert_same(t, fakesys.expected(devices))
    a = t.addresses()
    good = a.index("0000:01:00.0")
    # malformed optional attributes are missing values, not problems
    assert t.problems[good] is None
    assert (t.numa_node[good], t.iommu_group[good], t.sriov_totalvfs[good]) == (-1, -1, -1)
    assert t.gpu_mask()[good]
    # no subsystem files: a missing value, not a 0000:0000 subsystem
    nosub = a.index("0000:0b:00.0")
    assert not t.has_subsystem[nosub] and t.problems[nosub] is None
    # a flagged row is never a GPU function, whatever was read of it
    assert t.gpu_mask().sum() == 2
    assert a[-1] == "-" and t.function[-1] == NO_ADDRESS and "garbage" in t.problems[-1]
    # problems name the file
    v = a.index("0000:02:00.0")
    assert t.problems[v].endswith("0000:02:00.0/vendor: missing")
    assert "symlink" in t.problems[a.index("0000:07:00.0")]
    assert "outside the root" in t.problems[a.index("0000:09:00.0")]
    assert t.flags[v] & FLAG_INVALID


ALLOWED_FILES = {"vendor", "device", "class", "subsystem_vendor", "subsystem_device", "revision",
                 "numa_node", "sriov_totalvfs", "sriov_numvfs", "boot_vga"}
ALLOWED_LINKS = {"driver", "iommu_group", "physfn"}
PATH_TO_DEVICES = {"sys", "bus", "pci", "devices"}  # opened one by one, inside the root


def test_twin_scan_reads_only_the_attributes_it_needs(tmp_path, monkeypatch):
    """The twin is watched through its Python calls; the compiled core under strace (next test)."""
    _tree(tmp_path, "sriov")
    import gpuclass._native.sysfs_py as twin
    import gpuclass._native.twin as twin_core
    import gpuclass.sources.sysfs as mod

    monkeypatch.setattr(mod, "_core", twin_core)

    opened, linked = [], []

    def spy(module, name, log):
        real = getattr(module, name)

        def wrapper(path, *args, **kw):
            log.append(os.path.basename(os.fspath(path)))
            return real(path, *args, **kw)

        monkeypatch.setattr(module, name, wrapper)

    for module in (mod, twin):
        spy(module, "_open", opened)
    spy(twin, "_readlink", linked)
    scan_sysfs(tmp_path)
    # device directories are named by address; the digits are /proc/self/fd/N (a reopen)
    files = {f for f in opened if ":" not in f and not f.isdigit()} - {tmp_path.name}  # the root
    assert files <= ALLOWED_FILES | PATH_TO_DEVICES, files - ALLOWED_FILES
    assert "vendor" in files and "class" in files
    # links are only read (never followed); the digits are /proc/self/fd/N
    assert {x for x in linked if not x.isdigit()} == ALLOWED_LINKS


@pytest.mark.parametrize("kernel", ["openat2", "no-openat2"])
def test_compiled_scan_reads_only_the_attributes_it_needs(tmp_path, compiled_core, kernel):
    # strace is installed by .ci/run, which requires it (GPUCLASS_REQUIRE_PCIUTILS=1)
    if STRACE is None:
        recorded.missing("strace", "apt-get install strace",
                         "the twin's reads are watched without it by the test above")
    root = tmp_path / "root"
    _tree(root, "sriov")
    log = tmp_path / "trace"
    code = f"from gpuclass.sources.sysfs import scan_sysfs; scan_sysfs({str(root)!r})"
    # "no-openat2": the kernel answers ENOSYS, as old kernels and filtering sandboxes do
    inject = ["-e", "inject=openat2:error=ENOSYS"] if kernel == "no-openat2" else []
    proc = subprocess.run([STRACE, "-f", "-qq", "-o", str(log), "-e", "trace=openat,openat2,readlinkat",
                           *inject, sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if proc.returncode != 0 and "ptrace" in proc.stderr:
        pytest.skip(f"strace cannot trace here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stderr
    opened, linked = set(), set()
    for line in log.read_text().splitlines():
        m = re.search(r'(openat2?|readlinkat)\((\w+), "([^"]*)"', line)
        if m is None or m.group(2) == "AT_FDCWD":
            continue  # absolute paths: the interpreter's imports, the root itself
        name = m.group(3).rsplit("/", 1)[-1]
        (linked if m.group(1) == "readlinkat" else opened).add(name)
    files = {f for f in opened if ":" not in f}
    assert files <= ALLOWED_FILES | PATH_TO_DEVICES, files - ALLOWED_FILES
    assert "vendor" in files and "class" in files
    # Where openat2 is missing (older kernels, sandboxes that filter it) the entry
    # itself is resolved by the user-space walk, which reads each entry's link: those
    # are the devices' own names, never anything else under them.
    entries = set(os.listdir(root / "sys" / "bus" / "pci" / "devices"))
    assert linked - entries == ALLOWED_LINKS


def test_empty_tree(tmp_path):
    os.makedirs(tmp_path / "sys" / "bus" / "pci" / "devices")
    t = scan_sysfs(tmp_path)
    assert len(t) == 0 and t.addresses() == [] and t.gpu_mask().shape == (0,)


def test_missing_root_is_a_clear_error(tmp_path):
    with pytest.raises(SourceError, match="no such directory") as exc:
        scan_sysfs(tmp_path / "nope")
    assert isinstance(exc.value, GpuclassError)


def test_root_without_sysfs(tmp_path):
    with pytest.raises(SourceError, match="PCI devices directory"):
        scan_sysfs(tmp_path)


def test_root_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(SourceError, match="not a directory"):
        scan_sysfs(tmp_path / "f")


def test_devices_dir_leading_outside_the_root(tmp_path):
    outside = tmp_path / "outside"
    os.makedirs(outside)
    root = tmp_path / "root"
    os.makedirs(root / "sys" / "bus" / "pci")
    os.symlink(outside, root / "sys" / "bus" / "pci" / "devices")
    with pytest.raises(SourceError, match="outside the root"):
        scan_sysfs(root)


# -- agreement with real lspci --------------------------------------------------
# The fake trees against recorded and live lspci, in every form: sources/test_lspci_reference.py.


def test_agrees_with_lspci_on_this_machine():
    if LSPCI is None:
        recorded.missing("lspci", "apt-get install pciutils")
    proc = subprocess.run([LSPCI, "-nnmm", "-D", *recorded.LSPCI_NO_HWDB], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    ours = scan_sysfs("/")
    theirs = parse_lspci_mm(proc.stdout)
    assert len(ours) == len(theirs)
    assert not ours.invalid_mask().any()
    assert _lspci_view(theirs) == _lspci_view(ours)


def _lspci_view(t):
    """What lspci -nnmm shows of a table: no driver, no revision 0."""
    return dict(
        addresses=t.addresses(), vendor=t.vendor.tolist(), device=t.device.tolist(),
        class_code=t.class_code.tolist(), revision=np.maximum(t.revision, 0).tolist(),
        has_subsystem=t.has_subsystem.tolist(), subvendor=t.subvendor.tolist(),
        subdevice=t.subdevice.tolist(),
    )


def test_scan_of_this_machine_is_sorted_and_valid():
    if not os.path.isdir("/sys/bus/pci/devices"):
        pytest.skip("no sysfs here")
    t = scan_sysfs("/")
    assert len(t) == len(os.listdir("/sys/bus/pci/devices"))
    order = t.address_order()
    assert (order == np.arange(len(t))).all()


def test_unprogrammed_subsystems_are_absent_as_for_lspci(tmp_path):
    """A subsystem vendor of 0000 or ffff: lspci prints "" "", and the scan has no subsystem."""
    devices = _tree(tmp_path, "quirks")
    t = scan_sysfs(tmp_path)
    declared = {d.address: (d.subvendor, d.subdevice) for d in devices}
    for addr, has, sv, sd in zip(t.addresses(), t.has_subsystem, t.subvendor, t.subdevice):
        unprogrammed = declared[addr][0] in (0, 0xFFFF)
        assert bool(has) is not unprogrammed, addr
        assert (int(sv), int(sd)) == ((0, 0) if unprogrammed else declared[addr])
    assert sum(sv in (0, 0xFFFF) for sv, _ in declared.values()) == 3
