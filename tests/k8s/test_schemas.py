"""What gpuclass generates, and the samples the tests read, against the API's own schemas
(kubernetes-validate, strict: no unknown fields) for the oldest and newest Kubernetes it
ships; merge patches through ``kubectl patch --local`` first (a patch is not an object)."""

from __future__ import annotations

import copy

import kube
import pytest
from k8s_samples import CPU_NODE, GPU_NODE, POD, node

from gpuclass.k8s.labels import device_plugin_configmap, expected_resources, labels_patch
from gpuclass.policy import Policy
from gpuclass.provisioner import HardwareReport

VERSIONS = [kube.OLDEST, kube.NEWEST]
OWN_SLICES = Policy.from_data({"cards": [
    {"id": "rtx-6000-ada", "name": "RTX 6000 Ada Generation", "family": "ada-lovelace",
     "kernel_module": "open", "slices": 8, "match": [{"vendor": "10de", "device": "26b1"}]},
    {"id": "rtx-4000-sff-ada", "name": "RTX 4000 SFF Ada Generation", "family": "ada-lovelace",
     "kernel_module": "open", "match": [{"vendor": "10de", "device": "27b0"}]}]})


def test_the_versions_span_what_the_package_ships():
    assert kube.OLDEST != kube.NEWEST and kube.OLDEST == kube.VERSIONS[0]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("sample", [GPU_NODE, CPU_NODE], ids=["gpu-node", "cpu-node"])
def test_the_samples_are_real_objects(version, sample):
    assert kube.schema_errors(sample, version) == []


def test_the_sample_pod_is_a_real_pod_from_kubernetes_1_28():
    """Its sidecar (an init container with restartPolicy: Always) came with 1.28."""
    assert kube.schema_errors(POD, kube.NEWEST) == [] == kube.schema_errors(POD, "1.28.0")
    (error,) = kube.schema_errors(POD, kube.OLDEST)
    assert "'restartPolicy' was unexpected" in error


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("policy", [None, OWN_SLICES], ids=["platform", "own-slices"])
def test_the_configmap(version, policy):
    assert kube.schema_errors(device_plugin_configmap(policy, namespace="nvidia-device-plugin"), version) == []


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("cards, policy", [("rtx-4000-sff-ada", None), ("rtx-6000-ada", OWN_SLICES),
                                           (None, None), (["gtx-1080", "rtx-pro-6000-blackwell-server"], None)])
def test_patched_nodes_and_expected_status(version, cards, policy):
    report = HardwareReport.example(cards, 2, policy=policy)
    stale = node(labels__config="replicas-2")
    for remove in (False, True):
        patched = kube.patch_local(stale, labels_patch(report, "gex44-1", remove_stale=remove))
        assert kube.schema_errors(patched, version) == []
    status = copy.deepcopy(GPU_NODE)
    status["status"].update(expected_resources(report))
    assert kube.schema_errors(status, version) == []
