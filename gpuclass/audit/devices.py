"""Device tables: one PCI function per row (``server, vendor, device, subvendor, subdevice,
class``), one report per server.

Rows of a server lie next to each other; a server whose rows are split is
flagged.  IDs are parsed by :func:`gpuclass.ids.id_column`, classified by the
kernel chunk by chunk, and counted through the compiled rollup.

>>> rows = [("a", "10de", "27b0", "10de", "16fa", "0300"), ("a", "10de", "22bc", "", "", "0403"),
...         ("b", "10de", "1e30", "10de", "12ba", "030000"), ("b", "zz", "1", "", "", "0300")]
>>> [(r.server, r.slices, r.rows, r.problems) for r in audit_device_rows(rows)]
[('a', 4, 2, []), ('b', 0, 2, ["row 4: vendor 'zz' is not a hex ID"])]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ..classify import classify
from ..constants import FLAG_INVALID, UNSUPPORTED
from ..ids import id_column
from ..pcinames import unsupported_label
from ..policy import compile_policy
from .readers import CHUNK_ROWS, DEVICE_FIELDS
from .report import ServerReport, card_entries, finish, unsupported_entries

__all__ = ["DeviceAuditor", "audit_device_rows", "class_codes"]


def class_codes(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class cells: 4 hex digits (``0300``: base and subclass) or 6 (``030000``, with prog-if)."""
    ndigits = np.full(len(values), 6, dtype=np.int64)
    val, present, bad = id_column(values, 24, ndigits)
    arr = np.asarray(values) if not isinstance(values, np.ndarray) else values
    # an integer cell cannot show its digits: up to 0xffff it is base class and subclass
    short = val <= 0xFFFF if arr.dtype.kind in "iu" else ndigits <= 4
    val = np.where(short, val << 8, val)
    return val, present, bad



class DeviceAuditor:
    """Reports for a device table, classified chunk by chunk (see the module docstring)."""

    def __init__(self, policy: Any = None, db: Any = None) -> None:
        self.compiled = compile_policy(policy)
        # what a report shows as the evidence of a card found by ID: the rules' IDs
        self.evidence = {i: ", ".join(f"{m[0]:04x}:{m[1]:04x}" for m in c["match"])
                         for i, c in enumerate(self.compiled.cards)}
        self._db = db
        self._seen: set[str] = set()

    def db(self):
        if self._db is None:
            from ..db import default_database
            self._db = default_database()
        return self._db

    def reports(self, chunks: Iterable[dict[str, Any]], source: str) -> Iterator[ServerReport]:
        """``chunks``: dicts of equal-length columns ``row``, ``server``, ``vendor``,
        ``device``, ``subvendor``, ``subdevice``, ``class`` (and optional ``error``)."""
        held: dict[str, np.ndarray] | None = None
        for chunk in chunks:
            cols = self._parse(chunk)
            if held is not None:
                cols = {k: np.concatenate([held[k], cols[k]]) for k in cols}
            n = len(cols["row"])
            if n == 0:
                continue
            change = _boundaries(cols["server"])
            # The last server may go on in the next chunk: hold its rows back.
            cut = int(change[-1]) if change.size else 0
            if cut == 0:
                held = cols
                continue
            held = {k: v[cut:] for k, v in cols.items()}
            yield from self._classify({k: v[:cut] for k, v in cols.items()}, source)
        if held is not None and len(held["row"]):
            yield from self._classify(held, source)

    def _parse(self, chunk: dict[str, Any]) -> dict[str, np.ndarray]:
        n = len(chunk["row"])
        server = np.empty(n, dtype=object)
        server[:] = [None if s is None or (isinstance(s, float) and s != s) or str(s).strip() == ""
                     else str(s) for s in chunk["server"]]
        error = np.empty(n, dtype=object)
        if chunk.get("error") is not None:
            error[:] = chunk["error"]
        nothing = [None] * n
        v, vp, vb = id_column(chunk["vendor"], 16)
        d, dp, db_ = id_column(chunk["device"], 16)
        sub_v = chunk.get("subvendor")
        sub_d = chunk.get("subdevice")
        sv, svp, svb = id_column(nothing if sub_v is None else sub_v, 16)
        sd, sdp, sdb = id_column(nothing if sub_d is None else sub_d, 16)
        c, cp, cb = class_codes(chunk["class"])
        checks = (("vendor", vb | ~vp, chunk["vendor"]), ("device", db_ | ~dp, chunk["device"]),
                  ("class", cb | ~cp, chunk["class"]),
                  ("subvendor", svb, chunk.get("subvendor")), ("subdevice", sdb, chunk.get("subdevice")))
        for name, mask, raw in checks:
            for i in np.flatnonzero(mask).tolist():
                if error[i] is None:
                    cell = raw[i] if raw is not None else None
                    error[i] = (f"{name} missing" if cell is None or str(cell).strip() == ""
                                else f"{name} {cell!r} is not a hex ID")
        pair = svp & sdp & ~svb & ~sdb
        half = (svp != sdp) & ~svb & ~sdb
        for i in np.flatnonzero(half).tolist():
            if error[i] is None:
                error[i] = "subvendor and subdevice go together"
        return {"row": np.asarray(chunk["row"], dtype=np.int64), "server": server, "error": error,
                "vendor": v, "device": d, "subvendor": np.where(pair, sv, 0),
                "subdevice": np.where(pair, sd, 0), "has_subsystem": pair, "class": c}

    def _classify(self, cols: dict[str, np.ndarray], source: str) -> Iterator[ServerReport]:
        names = cols["server"]
        n = len(names)
        starts = np.concatenate([[0], _boundaries(names)]).astype(np.int64)
        n_groups = len(starts)
        group = np.repeat(np.arange(n_groups), np.diff(np.append(starts, n)))
        err = cols["error"]
        invalid = np.fromiter((e is not None for e in err), dtype=bool, count=n)
        res = classify(cols["vendor"].astype(np.uint16), cols["device"].astype(np.uint16),
                       cols["subvendor"].astype(np.uint16), cols["subdevice"].astype(np.uint16),
                       cols["class"].astype(np.uint32), has_subsystem=cols["has_subsystem"],
                       flags=np.where(invalid, FLAG_INVALID, 0).astype(np.uint32), group=group,
                       policy=self.compiled)
        roll = res.summary(n_groups)
        extra_rows: dict[int, list[int]] = {}
        for i in np.flatnonzero((res.status == UNSUPPORTED) | invalid).tolist():
            extra_rows.setdefault(int(group[i]), []).append(i)
        ends = np.append(starts[1:], n)
        rows_list = cols["row"].tolist()
        for g, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
            name = names[s]
            r = ServerReport(rows_list[s], source, name, rows=e - s)
            if name is None:
                r.problems.append("row has no server name")
            elif name in self._seen:
                r.problems.append(f"rows of server {name!r} are not next to each other: "
                                  f"this report covers rows {rows_list[s]}-{rows_list[e - 1]} only")
            else:
                self._seen.add(name)
            r.cards = card_entries(self.compiled, roll.card_counts(g), "id", self.evidence)
            unsupported: dict[str, int] = {}
            for i in extra_rows.get(g, ()):
                if invalid[i]:
                    r.problems.append(f"row {rows_list[i]}: {err[i]}")
                    continue
                label = unsupported_label(self.db(), int(cols["vendor"][i]), int(cols["device"][i]))
                unsupported[label] = unsupported.get(label, 0) + 1
            unsupported_entries(r, unsupported)
            yield finish(r)


def _boundaries(names: np.ndarray) -> np.ndarray:
    """Where a new server starts: the name changes, or a row has no name (each its own report)."""
    if len(names) < 2:
        return np.empty(0, dtype=np.int64)
    nameless = np.fromiter((x is None for x in names[1:]), dtype=bool, count=len(names) - 1)
    return np.flatnonzero((names[1:] != names[:-1]) | nameless) + 1


def audit_device_rows(rows: Iterable[Sequence[Any]], *, policy: Any = None,
                      source: str = "rows") -> Iterator[ServerReport]:
    """Reports for ``(server, vendor, device, subvendor, subdevice, class)`` tuples."""
    def chunks():
        it = iter(enumerate(rows, 1))
        while True:
            part = list(itertools.islice(it, CHUNK_ROWS))
            if not part:
                return
            yield _rows_to_chunk(part)
    return DeviceAuditor(policy).reports(chunks(), source)


def _rows_to_chunk(part: list[tuple[int, Sequence[Any]]]) -> dict[str, Any]:
    numbers = [i for i, _ in part]
    rows = [row for _, row in part]
    error: list[str | None] = [None] * len(rows)
    if all(type(r) is tuple and len(r) == 6 for r in rows):
        cols = list(zip(*rows))  # the common case, transposed at C speed
    else:
        fixed = []
        for k, row in enumerate(rows):
            cells = list(row) if isinstance(row, (list, tuple)) else None
            if cells is None or len(cells) != 6:
                got = len(cells) if cells is not None else type(row).__name__
                error[k] = (f"expected 6 fields (server, vendor, device, subvendor, subdevice, class), "
                            f"got {got}")
                cells = ((cells or []) + [None] * 6)[:6]
            fixed.append(cells)
        cols = list(zip(*fixed)) if fixed else [()] * 6
    out: dict[str, Any] = {"row": numbers, "error": error}
    for k, col in zip(DEVICE_FIELDS, cols):
        out[k] = list(col)
    return out
