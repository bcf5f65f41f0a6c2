"""A policy compiled for the kernels: match tables, per-card facts, and the one ``rule_for``.

A policy arrives as plain data: the default allowlist (no pydantic), or a
validated :class:`~gpuclass.policy.model.Policy` dumped with integer IDs.  IDs
are parsed once: the default's hex strings here, a custom policy's by its
validation.  "The most specific rule wins" is written
once, in :meth:`CompiledPolicy.rule_for` (``Policy.match`` calls it); the
kernels apply the same tables in bulk.

A compiled policy pickles as its plain data (a few KiB) and unpickles into one
cached instance per process, so workers share frozen tables.

>>> p = compile_default()
>>> p.card_ids[2], p.rule_for(0x10DE, 0x27B0, None, None)
('rtx-4000-sff-ada', RuleHit(card=2, rule=0, reason=None))
>>> p.rule_for(0x10DE, 0x27B2, None, None) is None
True
"""

from __future__ import annotations

import functools

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ..lazy import NamedTuple

from ..constants import COMPANION_CLASSES, GPU_CLASSES, NVIDIA, SLICES_PER_CARD
from ..ids import parse_id
from .default import DEFAULT_POLICY

__all__ = ["CompiledPolicy", "RuleHit", "compile_data", "compile_default"]

Rule = tuple[int, int, "int | None", "int | None"]  # vendor, device, subvendor, subdevice


class RuleHit(NamedTuple):
    """The rule that decides a device: its card (-1 for a deny rule), its index among that
    card's ``match`` rules (or among ``deny``), and a deny rule's reason."""

    card: int
    rule: int
    reason: str | None


def _rule(r: dict, where: str) -> Rule:
    def one(key: str) -> int | None:
        v = r.get(key)
        return None if v is None else v if isinstance(v, int) else parse_id(v, f"{where}.{key}")
    return (one("vendor"), one("device"), one("subvendor"), one("subdevice"))  # type: ignore[return-value]


def _ids(values: Any, what: str) -> tuple[int, ...]:
    return tuple(v if isinstance(v, int) else parse_id(v, what) for v in values)


class CompiledPolicy:
    """A policy as kernel tables plus the per-card facts the results need.

    ``cards`` keeps each card's id, name, family, kernel module, slices, match
    rules (integer tuples) and aliases; ``deny`` the deny rules with reasons;
    ``data`` the policy as plain data with integer IDs (what a pickle carries).
    """

    __slots__ = ("data", "_tables", "_rules", "cards", "deny", "slices_per_card",
                 "fail_requests_greater_than_one", "gpu_classes", "companion_classes", "gpu_vendors",
                 "__weakref__")

    def __init__(self, data: dict) -> None:
        self.slices_per_card = int(data.get("slices_per_card", SLICES_PER_CARD))
        self.cards = tuple(
            {"id": c["id"], "name": c["name"], "family": c["family"],
             "kernel_module": c["kernel_module"],
             "slices": int(c.get("slices") or self.slices_per_card),
             "match": [_rule(r, f"cards[{i}].match[{j}]") for j, r in enumerate(c["match"])],
             "aliases": list(c.get("aliases", []))}
            for i, c in enumerate(data.get("cards", [])))
        self.deny = tuple((*_rule(r, f"deny[{j}]"), r.get("reason", "") or "")
                          for j, r in enumerate(data.get("deny", [])))
        self.gpu_classes = _ids(data.get("gpu_classes", GPU_CLASSES), "gpu_classes")
        self.companion_classes = _ids(data.get("companion_classes", COMPANION_CLASSES),
                                      "companion_classes")
        self.gpu_vendors = _ids(data.get("gpu_vendors", (NVIDIA,)), "gpu_vendors")
        self.fail_requests_greater_than_one = bool(data.get("fail_requests_greater_than_one", True))
        self._tables = None
        self._rules = None
        self.data = self._plain()

    @property
    def rules(self):
        """The matcher's rules as plain data (:class:`~gpuclass._native.RuleMaps`: checked,
        precedence decided, no numpy), built on first use; :attr:`tables` lays them out for
        the kernels, and ``gpuclass._native.match_rows`` applies them to a few devices
        given as lists."""
        if self._rules is None:
            from .._native import compile_rules

            rules = [(*m, i) for i, c in enumerate(self.cards) for m in c["match"]]
            rules += [(*d[:4], -1) for d in self.deny]
            self._rules = compile_rules(
                rules, [c["slices"] for c in self.cards], gpu_classes=self.gpu_classes,
                companion_classes=self.companion_classes, gpu_vendors=self.gpu_vendors)
        return self._rules

    @property
    def tables(self):
        """The kernels' :class:`~gpuclass._native.MatchTables`, built on first use (a listing
        audit needs the cards only, and no numpy)."""
        if self._tables is None:
            from .._native import tables_from_rules

            self._tables = tables_from_rules(self.rules)
        return self._tables

    def _plain(self) -> dict:
        """The policy as plain data with integer IDs: small, picklable, compiles to the same tables."""
        def rule(m) -> dict:
            return {k: v for k, v in zip(("vendor", "device", "subvendor", "subdevice"), m)
                    if v is not None}
        return {
            "slices_per_card": self.slices_per_card,
            "fail_requests_greater_than_one": self.fail_requests_greater_than_one,
            "gpu_classes": list(self.gpu_classes), "companion_classes": list(self.companion_classes),
            "gpu_vendors": list(self.gpu_vendors),
            "cards": [{**{k: c[k] for k in ("id", "name", "family", "kernel_module", "slices",
                                             "aliases")},
                       "match": [rule(m) for m in c["match"]]} for c in self.cards],
            "deny": [{**rule(d[:4]), "reason": d[4]} for d in self.deny],
        }

    def __reduce__(self):
        return (_from_data, (_freeze(self.data),))

    @property
    def needs_subsystem(self) -> bool:
        """Whether some rule (a card's ``match`` or a ``deny``) names a subsystem: only then
        can a device's subsystem IDs change which rule decides it (the kernels' tables then
        have subsystem keys).  A malformed subsystem flags its row whatever this says.

        >>> compile_default().needs_subsystem
        False
        """
        return any(m[2] is not None for c in self.cards for m in c["match"]) or any(
            d[2] is not None for d in self.deny)

    @property
    def card_ids(self) -> tuple[str, ...]:
        return tuple(c["id"] for c in self.cards)

    def rule_for(self, vendor: int | None, device: int | None, subvendor: int | None,
                 subdevice: int | None) -> RuleHit | None:
        """The most specific rule for one device, or None: a rule naming the device's
        subsystem beats one naming only the device; among equals the first written."""
        best: RuleHit | None = None
        rules = [(i, j, m, None) for i, c in enumerate(self.cards) for j, m in enumerate(c["match"])]
        rules += [(-1, j, d[:4], d[4]) for j, d in enumerate(self.deny)]
        for card, index, (v, d, sv, sd), reason in rules:
            if (v, d) != (vendor, device):
                continue
            if sv is None:
                if best is None:
                    best = RuleHit(card, index, reason)
            elif subvendor is not None and (sv, sd) == (subvendor, subdevice):
                return RuleHit(card, index, reason)
        return best

    def gpu_card(self, index: int):
        """The :class:`gpuclass.models.GpuCard` of a card index."""
        from ..models import GpuCard

        return GpuCard(**self.card_data(index))

    def card_data(self, index: int) -> dict:
        """The supported card model of a card index as plain data: the fields of
        :class:`gpuclass.models.GpuCard`, in its order (a report's ``cards`` entry)."""
        c = self.cards[index]
        ids = [":".join(f"{x:04x}" for x in m if x is not None) for m in c["match"]]
        return {"id": c["id"], "name": c["name"], "family": c["family"],
                "kernel_module": c["kernel_module"], "slices": c["slices"], "device_ids": ids}


def _freeze(value: Any) -> Any:
    """Plain data as nested tuples, hashable, so that equal policies share one compiled copy."""
    if isinstance(value, dict):
        return ("__dict__", tuple((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, tuple):
        if len(value) == 2 and value[0] == "__dict__":
            return {k: _thaw(v) for k, v in value[1]}
        return [_thaw(v) for v in value]
    return value


_CANONICAL: dict[Any, CompiledPolicy] = {}


@functools.lru_cache(maxsize=16)
def _from_data(frozen: Any) -> CompiledPolicy:
    """One compiled (frozen-table) copy per distinct policy and process: however a policy
    arrives (the default's hex strings, a validated model, a pickle's plain data), equal
    policies share one instance, and so the kernels' per-table caches."""
    compiled = CompiledPolicy(_thaw(frozen))
    return _CANONICAL.setdefault(_freeze(compiled.data), compiled)


@functools.lru_cache(maxsize=1)
def _default_compiled() -> CompiledPolicy:
    return _from_data(_freeze(DEFAULT_POLICY))


def compile_data(data: dict) -> CompiledPolicy:
    """The compiled copy of a policy given as plain data (one per distinct policy and process)."""
    return _from_data(_freeze(data))


def compile_default() -> CompiledPolicy:
    """The platform's allowlist, compiled (without pydantic)."""
    return _default_compiled()
