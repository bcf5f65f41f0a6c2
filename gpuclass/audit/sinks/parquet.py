"""An audit as Parquet: typed columns (:func:`~gpuclass.audit.results.columns.typed_schema`),
a row group per chunk (reports that come one by one are gathered first).

A chunk's typed columns are made on the calling thread while the chunk before is encoded
and written on a writer thread (pyarrow's writer runs without the GIL): a device table
streamed in several chunks (:meth:`~gpuclass.audit.run.AuditRun.chunks` with
``settled=True``) is written while it is still being read.  A run that takes back what it
streamed (:class:`~gpuclass.audit.engine.Unsettled`: a server came back after its
row was given out) is written again from its start, as one chunk per table.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from ..results.reports import AuditSummary

from ..results.columns import typed_schema

__all__ = ["write_parquet", "parquet_writer"]

_GROUP = 65536  # reports per row group where they come a few at a time
# a chunk of at least this many rows is a row group of its own, written at once: a sorted
# device table's settled servers (a batch's: about 50k of a 256Ki-row batch) go to the
# writer thread as they come, not held for the next.  8Ki, not 16Ki: a CSV device table's
# 64Ki-row batches settle 8-16k servers each where a server has four to eight rows, which
# were held, typed with widened counts, until 64Ki of them had come (a 1M-row CSV audit
# peaked at 153-154 MiB against 135 MiB written as they come, in the same time)
_OWN_GROUP = 8192
# a server's own row number and name: a dictionary of these would be as long as the column
_DISTINCT = ("row", "server")
# the columns whose row groups carry min/max statistics: the row numbers and the server
# names, which a reader may filter on; a count's range (0 to a few) skips no row group
_STATISTICS = ["row", "server"]


def parquet_writer(out: Any, schema: Any) -> Any:
    """A Parquet writer for an audit's rows: :class:`~gpuclass.audit.sinks.parquet_file.ParquetFileWriter`
    where it keeps the schema as pyarrow's writer would (an audit's typed columns always
    are), else pyarrow's.  Either way the server names and row numbers are written without
    a dictionary (one would be as long as the column), the row numbers delta-encoded, and
    statistics kept for those two columns only (a count's min and max skip no row group);
    pyarrow's writer is given dictionaries for every other column."""
    from .parquet_file import ParquetFileWriter, writes

    if writes(schema):
        return ParquetFileWriter(out, schema, statistics=_STATISTICS, delta=("row",), plain=_DISTINCT)
    import pyarrow.parquet as pq

    return pq.ParquetWriter(out, schema, use_dictionary=[n for n in schema.names if n not in _DISTINCT],
                            column_encoding={"row": "DELTA_BINARY_PACKED"},
                            write_statistics=[n for n in _STATISTICS if n in schema.names])


class _Background:
    """Calls run one at a time on a writer thread, one waiting at most: :meth:`put`
    returns once the call before has ended (its error raised here), :meth:`drain` once
    every call has.  A thread of its own and a condition (``concurrent.futures`` imports
    ``logging``: 4-5 ms of a 1M-row audit's process, on the thread that audits)."""

    def __init__(self) -> None:
        import threading

        self._cv = threading.Condition()
        self._thread: Any = None
        self._call: Callable[[], None] | None = None  # given to the thread, not yet ended
        self._error: BaseException | None = None      # what the last call raised
        self._closed = False

    def _run(self) -> None:
        cv = self._cv
        while True:
            with cv:
                while self._call is None and not self._closed:
                    cv.wait()
                call = self._call
            if call is None:
                return
            error = None
            try:
                call()
            except BaseException as exc:  # raised where the caller drains
                error = exc
            with cv:
                self._call, self._error = None, error
                cv.notify_all()

    def put(self, call: Callable[[], None]) -> None:
        self.drain()
        if self._thread is None:
            import threading

            self._thread = threading.Thread(target=self._run, name="gpuclass-parquet", daemon=True)
            self._thread.start()
        with self._cv:
            self._call = call
            self._cv.notify_all()

    def drain(self) -> None:
        with self._cv:
            while self._call is not None:
                self._cv.wait()
            error, self._error = self._error, None
        if error is not None:
            raise error

    def close(self) -> None:
        try:
            self.drain()
        finally:
            if self._thread is not None:
                with self._cv:
                    self._closed = True
                    self._cv.notify_all()
                self._thread.join()


def write_parquet(chunks: Iterable[Any], out: Any, card_ids: tuple[str, ...], summary: AuditSummary,
                  again: Callable[[], Iterable[Any]] | None = None) -> None:
    """Write ``chunks`` to ``out`` (a path or a binary file), adding them to ``summary``.
    ``again``: where ``chunks`` may take back what they gave (they raise
    :class:`~gpuclass.audit.engine.Unsettled`), the run's chunks read anew, written
    over what was written (``out`` must then be a path or a seekable file, written again
    from where it stood when this was called)."""
    import os

    from ..engine import Unsettled

    opened: list[bool] = []  # whether a writer opened (created or truncated) ``out``
    start = out.tell() if again is not None and hasattr(out, "tell") else 0
    try:
        try:
            _write(chunks, out, card_ids, summary, opened)
        except Unsettled:
            if again is None:
                raise
            if hasattr(out, "seek"):  # a file: from where this output began
                out.seek(start)
                out.truncate()
            summary.reset_counts()
            _write(again(), out, card_ids, summary, opened)
    except BaseException:
        # a streamed output written in part (a row group damaged halfway through the input)
        # is not left behind as if it were the audit: a path is removed (a file object is
        # its owner's: the command writes through a temporary file it discards)
        if opened and isinstance(out, (str, os.PathLike)):
            try:
                os.unlink(out)
            except OSError:
                pass
        raise


def _write(chunks: Iterable[Any], out: Any, card_ids: tuple[str, ...], summary: AuditSummary,
           opened: list[bool]) -> None:
    import pyarrow as pa

    from .parquet_file import ParquetFileWriter

    schema = typed_schema(card_ids)
    writer = parquet_writer(out, schema)
    opened.append(True)
    # a chunk written as a row group of its own goes to this package's writer with its
    # counts int32 as the audit holds them (AuditTable.narrow_typed: no widened copy, the
    # same bytes); chunks held to be joined are typed alike, the schema's own types
    narrow = isinstance(writer, ParquetFileWriter)
    background = _Background()
    held: list[Any] = []
    n_held = 0

    def write(table: Any, **kw: Any) -> None:
        background.put(lambda: writer.write_table(table, **kw))

    def flush() -> None:
        nonlocal n_held
        if held:
            write(pa.concat_tables(held) if len(held) > 1 else held[0])
            held.clear()
            n_held = 0

    try:
        try:
            for chunk in chunks:
                chunk.add_to(summary)
                own = narrow and hasattr(chunk, "narrow_typed") and len(chunk) >= _OWN_GROUP
                table = chunk.narrow_typed(card_ids) if own else chunk.typed(card_ids)
                if table.num_rows >= _OWN_GROUP:
                    flush()
                    write(table, row_group_size=1 << 20)
                    continue
                held.append(table)
                n_held += table.num_rows
                if n_held >= _GROUP:
                    flush()
            flush()
        finally:
            background.close()
    finally:
        writer.close()
