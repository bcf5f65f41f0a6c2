"""What a node with these supported cards gets: its labels, its kernel-module flavour and
its device plugin config, or the conflict that keeps it out of the GPU pool.

This is the one node decision.  The classification rollup (``Rollup.node_data``: the
``labels`` and ``conflicts`` of every :class:`~gpuclass.models.NodeGpuSummary`), the
provisioner's :func:`~gpuclass.provisioner.plan`, the controller's
:func:`~gpuclass.k8s.labels.node_labels` and every command that prints a node's labels
ask :func:`decide_node`; a machine whose cards conflict gets no label from any of them.

- the kernel-module flavour every card accepts (NVIDIA's matrix in
  :func:`gpuclass.constants.accepted_kernel_modules`), the policy's preference where
  both fit; none in common (Pascal beside Blackwell) is a conflict;
- one replicas value per node: cards that take different slices per card conflict;
- labels: ``autopilot.syself.com/gpu=true`` with at least one supported card and no
  conflict, plus ``nvidia.com/device-plugin.config`` naming the config of the node's
  slices where they differ from the policy's default (:func:`config_name`).

>>> ada = {"id": "a", "name": "RTX 6000 Ada Generation", "family": "ada-lovelace",
...        "kernel_module": "open", "slices": 4}
>>> pascal = {"id": "p", "name": "GeForce GTX 1080", "family": "pascal",
...           "kernel_module": "proprietary", "slices": 4}
>>> blackwell = {"id": "b", "name": "RTX PRO 6000 Blackwell Server Edition",
...              "family": "blackwell", "kernel_module": "open", "slices": 4}
>>> d = decide_node([pascal, ada], 4)
>>> d.labels, d.kernel_module, d.conflicts
({'autopilot.syself.com/gpu': 'true'}, 'proprietary', [])
>>> d = decide_node([pascal, blackwell], 4)
>>> d.labels, d.kernel_module, len(d.conflicts)
({}, None, 1)
>>> decide_node([dict(ada, slices=8)], 4).labels["nvidia.com/device-plugin.config"]
'replicas-8'
"""

from __future__ import annotations

from ..constants import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    GPU_LABEL,
    KERNEL_MODULES,
    LABEL_TRUE,
    accepted_kernel_modules,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, NamedTuple
else:
    from ..lazy import NamedTuple

__all__ = ["NodeDecision", "decide_node", "config_name", "family_title"]


def config_name(replicas: int) -> str:
    """The device plugin config key (and ``nvidia.com/device-plugin.config`` value) of the
    config with ``replicas`` slices per card, for cards whose policy entry sets its own slices.

    >>> config_name(8)
    'replicas-8'
    """
    return f"replicas-{replicas}"


class NodeDecision(NamedTuple):
    """What a node with a set of supported cards gets (see :func:`decide_node`)."""

    labels: dict[str, str]
    """The node's labels: empty without a supported card or under a conflict."""
    conflicts: list[str]
    """Why the node cannot be provisioned as it is, one sentence each."""
    kernel_module: str | None = None
    """The flavour to install (None: no card, or no flavour fits every card)."""
    accepted: tuple[str, ...] = ()
    """The flavours every card accepts."""
    kernel_conflict: str | None = None
    replicas: int | None = None
    """The one time-slicing replicas value of the node (None: no card, or cards differ)."""
    slices_conflict: str | None = None
    config: str | None = None
    """The device plugin config the node selects by label; None: the default config."""

    @property
    def ok(self) -> bool:
        return not self.conflicts


def _fact(card: Any, name: str) -> Any:
    return card[name] if isinstance(card, dict) else getattr(card, name)


def family_title(name: str) -> str:
    """A GPU family as a reason names it (``ada-lovelace``: ``Ada Lovelace``)."""
    return name.replace("-", " ").title()


def _kernel_conflict(cards: list[Any], accepted: list[tuple[str, ...]]) -> str:
    only = {m: [c for c, a in zip(cards, accepted) if a == (m,)] for m in ("open", "proprietary")}
    needs = {m: sorted({family_title(_fact(c, "family")) for c in only[m]}) for m in only}
    # No "; " in the sentence: a flat audit cell joins a server's problems with it.
    named = ", ".join(f"{m} for " + " and ".join(_fact(c, "name") for c in only[m]) for m in only)
    return (f"{' and '.join(needs['open'])} needs the open kernel modules and "
            f"{' and '.join(needs['proprietary'])} the proprietary ones, and one machine loads "
            f"only one flavour ({named}): fit cards that share a flavour")


def decide_node(cards: Iterable[Any], slices_per_card: int) -> NodeDecision:
    """The decision for a node with ``cards`` (the supported card models present, each a
    mapping or an object with ``id``, ``name``, ``family``, ``kernel_module`` and ``slices``:
    ``CompiledPolicy.cards`` entries or :class:`~gpuclass.models.GpuCard`) under a policy
    whose default is ``slices_per_card`` slices per card."""
    present = list({_fact(c, "id"): c for c in cards}.values())
    if not present:
        return NodeDecision(labels={}, conflicts=[])
    accepted = [accepted_kernel_modules(_fact(c, "family"), _fact(c, "kernel_module"))
                for c in present]
    common = tuple(m for m in ("open", "proprietary") if all(m in a for a in accepted))
    kernel_conflict = None if common else _kernel_conflict(present, accepted)
    flavour = None
    if common:
        preferred = {_fact(c, "kernel_module") for c in present} & set(KERNEL_MODULES)
        flavour = common[0] if len(common) == 1 else (
            preferred.pop() if len(preferred) == 1 else "open")
    per_card = sorted({int(_fact(c, "slices")) for c in present})
    replicas = per_card[0] if len(per_card) == 1 else None
    slices_conflict = None
    if replicas is None:
        slices = ", ".join(f"{_fact(c, 'name')}: {_fact(c, 'slices')}" for c in present)
        slices_conflict = (f"the cards take different slices per card ({slices}) and the "
                           "device plugin applies one replicas value per node")
    conflicts = [r for r in (kernel_conflict, slices_conflict) if r is not None]
    config = None if replicas is None or replicas == slices_per_card else config_name(replicas)
    labels: dict[str, str] = {}
    if not conflicts:
        labels[GPU_LABEL] = LABEL_TRUE
        if config is not None:
            labels[DEVICE_PLUGIN_CONFIG_LABEL] = config
    return NodeDecision(labels=labels, conflicts=conflicts, kernel_module=flavour, accepted=common,
                        kernel_conflict=kernel_conflict, replicas=replicas,
                        slices_conflict=slices_conflict, config=config)
