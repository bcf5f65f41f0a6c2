"""One machine's PCI devices, classified: what ``gpuclass scan``, ``plan`` and ``labels`` read.

:func:`scan_machine` reads a machine's devices (its sysfs tree under a root, or an lspci
dump), names them and classifies them, and gives every device's record (the shape of
:mod:`gpuclass.records`) with its verdict (:mod:`gpuclass.verdicts`), the statuses and
cards, and the node summary.  A machine's few devices (at most :data:`QUICK_DEVICES`) are
read without numpy once the database's cache exists (every run after the first): the
devices as lists (:func:`~gpuclass.sources.sysfs.scan_sysfs_rows`), names from the mapped
cache (:mod:`gpuclass.db.mapped`), the matcher's and the rollup's rules over lists
(``match_rows``, ``rollup_rows``) and the same record, verdict and node functions the
array path feeds from a DeviceTable, which every other case takes.
``tests/cli/test_scan_quick.py`` holds the two paths' answers equal.

>>> m = scan_machine("examples/gpu-server")
>>> m.summary["supported_cards"], m.summary["slices"], len(m.records) == m.count
(2, 8, True)
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    from .policy import CompiledPolicy, PolicyArg
    from .records import DeviceNames
else:
    from .lazy import NamedTuple

__all__ = ["MachineScan", "scan_machine", "QUICK_DEVICES"]

# Up to this many device directories, a scan runs on lists, without numpy (a machine has
# tens to a few hundred functions; the compiled reader is the one for thousands).
QUICK_DEVICES = 512


class MachineScan(NamedTuple):
    """A scanned machine: where its devices were read, one record per device (its
    verdict's fields included: ``status``, ``card``, ``card_name``, ``slices``, ``note``,
    ``near_miss``), each device's status code and card index, the node summary
    (:func:`gpuclass.verdicts.node_data`), whether a device is flagged, the policy."""

    source: str
    records: list
    status: list
    card: list
    summary: dict
    invalid: bool
    compiled: Any

    @property
    def count(self) -> int:
        return len(self.records)


def scan_machine(root: str | os.PathLike[str] = "/", *, policy: PolicyArg = None,
                 db: DeviceNames | str | os.PathLike[str] | None = None, names: bool = True,
                 lspci: str | os.PathLike[str] | None = None, quick: bool = True) -> MachineScan:
    """The devices under ``root`` (or of the lspci dump ``lspci``), named from ``db`` (a
    database, a pci.ids path, or None for the default; nothing with ``names=False``) and
    classified against ``policy``; without numpy where ``quick`` and the machine allow
    (see the module docstring).  The database is resolved first: a missing or broken one
    is a :class:`~gpuclass.errors.PciIdsError`, a missing tree a
    :class:`~gpuclass.errors.SourceError`."""
    from .policy import compile_policy

    compiled = compile_policy(policy)
    got = None
    if quick and lspci is None:
        names_db = _mapped_names(db, names)
        if names_db is not None:
            got = _scan_rows(root, names_db, compiled)
    return got if got is not None else _scan_table(root, lspci, _names(db, names), compiled)


def _names(db: Any, names: bool) -> DeviceNames:
    """The database that names devices: none when not asked for, else the one given (a
    database), or that of a path or the default (its cache mapped where it is there)."""
    from .pcinames import NO_NAMES

    if not names:
        return NO_NAMES
    if db is None or isinstance(db, (str, os.PathLike)):
        from .db.mapped import names_for

        return names_for(db)
    return db


def _mapped_names(db: Any, names: bool) -> DeviceNames | None:
    """:func:`_names` without loading the database: its cache mapped, or an object given;
    None where there is no cache to map yet."""
    if not names or not (db is None or isinstance(db, (str, os.PathLike))):
        return _names(db, names)
    from .db.mapped import cached_names

    return cached_names(db)


def _scan_table(root: Any, lspci: Any, db: DeviceNames, compiled: CompiledPolicy) -> MachineScan:
    from .classify import classify_table

    if lspci is not None:
        from .errors import NotLspciOutput, SourceError
        from .sources.lspci import read_lspci

        try:
            table = read_lspci(lspci)
        except NotLspciOutput as exc:  # also an InputError (exit 2); here an unreadable source: exit 3
            raise SourceError(exc.path, exc.line, exc.reason) from exc
    else:
        from .sources.sysfs import scan_sysfs

        table = scan_sysfs(os.fspath(root))
    records = table.to_records(db)
    result = classify_table(table, compiled)
    for rec, verdict in zip(records, result.verdicts(db)):
        rec.update(verdict)
    return MachineScan(table.source, records, result.status.tolist(), result.card.tolist(),
                       result.summary().node_data(0), bool(table.invalid_mask().any()), compiled)


def _scan_rows(root: Any, db: DeviceNames, compiled: CompiledPolicy) -> MachineScan | None:
    """The scan of a machine's few devices on lists; None where there are more."""
    from .sources.sysfs import scan_sysfs_rows

    rows = scan_sysfs_rows(os.fspath(root), limit=QUICK_DEVICES)
    if rows is None:
        return None
    from . import constants as C
    from . import verdicts
    from ._native import match_rows, rollup_rows
    from .records import column_records

    c = rows.columns
    status, card, slices = match_rows(
        compiled.rules, c["vendor"], c["device"], c["subvendor"], c["subdevice"], c["class_code"],
        has_subsystem=c["has_subsystem"], flags=c["flags"], domain=c["domain"], bus=c["bus"],
        slot=c["slot"])
    row = rollup_rows(status, card, slices)
    counted = None
    if row[C.R_MIXED] & C.MIXED_MODELS:
        counted = verdicts.tally([0] * len(status), status, card).get(0, {})
    records = column_records(c, rows.driver, rows.problems, rows.addresses, db)

    def ids(i: int) -> tuple:
        has = c["has_subsystem"][i]
        return c["vendor"][i], c["device"][i], c["subvendor"][i] if has else None, c["subdevice"][i] if has else None

    for rec, verdict in zip(records, verdicts.verdicts(compiled, status, card, slices, ids, db)):
        rec.update(verdict)
    summary = verdicts.node_data(row, verdicts.card_counts(row, counted), compiled, 0)
    return MachineScan(rows.source, records, status, card, summary,
                       any(p is not None for p in rows.problems), compiled)
