"""CPU facts: hardware virtualization only on bare metal with vmx or svm."""

from __future__ import annotations

import os
import stat
import time

import fakemachine
import pytest

from gpuclass.errors import SourceError
from gpuclass.sources.cpu import CpuFacts, cpu_facts, parse_cpuinfo


def _cpuinfo(vendor, model, flags, cpus=2):
    return "".join(
        f"processor\t: {i}\nvendor_id\t: {vendor}\ncpu family\t: 6\nmodel\t\t: 183\n"
        f"model name\t: {model}\nflags\t\t: {flags}\n\n" for i in range(cpus))


BARE_INTEL = _cpuinfo("GenuineIntel", "Intel(R) Core(TM) i5-13500", "fpu vme de pse vmx ept smx")
BARE_AMD = _cpuinfo("AuthenticAMD", "AMD Ryzen 9 7950X3D 16-Core Processor", "fpu svm npt")
# a cloud VM: hypervisor bit, no vmx/svm, yet /dev/kvm through paravirtualized KVM
CLOUD_VM = _cpuinfo("AuthenticAMD", "AMD EPYC", "fpu hypervisor")
# nested virtualization exposes vmx inside the VM: still not bare metal
NESTED = _cpuinfo("GenuineIntel", "Intel Xeon Processor (Icelake)", "fpu vmx hypervisor")


def test_bare_metal_intel():
    f = parse_cpuinfo(BARE_INTEL)
    assert (f.vendor, f.model_name, f.family, f.model, f.logical_cpus) == (
        "GenuineIntel", "Intel(R) Core(TM) i5-13500", 6, 183, 2)
    assert f.vmx and not f.svm and not f.hypervisor and f.hardware_virtualization
    assert f.reason().startswith("hardware virtualization: vmx on bare metal")


def test_bare_metal_amd():
    f = parse_cpuinfo(BARE_AMD)
    assert f.svm and f.hardware_virtualization


def test_paravirtualized_kvm_is_not_hardware_virtualization(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text(CLOUD_VM)
    fakemachine.make_kvm(tmp_path)
    f = cpu_facts(tmp_path)
    assert f.kvm_device is True and f.hypervisor and f.nested_kvm
    assert not f.hardware_virtualization
    assert "nested or paravirtualized" in f.reason()


def test_nested_vmx_is_not_hardware_virtualization():
    f = parse_cpuinfo(NESTED)
    assert f.vmx and f.hypervisor and not f.hardware_virtualization
    assert "vmx is exposed by a hypervisor" in f.reason()


def test_a_core_without_vmx_withdraws_it():
    text = BARE_INTEL + _cpuinfo("GenuineIntel", "x", "fpu", cpus=1).replace("processor\t: 0", "processor\t: 2")
    f = parse_cpuinfo(text)
    assert f.logical_cpus == 3 and not f.vmx


def test_no_kvm_module_loaded(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text(BARE_INTEL)
    f = cpu_facts(tmp_path)
    assert f.kvm_device is False and f.hardware_virtualization
    assert "kvm module not loaded" in f.reason()
    assert f.to_dict()["hardware_virtualization"] is True


def test_arm_features_and_empty():
    f = parse_cpuinfo("processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n")
    assert f.vendor == "0x41" and "asimd" in f.flags and not f.hardware_virtualization
    assert parse_cpuinfo("") == CpuFacts()


def test_missing_cpuinfo_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="cpuinfo"):
        cpu_facts(tmp_path)


def test_this_machine():
    f = cpu_facts("/")
    assert f.logical_cpus == os.cpu_count()
    # whatever this machine is, the rule holds
    assert f.hardware_virtualization == ((f.vmx or f.svm) and not f.hypervisor)
    assert f.kvm_device == os.path.exists("/dev/kvm")


# -- the machine's files are read inside its root, and only regular files --------------------

def _machine(root, cpu: str = BARE_INTEL):
    (root / "proc").mkdir(parents=True)
    (root / "proc" / "cpuinfo").write_text(cpu)
    return root


def _timed_facts(root):
    t0 = time.perf_counter()
    try:
        out = cpu_facts(root)
    except SourceError as exc:
        out = exc
    assert time.perf_counter() - t0 < 2
    return out


@pytest.mark.parametrize("plant, what", [
    (lambda p, out: os.symlink(out, p), "a symlink"),                     # to the host's cpuinfo
    (lambda p, out: os.symlink("cpuinfo2", p), "a symlink"),              # even one inside
    (lambda p, out: os.mkfifo(p), "a FIFO"),
    (lambda p, out: os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 5)), "a character device"),
    (lambda p, out: os.mkdir(p), "a directory"),
])
def test_cpuinfo_must_be_a_regular_file_inside_the_root(tmp_path, plant, what):
    outside = tmp_path / "host-cpuinfo"
    outside.write_text(BARE_INTEL)
    root = _machine(tmp_path / "root")
    (root / "proc" / "cpuinfo2").write_text(BARE_INTEL)
    (root / "proc" / "cpuinfo").unlink()
    plant(str(root / "proc" / "cpuinfo"), str(outside))
    err = _timed_facts(root)
    assert isinstance(err, SourceError) and what in err.reason, err


def test_proc_linking_out_of_the_root_is_never_opened(tmp_path):
    """root/proc -> /proc: the host's cpuinfo would be read; the walk refuses before opening."""
    root = tmp_path / "root"
    root.mkdir()
    os.symlink("/proc", root / "proc")
    err = _timed_facts(root)
    assert isinstance(err, SourceError) and "outside the root" in err.reason
    os.unlink(root / "proc")
    os.symlink("../../" * 10 + "proc", root / "proc")  # relative, climbing out
    assert "outside the root" in _timed_facts(root).reason


def test_cpuinfo_is_read_with_a_bound(tmp_path, monkeypatch):
    from gpuclass import inputs

    root = _machine(tmp_path, BARE_INTEL * 100)
    monkeypatch.setitem(inputs.LIMITS, "cpuinfo", 4096)
    err = _timed_facts(root)
    assert isinstance(err, SourceError) and "larger than 4096" in err.reason


def test_links_inside_the_root_are_resolved_inside_it(tmp_path):
    root = tmp_path / "root"
    (root / "real-proc").mkdir(parents=True)
    (root / "real-proc" / "cpuinfo").write_text(BARE_INTEL)
    os.symlink("real-proc", root / "proc")
    assert cpu_facts(root).vmx


@pytest.mark.parametrize("plant, what", [
    (lambda p: os.symlink("/dev/kvm", p), "a symlink"),
    (lambda p: open(p, "w").close(), "a regular file"),
    (lambda p: os.mkfifo(p), "a FIFO"),
])
def test_dev_kvm_must_be_the_device(tmp_path, plant, what):
    root = _machine(tmp_path)
    (root / "dev").mkdir()
    plant(str(root / "dev" / "kvm"))
    f = _timed_facts(root)
    assert f.kvm_device is False and what in f.problems[0]


def test_dev_linking_out_is_not_followed(tmp_path):
    root = _machine(tmp_path / "root")
    os.symlink("/dev", root / "dev")
    f = cpu_facts(root)
    assert f.kvm_device is False and "outside the root" in f.problems[0]
