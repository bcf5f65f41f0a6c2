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

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from . import constants as C
from ._native import core as _default_core
from .constants import COMPANION, INVALID, NOT_GPU, STATUS_NAMES, SUPPORTED, UNSUPPORTED, VIRTUAL_FUNCTION
from .errors import InputError
from . import verdicts as _verdicts
from .pcinames import default_names
from .policy import CompiledPolicy, compile_policy

if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import ModuleType

    from numpy.typing import ArrayLike

    from .models import DeviceClassification
    from .policy import PolicyArg
    from .records import DeviceNames

__all__ = [
    "NOT_GPU", "SUPPORTED", "UNSUPPORTED", "COMPANION", "VIRTUAL_FUNCTION", "INVALID",
    "STATUS_NAMES", "CompiledPolicy", "compile_policy", "classify", "classify_table",
    "ClassificationResult", "Rollup", "summarize",
]


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

    def summary(self, n_groups: int | None = None, *, core: ModuleType | None = None) -> "Rollup":
        """Roll the devices up per group (one group when classified without one)."""
        return summarize(self, n_groups=n_groups, core=core)

    def _value(self, name: str, i: int):
        a = self.inputs.get(name)
        return None if a is None else int(np.asarray(a)[i])

    def _ids(self, i: int) -> tuple[Any, Any, Any, Any]:
        return (self._value("vendor", i), self._value("device", i), *self._subsystem(i))

    def explain(self, i: int, db: DeviceNames | None = None) -> tuple[str | None, Any, str | None]:
        """``(pci.ids name, near miss, note)`` for device ``i`` (:func:`gpuclass.verdicts.explain`)."""
        db = default_names() if db is None else db
        return _verdicts.explain(self.compiled, int(self.status[i]), self._ids(i), db)

    def verdicts(self, db: DeviceNames | None = None, indices: Iterable[int] | None = None) -> list[dict[str, Any]]:
        """What the policy makes of each device (all, or ``indices``): ``status``, ``card``,
        ``card_name``, ``slices``, ``note`` and ``near_miss`` (a dict or None), as plain
        data (:func:`gpuclass.verdicts.verdicts`: :meth:`devices` and ``gpuclass scan``
        both use it)."""
        names = default_names() if db is None else db
        return _verdicts.verdicts(self.compiled, self.status.tolist(), self.card.tolist(),
                                  self.slices.tolist(), self._ids, names, indices)

    def devices(self, db: DeviceNames | None = None,
                indices: Iterable[int] | None = None) -> list[DeviceClassification]:
        """Devices as :class:`gpuclass.models.DeviceClassification` (all, or ``indices``), in the
        shared record shape of :mod:`gpuclass.records` and :meth:`verdicts`; names from ``db``
        (default: the default database where it loads; :data:`gpuclass.pcinames.NO_NAMES`
        for none)."""
        from .models import DeviceClassification, NearMiss
        from .records import device_record, table_records

        names = default_names() if db is None else db
        rows = [int(i) for i in (range(len(self)) if indices is None else indices)]
        table = self.inputs.get("table")
        # a device table's rows as its records say them (a row the source flagged gets no
        # names and no invented address); bare arrays through the shared record alone
        records = table_records(table, names) if table is not None else None
        revision, driver = self.inputs.get("revision"), self.inputs.get("driver")
        out = []
        for i, verdict in zip(rows, self.verdicts(names, rows)):
            sv, sd = self._subsystem(i)
            rec = device_record(
                self._value("vendor", i), self._value("device", i), self._value("class_code", i),
                subvendor=sv, subdevice=sd,
                revision=None if revision is None else int(revision[i]),
                driver=None if driver is None else driver[i], slot=self._address(i),
                db=names if records is None else None)
            if records is not None:
                rec = {k: records[i][k] for k in rec}
            miss = verdict.pop("near_miss")
            out.append(DeviceClassification(index=i, **rec, **verdict,
                                            near_miss=NearMiss(**miss) if miss else None))
        return out

    def _subsystem(self, i: int) -> tuple[int | None, int | None]:
        hs = self.inputs.get("has_subsystem")
        if hs is not None and not bool(np.asarray(hs)[i]):
            return None, None
        return self._value("subvendor", i), self._value("subdevice", i)

    def _address(self, i: int) -> str | None:
        if self.inputs.get("domain") is None:
            return None
        fn = self._value("function", i)
        addr = (f"{self._value('domain', i):04x}:{self._value('bus', i):02x}:"
                f"{self._value('slot', i):02x}")
        return addr if fn is None else f"{addr}.{fn:x}"


def classify(vendor: ArrayLike, device: ArrayLike, subvendor: ArrayLike | None = None,
             subdevice: ArrayLike | None = None, class_code: ArrayLike | None = None, *,
             has_subsystem: ArrayLike | None = None, flags: ArrayLike | None = None,
             group: ArrayLike | None = None, domain: ArrayLike | None = None,
             bus: ArrayLike | None = None, slot: ArrayLike | None = None,
             function: ArrayLike | None = None, policy: PolicyArg = None,
             core: ModuleType | None = None, threads: int | None = None) -> ClassificationResult:
    """Classify devices given as ID arrays (``class_code`` is the 24-bit PCI class).

    ``domain``/``bus``/``slot`` let the kernel tie a card's audio/USB functions
    to the GPU in the same slot (``group`` keeps machines apart when one batch
    holds many); without them such functions of a GPU vendor count as
    companions of an unknown card.  From half a million devices on, the rows are
    shared out to threads, one per usable CPU (its affinity, within a cgroup CPU quota;
    at most four) unless ``threads`` says fewer; the answer is the same on any number.
    From 131,072 devices on, the result's arrays are written into memory kept from an
    earlier call's once that result was let go (at most 128 MiB is kept), so a loop over
    batches of one size does not pay for new pages each time.
    """
    compiled = compile_policy(policy)
    k = _default_core if core is None else core
    status, card, slices = k.match_devices(
        compiled.tables, vendor, device, subvendor, subdevice, class_code,
        has_subsystem=has_subsystem, flags=flags, group=group, domain=domain, bus=bus, slot=slot,
        threads=threads)
    inputs = {"vendor": vendor, "device": device, "subvendor": subvendor, "subdevice": subdevice,
              "class_code": class_code, "has_subsystem": has_subsystem, "flags": flags,
              "domain": domain, "bus": bus, "slot": slot, "function": function}
    return ClassificationResult(status, card, slices, compiled, inputs,
                                None if group is None else np.asarray(group))


def classify_table(table: Any, policy: PolicyArg = None, *, group: ArrayLike | None = None,
                   core: ModuleType | None = None) -> ClassificationResult:
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
    result = classify(vendor, device, sv, sd, class_code, has_subsystem=hs, flags=get("flags", None),
                      group=group, domain=addr[0], bus=addr[1], slot=addr[2],
                      function=get("function", None) if addr[0] is not None else None,
                      policy=policy, core=core)
    # kept for the device records (rev, driver); the kernels do not need them
    result.inputs["revision"] = get("revision", None)
    result.inputs["driver"] = get("driver", None)
    if hasattr(table, "problems") and hasattr(table, "addresses"):  # a DeviceTable: its records
        result.inputs["table"] = table
    return result


class Rollup:
    """Per-node totals as arrays: supported cards, slices, unsupported GPUs, ... and mixed bits."""

    def __init__(self, matrix: np.ndarray, compiled: CompiledPolicy,
                 card_counts: dict[int, dict[int, int]] | None = None) -> None:
        self.matrix = matrix
        self.compiled = compiled
        self._card_counts = card_counts
        self.cards = matrix[:, C.R_CARDS]
        self.slices = matrix[:, C.R_SLICES]
        self.unsupported = matrix[:, C.R_UNSUPPORTED]
        self.companions = matrix[:, C.R_COMPANIONS]
        self.virtual_functions = matrix[:, C.R_VFS]
        self.invalid = matrix[:, C.R_INVALID]
        self.model = matrix[:, C.R_MODEL]
        self.mixed = matrix[:, C.R_MIXED]

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def gpu_node(self) -> np.ndarray:
        """A node is a GPU node when it carries at least one allowlisted card."""
        return self.cards > 0

    def card_counts(self, i: int) -> dict[int, int]:
        """Supported cards of group ``i`` by card index."""
        return _verdicts.card_counts([int(x) for x in self.matrix[i]], (self._card_counts or {}).get(i))

    def node_data(self, i: int, name: str | int | None = None) -> dict[str, Any]:
        """Group ``i`` as plain data: the fields of :class:`gpuclass.models.NodeGpuSummary`
        (:func:`gpuclass.verdicts.node_data`)."""
        row = [int(x) for x in self.matrix[i]]
        counts = _verdicts.card_counts(row, (self._card_counts or {}).get(i))
        return _verdicts.node_data(row, counts, self.compiled, i if name is None else name)

    def node(self, i: int, name: str | int | None = None):
        """Group ``i`` as a :class:`gpuclass.models.NodeGpuSummary`."""
        from .models import NodeGpuSummary

        return NodeGpuSummary(**self.node_data(i, name))

    def nodes(self, names=None) -> list:
        return [self.node(i, None if names is None else names[i]) for i in range(len(self))]


def summarize(result: ClassificationResult | None = None, *, status: ArrayLike | None = None,
              card: ArrayLike | None = None, slices: ArrayLike | None = None,
              group: ArrayLike | None = None, n_groups: int | None = None, policy: PolicyArg = None,
              core: ModuleType | None = None) -> Rollup:
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
    mixed_models = np.flatnonzero(matrix[:, C.R_MIXED] & C.MIXED_MODELS)
    if mixed_models.size:
        st = np.asarray(status)
        g = np.zeros(st.shape[0], dtype=np.int64) if group is None else np.asarray(group)
        sel = (st == SUPPORTED) & np.isin(g, mixed_models)
        counts = _verdicts.tally(g[sel].tolist(), st[sel].tolist(), np.asarray(card)[sel].tolist())
    return Rollup(matrix, compiled, counts)
