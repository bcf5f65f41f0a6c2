"""What a node must carry: its GPU label, its expected GPU capacity, the device plugin config;
and how GPU Feature Discovery's labels name the cards.

- :func:`node_labels` — the node decision's labels (:func:`gpuclass.policy.nodes.decide_node`):
  ``autopilot.syself.com/gpu=true`` only for a node with a supported card whose cards do
  not conflict, nothing for any other node (a label attracts pods; this platform has no
  taints to keep them off);
- :func:`labels_patch` — the same labels as a Node merge patch, which also deletes a
  ``nvidia.com/device-plugin.config`` label the node no longer needs;
- :func:`expected_resources` — ``nvidia.com/gpu`` = cards x slices under both
  Capacity and Allocatable; :func:`device_plugin_configmap` — the NVIDIA device
  plugin's time-slicing configuration that makes it so, with ``replicas`` and
  ``failRequestsGreaterThanOne`` taken from the policy in use.  Its default config is
  the key ``default``, which the plugin's config-manager (and its Helm chart, with
  ``config.default: default`` or the default fallbacks ``named,single``) selects on a
  node without the config label.  A card whose policy entry sets its own ``slices``
  gets a config of its own in the ConfigMap, and its node the
  ``nvidia.com/device-plugin.config`` label that selects it, so the capacity the
  controller expects and the plugin's config always agree;
- :func:`gfd_card` — the allowlisted card a ``nvidia.com/gpu.product`` label names.

>>> from gpuclass.provisioner import HardwareReport
>>> hw = HardwareReport.example("rtx-6000-ada", count=2)
>>> node_labels(hw), expected_resources(hw)["allocatable"]
({'autopilot.syself.com/gpu': 'true'}, {'nvidia.com/gpu': '8'})
>>> node_labels(HardwareReport.example(None))
{}
>>> node_labels(HardwareReport.example(["gtx-1080", "rtx-pro-6000-blackwell-server"]))  # a conflict
{}
>>> gfd_card("NVIDIA-RTX-6000-Ada-Generation-SHARED")["id"]
'rtx-6000-ada'
"""

from __future__ import annotations


from ..constants import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    DEVICE_PLUGIN_DEFAULT_CONFIG,
    GFD_SHARED_SUFFIX,
    GPU_LABEL,
    GPU_RESOURCE,
)
from ..errors import InputError
from ..lazy import Pattern
from ..planning import is_plan_data
from ..policy.nodes import NodeDecision, config_name

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing and the TypedDicts cost a labels command 8 ms
    from typing import Any

    from ..models import NodeGpuSummary
    from ..policy import PolicyArg
    from .types import ConfigMap, DevicePluginConfig, ExpectedResources, NodePatch

__all__ = ["node_decision", "node_labels", "labels_patch", "expected_gpus", "expected_resources",
           "device_plugin_config", "device_plugin_configmap", "config_name", "node_config",
           "node_summary", "gfd_sanitise", "gfd_card", "DEFAULT_CONFIG_KEY"]

# The ConfigMap key of the policy's default config (what the Helm chart's config.default names).
DEFAULT_CONFIG_KEY = DEVICE_PLUGIN_DEFAULT_CONFIG


def node_summary(hw: Any) -> NodeGpuSummary:
    """The node rollup of a HardwareReport or a NodeGpuSummary."""
    from ..models import NodeGpuSummary

    if isinstance(hw, NodeGpuSummary):
        return hw
    summary = getattr(hw, "summary", None)
    if isinstance(summary, NodeGpuSummary):
        return summary
    raise InputError(f"expected a HardwareReport or NodeGpuSummary, got {type(hw).__name__}")


def node_decision(hw: Any) -> NodeDecision:
    """The node decision (:func:`gpuclass.policy.nodes.decide_node`) of a HardwareReport, an
    InstallPlan (the decision it was planned with) or one as plain data (a
    :func:`gpuclass.planning.plan_data`, the ``plan`` of ``gpuclass plan -o json``), or a
    NodeGpuSummary (the decision of the rollup that made it)."""
    decide = getattr(hw, "node_decision", None)
    if callable(decide):  # a HardwareReport: decided from its cards
        return decide()
    if is_plan_data(hw):
        labels, conflicts = dict(hw["node_labels"]), list(hw["conflicts"])
    elif isinstance(hw, _install_plan()):
        labels, conflicts = dict(hw.node_labels), list(hw.conflicts)
    else:
        s = node_summary(hw)
        labels, conflicts = dict(s.labels), list(s.conflicts)
    return NodeDecision(labels=labels, conflicts=conflicts,
                        config=labels.get(DEVICE_PLUGIN_CONFIG_LABEL))


def _install_plan() -> type:
    from ..provisioner import InstallPlan

    return InstallPlan


def node_config(hw: Any) -> str | None:
    """The device plugin config a node selects by label: ``None`` for the ConfigMap's default
    (the policy's ``slices_per_card``), else :func:`config_name` of its cards' slices;
    ``None`` too under a conflict (no config fits)."""
    decided = node_decision(hw)
    return decided.config if decided.ok else None


def node_labels(hw: Any) -> dict[str, str]:
    """The node's labels: ``{GPU_LABEL: "true"}`` for a node with a supported card and no
    conflict, else ``{}``; plus the ``nvidia.com/device-plugin.config`` label where the
    node needs a config other than the default (:func:`node_config`)."""
    return dict(node_decision(hw).labels)


def labels_patch(hw: Any, node: str | None = None, *, remove_stale: bool = False) -> NodePatch:
    """A Node merge patch (``kubectl patch node N --type merge -p ...``) with the node's labels.

    A GPU node's patch sets its labels and gives ``nvidia.com/device-plugin.config``
    ``null`` when the node uses the default config: a merge patch deletes a key set to
    null (a label left from an earlier policy, ``replicas-8`` say) and ignores it when
    absent.  A node without a supported card, or whose cards conflict, gets nothing: an
    empty ``labels``; with ``remove_stale`` it gets ``null`` for both labels instead,
    which deletes those left from earlier hardware.

    >>> from gpuclass.provisioner import HardwareReport
    >>> labels_patch(HardwareReport.example(None), "n1")["metadata"]
    {'name': 'n1', 'labels': {}}
    >>> labels_patch(HardwareReport.example(None), remove_stale=True)["metadata"]["labels"]
    {'autopilot.syself.com/gpu': None, 'nvidia.com/device-plugin.config': None}
    >>> labels_patch(HardwareReport.example("gtx-1080"))["metadata"]["labels"]
    {'autopilot.syself.com/gpu': 'true', 'nvidia.com/device-plugin.config': None}
    """
    labels: dict[str, str | None] = dict(node_labels(hw))
    if labels:
        labels.setdefault(DEVICE_PLUGIN_CONFIG_LABEL, None)
    elif remove_stale:
        labels = {GPU_LABEL: None, DEVICE_PLUGIN_CONFIG_LABEL: None}
    patch: NodePatch = {"apiVersion": "v1", "kind": "Node", "metadata": {}}
    if node:
        patch["metadata"]["name"] = node
    patch["metadata"]["labels"] = labels
    return patch


def expected_gpus(hw: Any) -> int:
    """``nvidia.com/gpu`` the node must advertise: supported cards x slices per card; 0 when
    the cards conflict (nothing GPU-related is installed then).  ``hw`` is a HardwareReport,
    an InstallPlan (its ``slices``; or the plan as plain data) or a NodeGpuSummary."""
    if not node_decision(hw).ok:
        return 0
    if is_plan_data(hw):
        return int(hw["slices"])
    if isinstance(hw, _install_plan()):
        return hw.slices
    return node_summary(hw).slices


def expected_resources(hw: Any) -> ExpectedResources:
    """Expected ``capacity`` and ``allocatable`` (quantities as strings, as in Node.status);
    empty for a node without a supported card (or with a conflict), where no device plugin
    runs."""
    from ..planning import expected_resources_of

    return expected_resources_of(expected_gpus(hw))


def device_plugin_config(policy: PolicyArg = None, *, replicas: int | None = None,
                         fail_requests_greater_than_one: bool | None = None,
                         rename_by_default: bool = False) -> DevicePluginConfig:
    """The device plugin's ``config.yaml`` as a dict (api/config/v1 of NVIDIA/k8s-device-plugin).

    ``replicas`` and ``failRequestsGreaterThanOne`` come from ``policy`` (default: the
    platform's allowlist: 4 and true) unless given.

    >>> device_plugin_config()["sharing"]["timeSlicing"]["resources"]
    [{'name': 'nvidia.com/gpu', 'replicas': 4}]
    >>> device_plugin_config({"slices_per_card": 2, "cards": []})["sharing"]["timeSlicing"]["resources"]
    [{'name': 'nvidia.com/gpu', 'replicas': 2}]
    """
    from ..policy import compile_policy

    compiled = compile_policy(policy)
    replicas = compiled.slices_per_card if replicas is None else replicas
    if fail_requests_greater_than_one is None:
        fail_requests_greater_than_one = compiled.fail_requests_greater_than_one
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


def device_plugin_configmap(policy: PolicyArg = None, *, name: str = "nvidia-device-plugin-config",
                            namespace: str = "kube-system", key: str = DEFAULT_CONFIG_KEY) -> ConfigMap:
    """A ConfigMap holding :func:`device_plugin_config` of ``policy`` under ``key`` and, for
    every other slice count a card of the policy sets, that config under :func:`config_name`
    (selected per node by ``nvidia.com/device-plugin.config``).

    The plugin's Helm chart takes it as ``config.name`` (in the plugin's namespace); its
    config-manager picks a node's config by that label, else ``config.default``, else its
    fallbacks (``named``: a key called ``default``; ``single``: the only key).  ``key``
    defaults to ``default``, so the chart's defaults select it even with several keys;
    give ``config.default`` its name where ``key`` is another.

    >>> cm = device_plugin_configmap()
    >>> list(cm["data"])
    ['default']
    >>> print(cm["data"]["default"], end="")
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

    from ..policy import compile_policy

    compiled = compile_policy(policy)

    def text(replicas: int) -> str:
        return yaml.safe_dump(device_plugin_config(compiled, replicas=replicas), sort_keys=False,
                              default_flow_style=False)

    data = {key: text(compiled.slices_per_card)}
    for n in sorted({c["slices"] for c in compiled.cards} - {compiled.slices_per_card}):
        data[config_name(n)] = text(n)
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"app.kubernetes.io/managed-by": "gpuclass"}},
            "data": data}


# -- GPU Feature Discovery ------------------------------------------------------------

_GFD_DROPPED = Pattern(r"[^A-Za-z0-9\-_. ]")


def gfd_sanitise(name: str) -> str:
    """A product name as GFD writes it into a label value: characters outside
    ``[A-Za-z0-9-_. ]`` dropped, blanks joined by ``-`` (``internal/lm/resource.go``).

    >>> gfd_sanitise("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition")
    'NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition'
    """
    return "-".join(_GFD_DROPPED.sub("", name).split())


def gfd_card(product: Any, policy: PolicyArg = None) -> dict[str, Any] | None:
    """The policy's card that a ``nvidia.com/gpu.product`` value names, or None.

    GFD writes NVML's name (``NVIDIA RTX 6000 Ada Generation``; older drivers leave the
    ``NVIDIA`` out of GeForce names) sanitised, with ``-SHARED`` while time-sliced.  The
    value must be the whole name of a card (or an alias): ``...-GTX-1080-Ti`` is not the
    GTX 1080, ``...-RTX-4000-Ada-Generation`` not the RTX 4000 SFF Ada.
    """
    if not isinstance(product, str) or not product:
        return None
    from ..policy import compile_policy

    value = product[: -len(GFD_SHARED_SUFFIX)] if product.endswith(GFD_SHARED_SUFFIX) else product
    key = value.casefold()
    for card in compile_policy(policy).cards:
        for name in (card["name"], *card["aliases"]):
            for written in (name, f"NVIDIA {name}"):
                if gfd_sanitise(written).casefold() == key:
                    return card
    return None

