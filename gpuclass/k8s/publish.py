"""The node decision as the cluster's components take it from a provisioner: a
node-feature-discovery feature file or ``NodeFeature`` object, and the bare-metal host's labels.

- :func:`nfd_feature_file` — a file for NFD's ``local`` source
  (``/etc/kubernetes/node-feature-discovery/features.d/``): one ``key=value`` line per
  label, comments for the rest.  NFD removes a label whose line (or file) is gone, so a
  label of an earlier policy or of earlier hardware cannot outlive it;
- :func:`node_feature` — the same labels as a ``NodeFeature`` (``nfd.k8s-sigs.io/v1alpha1``,
  under ``spec.labels``), tied to its node by the ``nfd.node.kubernetes.io/node-name``
  label, which is what nfd-master reads;
- :func:`host_labels_patch` — a ``HetznerBareMetalHost`` merge patch
  (``infrastructure.cluster.x-k8s.io/v1beta1``) with the plan's host labels
  (``hardware: gpu``), which put the host into the GPU machine pool.

All three carry ``autopilot.syself.com/gpu`` only for a supported card whose cards do not
conflict (:func:`gpuclass.policy.nodes.decide_node`).  NFD refuses labels in the
``kubernetes.io`` namespaces, and a kubelet may not give its own node a
``node-role.kubernetes.io`` label, so the pool label ``node-role.kubernetes.io/gpu`` is set
neither here nor by hand: Cluster API copies it onto the Node from the GPU
MachineDeployment's machine template labels (it syncs the ``node-role.kubernetes.io/``
prefix), and that MachineDeployment takes only hosts labelled ``hardware: gpu``
(:data:`POOL_LABEL_NOTE`).

>>> from gpuclass.provisioner import HardwareReport
>>> print(nfd_feature_file(HardwareReport.example("rtx-4000-sff-ada")).splitlines()[-1])
autopilot.syself.com/gpu=true
>>> node_feature(HardwareReport.example(None), "cpu-1")["spec"]
{'labels': {}}
>>> host_labels_patch(HardwareReport.example("gtx-1080"), "bm-gex44-1")["metadata"]
{'name': 'bm-gex44-1', 'labels': {'hardware': 'gpu'}}
"""

from __future__ import annotations

from ..constants import GPU_LABEL, GPU_POOL_LABEL, HOST_LABELS, NFD_NODE_NAME_LABEL
from ..errors import InputError
from ..planning import is_plan_data
from .labels import node_decision

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from typing import Any

    from .types import HostPatch, NodeFeature

__all__ = ["nfd_feature_file", "node_feature", "host_labels_patch", "NFD_FEATURES_DIR",
           "NFD_FEATURE_FILE", "NFD_NAMESPACE", "POOL_LABEL_NOTE", "HOST_API_VERSION", "HOST_KIND"]

NFD_FEATURES_DIR = "/etc/kubernetes/node-feature-discovery/features.d"
NFD_FEATURE_FILE = f"{NFD_FEATURES_DIR}/gpuclass"
NFD_NAMESPACE = "node-feature-discovery"
HOST_API_VERSION = "infrastructure.cluster.x-k8s.io/v1beta1"
HOST_KIND = "HetznerBareMetalHost"
POOL_LABEL_NOTE = (
    f"{GPU_POOL_LABEL} is not set here: node-feature-discovery refuses kubernetes.io labels and "
    "a kubelet may not set node-role labels on its node; Cluster API copies it onto the Node "
    "from the GPU MachineDeployment's machine template labels, and that MachineDeployment takes "
    f"only hosts labelled {','.join(f'{k}={v}' for k, v in HOST_LABELS.items())} "
    "('gpuclass labels --host-patch')")


def _why_none(hw: Any) -> str:
    decided = node_decision(hw)
    if decided.conflicts:
        return "the cards conflict: " + "; ".join(decided.conflicts)
    return "no supported card"


def nfd_feature_file(hw: Any) -> str:
    """The node's labels as an NFD feature file (``features.d`` format: ``key=value`` lines,
    ``#`` comments), for :data:`NFD_FEATURE_FILE` on the machine.  A node without a
    supported card, or whose cards conflict, gets a file of comments only: its labels go."""
    labels = node_decision(hw).labels
    lines = ["# The GPU labels of this machine's node, from gpuclass (the node decision of its "
             "hardware); node-feature-discovery's local source reads this file."]
    if not labels:
        lines.append(f"# No {GPU_LABEL}: {_why_none(hw)}.")
    lines.append(f"# {POOL_LABEL_NOTE}.")
    lines += [f"{k}={v}" for k, v in labels.items()]
    return "\n".join(line.replace("\n", " ") for line in lines) + "\n"


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > 253:
        raise InputError(f"{what}: expected a Kubernetes object name, got {value!r}")
    return value


def node_feature(hw: Any, node: str, *, namespace: str = NFD_NAMESPACE,
                 name: str | None = None) -> NodeFeature:
    """The node's labels as a ``NodeFeature`` object for node ``node`` (in NFD's namespace,
    named ``gpuclass-NODE`` unless ``name`` is given): ``kubectl apply -f -``.  Its
    ``spec.labels`` is empty for a node without a supported card or with a conflict, so
    applying it removes labels nfd-master set from it before."""
    node = _name(node, "node")
    return {"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeature",
            "metadata": {"name": _name(name or f"gpuclass-{node}", "name"),
                         "namespace": _name(namespace, "namespace"),
                         "labels": {NFD_NODE_NAME_LABEL: node}},
            "spec": {"labels": dict(node_decision(hw).labels)}}


def host_labels_patch(hw: Any, host: str | None = None, *, remove_stale: bool = False) -> HostPatch:
    """A ``HetznerBareMetalHost`` merge patch with the plan's host labels: ``hardware: gpu``
    for a machine with a supported card and no conflict, nothing otherwise (``null``
    with ``remove_stale``, which takes a host out of the GPU pool).  ``hw`` is a
    HardwareReport or its InstallPlan, or the plan as plain data
    (:func:`gpuclass.planning.plan_data`).

    ``kubectl patch hetznerbaremetalhost HOST -n NS --type merge -p "$(...)"``.
    """
    if is_plan_data(hw):
        planned: dict[str, str] = hw["host_labels"]["labels"]
    else:
        from ..provisioner import HardwareReport, InstallPlan, plan

        if isinstance(hw, HardwareReport):
            hw = plan(hw)
        if not isinstance(hw, InstallPlan):
            raise InputError(f"expected a HardwareReport or InstallPlan, got {type(hw).__name__}")
        planned = hw.host_labels.labels
    labels: dict[str, str | None] = dict(planned)
    if not labels and remove_stale:
        labels = {k: None for k in HOST_LABELS}
    patch: HostPatch = {"apiVersion": HOST_API_VERSION, "kind": HOST_KIND, "metadata": {}}
    if host:
        patch["metadata"]["name"] = _name(host, "host")
    patch["metadata"]["labels"] = labels
    return patch
