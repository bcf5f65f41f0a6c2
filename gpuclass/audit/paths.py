"""Auditing files: each path's kind detected (or given), read as a stream, reported in order.

A missing file is a :class:`~gpuclass.errors.SourceError`; a malformed row inside
a file is a flagged report.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, SourceError
from .archives import iter_archive, iter_dir, server_name
from .devices import DeviceAuditor
from .dumps import audit_lspci_dumps
from .listings import TextAuditor
from .progress import Progress
from .readers import (
    KINDS,
    BadCsvRow,
    Reader,
    csv_rows,
    detect_kind,
    is_device_header,
    iter_device_csv,
    iter_feed,
    iter_ndjson,
    iter_parquet,
    iter_text_csv,
)
from .report import ServerReport

__all__ = ["audit_paths"]


def _reports_for(path: Path, kind: str, *, policy: Any, text_column: str | None,
                 server_column: str | None, progress: Progress | None,
                 text_auditor: Callable[[], TextAuditor]) -> Iterator[ServerReport]:
    source = str(path)
    if kind == "lspci-dir":
        return audit_lspci_dumps(iter_dir(path, progress), policy=policy, source=source)
    if kind == "archive":
        return audit_lspci_dumps(iter_archive(path, progress), policy=policy, source=source)
    if kind == "lspci":
        try:
            data: bytes | Exception = path.read_bytes()
        except OSError as exc:
            data = exc
        if progress and isinstance(data, bytes):
            progress.advance(len(data))
        return audit_lspci_dumps([(server_name(path.name), data)], policy=policy, source=source)
    if kind == "parquet":
        return DeviceAuditor(policy).reports(iter_parquet(path, server_column, progress), source)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise SourceError(source, None, exc.strerror or str(exc)) from None
    reader = Reader(fh, progress)

    def generate() -> Iterator[ServerReport]:
        with fh:
            if kind == "feed":
                yield from text_auditor().reports(iter_feed(reader, source))
            elif kind == "ndjson":
                yield from text_auditor().reports(iter_ndjson(reader, source))
            elif kind in ("csv", "table-csv"):
                rows = csv_rows(reader)
                header = next(rows, None)
                if header is None:
                    return
                if isinstance(header, BadCsvRow):
                    raise SourceError(source, 1, f"unreadable CSV header: {header.problem}")
                if kind == "table-csv" or is_device_header(header):
                    yield from DeviceAuditor(policy).reports(
                        iter_device_csv(rows, header, server_column), source)
                else:
                    yield from text_auditor().reports(
                        iter_text_csv(rows, header, source, text_column, server_column))
            else:
                raise InputError(f"unknown input kind {kind!r}; expected one of {', '.join(KINDS)}")
    return generate()


def audit_paths(paths: Sequence[str | os.PathLike], *, kind: str = "auto", policy: Any = None,
                text_column: str | None = None, server_column: str | None = None,
                progress: bool | Progress = False) -> Iterator[ServerReport]:
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
    bar: Progress | None
    if progress is True:
        bar = Progress(sum(_size(p) for p in paths))
    else:
        bar = progress or None
    auditor: list[TextAuditor] = []

    def text_auditor() -> TextAuditor:
        if not auditor:
            auditor.append(TextAuditor(policy))
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
