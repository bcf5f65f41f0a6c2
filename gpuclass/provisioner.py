"""The provisioner's wrapper: inspect a machine, then plan what it needs.

The platform's provisioner runs once per machine in a rescue system.  It calls
:func:`inspect` on the machine (or on a mounted root) and gets a
:class:`HardwareReport`: the PCI functions that matter with their
classification, the supported and unsupported GPUs, and the CPU's
virtualization facts.  :func:`plan` turns a report into an
:class:`InstallPlan`, one :class:`Decision` per thing to install, each with the
reason a person can read in the provisioning log.

Both models are pydantic and round-trip through JSON, so a report taken in the
rescue system can be planned, or diagnosed, elsewhere.

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
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .constants import (
    DEVICE_PLUGIN_DEFAULT_CONFIG,
    GPU_CLASSES,
    GPU_LABEL,
    GPU_RESOURCE,
    HOST_LABELS,
    RUNTIME_CLASS,
    accepted_kernel_modules,
)
from .errors import SourceError
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
        d = facts.to_dict()
        return cls(vendor=d["vendor"], model_name=d["model_name"], logical_cpus=d["logical_cpus"],
                   vmx=d["vmx"], svm=d["svm"], hypervisor=d["hypervisor"],
                   kvm_device=d["kvm_device"],
                   hardware_virtualization=d["hardware_virtualization"], reason=d["reason"])


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
        facts = replace(parse_cpuinfo(f"processor\t: 0\nflags\t\t: fpu {flags}\n"), kvm_device=True)
        return _result_report("example", "example", n, r, CpuReport.from_facts(facts), [])


def _report(root: str, source: str, n_devices: int, compiled: Any, status: list[int], card: list[int],
            devices: list[DeviceClassification], summary: NodeGpuSummary, cpu: CpuReport | None,
            warnings: list[str]) -> HardwareReport:
    """The report of a classified machine: ``devices`` are those of a status other than
    NOT_GPU, in order."""
    from .constants import NOT_GPU, SUPPORTED, UNSUPPORTED

    kept = [s for s in status if s != NOT_GPU]
    used = sorted({c for s, c in zip(status, card) if s == SUPPORTED})
    return HardwareReport(
        root=root, source=source, pci_devices=n_devices, devices=devices,
        supported_gpus=[d for d, s in zip(devices, kept) if s == SUPPORTED],
        unsupported_gpus=[d for d, s in zip(devices, kept) if s == UNSUPPORTED],
        cards=[compiled.gpu_card(c) for c in used], summary=summary,
        time_slicing=TimeSlicing(replicas=compiled.slices_per_card,
                                 fail_requests_greater_than_one=compiled.fail_requests_greater_than_one),
        cpu=cpu, warnings=[*summary.warnings, *warnings])


def _result_report(root: str, source: str, n_devices: int, result: Any, cpu: CpuReport | None,
                   warnings: list[str], db: Any = None) -> HardwareReport:
    """:func:`_report` of a ClassificationResult (bare arrays: :meth:`HardwareReport.example`)."""
    from .constants import NOT_GPU

    status = result.status.tolist()
    keep = [i for i, s in enumerate(status) if s != NOT_GPU]
    devices = result.devices(db, keep) if keep else []
    return _report(root, source, n_devices, result.compiled, status, result.card.tolist(), devices,
                   result.summary().node(0, name=root), cpu, warnings)


def _scan_devices(scan: Any) -> list[DeviceClassification]:
    """A machine scan's devices (other than NOT_GPU) as models: each record's shared fields
    and its verdict, as :meth:`ClassificationResult.devices` makes them."""
    from .constants import NOT_GPU
    from .models import NearMiss
    from .records import DEVICE_FIELDS

    verdict_fields = ("status", "card", "card_name", "slices", "note")
    out = []
    for i, (st, rec) in enumerate(zip(scan.status, scan.records)):
        if st != NOT_GPU:
            miss = rec["near_miss"]
            out.append(DeviceClassification(index=i, **{k: rec[k] for k in DEVICE_FIELDS},
                                            **{k: rec[k] for k in verdict_fields},
                                            near_miss=NearMiss(**miss) if miss else None))
    return out


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

    >>> import tempfile
    >>> inspect(tempfile.mkdtemp())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gpuclass.errors.SourceError: .../sys/bus/pci/devices: ...
    """
    from .machine import scan_machine
    from .sources.cpu import cpu_facts

    root_s = os.fspath(root)
    scan = scan_machine(root_s, policy=policy, db=db, names=names)
    warnings = []
    try:
        facts = cpu_facts(root_s)
    except SourceError as exc:
        cpu = None
        warnings.append(f"CPU facts unavailable ({exc}); the secure runtime is left out")
    else:
        cpu = CpuReport.from_facts(facts)
        warnings += list(facts.problems)
    summary = NodeGpuSummary(**{**scan.summary, "node": root_s})
    return _report(root_s, scan.source, scan.count, scan.compiled, scan.status, scan.card,
                   _scan_devices(scan), summary, cpu, warnings)


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


def _card_list(cards: list[GpuCard], counts: dict[str, int]) -> str:
    return ", ".join(f"{counts.get(c.id, 0)}x {c.name} ({c.family})" for c in cards)


def _family(name: str) -> str:
    return name.replace("-", " ").title()


def _kernel_module(report: HardwareReport, decided: NodeDecision) -> Decision:
    """The flavour every card present accepts (NVIDIA's matrix: Blackwell open only, Pascal
    proprietary only, Turing to Hopper either), the policy's preference where both fit:
    the node decision's, explained."""
    cards = report.cards
    counts = report.summary.cards
    if not cards:
        return Decision(name="kernel-module", install=False,
                        reason="no supported card: no NVIDIA kernel module")
    if decided.kernel_conflict is not None:
        return Decision(name="kernel-module", install=False, conflict=True,
                        reason=decided.kernel_conflict)
    flavour = decided.kernel_module
    accepted = {c.id: accepted_kernel_modules(c.family, c.kernel_module) for c in cards}
    only = sorted({_family(c.family) for c in cards if accepted[c.id] == (flavour,)})
    either = sorted({_family(c.family) for c in cards if len(accepted[c.id]) > 1})
    why = []
    if only:
        why.append(f"{' and '.join(only)} {'need' if len(only) > 1 else 'needs'} the {flavour} modules")
    if either:
        why.append(f"{' and '.join(either)} {'work' if len(either) > 1 else 'works'} with either"
                   + ("" if only else f" (the {flavour} modules are the policy's choice)"))
    return Decision(name="kernel-module", install=True,
                    value={"flavour": flavour, "accepted": list(decided.accepted)},
                    reason=f"{flavour} modules for {_card_list(cards, counts)}: " + "; ".join(why))


def _device_plugin(report: HardwareReport, decided: NodeDecision) -> Decision:
    """Time-slicing with the policy's settings; one replicas value per node."""
    s, sharing = report.summary, report.time_slicing
    if decided.slices_conflict is not None:
        return Decision(name="device-plugin", install=False, conflict=True,
                        reason=decided.slices_conflict)
    replicas = decided.replicas
    fail = sharing.fail_requests_greater_than_one
    return Decision(
        name="device-plugin", install=True,
        value={"resource": GPU_RESOURCE, "replicas": replicas, "slices": s.slices,
               "fail_requests_greater_than_one": fail, "rename_by_default": False,
               "config": decided.config or DEVICE_PLUGIN_DEFAULT_CONFIG},
        reason=f"{s.supported_cards} supported card(s) x {replicas} replicas give {s.slices} "
               f"{GPU_RESOURCE} by time-slicing, under Capacity and Allocatable; "
               + ("a request above 1 per container fails" if fail else
                  "requests above 1 are allowed (failRequestsGreaterThanOne: false)"))


def _secure_runtime(report: HardwareReport) -> Decision:
    cpu = report.cpu
    if cpu is None:
        return Decision(name="secure-runtime", install=False,
                        reason="CPU facts unavailable: cannot show hardware virtualization")
    if not cpu.hardware_virtualization:
        return Decision(name="secure-runtime", install=False, reason=cpu.reason)
    if not cpu.kvm_device:
        return Decision(name="secure-runtime", install=False,
                        reason=cpu.reason + "; the runtime needs /dev/kvm (load kvm_intel or "
                                            "kvm_amd, and check virtualization is on in firmware)")
    ext = "vmx" if cpu.vmx else "svm"
    return Decision(name="secure-runtime", install=True, value={"runtime_class": RUNTIME_CLASS},
                    reason=f"{ext} on bare metal and /dev/kvm present: pods may use "
                           f"runtimeClassName: {RUNTIME_CLASS}")


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
    s = report.summary
    gpu = s.supported_cards > 0
    decided = report.node_decision()
    kmod = _kernel_module(report, decided)
    unsupported = [d.name or f"{d.vendor}:{d.device}" for d in report.unsupported_gpus]
    if not gpu:
        why = ("no supported card" + (f" (unsupported: {'; '.join(unsupported)})" if unsupported
                                      else ": no NVIDIA GPU found"))
        driver = Decision(name="nvidia-driver", install=False, reason=why)
        plugin = Decision(name="device-plugin", install=False, reason=why)
    else:
        plugin = _device_plugin(report, decided)
        driver = Decision(name="nvidia-driver", install=True, value={"kernel_module": kmod.value.get("flavour")},
                          reason=f"supported card(s): {_card_list(report.cards, s.cards)}")
    blocking = [d for d in (kmod, plugin) if d.conflict]
    conflicts = list(decided.conflicts)  # the reasons of the blocking decisions, in order
    if blocking:
        why = "blocked by the " + " and ".join(d.name for d in blocking) + " conflict"
        driver = Decision(name="nvidia-driver", install=False, conflict=True, reason=why)
        if not plugin.conflict:
            plugin = Decision(name="device-plugin", install=False, conflict=True, reason=why)
        if not kmod.conflict:
            kmod = Decision(name="kernel-module", install=False, conflict=True, reason=why)
        hostl = Decision(name="host-labels", install=False, conflict=True,
                         reason=why + ": the machine stays out of the GPU pool until resolved")
    elif gpu:
        hostl = Decision(name="host-labels", install=True, labels=dict(HOST_LABELS),
                         reason="a supported card: the bare-metal host joins the GPU pool")
    else:
        hostl = Decision(name="host-labels", install=False,
                         reason=driver.reason + ": the machine stays out of the GPU pool")
    return InstallPlan(
        root=report.root, gpu_node=gpu and not conflicts, cards=dict(s.cards),
        slices=s.slices if not conflicts else 0, nvidia_driver=driver, kernel_module=kmod,
        device_plugin=plugin, secure_runtime=_secure_runtime(report), host_labels=hostl,
        node_labels=decided.labels, conflicts=conflicts,
        warnings=list(report.warnings))
