"""Pods checked at the API server: a ``ValidatingAdmissionPolicy`` made from the policy, and
the answer of a validating webhook (an ``AdmissionReview`` response from :func:`validate_pod`).

A pod whose container asks for two slices passes the API server's own validation and
fails only on its node, at kubelet admission (``UnexpectedAdmissionError`` with the device
plugin's refusal).  :func:`admission_policy` refuses it at the API server instead: a
``ValidatingAdmissionPolicy`` and its binding (``admissionregistration.k8s.io/v1``, which
exists from Kubernetes 1.30 on; 1.26-1.29 had it only as alpha or beta under other
versions) whose CEL rejects

- any container, init container (sidecars too) or ephemeral container whose limits ask for
  more than one ``nvidia.com/gpu``, counting ``nvidia.com/gpu.shared`` as the same resource
  (only where the policy sets ``fail_requests_greater_than_one``, as the device plugin
  does then);
- any container asking for ``nvidia.com/gpu.shared`` at all: the platform's plugin
  advertises ``nvidia.com/gpu``, so such a pod would stay Pending.

The API server validates a pod before any admission policy sees it (an extended resource
needs a limit, requests equal limits, whole numbers), so the CEL reads the limits only; on
every pod that validation admits it gives :func:`validate_pod`'s verdict (the tests hold
the two equal).  Quantities are compared with Kubernetes' CEL ``quantity`` library.

>>> vap, binding = admission_policy()
>>> vap["kind"], binding["spec"]["policyName"] == vap["metadata"]["name"]
('ValidatingAdmissionPolicy', True)
>>> review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
...     "uid": "705ab4f5", "object": {"kind": "Pod", "spec": {"containers": [
...         {"name": "a", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}}}
>>> admission_review(review)["response"]["allowed"]
False
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..constants import GPU_RESOURCE, GPU_RESOURCE_SHARED
from ..errors import ManifestError
from .objects import as_object, meta_str
from .pods import POD_TEMPLATE_KINDS, too_large_message, validate_pod
from .types import AdmissionResponse, AdmissionReviewResponse, KubernetesObject

if TYPE_CHECKING:
    from ..policy import PolicyArg

__all__ = ["admission_policy", "admission_review", "cel_expressions", "POLICY_NAME",
           "ADMISSION_API_VERSION", "CONTAINER_LISTS"]

POLICY_NAME = "gpuclass-gpu-requests"
ADMISSION_API_VERSION = "admissionregistration.k8s.io/v1"
# the PodSpec's container lists: every one holds containers that may ask for a slice
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _limit(resource: str) -> str:
    """CEL: container ``c``'s limit of ``resource`` as a quantity (0 where it has none)."""
    return (f"(has(c.resources) && has(c.resources.limits) && '{resource}' in c.resources.limits"
            f" ? quantity(c.resources.limits['{resource}']) : quantity('0'))")


def _asks(resource: str) -> str:
    """CEL: whether container ``c`` names ``resource`` in its requests or limits."""
    return (f"(has(c.resources) && ((has(c.resources.limits) && '{resource}' in c.resources.limits)"
            f" || (has(c.resources.requests) && '{resource}' in c.resources.requests)))")


def _every_container(predicate: str) -> str:
    return " && ".join(f"(!has(object.spec.{field}) || object.spec.{field}.all(c, {predicate}))"
                       for field in CONTAINER_LISTS)


def cel_expressions(policy: PolicyArg = None) -> list[dict[str, str]]:
    """The policy's validations (``expression``, ``message``, ``reason``), as the
    ValidatingAdmissionPolicy carries them."""
    from ..policy import compile_policy

    out = []
    if compile_policy(policy).fail_requests_greater_than_one:
        total = f"{_limit(GPU_RESOURCE)}.add({_limit(GPU_RESOURCE_SHARED)})"
        out.append({
            "expression": _every_container(f"!{total}.isGreaterThan(quantity('1'))"),
            "message": (f"a container may ask for at most 1 {GPU_RESOURCE} ({GPU_RESOURCE_SHARED} "
                        "counts as the same resource): a slice is a time-share of one card, and "
                        "the device plugin refuses more per container "
                        f"({too_large_message(2)})"),
            "reason": "Invalid"})
    out.append({
        "expression": _every_container(f"!{_asks(GPU_RESOURCE_SHARED)}"),
        "message": (f"no node offers {GPU_RESOURCE_SHARED}: the platform's device plugin "
                    f"advertises {GPU_RESOURCE} (renameByDefault: false), so the pod would stay "
                    f"Pending; request {GPU_RESOURCE}"),
        "reason": "Invalid"})
    return out


def admission_policy(policy: PolicyArg = None, *, name: str = POLICY_NAME) -> list[KubernetesObject]:
    """A ``ValidatingAdmissionPolicy`` and its ``ValidatingAdmissionPolicyBinding``
    (``admissionregistration.k8s.io/v1``: Kubernetes 1.30 or later) refusing pods that
    :func:`validate_pod` refuses for their slices, on create and update, the ephemeral
    containers' subresource included: ``kubectl apply -f -``."""
    labels = {"app.kubernetes.io/managed-by": "gpuclass"}
    vap: KubernetesObject = {
        "apiVersion": ADMISSION_API_VERSION, "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                "resources": ["pods", "pods/ephemeralcontainers"]}]},
            "validations": cel_expressions(policy),
        }}
    binding: KubernetesObject = {
        "apiVersion": ADMISSION_API_VERSION, "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": {"policyName": name, "validationActions": ["Deny"]}}
    return [vap, binding]


def admission_review(review: Any, *, policy: PolicyArg = None, source: str | None = None) -> AdmissionReviewResponse:
    """A validating webhook's answer to an ``AdmissionReview`` request (``admission.k8s.io/v1``
    or ``v1beta1``, answered in the same version): the request's object judged by
    :func:`validate_pod`, its errors the denial's message (HTTP 403) and its warnings the
    response's ``warnings``.  An object that is no pod or workload, or none (a DELETE), is
    allowed; a review without ``request.uid`` is a :class:`~gpuclass.errors.ManifestError`."""
    obj = as_object(review, source, "AdmissionReview")
    version = obj.get("apiVersion")
    if obj.get("kind") != "AdmissionReview" or version not in ("admission.k8s.io/v1",
                                                               "admission.k8s.io/v1beta1"):
        raise ManifestError("kind", "expected an AdmissionReview (admission.k8s.io/v1), got "
                                    f"{obj.get('kind')!r} {version!r}", source)
    request = obj.get("request")
    if not isinstance(request, dict):
        raise ManifestError("request", "missing: an AdmissionReview request carries one", source)
    uid = meta_str(request, "uid", source)
    if not uid:
        raise ManifestError("request.uid", "missing: the response must echo it", source)
    response: AdmissionResponse = {"uid": uid, "allowed": True}
    target = request.get("object")
    if isinstance(target, dict) and (target.get("kind") in POD_TEMPLATE_KINDS or "kind" not in target):
        try:
            verdict = validate_pod(target, policy=policy, source=source)
        except ManifestError as exc:
            response["allowed"] = False
            response["status"] = {"code": 400, "reason": "BadRequest", "message": str(exc)}
        else:
            response["allowed"] = verdict.valid
            if not verdict.valid:
                response["status"] = {"code": 403, "reason": "Forbidden",
                                      "message": "; ".join(verdict.errors)}
            if verdict.warnings:
                response["warnings"] = list(verdict.warnings)
    return {"apiVersion": str(version), "kind": "AdmissionReview", "response": response}
