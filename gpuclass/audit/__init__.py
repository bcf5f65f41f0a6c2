"""Fleet audits: batch inventories in, one report per server out, nothing dropped.

Inputs (:func:`audit_paths` tells them apart by content, compressed or not):

- the server auction's JSON feed ``{"server": [{"id": ..., "description": [...],
  "information": [...], "specials": ["GPU", ...], "cpu": ..., "price": ...,
  "datacenter": ...}, ...]}`` or a bare array of such records (a feed snapshot),
  streamed record by record; NDJSON, one record a line; CSV with a text column
  (``description`` or ``text``; ``id``/``server`` names it);
- ``lspci`` dumps (one server per file, named after the file or its host folder);
- a CSV or Parquet table of ``server, vendor, device, subvendor, subdevice,
  class`` (hex strings or integers), one PCI function per row, rows of a server
  next to each other;
- any of these gzip/xz/bzip2/zstd-compressed, and directories and tar or zip
  archives of them (a directory of feed snapshots is a history: ``latest=True``).

Every input row is accounted for: an auction record, an NDJSON line or a text
CSV row gives exactly one :class:`ServerReport`; a device table gives one report
per server with ``rows`` saying how many input rows it covers.  A malformed row
becomes a report with ``problems``, never a dropped one; an input that cannot be
read at all is a typed error naming it.

Modules: :mod:`.report` (the results), :mod:`.listings`, :mod:`.devices` and
:mod:`.dumps` (one auditor per input shape, all counting cards through the
compiled rollup), :mod:`.readers`, :mod:`.csvfiles` and :mod:`.tables` (streams of
records), :mod:`.compressed` and :mod:`.archives` (compressed streams, collections,
limits), :mod:`.paths` (files), :mod:`.frames` (pandas/pyarrow), :mod:`.output`
(writers), :mod:`.progress` (the bar).

>>> from gpuclass.audit import audit_texts
>>> [(r.server, r.slices) for r in audit_texts([("gex44", "Nvidia RTX 4000 SFF Ada Generation")])]
[('gex44', 4)]
"""

from __future__ import annotations

TYPE_CHECKING = False

from ..lazy import lazy_exports

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from .columnar import AuditTable, audit_table
    from .compressed import Limits
    from .devices import audit_device_rows
    from .dumps import audit_lspci_dumps
    from .frames import audit_frame
    from .listings import audit_records, audit_texts
    from .output import OUTPUT_FORMATS, write_reports
    from .paths import AuditRun, audit_paths
    from .readers import KINDS, detect_kind
    from .report import CSV_COLUMNS, AuditSummary, ServerReport

# Imported on first use: a listing audit loads neither numpy nor the device-table code.
_LAZY = {
    "AuditTable": "columnar", "audit_table": "columnar", "Limits": "compressed",
    "audit_device_rows": "devices", "audit_lspci_dumps": "dumps", "audit_frame": "frames",
    "audit_records": "listings", "audit_texts": "listings", "OUTPUT_FORMATS": "output",
    "write_reports": "output", "AuditRun": "paths", "audit_paths": "paths", "KINDS": "readers",
    "detect_kind": "readers", "CSV_COLUMNS": "report", "AuditSummary": "report", "ServerReport": "report",
}


__getattr__ = lazy_exports(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = ["ServerReport", "AuditSummary", "AuditTable", "audit_table", "audit_records", "audit_texts",
           "audit_lspci_dumps",
           "audit_device_rows", "audit_paths", "audit_frame", "write_reports", "detect_kind",
           "KINDS", "OUTPUT_FORMATS", "CSV_COLUMNS", "Limits", "AuditRun"]
