"""Why GPU pods do not schedule on a node: what the Node object (and the hardware) say.

>>> node = {"kind": "Node", "metadata": {"name": "gpu-1",
...         "labels": {"autopilot.syself.com/gpu": "true"}},
...         "status": {"capacity": {"nvidia.com/gpu": "4"}, "allocatable": {"nvidia.com/gpu": "0"}}}
>>> [f.code for f in diagnose(node).findings]
['device-plugin-unhealthy']
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..constants import GFD_COUNT, GFD_PRODUCT, GPU_LABEL, GPU_RESOURCE, SLICES_PER_CARD
from ..errors import ManifestError
from .labels import node_summary
from .objects import as_object, dig, meta_str, parse_quantity

__all__ = ["diagnose", "Diagnosis", "Finding"]

_MODEL = ConfigDict(frozen=True, extra="forbid")


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
    name = meta_str(obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}, "name", source)
    label_value = labels.get(GPU_LABEL)
    labeled = str(label_value).lower() == "true" if label_value is not None else False
    capacity = _node_quantity(obj, "capacity", source)
    allocatable = _node_quantity(obj, "allocatable", source)
    per_card = SLICES_PER_CARD
    cards: int | None = None
    hw_cards: int | None = None
    if report is not None:
        s = node_summary(report)
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
            names = ", ".join(f"{n}x {c}" for c, n in node_summary(report).cards.items())
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
