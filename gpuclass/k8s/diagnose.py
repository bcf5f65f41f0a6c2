"""Why GPU pods do not schedule on a node: what the Node object (and the hardware) say.

A node is read as the cluster reads it (:mod:`gpuclass.k8s.nodefacts`): the GPU label
selects only with the exact value ``"true"``; GPU Feature Discovery's
``nvidia.com/gpu.product`` names the card when no hardware report is at hand, and
node-feature-discovery's PCI labels say a GPU is there without naming it;
``nvidia.com/gpu.shared`` means the device plugin renamed its resource.  A node with no
GPU, or only a card off the allowlist (a plain display adapter on this platform), is an
informational "not a GPU node", so a whole cluster can be diagnosed and only the nodes
that should have GPUs report problems.

The advice follows the platform's rules: the machines' OS is sealed and nothing on a node
is fixed by hand (no ``kubectl label``): labels, driver and device plugin come from the
provisioner, so a node that lacks them is reprovisioned, and a device plugin that is
missing or unhealthy for no reason its log gives is too.

>>> node = {"kind": "Node", "metadata": {"name": "gpu-1",
...         "labels": {"autopilot.syself.com/gpu": "true", "node-role.kubernetes.io/gpu": ""}},
...         "status": {"capacity": {"nvidia.com/gpu": "4"}, "allocatable": {"nvidia.com/gpu": "0"}}}
>>> [f.code for f in diagnose(node).findings]
['device-plugin-unhealthy']
>>> cpu = {"kind": "Node", "metadata": {"name": "cpu-1"}, "status": {"capacity": {"cpu": "8"}}}
>>> d = diagnose(cpu)
>>> [f.code for f in d.findings], d.ok
(['not-a-gpu-node'], True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..constants import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    GFD_PRODUCT,
    GFD_SHARED_SUFFIX,
    GPU_LABEL,
    GPU_POOL_LABEL,
    GPU_RESOURCE,
    GPU_RESOURCE_SHARED,
    HOST_LABELS,
    LABEL_TRUE,
)
from ..errors import InputError, ManifestError
from .labels import node_summary
from .nodefacts import NodeFacts
from .objects import as_object, as_objects

if TYPE_CHECKING:
    from ..policy import PolicyArg

__all__ = ["diagnose", "diagnose_nodes", "Diagnosis", "Finding", "REPROVISION"]

_MODEL = ConfigDict(frozen=True, extra="forbid")

Code = Literal["ok", "not-a-gpu-node", "label-value", "device-plugin-missing",
               "device-plugin-unhealthy", "some-slices-unhealthy", "renamed-resource",
               "no-supported-card", "reprovision", "capacity-mismatch", "capacity-unverified",
               "stale-label", "conflict", "card-unknown", "config-label", "pool-label"]
REPROVISION = ("reprovision the machine: the provisioner installs the driver and the device plugin "
               "and sets the node's labels (nothing is set by hand: the OS is sealed)")
_CONFIGMAP = ("apply the policy's ConfigMap ('gpuclass labels --configmap | kubectl apply -f -'; "
              "'gpuclass labels --check' finds what is wrong with the one deployed) and restart the "
              "device plugin")
_HOST = ",".join(f"{k}={v}" for k, v in HOST_LABELS.items())


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
    gpu_node: bool = Field(True, description="the node has (or is meant to have) a supported GPU")
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


Add = Callable[[Finding], None]


def _why_unsupported(report: Any) -> str:
    if not report.unsupported_gpus:
        return "the hardware has no NVIDIA GPU"
    parts = []
    for d in report.unsupported_gpus:
        what = f"{d.name or 'unknown GPU'} ({d.vendor}:{d.device}" + (f" at {d.slot})" if d.slot else ")")
        why = d.near_miss.reason if d.near_miss else (d.note or "not on the allowlist")
        parts.append(f"{what}: {why}")
    return "; ".join(parts)


def _unsupported_text(n: NodeFacts) -> str:
    if n.report is not None:
        return _why_unsupported(n.report)
    return f"GPU Feature Discovery reports {n.product}, which is not on the allowlist"


def _unlabeled(n: NodeFacts, add: Add) -> None:
    """A node without the GPU label: reprovision, not a GPU node, or a card nothing names."""
    ads = (f"; yet {n.capacity if n.capacity is not None else n.allocatable} {n.resource} are "
           "advertised, so a device plugin runs there") if n.advertised else ""
    if n.state == "supported":
        if n.report is not None:
            names = ", ".join(f"{k}x {c}" for c, k in node_summary(n.report).cards.items())
            what = f"the hardware has {n.cards} supported card(s) ({names})"
        else:
            shared = " time-sliced" if n.product.endswith(GFD_SHARED_SUFFIX) else ""
            what = (f"GPU Feature Discovery reports {n.product}, the{shared} {n.gfd['name']} "
                    "(allowlisted),")
        add(Finding(code="reprovision", severity="error",
                    message=f"{what} but the node lacks {GPU_LABEL}={LABEL_TRUE}{n.odd()}: it was "
                            "provisioned without its GPU, or the label was lost",
                    action=REPROVISION))
    elif n.state == "unsupported" and n.advertised:
        add(Finding(code="no-supported-card", severity="error",
                    message=f"no {GPU_LABEL}={LABEL_TRUE} label{n.odd()}: no supported card: "
                            f"{_unsupported_text(n)}{ads} on hardware the platform does not support "
                            f"(pods asking for {n.resource} without the label's nodeSelector can land "
                            "on it)",
                    action=REPROVISION + ": it then gets no device plugin"))
    elif n.state == "unsupported":
        add(Finding(code="not-a-gpu-node", severity="info",
                    message=f"not a GPU node: no supported card ({_unsupported_text(n)}); on this "
                            "platform such a card is a plain display adapter: no label, no slices"))
    elif n.state == "unknown":
        signs = n.nfd_text() or (f"the node advertises {n.resource}" if n.advertised
                                 else "the node carries NVIDIA GPU labels")
        add(Finding(code="card-unknown", severity="error" if n.advertised else "warning",
                    message=f"{signs}{ads}, but neither a hardware report nor GPU Feature "
                            f"Discovery's {GFD_PRODUCT} names the card, and the node lacks "
                            f"{GPU_LABEL}={LABEL_TRUE}{n.odd()}: an allowlisted card means the "
                            "machine was provisioned without its GPU and needs reprovisioning; "
                            "any other card is a plain display adapter here (not a GPU node)",
                    action="tell which: run 'gpuclass diagnose NODE.yaml --root /' on the machine, "
                           "or pass its report ('gpuclass plan -o json') with --report"))
    else:
        hw = " and the hardware has no NVIDIA GPU" if n.report is not None else ""
        add(Finding(code="not-a-gpu-node", severity="info",
                    message=f"not a GPU node: no {GPU_LABEL} label, no {GPU_RESOURCE} and no GPU "
                            f"labels of GPU Feature Discovery or node-feature-discovery{hw}; GPU "
                            "pods are not meant to run here"))


def _plugin(n: NodeFacts, add: Add) -> None:
    """A labelled node's device plugin: renamed resource, missing, unhealthy."""
    res, capacity, allocatable = n.resource, n.capacity, n.allocatable
    if n.renamed:
        add(Finding(code="renamed-resource", severity="error",
                    message=f"the node advertises {GPU_RESOURCE_SHARED} ({capacity if capacity is not None else allocatable}), "
                            f"not {GPU_RESOURCE}: the device plugin runs with renameByDefault: "
                            f"true, so pods requesting {GPU_RESOURCE} stay Pending (Insufficient "
                            f"{GPU_RESOURCE}) while the renamed slices go unused",
                    action=f"{_CONFIGMAP}; it keeps renameByDefault: false, and the platform's "
                           f"pods request {GPU_RESOURCE}"))
    logs = f"; when the log does not explain it, {REPROVISION}"
    if not allocatable:
        if not capacity:
            add(Finding(code="device-plugin-missing", severity="error",
                        message=f"Allocatable {res} is {0 if allocatable == 0 else 'absent'}"
                                " on a labeled node: the NVIDIA device plugin is missing or "
                                "has not registered (not a busy GPU: slices in use still "
                                "count as allocatable)",
                        action="read the log of the device plugin's pod on this node (kubectl logs "
                               f"-n NAMESPACE POD: the driver, the container runtime){logs}"))
        else:
            add(Finding(code="device-plugin-unhealthy", severity="error",
                        message=f"Capacity {capacity} but Allocatable 0 {res}: the "
                                "device plugin marks every device unhealthy (not a busy GPU)",
                        action=f"read the device plugin's log for XID errors{logs}"))
    elif capacity is not None and allocatable < capacity:
        add(Finding(code="some-slices-unhealthy", severity="warning",
                    message=f"Allocatable {allocatable} < Capacity {capacity} {res}: "
                            "the device plugin marks some devices unhealthy",
                    action=f"read the device plugin's log for XID errors{logs}"))


def _config_label(n: NodeFacts, add: Add, seen: int | None) -> bool:
    """The ``nvidia.com/device-plugin.config`` label against the config the node needs;
    True when it is wrong (and so explains a capacity that is)."""
    have, want = n.config_label, n.wanted_config
    ads = f"; the node advertises {seen} {n.resource}" + (
        f", expected {n.expected}" if n.expected is not None else "") if seen else ""
    if n.config_known and have != want:
        if have is None:
            what = (f"lacks {DEVICE_PLUGIN_CONFIG_LABEL}={want}, which selects the {n.per_card} "
                    "slices per card of its card: the device plugin applies the default config")
        elif want is None:
            what = (f"carries {DEVICE_PLUGIN_CONFIG_LABEL}={have} from an earlier policy or earlier "
                    f"hardware: its card takes the default config ({n.per_card} slices per card), "
                    f"but the device plugin applies {have}")
        else:
            what = (f"carries {DEVICE_PLUGIN_CONFIG_LABEL}={have}, but its card takes {want}")
        add(Finding(code="config-label", severity="error", message=f"the node {what}{ads}",
                    action=REPROVISION + "; its label patch ('gpuclass labels --patch') sets or "
                                         "deletes this label"))
        return True
    if have is not None and have not in n.policy_configs():
        add(Finding(code="config-label", severity="error",
                    message=f"the node carries {DEVICE_PLUGIN_CONFIG_LABEL}={have}, which names no "
                            "config of the policy's ConfigMap: the device plugin's config-manager "
                            f"fails there ('specified config {have} does not exist'){ads}",
                    action=REPROVISION))
        return True
    return False


def _capacity(n: NodeFacts, add: Add, plugin_found: bool) -> None:
    """A labelled node's capacity against its cards x slices per card (``plugin_found``: the
    device plugin has a problem already, which an unverified count would only add to)."""
    seen = n.capacity if n.capacity else n.allocatable
    if _config_label(n, add, seen) or not seen:
        return
    res = n.resource
    gfd = f" (GPU Feature Discovery reports replicas {n.gfd_replicas})" if n.gfd_replicas is not None else ""
    if n.expected is not None:
        if seen != n.expected:
            hint = ("time-slicing is not applied (one per card): the plugin runs without "
                    "its time-slicing config" if n.cards and seen == n.cards
                    else f"replicas is not {n.per_card}")
            add(Finding(code="capacity-mismatch", severity="error",
                        message=f"the node advertises {seen} {res}, expected {n.cards} card(s) x "
                                f"{n.per_card} = {n.expected}: {hint}{gfd}",
                        action=_CONFIGMAP))
    elif n.gfd_replicas is not None and n.gfd_replicas != n.per_card:
        add(Finding(code="capacity-mismatch", severity="error",
                    message=f"the node advertises {seen} {res} with replicas {n.gfd_replicas} "
                            f"(GPU Feature Discovery), not {n.per_card}: the device plugin's "
                            "time-slicing is misconfigured",
                    action=_CONFIGMAP))
    elif seen % n.per_card:
        add(Finding(code="capacity-mismatch", severity="error",
                    message=f"the node advertises {seen} {res}, not a multiple of "
                            f"{n.per_card}: the device plugin's time-slicing is misconfigured{gfd}",
                    action=_CONFIGMAP))
    elif n.gfd_replicas is None and not plugin_found:
        add(Finding(code="capacity-unverified", severity="warning",
                    message=f"the node advertises {seen} {res}, but nothing says how many cards it "
                            f"has: {seen // n.per_card} card(s) x {n.per_card}, or fewer cards with "
                            "more replicas, read the same (no GPU Feature Discovery count or "
                            "replicas label, no hardware report)",
                    action="pass the machine's report (--report, or --root on the machine), or "
                           "deploy GPU Feature Discovery with the device plugin"))


def _pool(n: NodeFacts, add: Add) -> None:
    """The pool label against what the node is."""
    if n.gpu_meant and not n.pool:
        add(Finding(code="pool-label", severity="error",
                    message=f"the node lacks the GPU pool label {GPU_POOL_LABEL}: it did not join "
                            "through the GPU pool's MachineDeployment, whose machines Cluster API "
                            f"labels so, and which takes only hosts labelled {_HOST}",
                    action=f"label the machine's HetznerBareMetalHost {_HOST} ('gpuclass labels "
                           "--host-patch') and reprovision it in the GPU pool"))
    elif n.pool and n.state in ("unsupported", "none", "conflict"):
        what = {"conflict": "its cards conflict", "none": "it has no NVIDIA GPU"}.get(
            n.state, "it has no supported card")
        add(Finding(code="pool-label", severity="error",
                    message=f"the node is in the GPU pool ({GPU_POOL_LABEL}) but {what}: its host "
                            f"carries {_HOST} from earlier hardware, or was labelled by mistake",
                    action="take the host out of the GPU pool ('gpuclass labels --host-patch "
                           "--remove-stale') and reprovision the machine"))


def _diagnose(obj: dict, report: Any, compiled: Any, source: str | None) -> Diagnosis:
    n = NodeFacts(obj, report, compiled, source)
    findings: list[Finding] = []
    add = findings.append
    marked = n.labeled or n.case_variant
    if n.state == "conflict":
        label = (f"; yet it carries {GPU_LABEL}={n.value}, a label left from before"
                 if n.value is not None else "")
        add(Finding(code="conflict", severity="error",
                    message="the machine's cards cannot be provisioned together: "
                            + "; ".join(n.conflicts) + f": it gets no driver, no device plugin and "
                            f"no {GPU_LABEL} label{label}",
                    action="fit cards that share a kernel-module flavour and slices per card, "
                           "then reprovision the machine"))
    elif not marked:
        _unlabeled(n, add)
    elif n.state in ("unsupported", "none"):
        add(Finding(code="stale-label", severity="error",
                    message=f"the node carries {GPU_LABEL}={n.value} but has no supported card: "
                            + (_unsupported_text(n) if n.state == "unsupported"
                               else "the hardware has no NVIDIA GPU"),
                    action=REPROVISION + ": the provisioner's patch deletes the label"))
    else:
        if n.case_variant:
            add(Finding(code="label-value", severity="error",
                        message=f"{GPU_LABEL} is {n.value!r}, not \"{LABEL_TRUE}\": label selectors "
                                "compare values exactly (case-sensitive), so a nodeSelector "
                                f"{GPU_LABEL}: \"{LABEL_TRUE}\" does not match this node",
                        action=REPROVISION))
        before = len(findings)
        _plugin(n, add)
        _capacity(n, add, len(findings) > before)
    _pool(n, add)
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


def diagnose(node: Any, report: Any = None, *, policy: PolicyArg = None, source: str | None = None) -> Diagnosis:
    """Why GPU pods do not schedule on ``node``: a Node object as a dict, YAML/JSON text, a file,
    a ``kubernetes`` client model (``V1Node``) or its ``to_dict()``.

    With a :class:`~gpuclass.provisioner.HardwareReport` of the same machine the
    diagnosis also compares the label and capacity with the hardware; ``policy`` (default:
    the platform's allowlist) names the cards of GFD's product label and the slices per card.

    - no GPU, or only cards off the allowlist (and no GPU resource advertised): "not a GPU
      node", info;
    - a GPU that nothing names (node-feature-discovery's PCI labels, a resource, GFD's count)
      and no label: "card-unknown", until a report tells;
    - the report's cards conflict: no label, no driver: "conflict";
    - label value ``"True"`` (any case but ``"true"``): no selector matches it;
    - label set, ``Allocatable`` 0 or absent: the device plugin is missing or
      unhealthy (not a busy GPU); ``nvidia.com/gpu.shared`` instead: renamed resource;
    - a supported card known but no label: reprovision;
    - ``nvidia.com/device-plugin.config`` other than the card's config: a stale label;
    - capacity not cards x slices: the device plugin's time-slicing is misconfigured; a
      capacity whose cards nothing counts: unverified;
    - the pool label ``node-role.kubernetes.io/gpu`` missing on a GPU node, or present on
      any other.
    """
    from ..policy import compile_policy

    return _diagnose(as_object(node, source, "Node"), report, compile_policy(policy), source)


def diagnose_nodes(nodes: Any, report: Any = None, *, policy: PolicyArg = None,
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
