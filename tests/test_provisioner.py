"""The provisioner wrapper end to end: fake machines through inspect and plan."""

from __future__ import annotations

import json

import fakemachine
import fakesys
import pytest

from gpuclass.k8s.labels import expected_resources, labels_patch, node_labels
from gpuclass.errors import InputError, SourceError
from gpuclass.constants import GPU_LABEL
from gpuclass.provisioner import HardwareReport, InstallPlan, inspect, plan

# server -> (supported cards by id, kernel module flavour)
GPU_SERVERS = {
    "gex44": ({"rtx-4000-sff-ada": 1}, "open"),
    "gex130": ({"rtx-6000-ada": 1}, "open"),
    "gex131": ({"rtx-pro-6000-blackwell-max-q": 1}, "open"),
    "gtx1080": ({"gtx-1080": 1}, "proprietary"),
    "sriov": ({"rtx-pro-6000-blackwell-server": 1}, "open"),
    "wide_domains": ({"rtx-pro-6000-blackwell-workstation": 1}, "open"),
}


@pytest.mark.parametrize("server", sorted(GPU_SERVERS))
def test_gpu_servers_end_to_end(tmp_path, server):
    cards, flavour = GPU_SERVERS[server]
    fakemachine.write_machine(tmp_path, fakesys.SERVERS[server]())
    report = inspect(tmp_path)
    assert report.summary.cards == cards
    assert report.supported_cards == 1 and report.slices == 4
    assert [d.card for d in report.supported_gpus] == list(cards)
    assert report.unsupported_gpus == []
    assert [c.kernel_module for c in report.cards] == [flavour]
    assert report.pci_devices == len(fakesys.SERVERS[server]())
    # the report round-trips through JSON
    again = HardwareReport.model_validate_json(report.model_dump_json())
    assert again == report

    p = plan(report)
    assert p.ok and p.gpu_node
    assert p.nvidia_driver.install and p.device_plugin.install
    assert p.kernel_module.value["flavour"] == flavour and not p.kernel_module.conflict
    assert p.nvidia_driver.value == {"kernel_module": flavour}
    assert p.device_plugin.value == {"resource": "nvidia.com/gpu", "replicas": 4, "slices": 4,
                                     "fail_requests_greater_than_one": True,
                                     "rename_by_default": False, "config": "default"}
    assert p.host_labels.install and p.host_labels.labels == {"hardware": "gpu"}
    assert p.node_labels == {GPU_LABEL: "true"}
    assert p.slices == 4
    assert all(d.reason for d in p.decisions())
    assert InstallPlan.model_validate_json(p.model_dump_json()) == p

    assert node_labels(report) == {GPU_LABEL: "true"}
    assert expected_resources(report) == {"capacity": {"nvidia.com/gpu": "4"},
                                          "allocatable": {"nvidia.com/gpu": "4"}}
    assert labels_patch(report, "w")["metadata"]["labels"] == {
        GPU_LABEL: "true", "nvidia.com/device-plugin.config": None}  # the default config: no label


def test_pascal_reason_names_the_family(tmp_path):
    fakemachine.write_machine(tmp_path, fakesys.gtx1080_box())
    reason = plan(inspect(tmp_path)).kernel_module.reason
    assert "proprietary" in reason and "Pascal" in reason and "GeForce GTX 1080" in reason


def test_sriov_virtual_functions_are_listed_not_counted(tmp_path):
    fakemachine.write_machine(tmp_path, fakesys.sriov_server())
    report = inspect(tmp_path)
    statuses = [d.status for d in report.devices]
    assert statuses.count("virtual-function") == 2 and statuses.count("supported") == 1
    assert report.summary.virtual_functions == 2 and report.slices == 4


def test_unsupported_card_gets_nothing_and_is_named(tmp_path):
    fakemachine.write_machine(tmp_path, fakesys.turing_box())
    report = inspect(tmp_path)
    assert report.supported_gpus == [] and report.cards == []
    (gpu,) = report.unsupported_gpus
    assert gpu.name == "Quadro RTX 6000" and gpu.near_miss.card == "rtx-6000-ada"
    p = plan(report)
    assert not p.gpu_node and p.ok
    assert not any(d.install for d in (p.nvidia_driver, p.device_plugin, p.kernel_module,
                                       p.host_labels))
    assert "Quadro RTX 6000" in p.nvidia_driver.reason
    assert p.host_labels.labels == {} and p.node_labels == {} and p.slices == 0
    assert node_labels(report) == {}
    assert expected_resources(report) == {"capacity": {}, "allocatable": {}}
    assert labels_patch(report)["metadata"] == {"labels": {}}


def test_machine_without_nvidia(tmp_path):
    devices = [d for d in fakesys.gex44() if d.vendor != fakesys.NV]
    fakemachine.write_machine(tmp_path, devices)
    p = plan(inspect(tmp_path))
    assert not p.gpu_node and "no NVIDIA GPU" in p.nvidia_driver.reason
    assert p.secure_runtime.install  # the secure runtime does not depend on a GPU


def test_two_cards_give_eight_slices(tmp_path):
    fakemachine.write_machine(tmp_path, fakemachine.two_ada())
    report = inspect(tmp_path)
    assert report.summary.cards == {"rtx-6000-ada": 2}
    p = plan(report)
    assert p.slices == 8 and "8 nvidia.com/gpu" in p.device_plugin.reason
    assert expected_resources(report)["capacity"] == {"nvidia.com/gpu": "8"}


def test_pascal_next_to_ada_is_one_proprietary_install(tmp_path):
    fakemachine.write_machine(tmp_path, fakemachine.pascal_and_ada())
    report = inspect(tmp_path)
    assert report.summary.cards == {"gtx-1080": 1, "rtx-4000-sff-ada": 1}
    p = plan(report)
    assert p.ok and p.conflicts == [] and p.gpu_node and p.slices == 8
    assert p.kernel_module.value == {"flavour": "proprietary", "accepted": ["proprietary"]}
    assert "Pascal needs the proprietary modules" in p.kernel_module.reason
    assert "Ada Lovelace works with either" in p.kernel_module.reason
    assert p.nvidia_driver.install and p.nvidia_driver.value == {"kernel_module": "proprietary"}
    assert p.node_labels == {GPU_LABEL: "true"}


def test_pascal_next_to_blackwell_is_a_conflict(tmp_path):
    fakemachine.write_machine(tmp_path, fakemachine.pascal_and_blackwell())
    report = inspect(tmp_path)
    assert report.summary.cards == {"gtx-1080-ti": 1, "rtx-pro-6000-blackwell-server": 1}
    p = plan(report)
    assert not p.ok and len(p.conflicts) == 1
    assert p.kernel_module.conflict and p.kernel_module.value == {}
    assert not p.conflicts[0].startswith("conflict")  # the CLI prefixes it; said once
    assert "proprietary for GeForce GTX 1080 Ti" in p.kernel_module.reason
    assert "open for RTX PRO 6000 Blackwell Server Edition" in p.kernel_module.reason
    assert "; " not in p.kernel_module.reason  # a flat audit cell joins problems with "; "
    for d in (p.nvidia_driver, p.device_plugin, p.host_labels):
        assert d.conflict and not d.install and "conflict" in d.reason
    assert p.node_labels == {} and not p.gpu_node and p.slices == 0


def test_supported_next_to_unsupported_warns(tmp_path):
    fakemachine.write_machine(tmp_path, fakemachine.ada_next_to_turing())
    report = inspect(tmp_path)
    assert report.supported_cards == 1 and len(report.unsupported_gpus) == 1
    p = plan(report)
    assert p.ok and p.gpu_node
    assert any("mixed node" in w for w in p.warnings)


@pytest.mark.parametrize("cpu, install, fragment", [
    ("intel", True, "vmx on bare metal"),
    ("amd", True, "svm on bare metal"),
    ("vm", False, "running under a hypervisor"),
    ("nested", False, "vmx is exposed by a hypervisor"),
])
def test_secure_runtime_by_cpu(tmp_path, cpu, install, fragment):
    fakemachine.write_machine(tmp_path, fakesys.gex44(), cpu=cpu)
    report = inspect(tmp_path)
    d = plan(report).secure_runtime
    assert d.install is install and fragment in d.reason
    assert d.value == ({"runtime_class": "secure"} if install else {})
    assert report.cpu.hardware_virtualization is install


def test_nested_kvm_has_dev_kvm_but_no_secure_runtime(tmp_path):
    fakemachine.write_machine(tmp_path, fakesys.gex44(), cpu="nested")
    report = inspect(tmp_path)
    assert report.cpu.kvm_device is True and report.cpu.hypervisor
    assert "nested or paravirtualized" in plan(report).secure_runtime.reason


def test_bare_metal_without_dev_kvm(tmp_path):
    fakemachine.write_machine(tmp_path, fakesys.gex44(), cpu="intel", kvm=False)
    d = plan(inspect(tmp_path)).secure_runtime
    assert not d.install and "/dev/kvm" in d.reason


def test_missing_cpuinfo_leaves_the_secure_runtime_out(tmp_path):
    fakemachine.write_machine(tmp_path, fakesys.gex44(), cpu=None)
    report = inspect(tmp_path)
    assert report.cpu is None and any("CPU facts unavailable" in w for w in report.warnings)
    p = plan(report)
    assert not p.secure_runtime.install and p.nvidia_driver.install


def test_missing_pci_tree_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="no such directory"):
        inspect(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="bus/pci/devices"):
        inspect(tmp_path / "empty")


def test_broken_records_are_kept(tmp_path):
    fakemachine.write_machine(tmp_path, fakesys.broken())
    report = inspect(tmp_path)
    assert report.summary.invalid == 10
    # the good cards survive their broken neighbours
    assert report.summary.cards == {"rtx-4000-sff-ada": 1, "rtx-pro-6000-blackwell-max-q": 1}
    assert any("could not be read" in w for w in report.warnings)


def test_plan_refuses_other_input():
    with pytest.raises(InputError, match="HardwareReport"):
        plan({"summary": {}})


def test_custom_policy_is_applied(tmp_path):
    fakemachine.write_machine(tmp_path, fakesys.turing_box())
    policy = {"cards": [{"id": "quadro-rtx-6000", "name": "Quadro RTX 6000", "family": "turing",
                         "kernel_module": "open",
                         "match": [{"vendor": "10de", "device": "1e30",
                                    "subvendor": "10de", "subdevice": "12ba"}]}]}
    report = inspect(tmp_path, policy=policy)
    assert report.summary.cards == {"quadro-rtx-6000": 1}
    assert plan(report).kernel_module.value["flavour"] == "open"


def test_report_json_is_plain_data(tmp_path):
    fakemachine.write_machine(tmp_path, fakesys.gex44())
    doc = json.loads(inspect(tmp_path).model_dump_json())
    assert doc["cpu"]["vmx"] is True and doc["summary"]["slices"] == 4
    gpu = next(d for d in doc["devices"] if d["status"] == "supported")
    assert gpu["slot"] == "0000:01:00.0" and gpu["card"] == "rtx-4000-sff-ada"
    assert (gpu["vendor"], gpu["device"], gpu["svendor"], gpu["sdevice"]) == ("10de", "27b0", "10de", "16fa")
    assert gpu["class"] == "0300" and gpu["device_name"] == "AD104GL [RTX 4000 SFF Ada Generation]"


# -- NVIDIA's kernel-module support matrix -------------------------------------------------

def _family_policy(*cards):
    """A policy of (family, preferred module) cards, device IDs 10de:2700, 2701, ..."""
    return {"cards": [{"id": f"{fam}-{i}", "name": f"{fam.title()} card {i}", "family": fam,
                       "kernel_module": module, "match": [{"vendor": "10de", "device": f"{0x2700 + i:04x}"}]}
                      for i, (fam, module) in enumerate(cards)]}


@pytest.mark.parametrize("cards, flavour", [
    ([("pascal", "proprietary")], "proprietary"),
    ([("blackwell", "open")], "open"),
    ([("ada-lovelace", "open")], "open"),
    ([("ada-lovelace", "proprietary")], "proprietary"),      # either: the policy's choice
    ([("turing", "open"), ("ampere", "open")], "open"),
    ([("pascal", "proprietary"), ("ada-lovelace", "open")], "proprietary"),
    ([("volta", "proprietary"), ("turing", "open"), ("hopper", "open")], "proprietary"),
    ([("ada-lovelace", "open"), ("blackwell", "open")], "open"),
    ([("ada-lovelace", "proprietary"), ("blackwell", "open")], "open"),
    ([("ada-lovelace", "open"), ("hopper", "proprietary")], "open"),  # both take either: open
    ([("pascal", "proprietary"), ("blackwell", "open")], None),
    ([("maxwell", "proprietary"), ("ada-lovelace", "open"), ("blackwell", "open")], None),
    ([("rubin", "open"), ("pascal", "proprietary")], None),
])
def test_kernel_module_follows_nvidias_matrix(cards, flavour):
    policy = _family_policy(*cards)
    report = HardwareReport.example([f"{fam}-{i}" for i, (fam, _) in enumerate(cards)], policy=policy)
    p = plan(report)
    if flavour is None:
        assert not p.ok and p.kernel_module.conflict and len(p.conflicts) == 1
        assert "one machine loads only one flavour" in p.conflicts[0]
        assert p.node_labels == {} and not p.nvidia_driver.install
    else:
        assert p.ok and p.kernel_module.value["flavour"] == flavour
        assert p.nvidia_driver.value == {"kernel_module": flavour}


@pytest.mark.parametrize("family, module", [("pascal", "open"), ("kepler", "open"),
                                            ("blackwell", "proprietary"), ("rubin", "proprietary")])
def test_a_policy_cannot_pick_a_flavour_that_does_not_drive_the_family(family, module):
    from gpuclass.errors import PolicyError
    from gpuclass.policy import Policy

    with pytest.raises(PolicyError, match=f"the {module} kernel modules do not support {family} GPUs"):
        Policy.from_data(_family_policy((family, module)))


@pytest.mark.parametrize("family", ["custom-x", "blackwel", "ada", "lovelace"])
def test_a_family_outside_the_matrix_is_refused_not_given_its_own_module(family):
    """A misspelled family would otherwise take the module its card names (``blackwel`` with
    ``proprietary``: the wrong driver for a Blackwell card)."""
    from gpuclass.errors import PolicyError
    from gpuclass.policy import Policy

    with pytest.raises(PolicyError, match=f"unknown family '{family}'"):
        Policy.from_data(_family_policy((family, "proprietary")))


def test_names_come_from_the_database_or_the_command_fails(tmp_path, monkeypatch):
    from gpuclass.errors import PciIdsError

    fakemachine.write_machine(tmp_path / "m", fakesys.gex44())
    with pytest.raises(PciIdsError, match="cannot read"):
        inspect(tmp_path / "m", db=tmp_path / "missing.ids")
    bad = tmp_path / "bad.ids"
    bad.write_text("10de  NVIDIA\n\t27b0\n")
    with pytest.raises(PciIdsError, match="bad.ids:2"):
        inspect(tmp_path / "m", db=bad)
    monkeypatch.setenv("GPUCLASS_PCI_IDS", str(tmp_path / "missing.ids"))
    with pytest.raises(PciIdsError):
        inspect(tmp_path / "m")
    report = inspect(tmp_path / "m", names=False)  # asked to proceed without names
    gpu = report.supported_gpus[0]
    assert gpu.device_name is None and gpu.vendor_name is None and gpu.card == "rtx-4000-sff-ada"
    assert plan(report).ok
