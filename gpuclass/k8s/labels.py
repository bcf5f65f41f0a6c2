"""What a node must carry: its GPU label, its expected GPU capacity, the device plugin config.

- :func:`node_labels` — ``autopilot.syself.com/gpu=true`` only for a node with a
  supported card, nothing for any other node (a label attracts pods; this
  platform has no taints to keep them off).
- :func:`expected_resources` — ``nvidia.com/gpu`` = cards x slices under both
  Capacity and Allocatable; :func:`device_plugin_configmap` — the NVIDIA device
  plugin's time-slicing configuration that makes it so.

>>> from gpuclass.provisioner import HardwareReport
>>> hw = HardwareReport.example("rtx-6000-ada", count=2)
>>> node_labels(hw), expected_resources(hw)["allocatable"]
({'autopilot.syself.com/gpu': 'true'}, {'nvidia.com/gpu': '8'})
>>> node_labels(HardwareReport.example(None))
{}
"""

from __future__ import annotations

from typing import Any

from ..constants import GPU_LABEL, GPU_RESOURCE, SLICES_PER_CARD
from ..errors import InputError
from ..models import NodeGpuSummary

__all__ = ["node_labels", "labels_patch", "expected_gpus", "expected_resources",
           "device_plugin_config", "device_plugin_configmap", "node_summary"]


def node_summary(hw: Any) -> NodeGpuSummary:
    """The node rollup of a HardwareReport, an InstallPlan's report, or a NodeGpuSummary."""
    if isinstance(hw, NodeGpuSummary):
        return hw
    summary = getattr(hw, "summary", None)
    if isinstance(summary, NodeGpuSummary):
        return summary
    raise InputError(f"expected a HardwareReport or NodeGpuSummary, got {type(hw).__name__}")


def node_labels(hw: Any) -> dict[str, str]:
    """``{GPU_LABEL: "true"}`` for a node with a supported card, else ``{}``."""
    s = node_summary(hw)
    return {GPU_LABEL: "true"} if s.supported_cards > 0 else {}


def labels_patch(hw: Any, node: str | None = None, *, remove_stale: bool = False) -> dict:
    """A Node merge patch (``kubectl patch node N --type merge -p ...``) with the GPU label.

    A node without a supported card gets nothing: an empty ``labels``.  With
    ``remove_stale`` it gets ``null`` for the label instead, which deletes a label
    left from earlier hardware (a merge patch, no longer a valid Node object).

    >>> from gpuclass.provisioner import HardwareReport
    >>> labels_patch(HardwareReport.example(None), "n1")["metadata"]
    {'name': 'n1', 'labels': {}}
    >>> labels_patch(HardwareReport.example(None), remove_stale=True)["metadata"]
    {'labels': {'autopilot.syself.com/gpu': None}}
    """
    labels: dict[str, str | None] = dict(node_labels(hw))
    if not labels and remove_stale:
        labels[GPU_LABEL] = None
    meta: dict[str, Any] = {"name": node} if node else {}
    meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta}


def expected_gpus(hw: Any) -> int:
    """``nvidia.com/gpu`` the node must advertise: supported cards x slices per card."""
    return node_summary(hw).slices


def expected_resources(hw: Any) -> dict[str, dict[str, str]]:
    """Expected ``capacity`` and ``allocatable`` (quantities as strings, as in Node.status);
    empty for a node without a supported card, where no device plugin runs."""
    n = expected_gpus(hw)
    res = {GPU_RESOURCE: str(n)} if n else {}
    return {"capacity": dict(res), "allocatable": dict(res)}


def device_plugin_config(replicas: int = SLICES_PER_CARD, *,
                         fail_requests_greater_than_one: bool = True,
                         rename_by_default: bool = False) -> dict:
    """The device plugin's ``config.yaml`` as a dict (api/config/v1 of NVIDIA/k8s-device-plugin).

    >>> device_plugin_config()["sharing"]["timeSlicing"]["resources"]
    [{'name': 'nvidia.com/gpu', 'replicas': 4}]
    """
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 2:
        raise InputError(f"replicas: {replicas!r}: the device plugin needs at least 2")
    return {
        "version": "v1",
        "flags": {"migStrategy": "none"},
        "sharing": {"timeSlicing": {
            "renameByDefault": bool(rename_by_default),
            "failRequestsGreaterThanOne": bool(fail_requests_greater_than_one),
            "resources": [{"name": GPU_RESOURCE, "replicas": replicas}],
        }},
    }


def device_plugin_configmap(name: str = "nvidia-device-plugin-config",
                            namespace: str = "kube-system", key: str = "config.yaml",
                            replicas: int = SLICES_PER_CARD) -> dict:
    """A ConfigMap holding :func:`device_plugin_config` under ``key`` (the file the
    plugin reads through ``CONFIG_FILE``, or the helm chart's ``config.name``).

    >>> cm = device_plugin_configmap()
    >>> print(cm["data"]["config.yaml"], end="")
    version: v1
    flags:
      migStrategy: none
    sharing:
      timeSlicing:
        renameByDefault: false
        failRequestsGreaterThanOne: true
        resources:
        - name: nvidia.com/gpu
          replicas: 4
    """
    import yaml

    text = yaml.safe_dump(device_plugin_config(replicas), sort_keys=False, default_flow_style=False)
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"app.kubernetes.io/managed-by": "gpuclass"}},
            "data": {key: text}}


