"""The node decision as node-feature-discovery and Cluster API's Hetzner provider take it: a
``features.d`` file, a ``NodeFeature`` object and a ``HetznerBareMetalHost`` merge patch.

The feature file is read here the way NFD's local source reads one (lines trimmed, ``#``
lines skipped, ``key[=value]`` split at the first ``=``, value ``true`` by default); the
patch is applied by ``kubectl patch --local`` to a host object as the provider's CRD holds it.
The commands run in this process (``helpers.run_in_process``).
"""

from __future__ import annotations

import json

import fakemachine
import fakesys
import helpers
import kube
import pytest
import yaml

from gpuclass.constants import DEVICE_PLUGIN_CONFIG_LABEL, GPU_LABEL, GPU_POOL_LABEL
from gpuclass.errors import InputError
from gpuclass.k8s.labels import node_labels
from gpuclass.k8s.publish import (NFD_FEATURE_FILE, host_labels_patch, nfd_feature_file,
                                  node_feature)
from gpuclass.policy import Policy
from gpuclass.provisioner import HardwareReport, plan

CONFLICT = ["gtx-1080", "rtx-pro-6000-blackwell-server"]
OWN_SLICES = Policy.from_data({"cards": [
    {"id": "rtx-6000-ada", "name": "RTX 6000 Ada Generation", "family": "ada-lovelace",
     "kernel_module": "open", "slices": 8, "match": [{"vendor": "10de", "device": "26b1"}]}]})


def nfd_reads(text: str) -> dict[str, str]:
    """The labels NFD's local source makes of a feature file."""
    labels = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        labels[key] = value if "=" in line else "true"
    return labels


def _not_kubernetes_io(key: str) -> bool:
    ns = key.partition("/")[0]
    return not (ns == "kubernetes.io" or ns.endswith(".kubernetes.io"))


@pytest.mark.parametrize("cards, policy", [
    ("rtx-4000-sff-ada", None), (["gtx-1080", "rtx-4000-sff-ada"], None), (None, None),
    (CONFLICT, None), ("rtx-6000-ada", OWN_SLICES)])
def test_the_feature_file_carries_the_node_decision(cards, policy):
    report = HardwareReport.example(cards, policy=policy)
    text = nfd_feature_file(report)
    assert nfd_reads(text) == node_labels(report)
    assert all(_not_kubernetes_io(k) for k in nfd_reads(text))  # NFD refuses those namespaces
    assert GPU_POOL_LABEL in text and "Cluster API" in text  # said how the pool label is set
    if cards == CONFLICT:
        assert GPU_LABEL not in nfd_reads(text) and "the cards conflict" in text
    if policy is OWN_SLICES:
        assert nfd_reads(text)[DEVICE_PLUGIN_CONFIG_LABEL] == "replicas-8"
    assert NFD_FEATURE_FILE == "/etc/kubernetes/node-feature-discovery/features.d/gpuclass"


def test_the_node_feature_object():
    nf = node_feature(HardwareReport.example("rtx-6000-ada", policy=OWN_SLICES), "gex130-1")
    assert nf == {"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeature",
                  "metadata": {"name": "gpuclass-gex130-1", "namespace": "node-feature-discovery",
                               "labels": {"nfd.node.kubernetes.io/node-name": "gex130-1"}},
                  "spec": {"labels": {GPU_LABEL: "true", DEVICE_PLUGIN_CONFIG_LABEL: "replicas-8"}}}
    empty = node_feature(HardwareReport.example(CONFLICT), "gex44-1", namespace="nfd", name="x")
    assert empty["spec"] == {"labels": {}} and empty["metadata"]["namespace"] == "nfd"
    with pytest.raises(InputError, match="node"):
        node_feature(HardwareReport.example(None), "")


HOST = {
    "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "HetznerBareMetalHost",
    "metadata": {"name": "bm-gex44-1", "namespace": "org-acme",
                 "labels": {"cluster.x-k8s.io/cluster-name": "acme"}},
    "spec": {"serverID": 2290710, "description": "GEX44 #1", "maintenanceMode": False,
             "rootDeviceHints": {"wwn": "0x5002538f33b1a4c2"}},
}


def test_the_host_patch_puts_the_machine_into_the_gpu_pool():
    patch = host_labels_patch(HardwareReport.example("rtx-4000-sff-ada"), "bm-gex44-1")
    host = kube.patch_local(HOST, patch)
    assert host["metadata"]["labels"] == {"cluster.x-k8s.io/cluster-name": "acme", "hardware": "gpu"}
    assert host["spec"] == HOST["spec"]
    p = plan(HardwareReport.example("rtx-4000-sff-ada"))
    assert host_labels_patch(p) == {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                    "kind": "HetznerBareMetalHost",
                                    "metadata": {"labels": p.host_labels.labels}}
    # a conflict or no supported card: the host stays out (and leaves with remove_stale)
    in_pool = kube.patch_local(HOST, patch)
    for cards in (CONFLICT, None):
        report = HardwareReport.example(cards)
        assert kube.patch_local(in_pool, host_labels_patch(report)) == in_pool
        out = kube.patch_local(in_pool, host_labels_patch(report, remove_stale=True))
        assert "hardware" not in out["metadata"]["labels"]
    with pytest.raises(InputError):
        host_labels_patch({"hardware": "gpu"})


@pytest.fixture(scope="module")
def machines(tmp_path_factory):
    base = tmp_path_factory.mktemp("publish")
    return {name: fakemachine.write_machine(base / name, devices)
            for name, devices in [("gex44", fakesys.gex44()), ("conflict", fakemachine.pascal_and_blackwell())]}


def test_the_commands(machines):
    nfd = helpers.run_in_process("labels", "--nfd", "--root", machines["gex44"])
    assert nfd.returncode == 0 and nfd_reads(nfd.stdout) == {GPU_LABEL: "true"}
    bad = helpers.run_in_process("labels", "--nfd", "--root", machines["conflict"])
    assert bad.returncode == 1 and nfd_reads(bad.stdout) == {} and "conflict" in bad.stderr
    nf = helpers.run_in_process("labels", "--node-feature", "--node", "gex44-1", "--root", machines["gex44"])
    assert nf.returncode == 0 and nf.stdout.startswith("# node-role.kubernetes.io/gpu is not set here")
    assert yaml.safe_load(nf.stdout)["spec"]["labels"] == {GPU_LABEL: "true"}
    as_json = helpers.run_in_process("labels", "--node-feature", "--node", "gex44-1", "--root", machines["gex44"],
                          "-o", "json")
    assert json.loads(as_json.stdout) == yaml.safe_load(nf.stdout)
    host = helpers.run_in_process("labels", "--host-patch", "--host", "bm-gex44-1", "--root", machines["gex44"])
    assert host.returncode == 0 and len(host.stdout.splitlines()) == 1
    assert kube.patch_local(HOST, host.stdout.strip())["metadata"]["labels"]["hardware"] == "gpu"
    stale = helpers.run_in_process("labels", "--host-patch", "--remove-stale", "--root", machines["conflict"])
    assert stale.returncode == 1 and json.loads(stale.stdout)["metadata"]["labels"] == {"hardware": None}


@pytest.mark.parametrize("argv, fragment", [
    (["--node-feature"], "--node-feature needs --node"),
    (["--nfd", "-o", "json"], "-o does not apply with --nfd"),
    (["--patch", "--host", "h"], "--host applies only with --host-patch"),
    (["--host-patch", "--node", "n"], "--node applies only with --patch or --node-feature"),
    (["--nfd", "--remove-stale"], "--remove-stale applies only with --patch or --host-patch"),
    (["--check", "-", "--root", "/"], "--root does not apply with --check"),
    (["--default-key", "x"], "--default-key applies only with --check"),
])
def test_options_that_do_not_apply(machines, argv, fragment):
    proc = helpers.run_in_process("labels", *argv)
    assert proc.returncode == 2 and fragment in proc.stderr, proc.stderr


def test_a_missing_kubectl_skips_or_fails_as_ci_says(monkeypatch):
    import shutil

    from _pytest.outcomes import Failed, Skipped

    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.delenv(kube.REQUIRE, raising=False)
    with pytest.raises(Skipped, match="kubernetes-client"):
        kube.kubectl()
    monkeypatch.setenv(kube.REQUIRE, "1")
    with pytest.raises(Failed, match="GPUCLASS_REQUIRE_KUBECTL=1 requires"):
        kube.kubectl()
