"""The engines: what turns an input's rows into per-server answers.

- :mod:`.listings`: auction-like records with free text (feeds, NDJSON, text CSV, text
  frames), one report per record, cards matched by :mod:`gpuclass.textmatch`;
- :mod:`.devices`: device tables (one PCI function per row) as Arrow batches, one row per
  server, through the native core: the one device-table engine every door reaches
  (:mod:`.pipeline`: its batches two at a time, one on a worker thread);
- :mod:`.dumps`: collected lspci dumps, one report per dump, through
  :func:`gpuclass.sources.lspci.parse_lspci` and the classifier.

Every engine counts cards through the compiled rollup and renders through
:mod:`gpuclass.audit.render`.
"""

__all__ = ["Unsettled"]


class Unsettled(Exception):
    """A device table's keys no longer rise after
    :meth:`~gpuclass.audit.engine.devices.DeviceEngine.settled` gave servers out: one of
    them may come back, so what was given out may not be its whole row.  Whoever asked for
    settled servers audits the table again without asking (the Parquet sink writes it again
    from its start).  Defined here, where the run can name it without importing numpy."""
