"""What a node must carry: its GPU label, its expected GPU capacity, the device plugin config;
and how GPU Feature Discovery's labels name the cards.

- :func:`node_labels` — ``autopilot.syself.com/gpu=true`` only for a node with a
  supported card, nothing for any other node (a label attracts pods; this
  platform has no taints to keep them off);
- :func:`expected_resources` — ``nvidia.com/gpu`` = cards x slices under both
  Capacity and Allocatable; :func:`device_plugin_configmap` — the NVIDIA device
  plugin's time-slicing configuration that makes it so, with ``replicas`` and
  ``failRequestsGreaterThanOne`` taken from the policy in use.  A card whose policy
  entry sets its own ``slices`` gets a config of its own in the ConfigMap, and its
  node the ``nvidia.com/device-plugin.config`` label that selects it, so the
  capacity the controller expects and the plugin's config always agree;
- :func:`gfd_card` — the allowlisted card a ``nvidia.com/gpu.product`` label names.

>>> from gpuclass.provisioner import HardwareReport
>>> hw = HardwareReport.example("rtx-6000-ada", count=2)
>>> node_labels(hw), expected_resources(hw)["allocatable"]
({'autopilot.syself.com/gpu': 'true'}, {'nvidia.com/gpu': '8'})
>>> node_labels(HardwareReport.example(None))
{}
>>> gfd_card("NVIDIA-RTX-6000-Ada-Generation-SHARED")["id"]
'rtx-6000-ada'
"""

from __future__ import annotations

import re
from typing import Any

from ..constants import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    GFD_SHARED_SUFFIX,
    GPU_LABEL,
    GPU_RESOURCE,
    LABEL_TRUE,
)
from ..errors import InputError
from ..models import NodeGpuSummary

__all__ = ["node_labels", "labels_patch", "expected_gpus", "expected_resources",
           "device_plugin_config", "device_plugin_configmap", "config_name", "node_config",
           "node_summary", "gfd_sanitise", "gfd_card", "DEFAULT_CONFIG_KEY"]

# The ConfigMap key of the policy's default config (the helm chart's ``config.default``).
DEFAULT_CONFIG_KEY = "config.yaml"


def node_summary(hw: Any) -> NodeGpuSummary:
    """The node rollup of a HardwareReport, an InstallPlan's report, or a NodeGpuSummary."""
    if isinstance(hw, NodeGpuSummary):
        return hw
    summary = getattr(hw, "summary", None)
    if isinstance(summary, NodeGpuSummary):
        return summary
    raise InputError(f"expected a HardwareReport or NodeGpuSummary, got {type(hw).__name__}")


def config_name(replicas: int) -> str:
    """The ConfigMap key (and ``nvidia.com/device-plugin.config`` value) of the config
    with ``replicas`` slices per card, for cards whose policy entry sets its own slices.

    >>> config_name(8)
    'replicas-8'
    """
    return f"replicas-{replicas}"


def node_config(hw: Any) -> str | None:
    """The device plugin config a node needs: ``None`` for the ConfigMap's default (the
    policy's ``slices_per_card``), else :func:`config_name` of its cards' slices.

    Only a HardwareReport knows its cards' slices; a node whose cards differ in slices
    per card has no config that fits (:func:`gpuclass.provisioner.plan` reports it) and
    gets ``None``.
    """
    cards = getattr(hw, "cards", None) or []
    sharing = getattr(hw, "time_slicing", None)
    per_card = {c.slices for c in cards}
    if sharing is None or len(per_card) != 1:
        return None
    (n,) = per_card
    return None if n == sharing.replicas else config_name(n)


def node_labels(hw: Any) -> dict[str, str]:
    """``{GPU_LABEL: "true"}`` for a node with a supported card, else ``{}``; plus the
    ``nvidia.com/device-plugin.config`` label where the node needs a config other than
    the default (:func:`node_config`)."""
    s = node_summary(hw)
    if s.supported_cards <= 0:
        return {}
    labels = {GPU_LABEL: LABEL_TRUE}
    config = node_config(hw)
    if config is not None:
        labels[DEVICE_PLUGIN_CONFIG_LABEL] = config
    return labels


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


def device_plugin_config(policy: Any = None, *, replicas: int | None = None,
                         fail_requests_greater_than_one: bool | None = None,
                         rename_by_default: bool = False) -> dict:
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


def device_plugin_configmap(policy: Any = None, *, name: str = "nvidia-device-plugin-config",
                            namespace: str = "kube-system", key: str = DEFAULT_CONFIG_KEY) -> dict:
    """A ConfigMap holding :func:`device_plugin_config` of ``policy`` under ``key`` (the file
    the plugin reads through ``CONFIG_FILE``, or the helm chart's ``config.default``), and,
    for every other slice count a card of the policy sets, that config under
    :func:`config_name` (selected per node by ``nvidia.com/device-plugin.config``).

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

_GFD_DROPPED = re.compile(r"[^A-Za-z0-9\-_. ]")


def gfd_sanitise(name: str) -> str:
    """A product name as GFD writes it into a label value: characters outside
    ``[A-Za-z0-9-_. ]`` dropped, blanks joined by ``-`` (``internal/lm/resource.go``).

    >>> gfd_sanitise("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition")
    'NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition'
    """
    return "-".join(_GFD_DROPPED.sub("", name).split())


def gfd_card(product: Any, policy: Any = None) -> dict | None:
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

