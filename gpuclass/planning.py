"""The provisioner's rules on plain data: a machine's hardware report and its install plan
as JSON-shaped dicts, without pydantic.

:func:`inspect_data` reads and classifies a machine (:func:`gpuclass.machine.scan_machine`
and its CPU facts) into a report, :func:`plan_data` decides what it needs.  This is where
the provisioner's decisions are made: :func:`gpuclass.provisioner.inspect` and
:func:`gpuclass.provisioner.plan` validate these dicts into their pydantic models, and
``gpuclass plan`` and ``gpuclass labels`` print them as they are, so a boot's ``plan``
does not pay pydantic's import and model building (about 150 ms of a 200 ms process).
``tests/test_planning.py`` holds each model's JSON dump of the model made from these dicts
equal to the dicts, keys and their order included, so the two doors give one answer.

A report's fields are those of :class:`~gpuclass.provisioner.HardwareReport` in its JSON
shape (devices in the record shape of :mod:`gpuclass.records`, ``class`` under that
name), a plan's those of :class:`~gpuclass.provisioner.InstallPlan`.

>>> from gpuclass.provisioner import HardwareReport
>>> report = HardwareReport.example("gtx-1080").model_dump(mode="json")
>>> p = plan_data(report)
>>> p["kernel_module"]["value"], p["node_labels"], p["slices"]
({'flavour': 'proprietary', 'accepted': ['proprietary']}, {'autopilot.syself.com/gpu': 'true'}, 4)
>>> expected_resources_of(p["slices"])["capacity"]
{'nvidia.com/gpu': '4'}
"""

from __future__ import annotations

import os

from .constants import (
    DEVICE_PLUGIN_DEFAULT_CONFIG,
    GPU_RESOURCE,
    HOST_LABELS,
    RUNTIME_CLASS,
    accepted_kernel_modules,
)
from .errors import SourceError
from .policy.nodes import decide_node, family_title

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .k8s.types import ExpectedResources
    from .policy import PolicyArg
    from .records import DeviceNames

__all__ = ["inspect_data", "report_data", "plan_data", "is_plan_data", "cpu_data", "device_data",
           "expected_resources_of", "CPU_FIELDS", "DEVICE_VERDICT_FIELDS", "NEAR_MISS_FIELDS",
           "SUMMARY_FIELDS"]

# The fields of each model, in its order (tests/test_planning.py holds them equal)
CPU_FIELDS = ("vendor", "model_name", "logical_cpus", "vmx", "svm", "hypervisor", "kvm_device",
              "hardware_virtualization", "reason")
DEVICE_VERDICT_FIELDS = ("status", "card", "card_name", "slices", "near_miss", "note")
NEAR_MISS_FIELDS = ("card", "card_name", "reason")
SUMMARY_FIELDS = ("node", "gpu_node", "labels", "conflicts", "cards", "supported_cards", "slices",
                  "resource", "unsupported_gpus", "companions", "virtual_functions", "invalid",
                  "mixed", "warnings")


# -- the report ---------------------------------------------------------------------


def cpu_data(facts: Any) -> dict[str, Any]:
    """A :class:`gpuclass.sources.cpu.CpuFacts` as a report's ``cpu``."""
    d = facts.to_dict()
    return {k: d[k] for k in CPU_FIELDS}


def device_data(index: int, record: dict[str, Any], verdict: dict[str, Any]) -> dict[str, Any]:
    """One device of a report (:class:`~gpuclass.models.DeviceClassification`): its shared
    record (:data:`gpuclass.records.DEVICE_FIELDS`) and its verdict."""
    from .records import DEVICE_FIELDS

    out: dict[str, Any] = {"index": index}
    out.update((k, record[k]) for k in DEVICE_FIELDS)
    out.update((k, verdict[k]) for k in DEVICE_VERDICT_FIELDS)
    miss = verdict["near_miss"]
    out["near_miss"] = {k: miss[k] for k in NEAR_MISS_FIELDS} if miss else None
    return out


def _copy(device: dict[str, Any]) -> dict[str, Any]:
    """A device's dict of its own (as a model's dump gives each list): YAML writes a dict met
    twice as an anchor and an alias, and a caller may change one."""
    miss = device["near_miss"]
    return {**device, "near_miss": None if miss is None else dict(miss)}


def report_data(root: str, source: str, n_devices: int, compiled: Any, status: list[int],
                card: list[int], devices: list[dict[str, Any]], summary: dict[str, Any],
                cpu: dict[str, Any] | None, warnings: list[str]) -> dict[str, Any]:
    """The report of a classified machine: ``devices`` (:func:`device_data`) are those of a
    status other than NOT_GPU, in order; ``summary`` the node's (:data:`SUMMARY_FIELDS`)."""
    from .constants import NOT_GPU, SUPPORTED, UNSUPPORTED

    kept = [s for s in status if s != NOT_GPU]
    used = sorted({c for s, c in zip(status, card) if s == SUPPORTED})
    return {
        "root": root, "source": source, "pci_devices": n_devices, "devices": devices,
        "supported_gpus": [_copy(d) for d, s in zip(devices, kept) if s == SUPPORTED],
        "unsupported_gpus": [_copy(d) for d, s in zip(devices, kept) if s == UNSUPPORTED],
        "cards": [compiled.card_data(c) for c in used],
        "summary": {k: summary[k] for k in SUMMARY_FIELDS},
        "time_slicing": {"replicas": compiled.slices_per_card,
                         "fail_requests_greater_than_one": compiled.fail_requests_greater_than_one},
        "cpu": cpu, "warnings": [*summary["warnings"], *warnings]}


def inspect_data(root: str | os.PathLike[str] = "/", *, policy: PolicyArg = None,
                 db: DeviceNames | str | os.PathLike[str] | None = None,
                 names: bool = True) -> dict[str, Any]:
    """:func:`gpuclass.provisioner.inspect`'s report as plain data (see there)."""
    from .constants import NOT_GPU
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
        cpu = cpu_data(facts)
        warnings += list(facts.problems)
    devices = [device_data(i, rec, rec) for i, (st, rec) in enumerate(zip(scan.status, scan.records))
               if st != NOT_GPU]
    return report_data(root_s, scan.source, scan.count, scan.compiled, scan.status, scan.card,
                       devices, {**scan.summary, "node": root_s}, cpu, warnings)


# -- the plan -----------------------------------------------------------------------


def _decision(name: str, install: bool, reason: str, *, value: dict[str, Any] | None = None,
              labels: dict[str, str] | None = None, conflict: bool = False) -> dict[str, Any]:
    return {"name": name, "install": install, "value": value or {}, "labels": labels or {},
            "conflict": conflict, "reason": reason}


def _card_list(cards: list[dict[str, Any]], counts: dict[str, int]) -> str:
    return ", ".join(f"{counts.get(c['id'], 0)}x {c['name']} ({c['family']})" for c in cards)


def _kernel_module(report: dict[str, Any], decided: Any) -> dict[str, Any]:
    """The flavour every card present accepts (NVIDIA's matrix: Blackwell open only, Pascal
    proprietary only, Turing to Hopper either), the policy's preference where both fit:
    the node decision's, explained."""
    cards = report["cards"]
    counts = report["summary"]["cards"]
    if not cards:
        return _decision("kernel-module", False, "no supported card: no NVIDIA kernel module")
    if decided.kernel_conflict is not None:
        return _decision("kernel-module", False, decided.kernel_conflict, conflict=True)
    flavour = decided.kernel_module
    accepted = {c["id"]: accepted_kernel_modules(c["family"], c["kernel_module"]) for c in cards}
    only = sorted({family_title(c["family"]) for c in cards if accepted[c["id"]] == (flavour,)})
    either = sorted({family_title(c["family"]) for c in cards if len(accepted[c["id"]]) > 1})
    why = []
    if only:
        why.append(f"{' and '.join(only)} {'need' if len(only) > 1 else 'needs'} the {flavour} modules")
    if either:
        why.append(f"{' and '.join(either)} {'work' if len(either) > 1 else 'works'} with either"
                   + ("" if only else f" (the {flavour} modules are the policy's choice)"))
    return _decision("kernel-module", True,
                     f"{flavour} modules for {_card_list(cards, counts)}: " + "; ".join(why),
                     value={"flavour": flavour, "accepted": list(decided.accepted)})


def _device_plugin(report: dict[str, Any], decided: Any) -> dict[str, Any]:
    """Time-slicing with the policy's settings; one replicas value per node."""
    s = report["summary"]
    if decided.slices_conflict is not None:
        return _decision("device-plugin", False, decided.slices_conflict, conflict=True)
    replicas = decided.replicas
    fail = report["time_slicing"]["fail_requests_greater_than_one"]
    return _decision(
        "device-plugin", True,
        f"{s['supported_cards']} supported card(s) x {replicas} replicas give {s['slices']} "
        f"{GPU_RESOURCE} by time-slicing, under Capacity and Allocatable; "
        + ("a request above 1 per container fails" if fail else
           "requests above 1 are allowed (failRequestsGreaterThanOne: false)"),
        value={"resource": GPU_RESOURCE, "replicas": replicas, "slices": s["slices"],
               "fail_requests_greater_than_one": fail, "rename_by_default": False,
               "config": decided.config or DEVICE_PLUGIN_DEFAULT_CONFIG})


def _secure_runtime(report: dict[str, Any]) -> dict[str, Any]:
    cpu = report["cpu"]
    if cpu is None:
        return _decision("secure-runtime", False,
                         "CPU facts unavailable: cannot show hardware virtualization")
    if not cpu["hardware_virtualization"]:
        return _decision("secure-runtime", False, cpu["reason"])
    if not cpu["kvm_device"]:
        return _decision("secure-runtime", False,
                         cpu["reason"] + "; the runtime needs /dev/kvm (load kvm_intel or "
                                         "kvm_amd, and check virtualization is on in firmware)")
    ext = "vmx" if cpu["vmx"] else "svm"
    return _decision("secure-runtime", True,
                     f"{ext} on bare metal and /dev/kvm present: pods may use "
                     f"runtimeClassName: {RUNTIME_CLASS}", value={"runtime_class": RUNTIME_CLASS})


def _device_name(d: dict[str, Any]) -> str:
    """How a report names a device: its most specific pci.ids name, else its IDs."""
    return d["sdevice_name"] or d["device_name"] or f"{d['vendor']}:{d['device']}"


def plan_data(report: dict[str, Any]) -> dict[str, Any]:
    """:func:`gpuclass.provisioner.plan` of a report in its JSON shape, as plain data (the
    rules are in that function's docstring)."""
    s = report["summary"]
    gpu = s["supported_cards"] > 0
    decided = decide_node(report["cards"], report["time_slicing"]["replicas"])
    kmod = _kernel_module(report, decided)
    unsupported = [_device_name(d) for d in report["unsupported_gpus"]]
    if not gpu:
        why = ("no supported card" + (f" (unsupported: {'; '.join(unsupported)})" if unsupported
                                      else ": no NVIDIA GPU found"))
        driver = _decision("nvidia-driver", False, why)
        plugin = _decision("device-plugin", False, why)
    else:
        plugin = _device_plugin(report, decided)
        driver = _decision("nvidia-driver", True,
                           f"supported card(s): {_card_list(report['cards'], s['cards'])}",
                           value={"kernel_module": kmod["value"].get("flavour")})
    blocking = [d for d in (kmod, plugin) if d["conflict"]]
    conflicts = list(decided.conflicts)  # the reasons of the blocking decisions, in order
    if blocking:
        why = "blocked by the " + " and ".join(d["name"] for d in blocking) + " conflict"
        driver = _decision("nvidia-driver", False, why, conflict=True)
        if not plugin["conflict"]:
            plugin = _decision("device-plugin", False, why, conflict=True)
        if not kmod["conflict"]:
            kmod = _decision("kernel-module", False, why, conflict=True)
        hostl = _decision("host-labels", False,
                          why + ": the machine stays out of the GPU pool until resolved",
                          conflict=True)
    elif gpu:
        hostl = _decision("host-labels", True,
                          "a supported card: the bare-metal host joins the GPU pool",
                          labels=dict(HOST_LABELS))
    else:
        hostl = _decision("host-labels", False,
                          driver["reason"] + ": the machine stays out of the GPU pool")
    return {
        "root": report["root"], "gpu_node": gpu and not conflicts, "cards": dict(s["cards"]),
        "slices": s["slices"] if not conflicts else 0, "nvidia_driver": driver,
        "kernel_module": kmod, "device_plugin": plugin, "secure_runtime": _secure_runtime(report),
        "host_labels": hostl, "node_labels": dict(decided.labels), "conflicts": conflicts,
        "warnings": list(report["warnings"])}


def is_plan_data(value: Any) -> bool:
    """Whether ``value`` is an install plan as plain data (:func:`plan_data`; the ``plan`` of
    ``gpuclass plan -o json``) as far as the node's labels go: its ``node_labels``,
    ``conflicts`` and ``host_labels`` of the right types."""
    return (isinstance(value, dict) and isinstance(value.get("node_labels"), dict)
            and isinstance(value.get("conflicts"), list)
            and isinstance(value.get("host_labels"), dict)
            and isinstance(value["host_labels"].get("labels"), dict))


def expected_resources_of(gpus: int) -> ExpectedResources:
    """The ``capacity`` and ``allocatable`` a node advertising ``gpus`` ``nvidia.com/gpu``
    shows (quantities as strings, as in Node.status); empty for none, where no device
    plugin runs: :func:`gpuclass.k8s.labels.expected_resources` of a plan's ``slices``."""
    res = {GPU_RESOURCE: str(gpus)} if gpus else {}
    return {"capacity": dict(res), "allocatable": dict(res)}
