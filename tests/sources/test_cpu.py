"""CPU facts: hardware virtualization only on bare metal with vmx or svm."""

from __future__ import annotations

import os

import pytest

from gpuclass.sources.cpu import CpuFacts, cpu_facts, parse_cpuinfo
from gpuclass.errors import SourceError


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
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "kvm").write_text("")
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
