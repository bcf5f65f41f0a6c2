"""The controller wrapper: labels, capacity, the device plugin ConfigMap, pods, nodes."""

from __future__ import annotations

import re

import pytest
import yaml

from gpuclass.constants import GPU_LABEL
from gpuclass.errors import InputError, ManifestError
from gpuclass.k8s.diagnose import diagnose
from gpuclass.k8s.labels import (device_plugin_config, device_plugin_configmap, expected_resources,
                                 labels_patch, node_labels)
from gpuclass.k8s.pods import SHARED_MEMORY_WARNING, too_large_message, validate_pod
from gpuclass.models import NodeGpuSummary
from gpuclass.provisioner import HardwareReport

GPU = "nvidia.com/gpu"


def container(name, requests=None, limits=None, **extra):
    res = {}
    if requests is not None:
        res["requests"] = {GPU: requests, "cpu": "1"}
    if limits is not None:
        res["limits"] = {GPU: limits, "memory": "1Gi"}
    return {"name": name, "image": "cuda", "resources": res, **extra}


def pod(*containers, init=()):
    spec = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
            "spec": spec}


# -- labels and capacity ------------------------------------------------------------


def test_labels_only_with_a_supported_card():
    assert node_labels(HardwareReport.example("gtx-1080-ti")) == {GPU_LABEL: "true"}
    assert node_labels(HardwareReport.example(None)) == {}
    summary = NodeGpuSummary(node="n", gpu_node=False)
    assert node_labels(summary) == {}
    with pytest.raises(InputError):
        node_labels({"cards": 1})


@pytest.mark.parametrize("cards", [1, 2, 3])
def test_capacity_is_cards_times_four(cards):
    res = expected_resources(HardwareReport.example("rtx-pro-6000-blackwell-server", cards))
    assert res["capacity"] == res["allocatable"] == {GPU: str(4 * cards)}


def test_device_plugin_config_matches_the_plugin_format():
    cfg = device_plugin_config()
    assert cfg["version"] == "v1"
    ts = cfg["sharing"]["timeSlicing"]
    # the fields of api/config/v1 ReplicatedResources in NVIDIA/k8s-device-plugin
    assert set(ts) == {"renameByDefault", "failRequestsGreaterThanOne", "resources"}
    assert ts["failRequestsGreaterThanOne"] is True and ts["renameByDefault"] is False
    assert ts["resources"] == [{"name": GPU, "replicas": 4}]
    with pytest.raises(InputError, match="at least 2"):
        device_plugin_config(replicas=1)


def test_configmap_data_is_the_config_as_yaml():
    cm = device_plugin_configmap(namespace="nvidia-device-plugin", key="any")
    assert cm["kind"] == "ConfigMap" and cm["metadata"]["namespace"] == "nvidia-device-plugin"
    assert yaml.safe_load(cm["data"]["any"]) == device_plugin_config()


# -- the official kubernetes client reads what we generate ------------------------------

import kubernetes.client as k8s  # noqa: E402 - the test extra installs it
from k8s_samples import model as deserialize  # noqa: E402 - what the client does with a response


def test_configmap_deserializes_into_the_client_model():
    m = deserialize(device_plugin_configmap(), "V1ConfigMap")
    assert isinstance(m, k8s.V1ConfigMap)
    assert m.metadata.name == "nvidia-device-plugin-config"
    assert yaml.safe_load(m.data["default"])["sharing"]["timeSlicing"]["resources"][0]["replicas"] == 4


def test_a_patch_without_labels_is_a_client_node():
    m = deserialize(labels_patch(HardwareReport.example(None), "worker-1"), "V1Node")
    assert isinstance(m, k8s.V1Node) and m.metadata.name == "worker-1" and not m.metadata.labels


def test_a_gpu_nodes_patch_deletes_a_stale_config_label():
    """The patch gives the config label null (a merge patch deletes it), so it is a patch, not
    a Node the client accepts: kubectl applies it to the node as the API server would."""
    import kube
    from k8s_samples import GPU_NODE, node

    stale = node(**{"labels__nvidia.com/device-plugin.config": "replicas-8"})
    patch = labels_patch(HardwareReport.example("rtx-4000-sff-ada"), "gex44-1")
    patched = kube.patch_local(stale, patch)
    assert patched["metadata"]["labels"] == GPU_NODE["metadata"]["labels"]
    assert kube.patch_local(GPU_NODE, patch) == kube.patch_local(GPU_NODE, "{}")  # nothing else moves


def test_expected_resources_deserialize_into_node_status():
    res = expected_resources(HardwareReport.example("rtx-6000-ada", 2))
    m = deserialize({"kind": "Node", "metadata": {"name": "n"}, "status": res}, "V1Node")
    assert m.status.capacity == {GPU: "8"} and m.status.allocatable == {GPU: "8"}
    # and the node the controller expects diagnoses as healthy
    node = {"kind": "Node", "metadata": {"name": "n", "labels": {
        GPU_LABEL: "true", "node-role.kubernetes.io/gpu": ""}}, "status": res}
    assert diagnose(node, HardwareReport.example("rtx-6000-ada", 2)).ok


def test_client_models_are_accepted_as_input():
    # the client's models take quantities as strings
    m = deserialize(pod(container("a", limits="2")), "V1Pod")
    v = validate_pod(m)
    assert not v.valid and v.containers[0].slices == 2
    node = deserialize({"kind": "Node", "metadata": {"name": "n", "labels": {
        GPU_LABEL: "true", "node-role.kubernetes.io/gpu": "", "nvidia.com/gpu.count": "1"}},
                        "status": {"capacity": {GPU: "4"}, "allocatable": {GPU: "4"}}}, "V1Node")
    assert diagnose(node).ok


def test_validation_report_deserializes_pods_we_accept():
    p = pod(container("a", limits="1"), init=[container("i", requests="1", limits="1")])
    assert validate_pod(p).valid
    assert isinstance(deserialize(p, "V1Pod"), k8s.V1Pod)


# -- pods -------------------------------------------------------------------------------


def test_no_gpu():
    v = validate_pod(pod(container("web")))
    assert v.valid and v.slices == 0 and v.warnings == [] and v.errors == []


def test_zero_slices_is_valid():
    v = validate_pod(pod(container("a", limits=0)))
    assert v.valid and v.slices == 0 and v.warnings == []


def test_one_slice_warns_about_shared_memory():
    v = validate_pod(pod(container("a", limits=1)))
    assert v.valid and v.slices == 1 and v.warnings == [SHARED_MEMORY_WARNING]
    assert "memory" in SHARED_MEMORY_WARNING


@pytest.mark.parametrize("n", [2, 3, 8])
def test_two_or_more_slices_are_rejected_with_the_plugin_message(n):
    v = validate_pod(pod(container("train", limits=n)))
    assert not v.valid
    assert v.errors == [f"spec.containers[0] (train): {too_large_message(n)}"]
    assert (f'invalid allocation request for "nvidia.com/gpu": invalid request: maximum request '
            f"size for shared resources is 1; found {n}") in v.errors[0]


def test_limits_alone_imply_requests():
    v = validate_pod(pod(container("a", limits="1")))
    c = v.containers[0]
    assert v.valid and c.slices == 1 and c.request is None and c.limit == "1"


def test_equal_request_and_limit_is_fine():
    assert validate_pod(pod(container("a", requests=1, limits=1))).valid


def test_request_without_limit_is_invalid():
    v = validate_pod(pod(container("a", requests=1)))
    assert not v.valid
    assert v.errors == ["spec.containers[0].resources.limits[nvidia.com/gpu]: Required value: "
                        "Limit must be set for non overcommitable resources"]


def test_mismatched_request_and_limit_is_invalid():
    v = validate_pod(pod(container("a", requests=1, limits=2)))
    assert not v.valid
    assert v.errors == ['spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: '
                        '"1": must be equal to nvidia.com/gpu limit of 2']


@pytest.mark.parametrize("value, fragment", [
    ("500m", "must be an integer"), (0.5, "must be an integer"), ("-1", "greater than or equal to 0"),
    ("one", "not a Kubernetes quantity"),
])
def test_bad_quantities(value, fragment):
    v = validate_pod(pod(container("a", limits=value)))
    assert not v.valid and fragment in v.errors[0]


def test_quantity_forms_are_read_like_kubernetes():
    for value in ("1", 1, "1000m", "1e0", "+1"):
        v = validate_pod(pod(container("a", limits=value)))
        assert v.valid and v.slices == 1, value


def test_several_containers_each_checked():
    v = validate_pod(pod(container("a", limits=1), container("b", limits=1), container("c"),
                         container("d", limits=2)))
    assert not v.valid and len(v.errors) == 1 and "containers[3] (d)" in v.errors[0]
    assert [c.slices for c in v.containers] == [1, 1, 0, 2]
    assert v.slices == 4
    assert any("several containers" in w for w in v.warnings)


def test_init_containers_are_checked_and_counted_one_at_a_time():
    v = validate_pod(pod(container("app", limits=1),
                         init=[container("warmup", limits=1), container("prep", limits=1)]))
    assert v.valid and v.slices == 1
    assert [(c.path, c.init) for c in v.containers] == [
        ("spec.initContainers[0]", True), ("spec.initContainers[1]", True),
        ("spec.containers[0]", False)]
    bad = validate_pod(pod(container("app"), init=[container("warmup", limits=2)]))
    assert not bad.valid and bad.errors[0].startswith("spec.initContainers[0] (warmup): invalid allocation request")


def test_sidecars_hold_their_slice_next_to_the_app():
    sidecar = container("proxy", limits=1, restartPolicy="Always")
    v = validate_pod(pod(container("app", limits=1), init=[sidecar]))
    assert v.valid and v.slices == 2 and v.containers[0].sidecar


@pytest.mark.parametrize("kind, path", [
    ("Deployment", "spec.template.spec"), ("StatefulSet", "spec.template.spec"),
    ("DaemonSet", "spec.template.spec"), ("Job", "spec.template.spec"),
    ("CronJob", "spec.jobTemplate.spec.template.spec"), ("PodTemplate", "template.spec"),
])
def test_workloads_pod_templates(kind, path):
    spec = {"containers": [container("train", limits=2)]}
    obj: dict = {"kind": kind, "metadata": {"name": "w"}}
    cur = obj
    keys = path.split(".")
    for k in keys[:-1]:
        cur = cur.setdefault(k, {})
    cur[keys[-1]] = spec
    v = validate_pod(obj)
    assert v.kind == kind and v.name == "w" and not v.valid
    assert v.errors[0].startswith(f"{path}.containers[0] (train): invalid allocation request")


def test_pod_level_resources_take_no_gpu():
    """The API server takes only cpu, memory and hugepages-* in ``spec.resources``."""
    p = pod(container("a"))
    p["spec"]["resources"] = {"limits": {GPU: 2, "cpu": "4"}, "requests": {"memory": "1Gi"}}
    v = validate_pod(p)
    assert not v.valid and v.errors == [
        'spec.resources.limits[nvidia.com/gpu]: Unsupported value: "nvidia.com/gpu": pod-level '
        "resources take only cpu, memory and hugepages-*; nvidia.com/gpu is asked for in a "
        "container's resources"]
    p["spec"]["resources"] = {"limits": {"cpu": "4", "memory": "8Gi", "hugepages-2Mi": "1Gi"}}
    assert validate_pod(p).valid
    deploy = {"kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {
        "containers": [container("a")], "resources": {"requests": {"nvidia.com/gpu.shared": "1"}}}}}}
    (err,) = validate_pod(deploy).errors
    assert err.startswith("spec.template.spec.resources.requests[nvidia.com/gpu.shared]: Unsupported")


def test_bare_template_and_pod_spec():
    spec = {"containers": [container("a", limits=1)]}
    assert validate_pod(spec).kind == "PodSpec"
    assert validate_pod({"metadata": {"labels": {}}, "spec": spec}).kind == "PodTemplateSpec"


def test_yaml_text_and_files(tmp_path):
    text = yaml.safe_dump(pod(container("a", limits=2)))
    assert not validate_pod(text).valid
    f = tmp_path / "pod.yaml"
    f.write_text(text)
    assert not validate_pod(f).valid
    assert not validate_pod(str(f)).valid


@pytest.mark.parametrize("obj, fragment", [
    ("kind: Pod\nspec: {containers: [}\n", "line 2: malformed YAML"),
    ({"kind": "Service", "spec": {}}, "Service has no pod template"),
    ({"kind": "Pod", "spec": {}}, "spec.containers: missing"),
    ({"kind": "Pod", "spec": {"containers": ["x"]}}, "expected a container"),
    ({"kind": "Pod", "spec": {"containers": [{"name": "a", "resources": {"limits": [1]}}]}},
     "resources.limits: expected a mapping"),
    ("- 1\n- 2\n", "expected a pod (a mapping), got list"),
    ("a: 1\n---\nb: 2\n", "expected one pod, found 2 objects"),
    ({"metadata": {}}, "not a pod"),
])
def test_malformed_pods_raise_manifest_errors(obj, fragment):
    with pytest.raises(ManifestError, match=re.escape(fragment)):
        validate_pod(obj)


# -- nodes ------------------------------------------------------------------------------


def node(labeled=True, capacity=None, allocatable=None, labels=None, name="worker-1"):
    lab = dict(labels or {})
    if labeled:
        lab[GPU_LABEL] = "true"
        lab["node-role.kubernetes.io/gpu"] = ""  # a GPU node joins through the GPU pool
    status = {"capacity": {"cpu": "20", "memory": "64Gi"}, "allocatable": {"cpu": "19"}}
    if capacity is not None:
        status["capacity"][GPU] = str(capacity)
    if allocatable is not None:
        status["allocatable"][GPU] = str(allocatable)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab},
            "status": status}


def codes(d):
    return [f.code for f in d.findings]


def test_healthy_node():
    d = diagnose(node(capacity=4, allocatable=4), HardwareReport.example("rtx-4000-sff-ada"))
    assert d.ok and codes(d) == ["ok"] and d.expected == 4 and d.cards == 1


def test_allocatable_zero_with_label_is_the_device_plugin():
    d = diagnose(node(capacity=4, allocatable=0))
    assert not d.ok and codes(d) == ["device-plugin-unhealthy"]
    assert "not a busy GPU" in d.findings[0].message


def test_no_gpu_resource_at_all_with_label_is_a_missing_plugin():
    d = diagnose(node())
    assert codes(d) == ["device-plugin-missing"] and d.capacity is None and d.allocatable is None
    assert "missing" in d.findings[0].message


def test_some_slices_unhealthy():
    d = diagnose(node(capacity=8, allocatable=4))
    assert codes(d) == ["some-slices-unhealthy"] and d.findings[0].severity == "warning"


def test_no_label_and_no_gpu_in_the_report_is_not_a_gpu_node():
    report = HardwareReport.example(None)
    d = diagnose(node(labeled=False), report)
    assert codes(d) == ["not-a-gpu-node"] and "no NVIDIA GPU" in d.findings[0].message
    assert d.ok and not d.gpu_node and d.findings[0].severity == "info"


def test_no_label_names_the_unsupported_card(tmp_path):
    import fakemachine
    import fakesys

    from gpuclass.provisioner import inspect

    fakemachine.write_machine(tmp_path, fakesys.turing_box())
    d = diagnose(node(labeled=False, capacity=1, allocatable=1), inspect(tmp_path))
    (f,) = d.findings
    assert f.code == "no-supported-card"
    assert "Quadro RTX 6000" in f.message and "not the RTX 6000 Ada Generation" in f.message
    assert "a device plugin runs" in f.message


def test_no_label_without_report_uses_gpu_feature_discovery():
    # only a card off the allowlist: not a GPU node (a plain display adapter here)
    d = diagnose(node(labeled=False, labels={"nvidia.com/gpu.product": "Quadro-RTX-6000"}))
    assert codes(d) == ["not-a-gpu-node"] and "Quadro-RTX-6000" in d.findings[0].message
    assert d.ok and d.cards == 0 and d.expected == 0
    # slices advertised and nothing names the card: it cannot say "no supported card"
    plain = diagnose(node(labeled=False, capacity=4, allocatable=4))
    (f,) = plain.findings
    assert f.code == "card-unknown" and f.severity == "error" and "a device plugin runs" in f.message
    assert "no supported card" not in f.message and "--report" in f.action


def test_label_not_true_counts_as_absent():
    n = node(labeled=False, labels={GPU_LABEL: "false"})
    d = diagnose(n)
    assert not d.labeled and "not \"true\"" in d.findings[0].message


def test_supported_card_without_label_means_reprovision():
    d = diagnose(node(labeled=False), HardwareReport.example("rtx-pro-6000-blackwell-server"))
    # it has not joined the GPU pool either
    assert codes(d) == ["reprovision", "pool-label"]
    assert "rtx-pro-6000-blackwell-server" in d.findings[0].message
    assert d.findings[0].action.startswith("reprovision") and "kubectl label" not in d.findings[0].action


@pytest.mark.parametrize("capacity, hint", [(1, "time-slicing is not applied"), (8, "replicas is not 4")])
def test_capacity_not_cards_times_four_is_a_misconfigured_plugin(capacity, hint):
    d = diagnose(node(capacity=capacity, allocatable=capacity), HardwareReport.example("gtx-1080"))
    assert codes(d) == ["capacity-mismatch"] and hint in d.findings[0].message
    assert d.expected == 4


def test_capacity_mismatch_from_the_gfd_count_label():
    d = diagnose(node(capacity=2, allocatable=2, labels={"nvidia.com/gpu.count": "2"}))
    assert codes(d) == ["capacity-mismatch"] and d.cards == 2 and d.expected == 8


def test_capacity_not_a_multiple_of_four_without_report():
    assert codes(diagnose(node(capacity=6, allocatable=6))) == ["capacity-mismatch"]


def test_a_capacity_nothing_counts_is_not_ok():
    """8 slices with no GFD label and no report: 2 cards x 4, or 1 card with replicas 8."""
    d = diagnose(node(capacity=8, allocatable=8))
    assert codes(d) == ["capacity-unverified"] and not d.ok
    assert "2 card(s) x 4" in d.findings[0].message
    # GFD's count or replicas, or the report, tells
    assert diagnose(node(capacity=8, allocatable=8, labels={"nvidia.com/gpu.count": "2"})).ok
    assert diagnose(node(capacity=8, allocatable=8, labels={"nvidia.com/gpu.replicas": "4"})).ok
    assert codes(diagnose(node(capacity=8, allocatable=8, labels={"nvidia.com/gpu.replicas": "8"}))) == [
        "capacity-mismatch"]
    assert diagnose(node(capacity=8, allocatable=8), HardwareReport.example("gtx-1080", 2)).ok
    assert codes(diagnose(node(capacity=8, allocatable=8), HardwareReport.example("gtx-1080"))) == [
        "capacity-mismatch"]


def test_label_on_a_machine_without_a_supported_card_is_stale():
    d = diagnose(node(capacity=4, allocatable=4), HardwareReport.example(None))
    # and it is in the GPU pool without a GPU
    assert codes(d) == ["stale-label", "pool-label"]
    assert d.findings[0].action.startswith("reprovision") and "kubectl" not in d.findings[0].action
    assert "--host-patch --remove-stale" in d.findings[1].action


def test_node_as_yaml_text():
    d = diagnose(yaml.safe_dump(node(capacity=4, allocatable=0)))
    assert d.node == "worker-1" and codes(d) == ["device-plugin-unhealthy"]


@pytest.mark.parametrize("obj, fragment", [
    ({"kind": "Pod"}, "expected a Node, got Pod"),
    ({"kind": "Node", "metadata": {"labels": ["x"]}}, "metadata.labels: expected a mapping"),
    ({"kind": "Node", "status": {"capacity": {GPU: "lots"}}}, "is not a quantity"),
    ({"kind": "Node", "status": {"allocatable": {GPU: "1500m"}}}, "not a whole count"),
])
def test_malformed_nodes(obj, fragment):
    with pytest.raises(ManifestError, match=fragment):
        diagnose(obj)
