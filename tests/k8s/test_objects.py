"""Kubernetes objects in every shape people hand them over: API JSON, kubectl's ``List``,
the official client's models (``V1Pod``, ``V1NodeList``) and their ``to_dict()``."""

from __future__ import annotations

import copy
import json
import re

import kubernetes.client as k8s
import pytest
import yaml
from k8s_samples import CPU_NODE, GPU, GPU_NODE, POD, model, wire

from gpuclass.errors import ManifestError
from gpuclass.k8s import objects
from gpuclass.k8s.diagnose import diagnose, diagnose_nodes
from gpuclass.k8s.objects import as_object, as_objects, wire_form
from gpuclass.k8s.pods import validate_pod, validate_pods

ROOTS = ["V1Pod", "V1Node", "V1Deployment", "V1StatefulSet", "V1DaemonSet", "V1Job", "V1CronJob",
         "V1PodTemplate", "V1ReplicaSet", "V1ReplicationController", "V1NodeList", "V1PodList",
         "V1ConfigMap", "V1Service"]


def _models_reachable_from(roots):
    seen: dict[str, type] = {}

    def walk(cls):
        if cls.__name__ in seen:
            return
        seen[cls.__name__] = cls
        for t in cls.openapi_types.values():
            for name in re.findall(r"[A-Z]\w+", t):
                sub = getattr(k8s, name, None)
                if sub is not None and hasattr(sub, "openapi_types"):
                    walk(sub)

    for root in roots:
        walk(getattr(k8s, root))
    return seen


MODELS = _models_reachable_from(ROOTS)


def test_every_client_field_of_pods_nodes_and_workloads_gets_its_wire_name():
    """to_dict() keys become what the client's own attribute_map says, in every model
    reachable from pods, nodes and workloads; map-valued fields keep their keys."""
    assert len(MODELS) > 150
    wrong = []
    for name, cls in MODELS.items():
        for attr, type_ in cls.openapi_types.items():
            parent = "kubelet_endpoint" if name == "V1DaemonEndpoint" else None
            if objects._camel(attr, parent) != cls.attribute_map[attr]:
                wrong.append((name, attr, cls.attribute_map[attr]))
            if type_.startswith("Dict[") and attr not in objects._FREE_MAPS and attr != "selector":
                wrong.append((name, attr, "a map whose keys must be kept"))
    assert wrong == []


@pytest.mark.parametrize("obj, klass", [(POD, "V1Pod"), (GPU_NODE, "V1Node"), (CPU_NODE, "V1Node")])
def test_client_models_and_their_to_dict_read_as_the_api_json(obj, klass):
    m = model(obj, klass)
    api = wire(m)  # the client's serialization (timestamps in its isoformat)
    assert as_object(m) == api
    snake = m.to_dict()
    assert "api_version" in snake  # what to_dict() gives: snake_case attribute names
    assert as_object(snake) == api
    assert wire_form(obj) is obj  # the API's own form is left alone
    assert api["metadata"]["labels"] == obj["metadata"]["labels"]
    assert api.get("status", {}).get("capacity") == obj.get("status", {}).get("capacity")


def test_workload_to_dict_keeps_label_selector_and_labels():
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "trainer"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app_name": "trainer"}},
                    "template": {"metadata": {"labels": {"app_name": "trainer"}},
                                 "spec": {"containers": [{"name": "t", "image": "cuda",
                                                          "resources": {"limits": {GPU: "2"}}}]}}}}
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
           "spec": {"selector": {"app_name": "trainer"}, "ports": [{"port": 80}]}}
    for obj, klass in ((dep, "V1Deployment"), (svc, "V1Service")):
        assert as_object(model(obj, klass).to_dict()) == wire(model(obj, klass))
    v = validate_pod(model(dep, "V1Deployment").to_dict())
    assert not v.valid and v.errors[0].startswith("spec.template.spec.containers[0] (t): invalid allocation request")


def test_init_and_ephemeral_containers_from_to_dict_are_validated():
    pod = copy.deepcopy(POD)
    pod["spec"]["initContainers"][0]["resources"] = {"limits": {GPU: "2"}}
    pod["spec"]["ephemeralContainers"][0]["resources"] = {"limits": {GPU: "1"}}
    for given in (model(pod, "V1Pod"), model(pod, "V1Pod").to_dict(), pod):
        v = validate_pod(given)
        assert not v.valid
        assert v.errors == [
            'spec.initContainers[0] (warmup): invalid allocation request for "nvidia.com/gpu": invalid '
            "request: maximum request size for shared resources is 1; found 2",
            "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container"]
        assert [(c.path, c.init, c.ephemeral, c.slices) for c in v.containers] == [
            ("spec.initContainers[0]", True, False, 2), ("spec.initContainers[1]", True, False, 0),
            ("spec.containers[0]", False, False, 1), ("spec.ephemeralContainers[0]", False, True, 0)]


def test_the_sample_pod_is_valid_and_holds_one_slice():
    v = validate_pod(model(POD, "V1Pod"))
    assert v.valid and v.slices == 1 and v.name == "trainer-0" and v.namespace == "ml"


def test_ephemeral_containers_must_be_mappings_like_the_others():
    pod = copy.deepcopy(POD)
    pod["spec"]["ephemeralContainers"] = ["debugger"]
    with pytest.raises(ManifestError, match=r"spec.ephemeralContainers\[0\]: expected a container"):
        validate_pod(pod)
    pod["spec"]["ephemeralContainers"] = {"name": "x"}
    with pytest.raises(ManifestError, match="spec.ephemeralContainers: expected a list"):
        validate_pod(pod)


def _api_list(items, kind):
    """A typed list as the API server sends it: items without kind and apiVersion."""
    return {"apiVersion": "v1", "kind": kind, "metadata": {"resourceVersion": "1"},
            "items": [{k: v for k, v in i.items() if k not in ("kind", "apiVersion")} for i in items]}


def test_node_list_pod_list_and_kubectl_list_are_unpacked():
    node_list = _api_list([GPU_NODE, CPU_NODE], "NodeList")
    kubectl = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
               "items": [GPU_NODE, CPU_NODE]}
    client_list = model(node_list, "V1NodeList")
    for given in (node_list, kubectl, client_list, client_list.to_dict(), yaml.safe_dump(kubectl),
                  json.dumps(node_list), [GPU_NODE, CPU_NODE]):
        nodes = as_objects(given)
        assert [n["kind"] for n in nodes] == ["Node", "Node"]
        assert [n["metadata"]["name"] for n in nodes] == ["gex44-1", "cpu-1"]
        assert [[f.code for f in d.findings] for d in diagnose_nodes(given)] == [["ok"], ["not-a-gpu-node"]]
    pods = _api_list([POD, POD], "PodList")
    for given in (pods, model(pods, "V1PodList"), model(pods, "V1PodList").to_dict()):
        results = validate_pods(given)
        assert [(v.kind, v.valid, v.slices) for v in results] == [("Pod", True, 1), ("Pod", True, 1)]


def test_one_object_wanted_from_a_list_of_several_is_an_error():
    with pytest.raises(ManifestError, match="expected one Node, found 2 objects"):
        diagnose({"kind": "NodeList", "items": [GPU_NODE, CPU_NODE]})
    assert diagnose({"kind": "NodeList", "items": [GPU_NODE]}).node == "gex44-1"


def test_a_file_of_a_kubectl_list(tmp_path):
    f = tmp_path / "nodes.yaml"
    f.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [CPU_NODE]}))
    assert diagnose(f).node == "cpu-1" and diagnose(str(f)).ok
