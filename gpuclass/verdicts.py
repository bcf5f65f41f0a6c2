"""What a policy makes of a device and of a node, as plain data: written once, no numpy.

:func:`explain` (why a device gets nothing), :func:`verdicts` (each device's status,
card, slices and note) and :func:`node_data` (a node's totals, labels, conflicts and
warnings from its rollup row) take plain lists and ints.
:class:`~gpuclass.classify.ClassificationResult` and :class:`~gpuclass.classify.Rollup`
feed them from their arrays; ``gpuclass scan`` feeds them the lists of a machine's few
devices without loading numpy (:mod:`gpuclass.cli.scan`).

>>> from gpuclass.policy import compile_policy
>>> p = compile_policy()
>>> [v["status"] for v in verdicts(p, [1, 2], [2, -1], [4, 0], lambda i: (0x10DE, 0x27B2, None, None), None)]
['supported', 'unsupported']
>>> node_data([1, 4, 0, 0, 0, 0, 2, 0], {2: 1}, p)["labels"]
{'autopilot.syself.com/gpu': 'true'}
"""

from __future__ import annotations

TYPE_CHECKING = False

from . import constants as C
from .constants import COMPANION, INVALID, NOT_GPU, STATUS_NAMES, SUPPORTED, UNSUPPORTED, VIRTUAL_FUNCTION
from .pcinames import device_label, near_miss
from .policy.nodes import decide_node

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, Callable

    from .policy import CompiledPolicy
    from .records import DeviceNames

__all__ = ["explain", "verdicts", "tally", "card_counts", "node_data"]

Ids = tuple  # (vendor, device, subvendor, subdevice); None: absent


def explain(compiled: CompiledPolicy, status: int, ids: Ids, db: DeviceNames | None
            ) -> tuple[str | None, Any, str | None]:
    """``(pci.ids name, near miss, note)`` of a device of ``status`` and ``ids``."""
    v, d, sv, sd = ids
    name = device_label(db, v, d, sv, sd)
    note = miss = None
    if status == UNSUPPORTED:
        rule = compiled.rule_for(v, d, sv, sd)
        if rule is not None and rule.card < 0:
            note = "denied by policy" + (f": {rule.reason}" if rule.reason else "")
        else:
            note = "not on the allowlist: a plain display adapter, no GPU support and no slices"
        miss = near_miss(compiled, v, d, name)
    elif status == COMPANION:
        note = "another function of a GPU card (audio, USB, UCSI): not a GPU"
    elif status == VIRTUAL_FUNCTION:
        note = "an SR-IOV virtual function: never counted as a card"
    elif status == INVALID:
        note = "the hardware source flagged this record as unreadable"
    return name, miss, note


def verdicts(compiled: CompiledPolicy, status: list[int], card: list[int], slices: list[int],
             ids: Callable[[int], Ids], db: DeviceNames | None,
             rows: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """Each device's (all, or ``rows``) ``status``, ``card``, ``card_name``, ``slices``,
    ``note`` and ``near_miss`` (a dict or None): the one place a device's classification
    becomes a record's fields.  ``ids(i)`` gives device ``i``'s IDs; the explanation
    depends on the IDs and status alone, so it is made once per distinct pair."""
    cards = compiled.cards
    explained: dict[tuple[Any, ...], tuple[str | None, dict[str, Any] | None]] = {}
    out = []
    for i in range(len(status)) if rows is None else rows:
        i = int(i)
        st, c = status[i], card[i]
        note = near = None
        if st not in (NOT_GPU, SUPPORTED):  # say why they get nothing
            dev = ids(i)
            key = (st, *dev)
            if key not in explained:
                _, miss, why = explain(compiled, st, dev, db)
                explained[key] = (why, None if miss is None else miss._asdict())
            note, near = explained[key]
        out.append({"status": STATUS_NAMES[st], "card": cards[c]["id"] if c >= 0 else None,
                    "card_name": cards[c]["name"] if c >= 0 else None, "slices": slices[i],
                    "note": note, "near_miss": None if near is None else dict(near)})
    return out


def tally(group: list[int], status: list[int], card: list[int]) -> dict[int, dict[int, int]]:
    """Supported cards by group and card index (what a node that mixes models reports).

    >>> tally([0, 0, 1], [1, 1, 1], [2, 3, 2])
    {0: {2: 1, 3: 1}, 1: {2: 1}}
    """
    counts: dict[int, dict[int, int]] = {}
    for g, st, c in zip(group, status, card):
        if st == SUPPORTED:
            per = counts.setdefault(g, {})
            per[c] = per.get(c, 0) + 1
    return counts


def card_counts(row: list[int], counted: dict[int, int] | None = None) -> dict[int, int]:
    """A node's supported cards by card index: ``counted`` where the node mixes models
    (the rollup row keeps one model only), else the row's model and card count."""
    if counted is not None:
        return counted
    cards, model = row[C.R_CARDS], row[C.R_MODEL]
    return {model: cards} if cards and model >= 0 else {}


def node_data(row: list[int], counts: dict[int, int], compiled: CompiledPolicy,
              name: str | int | None = 0) -> dict[str, Any]:
    """A node as plain data (the fields of :class:`gpuclass.models.NodeGpuSummary`) from
    its rollup row (``gpuclass.constants.R_*`` columns) and its cards by index."""
    cards = compiled.cards
    by_id = {cards[c]["id"]: n for c, n in sorted(counts.items()) if c >= 0}
    warnings = []
    if row[C.R_MIXED] & C.MIXED_UNSUPPORTED:
        warnings.append(
            f"mixed node: {row[C.R_CARDS]} supported card(s) next to {row[C.R_UNSUPPORTED]} "
            "unsupported NVIDIA GPU(s); the device plugin may expose the unsupported ones too")
    if row[C.R_MIXED] & C.MIXED_MODELS:
        warnings.append("mixed node: more than one supported card model (" + ", ".join(sorted(by_id)) + ")")
    if row[C.R_INVALID]:
        warnings.append(f"{row[C.R_INVALID]} device record(s) could not be read")
    # the one node decision: labels only without a conflict between the cards
    decided = decide_node([cards[c] for c in sorted(counts) if c >= 0], compiled.slices_per_card)
    return dict(
        node=name, gpu_node=row[C.R_CARDS] > 0,
        labels=decided.labels, conflicts=decided.conflicts, cards=by_id,
        supported_cards=row[C.R_CARDS], slices=row[C.R_SLICES], resource=C.GPU_RESOURCE,
        unsupported_gpus=row[C.R_UNSUPPORTED], companions=row[C.R_COMPANIONS],
        virtual_functions=row[C.R_VFS], invalid=row[C.R_INVALID],
        mixed=bool(row[C.R_MIXED]), warnings=warnings)
