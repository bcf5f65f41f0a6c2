"""``gpuclass audit``: batch inventories in, one report per server out.

Exit codes: 0 when every row read cleanly, 1 when some report carries a
problem (a malformed row, a ``GPU`` special without a recognisable card, an
ambiguous card name), 2 for bad arguments, 3 when an input cannot be read.
"""

from __future__ import annotations

import sys

NAME = "audit"
HELP = "classify whole inventories, one report per server"
DESCRIPTION = ("Audit server inventories: auction feeds, NDJSON, CSV, lspci dumps (directory or "
               "archive), device tables (CSV or Parquet).")
EXAMPLES = """examples:
  gpuclass audit auction.json                      the server auction's feed
  gpuclass audit listings.ndjson --format csv      one record per line
  gpuclass audit dumps.tar.gz --format json        per-server lspci -nnmm dumps
  gpuclass audit ids.parquet                       server, vendor, device, subvendor, subdevice, class
  gpuclass audit listings.csv --text-column title  a text column of your own
  gpuclass audit live_data_sb_EUR.json --format html -o report.html
                                                   one self-contained page: price per slice
"""
OPTIONS = ("policy",)


def arguments(p) -> None:
    from ..audit import KINDS, OUTPUT_FORMATS

    p.add_argument("files", nargs="+", metavar="FILE", help="inputs, read in order")
    p.add_argument("--format", choices=(*OUTPUT_FORMATS, "html"), default="table",
                   help="output format (default: table; html: a fleet report page, needs "
                        "gpuclass[report])")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write to FILE instead of standard output")
    p.add_argument("--kind", choices=("auto", *KINDS), default="auto",
                   help="input kind for every FILE (default: detect from name and content)")
    p.add_argument("--text-column", default=None, metavar="NAME",
                   help="CSV column with the card text (default: description or text)")
    p.add_argument("--server-column", default=None, metavar="NAME",
                   help="column naming the server (default: server, id, host, hostname or node)")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress bar on stderr (auto: only when stderr is a terminal)")


def run(args) -> int:
    from contextlib import nullcontext

    from ..audit import OUTPUT_FORMATS, audit_paths, write_reports
    from .options import UsageError

    if args.output in (*OUTPUT_FORMATS, "html", "yaml"):  # kubectl's -o FORMAT habit
        raise UsageError(f"-o names the output file; for the format use --format {args.output}")
    progress = {"always": True, "never": False}.get(args.progress, sys.stderr.isatty())
    reports = audit_paths(args.files, kind=args.kind, policy=args.policy,
                          text_column=args.text_column, server_column=args.server_column,
                          progress=progress)
    if args.format == "html":
        from ..report import write_html_report

        fleet = write_html_report(reports, args.output, policy=args.policy)
        return 1 if fleet.totals.flagged or fleet.skipped else 0
    with open(args.output, "w", encoding="utf-8", newline="") if args.output else nullcontext(sys.stdout) as out:
        summary = write_reports(reports, args.format, out)
        out.flush()
    return 1 if summary.flagged else 0
