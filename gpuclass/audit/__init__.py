"""Fleet audits: batch inventories in, one report per server out, nothing dropped.

Inputs (:func:`audit_paths` tells them apart by content, compressed or not):

- the server auction's JSON feed ``{"server": [{"id": ..., "description": [...],
  "information": [...], "specials": ["GPU", ...], "cpu": ..., "price": ...,
  "datacenter": ...}, ...]}`` or a bare array of such records (a feed snapshot),
  streamed record by record; NDJSON, one record a line; CSV with a text column
  (``description`` or ``text``; ``id``/``server`` names it);
- ``lspci`` dumps (one server per file, named after the file or its host folder);
- a device table of ``server, vendor, device, subvendor, subdevice, class`` (hex text or
  integers), one PCI function per row, as CSV or Parquet, or in memory
  (:func:`audit_table`, :func:`audit_frame`, :func:`gpuclass.dask.audit`);
- any of these gzip/xz/bzip2/zstd-compressed, and directories and tar or zip
  archives of them (a directory of feed snapshots is a history: ``latest=True``).

Every input row is accounted for: an auction record, an NDJSON line or a text CSV row
gives exactly one :class:`ServerReport`; a device table gives one report per server, its
rows merged wherever they lie, with ``rows`` saying how many input rows it covers.  A
malformed row becomes a report with ``problems``, never a dropped one; an input that
cannot be read at all is a typed error naming it.  Every door reaches the same engine of
its input (:mod:`.engine`), so the same input gets the same answer through each.

The package follows the data: :mod:`.ingest` (opening and reading inputs), :mod:`.engine`
(rows to per-server answers), :mod:`.results` (reports, totals, the chunks sinks write),
:mod:`.render` (every sentence and label), :mod:`.sinks` (table, JSON, NDJSON, CSV,
Parquet), with :mod:`.run` (files and directories) and :mod:`.frames` (data in memory)
as the doors.

>>> from gpuclass.audit import audit_texts
>>> [(r.server, r.slices) for r in audit_texts([("gex44", "Nvidia RTX 4000 SFF Ada Generation")])]
[('gex44', 4)]
"""

from __future__ import annotations

TYPE_CHECKING = False

from ..lazy import lazy_exports

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from .engine.dumps import audit_lspci_dumps
    from .engine.listings import audit_records, audit_texts
    from .frames import audit_device_rows, audit_frame, audit_table
    from .ingest.compressed import Limits
    from .ingest.kinds import KINDS, detect_kind
    from .results.columns import CSV_COLUMNS, flat_columns
    from .results.reports import AuditSummary, ServerReport
    from .results.table import AuditTable
    from .run import AuditRun, audit_paths
    from .sinks import OUTPUT_FORMATS, write_reports

# Imported on first use: a listing audit loads neither numpy nor the device-table code.
_LAZY = {
    "AuditTable": "results.table", "audit_table": "frames", "Limits": "ingest.compressed",
    "audit_device_rows": "frames", "audit_lspci_dumps": "engine.dumps", "audit_frame": "frames",
    "audit_records": "engine.listings", "audit_texts": "engine.listings", "OUTPUT_FORMATS": "sinks",
    "write_reports": "sinks", "AuditRun": "run", "audit_paths": "run", "KINDS": "ingest.kinds",
    "detect_kind": "ingest.kinds", "CSV_COLUMNS": "results.columns", "flat_columns": "results.columns",
    "AuditSummary": "results.reports", "ServerReport": "results.reports",
}


__getattr__ = lazy_exports(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = ["ServerReport", "AuditSummary", "AuditTable", "audit_table", "audit_records", "audit_texts",
           "audit_lspci_dumps", "audit_device_rows", "audit_paths", "audit_frame", "write_reports",
           "detect_kind", "KINDS", "OUTPUT_FORMATS", "CSV_COLUMNS", "flat_columns", "Limits", "AuditRun"]
