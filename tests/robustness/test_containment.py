"""A machine under ``--root`` is read inside the root only, regular files only, and one bad
value hides nothing else.

Every hostile tree here is scanned by both cores (and, for the compiled one, by its
user-space walk as well as by openat2), under strace where the question is "was anything
opened outside the root, or was a FIFO or device opened at all": a check made after the
open would already be the read outside that must not happen.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import time

import fakemachine
import fakesys
import numpy as np
import pytest
import recorded
from helpers import run

from gpuclass.constants import FLAG_INVALID
from gpuclass.sources.sysfs import PCI_DEVICES, scan_sysfs

STRACE = shutil.which("strace")
GPU = "0000:01:00.0"


@pytest.fixture(params=["compiled", "python"])
def pure(request, monkeypatch):
    """The scan in this process with the compiled core or the twin; True for the twin."""
    import gpuclass.sources.sysfs as sysmod
    from gpuclass._native import twin

    if request.param == "python":
        monkeypatch.setattr(sysmod, "_core", twin)
    return request.param == "python"


def _gpu_dir(root) -> str:
    return os.path.realpath(os.path.join(root, PCI_DEVICES, GPU))


# -- the escapes -------------------------------------------------------------------------------

def _escapes(tmp_path):
    """Roots whose links lead out, each with a file outside that a scan must never open."""
    outside = tmp_path / "outside"
    fakesys.write_tree(outside, fakesys.gex44())
    out_devices = outside / PCI_DEVICES
    cases = {}

    def root(name):
        r = tmp_path / name
        fakesys.write_tree(r, fakesys.gex44())
        cases[name] = r
        return r

    r = root("entry-absolute")                       # an entry pointing at the host's device
    os.symlink(_gpu_dir(outside), r / PCI_DEVICES / "0000:09:00.0")
    r = root("entry-climbing")                       # a relative entry climbing out
    os.symlink(os.path.relpath(_gpu_dir(outside), r / PCI_DEVICES), r / PCI_DEVICES / "0000:09:00.0")
    r = root("entry-back-in")                        # out and back in: looks above the root
    os.symlink(os.path.join("..", "..", "..", "..", "..", r.name, "sys", "devices", "pci0000:00", GPU),
               r / PCI_DEVICES / "0000:09:00.0")
    r = root("attribute-out")                        # an attribute linking out
    gpu = _gpu_dir(r)
    os.unlink(os.path.join(gpu, "numa_node"))
    os.symlink(os.path.join(_gpu_dir(outside), "numa_node"), os.path.join(gpu, "numa_node"))
    r = tmp_path / "sys-out"                         # the whole sys/ is the host's
    (r).mkdir()
    os.symlink(outside / "sys", r / "sys")
    cases["sys-out"] = r
    r = tmp_path / "devices-out"                     # the devices directory is the host's
    (r / "sys" / "bus" / "pci").mkdir(parents=True)
    os.symlink(out_devices, r / PCI_DEVICES)
    cases["devices-out"] = r
    return cases, outside


ESCAPES = ["entry-absolute", "entry-climbing", "entry-back-in", "attribute-out", "sys-out", "devices-out"]


@pytest.mark.parametrize("case", ESCAPES)
def test_links_out_of_the_root_are_flagged(tmp_path, case, pure):
    cases, _ = _escapes(tmp_path)
    root = cases[case]
    if case in ("sys-out", "devices-out"):
        with pytest.raises(Exception) as info:
            scan_sysfs(root)
        assert "outside the root" in str(info.value)
        return
    t = scan_sysfs(root)
    assert len(t) == len(fakesys.gex44()) + (case != "attribute-out")
    if case == "attribute-out":
        i = t.addresses().index(GPU)
        assert t.flags[i] & FLAG_INVALID and "numa_node" in t.problems[i] and t.numa_node[i] == -1
    else:
        i = t.addresses().index("0000:09:00.0")
        assert t.flags[i] & FLAG_INVALID and "outside the root" in t.problems[i]
    good = ~(t.flags & FLAG_INVALID).astype(bool)
    assert good.sum() == len(fakesys.gex44()) - (case == "attribute-out")


def _opened_outside(trace: str, root: str) -> list[str]:
    """Successful opens (strace -y) that returned a descriptor of a path outside ``root``, or
    that opened a non-regular file for reading, made relative to a directory descriptor or
    through /proc/self/fd (the interpreter's own imports are AT_FDCWD absolute paths)."""
    bad = []
    for line in trace.splitlines():
        m = re.search(r'(openat2?)\((\w+|\d+<[^>]*>), "([^"]*)".*= (\d+)<([^>]*)>', line)
        if m is None:
            continue
        dirfd, name, path = m.group(2), m.group(3), m.group(5)
        if dirfd == "AT_FDCWD" and not name.startswith("/proc/self/fd/"):
            continue
        if "O_PATH" in line:
            continue  # a look, which opens nothing
        if not (path == root or path.startswith(root + "/")):
            bad.append(line)
    return bad


# the twin has the walk only: its "openat2" case is the walk already
@pytest.mark.parametrize("core,walk", [("compiled", "openat2"), ("compiled", "walk"), ("python", "openat2")])
def test_nothing_outside_the_root_is_opened(tmp_path, core, walk):
    if STRACE is None:  # CI installs strace and requires it
        recorded.missing("strace", "apt-get install strace",
                         "the same roots are checked without it by test_links_out_of_the_root_are_flagged")
    cases, outside = _escapes(tmp_path)
    for name, root in cases.items():
        real = os.path.realpath(root)
        code = ("import gpuclass.sources.sysfs as s, gpuclass._native.contract.sysfs as c\n"
                + ("s.Root = lambda chain, rel: c.Root(chain, None)\n" if walk == "walk" else "")
                + f"try:\n    s.scan_sysfs({str(root)!r})\nexcept Exception as e:\n    print(e)\n")
        env = dict(os.environ, GPUCLASS_NO_EXTENSIONS="1" if core == "python" else "")
        log = tmp_path / f"trace-{name}"
        proc = subprocess.run([STRACE, "-f", "-qq", "-y", "-o", str(log), "-e", "trace=openat,openat2",
                               sys.executable, "-c", code], capture_output=True, text=True, env=env)
        if proc.returncode != 0 and "ptrace" in proc.stderr:
            pytest.skip(f"strace cannot trace here: {proc.stderr.strip()[:200]}")
        assert proc.returncode == 0, proc.stderr
        bad = _opened_outside(log.read_text(), real)
        assert not bad, (name, bad[:3])


# -- files that are not regular files ----------------------------------------------------------

def _plant(path: str, kind: str) -> None:
    if os.path.lexists(path):
        os.unlink(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "chardev":
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # a /dev/zero
    elif kind == "socket":
        os.mknod(path, stat.S_IFSOCK | 0o600)
    elif kind == "dir":
        os.mkdir(path)
    elif kind == "symlink":
        os.symlink("class", path)


@pytest.mark.parametrize("kind", ["fifo", "chardev", "socket", "dir", "symlink"])
@pytest.mark.parametrize("attr", ["vendor", "class", "numa_node", "revision", "sriov_totalvfs"])
def test_non_regular_attributes_are_flagged(tmp_path, attr, kind, pure):
    fakesys.write_tree(tmp_path, fakesys.gex44())
    _plant(os.path.join(_gpu_dir(tmp_path), attr), kind)
    t0 = time.perf_counter()
    t = scan_sysfs(tmp_path)
    assert time.perf_counter() - t0 < 5
    i = t.addresses().index(GPU)
    assert t.flags[i] & FLAG_INVALID and f"/{attr}:" in t.problems[i]
    what = {"fifo": "a FIFO", "chardev": "a character device", "socket": "a socket",
            "dir": "Is a directory", "symlink": "symlink"}[kind]
    assert what in t.problems[i]
    assert (t.flags & FLAG_INVALID).astype(bool).sum() == 1  # every other device is fine


@pytest.mark.parametrize("attr", ["vendor", "numa_node"])
def test_a_fifo_attribute_is_never_opened(tmp_path, attr, pure):
    """A writer blocks in open() until a reader opens the FIFO: it stays blocked through
    the scan (an O_NONBLOCK open would have released it)."""
    fakesys.write_tree(tmp_path, fakesys.gex44())
    fifo = os.path.join(_gpu_dir(tmp_path), attr)
    _plant(fifo, "fifo")
    released = threading.Event()

    def writer():
        fd = os.open(fifo, os.O_WRONLY)  # blocks until someone opens it for reading
        released.set()
        os.close(fd)

    th = threading.Thread(target=writer, daemon=True)
    th.start()
    time.sleep(0.05)
    scan_sysfs(tmp_path)
    opened_by_scan = released.wait(0.2)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # let the writer go
    th.join(5)
    os.close(fd)
    assert not opened_by_scan


# -- one bad value hides nothing else ---------------------------------------------------------

OUT_OF_RANGE = {
    "numa_node": "2147483648\n",
    "sriov_totalvfs": "99999999999999999999\n",
    "sriov_numvfs": "4294967296\n",
}


@pytest.mark.parametrize("attr", [*OUT_OF_RANGE, "iommu_group", "numa_node-"])
def test_an_out_of_range_attribute_flags_its_device_only(tmp_path, attr, pure):
    devices = fakesys.gex44()
    fakesys.write_tree(tmp_path, devices)
    clean = scan_sysfs(tmp_path)
    nic = os.path.realpath(os.path.join(tmp_path, PCI_DEVICES, devices[-1].address))
    if attr == "iommu_group":
        _plant(os.path.join(nic, "iommu_group"), "none")
        os.symlink("../../../kernel/iommu_groups/99999999999", os.path.join(nic, "iommu_group"))
    elif attr == "numa_node-":
        with open(os.path.join(nic, "numa_node"), "w") as fh:
            fh.write("-99999999999\n")
    else:
        if attr == "sriov_numvfs":
            with open(os.path.join(nic, "sriov_totalvfs"), "w") as fh:
                fh.write("8\n")
        with open(os.path.join(nic, attr), "w") as fh:
            fh.write(OUT_OF_RANGE[attr])
    t = scan_sysfs(tmp_path)
    i = t.addresses().index(devices[-1].address)
    name = attr.rstrip("-")
    assert t.flags[i] & FLAG_INVALID and f"{name}: out of range" in t.problems[i]
    assert getattr(t, name)[i] == -1
    assert (t.flags & FLAG_INVALID).astype(bool).sum() == 1
    assert t.take(np.arange(len(t)) != i).equals(clean.take(np.arange(len(t)) != i))


def test_scan_plan_and_labels_go_on(tmp_path):
    devices = fakesys.gex44()
    fakemachine.write_machine(tmp_path, devices)
    nic = os.path.realpath(os.path.join(tmp_path, PCI_DEVICES, devices[-1].address))
    with open(os.path.join(nic, "numa_node"), "w") as fh:
        fh.write("9999999999\n")
    scan = run("scan", "--root", tmp_path, "--format", "json")
    assert scan.returncode == 1 and "Traceback" not in scan.stderr, scan.stderr
    out = json.loads(scan.stdout)
    assert out["count"] == len(devices) and out["summary"]["supported_cards"] == 1
    bad = [d for d in out["devices"] if d["problem"]]
    assert len(bad) == 1 and bad[0]["numa_node"] is None
    plan = run("plan", "--root", tmp_path, "--format", "json")
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["plan"]["gpu_node"] is True
    labels = run("labels", "--root", tmp_path, "--format", "json")
    assert labels.returncode == 0 and json.loads(labels.stdout)["node_labels"]


def test_values_at_the_edge_of_int32_are_values(tmp_path, pure):
    devices = fakesys.gex44()
    fakesys.write_tree(tmp_path, devices)
    nic = os.path.realpath(os.path.join(tmp_path, PCI_DEVICES, devices[-1].address))
    with open(os.path.join(nic, "numa_node"), "w") as fh:
        fh.write("0002147483647\n")
    t = scan_sysfs(tmp_path)
    i = t.addresses().index(devices[-1].address)
    assert t.numa_node[i] == 2**31 - 1 and not t.flags[i] & FLAG_INVALID
    assert np.all(t.flags & FLAG_INVALID == 0)
