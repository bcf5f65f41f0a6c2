"""Auditing files: each input's kind told by its content, read as a stream, reported in order.

A path is a file (plain or compressed: gzip, xz, bzip2, zstd, recognised by their first
bytes whatever the name), a directory or an archive (tar, compressed or not, or zip).
Every member of a directory or archive is told apart the same way: an lspci dump is one
server (named after its file, or its folder where every host's file has the same name); a
feed, NDJSON or CSV file is a source of its own (a directory of hourly feed snapshots is a
history; ``latest=True`` keeps the latest record per server id).  Members that are no
input (a binary, a sysfs tree's files, a symlink leaving the directory, a FIFO) are
skipped and listed in ``skipped``.

Each kind goes to its engine: feeds, NDJSON and text CSV to the listing engine, lspci dumps
to the dump engine, device tables (CSV or Parquet) to the device engine, which merges a
server's rows wherever they lie; the run yields their chunks in input order.

Errors: a missing or unreadable path, a damaged archive, an input that expands past
the limits (:class:`~gpuclass.audit.ingest.compressed.Limits`) are a
:class:`~gpuclass.errors.SourceError` naming the file and member; a CSV that is not
comma-separated, or lacks a text column, is an :class:`~gpuclass.errors.InputError`
raised before the first report; a malformed row inside an input is a flagged report.

>>> import gzip, json, pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> for hour, n in (("0100", 1), ("0200", 2)):
...     rec = {"id": 7, "description": [f"{n}x RTX 6000 Ada"]}
...     _ = (d / f"sb-{hour}00.json.gz").write_bytes(gzip.compress(json.dumps([rec]).encode()))
>>> [(r.server, r.slices, r.rows) for r in audit_paths([d], latest=True)]
[('7', 8, 2)]
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..policy import PolicyArg
    from typing import IO, Any

    from .ingest.archives import Member
    from .ingest.text import Reader
    from .progress import Progress

from ..errors import InputError, NotAFileError, SourceError
from ..inputs import LIMITS, open_input
from .ingest.columns import TEXT_COLUMNS, field_names, is_device_header, pick_column
from .ingest.compressed import Bounded, Limits, archive_kind, compression_of, decompress
from ..compression import plain_name
from .ingest.kinds import HEAD, KINDS, SKIP_REASONS, read_kind_head, sniff
from .ingest.streams import Prefixed, prefetch, read_at_most, read_head, rewound
from .engine import Unsettled
from .results.listing import ReportBatch
from .results.reports import ServerReport

__all__ = ["audit_paths", "AuditRun"]

_MEMBER_LIMIT = LIMITS["audit member"]


class _Context:
    def __init__(self, policy: PolicyArg, text_column: str | None, server_column: str | None,
                 limits: Limits, progress: Progress | None) -> None:
        self.policy = policy
        self.text_column = text_column
        self.server_column = server_column
        self.limits = limits
        self.progress = progress
        self.skipped: list[dict[str, str]] = []
        # a device table's servers given out as they settle (DeviceEngine.settled), in
        # several chunks, rather than as one chunk at its end (AuditRun.chunks(settled=True))
        self.settled = False
        self._text: Any = None
        self._compiled: Any = None

    def text_auditor(self) -> Any:
        if self._text is None:
            from .engine.listings import TextAuditor

            self._text = TextAuditor(self.policy)
        return self._text

    def compiled(self) -> Any:
        if self._compiled is None:
            if self._text is not None:  # the text matcher's: compiled with it (and cached)
                self._compiled = self._text.compiled
            else:
                from ..policy import compile_policy

                self._compiled = compile_policy(self.policy)
        return self._compiled

    def skip(self, name: str, reason: str) -> None:
        self.skipped.append({"input": name, "reason": reason})


def _stream_chunks(ctx: _Context, fh: IO[bytes], name: str, kind: str | None,
                   member: Member | None, total: list[int], in_archive: bool) -> Iterator[Any]:
    """The chunks of one stream (a file, or a member of a collection)."""
    head = read_head(fh, HEAD)
    comp = compression_of(head)
    inner = member.name if member is not None else os.path.basename(name)
    if comp is not None:
        fh = decompress(rewound(fh, head), comp, name, ctx.limits, total)
        head = read_kind_head(fh)
        inner = plain_name(inner)
    elif archive_kind(head) is None:  # (an archive's head is put back by seeking)
        head = read_kind_head(fh, head)
    found = sniff(head, inner)
    stream: IO[bytes] = io.BufferedReader(Prefixed(head, fh), buffer_size=1 << 20)
    if found == "archive" and (kind in (None, "archive") or member is None and kind == "lspci-dir"):
        if in_archive:
            ctx.skip(name, SKIP_REASONS["archive"])
            return
        yield from _collection(ctx, _archive_members(fh, head, name, ctx.limits, total), name, total)
        return
    if kind is None:
        kind = found
    elif kind == "archive":
        raise SourceError(name, None, "not a tar or zip archive")
    if kind in ("binary", "archive"):
        if comp is not None:
            while stream.read(1 << 20):  # damaged compressed data looks binary: read it to say so
                pass
        if member is None:  # named by the user: it had better be an input
            raise SourceError(name, None, "binary data, not an audit input")
        ctx.skip(name, SKIP_REASONS[kind])
        return
    if kind == "text":
        if member is not None and not _dump_like(name):
            ctx.skip(name, SKIP_REASONS["text"])
            return
        kind = "lspci"
    if kind == "lspci":
        yield _dump_chunk(ctx, stream, name, inner)
    elif kind == "parquet":
        yield from _parquet_chunks(ctx, fh, head, name)
    else:  # (the text readers' modules, json and re among them, are imported for text only)
        from .ingest.records import iter_feed, iter_ndjson
        from .ingest.text import Reader

        if kind == "feed":
            auditor = ctx.text_auditor()
            yield from auditor.batches(iter_feed(Reader(stream), name, auditor.FIELDS))
        elif kind == "ndjson":
            yield from ctx.text_auditor().batches(iter_ndjson(Reader(stream), name))
        elif kind in ("csv", "table-csv"):
            yield from _csv_chunks(ctx, Reader(stream), name, kind)
        else:
            raise InputError(f"unknown input kind {kind!r}; expected one of {', '.join(KINDS)}")


def _dump_chunk(ctx: _Context, stream: IO[bytes], name: str, inner: str) -> ReportBatch:
    data = read_at_most(stream, _MEMBER_LIMIT)
    if len(data) > _MEMBER_LIMIT:
        raise SourceError(name, None, f"larger than {_MEMBER_LIMIT} bytes (the limit for one dump)")
    from .engine.dumps import audit_lspci_dumps
    from .ingest.archives import server_name

    return ReportBatch(list(audit_lspci_dumps([(server_name(inner), data)], policy=ctx.compiled(), source=name)))


def _parquet_chunks(ctx: _Context, fh: IO[bytes], head: bytes, name: str) -> Iterator[Any]:
    # pyarrow reads the footer first: the file itself where it can seek, else a copy
    source: IO[bytes] = rewound(fh, head)
    if not source.seekable():
        data = read_at_most(source, _MEMBER_LIMIT)
        if len(data) > _MEMBER_LIMIT:
            raise SourceError(name, None, f"larger than {_MEMBER_LIMIT} bytes (the limit for a "
                                          "Parquet member that cannot be read in place)")
        source = io.BytesIO(data)
    from .ingest.parquet import parquet_batches

    # the first batches are read while the engine's modules (numpy among them) are imported
    yield from _device_chunks(ctx, prefetch(parquet_batches(source, ctx.server_column, name), lead=8), name)


def _device_chunks(ctx: _Context, batches: Any, name: str) -> Iterator[Any]:
    """A device table's batches (a prefetch, closed here; record batches or ``(batch, fields,
    errors)``) through the one engine: servers as they settle (``ctx.settled``), then the rest."""
    try:
        from .engine.devices import DeviceEngine

        engine = DeviceEngine(ctx.compiled())
        fields = None
        for item in batches:
            batch, given, errors = item if isinstance(item, tuple) else (item, None, None)
            if fields is None:
                fields = given or field_names(batch.schema.names, ctx.server_column)
            engine.add(batch, fields, errors)
            del item, batch, given, errors  # let go before its servers go out (to the sink)
            if ctx.settled:
                done = engine.settled(name)
                if done is not None:
                    yield done
    finally:
        batches.close()
    yield engine.result(name)


def _csv_chunks(ctx: _Context, reader: Reader, name: str, kind: str) -> Iterator[Any]:
    from .ingest.csv import BadCsvRow, CsvRows, check_header, device_batches, iter_text_csv

    table = CsvRows(reader)
    rows = iter(table)
    header = next(rows, None)
    if header is None:
        return
    if isinstance(header, BadCsvRow):
        raise SourceError(name, 1, f"unreadable CSV header: {header.problem}")
    check_header(header, name)
    if kind == "table-csv" or is_device_header(header):
        table.one_line = True  # IDs and server names never span lines: a quote is stray
        # the text is read, decoded and split on a thread while the engine audits (a prefetch)
        yield from _device_chunks(ctx, prefetch(device_batches(table, header, ctx.server_column, name)), name)
    else:
        yield from ctx.text_auditor().batches(iter_text_csv(rows, header, name, ctx.text_column,
                                                            ctx.server_column))


def _dump_like(name: str) -> bool:
    from .ingest.archives import DUMP_SUFFIXES

    base = os.path.basename(name).lower()
    return base.startswith("lspci") or base.endswith(DUMP_SUFFIXES)


def _archive_members(fh: IO[bytes], head: bytes, name: str, limits: Limits,
                     total: list[int]) -> Iterator[Member]:
    from .ingest.archives import iter_tar, iter_zip

    kind = archive_kind(head)
    stream = rewound(fh, head)
    if kind == "zip":
        if not stream.seekable():  # a zip is read from its end: standard input is copied first
            cap = min(limits.max_expanded, _MEMBER_LIMIT * 4)
            data = stream.read(cap + 1)
            if len(data) > cap:
                raise SourceError(name, None, f"a zip archive larger than {cap} bytes on a stream "
                                              "(give it as a file)")
            stream = io.BytesIO(data)
        return iter_zip(stream, name, limits, total)
    return iter_tar(stream, name, limits, total, counted=isinstance(fh, Bounded))


def _collection(ctx: _Context, members: Iterator[Member], name: str, total: list[int] | None,
                sep: str = ":") -> Iterator[Any]:
    for m in members:
        full = f"{name}{sep}{m.name}"
        if m.skipped is not None or m.open is None:
            ctx.skip(full, m.skipped or "not read")
            continue
        try:
            fh = m.open()
        except NotAFileError as exc:
            ctx.skip(full, exc.reason)
            continue
        if ctx.progress is not None and not isinstance(fh, Bounded):
            from .progress import Counted

            fh = Counted(fh, ctx.progress)  # a directory's files: their bytes are the progress
        with _closing(fh):
            # an archive's members count towards its expansion; a directory's archives are
            # read (one level), an archive's archives are not
            inside = total is not None
            yield from _stream_chunks(ctx, fh, full, None, m, total if inside else [0], inside)


class _closing:
    def __init__(self, fh: Any) -> None:
        self.fh = fh

    def __enter__(self) -> Any:
        return self.fh

    def __exit__(self, *exc: Any) -> None:
        close = getattr(self.fh, "close", None)
        if close is not None:
            close()


def _path_chunks(ctx: _Context, path: str, kind: str) -> Iterator[Any]:
    if os.path.isdir(path):
        if kind not in ("auto", "lspci-dir", "archive"):
            raise InputError(f"{path}: a directory cannot be read as {kind}")
        from .ingest.archives import iter_dir

        yield from _collection(ctx, iter_dir(path), path.rstrip("/") or "/", None, sep="/")
        return
    fh: IO[bytes] = open_input(path, "audit input")
    if ctx.progress is not None:
        from .progress import Counted

        fh = Counted(fh, ctx.progress)
    with _closing(fh):
        forced = None if kind in ("auto", "lspci-dir") else kind
        yield from _stream_chunks(ctx, fh, "<stdin>" if path == "-" else path, forced, None, [0], False)


class AuditRun:
    """The reports of :func:`audit_paths`, streamed; ``skipped`` lists the members that
    were not read (``{"input", "reason"}``), complete once the run is exhausted.

    :meth:`chunks` gives the same run as the engines' chunks (a listing's reports a batch
    at a time, a device table's servers as one :class:`~gpuclass.audit.results.table.AuditTable`),
    for the sinks.

    Read to its end, a run can be read again: it audits its inputs again, as they are then
    (``fleet_summary(run)`` and ``write_reports(run, ...)`` of one run both see every server).
    A run that read standard input cannot: a second read is an
    :class:`~gpuclass.errors.InputError` that says so, never an empty run.
    """

    def __init__(self, start: Callable[[bool], tuple[Iterator[Any], _Context]], rereadable: bool) -> None:
        self._start = start
        self._gen, self._ctx = start(True)
        self._reports: Iterator[ServerReport] = iter(())
        self._rereadable = rereadable
        self._done = False
        self.skipped = self._ctx.skipped

    @property
    def compiled(self) -> Any:
        """The run's compiled policy."""
        return self._ctx.compiled()

    def _again(self) -> None:
        """Once the run is read to its end, a new read audits the inputs again (standard
        input cannot be read twice: that is an InputError saying so)."""
        if not self._done:
            return
        if not self._rereadable:
            raise InputError("this audit read standard input, which can be read once: keep its "
                             "reports (reports = list(audit_paths(...))) to use them twice")
        self._gen, self._ctx = self._start(False)
        self._reports = iter(())
        self._done = False
        self.skipped = self._ctx.skipped

    def __iter__(self) -> AuditRun:
        self._again()
        return self

    def __next__(self) -> ServerReport:
        while True:
            r = next(self._reports, None)
            if r is not None:
                return r
            try:
                self._reports = iter(next(self._gen).reports())
            except StopIteration:
                self._done = True
                raise

    def chunks(self, settled: bool = False) -> Iterator[Any]:
        """The run as it comes, in input order: :mod:`gpuclass.audit.results` chunks.

        ``settled``: a device table's servers (Parquet or CSV) in several chunks, each given out
        once no later row can add to it (while the file's server keys rise), rather than
        one chunk at the table's end; a run that finds a key that no longer rises after
        it gave servers out raises :class:`~gpuclass.audit.engine.Unsettled`, and
        the caller reads :meth:`chunks` again (without ``settled``: the one answer, as
        one chunk).  A run that reads standard input, which cannot be read twice, is
        never settled."""
        self._again()
        self._ctx.settled = settled and self._rereadable
        rest = list(self._reports)
        if rest:
            yield ReportBatch(rest)
        try:
            yield from self._gen
        except Unsettled:
            self._done = True  # read again from the start, the one answer as one chunk
            raise
        self._done = True


def audit_paths(paths: Sequence[str | os.PathLike], *, kind: str = "auto", policy: PolicyArg = None,
                text_column: str | None = None, server_column: str | None = None,
                progress: bool | Progress = False, latest: bool = False,
                limits: Limits | None = None) -> AuditRun:
    """Reports for files of any understood kind, streamed in input order.

    ``kind`` forces one of ``KINDS`` for every path (else each input's content tells);
    ``latest`` keeps, per server id, only the latest record of a history (reports
    then come at the end, one per server, with ``rows`` the records it stands for);
    ``limits`` bounds what compressed inputs and archives may expand to; ``progress``
    draws a bar on a terminal (``True``: on stderr).

    A missing file, a directory or archive that cannot be read, an input that expands
    past the limits is a :class:`~gpuclass.errors.SourceError`; a CSV that is not
    comma-separated or has no text column an :class:`~gpuclass.errors.InputError`,
    both raised before the first report where the file is named directly.
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        raise TypeError(f"audit_paths: expected a sequence of paths, got one {type(paths).__name__} "
                        f"({paths!r}); write audit_paths([{paths!r}])")
    if kind != "auto" and kind not in KINDS:
        raise InputError(f"unknown input kind {kind!r}; expected auto or one of {', '.join(KINDS)}")
    names = [p if isinstance(p, str) else os.fspath(p) for p in paths]
    for p in names:
        if p != "-" and not os.path.lexists(p):
            raise SourceError(p, None, "no such file or directory")
    for p in names:
        _preflight(p, kind, text_column)
    def start(first: bool) -> tuple[Iterator[Any], _Context]:
        bar: Progress | None = None
        if first and progress is True:
            from .progress import Progress

            bar = Progress(sum(_size(p) for p in names))
        elif first:
            bar = progress or None
        ctx = _Context(policy, text_column, server_column, limits or Limits(), bar)
        return generate(ctx, bar), ctx

    def generate(ctx: _Context, bar: Progress | None) -> Iterator[Any]:
        try:
            items: Iterator[Any] = (c for p in names for c in _path_chunks(ctx, p, kind))
            if latest:
                items = iter((ReportBatch(list(_latest(r for chunk in items for r in chunk.reports()))),))
            for chunk in items:
                if bar is not None:
                    bar.row(len(chunk))
                yield chunk
        finally:
            if bar is not None:
                bar.close()
    return AuditRun(start, "-" not in names)


def _preflight(path: str, kind: str, text_column: str | None) -> None:
    """Refuse a CSV that cannot be read before any report is written."""
    if path == "-" or os.path.isdir(path):
        return
    try:
        with open_input(path, "audit input") as fh:
            head = fh.read(HEAD)
            if compression_of(head) is not None:
                return
            if kind == "auto" and archive_kind(head) is None:
                head = read_kind_head(fh, head)
    except SourceError:
        raise
    found = sniff(head, path) if kind == "auto" else kind
    if found not in ("csv", "table-csv"):
        return
    from .ingest.csv import BadCsvRow, check_header, csv_rows
    from .ingest.text import Reader

    header = next(csv_rows(Reader(io.BytesIO(head))), None)
    if header is None or isinstance(header, BadCsvRow):
        return
    check_header(header, path)
    if found == "csv" and not is_device_header(header) and \
            pick_column(header, TEXT_COLUMNS, text_column, "text") is None:
        raise InputError(f"{path}: no text column (one of {', '.join(TEXT_COLUMNS)}) "
                         "and no vendor/device columns; name one with --text-column")


def _latest(reports: Iterator[ServerReport]) -> Iterator[ServerReport]:
    """One report per server id: the latest record's, at the place of the first."""
    order: list[ServerReport | str] = []
    last: dict[str, ServerReport] = {}
    count: dict[str, int] = {}
    for r in reports:
        if r.server is None:
            order.append(r)
            continue
        if r.server not in last:
            order.append(r.server)
        last[r.server] = r
        count[r.server] = count.get(r.server, 0) + r.rows
    for item in order:
        if isinstance(item, str):
            r = last[item]
            r.rows = count[item]
            yield r
        else:
            yield item


def _size(p: str) -> int:
    if p == "-":
        return 0
    if os.path.isdir(p):
        total = 0
        for dirpath, _, files in os.walk(p):
            for f in files:
                try:
                    total += os.lstat(os.path.join(dirpath, f)).st_size
                except OSError:
                    pass
        return total
    try:
        return os.stat(p).st_size
    except OSError:
        return 0

