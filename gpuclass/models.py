"""Pydantic result models for the wrappers (provisioner, controller, CLI JSON).

Batch users keep the arrays of :class:`gpuclass.classify.ClassificationResult`;
these models are built only at the edges, from a handful of devices or nodes.

>>> m = NodeGpuSummary(node="worker-1", gpu_node=True, supported_cards=1, slices=4,
...                    cards={"rtx-4000-sff-ada": 1})
>>> m.labels
{}
>>> sorted(json_schemas())
['DeviceClassification', 'GpuCard', 'NodeGpuSummary']
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .constants import GPU_LABEL, GPU_RESOURCE, SLICES_PER_CARD

__all__ = ["GpuCard", "NearMiss", "DeviceClassification", "NodeGpuSummary", "TimeSlicing",
           "json_schemas", "Status"]

# the names of constants.STATUS_NAMES (a test holds them equal)
Status = Literal["not-gpu", "supported", "unsupported", "companion", "virtual-function", "invalid"]
_FROZEN = ConfigDict(frozen=True, extra="forbid")


class GpuCard(BaseModel):
    """A supported card model of the policy."""

    model_config = _FROZEN
    id: str
    name: str
    family: str
    kernel_module: Literal["proprietary", "open"]
    slices: int = Field(description="slices one physical card exposes (time-slicing replicas)")
    device_ids: list[str] = Field(description="vendor:device[:subvendor:subdevice] rules, hex")


class NearMiss(BaseModel):
    """An unsupported GPU whose name is close to an allowlisted card."""

    model_config = _FROZEN
    card: str
    card_name: str
    reason: str


class DeviceClassification(BaseModel):
    """One PCI function and what the policy makes of it.

    The device fields are the shared record of :mod:`gpuclass.records` (``slot``,
    ``class``, ``vendor``, ``device``, ``svendor``, ``sdevice``, ``rev``, ``progif``,
    ``driver``, each name in its ``*_name`` field); JSON carries ``class`` under that
    name (the attribute is ``class_``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True,
                              serialize_by_alias=True)
    index: int
    slot: str | None = None
    class_: str = Field(alias="class", description="PCI class and subclass, 4 hex digits")
    class_name: str | None = None
    progif: str | None = None
    vendor: str
    vendor_name: str | None = None
    device: str
    device_name: str | None = None
    svendor: str | None = None
    svendor_name: str | None = None
    sdevice: str | None = None
    sdevice_name: str | None = Field(None, description="the subsystem's name, as lspci -vmm prints it")
    rev: str | None = None
    driver: str | None = None
    status: Status
    card: str | None = None
    card_name: str | None = None
    slices: int = 0
    near_miss: NearMiss | None = None
    note: str | None = None

    @property
    def name(self) -> str | None:
        """The most specific pci.ids name: the subsystem's, else the device's."""
        return self.sdevice_name or self.device_name


class TimeSlicing(BaseModel):
    """The device plugin's time-slicing settings of the policy a report was classified with."""

    model_config = _FROZEN
    replicas: int = Field(SLICES_PER_CARD, ge=2,
                          description="slices per card by default (the policy's slices_per_card)")
    fail_requests_greater_than_one: bool = True


class NodeGpuSummary(BaseModel):
    """One node's (or server's) GPUs: supported cards, slices, and what else is there."""

    model_config = _FROZEN
    node: str | int
    gpu_node: bool
    labels: dict[str, str] = Field(
        default_factory=dict,
        description=f"{GPU_LABEL}=true only on a node with a supported card and no conflict "
                    "(gpuclass.policy.nodes.decide_node)")
    conflicts: list[str] = Field(
        default_factory=list,
        description="why the cards cannot be provisioned together (kernel-module flavours, "
                    "slices per card): no label then")
    cards: dict[str, int] = Field(default_factory=dict, description="supported cards by card id")
    supported_cards: int = 0
    slices: int = Field(0, description=f"{GPU_RESOURCE} to advertise, under Capacity and Allocatable")
    resource: str = GPU_RESOURCE
    unsupported_gpus: int = 0
    companions: int = 0
    virtual_functions: int = 0
    invalid: int = 0
    mixed: bool = False
    warnings: list[str] = Field(default_factory=list)


def json_schemas() -> dict[str, dict]:
    """JSON schema of each result model, by model name."""
    return {m.__name__: m.model_json_schema() for m in (GpuCard, DeviceClassification, NodeGpuSummary)}
