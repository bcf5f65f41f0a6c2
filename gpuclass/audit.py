"""Fleet audits: batch inventories in, one report per server out, nothing dropped.

Inputs (:func:`audit_paths` tells them apart by name and content):

- the server auction's JSON feed ``{"server": [{"id": ..., "description": [...],
  "information": [...], "specials": ["GPU", ...], "cpu": ..., "price": ...,
  "datacenter": ...}, ...]}``, streamed record by record;
- NDJSON: one such record per line;
- CSV with a text column (``description`` or ``text``; ``id``/``server`` names it);
- a directory, tar or zip archive of per-server ``lspci -nnmm`` dumps (one
  server per file, named after the file);
- a CSV or Parquet table of ``server, vendor, device, subvendor, subdevice,
  class`` (hex strings or integers), one PCI function per row, rows of a server
  next to each other.

Every input row is accounted for: an auction record, an NDJSON line or a text
CSV row gives exactly one :class:`ServerReport`; a device table gives one
report per server with ``rows`` saying how many input rows it covers.  A
malformed row becomes a report with ``problems``, never a dropped one, and a
``GPU`` special with no recognisable card is a problem too.  Text is matched
by :mod:`gpuclass.text`, IDs by :mod:`gpuclass.classify`; slices are cards
times the policy's slices per card.

Memory stays flat: files are read in chunks, the auction feed is decoded one
record at a time (``json.JSONDecoder.raw_decode`` over a sliding buffer; one
record must fit in memory), and reports are written as they come.  Device
tables keep only the names of servers already seen, to flag a server whose
rows are not contiguous.

>>> feed = {"server": [{"id": 1, "description": ["Intel Core i7-6700", "GPU - Nvidia GeForce GTX 1080"],
...                     "specials": ["GPU"]},
...                    {"id": 2, "description": ["Quadro RTX 6000"], "specials": ["GPU"]}]}
>>> [(r.server, r.gpu_capable, r.slices, r.reason) for r in audit_records(feed["server"])]
[('1', True, 4, '1x GeForce GTX 1080: 4 slices'), ('2', False, 0, 'unsupported GPU only: 1x Quadro RTX 6000 (10de:1e30)')]
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import json
import os
import sys
import tarfile
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from .errors import InputError, SourceError

__all__ = ["ServerReport", "AuditSummary", "audit_records", "audit_texts", "audit_lspci_dumps",
           "audit_device_rows", "audit_paths", "audit_frame", "write_reports", "detect_kind",
           "KINDS", "OUTPUT_FORMATS", "CSV_COLUMNS"]

KINDS = ("feed", "ndjson", "csv", "lspci", "lspci-dir", "archive", "table-csv", "parquet")
OUTPUT_FORMATS = ("table", "json", "ndjson", "csv")
CSV_COLUMNS = ("row", "source", "server", "gpu_capable", "cards", "supported_cards", "slices",
               "unsupported", "unsupported_gpus", "reason", "problems", "rows",
               "cpu", "price", "datacenter")
_PASSTHROUGH = ("cpu", "price", "datacenter")
_TEXT_COLUMNS = ("description", "text", "name", "gpu")
_SERVER_COLUMNS = ("server", "id", "host", "hostname", "node")
_BATCH = 4096           # records matched per automaton pass
_CHUNK_ROWS = 65536     # device-table rows classified per kernel call
_READ = 1 << 20         # bytes read at a time
_MAX_RECORD = 64 << 20  # one feed record larger than this is malformed, not buffered on


@dataclass(slots=True)
class ServerReport:
    """What one server (one input row, or one server's rows of a device table) holds.

    ``cards`` lists ``{"card", "name", "count", "slices", "source", "evidence"}``
    per supported model (``source`` is ``"id"`` or ``"text"``; ``evidence`` the
    IDs or the words matched); ``unsupported`` names each unsupported GPU seen.
    """

    row: int
    source: str
    server: str | None
    gpu_capable: bool = False
    cards: list[dict[str, Any]] = field(default_factory=list)
    supported_cards: int = 0
    slices: int = 0
    unsupported: list[str] = field(default_factory=list)
    unsupported_gpus: int = 0
    reason: str = ""
    problems: list[str] = field(default_factory=list)
    rows: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the passthrough fields ``cpu``, ``price``, ``datacenter`` inline)."""
        out = {
            "row": self.row, "source": self.source, "server": self.server,
            "gpu_capable": self.gpu_capable, "cards": self.cards,
            "supported_cards": self.supported_cards, "slices": self.slices,
            "unsupported": self.unsupported, "unsupported_gpus": self.unsupported_gpus,
            "reason": self.reason, "problems": self.problems, "rows": self.rows,
        }
        out.update(self.extra)
        return out

    def to_flat(self) -> dict[str, Any]:
        """One flat row (CSV, data frames): lists joined with ``"; "``.

        >>> ServerReport(1, "x", "a", cards=[{"card": "gtx-1080", "count": 2}]).to_flat()["cards"]
        'gtx-1080 x2'
        """
        return {
            "row": self.row, "source": self.source, "server": self.server,
            "gpu_capable": self.gpu_capable,
            "cards": "; ".join(f"{c['card']} x{c['count']}" for c in self.cards),
            "supported_cards": self.supported_cards, "slices": self.slices,
            "unsupported": "; ".join(self.unsupported), "unsupported_gpus": self.unsupported_gpus,
            "reason": self.reason, "problems": "; ".join(self.problems), "rows": self.rows,
            **{k: _scalar(self.extra.get(k)) for k in _PASSTHROUGH},
        }


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass
class AuditSummary:
    """Totals over the reports written (:meth:`add` one at a time)."""

    servers: int = 0
    input_rows: int = 0
    gpu_capable: int = 0
    supported_cards: int = 0
    slices: int = 0
    unsupported_gpus: int = 0
    with_unsupported: int = 0
    flagged: int = 0
    cards: dict[str, int] = field(default_factory=dict)

    def add(self, r: ServerReport) -> None:
        self.servers += 1
        self.input_rows += r.rows
        self.gpu_capable += r.gpu_capable
        self.supported_cards += r.supported_cards
        self.slices += r.slices
        self.unsupported_gpus += r.unsupported_gpus
        self.with_unsupported += r.unsupported_gpus > 0
        self.flagged += bool(r.problems)
        for c in r.cards:
            self.cards[c["card"]] = self.cards.get(c["card"], 0) + c["count"]

    def to_dict(self) -> dict[str, Any]:
        return {"servers": self.servers, "input_rows": self.input_rows,
                "gpu_capable": self.gpu_capable, "supported_cards": self.supported_cards,
                "slices": self.slices, "unsupported_gpus": self.unsupported_gpus,
                "servers_with_unsupported": self.with_unsupported, "flagged": self.flagged,
                "cards": dict(sorted(self.cards.items()))}


# -- reasons ------------------------------------------------------------------------


def _finish(r: ServerReport) -> ServerReport:
    """Fill in ``gpu_capable`` and a one-line reason from the cards found."""
    r.supported_cards = sum(c["count"] for c in r.cards)
    r.slices = sum(c["slices"] for c in r.cards)
    r.gpu_capable = r.supported_cards > 0
    if r.gpu_capable:
        r.reason = ", ".join(f"{c['count']}x {c['name']}" for c in r.cards) + f": {r.slices} slices"
        if r.unsupported_gpus:
            r.reason += f"; mixed with {r.unsupported_gpus} unsupported GPU(s)"
    elif r.unsupported_gpus:
        r.reason = "unsupported GPU only: " + ", ".join(r.unsupported)
    elif r.problems:
        r.reason = "flagged: " + r.problems[0]
    else:
        r.reason = "no GPU"
    return r


# -- free text ----------------------------------------------------------------------


def _lines(value: Any, what: str, problems: list[str]) -> list[str]:
    """A record's list of text lines; anything else is reported, never guessed at."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        problems.append(f"{what} is {type(value).__name__}, expected a list of text")
        return []
    out = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            out.append(item)
        else:
            problems.append(f"{what}[{i}] is {type(item).__name__}, expected text")
    return out


class _TextAuditor:
    """Reports for auction-like records, matched in batches (one automaton pass each)."""

    def __init__(self, policy: Any = None, matcher: Any = None) -> None:
        from .text import TextMatcher, default_matcher

        if matcher is None:
            matcher = default_matcher() if policy is None else TextMatcher(policy)
        self.matcher = matcher
        self.slices = [c["slices"] for c in matcher.compiled.cards]

    def reports(self, items: Iterable[tuple[int, str, Any, str | None]]) -> Iterator[ServerReport]:
        """``items``: ``(row, source, record, error)``; a non-None error flags the row."""
        it = iter(items)
        while True:
            batch = list(itertools.islice(it, _BATCH))
            if not batch:
                return
            yield from self._batch(batch)

    def _batch(self, batch: list[tuple[int, str, Any, str | None]]) -> list[ServerReport]:
        prepared = []
        texts: list[str] = []
        for row, source, rec, error in batch:
            problems: list[str] = []
            r = ServerReport(row, source, None, problems=problems)
            desc: list[str] = []
            info: list[str] = []
            gpu_special = False
            if error is not None:
                problems.append(error)
            elif not isinstance(rec, dict):
                problems.append(f"malformed record: {type(rec).__name__}, expected an object")
            else:
                sid = rec.get("id", rec.get("server"))
                if sid is None or sid == "":
                    problems.append("record has no id")
                else:
                    r.server = str(sid)
                desc = _lines(rec.get("description"), "description", problems)
                info = _lines(rec.get("information"), "information", problems)
                specials = _lines(rec.get("specials"), "specials", problems)
                gpu_special = any(s.strip().lower() == "gpu" for s in specials)
                r.extra = {k: rec[k] for k in _PASSTHROUGH if k in rec}
            prepared.append((r, len(texts), len(desc), len(info), gpu_special))
            texts.extend(desc)
            texts.extend(info)
        matches = self.matcher.find_many(texts)
        per_text: dict[int, list[int]] = {}
        for j, rec_i in enumerate(matches.record.tolist()):
            per_text.setdefault(rec_i, []).append(j)
        out = []
        for r, first, n_desc, n_info, gpu_special in prepared:
            # Cards come from the description; the notes count only when it names none
            # (a listing often repeats the card there).
            hits = [j for i in range(first, first + n_desc) for j in per_text.get(i, ())]
            if not hits:
                hits = [j for i in range(first + n_desc, first + n_desc + n_info)
                        for j in per_text.get(i, ())]
            self._fill(r, matches, hits, gpu_special)
            out.append(_finish(r))
        return out

    def _fill(self, r: ServerReport, matches: Any, hits: list[int], gpu_special: bool) -> None:
        from .text import AMBIGUOUS_TEXT, SUPPORTED_TEXT, UNSUPPORTED_TEXT

        cards: dict[int, dict[str, Any]] = {}
        unsupported: dict[str, int] = {}
        for j in hits:
            kind = int(matches.kind[j])
            m = matches._mention(j)
            if kind == SUPPORTED_TEXT:
                ci = int(matches.card[j])
                c = cards.get(ci)
                if c is None:
                    c = cards[ci] = {"card": m.card, "name": self.matcher.card_names[ci], "count": 0,
                                     "slices": 0, "source": "text", "evidence": []}
                c["count"] += m.count
                c["slices"] += m.count * self.slices[ci]
                if m.text not in c["evidence"]:
                    c["evidence"].append(m.text)
            elif kind == UNSUPPORTED_TEXT:
                label = m.name + (f" ({m.device_id})" if m.device_id else "")
                unsupported[label] = unsupported.get(label, 0) + m.count
            elif kind == AMBIGUOUS_TEXT:
                r.problems.append(f"{m.text!r} does not say which card: {m.name}")
        for c in cards.values():
            c["evidence"] = "; ".join(c["evidence"])
        r.cards = list(cards.values())
        r.unsupported = [f"{n}x {label}" for label, n in unsupported.items()]
        r.unsupported_gpus = sum(unsupported.values())
        if gpu_special and not hits:
            r.problems.append("specials list GPU but no card name is recognisable")


def audit_records(records: Iterable[Any], *, policy: Any = None, source: str = "records",
                  matcher: Any = None) -> Iterator[ServerReport]:
    """One report per auction-like record (a dict with ``id``, ``description`` ...).

    >>> [r.problems for r in audit_records([{"id": 7, "description": "RTX 6000"}, "oops"])]
    [["'rtx 6000' does not say which card: RTX 6000 (could be RTX 6000 Ada Generation or another card)"], ['malformed record: str, expected an object']]
    """
    auditor = _TextAuditor(policy, matcher)
    items = ((i, source, rec, None) for i, rec in enumerate(records, 1))
    return auditor.reports(items)


def audit_texts(texts: Iterable[tuple[Any, Any]], *, policy: Any = None, source: str = "texts",
                matcher: Any = None) -> Iterator[ServerReport]:
    """One report per ``(server, text)`` pair (a text column of a table).

    >>> next(audit_texts([("gex44", "Nvidia RTX 4000 SFF Ada Generation")])).cards[0]["card"]
    'rtx-4000-sff-ada'
    """
    def records():
        for server, text in texts:
            rec: dict[str, Any] = {"id": server}
            if text is not None and not (isinstance(text, float) and text != text):  # NaN cell
                rec["description"] = text if isinstance(text, (list, str)) else str(text)
            yield rec
    return audit_records(records(), policy=policy, source=source, matcher=matcher)


# -- PCI IDs ------------------------------------------------------------------------

_LUT = np.full(128, -1, dtype=np.int64)
for _i, _c in enumerate("0123456789abcdef"):
    _LUT[ord(_c)] = _i
    _LUT[ord(_c.upper())] = _i


def _hex_strings(values: Sequence[Any], bits: int,
                 ndigits: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parse a column of hex IDs: ``(value int64, present bool, bad bool)``; ``ndigits``
    (when given) receives each cell's number of hex digits.

    Strings (``10de``, ``0x10DE``), ints, empty cells (absent).  Vectorized for
    plain strings; anything else goes through a per-cell check.
    """
    n = len(values)
    out = np.zeros(n, dtype=np.int64)
    present = np.ones(n, dtype=bool)
    bad = np.zeros(n, dtype=bool)
    width = bits // 4
    if n == 0:
        return out, present, bad
    arr = np.asarray(values) if not isinstance(values, np.ndarray) else values
    if arr.dtype.kind in "iu":
        out[:] = arr
        bad[:] = (arr < 0) | (arr >= (1 << bits))
        out[bad] = 0
        return out, present, bad
    slow = np.ones(n, dtype=bool)
    if arr.dtype.kind == "U" and arr.dtype.itemsize // 4 <= width:
        codes = arr.view(np.uint32).reshape(n, -1)
        digits = _LUT[np.minimum(codes, 127)]
        pad = codes == 0
        ok = ((digits >= 0) | pad).all(axis=1) & ~pad[:, 0]
        # a padded position must not be followed by a digit: strings are left-aligned
        acc = np.zeros(n, dtype=np.int64)
        for k in range(codes.shape[1]):
            acc = np.where(pad[:, k], acc, acc * 16 + np.maximum(digits[:, k], 0))
        out[ok] = acc[ok]
        if ndigits is not None:
            ndigits[:] = (~pad).sum(axis=1)
        slow = ~ok
    for i in np.flatnonzero(slow).tolist():
        v = values[i]
        if v is None or (isinstance(v, float) and v != v) or (isinstance(v, str) and not v.strip()):
            present[i] = False
            continue
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            x = int(v)
        else:
            s = str(v).strip()
            if s.lower().startswith("0x"):
                s = s[2:]
            if s.startswith("[") and s.endswith("]"):  # lspci's "[10de]"
                s = s[1:-1]
            if not s or len(s) > width or any(ch not in "0123456789abcdefABCDEF" for ch in s):
                bad[i] = True
                continue
            x = int(s, 16)
            if ndigits is not None:
                ndigits[i] = len(s)
        if not 0 <= x < (1 << bits):
            bad[i] = True
        else:
            out[i] = x
    return out, present, bad


def _class_codes(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class cells: 4 hex digits (``0300``: base and subclass) or 6 (``030000``, with prog-if)."""
    ndigits = np.full(len(values), 6, dtype=np.int64)
    val, present, bad = _hex_strings(values, 24, ndigits)
    arr = np.asarray(values) if not isinstance(values, np.ndarray) else values
    # an integer cell cannot show its digits: up to 0xffff it is base class and subclass
    short = val <= 0xFFFF if arr.dtype.kind in "iu" else ndigits <= 4
    val = np.where(short, val << 8, val)
    return val, present, bad


class _DeviceAuditor:
    """Reports for a device table, classified chunk by chunk (see the module docstring)."""

    def __init__(self, policy: Any = None, db: Any = None) -> None:
        from .classify import compile_policy

        self.compiled = compile_policy(policy)
        self.names = [c["name"] for c in self.compiled.cards]
        self.ids = list(self.compiled.card_ids)
        self.slices = [c["slices"] for c in self.compiled.cards]
        self._db = db
        self._seen: set[str] = set()

    def db(self):
        if self._db is None:
            from .db import default_database
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
        v, vp, vb = _hex_strings(chunk["vendor"], 16)
        d, dp, db_ = _hex_strings(chunk["device"], 16)
        sub_v = chunk.get("subvendor")
        sub_d = chunk.get("subdevice")
        sv, svp, svb = _hex_strings(nothing if sub_v is None else sub_v, 16)
        sd, sdp, sdb = _hex_strings(nothing if sub_d is None else sub_d, 16)
        c, cp, cb = _class_codes(chunk["class"])
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
        from .classify import SUPPORTED, UNSUPPORTED, classify
        from .devices import FLAG_INVALID

        names = cols["server"]
        n = len(names)
        starts = np.concatenate([[0], _boundaries(names)]).astype(np.int64)
        group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))
        err = cols["error"]
        invalid = np.fromiter((e is not None for e in err), dtype=bool, count=n)
        res = classify(cols["vendor"].astype(np.uint16), cols["device"].astype(np.uint16),
                       cols["subvendor"].astype(np.uint16), cols["subdevice"].astype(np.uint16),
                       cols["class"].astype(np.uint32), has_subsystem=cols["has_subsystem"],
                       flags=np.where(invalid, FLAG_INVALID, 0).astype(np.uint32), group=group,
                       policy=self.compiled)
        n_groups = len(starts)
        n_cards = len(self.ids)
        sup = res.status == SUPPORTED
        counts = np.bincount(group[sup] * max(n_cards, 1) + res.card[sup].astype(np.int64),
                             minlength=n_groups * max(n_cards, 1)).reshape(n_groups, max(n_cards, 1))
        uns_rows = np.flatnonzero(res.status == UNSUPPORTED)
        bad_rows = np.flatnonzero(invalid)
        extra_rows: dict[int, list[int]] = {}
        for i in itertools.chain(uns_rows.tolist(), bad_rows.tolist()):
            extra_rows.setdefault(int(group[i]), []).append(i)
        ends = np.append(starts[1:], n)
        rows = cols["row"]
        card_of: dict[int, list[int]] = {}
        for g, ci in zip(*np.nonzero(counts)):
            card_of.setdefault(int(g), []).append(int(ci))
        card_ids = [", ".join(f"{m[0]:04x}:{m[1]:04x}" for m in c["match"]) for c in self.compiled.cards]
        rows_list = rows.tolist()
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
            for ci in card_of.get(g, ()):
                k = int(counts[g, ci])
                r.cards.append({"card": self.ids[ci], "name": self.names[ci], "count": k,
                                "slices": k * self.slices[ci], "source": "id", "evidence": card_ids[ci]})
            unsupported: dict[str, int] = {}
            for i in extra_rows.get(g, ()):
                if invalid[i]:
                    r.problems.append(f"row {rows[i]}: {err[i]}")
                    continue
                vid, did = int(cols["vendor"][i]), int(cols["device"][i])
                label = f"{vid:04x}:{did:04x}"
                pci = self.db().device_name(vid, did)
                label = f"{pci} ({label})" if pci else label
                unsupported[label] = unsupported.get(label, 0) + 1
            r.unsupported = [f"{k}x {label}" for label, k in unsupported.items()]
            r.unsupported_gpus = sum(unsupported.values())
            yield _finish(r)


def _boundaries(names: np.ndarray) -> np.ndarray:
    """Where a new server starts: the name changes, or a row has no name (each its own report)."""
    if len(names) < 2:
        return np.empty(0, dtype=np.int64)
    nameless = np.fromiter((x is None for x in names[1:]), dtype=bool, count=len(names) - 1)
    return np.flatnonzero((names[1:] != names[:-1]) | nameless) + 1


def audit_device_rows(rows: Iterable[Sequence[Any]], *, policy: Any = None,
                      source: str = "rows") -> Iterator[ServerReport]:
    """Reports for ``(server, vendor, device, subvendor, subdevice, class)`` tuples.

    >>> rows = [("a", "10de", "27b0", "10de", "16fa", "0300"), ("a", "10de", "22bc", "", "", "0403"),
    ...         ("b", "10de", "1e30", "10de", "12ba", "030000"), ("b", "zz", "1", "", "", "0300")]
    >>> [(r.server, r.slices, r.rows, r.problems) for r in audit_device_rows(rows)]
    [('a', 4, 2, []), ('b', 0, 2, ["row 4: vendor 'zz' is not a hex ID"])]
    """
    def chunks():
        it = iter(enumerate(rows, 1))
        while True:
            part = list(itertools.islice(it, _CHUNK_ROWS))
            if not part:
                return
            yield _rows_to_chunk(part)
    return _DeviceAuditor(policy).reports(chunks(), source)


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
    for k, col in zip(_DEVICE_FIELDS, cols):
        out[k] = list(col)
    return out


# -- lspci dumps --------------------------------------------------------------------


def audit_lspci_dumps(dumps: Iterable[tuple[str, str | bytes | Exception]], *, policy: Any = None,
                      source: str = "lspci") -> Iterator[ServerReport]:
    """One report per ``(server, lspci text)``; an exception in place of the text flags the row.

    >>> dump = ('0000:01:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation [10de]" '
    ...         '"AD102GL [RTX 6000 Ada Generation] [26b1]" -ra1 -p00 "NVIDIA Corporation [10de]" "Device [16a1]"\\n')
    >>> [(r.server, r.slices) for r in audit_lspci_dumps([("gex130", dump)])]
    [('gex130', 4)]
    """
    from .classify import SUPPORTED, UNSUPPORTED, classify_table
    from .lspci import parse_lspci

    from .classify import compile_policy

    compiled = compile_policy(policy)
    db = None
    for row, (server, text) in enumerate(dumps, 1):
        r = ServerReport(row, source, server)
        if isinstance(text, Exception):
            r.problems.append(f"cannot read: {text}")
            yield _finish(r)
            continue
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if not text.strip():
            r.problems.append("empty lspci dump")
            yield _finish(r)
            continue
        try:
            table = parse_lspci(text, source=f"{source}:{server}")
        except SourceError as exc:
            r.problems.append(f"not an lspci dump: {exc.reason}")
            yield _finish(r)
            continue
        res = classify_table(table, compiled)
        addresses = table.addresses()
        for ci, card in enumerate(compiled.cards):
            sel = np.flatnonzero((res.status == SUPPORTED) & (res.card == ci))
            k = len(sel)
            if k:
                addrs = [addresses[i] for i in sel.tolist()]
                r.cards.append({"card": card["id"], "name": card["name"], "count": k,
                                "slices": k * card["slices"], "source": "id",
                                "evidence": ", ".join(f"{a} {int(table.vendor[i]):04x}:{int(table.device[i]):04x}"
                                                      for a, i in zip(addrs, sel.tolist()))})
        unsupported: dict[str, int] = {}
        for i in np.flatnonzero(res.status == UNSUPPORTED).tolist():
            vid, did = int(table.vendor[i]), int(table.device[i])
            if db is None:
                from .db import default_database
                db = default_database()
            pci = db.device_name(vid, did)
            label = f"{pci} ({vid:04x}:{did:04x})" if pci else f"{vid:04x}:{did:04x}"
            unsupported[label] = unsupported.get(label, 0) + 1
        r.unsupported = [f"{k}x {label}" for label, k in unsupported.items()]
        r.unsupported_gpus = sum(unsupported.values())
        for i in np.flatnonzero(table.invalid_mask()).tolist():
            r.problems.append(f"unreadable line: {table.problems[i]}")
        yield _finish(r)


def _server_name(member: str) -> str:
    name = Path(member).name
    for suffix in (".lspci", ".txt", ".out", ".log"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _iter_dir(path: Path, progress: "_Progress | None") -> Iterator[tuple[str, bytes | Exception]]:
    for p in sorted(x for x in path.rglob("*") if not x.is_dir()):
        try:
            data = p.read_bytes()
        except OSError as exc:
            yield _server_name(p.name), exc
            continue
        if progress:
            progress.advance(len(data))
        yield _server_name(str(p.relative_to(path))), data


def _iter_archive(path: Path, progress: "_Progress | None") -> Iterator[tuple[str, bytes | Exception]]:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                try:
                    data = zf.read(info)
                except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
                    yield _server_name(info.filename), exc
                    continue
                if progress:
                    progress.advance(info.compress_size)
                yield _server_name(info.filename), data
        return
    try:
        tf = tarfile.open(path, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise SourceError(str(path), None, f"not a tar or zip archive: {exc}") from None
    with tf:
        # stream mode: members one after another, never the whole index in memory
        while True:
            try:
                info = tf.next()
            except tarfile.TarError as exc:
                yield f"{path.name}@{tf.offset}", exc
                return
            if info is None:
                return
            if not info.isfile():
                continue
            fh = tf.extractfile(info)
            try:
                data = fh.read() if fh is not None else b""
            except (tarfile.TarError, OSError, EOFError) as exc:
                yield _server_name(info.name), exc
                return
            if progress:
                progress.set(tf.fileobj.tell() if hasattr(tf.fileobj, "tell") else 0)
            yield _server_name(info.name), data


# -- streamed readers ---------------------------------------------------------------


class _Progress:
    """A one-line progress bar on stderr (only when it is a terminal)."""

    def __init__(self, total: int, stream: IO[str] | None = None) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.base = 0
        self.stream = stream or sys.stderr
        self.last = 0.0

    def advance(self, n: int) -> None:
        self.done += n
        self._draw()

    def set(self, pos: int) -> None:
        self.done = self.base + pos
        self._draw()

    def next_file(self, size: int) -> None:
        self.base += size
        self.done = self.base

    def _draw(self, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self.last < 0.2:
            return
        self.last = now
        frac = min(self.done / self.total, 1.0)
        bar = "#" * int(frac * 30)
        self.stream.write(f"\r[{bar:<30}] {frac * 100:5.1f}% {self.done >> 20} / {self.total >> 20} MiB")
        self.stream.flush()

    def close(self) -> None:
        self.done = self.total
        self._draw(final=True)
        self.stream.write("\n")
        self.stream.flush()


class _Reader:
    """Text chunks of a binary file, decoded incrementally, reporting progress."""

    def __init__(self, fh: IO[bytes], progress: _Progress | None) -> None:
        self.fh = fh
        self.progress = progress
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.eof = False

    def read(self) -> str:
        data = self.fh.read(_READ)
        if self.progress:
            self.progress.advance(len(data))
        if not data:
            self.eof = True
            return self.decoder.decode(b"", final=True)
        return self.decoder.decode(data)

    def lines(self) -> Iterator[str]:
        """Lines with their ``\n`` (the csv module needs it inside quoted fields)."""
        tail = ""
        while not self.eof:
            chunk = tail + self.read()
            parts = chunk.split("\n")
            tail = parts.pop()
            for part in parts:
                yield part + "\n"
        if tail:
            yield tail


def _iter_feed(reader: _Reader, source: str) -> Iterator[tuple[int, str, Any, str | None]]:
    """Records of ``{"server": [...]}``, decoded one at a time from a sliding buffer."""
    dec = json.JSONDecoder()
    buf = ""
    pos = 0
    row = 0

    def fill(need_more: bool = True) -> bool:
        nonlocal buf, pos
        if reader.eof:
            return False
        if pos > len(buf) // 2:
            buf, pos = buf[pos:], 0
        buf += reader.read()
        return True

    def skip_ws() -> str:
        nonlocal pos
        while True:
            while pos < len(buf) and buf[pos] in " \t\r\n":
                pos += 1
            if pos < len(buf):
                return buf[pos]
            if not fill():
                return ""

    def value() -> tuple[Any, str | None]:
        """Decode the value at ``pos``: (value, None) or (None, error); reads on as needed."""
        nonlocal pos
        last = None
        while True:
            try:
                v, end = dec.raw_decode(buf, pos)
                pos = end
                return v, None
            except json.JSONDecodeError as exc:
                if reader.eof or len(buf) - pos > _MAX_RECORD:
                    return None, f"malformed JSON: {exc.msg} at byte {exc.pos - pos} of the record"
                key = (exc.msg, exc.pos)
                if key == last and not exc.msg.startswith("Unterminated"):
                    # more text did not change the error: it is in the record itself
                    return None, f"malformed JSON: {exc.msg} at byte {exc.pos - pos} of the record"
                last = key
                fill()

    if skip_ws() != "{":
        yield 1, source, None, "not an auction feed: expected a JSON object with a \"server\" list"
        return
    pos += 1
    while True:
        c = skip_ws()
        if c == "}" or c == "":
            if c == "":
                yield row + 1, source, None, "feed ends before its closing brace"
            return
        if c == ",":
            pos += 1
            continue
        key, err = value()
        if err is not None or not isinstance(key, str):
            yield row + 1, source, None, f"not an auction feed: {err or 'expected a key'}"
            return
        if skip_ws() != ":":
            yield row + 1, source, None, "not an auction feed: expected ':' after a key"
            return
        pos += 1
        c = skip_ws()
        if key != "server" or c != "[":
            _, err = value()  # another top-level field: decoded and left alone
            if err is not None:
                yield row + 1, source, None, f"not an auction feed: {err}"
                return
            continue
        pos += 1
        while True:
            c = skip_ws()
            if c == "]":
                pos += 1
                break
            if c == ",":
                pos += 1
                continue
            if c == "":
                yield row + 1, source, None, "feed ends inside the server list"
                return
            row += 1
            rec, err = value()
            if err is None:
                yield row, source, rec, None
                continue
            yield row, source, None, err
            # Resynchronise at the next record: after "}," and before "{".
            while True:
                nxt = buf.find("{", pos + 1)
                if nxt >= 0:
                    pos = nxt
                    break
                pos = len(buf)
                if not fill():
                    return


def _iter_ndjson(reader: _Reader, source: str) -> Iterator[tuple[int, str, Any, str | None]]:
    row = 0
    for line in reader.lines():
        if not line.strip():
            continue  # blank lines are not rows
        row += 1
        try:
            yield row, source, json.loads(line), None
        except json.JSONDecodeError as exc:
            yield row, source, None, f"malformed JSON line: {exc.msg} at column {exc.colno}"


class _BadCsvRow(list):
    """A CSV row the csv module could not split (kept, so that it becomes a flagged row)."""

    def __init__(self, problem: str) -> None:
        super().__init__()
        self.problem = problem


def _csv_rows(reader: _Reader) -> Iterator[list[str]]:
    """CSV rows; a row the csv module rejects (a bare carriage return in an unquoted
    field, say) comes out as a :class:`_BadCsvRow` instead of ending the file."""
    rows = csv.reader(reader.lines())
    while True:
        try:
            yield next(rows)
        except StopIteration:
            return
        except csv.Error as exc:
            yield _BadCsvRow(f"malformed CSV row: {exc}")


def _pick(header: list[str], wanted: Sequence[str], given: str | None, what: str) -> int | None:
    low = [h.strip().lower() for h in header]
    if given is not None:
        if given.lower() not in low:
            raise InputError(f"{what} column {given!r} not in the header {header}")
        return low.index(given.lower())
    return next((low.index(w) for w in wanted if w in low), None)


def _iter_text_csv(rows: Iterator[list[str]], header: list[str], source: str, text_column: str | None,
                   server_column: str | None) -> Iterator[tuple[int, str, Any, str | None]]:
    ti = _pick(header, _TEXT_COLUMNS, text_column, "text")
    if ti is None:
        raise InputError(f"{source}: no text column (one of {', '.join(_TEXT_COLUMNS)}) "
                         "and no vendor/device columns; name one with --text-column")
    si = _pick(header, _SERVER_COLUMNS, server_column, "server")
    low = [h.strip().lower() for h in header]
    extra = {k: low.index(k) for k in _PASSTHROUGH + ("specials", "information") if k in low}
    for row, cells in enumerate(rows, 1):
        if isinstance(cells, _BadCsvRow):
            yield row, source, None, cells.problem
            continue
        if len(cells) != len(header):
            yield row, source, None, f"expected {len(header)} fields, got {len(cells)}"
            continue
        rec: dict[str, Any] = {"id": cells[si] if si is not None else str(row),
                               "description": cells[ti].split("\n")}
        for k, i in extra.items():
            rec[k] = [x.strip() for x in cells[i].split(",") if x.strip()] if k == "specials" else cells[i]
        yield row, source, rec, None


_DEVICE_FIELDS = ("server", "vendor", "device", "subvendor", "subdevice", "class")
_DEVICE_ALIASES = {"server": _SERVER_COLUMNS, "vendor": ("vendor", "vendor_id"),
                   "device": ("device", "device_id"), "subvendor": ("subvendor", "subsystem_vendor"),
                   "subdevice": ("subdevice", "subsystem_device", "subsystem_id"),
                   "class": ("class", "class_code", "class_id")}


def _device_columns(header: Sequence[str], server_column: str | None) -> dict[str, int | None]:
    low = [str(h).strip().lower() for h in header]
    out: dict[str, int | None] = {}
    for f in _DEVICE_FIELDS:
        names = (server_column.lower(),) if f == "server" and server_column else _DEVICE_ALIASES[f]
        out[f] = next((low.index(n) for n in names if n in low), None)
    missing = [f for f in ("server", "vendor", "device", "class") if out[f] is None]
    if missing:
        raise InputError(f"device table lacks columns {missing} (header: {list(header)})")
    return out


def _is_device_header(header: Sequence[str]) -> bool:
    low = {str(h).strip().lower() for h in header}
    return bool(low & set(_DEVICE_ALIASES["vendor"])) and bool(low & set(_DEVICE_ALIASES["device"]))


def _iter_device_csv(rows: Iterator[list[str]], header: list[str],
                     server_column: str | None) -> Iterator[dict[str, Any]]:
    idx = _device_columns(header, server_column)
    width = len(header)
    it = enumerate(rows, 1)
    while True:
        part = list(itertools.islice(it, _CHUNK_ROWS))
        if not part:
            return
        cols: dict[str, list[Any]] = {k: [] for k in ("row", *_DEVICE_FIELDS, "error")}
        for row, cells in part:
            cols["row"].append(row)
            if isinstance(cells, _BadCsvRow):
                err = cells.problem
            else:
                err = None if len(cells) == width else f"expected {width} fields, got {len(cells)}"
            for f in _DEVICE_FIELDS:
                i = idx[f]
                cols[f].append(cells[i] if i is not None and i < len(cells) else None)
            cols["error"].append(err)
        yield cols


def _iter_parquet(path: Path, server_column: str | None,
                  progress: _Progress | None) -> Iterator[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise InputError("reading Parquet needs pyarrow: pip install 'gpuclass[dataframes]'") from exc
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own error types
        raise SourceError(str(path), None, f"not a Parquet file: {exc}") from None
    idx = _device_columns(pf.schema_arrow.names, server_column)
    names = pf.schema_arrow.names
    row = 0
    for i, batch in enumerate(pf.iter_batches(batch_size=_CHUNK_ROWS)):
        n = batch.num_rows
        cols: dict[str, Any] = {"row": np.arange(row + 1, row + n + 1)}
        for f in _DEVICE_FIELDS:
            j = idx[f]
            cols[f] = None if j is None else _arrow_column(batch.column(names[j]))
        cols["error"] = None
        row += n
        if progress:  # Parquet has no byte position to show: rows read, scaled to the size
            progress.set(int(os.path.getsize(path) * row / max(pf.metadata.num_rows, 1)))
        yield cols


def _arrow_column(col: Any) -> Any:
    import pyarrow as pa

    if pa.types.is_integer(col.type) and col.null_count == 0:
        return col.to_numpy()
    return col.to_pylist()


# -- dispatch -----------------------------------------------------------------------

_ARCHIVES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".zip")


def detect_kind(path: str | os.PathLike) -> str:
    """The input kind of a path, by name and first bytes (one of ``KINDS``).

    >>> detect_kind("fleet/dumps.tar.gz"), detect_kind("fleet/ids.parquet")
    ('archive', 'parquet')
    """
    p = Path(path)
    name = p.name.lower()
    if p.is_dir():
        return "lspci-dir"
    if name.endswith(_ARCHIVES):
        return "archive"
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith((".ndjson", ".jsonl")):
        return "ndjson"
    head = b""
    if p.is_file():
        with open(p, "rb") as fh:
            head = fh.read(65536)
    text = head.decode("utf-8", "replace")
    if name.endswith((".csv", ".tsv")):
        first = next(csv.reader([text.split("\n", 1)[0]]), [])
        return "table-csv" if _is_device_header(first) else "csv"
    stripped = text.lstrip()
    if name.endswith(".json") or stripped.startswith(("{", "[")):
        first_line = stripped.split("\n", 1)[0]
        try:
            obj = json.loads(first_line)
        except ValueError:
            return "feed"
        return "feed" if isinstance(obj, dict) and "server" in obj and isinstance(obj["server"], list) \
            and "\n" not in stripped.strip() else "ndjson"
    return "lspci"


def _reports_for(path: Path, kind: str, *, policy: Any, text_column: str | None,
                 server_column: str | None, progress: _Progress | None,
                 text_auditor: Callable[[], _TextAuditor]) -> Iterator[ServerReport]:
    source = str(path)
    if kind == "lspci-dir":
        return audit_lspci_dumps(_iter_dir(path, progress), policy=policy, source=source)
    if kind == "archive":
        return audit_lspci_dumps(_iter_archive(path, progress), policy=policy, source=source)
    if kind == "lspci":
        try:
            data: bytes | Exception = path.read_bytes()
        except OSError as exc:
            data = exc
        if progress and isinstance(data, bytes):
            progress.advance(len(data))
        return audit_lspci_dumps([(_server_name(path.name), data)], policy=policy, source=source)
    if kind == "parquet":
        return _DeviceAuditor(policy).reports(_iter_parquet(path, server_column, progress), source)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise SourceError(source, None, exc.strerror or str(exc)) from None
    reader = _Reader(fh, progress)

    def generate() -> Iterator[ServerReport]:
        with fh:
            if kind == "feed":
                yield from text_auditor().reports(_iter_feed(reader, source))
            elif kind == "ndjson":
                yield from text_auditor().reports(_iter_ndjson(reader, source))
            elif kind in ("csv", "table-csv"):
                rows = _csv_rows(reader)
                header = next(rows, None)
                if header is None:
                    return
                if isinstance(header, _BadCsvRow):
                    raise SourceError(source, 1, f"unreadable CSV header: {header.problem}")
                if kind == "table-csv" or _is_device_header(header):
                    yield from _DeviceAuditor(policy).reports(
                        _iter_device_csv(rows, header, server_column), source)
                else:
                    yield from text_auditor().reports(
                        _iter_text_csv(rows, header, source, text_column, server_column))
            else:
                raise InputError(f"unknown input kind {kind!r}; expected one of {', '.join(KINDS)}")
    return generate()


def audit_paths(paths: Sequence[str | os.PathLike], *, kind: str = "auto", policy: Any = None,
                text_column: str | None = None, server_column: str | None = None,
                progress: bool | _Progress = False) -> Iterator[ServerReport]:
    """Reports for files of any understood kind, streamed in input order.

    ``kind`` forces one of ``KINDS`` for every path (else :func:`detect_kind`).
    A missing file is a :class:`~gpuclass.errors.SourceError`; a malformed row
    inside a file is a flagged report.
    """
    if kind != "auto" and kind not in KINDS:
        raise InputError(f"unknown input kind {kind!r}; expected auto or one of {', '.join(KINDS)}")
    paths = [Path(p) for p in paths]
    for p in paths:
        if not p.exists():
            raise SourceError(str(p), None, "no such file or directory")
    bar: _Progress | None
    if progress is True:
        bar = _Progress(sum(_size(p) for p in paths))
    else:
        bar = progress or None
    auditor: list[_TextAuditor] = []

    def text_auditor() -> _TextAuditor:
        if not auditor:
            auditor.append(_TextAuditor(policy))
        return auditor[0]

    def generate() -> Iterator[ServerReport]:
        for p in paths:
            k = detect_kind(p) if kind == "auto" else kind
            yield from _reports_for(p, k, policy=policy, text_column=text_column,
                                    server_column=server_column, progress=bar,
                                    text_auditor=text_auditor)
            if bar:
                bar.next_file(0)
        if bar:
            bar.close()
    return generate()


def _size(p: Path) -> int:
    if p.is_dir():
        return sum(x.stat().st_size for x in p.rglob("*") if x.is_file())
    try:
        return p.stat().st_size
    except OSError:
        return 0


# -- data frames --------------------------------------------------------------------


def audit_frame(data: Any, *, policy: Any = None, text_column: str | None = None,
                server_column: str | None = None) -> Any:
    """Audit a pandas DataFrame or a pyarrow Table; the result is the same kind.

    A frame with ``vendor`` and ``device`` columns is a device table (one
    result row per server); otherwise each row is a server with a text column
    (``description``, ``text``; lists of lines allowed).  The result has the
    columns of ``CSV_COLUMNS``.  pandas and pyarrow are imported only here.
    """
    kind = _frame_kind(data)
    if kind == "pandas":
        columns = [str(c) for c in data.columns]

        def column(name: str) -> list[Any]:
            return data[name].tolist()
        n = len(data)
    else:
        columns = list(data.column_names)

        def column(name: str) -> Any:
            return _arrow_column(data.column(name).combine_chunks()) if data.num_rows else []
        n = data.num_rows
    if _is_device_header(columns):
        idx = _device_columns(columns, server_column)
        cols_all = {f: (None if idx[f] is None else column(columns[idx[f]])) for f in _DEVICE_FIELDS}

        def chunks():
            for lo in range(0, n, _CHUNK_ROWS):
                hi = min(n, lo + _CHUNK_ROWS)
                yield {"row": np.arange(lo + 1, hi + 1), "error": None,
                       **{f: (None if v is None else v[lo:hi]) for f, v in cols_all.items()}}
        reports = _DeviceAuditor(policy).reports(chunks(), "frame")
    else:
        ti = _pick(columns, _TEXT_COLUMNS, text_column, "text")
        if ti is None:
            raise InputError(f"frame has no text column (one of {', '.join(_TEXT_COLUMNS)}) "
                             "and no vendor/device columns")
        si = _pick(columns, _SERVER_COLUMNS, server_column, "server")
        fields = {"description": column(columns[ti]),
                  "id": column(columns[si]) if si is not None else list(range(1, n + 1))}
        low = [c.lower() for c in columns]
        for k in ("information", "specials", *_PASSTHROUGH):
            if k in low and k not in fields:
                fields[k] = column(columns[low.index(k)])

        def records():
            for i in range(n):
                rec = {}
                for k, v in fields.items():
                    value = v[i]
                    if hasattr(value, "tolist"):  # a numpy array cell (a list column)
                        value = value.tolist()
                    if value is None or (isinstance(value, float) and value != value):
                        continue
                    rec[k] = value
                yield rec
        reports = audit_records(records(), policy=policy, source="frame")
    rows = [r.to_flat() for r in reports]
    out_cols = {c: [r[c] for r in rows] for c in CSV_COLUMNS}
    if kind == "pandas":
        import pandas as pd
        return pd.DataFrame(out_cols, columns=list(CSV_COLUMNS))
    import pyarrow as pa
    return pa.table(out_cols)


def _frame_kind(data: Any) -> str:
    mod = type(data).__module__
    if mod.startswith("pandas") and hasattr(data, "columns"):
        return "pandas"
    if mod.startswith("pyarrow") and hasattr(data, "column_names"):
        return "arrow"
    raise InputError(f"audit_frame: expected a pandas DataFrame or a pyarrow Table, "
                     f"got {type(data).__name__}")


# -- output -------------------------------------------------------------------------


def write_reports(reports: Iterable[ServerReport], fmt: str = "table",
                  out: IO[str] | None = None) -> AuditSummary:
    """Write reports as they come (``fmt`` one of ``OUTPUT_FORMATS``); return the totals.

    ``json`` writes ``{"reports": [...], "summary": {...}}``; ``ndjson`` one
    report per line and a last ``{"summary": ...}`` line; ``csv`` the
    ``CSV_COLUMNS`` (no summary); ``table`` aligned columns and the totals.

    >>> buf = io.StringIO()
    >>> s = write_reports(audit_texts([("a", "2x RTX 6000 Ada")]), "csv", buf)
    >>> buf.getvalue().splitlines()[1].split(",")[:7]
    ['1', 'texts', 'a', 'True', 'rtx-6000-ada x2', '2', '8']
    """
    if fmt not in OUTPUT_FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {', '.join(OUTPUT_FORMATS)}")
    out = out or sys.stdout
    summary = AuditSummary()
    if fmt == "json":
        out.write('{"reports": [')
        sep = "\n  "
        for r in reports:
            summary.add(r)
            out.write(sep + json.dumps(r.to_dict(), ensure_ascii=False))
            sep = ",\n  "
        out.write('\n], "summary": ' + json.dumps(summary.to_dict()) + "}\n")
    elif fmt == "ndjson":
        for r in reports:
            summary.add(r)
            out.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
        out.write(json.dumps({"summary": summary.to_dict()}) + "\n")
    elif fmt == "csv":
        w = csv.DictWriter(out, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
        w.writeheader()
        for r in reports:
            summary.add(r)
            w.writerow(r.to_flat())
    else:
        out.write(f"{'ROW':>7}  {'SERVER':<20} {'GPU':<3}  {'SLICES':>6}  REASON\n")
        for r in reports:
            summary.add(r)
            flag = " !" if r.problems else ""
            text = r.reason + (f" [problems: {'; '.join(r.problems)}]" if r.problems and
                               not r.reason.startswith("flagged") else "")
            out.write(f"{r.row:>7}  {_cut(r.server or '-', 20):<20} {'yes' if r.gpu_capable else 'no':<3}"
                      f"  {r.slices:>6}  {text}{flag}\n")
        s = summary.to_dict()
        cards = ", ".join(f"{k} {v}" for k, v in s["cards"].items()) or "none"
        out.write(f"\n{s['servers']} servers from {s['input_rows']} input rows: {s['gpu_capable']} GPU-capable, "
                  f"{s['supported_cards']} supported cards ({cards}), {s['slices']} slices; "
                  f"{s['servers_with_unsupported']} with unsupported GPUs; {s['flagged']} flagged\n")
    return summary


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"
