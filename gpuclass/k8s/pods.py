"""Pods checked as the API server and the device plugin will check them: one slice per container.

>>> v = validate_pod({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
...     {"name": "c", "resources": {"limits": {"nvidia.com/gpu": 2}}}]}})
>>> v.valid, v.errors[0]
(False, "spec.containers[0] (c): request for 'nvidia.com/gpu: 2' too large: maximum request size for shared resources is 1")
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..constants import GPU_RESOURCE, SLICES_PER_CARD
from ..errors import ManifestError
from .objects import as_object, dig, meta_str, parse_quantity

__all__ = ["validate_pod", "PodValidation", "ContainerGpu", "too_large_message",
           "SHARED_MEMORY_WARNING", "POD_TEMPLATE_KINDS"]

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
    return PodValidation(kind=kind, name=meta_str(meta, "name", source),
                         namespace=meta_str(meta, "namespace", source),
                         valid=not errors, slices=peak, containers=checked, errors=errors,
                         warnings=warnings)


