"""The shapes of what the Kubernetes helpers return, for type checkers: plain dicts at run
time (ready for ``json.dumps``, ``kubectl apply`` and the official client), TypedDicts to
``mypy --strict`` and pyright.

>>> from gpuclass.k8s.labels import labels_patch
>>> from gpuclass.provisioner import HardwareReport
>>> patch: NodePatch = labels_patch(HardwareReport.example(None), "n1")
>>> patch["metadata"]["labels"]
{}
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["ObjectMeta", "PatchMeta", "NodePatch", "HostPatch", "ExpectedResources",
           "TimeSlicingResource", "TimeSlicing", "Sharing", "PluginFlags", "DevicePluginConfig",
           "ConfigMap", "NodeFeatureSpec", "NodeFeature", "KubernetesObject", "AdmissionStatus",
           "AdmissionResponse", "AdmissionReviewResponse"]


class ObjectMeta(TypedDict, total=False):
    """The ``metadata`` of a generated object (the fields gpuclass sets)."""

    name: str
    namespace: str
    labels: dict[str, str]
    annotations: dict[str, str]


class PatchMeta(TypedDict, total=False):
    """The ``metadata`` of a merge patch: a ``None`` label value deletes the label."""

    name: str
    labels: dict[str, str | None]


class NodePatch(TypedDict):
    """A Node merge patch (``kubectl patch node N --type merge -p ...``)."""

    apiVersion: str
    kind: str
    metadata: PatchMeta


class HostPatch(TypedDict):
    """A ``HetznerBareMetalHost`` merge patch (``infrastructure.cluster.x-k8s.io/v1beta1``)."""

    apiVersion: str
    kind: str
    metadata: PatchMeta


class ExpectedResources(TypedDict):
    """``nvidia.com/gpu`` under ``status.capacity`` and ``status.allocatable``, as strings."""

    capacity: dict[str, str]
    allocatable: dict[str, str]


class TimeSlicingResource(TypedDict):
    name: str
    replicas: int


class TimeSlicing(TypedDict):
    renameByDefault: bool
    failRequestsGreaterThanOne: bool
    resources: list[TimeSlicingResource]


class Sharing(TypedDict):
    timeSlicing: TimeSlicing


class PluginFlags(TypedDict):
    migStrategy: str


class DevicePluginConfig(TypedDict):
    """The NVIDIA device plugin's config file (its ``api/config/v1``)."""

    version: str
    flags: PluginFlags
    sharing: Sharing


class ConfigMap(TypedDict):
    """A ConfigMap: every ``data`` value is one device plugin config file, as YAML."""

    apiVersion: str
    kind: str
    metadata: ObjectMeta
    data: dict[str, str]


class NodeFeatureSpec(TypedDict):
    labels: dict[str, str]


class NodeFeature(TypedDict):
    """node-feature-discovery's ``NodeFeature`` (``nfd.k8s-sigs.io/v1alpha1``)."""

    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: NodeFeatureSpec


class KubernetesObject(TypedDict):
    """Any other generated object: ``spec`` as the API defines it."""

    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: dict[str, Any]


class AdmissionStatus(TypedDict):
    code: int
    reason: str
    message: str


class AdmissionResponse(TypedDict, total=False):
    """``response`` of an ``AdmissionReview``: ``uid`` and ``allowed`` always set."""

    uid: str
    allowed: bool
    status: AdmissionStatus
    warnings: list[str]


class AdmissionReviewResponse(TypedDict):
    """What a validating webhook answers (``admission.k8s.io/v1``)."""

    apiVersion: str
    kind: str
    response: AdmissionResponse
