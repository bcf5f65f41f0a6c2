"""Pods checked as the API server and the device plugin will check them: one slice per container.

Every container kind is checked: app containers, init containers (sidecars among
them) and ephemeral containers, which the API server forbids any resources; so are
pod-level resources (``spec.resources``), where the API server takes only cpu, memory
and hugepages.
``nvidia.com/gpu.shared`` (the name the plugin gives the resource with
``renameByDefault: true``) is refused: the platform's plugin advertises
``nvidia.com/gpu``, so such a pod would never schedule.

>>> v = validate_pod({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
...     {"name": "c", "resources": {"limits": {"nvidia.com/gpu": 2}}}]}})
>>> v.valid, v.errors[0]
(False, 'spec.containers[0] (c): invalid allocation request for "nvidia.com/gpu": invalid request: maximum request size for shared resources is 1; found 2')
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ..constants import GPU_RESOURCE, GPU_RESOURCE_SHARED, SLICES_PER_CARD
from ..errors import ManifestError, QuantityError
from .objects import as_object, as_objects, dig, meta_str, parse_quantity, quantity_text

if TYPE_CHECKING:
    from ..policy import PolicyArg

__all__ = ["validate_pod", "validate_pods", "PodValidation", "ContainerGpu", "too_large_message",
           "shared_memory_warning", "SHARED_MEMORY_WARNING", "POD_TEMPLATE_KINDS"]

_MODEL = ConfigDict(frozen=True, extra="forbid")


def shared_memory_warning(slices_per_card: int = SLICES_PER_CARD) -> str:
    """The warning every pod that holds a slice gets: slices share one card's memory."""
    return (f"each {GPU_RESOURCE} slice is a time-slice of a whole card, not a part of it: up to "
            f"{slices_per_card} pods share the card's memory with no quota and no fault isolation, "
            "so size the workload for what the others leave")


SHARED_MEMORY_WARNING = shared_memory_warning()


def too_large_message(n: int, resource: str = GPU_RESOURCE) -> str:
    """The NVIDIA device plugin's own error for a shared-resource request above 1.

    From v0.15 on its ``Allocate`` returns this text when ``failRequestsGreaterThanOne`` is
    set (``internal/rm/rm.go``'s "invalid request", wrapped with the resource in
    ``internal/plugin/server.go``); kubelet shows it in an ``UnexpectedAdmissionError``
    event ("Allocate failed due to rpc error: ... desc = ...") and the pod never starts.
    (v0.14 and before said ``request for 'nvidia.com/gpu: N' too large: ...``.)

    >>> too_large_message(3)
    'invalid allocation request for "nvidia.com/gpu": invalid request: maximum request size for shared resources is 1; found 3'
    """
    return (f'invalid allocation request for "{resource}": invalid request: maximum request size '
            f"for shared resources is 1; found {n}")


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
# the PodSpec's container lists: field, init?, ephemeral?
_CONTAINER_LISTS = (("initContainers", True, False), ("containers", False, False),
                    ("ephemeralContainers", False, True))


class ContainerGpu(BaseModel):
    """One container's ``nvidia.com/gpu`` as Kubernetes reads it."""

    model_config = _MODEL
    name: str
    path: str = Field(description="spec.containers[0], spec.initContainers[1], ...")
    init: bool = False
    sidecar: bool = Field(False, description="an init container with restartPolicy: Always")
    ephemeral: bool = Field(False, description="an ephemeral (debug) container: never holds a slice")
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


def _quantities(section: dict, resource: str, field: str, errors: list[str]) -> tuple[Any, Fraction | None]:
    """``(value as written, parsed)`` of one resource in requests or limits; errors as the API server
    words them."""
    raw = section.get(resource)
    if raw is None:
        return None, None
    shown = quantity_text(raw)
    try:
        q = parse_quantity(raw)
    except QuantityError as exc:
        errors.append(f'{field}: Invalid value: "{shown}": not a Kubernetes quantity ({exc.reason})')
        return raw, None
    if q < 0:
        errors.append(f'{field}: Invalid value: "{shown}": must be greater than or equal to 0')
    elif q.denominator != 1:
        errors.append(f'{field}: Invalid value: "{shown}": must be an integer ({resource} counts '
                      "whole slices; a slice is already a time-share of one card and cannot be "
                      "split further)")
    return raw, q


class _Rules:
    """What the policy in use decides about requests: the device plugin's settings."""

    def __init__(self, policy: PolicyArg) -> None:
        from ..policy import compile_policy

        compiled = compile_policy(policy)
        self.fail_above_one = compiled.fail_requests_greater_than_one
        self.slices_per_card = compiled.slices_per_card


def _container(c: Any, path: str, init: bool, ephemeral: bool, rules: _Rules,
               source: str | None) -> tuple[ContainerGpu, list[str]]:
    """One container's check: the verdict, and warnings for the pod."""
    if not isinstance(c, dict):
        raise ManifestError(path, f"expected a container (a mapping), got {type(c).__name__}", source)
    name = c.get("name")
    name = name if isinstance(name, str) else ""
    resources = c.get("resources") or {}
    if not isinstance(resources, dict):
        raise ManifestError(f"{path}.resources", "expected a mapping", source)
    errors: list[str] = []
    warnings: list[str] = []
    sections = {}
    for which in ("requests", "limits"):
        section = resources.get(which) or {}
        if not isinstance(section, dict):
            raise ManifestError(f"{path}.resources.{which}", "expected a mapping", source)
        sections[which] = section
    if ephemeral and any(resources.get(k) for k in resources):
        # the API server allows ephemeral containers a short list of fields; resources is not one
        errors.append(f"{path}.resources: Forbidden: cannot be set for an Ephemeral Container")
    raw: dict[str, Any] = {}
    parsed: dict[str, Fraction | None] = {}
    for which in ("requests", "limits"):
        raw[which], parsed[which] = _quantities(sections[which], GPU_RESOURCE,
                                                f"{path}.resources.{which}[{GPU_RESOURCE}]", errors)
        shared, _ = _quantities(sections[which], GPU_RESOURCE_SHARED,
                                f"{path}.resources.{which}[{GPU_RESOURCE_SHARED}]", errors)
        if shared is not None:
            errors.append(
                f"{path}.resources.{which}[{GPU_RESOURCE_SHARED}]: the platform's device plugin "
                f"advertises {GPU_RESOURCE} (renameByDefault: false), so no node offers "
                f"{GPU_RESOURCE_SHARED} and the pod would stay Pending: request {GPU_RESOURCE}")
    req, lim = parsed["requests"], parsed["limits"]
    # Extended resources are never overcommitted: a limit alone sets the request,
    # a request needs a limit, and the two must be equal.
    if raw["requests"] is not None and raw["limits"] is None:
        errors.append(f"{path}.resources.limits[{GPU_RESOURCE}]: Required value: "
                      "Limit must be set for non overcommitable resources")
    elif req is not None and lim is not None and req != lim:
        errors.append(f"{path}.resources.requests[{GPU_RESOURCE}]: Invalid value: "
                      f"\"{quantity_text(raw['requests'])}\": must be equal to {GPU_RESOURCE} "
                      f"limit of {quantity_text(raw['limits'])}")
    effective = lim if lim is not None else req
    slices = int(effective) if effective is not None and effective.denominator == 1 and effective > 0 else 0
    if ephemeral:
        slices = 0  # never allocated: ephemeral containers get no device-plugin resources
    elif slices >= 2 and not errors:
        who = f"{path}{f' ({name})' if name else ''}"
        if rules.fail_above_one:
            errors.append(f"{who}: {too_large_message(slices)}")
        else:
            warnings.append(f"{who}: {slices} {GPU_RESOURCE} in one container: the device plugin "
                            "(failRequestsGreaterThanOne: false) hands out that many slices, which "
                            "may be slices of the same card and add no memory or compute")
    return ContainerGpu(
        name=name, path=path, init=init, ephemeral=ephemeral,
        sidecar=init and c.get("restartPolicy") == "Always",
        request=None if raw["requests"] is None else quantity_text(raw["requests"]),
        limit=None if raw["limits"] is None else quantity_text(raw["limits"]),
        slices=slices, errors=errors), warnings


def validate_pod(pod: Any, *, policy: PolicyArg = None, source: str | None = None) -> PodValidation:
    """Check a pod's ``nvidia.com/gpu`` requests as the API server and the device plugin will.

    ``pod`` is a Pod, a PodTemplate, a workload with a pod template (Deployment,
    StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, ...) or a bare PodSpec, as a
    dict, YAML/JSON text, a file path, a ``kubernetes`` client model or its
    ``to_dict()``.  Every container, init container and ephemeral container is
    checked:

    - a limit alone implies the request; a request without a limit, or one that
      differs from the limit, is invalid (extended resources are not overcommitted);
      a fraction is invalid (slices are whole);
    - 2 or more slices in one container is rejected with the device plugin's own
      message when the policy in use sets ``fail_requests_greater_than_one`` (the
      platform's does), and warned about otherwise;
    - ephemeral containers may set no resources; ``nvidia.com/gpu.shared`` is refused;
    - a pod that gets a slice is warned that slices share the card's memory.

    Malformed input raises :class:`~gpuclass.errors.ManifestError`.

    >>> validate_pod("kind: Pod\\nspec:\\n  containers:\\n  - name: a\\n").slices
    0
    """
    obj = as_object(pod, source, "pod")
    return _validate(obj, _Rules(policy), source)


def validate_pods(pods: Any, *, policy: PolicyArg = None, source: str | None = None) -> list[PodValidation]:
    """:func:`validate_pod` of every object in ``pods``: a list, a ``List``/``PodList`` (dict,
    text, file or client model such as ``V1PodList``); one result per object, in order."""
    rules = _Rules(policy)
    out = []
    for obj in as_objects(pods, source):
        if not isinstance(obj, dict):
            raise ManifestError("", f"expected a pod (a mapping), got {type(obj).__name__}", source)
        out.append(_validate(obj, rules, source))
    return out


# what the API server takes in pod-level resources (spec.resources): cpu, memory, hugepages-*
_POD_LEVEL = ("cpu", "memory")


def _pod_level(spec: dict, dot: str, source: str | None) -> list[str]:
    """The API server's refusal of ``nvidia.com/gpu`` (or any other extended resource) in the
    pod-level ``spec.resources``."""
    resources = spec.get("resources") or {}
    if not isinstance(resources, dict):
        raise ManifestError(f"{dot}resources", "expected a mapping", source)
    errors = []
    for which in ("limits", "requests"):
        section = resources.get(which) or {}
        if not isinstance(section, dict):
            raise ManifestError(f"{dot}resources.{which}", "expected a mapping", source)
        for name in section:
            if name in _POD_LEVEL or (isinstance(name, str) and name.startswith("hugepages-")):
                continue
            hint = (f"; {name} is asked for in a container's resources" if name in (
                GPU_RESOURCE, GPU_RESOURCE_SHARED) else "")
            errors.append(f'{dot}resources.{which}[{name}]: Unsupported value: "{name}": pod-level '
                          f"resources take only cpu, memory and hugepages-*{hint}")
    return errors


def _validate(obj: dict, rules: _Rules, source: str | None) -> PodValidation:
    kind, prefix, spec = _pod_spec(obj, source)
    dot = f"{prefix}." if prefix else ""
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise ManifestError(f"{dot}containers", "missing: a pod needs at least one container", source)
    checked: list[ContainerGpu] = []
    warnings: list[str] = []
    for field, init, ephemeral in _CONTAINER_LISTS:
        items = spec.get(field) or []
        if not isinstance(items, list):
            raise ManifestError(f"{dot}{field}", "expected a list", source)
        for i, c in enumerate(items):
            result, more = _container(c, f"{dot}{field}[{i}]", init, ephemeral, rules, source)
            checked.append(result)
            warnings += more
    errors = _pod_level(spec, dot, source) + [e for c in checked for e in c.errors]
    # What the pod holds at its peak, as the scheduler counts it: init containers run
    # one at a time, next to the sidecars started before them; then the app containers
    # run together with all sidecars.  Ephemeral containers hold nothing.
    sidecars = peak = 0
    for c in checked:
        if c.init and c.sidecar:
            sidecars += c.slices
            peak = max(peak, sidecars)
        elif c.init:
            peak = max(peak, sidecars + c.slices)
    app = [c for c in checked if not c.init and not c.ephemeral]
    peak = max(peak, sidecars + sum(c.slices for c in app))
    if any(c.slices for c in checked):
        warnings.insert(0, shared_memory_warning(rules.slices_per_card))
    if sum(1 for c in app if c.slices) > 1:
        warnings.append("several containers each hold a slice: they may get slices of the same "
                        "card or of different cards, and share memory either way")
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return PodValidation(kind=kind, name=meta_str(meta, "name", source),
                         namespace=meta_str(meta, "namespace", source),
                         valid=not errors, slices=peak, containers=checked, errors=errors,
                         warnings=warnings)
