"""``gpuclass audit``: batch inventories in, one report per server out.

Exit codes: 0 when every row read cleanly, 1 when some report carries a
problem (a malformed row, a ``GPU`` special without a recognisable card, an
ambiguous card name) or an input was skipped, 2 for bad arguments (and a CSV
that is not comma-separated or has no text column, refused before any output),
3 when an input cannot be read (a missing file, a damaged archive, an input that
expands past the limits) or ``-o`` names something other than a regular file (a FIFO, a
device, a directory, a symlink: never replaced).  An ``-o`` inside what is audited (an
input directory, or an input itself, symlinks resolved) is a usage error: the audit would
read its own output.
"""

from __future__ import annotations

import os
import re
import sys

from ..printable import printable
from .options import outcome

NAME = "audit"
HELP = "classify whole inventories, one report per server"
DESCRIPTION = ("Audit server inventories: auction feeds (an object with a server list, or a bare "
               "array), NDJSON, CSV, lspci dumps, device tables (CSV or Parquet); each plain or "
               "compressed (gzip, xz, bzip2, zstd), alone or in a directory or archive (tar, zip).")
EXAMPLES = """examples:
  gpuclass audit auction.json                      the server auction's feed
  gpuclass audit snapshots/ --latest               hourly sb-*.json.gz: the latest record per server
  gpuclass audit listings.ndjson --format ndjson   one object per server (summary on stderr)
  gpuclass audit dumps.tar.gz --format json        per-server lspci dumps (host1/lspci.txt: host1)
  gpuclass audit ids.parquet                       server, vendor, device, subvendor, subdevice, class
  gpuclass audit listings.csv --text-column title  a text column of your own
  gpuclass audit devices.parquet -o servers.parquet    a device table, streamed to Parquet
                                                   (with -o FILE the summary goes to stderr)
  gpuclass audit live_data_sb_EUR.json -o report.html
                                                   one self-contained page: price per slice
"""
OPTIONS = ("policy",)
_SKIPPED_SHOWN = 20


def _size(text: str) -> int:
    m = re.fullmatch(r"\s*([0-9]+)\s*([KMGT]i?B?|B)?\s*", text, re.IGNORECASE)
    if m is None:
        import argparse
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (bytes, or 512M, 8G ...)")
    scale = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    return int(m.group(1)) * scale[(m.group(2) or "").upper()[:1] or ""]


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 1:
        import argparse
        raise argparse.ArgumentTypeError(f"not a ratio above 1: {text!r}")
    return value


def arguments(p) -> None:
    from ..audit import KINDS, OUTPUT_FORMATS, Limits

    default = Limits()
    p.add_argument("files", nargs="+", metavar="FILE", help="inputs, read in order ('-': standard input)")
    p.add_argument("--format", choices=(*OUTPUT_FORMATS, "html"), default=None,
                   help="output format (default: told by the name given to -o, else table; html: a "
                        "fleet report page, needs gpuclass[report])")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write to FILE (complete once the audit ends; parquet needs it) instead "
                        "of standard output; never inside an input, and only a regular file is "
                        "replaced")
    p.add_argument("--kind", choices=("auto", *KINDS), default="auto",
                   help="input kind for every FILE (default: told by each input's content)")
    p.add_argument("--text-column", default=None, metavar="NAME",
                   help="CSV column with the card text (default: description or text)")
    p.add_argument("--server-column", default=None, metavar="NAME",
                   help="column naming the server (default: server, id, host, hostname or node)")
    p.add_argument("--latest", action="store_true",
                   help="keep only the latest record per server id (a history of feed snapshots)")
    p.add_argument("--ndjson-summary", action="store_true",
                   help="with --format ndjson, end the output with a {\"summary\": ...} line "
                        "(default: the summary goes to stderr)")
    p.add_argument("--max-expanded", type=_size, default=default.max_expanded, metavar="SIZE",
                   help="most bytes one compressed input or archive may expand to "
                        "(default: 8G; 512M, 2G ...)")
    p.add_argument("--max-ratio", type=_ratio, default=default.max_ratio, metavar="N",
                   help=f"most times a compressed input may expand (default: {default.max_ratio:g})")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress bar on stderr (auto: only when stderr is a terminal; it is never "
                        "drawn on anything else)")


_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".json": "json",
             ".ndjson": "ndjson", ".jsonl": "ndjson", ".txt": "table", ".html": "html", ".htm": "html"}


def _output_format(args) -> str:
    from ..audit import OUTPUT_FORMATS
    from .options import UsageError

    out = args.output
    if out is not None and out in (*OUTPUT_FORMATS, "html", "yaml") and not os.path.exists(out):
        raise UsageError(f"-o names the output file; for the format write --format {out}")
    if args.format is not None:
        fmt = args.format
    else:
        fmt = _SUFFIXES.get(os.path.splitext(out or "")[1].lower(), "table")
    if fmt == "parquet" and out in (None, "-"):
        raise UsageError("--format parquet writes a file: name it with -o FILE")
    return fmt


def run(args) -> int:
    from ..audit import Limits, audit_paths, write_reports
    from . import fewer_malloc_arenas

    fewer_malloc_arenas()  # before the audit's threads start
    fmt = _output_format(args)
    if fmt != "html":  # (the report's charts convert through pyarrow's numpy support)
        from ..audit.ingest import parquet

        parquet.PYARROW_BEFORE_NUMPY = True  # a Parquet input's reader starts before numpy loads
    _check_output(args.output, [*args.files, *([args.policy] if isinstance(args.policy, str) else [])])
    progress = {"always": True, "never": False}.get(args.progress, sys.stderr.isatty())
    reports = audit_paths(args.files, kind=args.kind, policy=args.policy,
                          text_column=args.text_column, server_column=args.server_column,
                          progress=progress, latest=args.latest,
                          limits=Limits(max_expanded=args.max_expanded, max_ratio=args.max_ratio))
    if fmt == "html":
        from ..report import write_html_report

        def page(out):
            return write_html_report(reports, out, policy=args.policy)
        fleet = page(sys.stdout) if args.output in (None, "-") else _to_file(args.output, page, binary=False)
        _tell_skipped(fleet.skipped)
        if args.output not in (None, "-"):
            _tell_written(args.output, fleet.totals)
        return outcome(bool(fleet.totals.flagged or fleet.skipped))
    summary_line = fmt == "ndjson" and args.ndjson_summary
    if args.output in (None, "-"):
        summary = write_reports(reports, fmt, sys.stdout, summary_line=summary_line, policy=args.policy)
        sys.stdout.flush()
    else:
        summary = _to_file(args.output, lambda out: write_reports(
            reports, fmt, out, summary_line=summary_line, policy=args.policy), binary=fmt == "parquet")
    _tell_skipped(summary.skipped)
    if args.output not in (None, "-"):
        _tell_written(args.output, summary)
    elif fmt == "ndjson" and not args.ndjson_summary:
        sys.stderr.write(printable(f"gpuclass audit: {summary.line()}") + "\n")
    return outcome(bool(summary.flagged or summary.skipped))


def _tell_written(path: str, summary) -> None:
    """The one line an audit written with ``-o`` prints (on stderr: stdout stays free)."""
    sys.stderr.write(printable(f"gpuclass audit: wrote {path}: {summary.line()}") + "\n")


def _tell_skipped(skipped: list) -> None:
    for item in skipped[:_SKIPPED_SHOWN]:
        sys.stderr.write(printable(f"gpuclass audit: skipped {item['input']}: {item['reason']}") + "\n")
    if len(skipped) > _SKIPPED_SHOWN:
        sys.stderr.write(f"gpuclass audit: ... and {len(skipped) - _SKIPPED_SHOWN} more skipped "
                         "(all in the summary of --format json)\n")


def _check_output(output: str | None, inputs: list[str]) -> None:
    """Refuse, before anything is read, an ``-o`` the audit would read (inside an input
    directory or equal to an input, symlinks resolved: it listed its own temporary file as
    a skipped input, or read its own growing output forever) or one that is no regular file
    (:func:`~gpuclass.cachedir.replace_refusal`, the rule of every file gpuclass replaces)."""
    from ..cachedir import replace_refusal
    from ..errors import NotReplaceableError
    from ..inputs import is_stdin
    from .options import UsageError

    if output in (None, "-"):
        return
    out = os.path.realpath(output)
    for name in inputs:
        if is_stdin(name):
            continue
        where = os.path.realpath(name)
        if out == where or out.startswith(where.rstrip(os.sep) + os.sep):
            what = "is the input" if out == where else "is inside the input"
            raise UsageError(f"-o {output} {what} {name}: the audit would read its own output "
                             "(or overwrite what it reads); write it elsewhere")
    refused = replace_refusal(output)
    if refused is not None:
        raise NotReplaceableError(refused)


def _to_file(path: str, write, binary: bool):
    """Write through a temporary file beside ``path``, renamed over it once complete: a
    failed audit leaves no half-written output (nor touches an earlier one)."""
    import io

    from ..cachedir import replacing
    from ..printable import ESCAPE_ERRORS

    with replacing(path, prefix=".gpuclass-audit-", mode=0o666 & ~_umask()) as fh:
        if binary:
            return write(fh)
        # a lone surrogate is written as printable() writes it, as on standard output
        out = io.TextIOWrapper(fh, encoding="utf-8", errors=ESCAPE_ERRORS, newline="")
        try:
            return write(out)
        finally:
            out.detach()  # flushed; the file stays open for replacing() to close


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
