"""The provisioner's wrapper: inspect a machine, then plan what it needs.

The platform's provisioner runs once per machine in a rescue system.  It calls
:func:`inspect` on the machine (or on a mounted root) and gets a
:class:`HardwareReport`: the PCI functions that matter with their
classification, the supported and unsupported GPUs, and the CPU's
virtualization facts.  :func:`plan` turns a report into an
:class:`InstallPlan`, one :class:`Decision` per thing to install, each with the
reason a person can read in the provisioning log.

Both models are pydantic and round-trip through JSON, so a report taken in the
rescue system can be planned, or diagnosed, elsewhere.  The decisions themselves are
made on plain data by :mod:`gpuclass.planning` (what ``gpuclass plan`` prints without
importing pydantic); these functions validate its dicts into the models.

>>> report = HardwareReport.example("rtx-4000-sff-ada")
>>> p = plan(report)
>>> p.nvidia_driver.install, p.kernel_module.value, p.host_labels.labels
(True, {'flavour': 'open', 'accepted': ['open', 'proprietary']}, {'hardware': 'gpu'})
>>> p.device_plugin.value["resource"], p.device_plugin.value["replicas"]
('nvidia.com/gpu', 4)
>>> p.secure_runtime.install, p.secure_runtime.value
(True, {'runtime_class': 'secure'})
>>> HardwareReport.model_validate_json(report.model_dump_json()) == report
True
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .constants import GPU_CLASSES, GPU_LABEL, GPU_RESOURCE
from .models import DeviceClassification, GpuCard, NodeGpuSummary, TimeSlicing
from .policy.nodes import NodeDecision, decide_node

if TYPE_CHECKING:
    from .policy import PolicyArg
    from .records import DeviceNames

__all__ = ["CpuReport", "HardwareReport", "Decision", "InstallPlan", "inspect", "plan"]

_MODEL = ConfigDict(frozen=True, extra="forbid")


class CpuReport(BaseModel):
    """The CPU facts the secure runtime depends on (see :mod:`gpuclass.sources.cpu`)."""

    model_config = _MODEL
    vendor: str | None = None
    model_name: str | None = None
    logical_cpus: int = 0
    vmx: bool = False
    svm: bool = False
    hypervisor: bool = False
    kvm_device: bool | None = Field(None, description="/dev/kvm exists (None: not checked)")
    hardware_virtualization: bool = Field(
        False, description="vmx or svm on bare metal (no hypervisor flag)")
    reason: str = ""

    @classmethod
    def from_facts(cls, facts: Any) -> CpuReport:
        """From a :class:`gpuclass.sources.cpu.CpuFacts`."""
        from .planning import cpu_data

        return cls(**cpu_data(facts))


class HardwareReport(BaseModel):
    """What :func:`inspect` found on one machine.

    ``devices`` holds every PCI function that is not plainly "not a GPU":
    supported and unsupported GPUs, their companion functions, virtual
    functions and unreadable records.  ``cards`` are the supported card models
    present (with their kernel module flavour), ``summary`` the node rollup
    (cards, slices, label).  ``cpu`` is ``None`` when the CPU could not be read.
    """

    model_config = _MODEL
    root: str
    source: str = Field(description="where the PCI devices were read")
    pci_devices: int = Field(description="PCI functions scanned, all classes")
    devices: list[DeviceClassification] = Field(default_factory=list)
    supported_gpus: list[DeviceClassification] = Field(default_factory=list)
    unsupported_gpus: list[DeviceClassification] = Field(default_factory=list)
    cards: list[GpuCard] = Field(default_factory=list, description="supported card models present")
    summary: NodeGpuSummary
    time_slicing: TimeSlicing = Field(default_factory=TimeSlicing,
                                      description="the device plugin settings of the policy used")
    cpu: CpuReport | None = None
    warnings: list[str] = Field(default_factory=list)

    @property
    def supported_cards(self) -> int:
        return self.summary.supported_cards

    def node_decision(self) -> NodeDecision:
        """The node decision of these cards (:func:`gpuclass.policy.nodes.decide_node`): the
        node's labels, its kernel-module flavour and config, or the conflict."""
        return decide_node(self.cards, self.time_slicing.replicas)

    @property
    def slices(self) -> int:
        return self.summary.slices

    @classmethod
    def example(cls, card: str | list[str] | None = "rtx-4000-sff-ada", count: int = 1, *,
                cpu: Literal["intel", "amd", "vm", "nested"] = "intel", policy: PolicyArg = None) -> HardwareReport:
        """A small synthetic report: ``count`` cards of one allowlisted model (or of each of
        several), or none; classified against ``policy`` (default: the platform's).

        For examples and tests; real reports come from :func:`inspect`.

        >>> HardwareReport.example(None, cpu="vm").summary.gpu_node
        False
        >>> HardwareReport.example(["gtx-1080", "rtx-6000-ada"]).summary.cards
        {'gtx-1080': 1, 'rtx-6000-ada': 1}
        """
        import numpy as np

        from .classify import classify, compile_policy
        from .sources.cpu import parse_cpuinfo

        compiled = compile_policy(policy)
        rules = {c["id"]: c["match"][0] for c in compiled.cards}
        wanted = [] if card is None else [card] if isinstance(card, str) else list(card)
        keys = [rules[c] for c in wanted for _ in range(count)]
        n = len(keys)
        col = [np.array([k[i] or 0 for k in keys], np.uint16) for i in range(4)]
        r = classify(col[0], col[1], col[2], col[3], np.full(n, GPU_CLASSES[0] << 8, np.uint32),
                     has_subsystem=np.array([k[2] is not None for k in keys], bool),
                     domain=np.zeros(n, np.uint32), bus=np.arange(1, n + 1, dtype=np.uint8),
                     slot=np.zeros(n, np.uint8), function=np.zeros(n, np.uint8), policy=compiled)
        flags = {"intel": "vmx", "amd": "svm", "vm": "hypervisor", "nested": "vmx hypervisor"}[cpu]
        facts = parse_cpuinfo(f"processor\t: 0\nflags\t\t: fpu {flags}\n")._replace(kvm_device=True)
        return _result_report("example", "example", n, r, CpuReport.from_facts(facts), [])


def _result_report(root: str, source: str, n_devices: int, result: Any, cpu: CpuReport | None,
                   warnings: list[str], db: Any = None) -> HardwareReport:
    """The report of a ClassificationResult (bare arrays: :meth:`HardwareReport.example`)."""
    from .constants import NOT_GPU
    from .planning import report_data

    status = result.status.tolist()
    keep = [i for i, s in enumerate(status) if s != NOT_GPU]
    devices = [d.model_dump(mode="json") for d in result.devices(db, keep)] if keep else []
    summary = result.summary().node(0, name=root).model_dump(mode="json")
    return HardwareReport.model_validate(report_data(
        root, source, n_devices, result.compiled, status, result.card.tolist(), devices, summary,
        None if cpu is None else cpu.model_dump(mode="json"), warnings))


def inspect(root: str | os.PathLike[str] = "/", *, policy: PolicyArg = None,
            db: DeviceNames | str | os.PathLike[str] | None = None,
            names: bool = True) -> HardwareReport:
    """Scan the machine at ``root``: its PCI devices (``sys/bus/pci/devices``) and
    CPU (``proc/cpuinfo``, ``dev/kvm``), classified against ``policy``.

    Every file is read inside ``root`` (nothing outside it is opened, a link out of
    it is never followed) and must be a regular file (``dev/kvm``: the device); a
    FIFO, device node or symlink where a file belongs is a flagged device or a
    warning, never read.

    Devices are named from ``db`` (a PciDatabase or a pci.ids path; default: the
    default database); a missing or broken database raises
    :class:`~gpuclass.errors.PciIdsError`, as every command does, unless
    ``names=False`` (no names, no database read).  A missing PCI tree raises
    :class:`~gpuclass.errors.SourceError`; a missing ``proc/cpuinfo`` (a mounted
    disk rather than a live system) leaves ``cpu`` unset with a warning, and
    :func:`plan` then leaves the secure runtime out.

    The report is :func:`gpuclass.planning.inspect_data`'s, validated.

    >>> import tempfile
    >>> inspect(tempfile.mkdtemp())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gpuclass.errors.SourceError: .../sys/bus/pci/devices: ...
    """
    from .planning import inspect_data

    return HardwareReport.model_validate(inspect_data(root, policy=policy, db=db, names=names))


# -- the plan ---------------------------------------------------------------------


class Decision(BaseModel):
    """One thing the machine gets or does not get, and why.

    ``value`` carries the choice as data where there is one (``{"flavour": "open"}``,
    ``{"resource": "nvidia.com/gpu", "replicas": 4, ...}``, ``{"runtime_class":
    "secure"}``); ``labels`` the labels to set; ``conflict`` marks a decision the
    hardware makes impossible to take automatically.
    """

    model_config = _MODEL
    name: str
    install: bool
    value: dict[str, Any] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    conflict: bool = False
    reason: str


class InstallPlan(BaseModel):
    """What a machine needs, decision by decision (see :func:`plan`)."""

    model_config = _MODEL
    root: str
    gpu_node: bool
    cards: dict[str, int] = Field(default_factory=dict, description="supported cards by card id")
    slices: int = Field(0, description=f"{GPU_RESOURCE} the node must advertise")
    nvidia_driver: Decision
    kernel_module: Decision
    device_plugin: Decision
    secure_runtime: Decision
    host_labels: Decision
    node_labels: dict[str, str] = Field(
        default_factory=dict, description=f"what the controller sets on the Node ({GPU_LABEL})")
    conflicts: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No conflict: every decision can be carried out as planned."""
        return not self.conflicts

    def decisions(self) -> list[Decision]:
        return [self.nvidia_driver, self.kernel_module, self.device_plugin, self.secure_runtime,
                self.host_labels]


def plan(report: HardwareReport) -> InstallPlan:
    """Decide what the machine of ``report`` needs.

    - NVIDIA driver and device plugin: only with at least one supported card.
    - Kernel module flavour, by NVIDIA's support matrix: Blackwell needs the open
      modules, Pascal the proprietary ones, Turing and later (Ada included) work
      with either (the policy's ``kernel_module`` is then the choice).  Pascal next to
      Ada is one proprietary install; Pascal next to Blackwell is a conflict.
    - Device plugin: time-slicing with the policy's replicas and
      ``failRequestsGreaterThanOne`` (the report carries them); cards that take
      different slices per card on one node are a conflict.
    - Under a conflict nothing GPU-related installs and the node gets no labels.
    - Secure runtime (``runtimeClassName: secure``): only with vmx or svm,
      ``/dev/kvm``, and no hypervisor flag.
    - Host labels ``hardware: gpu`` on the bare-metal host object: only with a
      supported card (and no conflict), which puts the machine in the GPU pool.

    >>> p = plan(HardwareReport.example(None, cpu="nested"))
    >>> p.gpu_node, p.nvidia_driver.install, p.secure_runtime.install
    (False, False, False)
    >>> p.secure_runtime.reason
    'no hardware virtualization: vmx is exposed by a hypervisor (/dev/kvm is nested or paravirtualized KVM)'
    """
    if not isinstance(report, HardwareReport):
        from .errors import InputError

        raise InputError(f"plan: expected a HardwareReport, got {type(report).__name__}")
    from .planning import plan_data

    return InstallPlan.model_validate(plan_data(report.model_dump(mode="json")))
