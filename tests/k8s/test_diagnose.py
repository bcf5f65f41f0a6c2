"""diagnose on real Node shapes: GPU Feature Discovery's labels as GFD writes them, exact
label values, nodes without any GPU, and the device plugin's renamed resource."""

from __future__ import annotations

import copy

import pytest
from k8s_samples import CPU_NODE, GPU_NODE, model, node

from gpuclass.k8s.diagnose import REPROVISION, diagnose, diagnose_nodes
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
    assert d.findings[0].action == REPROVISION and "kubectl label" not in d.findings[0].action
    assert d.product == product


def test_an_unsupported_card_with_a_device_plugin_is_no_supported_card():
    d = diagnose(node(labels__label=None, labels__product="Quadro-RTX-6000", labels__pool=None))
    assert codes(d) == ["no-supported-card"] and "Quadro-RTX-6000" in d.findings[0].message
    assert "a device plugin runs" in d.findings[0].message and d.findings[0].action.startswith("reprovision")
    # ... and in the GPU pool besides
    assert codes(diagnose(node(labels__label=None, labels__product="Quadro-RTX-6000"))) == [
        "no-supported-card", "pool-label"]


def test_a_label_on_a_node_gfd_shows_unsupported_is_stale():
    d = diagnose(node(labels__product="NVIDIA-RTX-4000-Ada-Generation-SHARED", labels__pool=None))
    assert codes(d) == ["stale-label"] and "not on the allowlist" in d.findings[0].message
    assert "kubectl" not in d.findings[0].action and d.findings[0].action.startswith("reprovision")


@pytest.mark.parametrize("value", ["True", "TRUE", "tRuE", True])
def test_label_values_compare_exactly(value):
    d = diagnose(node(labels__label=value))
    assert not d.labeled and not d.ok
    assert codes(d) == ["label-value"]
    f = d.findings[0]
    assert "not \"true\"" in f.message and "case-sensitive" in f.message
    assert f.action == REPROVISION


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


@pytest.mark.parametrize("labels, capacity, code, severity", [
    # GFD names a card off the allowlist: a plain display adapter here
    ({"nvidia.com/gpu.product": "Quadro-RTX-6000"}, {}, "not-a-gpu-node", "info"),
    # signs of a GPU that nothing names: the node may need reprovisioning, or not
    ({"nvidia.com/gpu.count": "1"}, {}, "card-unknown", "warning"),
    ({"feature.node.kubernetes.io/pci-10de.present": "true"}, {}, "card-unknown", "warning"),
    ({"feature.node.kubernetes.io/pci-0300_10de.present": "true"}, {}, "card-unknown", "warning"),
    ({"feature.node.kubernetes.io/pci-0302_10de.present": "true"}, {}, "card-unknown", "warning"),
    # a device plugin runs without the label: wrong whichever the card is
    ({}, {"nvidia.com/gpu": "1"}, "card-unknown", "error"),
    ({}, {"nvidia.com/gpu.shared": "4"}, "card-unknown", "error"),
])
def test_what_an_unlabelled_node_with_a_gpu_is(labels, capacity, code, severity):
    n = copy.deepcopy(CPU_NODE)
    n["metadata"]["labels"].update(labels)
    n["status"]["capacity"].update(capacity)
    d = diagnose(n)
    assert codes(d) == [code] and d.findings[0].severity == severity
    assert d.gpu_node is (code != "not-a-gpu-node") and d.ok is (severity == "info")
    if code == "not-a-gpu-node":
        assert d.cards == 0 and d.expected == 0 and "plain display adapter" in d.findings[0].message


@pytest.mark.parametrize("label, text", [
    ("feature.node.kubernetes.io/pci-0300_10de.present", "an NVIDIA VGA or 3D controller"),
    ("feature.node.kubernetes.io/pci-0302_10de.present", "an NVIDIA VGA or 3D controller"),
    ("feature.node.kubernetes.io/pci-10de.present", "an NVIDIA PCI device"),
])
def test_nfd_labels_say_a_gpu_is_there_without_naming_it(label, text):
    """NFD's default PCI labels (class and vendor) on a node without GFD or the GPU label:
    not "not a GPU node", and no claim about the card either."""
    n = copy.deepcopy(CPU_NODE)
    n["metadata"]["labels"][label] = "true"
    (f,) = diagnose(n).findings
    assert f.code == "card-unknown" and text in f.message and label in f.message
    assert "no supported card" not in f.message and "--root" in f.action
    # with the machine's report the card is known: an allowlisted one needs reprovisioning
    (f,) = diagnose(n, HardwareReport.example("rtx-6000-ada")).findings[:1]
    assert f.code == "reprovision"
    assert codes(diagnose(n, HardwareReport.example(None))) == ["not-a-gpu-node"]


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


# -- the device plugin's config label, the pool label, conflicts ------------------------


def test_a_stale_config_label_is_blamed_not_the_configmap():
    """``replicas-8`` left from an earlier policy: the plugin applied it, and the node shows 8
    slices of its one card.  The label is at fault, and the patch deletes it."""
    stale = node(labels__config="replicas-8", capacity__gpu="8", allocatable__gpu="8")
    for d in (diagnose(stale), diagnose(stale, HardwareReport.example("rtx-4000-sff-ada"))):
        (f,) = d.findings
        assert f.code == "config-label" and "nvidia.com/device-plugin.config=replicas-8" in f.message
        assert "earlier policy" in f.message and "advertises 8 nvidia.com/gpu, expected 4" in f.message
        assert "ConfigMap" not in f.action and "gpuclass labels --patch" in f.action


def test_a_card_with_its_own_slices_needs_its_config_label():
    policy = {"cards": [{"id": "rtx-4000-sff-ada", "name": "RTX 4000 SFF Ada Generation",
                         "family": "ada-lovelace", "kernel_module": "open", "slices": 8,
                         "match": [{"vendor": "10de", "device": "27b0"}]}]}
    (f,) = diagnose(node(), policy=policy).findings  # 4 advertised: the default config applied
    assert f.code == "config-label" and "lacks nvidia.com/device-plugin.config=replicas-8" in f.message
    assert diagnose(node(labels__config="replicas-8", capacity__gpu="8", allocatable__gpu="8"),
                    policy=policy).ok


def test_a_config_label_naming_no_config_is_found_whatever_the_card():
    n = node(labels__product=None, labels__config="replicas-6", labels__count=None)
    (f,) = diagnose(n).findings
    assert f.code == "config-label" and "specified config replicas-6 does not exist" in f.message


def test_the_pool_label():
    (f,) = diagnose(node(labels__pool=None)).findings
    assert f.code == "pool-label" and f.severity == "error" and "node-role.kubernetes.io/gpu" in f.message
    assert "--host-patch" in f.action and "hardware=gpu" in f.action
    cpu = copy.deepcopy(CPU_NODE)
    cpu["metadata"]["labels"]["node-role.kubernetes.io/gpu"] = ""
    d = diagnose(cpu)
    assert codes(d) == ["not-a-gpu-node", "pool-label"] and not d.ok
    assert "--remove-stale" in d.findings[1].action


def test_cards_that_conflict_are_said_so():
    report = HardwareReport.example(["gtx-1080", "rtx-pro-6000-blackwell-server"])
    d = diagnose(node(labels__pool=None), report)
    (f,) = d.findings
    assert f.code == "conflict" and "one machine loads only one flavour" in f.message
    assert "a label left from before" in f.message and "reprovision" in f.action
    unlabelled = CPU_NODE
    assert codes(diagnose(unlabelled, report)) == ["conflict"]


@pytest.mark.parametrize("changes, code", [
    ({"allocatable__gpu": "0"}, "device-plugin-unhealthy"),
    ({"allocatable__gpu": None, "capacity__gpu": None}, "device-plugin-missing"),
    ({"allocatable__gpu": "2"}, "some-slices-unhealthy"),
])
def test_a_plugin_the_log_does_not_explain_is_reprovisioned(changes, code):
    (f,) = diagnose(node(**changes)).findings
    assert f.code == code and "log" in f.action
    assert f.action.endswith(REPROVISION) and "when the log does not explain it" in f.action


def test_no_advice_labels_by_hand():
    """The OS is sealed and nothing is fixed by hand: no finding tells to kubectl label."""
    variants = [node(), node(labels__label="True"), node(labels__label=None),
                node(labels__label=None, labels__product="Quadro-RTX-6000"),
                node(labels__product="Quadro-RTX-6000"), node(labels__config="replicas-8"),
                node(labels__pool=None), node(allocatable__gpu="0"), CPU_NODE]
    reports = [None, HardwareReport.example(None), HardwareReport.example("rtx-4000-sff-ada")]
    actions = [f.action or "" for n in variants for r in reports for f in diagnose(n, r).findings]
    assert actions and not [a for a in actions if "kubectl label" in a]
