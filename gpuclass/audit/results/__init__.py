"""An audit's results: per-server reports, the run's totals, and the chunks the sinks write.

A chunk is what an engine hands a sink: a :class:`~.listing.ReportBatch` (reports of
listing records, a batch at a time, or of lspci dumps) or an :class:`~.table.AuditTable`
(a device table's servers as columns).  Both answer the same questions, so a sink needs
no other: ``len(chunk)``, ``chunk.reports()`` (the :class:`~.reports.ServerReport`
objects), ``chunk.add_to(summary)`` and ``chunk.summary()`` (the totals,
:class:`~.reports.AuditSummary`), ``chunk.csv_parts(card_ids)`` (each report as a CSV
line or a flat row) and ``chunk.typed(card_ids)`` (typed Arrow columns).

Modules: :mod:`.columns` (the output columns, named once), :mod:`.reports`,
:mod:`.listing`, :mod:`.table`.  numpy and pyarrow are imported by :mod:`.table` only.
"""
