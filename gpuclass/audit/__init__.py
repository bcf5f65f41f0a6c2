"""Fleet audits: batch inventories in, one report per server out, nothing dropped.

Inputs (:func:`audit_paths` tells them apart by name and content):

- the server auction's JSON feed ``{"server": [{"id": ..., "description": [...],
  "information": [...], "specials": ["GPU", ...], "cpu": ..., "price": ...,
  "datacenter": ...}, ...]}``, streamed record by record; NDJSON, one record a line;
  CSV with a text column (``description`` or ``text``; ``id``/``server`` names it);
- a directory, tar or zip archive of per-server ``lspci -nnmm`` dumps (one
  server per file, named after the file);
- a CSV or Parquet table of ``server, vendor, device, subvendor, subdevice,
  class`` (hex strings or integers), one PCI function per row, rows of a server
  next to each other.

Every input row is accounted for: an auction record, an NDJSON line or a text
CSV row gives exactly one :class:`ServerReport`; a device table gives one report
per server with ``rows`` saying how many input rows it covers.  A malformed row
becomes a report with ``problems``, never a dropped one.

Modules: :mod:`.report` (the results), :mod:`.listings`, :mod:`.devices` and
:mod:`.dumps` (one auditor per input shape, all counting cards through the
compiled rollup), :mod:`.readers` and :mod:`.archives` (streams of records),
:mod:`.paths` (files), :mod:`.frames` (pandas/pyarrow), :mod:`.output` (writers).

>>> [(r.server, r.slices) for r in audit_texts([("gex44", "Nvidia RTX 4000 SFF Ada Generation")])]
[('gex44', 4)]
"""

from __future__ import annotations

from .compressed import Limits
from .devices import audit_device_rows
from .dumps import audit_lspci_dumps
from .frames import audit_frame
from .listings import audit_records, audit_texts
from .output import OUTPUT_FORMATS, write_reports
from .paths import AuditRun, audit_paths
from .readers import KINDS, detect_kind
from .report import CSV_COLUMNS, AuditSummary, ServerReport

__all__ = ["ServerReport", "AuditSummary", "audit_records", "audit_texts", "audit_lspci_dumps",
           "audit_device_rows", "audit_paths", "audit_frame", "write_reports", "detect_kind",
           "KINDS", "OUTPUT_FORMATS", "CSV_COLUMNS", "Limits", "AuditRun"]
