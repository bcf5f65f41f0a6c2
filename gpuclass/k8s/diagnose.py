"""Why GPU pods do not schedule on a node: what the Node object (and the hardware) say.

A node is read as the cluster reads it: the GPU label selects only with the exact
value ``"true"``; GPU Feature Discovery's ``nvidia.com/gpu.product`` (sanitised, with
``-SHARED`` under time-slicing) names the card when no hardware report is at hand;
``nvidia.com/gpu.shared`` means the device plugin renamed its resource.  A node with no
GPU at all is an informational "not a GPU node", so a whole cluster can be diagnosed
and only the nodes that should have GPUs report problems.

>>> node = {"kind": "Node", "metadata": {"name": "gpu-1",
...         "labels": {"autopilot.syself.com/gpu": "true"}},
...         "status": {"capacity": {"nvidia.com/gpu": "4"}, "allocatable": {"nvidia.com/gpu": "0"}}}
>>> [f.code for f in diagnose(node).findings]
['device-plugin-unhealthy']
>>> cpu = {"kind": "Node", "metadata": {"name": "cpu-1"}, "status": {"capacity": {"cpu": "8"}}}
>>> d = diagnose(cpu)
>>> [f.code for f in d.findings], d.ok
(['not-a-gpu-node'], True)
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..constants import (
    GFD_COUNT,
    GFD_PRODUCT,
    GFD_REPLICAS,
    GFD_SHARED_SUFFIX,
    GPU_LABEL,
    GPU_PRESENCE_LABELS,
    GPU_RESOURCE,
    GPU_RESOURCE_SHARED,
    LABEL_TRUE,
    NFD_PCI_GPU_LABELS,
    NFD_PCI_VENDOR_LABEL,
)
from ..errors import InputError, ManifestError
from .labels import gfd_card, node_summary
from .objects import as_object, as_objects, dig, meta_str, parse_quantity

__all__ = ["diagnose", "diagnose_nodes", "Diagnosis", "Finding"]

_MODEL = ConfigDict(frozen=True, extra="forbid")

Code = Literal["ok", "not-a-gpu-node", "label-value", "device-plugin-missing",
               "device-plugin-unhealthy", "some-slices-unhealthy", "renamed-resource",
               "no-supported-card", "reprovision", "capacity-mismatch", "stale-label"]
_CONFIGMAP = "deploy the device plugin with the time-slicing ConfigMap ('gpuclass labels --configmap')"


class Finding(BaseModel):
    """One thing :func:`diagnose` found, with what to do about it (``info`` and ``ok`` are
    not problems)."""

    model_config = _MODEL
    code: Code
    severity: Literal["ok", "info", "warning", "error"]
    message: str
    action: str | None = None


class Diagnosis(BaseModel):
    """Why GPU pods do (not) schedule on a node."""

    model_config = _MODEL
    node: str | None = None
    labeled: bool = Field(description=f"{GPU_LABEL} is exactly \"{LABEL_TRUE}\"")
    gpu_node: bool = Field(True, description="the node has (or is meant to have) a GPU")
    resource: str = Field(GPU_RESOURCE, description="the GPU resource the node advertises")
    capacity: int | None = Field(None, description="status.capacity[resource], None if absent")
    allocatable: int | None = Field(None, description="status.allocatable[resource]")
    cards: int | None = Field(None, description="supported cards, when known (report or GFD label)")
    expected: int | None = Field(None, description=f"{GPU_RESOURCE} the node must advertise")
    product: str | None = Field(None, description=f"GPU Feature Discovery's {GFD_PRODUCT}")
    findings: list[Finding] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.severity in ("ok", "info") for f in self.findings)


def _quantity(node: dict, section: str, resource: str, source: str | None) -> int | None:
    values = dig(node, f"status.{section}", {})
    raw = values.get(resource) if isinstance(values, dict) else None
    if raw is None:
        return None
    where = f"status.{section}[{resource}]"
    try:
        q = parse_quantity(raw)
    except ValueError as exc:
        raise ManifestError(where, str(exc), source) from None
    if q.denominator != 1 or q < 0:
        raise ManifestError(where, f"{raw!r} is not a whole count", source)
    return int(q)


def _why_unsupported(report) -> str:
    if not report.unsupported_gpus:
        return "the hardware has no NVIDIA GPU"
    parts = []
    for d in report.unsupported_gpus:
        what = f"{d.name or 'unknown GPU'} ({d.vendor}:{d.device}" + (f" at {d.slot})" if d.slot else ")")
        why = d.near_miss.reason if d.near_miss else (d.note or "not on the allowlist")
        parts.append(f"{what}: {why}")
    return "; ".join(parts)


class _Node:
    """The facts of one Node object that the diagnosis reads."""

    def __init__(self, obj: dict, report: Any, compiled: Any, source: str | None) -> None:
        kind = obj.get("kind")
        if kind not in (None, "Node"):
            raise ManifestError("kind", f"expected a Node, got {kind}", source)
        labels = dig(obj, "metadata.labels", {})
        if not isinstance(labels, dict):
            raise ManifestError("metadata.labels", "expected a mapping", source)
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        self.name = meta_str(meta, "name", source)
        self.labels = labels
        self.value = labels.get(GPU_LABEL)
        self.labeled = self.value == LABEL_TRUE
        # "True", "TRUE" or a YAML boolean: meant as true, but no selector for "true" matches it
        self.case_variant = not self.labeled and (
            self.value is True or (isinstance(self.value, str) and self.value.lower() == LABEL_TRUE))
        plain = [_quantity(obj, s, GPU_RESOURCE, source) for s in ("capacity", "allocatable")]
        shared = [_quantity(obj, s, GPU_RESOURCE_SHARED, source) for s in ("capacity", "allocatable")]
        self.renamed = plain == [None, None] and shared != [None, None]
        self.resource = GPU_RESOURCE_SHARED if self.renamed else GPU_RESOURCE
        self.capacity, self.allocatable = shared if self.renamed else plain
        product = labels.get(GFD_PRODUCT)
        self.product = product if isinstance(product, str) else None
        self.gfd = gfd_card(self.product, compiled)
        self.hw_cards: int | None = None
        self.cards: int | None = None
        self.per_card = self.gfd["slices"] if self.gfd else compiled.slices_per_card
        self.expected: int | None = None
        if report is not None:
            s = node_summary(report)
            self.hw_cards = self.cards = s.supported_cards
            self.per_card = next((c.slices for c in getattr(report, "cards", []) or []), self.per_card)
            self.expected = s.slices
        elif re.fullmatch(r"[0-9]{1,6}", str(labels.get(GFD_COUNT, ""))):
            # ASCII digits only: str.isdigit() also takes "²", which int() refuses
            self.cards = int(labels[GFD_COUNT])
            self.expected = self.cards * self.per_card
        self.report = report
        hw_gpu = report is not None and bool(self.hw_cards or report.unsupported_gpus)
        self.has_gpu = (self.value is not None or plain != [None, None] or shared != [None, None]
                        or any(k in labels for k in (*GPU_PRESENCE_LABELS, *NFD_PCI_GPU_LABELS,
                                                     NFD_PCI_VENDOR_LABEL)) or hw_gpu)
        # an allowlisted card is known to be there: from the hardware, else from GFD
        self.supported = bool(self.hw_cards) if report is not None else self.gfd is not None

    def where(self) -> str:
        return self.name or "NODE"

    def odd(self) -> str:
        if self.value is None or self.labeled:
            return ""
        return f" (it is {self.value!r}, not \"{LABEL_TRUE}\")"


def _unlabeled(n: _Node, add) -> None:
    """A node without the GPU label: reprovision, no supported card, or no GPU at all."""
    if n.supported:
        if n.report is not None:
            names = ", ".join(f"{k}x {c}" for c, k in node_summary(n.report).cards.items())
            what = f"the hardware has {n.hw_cards} supported card(s) ({names})"
        else:
            shared = " time-sliced" if n.product.endswith(GFD_SHARED_SUFFIX) else ""
            what = (f"GPU Feature Discovery reports {n.product}, the{shared} {n.gfd['name']} "
                    "(allowlisted),")
        add(Finding(code="reprovision", severity="error",
                    message=f"{what} but the node lacks {GPU_LABEL}={LABEL_TRUE}{n.odd()}: it was "
                            "provisioned without its GPU, or the label was lost",
                    action="reprovision the machine (driver, device plugin and label), or "
                           f"label it: kubectl label node {n.where()} {GPU_LABEL}={LABEL_TRUE}"))
    elif n.has_gpu:
        if n.report is not None:
            why = _why_unsupported(n.report)
        elif n.product:
            why = f"the card GPU Feature Discovery reports, {n.product}, is not on the allowlist"
        else:
            why = ("the controller found no supported card on this machine; run "
                   "'gpuclass scan' on it (or pass its hardware report) to name the card")
        extra = (f"; yet {n.capacity} {n.resource} are advertised, so a device plugin runs "
                 "on hardware the platform does not support") if n.capacity else ""
        add(Finding(code="no-supported-card", severity="error",
                    message=f"no {GPU_LABEL}={LABEL_TRUE} label{n.odd()}: no supported card: {why}{extra}",
                    action="schedule GPU pods on a node with a supported card; only the "
                           "allowlisted cards get the label and slices"))
    else:
        hw = " and the hardware has no NVIDIA GPU" if n.report is not None else ""
        add(Finding(code="not-a-gpu-node", severity="info",
                    message=f"not a GPU node: no {GPU_LABEL} label, no {GPU_RESOURCE} and no GPU "
                            f"Feature Discovery labels{hw}; GPU pods are not meant to run here"))


def _health(n: _Node, add) -> None:
    """A labeled node with a supported (or unknown) card: the device plugin and its capacity."""
    res, capacity, allocatable = n.resource, n.capacity, n.allocatable
    if n.renamed:
        add(Finding(code="renamed-resource", severity="error",
                    message=f"the node advertises {GPU_RESOURCE_SHARED} ({capacity if capacity is not None else allocatable}), "
                            f"not {GPU_RESOURCE}: the device plugin runs with renameByDefault: "
                            f"true, so pods requesting {GPU_RESOURCE} stay Pending (Insufficient "
                            f"{GPU_RESOURCE}) while the renamed slices go unused",
                    action=f"{_CONFIGMAP}, which keeps renameByDefault: false, and restart it; "
                           f"the platform's pods request {GPU_RESOURCE}"))
    if not allocatable:
        if not capacity:
            add(Finding(code="device-plugin-missing", severity="error",
                        message=f"Allocatable {res} is {0 if allocatable == 0 else 'absent'}"
                                " on a labeled node: the NVIDIA device plugin is missing or "
                                "has not registered (not a busy GPU: slices in use still "
                                "count as allocatable)",
                        action="check the device plugin DaemonSet pod on this node and its "
                               "log, the driver (nvidia-smi) and the container runtime"))
        else:
            add(Finding(code="device-plugin-unhealthy", severity="error",
                        message=f"Capacity {capacity} but Allocatable 0 {res}: the "
                                "device plugin marks every device unhealthy (not a busy GPU)",
                        action="read the device plugin's log for XID errors and check the "
                               "driver with nvidia-smi; restart the plugin once healthy"))
    elif capacity is not None and allocatable < capacity:
        add(Finding(code="some-slices-unhealthy", severity="warning",
                    message=f"Allocatable {allocatable} < Capacity {capacity} {res}: "
                            "the device plugin marks some devices unhealthy",
                    action="read the device plugin's log for XID errors"))
    seen = capacity if capacity else allocatable
    if not seen:
        return
    replicas = n.labels.get(GFD_REPLICAS)
    gfd = f" (GPU Feature Discovery reports replicas {replicas})" if isinstance(replicas, str) else ""
    if n.expected is not None and seen != n.expected:
        hint = ("time-slicing is not applied (one per card): the plugin runs without "
                "its time-slicing config" if n.cards and seen == n.cards
                else f"replicas is not {n.per_card}")
        add(Finding(code="capacity-mismatch", severity="error",
                    message=f"the node advertises {seen} {res}, expected {n.cards} card(s) x "
                            f"{n.per_card} = {n.expected}: {hint}{gfd}",
                    action=f"{_CONFIGMAP} and restart it"))
    elif n.expected is None and seen % n.per_card:
        add(Finding(code="capacity-mismatch", severity="error",
                    message=f"the node advertises {seen} {res}, not a multiple of "
                            f"{n.per_card}: the device plugin's time-slicing is misconfigured{gfd}",
                    action=f"{_CONFIGMAP} and restart it"))


def _diagnose(obj: dict, report: Any, compiled: Any, source: str | None) -> Diagnosis:
    n = _Node(obj, report, compiled, source)
    findings: list[Finding] = []
    add = findings.append
    stale = ((report is not None and n.hw_cards == 0)
             or (report is None and n.product is not None and n.gfd is None))
    if n.case_variant and not stale:
        add(Finding(code="label-value", severity="error",
                    message=f"{GPU_LABEL} is {n.value!r}, not \"{LABEL_TRUE}\": label selectors "
                            "compare values exactly (case-sensitive), so a nodeSelector "
                            f"{GPU_LABEL}: \"{LABEL_TRUE}\" does not match this node",
                    action=f"kubectl label node {n.where()} --overwrite {GPU_LABEL}={LABEL_TRUE}"))
    if not (n.labeled or n.case_variant):
        _unlabeled(n, add)
    elif stale:
        why = (_why_unsupported(report) if report is not None else
               f"GPU Feature Discovery reports {n.product}, which is not on the allowlist")
        add(Finding(code="stale-label", severity="error",
                    message=f"the node carries {GPU_LABEL}={n.value} but has no supported card: {why}",
                    action=f"remove the label: kubectl label node {n.where()} {GPU_LABEL}-"))
    else:
        _health(n, add)
    if not findings:
        add(Finding(code="ok", severity="ok",
                    message=f"label set and {n.allocatable} {n.resource} allocatable"
                            + (f" as expected ({n.cards} card(s) x {n.per_card})" if n.expected else ""),
                    action="if a pod still does not schedule, check it with 'gpuclass validate-pod' "
                           "(one slice per container) and whether all slices are in use"))
    return Diagnosis(node=n.name, labeled=n.labeled,
                     gpu_node=not any(f.code == "not-a-gpu-node" for f in findings),
                     resource=n.resource, capacity=n.capacity, allocatable=n.allocatable,
                     cards=n.cards, expected=n.expected, product=n.product, findings=findings)


def diagnose(node: Any, report: Any = None, *, policy: Any = None, source: str | None = None) -> Diagnosis:
    """Why GPU pods do not schedule on ``node``: a Node object as a dict, YAML/JSON text, a file,
    a ``kubernetes`` client model (``V1Node``) or its ``to_dict()``.

    With a :class:`~gpuclass.provisioner.HardwareReport` of the same machine the
    diagnosis also compares the label and capacity with the hardware; ``policy`` (default:
    the platform's allowlist) names the cards of GFD's product label and the slices per card.

    - no GPU anywhere (no label, no GPU resource, no GFD labels): "not a GPU node", info;
    - label value ``"True"`` (any case but ``"true"``): no selector matches it;
    - label set, ``Allocatable`` 0 or absent: the device plugin is missing or
      unhealthy (not a busy GPU); ``nvidia.com/gpu.shared`` instead: renamed resource;
    - no label: no supported card (named, with the reason, when the report or the
      GFD label says which card); a supported card known but no label: reprovision;
    - capacity not cards x slices: the device plugin's time-slicing is misconfigured.
    """
    from ..policy import compile_policy

    return _diagnose(as_object(node, source, "Node"), report, compile_policy(policy), source)


def diagnose_nodes(nodes: Any, report: Any = None, *, policy: Any = None,
                   source: str | None = None) -> list[Diagnosis]:
    """:func:`diagnose` of every node: a list, a ``List``/``NodeList`` (dict, text, file, or a
    client model such as ``V1NodeList``); one Diagnosis per node, in order.  A ``report``
    describes one machine, so it goes with one node only."""
    from ..policy import compile_policy

    objs = as_objects(nodes, source)
    if report is not None and len(objs) != 1:
        raise InputError(f"{len(objs)} nodes: a hardware report describes one machine")
    compiled = compile_policy(policy)
    out = []
    for obj in objs:
        if not isinstance(obj, dict):
            raise ManifestError("", f"expected a Node (a mapping), got {type(obj).__name__}", source)
        out.append(_diagnose(obj, report, compiled, source))
    return out
