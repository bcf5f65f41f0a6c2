"""A controller's script over gpuclass's Kubernetes API: ``mypy --strict`` and pyright in strict
mode must pass on it.

It is type-checked, not run, by ``tests/test_types.py`` (and by CI): the helpers return
TypedDicts (``gpuclass.k8s.types``) and models whose fields a checker knows, and the result
types are importable from ``gpuclass`` for annotations.
"""

from __future__ import annotations

import json

import gpuclass
from gpuclass.k8s.types import (AdmissionReviewResponse, ConfigMap, DevicePluginConfig,
                                ExpectedResources, HostPatch, KubernetesObject, NodeFeature,
                                NodePatch)


def controller(root: str, node: str) -> list[str]:
    report: gpuclass.HardwareReport = gpuclass.inspect(root, names=False)
    summary: gpuclass.NodeGpuSummary = report.summary
    decision: gpuclass.NodeDecision = gpuclass.node_decision(report)
    labels: dict[str, str] = gpuclass.node_labels(report)
    patch: NodePatch = gpuclass.labels_patch(report, node, remove_stale=True)
    stale: dict[str, str | None] = patch["metadata"].get("labels", {})
    resources: ExpectedResources = gpuclass.expected_resources(report)
    capacity: str | None = resources["capacity"].get("nvidia.com/gpu")
    host: HostPatch = gpuclass.host_labels_patch(gpuclass.plan(report), "bm-1")
    feature: NodeFeature = gpuclass.node_feature(report, node)
    text: str = gpuclass.nfd_feature_file(report)
    print(json.dumps(patch), json.dumps(host), text, capacity, stale, feature["spec"]["labels"])
    return [*summary.conflicts, *decision.conflicts, *labels]


def device_plugin(path: str) -> int:
    config: DevicePluginConfig = gpuclass.device_plugin_config()
    replicas: int = config["sharing"]["timeSlicing"]["resources"][0]["replicas"]
    cm: ConfigMap = gpuclass.device_plugin_configmap(namespace="nvidia-device-plugin")
    default: str = cm["data"]["default"]
    findings: list[gpuclass.ConfigFinding] = gpuclass.check_device_plugin_config(path)
    for f in findings:
        print(f.path, f.code, f.message, default)
    return replicas + len(findings)


def pods(manifest: str, review: str) -> bool:
    verdict: gpuclass.PodValidation = gpuclass.validate_pod(manifest)
    gpus: list[gpuclass.ContainerGpu] = verdict.containers
    slices: int = sum(c.slices for c in gpus)
    objects: list[KubernetesObject] = gpuclass.admission_policy()
    answer: AdmissionReviewResponse = gpuclass.admission_review(review)
    allowed: bool = answer["response"].get("allowed", False)
    print(slices, [o["kind"] for o in objects])
    return allowed and verdict.valid


def nodes(node_list: str) -> list[str]:
    out: list[str] = []
    for d in gpuclass.diagnose_nodes(node_list):
        diagnosis: gpuclass.Diagnosis = d
        findings: list[gpuclass.Finding] = diagnosis.findings
        out += [f"{f.severity}: {f.code}: {f.action or ''}" for f in findings]
    return out
