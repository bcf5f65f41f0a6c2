"""Classify devices against the allowlist: IDs in, status, card and slices out.

The policy is compiled once into flat tables (:func:`compile_policy`); the
native kernel applies them to any number of devices with the GIL released.
Results stay arrays (:class:`ClassificationResult`, :class:`Rollup`); the
pydantic models of :mod:`gpuclass.models` are built only on request, so the
default path never imports pydantic.

>>> r = classify([0x10de, 0x10de, 0x8086], [0x27b0, 0x27b2, 0x1533], None, None,
...              [0x030000, 0x030000, 0x020000])
>>> r.status_names()
['supported', 'unsupported', 'not-gpu']
>>> r.card_ids()
['rtx-4000-sff-ada', None, None]
>>> int(r.slices.sum()), r.summary().node(0).gpu_node
(4, True)
"""

from __future__ import annotations

import copy
import functools
import os
import re
from difflib import SequenceMatcher
from typing import Any, NamedTuple

import numpy as np

from . import _matchspec as MS
from ._allowlist import DEFAULT_POLICY
from ._core_select import core as _default_core
from ._matchspec import (COMPANION, INVALID, NOT_GPU, STATUS_NAMES, SUPPORTED, UNSUPPORTED,
                         VIRTUAL_FUNCTION, MatchTables, build_match_tables)
from .errors import InputError

__all__ = [
    "NOT_GPU", "SUPPORTED", "UNSUPPORTED", "COMPANION", "VIRTUAL_FUNCTION", "INVALID",
    "STATUS_NAMES", "CompiledPolicy", "compile_policy", "classify", "classify_table",
    "ClassificationResult", "Rollup", "summarize", "near_miss", "NearMissInfo",
]


def _id(value: Any) -> int:
    return value if isinstance(value, int) else int(str(value), 16)


class CompiledPolicy:
    """A policy as kernel tables plus the per-card facts the results need.

    ``data`` is the policy as a plain dict (IDs as ints or hex strings);
    ``cards`` keeps each card's id, name, family, kernel module and slices.
    """

    __slots__ = ("tables", "cards", "deny", "data", "fail_requests_greater_than_one")

    def __init__(self, data: dict) -> None:
        self.data = data
        default_slices = int(data.get("slices_per_card", 4))
        self.cards = tuple(
            {"id": c["id"], "name": c["name"], "family": c["family"],
             "kernel_module": c["kernel_module"],
             "slices": int(c.get("slices") or default_slices),
             "match": [(_id(r["vendor"]), _id(r["device"]),
                        None if r.get("subvendor") is None else _id(r["subvendor"]),
                        None if r.get("subdevice") is None else _id(r["subdevice"]))
                       for r in c["match"]],
             "aliases": list(c.get("aliases", []))}
            for c in data.get("cards", []))
        self.deny = tuple(
            (_id(r["vendor"]), _id(r["device"]),
             None if r.get("subvendor") is None else _id(r["subvendor"]),
             None if r.get("subdevice") is None else _id(r["subdevice"]), r.get("reason", ""))
            for r in data.get("deny", []))
        rules = [(*m, i) for i, c in enumerate(self.cards) for m in c["match"]]
        rules += [(*d[:4], -1) for d in self.deny]
        self.tables: MatchTables = build_match_tables(
            rules, [c["slices"] for c in self.cards],
            gpu_classes=[_id(x) for x in data.get("gpu_classes", ["0300", "0302"])],
            companion_classes=[_id(x) for x in data.get("companion_classes", ["0403", "0c03", "0c80"])],
            gpu_vendors=[_id(x) for x in data.get("gpu_vendors", ["10de"])],
        )
        self.fail_requests_greater_than_one = bool(data.get("fail_requests_greater_than_one", True))

    @property
    def card_ids(self) -> tuple[str, ...]:
        return tuple(c["id"] for c in self.cards)

    def rule_for(self, vendor: int, device: int, subvendor: int | None, subdevice: int | None):
        """``(card index or -1, deny reason or None)`` of the most specific rule, or None."""
        best = None
        for i, c in enumerate(self.cards):
            for v, d, sv, sd in c["match"]:
                if (v, d) == (vendor, device):
                    if sv is None:
                        best = best or (i, None)
                    elif subvendor is not None and (sv, sd) == (subvendor, subdevice):
                        return (i, None)
        for v, d, sv, sd, reason in self.deny:
            if (v, d) == (vendor, device):
                if sv is None:
                    best = best or (-1, reason)
                elif subvendor is not None and (sv, sd) == (subvendor, subdevice):
                    return (-1, reason)
        return best

    def gpu_card(self, index: int):
        """The :class:`gpuclass.models.GpuCard` of a card index."""
        from .models import GpuCard

        c = self.cards[index]
        ids = [":".join(f"{x:04x}" for x in m if x is not None) for m in c["match"]]
        return GpuCard(id=c["id"], name=c["name"], family=c["family"],
                       kernel_module=c["kernel_module"], slices=c["slices"], device_ids=ids)


@functools.lru_cache(maxsize=1)
def _default_compiled() -> CompiledPolicy:
    return CompiledPolicy(copy.deepcopy(DEFAULT_POLICY))


def compile_policy(policy: Any = None) -> CompiledPolicy:
    """Compile a policy: None (the default allowlist), a Policy, a dict, a file path, or a CompiledPolicy."""
    if policy is None:
        return _default_compiled()
    if isinstance(policy, CompiledPolicy):
        return policy
    from .policy import Policy  # pydantic only when a custom policy is given

    if isinstance(policy, (str, os.PathLike)):
        policy = Policy.load(policy)
    elif isinstance(policy, dict):
        policy = Policy.from_data(policy)
    if not isinstance(policy, Policy):
        raise InputError(f"policy: expected a Policy, dict, path or None, got {type(policy).__name__}")
    return CompiledPolicy(policy.model_dump(mode="python"))


class NearMissInfo(NamedTuple):
    card: str
    card_name: str
    reason: str


class ClassificationResult:
    """Per-device status (uint8), card index (int16, -1: none) and slices (uint16)."""

    def __init__(self, status: np.ndarray, card: np.ndarray, slices: np.ndarray,
                 compiled: CompiledPolicy, inputs: dict[str, Any], group: np.ndarray | None) -> None:
        self.status = status
        self.card = card
        self.slices = slices
        self.compiled = compiled
        self.inputs = inputs
        self.group = group

    def __len__(self) -> int:
        return int(self.status.shape[0])

    @property
    def supported(self) -> np.ndarray:
        return self.status == SUPPORTED

    @property
    def total_slices(self) -> int:
        return int(self.slices.sum(dtype=np.int64))

    @property
    def supported_cards(self) -> int:
        return int(np.count_nonzero(self.status == SUPPORTED))

    def status_names(self) -> list[str]:
        return [STATUS_NAMES[s] for s in self.status.tolist()]

    def card_ids(self) -> list[str | None]:
        ids = self.compiled.card_ids
        return [ids[c] if c >= 0 else None for c in self.card.tolist()]

    def summary(self, n_groups: int | None = None, *, core=None) -> "Rollup":
        """Roll the devices up per group (one group when classified without one)."""
        return summarize(self, n_groups=n_groups, core=core)

    def _value(self, name: str, i: int):
        a = self.inputs.get(name)
        return None if a is None else int(np.asarray(a)[i])

    def explain(self, i: int, db: Any = None) -> tuple[str | None, NearMissInfo | None, str | None]:
        """``(pci.ids name, near miss, note)`` for device ``i``."""
        v, d = self._value("vendor", i), self._value("device", i)
        sv, sd = self._value("subvendor", i), self._value("subdevice", i)
        hs = self.inputs.get("has_subsystem")
        if hs is not None and not bool(np.asarray(hs)[i]):
            sv = sd = None
        db = _database() if db is None else db
        name = _device_label(db, v, d, sv, sd)
        st = int(self.status[i])
        note = miss = None
        if st == UNSUPPORTED:
            rule = self.compiled.rule_for(v, d, sv, sd)
            if rule is not None and rule[0] < 0:
                note = "denied by policy" + (f": {rule[1]}" if rule[1] else "")
            else:
                note = "not on the allowlist: a plain display adapter, no GPU support and no slices"
            miss = near_miss(self.compiled, v, d, name)
        elif st == SUPPORTED:
            note = None
        elif st == COMPANION:
            note = "another function of a GPU card (audio, USB, UCSI): not a GPU"
        elif st == VIRTUAL_FUNCTION:
            note = "an SR-IOV virtual function: never counted as a card"
        elif st == INVALID:
            note = "the hardware source flagged this record as unreadable"
        return name, miss, note

    def devices(self, db: Any = None, indices=None) -> list:
        """Devices as :class:`gpuclass.models.DeviceClassification` (all, or ``indices``)."""
        from .models import DeviceClassification, NearMiss

        out = []
        rows = range(len(self)) if indices is None else indices
        ids = self.compiled.cards
        for i in rows:
            i = int(i)
            name, miss, note = self.explain(i, db)
            c = int(self.card[i])
            sv, sd = self._value("subvendor", i), self._value("subdevice", i)
            hs = self.inputs.get("has_subsystem")
            if hs is not None and not bool(np.asarray(hs)[i]):
                sv = sd = None
            out.append(DeviceClassification(
                index=i, address=self._address(i),
                vendor=f"{self._value('vendor', i):04x}", device=f"{self._value('device', i):04x}",
                subvendor=None if sv is None else f"{sv:04x}",
                subdevice=None if sd is None else f"{sd:04x}",
                class_code=f"{self._value('class_code', i):06x}",
                status=STATUS_NAMES[int(self.status[i])],
                card=ids[c]["id"] if c >= 0 else None, card_name=ids[c]["name"] if c >= 0 else None,
                slices=int(self.slices[i]), name=name,
                near_miss=NearMiss(**miss._asdict()) if miss else None, note=note))
        return out

    def _address(self, i: int) -> str | None:
        if self.inputs.get("domain") is None:
            return None
        fn = self._value("function", i)
        addr = (f"{self._value('domain', i):04x}:{self._value('bus', i):02x}:"
                f"{self._value('slot', i):02x}")
        return addr if fn is None else f"{addr}.{fn:x}"


def classify(vendor, device, subvendor=None, subdevice=None, class_code=None, *,
             has_subsystem=None, flags=None, group=None, domain=None, bus=None, slot=None,
             function=None, policy: Any = None, core=None) -> ClassificationResult:
    """Classify devices given as ID arrays (``class_code`` is the 24-bit PCI class).

    ``domain``/``bus``/``slot`` let the kernel tie a card's audio/USB functions
    to the GPU in the same slot (``group`` keeps machines apart when one batch
    holds many); without them such functions of a GPU vendor count as
    companions of an unknown card.
    """
    compiled = compile_policy(policy)
    k = _default_core if core is None else core
    status, card, slices = k.match_devices(
        compiled.tables, vendor, device, subvendor, subdevice, class_code,
        has_subsystem=has_subsystem, flags=flags, group=group, domain=domain, bus=bus, slot=slot)
    inputs = {"vendor": vendor, "device": device, "subvendor": subvendor, "subdevice": subdevice,
              "class_code": class_code, "has_subsystem": has_subsystem, "flags": flags,
              "domain": domain, "bus": bus, "slot": slot, "function": function}
    return ClassificationResult(status, card, slices, compiled, inputs,
                                None if group is None else np.asarray(group))


def classify_table(table: Any, policy: Any = None, *, group=None, core=None) -> ClassificationResult:
    """Classify a DeviceTable (any object with its array attributes; see gpuclass.devices).

    Uses ``subvendor``/``subdevice``/``has_subsystem``, ``flags`` and the
    ``domain``/``bus``/``slot`` address when the table has them.
    """
    get = functools.partial(getattr, table)
    try:
        vendor, device, class_code = get("vendor"), get("device"), get("class_code")
    except AttributeError as exc:
        raise InputError(f"table: not a device table ({exc})") from None
    sv, sd = get("subvendor", None), get("subdevice", None)
    hs = get("has_subsystem", None) if sv is not None else None
    addr = [get(n, None) for n in ("domain", "bus", "slot")]
    if any(a is None for a in addr):
        addr = [None, None, None]
    return classify(vendor, device, sv, sd, class_code, has_subsystem=hs, flags=get("flags", None),
                    group=group, domain=addr[0], bus=addr[1], slot=addr[2],
                    function=get("function", None) if addr[0] is not None else None,
                    policy=policy, core=core)


class Rollup:
    """Per-node totals as arrays: supported cards, slices, unsupported GPUs, ... and mixed bits."""

    def __init__(self, matrix: np.ndarray, compiled: CompiledPolicy,
                 card_counts: dict[int, dict[int, int]] | None = None) -> None:
        self.matrix = matrix
        self.compiled = compiled
        self._card_counts = card_counts
        self.cards = matrix[:, MS.R_CARDS]
        self.slices = matrix[:, MS.R_SLICES]
        self.unsupported = matrix[:, MS.R_UNSUPPORTED]
        self.companions = matrix[:, MS.R_COMPANIONS]
        self.virtual_functions = matrix[:, MS.R_VFS]
        self.invalid = matrix[:, MS.R_INVALID]
        self.model = matrix[:, MS.R_MODEL]
        self.mixed = matrix[:, MS.R_MIXED]

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def gpu_node(self) -> np.ndarray:
        """A node is a GPU node when it carries at least one allowlisted card."""
        return self.cards > 0

    def node(self, i: int, name: str | int | None = None):
        """Group ``i`` as a :class:`gpuclass.models.NodeGpuSummary`."""
        from .models import GPU_LABEL, NodeGpuSummary

        row = [int(x) for x in self.matrix[i]]
        cards = self.compiled.cards
        counts = (self._card_counts or {}).get(i)
        if counts is None:
            counts = {row[MS.R_MODEL]: row[MS.R_CARDS]} if row[MS.R_CARDS] and row[MS.R_MODEL] >= 0 else {}
        by_id = {cards[c]["id"]: n for c, n in sorted(counts.items()) if c >= 0}
        warnings = []
        if row[MS.R_MIXED] & MS.MIXED_UNSUPPORTED:
            warnings.append(
                f"mixed node: {row[MS.R_CARDS]} supported card(s) next to {row[MS.R_UNSUPPORTED]} "
                "unsupported NVIDIA GPU(s); the device plugin may expose the unsupported ones too")
        if row[MS.R_MIXED] & MS.MIXED_MODELS:
            warnings.append("mixed node: more than one supported card model ("
                            + ", ".join(sorted(by_id)) + ")")
        if row[MS.R_INVALID]:
            warnings.append(f"{row[MS.R_INVALID]} device record(s) could not be read")
        gpu = row[MS.R_CARDS] > 0
        return NodeGpuSummary(
            node=i if name is None else name, gpu_node=gpu,
            labels={GPU_LABEL: "true"} if gpu else {}, cards=by_id,
            supported_cards=row[MS.R_CARDS], slices=row[MS.R_SLICES],
            unsupported_gpus=row[MS.R_UNSUPPORTED], companions=row[MS.R_COMPANIONS],
            virtual_functions=row[MS.R_VFS], invalid=row[MS.R_INVALID],
            mixed=bool(row[MS.R_MIXED]), warnings=warnings)

    def nodes(self, names=None) -> list:
        return [self.node(i, None if names is None else names[i]) for i in range(len(self))]


def summarize(result: ClassificationResult | None = None, *, status=None, card=None, slices=None,
              group=None, n_groups: int | None = None, policy: Any = None, core=None) -> Rollup:
    """Roll devices up per node: from a ClassificationResult, or from raw arrays.

    ``group`` (node index per device, ``0 <= group < n_groups``) defaults to the
    result's group, else everything is one node.
    """
    if result is not None:
        status, card, slices = result.status, result.card, result.slices
        group = result.group if group is None else group
        compiled = result.compiled
    else:
        if status is None or card is None or slices is None:
            raise InputError("summarize: give a ClassificationResult or status, card and slices")
        compiled = compile_policy(policy)
    if n_groups is None:
        g = None if group is None else np.asarray(group)
        n_groups = 1 if g is None else (int(g.max()) + 1 if g.size else 0)
    k = _default_core if core is None else core
    matrix = k.rollup(status, card, slices, group, n_groups)
    # Per-card counts only for the (few) nodes that mix card models.
    counts: dict[int, dict[int, int]] = {}
    mixed_models = np.flatnonzero(matrix[:, MS.R_MIXED] & MS.MIXED_MODELS)
    if mixed_models.size:
        st = np.asarray(status)
        g = np.zeros(st.shape[0], dtype=np.int64) if group is None else np.asarray(group)
        sel = (st == SUPPORTED) & np.isin(g, mixed_models)
        for gi, ci in zip(g[sel].tolist(), np.asarray(card)[sel].tolist()):
            counts.setdefault(gi, {}).setdefault(ci, 0)
            counts[gi][ci] += 1
    return Rollup(matrix, compiled, counts)


# -- names and near misses -------------------------------------------------------

# the first innermost bracket ("[" excluded inside: otherwise "[[[[..." is quadratic)
_BRACKET = re.compile(r"\[([^\[\]]+)\]")
_MODEL_NUMBER = re.compile(r"(?<![0-9])([0-9]{3,5})")


def _marketing(name: str) -> str:
    """The marketing part of a pci.ids name: ``GP102 [GeForce GTX 1080 Ti]`` -> the bracket."""
    m = _BRACKET.search(name)
    return m.group(1) if m else name


def _numbers(name: str) -> set[str]:
    return set(_MODEL_NUMBER.findall(name))


def near_miss(compiled: CompiledPolicy, vendor: int | None, device: int | None,
              name: str | None) -> NearMissInfo | None:
    """The allowlisted card an unsupported device is easily mistaken for, if any.

    Two names are close when they share a model number (1080, 4000, 6000): the
    GTX 1080 Ti 10GB (``1b01``), RTX 4000 Ada (``27b2``), RTX PRO 6000D
    (``2bb2``) and Quadro RTX 6000 all come out as near misses, a GTX 1070 does not.
    """
    if not name:
        return None
    # pci.ids names fit in a 1024-byte line; a longer (hostile) text would make the
    # SequenceMatcher below quadratic
    text = _marketing(name[:1024])
    numbers = _numbers(text)
    best = None
    for c in compiled.cards:
        if any((v, d) == (vendor, device) and sv is None for v, d, sv, sd in c["match"]):
            continue
        names = [c["name"], *c["aliases"]]
        if not numbers & set().union(*(_numbers(n) for n in names)):
            continue
        score = max(SequenceMatcher(None, text.casefold(), n.casefold()).ratio() for n in names)
        if best is None or score > best[0]:
            best = (score, c)
    if best is None:
        return None
    c = best[1]
    ids = ", ".join(f"{v:04x}:{d:04x}" for v, d, sv, sd in c["match"])
    return NearMissInfo(c["id"], c["name"],
                        f"{text} ({vendor:04x}:{device:04x}) is not the {c['name']} ({ids}); "
                        "only the listed IDs are supported")


def _device_label(db, v, d, sv, sd) -> str | None:
    if db is None or v is None or d is None:
        return None
    try:
        if sv is not None:
            sub = db.subsystem_name(v, d, sv, sd)
            if sub:
                return sub
        return db.device_name(v, d)
    except Exception:  # a broken database must not break classification
        return None


def _database():
    try:
        from .db import default_database
    except ImportError:
        return None
    try:
        return default_database()
    except Exception:
        return None
