"""Kubernetes objects as the API server returns them (``kubectl get -o json`` shapes), and
helpers that turn them into the official client's models the way the client does.

The node is a GPU worker of the GPU pool (``node-role.kubernetes.io/gpu``) with GPU
Feature Discovery's labels as GFD writes them for an RTX 4000 SFF Ada under time-slicing
(product ``...-SHARED``, replicas 4, sharing-strategy time-slicing) and
node-feature-discovery's PCI label; the pod uses init, sidecar and ephemeral containers.
"""

from __future__ import annotations

import copy
import json

import kubernetes.client as k8s

GPU = "nvidia.com/gpu"

GPU_NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "name": "gex44-1",
        "uid": "4c1f0f6e-8f0a-4a38-9d0a-0f6b7b1a9d11",
        "resourceVersion": "918273",
        "creationTimestamp": "2026-05-04T09:12:44Z",
        "labels": {
            "autopilot.syself.com/gpu": "true",
            "beta.kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": "gex44-1",
            "node.kubernetes.io/instance_type": "GEX44",
            # the GPU pool's MachineDeployment: Cluster API copies it from the Machine
            "node-role.kubernetes.io/gpu": "",
            "feature.node.kubernetes.io/pci-10de.present": "true",
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.count": "1",
            "nvidia.com/gpu.product": "NVIDIA-RTX-4000-SFF-Ada-Generation-SHARED",
            "nvidia.com/gpu.replicas": "4",
            "nvidia.com/gpu.sharing-strategy": "time-slicing",
            "nvidia.com/gpu.family": "ada-lovelace",
            "nvidia.com/gpu.memory": "20475",
        },
        "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                        "nfd.node.kubernetes.io/feature-labels": "pci-10de.present"},
    },
    "spec": {"podCIDR": "10.244.3.0/24", "podCIDRs": ["10.244.3.0/24"],
             "providerID": "hcloud://bm-2290710"},
    "status": {
        "capacity": {"cpu": "20", "ephemeral-storage": "921138328Ki", "hugepages-2Mi": "0",
                     "memory": "65700092Ki", GPU: "4", "pods": "110"},
        "allocatable": {"cpu": "20", "ephemeral-storage": "848914524857", "hugepages-2Mi": "0",
                        "memory": "65597692Ki", GPU: "4", "pods": "110"},
        "addresses": [{"type": "InternalIP", "address": "10.0.0.7"},
                      {"type": "Hostname", "address": "gex44-1"}],
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "kubelet is posting ready status",
                        "lastHeartbeatTime": "2026-05-06T10:01:02Z",
                        "lastTransitionTime": "2026-05-04T09:13:30Z"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {"architecture": "amd64", "bootID": "0d1f3c1e-7d0e-4bd4-9b1a-2f1c7c0f9a10",
                     "containerRuntimeVersion": "containerd://1.7.27",
                     "kernelVersion": "6.8.0-60-generic", "kubeProxyVersion": "",
                     "kubeletVersion": "v1.32.4", "machineID": "9f1b0c2d3e4f",
                     "operatingSystem": "linux", "osImage": "Ubuntu 24.04.2 LTS",
                     "systemUUID": "03000200-0400-0500-0006-000700080009"},
    },
}

CPU_NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "cpu-1", "labels": {"kubernetes.io/hostname": "cpu-1",
                                             "node-role.kubernetes.io/control-plane": ""}},
    "status": {"capacity": {"cpu": "8", "memory": "32827668Ki", "pods": "110"},
               "allocatable": {"cpu": "8", "memory": "32725268Ki", "pods": "110"}},
}

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "trainer-0", "namespace": "ml", "labels": {"app_name": "trainer"},
                 "creationTimestamp": "2026-05-06T10:00:00Z"},
    "spec": {
        "runtimeClassName": "secure",
        "hostPID": False,
        "nodeSelector": {"autopilot.syself.com/gpu": "true"},
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                         "effect": "NoExecute", "tolerationSeconds": 300}],
        "initContainers": [
            {"name": "warmup", "image": "cuda:12", "imagePullPolicy": "IfNotPresent",
             "resources": {"limits": {GPU: "1"}}},
            {"name": "proxy", "image": "envoy", "restartPolicy": "Always",
             "resources": {"requests": {"cpu": "100m"}}},
        ],
        "containers": [
            {"name": "train", "image": "cuda:12",
             "ports": [{"containerPort": 8080, "protocol": "TCP"}],
             "env": [{"name": "NODE_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}}],
             "resources": {"requests": {GPU: "1", "cpu": "4"}, "limits": {GPU: "1", "memory": "16Gi"}}},
        ],
        "ephemeralContainers": [{"name": "debugger", "image": "busybox", "targetContainerName": "train"}],
    },
    "status": {"phase": "Running", "hostIP": "10.0.0.7", "podIP": "10.244.3.17",
               "podIPs": [{"ip": "10.244.3.17"}]},
}


def client():
    return k8s.ApiClient()


def model(obj: dict, klass: str):
    """What the client makes of an API response holding ``obj``."""
    api = client()
    try:
        return api.deserialize(json.dumps(obj), klass, "application/json")
    except TypeError:  # clients before v35 take a response object
        class _Response:
            data = json.dumps(obj)
        return api.deserialize(_Response(), klass)


def wire(m) -> dict:
    """A client model as the API's JSON (what the client sends)."""
    return client().sanitize_for_serialization(m)


def node(**changes) -> dict:
    """GPU_NODE with metadata.labels / status sections replaced (None deletes a key)."""
    n = copy.deepcopy(GPU_NODE)
    for key, value in changes.items():
        section, _, name = key.partition("__")
        target = {"labels": n["metadata"]["labels"], "capacity": n["status"]["capacity"],
                  "allocatable": n["status"]["allocatable"]}[section]
        name = {"gpu": GPU, "shared": "nvidia.com/gpu.shared", "label": "autopilot.syself.com/gpu",
                "product": "nvidia.com/gpu.product", "count": "nvidia.com/gpu.count",
                "replicas": "nvidia.com/gpu.replicas", "pool": "node-role.kubernetes.io/gpu",
                "config": "nvidia.com/device-plugin.config"}.get(name, name)
        if value is None:
            target.pop(name, None)
        else:
            target[name] = value
    return n
