"""What one Node object (and, where given, its machine's hardware report) says about its GPU:
the facts :mod:`gpuclass.k8s.diagnose` judges.

The labels read, as their components write them:

- ``autopilot.syself.com/gpu`` (exactly ``"true"`` selects), the pool label
  ``node-role.kubernetes.io/gpu`` and the device plugin's ``nvidia.com/device-plugin.config``;
- GPU Feature Discovery's ``nvidia.com/gpu.product`` (sanitised NVML name, ``-SHARED``
  while time-sliced), ``nvidia.com/gpu.count`` and ``nvidia.com/gpu.replicas``;
- node-feature-discovery's PCI labels with its defaults: ``pci-0300_10de.present`` and
  ``pci-0302_10de.present`` (an NVIDIA VGA or 3D controller: a GPU function), and the
  vendor-wide ``pci-10de.present`` of ``deviceLabelFields: [vendor]`` (some NVIDIA
  display, co-processor or accelerator function).  Neither names the card.

What is known of the card (:attr:`NodeFacts.state`): ``supported`` (the report, or GFD
naming an allowlisted card), ``conflict`` (the report's cards cannot be provisioned
together), ``unsupported`` (only cards off the allowlist: plain display adapters here),
``none`` (no NVIDIA GPU, no sign of one) or ``unknown`` (a GPU is there, nothing names it).
"""

from __future__ import annotations

import re
from typing import Any

from ..constants import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    DEVICE_PLUGIN_DEFAULT_CONFIG,
    GFD_COUNT,
    GFD_PRODUCT,
    GFD_REPLICAS,
    GPU_LABEL,
    GPU_POOL_LABEL,
    GPU_PRESENCE_LABELS,
    GPU_RESOURCE,
    GPU_RESOURCE_SHARED,
    LABEL_TRUE,
    NFD_PCI_GPU_LABELS,
    NFD_PCI_VENDOR_LABEL,
)
from ..errors import ManifestError
from ..policy.nodes import config_name
from .labels import gfd_card, node_decision, node_summary
from .objects import dig, meta_str, parse_quantity

__all__ = ["NodeFacts"]

_COUNT = re.compile(r"[0-9]{1,6}")  # ASCII digits only: str.isdigit() also takes "²"


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


def _count(labels: dict, key: str) -> int | None:
    value = labels.get(key)
    return int(value) if isinstance(value, str) and _COUNT.fullmatch(value) else None


class NodeFacts:
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
        self.report = report
        self.compiled = compiled
        self.value = labels.get(GPU_LABEL)
        self.labeled = self.value == LABEL_TRUE
        # "True", "TRUE" or a YAML boolean: meant as true, but no selector for "true" matches it
        self.case_variant = not self.labeled and (
            self.value is True or (isinstance(self.value, str) and self.value.lower() == LABEL_TRUE))
        self.pool = GPU_POOL_LABEL in labels
        config = labels.get(DEVICE_PLUGIN_CONFIG_LABEL)
        self.config_label = config if isinstance(config, str) else None
        plain = [_quantity(obj, s, GPU_RESOURCE, source) for s in ("capacity", "allocatable")]
        shared = [_quantity(obj, s, GPU_RESOURCE_SHARED, source) for s in ("capacity", "allocatable")]
        self.renamed = plain == [None, None] and shared != [None, None]
        self.resource = GPU_RESOURCE_SHARED if self.renamed else GPU_RESOURCE
        self.capacity, self.allocatable = shared if self.renamed else plain
        self.advertised = bool(self.capacity or self.allocatable)
        product = labels.get(GFD_PRODUCT)
        self.product = product if isinstance(product, str) else None
        self.gfd = gfd_card(self.product, compiled)
        self.gfd_replicas = _count(labels, GFD_REPLICAS)
        self.nfd = [k for k in NFD_PCI_GPU_LABELS if labels.get(k) == LABEL_TRUE]
        self.nfd_vendor = labels.get(NFD_PCI_VENDOR_LABEL) == LABEL_TRUE
        self.per_card = self.gfd["slices"] if self.gfd else compiled.slices_per_card
        self.cards: int | None = None
        self.expected: int | None = None
        self.conflicts: list[str] = []
        # the config the node must select (None: the default), where its card is known
        self.wanted_config: str | None = None
        self.config_known = False
        if report is not None:
            self._from_report(report)
        else:
            self._from_labels(plain != [None, None] or shared != [None, None])

    def _from_report(self, report: Any) -> None:
        s = node_summary(report)
        decided = node_decision(report)
        self.conflicts = list(decided.conflicts)
        self.cards = s.supported_cards
        self.per_card = next((c.slices for c in getattr(report, "cards", []) or []), self.per_card)
        self.expected = s.slices
        if self.conflicts:
            self.state = "conflict"
        elif s.supported_cards:
            self.state = "supported"
            self.wanted_config, self.config_known = decided.config, True
        elif report.unsupported_gpus:
            self.state = "unsupported"
        else:
            self.state = "none"

    def _from_labels(self, resources: bool) -> None:
        if self.gfd is not None:
            self.state = "supported"
            slices = self.gfd["slices"]
            self.wanted_config = None if slices == self.compiled.slices_per_card else config_name(slices)
            self.config_known = True
        elif self.product is not None:
            self.state = "unsupported"  # GFD names a card the allowlist does not have
        elif (self.value is not None or resources or self.nfd or self.nfd_vendor
              or any(k in self.labels for k in GPU_PRESENCE_LABELS)):
            self.state = "unknown"
        else:
            self.state = "none"
        if self.state in ("supported", "unknown"):
            self.cards = _count(self.labels, GFD_COUNT)
            if self.cards is not None:
                self.expected = self.cards * self.per_card
        elif self.state == "unsupported":
            self.cards = self.expected = 0

    @property
    def gpu_meant(self) -> bool:
        """Whether the node should be (or may be) a GPU node of the platform."""
        return self.state == "supported" or (self.state == "unknown" and (self.labeled or self.case_variant))

    def policy_configs(self) -> set[str]:
        """The config keys the policy's ConfigMap has."""
        return {DEVICE_PLUGIN_DEFAULT_CONFIG} | {
            config_name(c["slices"]) for c in self.compiled.cards
            if c["slices"] != self.compiled.slices_per_card}

    def where(self) -> str:
        return self.name or "NODE"

    def odd(self) -> str:
        if self.value is None or self.labeled:
            return ""
        return f" (it is {self.value!r}, not \"{LABEL_TRUE}\")"

    def nfd_text(self) -> str | None:
        """What node-feature-discovery's labels say, or None."""
        if self.nfd:
            return ("node-feature-discovery reports an NVIDIA VGA or 3D controller ("
                    + ", ".join(self.nfd) + ")")
        if self.nfd_vendor:
            return ("node-feature-discovery reports an NVIDIA PCI device of a display, co-processor "
                    f"or accelerator class ({NFD_PCI_VENDOR_LABEL})")
        return None
