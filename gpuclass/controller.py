"""The controller's wrapper: node labels, GPU capacity, pod validation, diagnosis.

- :func:`node_labels` — ``autopilot.syself.com/gpu=true`` only for a node with a
  supported card, nothing for any other node (a label attracts pods; this
  platform has no taints to keep them off).
- :func:`expected_resources` — ``nvidia.com/gpu`` = cards x 4 under both
  Capacity and Allocatable; :func:`device_plugin_configmap` — the NVIDIA device
  plugin's time-slicing configuration that makes it so.
- :func:`validate_pod` — a Pod, or a workload's pod template, checked the way the
  API server and the device plugin will check it, before it is applied.
- :func:`diagnose` — "GPU not scheduling": what the Node object (and, if given,
  the hardware report) says is wrong.

Kubernetes objects come in as dicts, YAML/JSON text, files or ``kubernetes``
client models; the generated ones are plain dicts ready for the API.

>>> from gpuclass.provisioner import HardwareReport
>>> hw = HardwareReport.example("rtx-6000-ada", count=2)
>>> node_labels(hw), expected_resources(hw)["allocatable"]
({'autopilot.syself.com/gpu': 'true'}, {'nvidia.com/gpu': '8'})
>>> node_labels(HardwareReport.example(None))
{}
>>> v = validate_pod({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
...     {"name": "c", "resources": {"limits": {"nvidia.com/gpu": 2}}}]}})
>>> v.valid, v.errors[0]
(False, "spec.containers[0] (c): request for 'nvidia.com/gpu: 2' too large: maximum request size for shared resources is 1")
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._allowlist import DEFAULT_POLICY
from ._manifest import as_object, dig, parse_quantity
from .errors import InputError, ManifestError
from .models import GPU_LABEL, GPU_RESOURCE, NodeGpuSummary

__all__ = ["node_labels", "labels_patch", "expected_gpus", "expected_resources",
           "device_plugin_config", "device_plugin_configmap", "validate_pod", "PodValidation",
           "ContainerGpu", "diagnose", "Diagnosis", "Finding", "GPU_LABEL", "GPU_RESOURCE",
           "SLICES_PER_CARD", "too_large_message", "SHARED_MEMORY_WARNING", "POD_TEMPLATE_KINDS"]

SLICES_PER_CARD = int(DEFAULT_POLICY["slices_per_card"])
# GPU Feature Discovery labels, read when present to name the card and count it.
GFD_PRODUCT = "nvidia.com/gpu.product"
GFD_COUNT = "nvidia.com/gpu.count"
SHARED_MEMORY_WARNING = (
    f"each {GPU_RESOURCE} slice is a time-slice of a whole card, not a part of it: up to "
    f"{SLICES_PER_CARD} pods share the card's memory with no quota and no fault isolation, "
    "so size the workload for what the others leave")
_MODEL = ConfigDict(frozen=True, extra="forbid")


def too_large_message(n: int, resource: str = GPU_RESOURCE) -> str:
    """The NVIDIA device plugin's own error for a shared-resource request above 1.

    Its ``Allocate`` returns this text (``internal/plugin/server.go``) when
    ``failRequestsGreaterThanOne`` is set; kubelet shows it in an
    ``UnexpectedAdmissionError`` event and the pod is never started.

    >>> too_large_message(3)
    "request for 'nvidia.com/gpu: 3' too large: maximum request size for shared resources is 1"
    """
    return f"request for '{resource}: {n}' too large: maximum request size for shared resources is 1"


# -- what the node must carry --------------------------------------------------------


def _summary(hw: Any) -> NodeGpuSummary:
    """The node rollup of a HardwareReport, an InstallPlan's report, or a NodeGpuSummary."""
    if isinstance(hw, NodeGpuSummary):
        return hw
    summary = getattr(hw, "summary", None)
    if isinstance(summary, NodeGpuSummary):
        return summary
    raise InputError(f"expected a HardwareReport or NodeGpuSummary, got {type(hw).__name__}")


def node_labels(hw: Any) -> dict[str, str]:
    """``{GPU_LABEL: "true"}`` for a node with a supported card, else ``{}``."""
    s = _summary(hw)
    return {GPU_LABEL: "true"} if s.supported_cards > 0 else {}


def labels_patch(hw: Any, node: str | None = None, *, remove_stale: bool = False) -> dict:
    """A Node merge patch (``kubectl patch node N --type merge -p ...``) with the GPU label.

    A node without a supported card gets nothing: an empty ``labels``.  With
    ``remove_stale`` it gets ``null`` for the label instead, which deletes a label
    left from earlier hardware (a merge patch, no longer a valid Node object).

    >>> from gpuclass.provisioner import HardwareReport
    >>> labels_patch(HardwareReport.example(None), "n1")["metadata"]
    {'name': 'n1', 'labels': {}}
    >>> labels_patch(HardwareReport.example(None), remove_stale=True)["metadata"]
    {'labels': {'autopilot.syself.com/gpu': None}}
    """
    labels: dict[str, str | None] = dict(node_labels(hw))
    if not labels and remove_stale:
        labels[GPU_LABEL] = None
    meta: dict[str, Any] = {"name": node} if node else {}
    meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta}


def expected_gpus(hw: Any) -> int:
    """``nvidia.com/gpu`` the node must advertise: supported cards x slices per card."""
    return _summary(hw).slices


def expected_resources(hw: Any) -> dict[str, dict[str, str]]:
    """Expected ``capacity`` and ``allocatable`` (quantities as strings, as in Node.status);
    empty for a node without a supported card, where no device plugin runs."""
    n = expected_gpus(hw)
    res = {GPU_RESOURCE: str(n)} if n else {}
    return {"capacity": dict(res), "allocatable": dict(res)}


def device_plugin_config(replicas: int = SLICES_PER_CARD, *,
                         fail_requests_greater_than_one: bool = True,
                         rename_by_default: bool = False) -> dict:
    """The device plugin's ``config.yaml`` as a dict (api/config/v1 of NVIDIA/k8s-device-plugin).

    >>> device_plugin_config()["sharing"]["timeSlicing"]["resources"]
    [{'name': 'nvidia.com/gpu', 'replicas': 4}]
    """
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 2:
        raise InputError(f"replicas: {replicas!r}: the device plugin needs at least 2")
    return {
        "version": "v1",
        "flags": {"migStrategy": "none"},
        "sharing": {"timeSlicing": {
            "renameByDefault": bool(rename_by_default),
            "failRequestsGreaterThanOne": bool(fail_requests_greater_than_one),
            "resources": [{"name": GPU_RESOURCE, "replicas": replicas}],
        }},
    }


def device_plugin_configmap(name: str = "nvidia-device-plugin-config",
                            namespace: str = "kube-system", key: str = "config.yaml",
                            replicas: int = SLICES_PER_CARD) -> dict:
    """A ConfigMap holding :func:`device_plugin_config` under ``key`` (the file the
    plugin reads through ``CONFIG_FILE``, or the helm chart's ``config.name``).

    >>> cm = device_plugin_configmap()
    >>> print(cm["data"]["config.yaml"], end="")
    version: v1
    flags:
      migStrategy: none
    sharing:
      timeSlicing:
        renameByDefault: false
        failRequestsGreaterThanOne: true
        resources:
        - name: nvidia.com/gpu
          replicas: 4
    """
    import yaml

    text = yaml.safe_dump(device_plugin_config(replicas), sort_keys=False, default_flow_style=False)
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"app.kubernetes.io/managed-by": "gpuclass"}},
            "data": {key: text}}


# -- pod validation ------------------------------------------------------------------

# kind -> where its PodSpec lives
POD_TEMPLATE_KINDS = _POD_SPEC = {
    "Pod": "spec",
    "PodTemplate": "template.spec",
    "Deployment": "spec.template.spec",
    "StatefulSet": "spec.template.spec",
    "DaemonSet": "spec.template.spec",
    "ReplicaSet": "spec.template.spec",
    "ReplicationController": "spec.template.spec",
    "Job": "spec.template.spec",
    "CronJob": "spec.jobTemplate.spec.template.spec",
}


class ContainerGpu(BaseModel):
    """One container's ``nvidia.com/gpu`` as Kubernetes reads it."""

    model_config = _MODEL
    name: str
    path: str = Field(description="spec.containers[0], spec.initContainers[1], ...")
    init: bool = False
    sidecar: bool = Field(False, description="an init container with restartPolicy: Always")
    request: str | None = Field(None, description="as written under resources.requests")
    limit: str | None = Field(None, description="as written under resources.limits")
    slices: int = Field(0, description="the effective request (a limit alone implies it)")
    errors: list[str] = Field(default_factory=list)


class PodValidation(BaseModel):
    """The verdict on one pod (or pod template): ``valid`` when no error."""

    model_config = _MODEL
    kind: str
    name: str | None = None
    namespace: str | None = None
    valid: bool
    slices: int = Field(0, description=f"{GPU_RESOURCE} the pod holds at its peak")
    containers: list[ContainerGpu] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


def _pod_spec(obj: dict, source: str | None) -> tuple[str, str, dict]:
    """``(kind, path prefix, PodSpec)`` of a Pod, a workload, a template or a bare PodSpec."""
    kind = obj.get("kind")
    if kind is None:  # a bare pod template or PodSpec
        if "containers" in obj:
            return "PodSpec", "", obj
        if isinstance(obj.get("spec"), dict):
            return "PodTemplateSpec", "spec", obj["spec"]
        if isinstance(obj.get("template"), dict):
            return "PodTemplate", "template.spec", dig(obj, "template.spec", {})
        raise ManifestError("kind", "missing, and no containers, spec or template: not a pod", source)
    if not isinstance(kind, str):
        raise ManifestError("kind", f"expected a string, got {type(kind).__name__}", source)
    where = _POD_SPEC.get(kind)
    if where is None:
        raise ManifestError("kind", f"{kind} has no pod template (expected one of: "
                                    + ", ".join(_POD_SPEC) + ")", source)
    spec = dig(obj, where)
    if not isinstance(spec, dict):
        raise ManifestError(where, "missing: no pod spec", source)
    return kind, where, spec


def _container(c: Any, path: str, init: bool, source: str | None) -> ContainerGpu:
    if not isinstance(c, dict):
        raise ManifestError(path, f"expected a container (a mapping), got {type(c).__name__}", source)
    name = str(c.get("name") or "")
    resources = c.get("resources") or {}
    if not isinstance(resources, dict):
        raise ManifestError(f"{path}.resources", "expected a mapping", source)
    values: dict[str, Any] = {}
    errors: list[str] = []
    parsed: dict[str, Fraction | None] = {}
    for which in ("requests", "limits"):
        section = resources.get(which) or {}
        if not isinstance(section, dict):
            raise ManifestError(f"{path}.resources.{which}", "expected a mapping", source)
        raw = section.get(GPU_RESOURCE)
        values[which] = raw
        if raw is None:
            parsed[which] = None
            continue
        field = f"{path}.resources.{which}[{GPU_RESOURCE}]"
        try:
            q = parse_quantity(raw)
        except ValueError:
            errors.append(f'{field}: Invalid value: "{raw}": not a Kubernetes quantity')
            parsed[which] = None
            continue
        if q < 0:
            errors.append(f'{field}: Invalid value: "{raw}": must be greater than or equal to 0')
        elif q.denominator != 1:
            errors.append(f'{field}: Invalid value: "{raw}": must be an integer')
        parsed[which] = q
    req, lim = parsed["requests"], parsed["limits"]
    # Extended resources are never overcommitted: a limit alone sets the request,
    # a request needs a limit, and the two must be equal.
    if values["requests"] is not None and values["limits"] is None:
        errors.append(f"{path}.resources.limits[{GPU_RESOURCE}]: Required value: "
                      "Limit must be set for non overcommitable resources")
    elif req is not None and lim is not None and req != lim:
        errors.append(f"{path}.resources.requests[{GPU_RESOURCE}]: Invalid value: "
                      f"\"{values['requests']}\": must be equal to {GPU_RESOURCE} limit of "
                      f"{values['limits']}")
    effective = lim if lim is not None else req
    slices = int(effective) if effective is not None and effective.denominator == 1 and effective > 0 else 0
    if slices >= 2 and not errors:
        errors.append(f"{path}{f' ({name})' if name else ''}: {too_large_message(slices)}")
    return ContainerGpu(
        name=name, path=path, init=init,
        sidecar=init and c.get("restartPolicy") == "Always",
        request=None if values["requests"] is None else str(values["requests"]),
        limit=None if values["limits"] is None else str(values["limits"]),
        slices=slices, errors=errors)


def validate_pod(pod: Any, *, source: str | None = None) -> PodValidation:
    """Check a pod's ``nvidia.com/gpu`` requests as the API server and the device plugin will.

    ``pod`` is a Pod, a PodTemplate, a workload with a pod template (Deployment,
    StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, ...) or a bare PodSpec, as a
    dict, YAML/JSON text, a file path or a ``kubernetes`` client model.  Every
    container and init container is checked:

    - a limit alone implies the request; a request without a limit, or one that
      differs from the limit, is invalid (extended resources are not overcommitted);
    - 2 or more slices in one container is rejected with the device plugin's own
      message (it runs with ``failRequestsGreaterThanOne``);
    - a pod that gets a slice is warned that slices share the card's memory.

    Malformed input raises :class:`~gpuclass.errors.ManifestError`.

    >>> validate_pod("kind: Pod\\nspec:\\n  containers:\\n  - name: a\\n").slices
    0
    """
    obj = as_object(pod, source, "pod")
    kind, prefix, spec = _pod_spec(obj, source)
    dot = f"{prefix}." if prefix else ""
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise ManifestError(f"{dot}containers", "missing: a pod needs at least one container", source)
    inits = spec.get("initContainers") or []
    if not isinstance(inits, list):
        raise ManifestError(f"{dot}initContainers", "expected a list", source)
    checked = [_container(c, f"{dot}initContainers[{i}]", True, source) for i, c in enumerate(inits)]
    checked += [_container(c, f"{dot}containers[{i}]", False, source) for i, c in enumerate(containers)]
    errors = [e for c in checked for e in c.errors]
    # What the pod holds at its peak, as the scheduler counts it: init containers run
    # one at a time, next to the sidecars started before them; then the app containers
    # run together with all sidecars.
    sidecars = peak = 0
    for c in checked:
        if c.init and c.sidecar:
            sidecars += c.slices
            peak = max(peak, sidecars)
        elif c.init:
            peak = max(peak, sidecars + c.slices)
    peak = max(peak, sidecars + sum(c.slices for c in checked if not c.init))
    warnings = [SHARED_MEMORY_WARNING] if any(c.slices for c in checked) else []
    if sum(1 for c in checked if c.slices and not c.init) > 1:
        warnings.append("several containers each hold a slice: they may get slices of the same "
                        "card or of different cards, and share memory either way")
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return PodValidation(kind=kind, name=_meta_str(meta, "name", source),
                         namespace=_meta_str(meta, "namespace", source),
                         valid=not errors, slices=peak, containers=checked, errors=errors,
                         warnings=warnings)


# -- diagnosis -----------------------------------------------------------------------

Code = Literal["ok", "device-plugin-missing", "device-plugin-unhealthy", "some-slices-unhealthy",
               "no-supported-card", "reprovision", "capacity-mismatch", "stale-label"]


class Finding(BaseModel):
    """One thing :func:`diagnose` found, with what to do about it."""

    model_config = _MODEL
    code: Code
    severity: Literal["ok", "warning", "error"]
    message: str
    action: str | None = None


class Diagnosis(BaseModel):
    """Why GPU pods do (not) schedule on a node."""

    model_config = _MODEL
    node: str | None = None
    labeled: bool
    capacity: int | None = Field(None, description=f"status.capacity[{GPU_RESOURCE}], None if absent")
    allocatable: int | None = Field(None, description=f"status.allocatable[{GPU_RESOURCE}]")
    cards: int | None = Field(None, description="supported cards, when known (report or GFD label)")
    expected: int | None = Field(None, description=f"{GPU_RESOURCE} the node must advertise")
    findings: list[Finding] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.severity == "ok" for f in self.findings)


def _meta_str(meta: dict, key: str, source: str | None) -> str | None:
    value = meta.get(key)
    if value is not None and not isinstance(value, str):
        raise ManifestError(f"metadata.{key}", f"expected a string, got {type(value).__name__}", source)
    return value


def _node_quantity(node: dict, section: str, source: str | None) -> int | None:
    raw = dig(node, f"status.{section}", {}).get(GPU_RESOURCE) if isinstance(
        dig(node, f"status.{section}", {}), dict) else None
    if raw is None:
        return None
    try:
        q = parse_quantity(raw)
    except ValueError:
        raise ManifestError(f"status.{section}[{GPU_RESOURCE}]", f"{raw!r} is not a quantity",
                            source) from None
    if q.denominator != 1 or q < 0:
        raise ManifestError(f"status.{section}[{GPU_RESOURCE}]", f"{raw!r} is not a whole count",
                            source)
    return int(q)


def _why_unsupported(report) -> str:
    if not report.unsupported_gpus:
        return "the hardware has no NVIDIA GPU"
    parts = []
    for d in report.unsupported_gpus:
        what = f"{d.name or 'unknown GPU'} ({d.vendor}:{d.device}" + (f" at {d.address})" if d.address else ")")
        why = d.near_miss.reason if d.near_miss else (d.note or "not on the allowlist")
        parts.append(f"{what}: {why}")
    return "; ".join(parts)


def diagnose(node: Any, report: Any = None, *, source: str | None = None) -> Diagnosis:
    """Why GPU pods do not schedule on ``node`` (a Node object as dict, YAML, file or model).

    With a :class:`~gpuclass.provisioner.HardwareReport` of the same machine the
    diagnosis also compares the label and capacity with the hardware.

    - label set, ``Allocatable`` 0 or absent: the device plugin is missing or
      unhealthy (not a busy GPU);
    - no label: no supported card (named, with the reason, when the report or the
      GPU Feature Discovery label says which card);
    - a supported card in the hardware but no label: reprovision;
    - capacity not cards x 4: the device plugin's time-slicing is misconfigured.

    >>> node = {"kind": "Node", "metadata": {"name": "gpu-1",
    ...         "labels": {"autopilot.syself.com/gpu": "true"}},
    ...         "status": {"capacity": {"nvidia.com/gpu": "4"}, "allocatable": {"nvidia.com/gpu": "0"}}}
    >>> [f.code for f in diagnose(node).findings]
    ['device-plugin-unhealthy']
    """
    obj = as_object(node, source, "Node")
    kind = obj.get("kind")
    if kind not in (None, "Node"):
        raise ManifestError("kind", f"expected a Node, got {kind}", source)
    labels = dig(obj, "metadata.labels", {})
    if not isinstance(labels, dict):
        raise ManifestError("metadata.labels", "expected a mapping", source)
    name = _meta_str(obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}, "name", source)
    label_value = labels.get(GPU_LABEL)
    labeled = str(label_value).lower() == "true" if label_value is not None else False
    capacity = _node_quantity(obj, "capacity", source)
    allocatable = _node_quantity(obj, "allocatable", source)
    per_card = SLICES_PER_CARD
    cards: int | None = None
    hw_cards: int | None = None
    if report is not None:
        s = _summary(report)
        hw_cards = cards = s.supported_cards
        per_card = next((c.slices for c in getattr(report, "cards", []) or []), SLICES_PER_CARD)
    elif re.fullmatch(r"[0-9]{1,6}", str(labels.get(GFD_COUNT, ""))):
        # ASCII digits only: str.isdigit() also takes "²", which int() refuses
        cards = int(labels[GFD_COUNT])
    expected = None if cards is None else (s.slices if report is not None else cards * per_card)
    product = labels.get(GFD_PRODUCT)
    findings: list[Finding] = []
    add = findings.append

    if not labeled:
        odd = f" (it is {label_value!r}, not \"true\")" if label_value is not None else ""
        if hw_cards:
            names = ", ".join(f"{n}x {c}" for c, n in _summary(report).cards.items())
            add(Finding(code="reprovision", severity="error",
                        message=f"the hardware has {hw_cards} supported card(s) ({names}) but the "
                                f"node lacks {GPU_LABEL}=true{odd}: it was provisioned without "
                                "its GPU, or the label was lost",
                        action="reprovision the machine (driver, device plugin and label), or "
                               f"label it: kubectl label node {name or 'NODE'} {GPU_LABEL}=true"))
        else:
            if report is not None:
                why = _why_unsupported(report)
            elif product:
                why = (f"the card GPU Feature Discovery reports, {product}, is not on the "
                       "allowlist")
            else:
                why = ("the controller found no supported card on this machine; run "
                       "'gpuclass scan' on it (or pass its hardware report) to name the card")
            extra = (f"; yet {capacity} {GPU_RESOURCE} are advertised, so a device plugin runs "
                     "on hardware the platform does not support") if capacity else ""
            add(Finding(code="no-supported-card", severity="error",
                        message=f"no {GPU_LABEL}=true label{odd}: no supported card: {why}{extra}",
                        action="schedule GPU pods on a node with a supported card; only the "
                               "allowlisted cards get the label and slices"))
    elif hw_cards == 0:
        add(Finding(code="stale-label", severity="error",
                    message=f"the node carries {GPU_LABEL}=true but the hardware has no "
                            f"supported card: {_why_unsupported(report)}",
                    action=f"remove the label: kubectl label node {name or 'NODE'} {GPU_LABEL}-"))
    if labeled and hw_cards != 0:
        if not allocatable:
            if not capacity:
                add(Finding(code="device-plugin-missing", severity="error",
                            message=f"Allocatable {GPU_RESOURCE} is {0 if allocatable == 0 else 'absent'}"
                                    " on a labeled node: the NVIDIA device plugin is missing or "
                                    "has not registered (not a busy GPU: slices in use still "
                                    "count as allocatable)",
                            action="check the device plugin DaemonSet pod on this node and its "
                                   "log, the driver (nvidia-smi) and the container runtime"))
            else:
                add(Finding(code="device-plugin-unhealthy", severity="error",
                            message=f"Capacity {capacity} but Allocatable 0 {GPU_RESOURCE}: the "
                                    "device plugin marks every device unhealthy (not a busy GPU)",
                            action="read the device plugin's log for XID errors and check the "
                                   "driver with nvidia-smi; restart the plugin once healthy"))
        elif capacity is not None and allocatable < capacity:
            add(Finding(code="some-slices-unhealthy", severity="warning",
                        message=f"Allocatable {allocatable} < Capacity {capacity} {GPU_RESOURCE}: "
                                "the device plugin marks some devices unhealthy",
                        action="read the device plugin's log for XID errors"))
        seen = capacity if capacity else allocatable
        if seen:
            if expected is not None and seen != expected:
                hint = ("time-slicing is not applied (one per card): the plugin runs without "
                        "its time-slicing config" if cards and seen == cards
                        else f"replicas is not {per_card}")
                add(Finding(code="capacity-mismatch", severity="error",
                            message=f"the node advertises {seen} {GPU_RESOURCE}, expected "
                                    f"{cards} card(s) x {per_card} = {expected}: {hint}",
                            action="deploy the device plugin with the time-slicing ConfigMap "
                                   "('gpuclass labels --configmap') and restart it"))
            elif expected is None and seen % per_card:
                add(Finding(code="capacity-mismatch", severity="error",
                            message=f"the node advertises {seen} {GPU_RESOURCE}, not a multiple of "
                                    f"{per_card}: the device plugin's time-slicing is misconfigured",
                            action="deploy the device plugin with the time-slicing ConfigMap "
                                   "('gpuclass labels --configmap') and restart it"))
    if not findings:
        add(Finding(code="ok", severity="ok",
                    message=f"label set and {allocatable} {GPU_RESOURCE} allocatable"
                            + (f" as expected ({cards} card(s) x {per_card})" if expected else ""),
                    action="if a pod still does not schedule, check it with 'gpuclass validate-pod' "
                           "(one slice per container) and whether all slices are in use"))
    return Diagnosis(node=name, labeled=labeled, capacity=capacity, allocatable=allocatable,
                     cards=cards, expected=expected, findings=findings)
