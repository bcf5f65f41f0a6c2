"""diagnose on real Node shapes: GPU Feature Discovery's labels as GFD writes them, exact
label values, nodes without any GPU, and the device plugin's renamed resource."""

from __future__ import annotations

import copy

import pytest
from k8s_samples import CPU_NODE, GPU_NODE, model, node

from gpuclass.k8s.diagnose import diagnose, diagnose_nodes
from gpuclass.k8s.labels import gfd_card, gfd_sanitise
from gpuclass.k8s.pods import validate_pod
from gpuclass.provisioner import HardwareReport


def codes(d):
    return [f.code for f in d.findings]


# nvidia.com/gpu.product values as GFD writes them: NVML's name sanitised, "-SHARED" while
# time-sliced under the resource's own name; GeForce names of older drivers lack "NVIDIA".
GFD_PRODUCTS = [
    ("NVIDIA-RTX-4000-SFF-Ada-Generation-SHARED", "rtx-4000-sff-ada"),
    ("NVIDIA-RTX-4000-SFF-Ada-Generation", "rtx-4000-sff-ada"),
    ("NVIDIA-RTX-6000-Ada-Generation-SHARED", "rtx-6000-ada"),
    ("NVIDIA-GeForce-GTX-1080-SHARED", "gtx-1080"),
    ("NVIDIA-GeForce-GTX-1080-Ti", "gtx-1080-ti"),
    ("GeForce-GTX-1080-Ti-SHARED", "gtx-1080-ti"),
    ("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition-SHARED", "rtx-pro-6000-blackwell-server"),
    ("NVIDIA-RTX-PRO-6000-Blackwell-Workstation-Edition", "rtx-pro-6000-blackwell-workstation"),
    ("NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition-SHARED", "rtx-pro-6000-blackwell-max-q"),
    # look-alikes GFD reports for cards off the allowlist
    ("NVIDIA-RTX-4000-Ada-Generation-SHARED", None),
    ("Quadro-RTX-6000", None),
    ("NVIDIA-RTX-6000D", None),
    ("NVIDIA-GeForce-GTX-1080-with-Max-Q-Design", None),
    ("NVIDIA-RTX-PRO-5000-Blackwell", None),
    ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", None),
]


@pytest.mark.parametrize("product, card", GFD_PRODUCTS)
def test_gfd_product_labels_name_the_card(product, card):
    found = gfd_card(product)
    assert (found["id"] if found else None) == card


def test_gfd_sanitising_matches_gfd():
    # internal/lm/resource.go: drop [^A-Za-z0-9-_. ], join fields with "-"
    assert gfd_sanitise("NVIDIA GeForce GTX 1080 Ti") == "NVIDIA-GeForce-GTX-1080-Ti"
    # a tab is dropped before the blanks are joined, as GFD's regexp runs first
    assert gfd_sanitise("NVIDIA  RTX (TM) 4000,  SFF\tAda") == "NVIDIA-RTX-TM-4000-SFFAda"
    assert gfd_sanitise("Tesla V100-SXM2-16GB") == "Tesla-V100-SXM2-16GB"


@pytest.mark.parametrize("product, card", [p for p in GFD_PRODUCTS if p[1]])
def test_an_allowlisted_gfd_product_without_the_label_is_a_reprovision(product, card):
    n = node(labels__label=None, labels__product=product)
    d = diagnose(model(n, "V1Node"))
    assert codes(d) == ["reprovision"] and not d.ok
    assert product in d.findings[0].message and "allowlisted" in d.findings[0].message
    assert "kubectl label node gex44-1 autopilot.syself.com/gpu=true" in d.findings[0].action
    assert d.product == product


def test_an_unsupported_gfd_product_without_the_label_is_no_supported_card():
    d = diagnose(node(labels__label=None, labels__product="Quadro-RTX-6000"))
    assert codes(d) == ["no-supported-card"] and "Quadro-RTX-6000" in d.findings[0].message
    assert "a device plugin runs" in d.findings[0].message


def test_a_label_on_a_node_gfd_shows_unsupported_is_stale():
    d = diagnose(node(labels__product="NVIDIA-RTX-4000-Ada-Generation-SHARED"))
    assert codes(d) == ["stale-label"] and "not on the allowlist" in d.findings[0].message


@pytest.mark.parametrize("value", ["True", "TRUE", "tRuE", True])
def test_label_values_compare_exactly(value):
    d = diagnose(node(labels__label=value))
    assert not d.labeled and not d.ok
    assert codes(d) == ["label-value"]
    f = d.findings[0]
    assert "not \"true\"" in f.message and "case-sensitive" in f.message
    assert f.action == "kubectl label node gex44-1 --overwrite autopilot.syself.com/gpu=true"


def test_a_wrong_label_value_next_to_a_broken_plugin_reports_both():
    d = diagnose(node(labels__label="True", allocatable__gpu="0"))
    assert codes(d) == ["label-value", "device-plugin-unhealthy"]


@pytest.mark.parametrize("value", ["false", "yes", "1", ""])
def test_other_label_values_are_no_label(value):
    d = diagnose(node(labels__label=value))
    assert not d.labeled and codes(d) == ["reprovision"]  # GFD still names the allowlisted card
    assert f"it is {value!r}, not \"true\"" in d.findings[0].message


def test_the_sample_gpu_node_is_healthy():
    d = diagnose(model(GPU_NODE, "V1Node"))
    assert d.ok and codes(d) == ["ok"] and d.cards == 1 and d.expected == 4 and d.gpu_node


def test_a_node_without_any_gpu_is_information_only():
    d = diagnose(model(CPU_NODE, "V1Node"))
    assert d.ok and not d.gpu_node and codes(d) == ["not-a-gpu-node"]
    assert d.findings[0].severity == "info" and d.findings[0].action is None
    # with the machine's report that shows no NVIDIA GPU either
    d = diagnose(CPU_NODE, HardwareReport.example(None))
    assert d.ok and codes(d) == ["not-a-gpu-node"] and "no NVIDIA GPU" in d.findings[0].message


@pytest.mark.parametrize("labels, capacity", [
    ({"nvidia.com/gpu.product": "Quadro-RTX-6000"}, {}),
    ({"nvidia.com/gpu.count": "1"}, {}),
    ({"feature.node.kubernetes.io/pci-10de.present": "true"}, {}),
    ({}, {"nvidia.com/gpu": "1"}),
    ({}, {"nvidia.com/gpu.shared": "4"}),
])
def test_any_sign_of_a_gpu_makes_it_a_gpu_node(labels, capacity):
    n = copy.deepcopy(CPU_NODE)
    n["metadata"]["labels"].update(labels)
    n["status"]["capacity"].update(capacity)
    d = diagnose(n)
    assert d.gpu_node and codes(d) == ["no-supported-card"] and not d.ok


def test_a_mixed_cluster_reports_only_the_gpu_nodes():
    broken = node(allocatable__gpu="0")
    broken["metadata"]["name"] = "gex44-2"
    results = diagnose_nodes({"kind": "List", "items": [GPU_NODE, CPU_NODE, broken]})
    assert [(d.node, d.ok) for d in results] == [("gex44-1", True), ("cpu-1", True), ("gex44-2", False)]


def test_renamed_resource_is_recognised():
    n = node(capacity__gpu=None, allocatable__gpu=None, capacity__shared="4", allocatable__shared="4",
             labels__product="NVIDIA-RTX-4000-SFF-Ada-Generation")  # GFD drops -SHARED when renamed
    d = diagnose(model(n, "V1Node"))
    assert codes(d) == ["renamed-resource"] and not d.ok
    assert d.resource == "nvidia.com/gpu.shared" and d.capacity == 4
    msg = d.findings[0].message
    assert "renameByDefault: true" in msg and "pods requesting nvidia.com/gpu stay Pending" in msg
    assert "gpuclass labels --configmap" in d.findings[0].action


def test_renamed_and_unhealthy():
    n = node(capacity__gpu=None, allocatable__gpu=None, capacity__shared="4", allocatable__shared="0")
    assert codes(diagnose(n)) == ["renamed-resource", "device-plugin-unhealthy"]


def test_pods_asking_for_the_renamed_resource_are_told_why():
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "a", "resources": {"limits": {"nvidia.com/gpu.shared": "1"}}}]}}
    v = validate_pod(pod)
    assert not v.valid
    assert v.errors == ["spec.containers[0].resources.limits[nvidia.com/gpu.shared]: the platform's "
                        "device plugin advertises nvidia.com/gpu (renameByDefault: false), so no node "
                        "offers nvidia.com/gpu.shared and the pod would stay Pending: request "
                        "nvidia.com/gpu"]


def test_capacity_mismatch_names_gfd_replicas():
    n = node(capacity__gpu="1", allocatable__gpu="1", labels__replicas="1",
             labels__product="NVIDIA-RTX-4000-SFF-Ada-Generation")
    d = diagnose(n)
    assert codes(d) == ["capacity-mismatch"]
    assert "time-slicing is not applied" in d.findings[0].message
    assert "GPU Feature Discovery reports replicas 1" in d.findings[0].message


def test_slices_per_card_come_from_the_policy():
    policy = {"slices_per_card": 2, "cards": [{"id": "rtx-4000-sff-ada", "name": "RTX 4000 SFF Ada Generation",
                                               "family": "ada-lovelace", "kernel_module": "open",
                                               "match": [{"vendor": "10de", "device": "27b0"}]}]}
    assert codes(diagnose(node(), policy=policy)) == ["capacity-mismatch"]  # 4 advertised, 1 x 2 expected
    d = diagnose(node(capacity__gpu="2", allocatable__gpu="2"), policy=policy)
    assert d.ok and d.expected == 2
