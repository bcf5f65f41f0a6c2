"""Parquet device tables: only their device columns, read row group by row group.

>>> import io, pyarrow as pa, pyarrow.parquet as pq
>>> buf = io.BytesIO()
>>> pq.write_table(pa.table({"server": ["a"], "vendor": ["10de"], "device": ["27b0"], "class": ["0300"],
...                          "note": ["x"]}), buf)
>>> [b.schema.names for b in parquet_batches(buf, None)]
[['server', 'vendor', 'device', 'class']]
"""

from __future__ import annotations

from ...errors import InputError, MissingExtraError, SourceError
from .columns import device_columns

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import IO, Any

    from pathlib import Path

__all__ = ["parquet_batches", "check_batch", "batch_rows_for"]


# Rows a batch at most.  The servers of a sorted table are written as they settle (a
# batch's at a time: AuditRun.chunks(settled=True)), so a batch's size bounds the memory an
# audit holds: at 1Mi rows a 10M-row Parquet to Parquet audit peaked at 550-620 MiB, at
# 256Ki 370-385 MiB in the same time (at 128Ki 350 MiB, 7% slower: the work around each
# batch).  Read when called (tests cut tables into small batches).
_BATCH_ROWS = 1 << 18
# A smaller table is cut into sixths at least, and batches of this many rows at fewest.
# The reader runs one batch ahead and the engine lets a batch go once audited
# (streams.prefetch, run._device_chunks), so at most three batches are alive at once: a
# sixth of the table each holds what four eighths held when the reader ran two ahead and
# the batch audited was held too (a table of 1M rows in four batches had held them all,
# 154 MiB at its peak against 132 MiB in eight).  A 1M-row Parquet audit in sixths: 4.7%
# less time than in eighths, 7.7 MiB more at the peak, 3.5 MiB under DuckDB's (41
# interleaved rounds).  Not rounded up to a power of two, as eighths were: that cut a
# table of just over 1Mi rows into 256Ki-row batches (1M rows so: 17 MiB more at the peak
# than in 128Ki-row batches, 8 more than in sixths).  Not fewer than 128Ki rows: the
# reader decodes a small table while the command still imports numpy and the engine, so
# its batches wait for the engine anyway, and each costs its work around it (a chunk of
# servers, a row group): against 64Ki at fewest, 100k rows (one batch, not two) 3% less
# time and 1.7 MiB less at the peak, 200k 7% and 3 MiB, 300k 7% and 4.5 MiB
# (BENCHMARKS.md, session 49).
_MIN_BATCH_ROWS = 1 << 17


def batch_rows_for(rows: int) -> int:
    """The rows of each batch of a table of ``rows``: a sixth of it, within
    ``[_MIN_BATCH_ROWS, _BATCH_ROWS]`` (never more than ``_BATCH_ROWS``).

    >>> batch_rows_for(10_000_000), batch_rows_for(1_000_000), batch_rows_for(100_000)
    (262144, 166667, 131072)
    """
    return min(_BATCH_ROWS, max(_MIN_BATCH_ROWS, -(-rows // 6)))


# Whether this process imports pyarrow before numpy, where neither is loaded yet: set by the
# gpuclass command (cli/audit.py), never by the library in a user's process.  pyarrow loads
# numpy at its start only for its own conversions to and from numpy arrays, which the
# audit does through buffers (arrowfn.to_numpy, contract.audit.numpy_values); without it,
# the reader thread starts decoding while the main thread loads numpy and the engine (about
# 60 ms on a 2-vCPU VM), rather than after (tests/audit/test_pyarrow_first.py).
PYARROW_BEFORE_NUMPY = False


class _NoNumpy:
    """A meta path finder under which numpy cannot be imported (while pyarrow loads)."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] == "numpy":
            raise ModuleNotFoundError("numpy is imported after pyarrow here", name=name)
        return None


def _pyarrow_version() -> tuple[int, ...]:
    """The installed pyarrow's version, read from its files without importing it (0,: not
    known)."""
    import importlib.util
    import os
    import re

    try:
        spec = importlib.util.find_spec("pyarrow")
        where = list(spec.submodule_search_locations or []) if spec is not None else []
        with open(os.path.join(where[0], "_generated_version.py"), encoding="utf-8") as fh:
            found = re.search(r"""version\s*=\s*['"](\d+)\.(\d+)""", fh.read())
    except (ImportError, OSError, IndexError, ValueError):
        return (0,)
    return (int(found.group(1)), int(found.group(2))) if found else (0,)


def _import_pyarrow() -> bool:
    """Import pyarrow and its Parquet reader: before numpy where :data:`PYARROW_BEFORE_NUMPY`
    is set, neither is loaded yet and pyarrow is one that starts without numpy (16 on).
    True where it was imported so."""
    import sys

    if not PYARROW_BEFORE_NUMPY or "pyarrow" in sys.modules or "numpy" in sys.modules \
            or _pyarrow_version() < (16,):
        import pyarrow  # noqa: F401
        import pyarrow._parquet  # noqa: F401

        return False
    sys.meta_path.insert(0, _NoNumpy)
    try:
        import pyarrow  # noqa: F401
        import pyarrow._parquet  # noqa: F401
    finally:
        sys.meta_path.remove(_NoNumpy)
    return True


def _numpy_loaded() -> bool:
    """Whether numpy is imported in full (not still being imported by another thread, whose
    import a second one would wait for)."""
    import sys

    module = sys.modules.get("numpy")
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", True)


def _reader(source: Any, read_dictionary: list[str] | None = None, metadata: Any = None) -> Any:
    """pyarrow's Parquet reader of ``source`` (a path or a file object): the class that
    ``pyarrow.parquet.ParquetFile`` wraps, opened with the options it gives it by default,
    without importing ``pyarrow.parquet``, whose module imports pyarrow's filesystems (S3
    and SSL among them: 15-20 ms and 9 MiB of a Parquet audit's start) that a local file
    or a file object never uses.  ``tests/audit/test_parquet_file.py`` holds its schema,
    metadata and batches equal to ``ParquetFile``'s."""
    from pyarrow._parquet import ParquetReader

    options = {"use_memory_map": False, "read_dictionary": read_dictionary, "metadata": metadata,
               "buffer_size": 0, "pre_buffer": True}
    reader = ParquetReader()
    try:  # ParquetFile reads Parquet's extension types as Arrow's (pyarrow 19 on)
        reader.open(source, arrow_extensions_enabled=True, **options)
    except TypeError:  # a pyarrow without the option (nor those types)
        reader.open(source, **options)
    return reader


def check_batch(batch: Any, with_numpy: bool = True) -> None:
    """Raise what ``batch.validate(full=True)`` raises (an ``ArrowInvalid``) where it
    would: text that is not UTF-8, offsets out of order, a dictionary index outside its
    entries.  The indices of a dictionary column with none missing are bounded with
    numpy's min and max (Arrow's check visits each index: a twentieth of a 10M-row audit's
    reading), or by Arrow's check where ``with_numpy`` is False (a reader that runs before
    numpy is loaded); every other column is validated in full."""
    import pyarrow as pa

    for name, col in zip(batch.schema.names, batch.columns):
        if not isinstance(col, pa.DictionaryArray) or col.null_count:
            col.validate(full=True)
            continue
        col.validate()
        col.dictionary.validate(full=True)
        if with_numpy:
            from ..arrowfn import indices_within

            within = indices_within(col)
        else:
            try:  # (its dictionary is valid: what the full check finds is an index)
                col.validate(full=True)
                within = True
            except pa.ArrowInvalid:
                within = False
        if not within:
            raise pa.ArrowInvalid(f"column {name!r}: a dictionary index outside its "
                                  f"{len(col.dictionary)} entries")


def parquet_batches(source: Path | IO[bytes], server_column: str | None,
                    name: str | None = None, batch_rows: int | None = None) -> Iterator[Any]:
    """The record batches of a Parquet device table (a path or a seekable file object),
    only its device columns, read row group by row group, ``batch_rows`` rows a batch at
    most (default: :func:`batch_rows_for` the rows its footer declares).

    A file pyarrow cannot read, at its start or in a later row group, or whose footer's
    row counts do not add up (a damaged count makes pyarrow read fewer rows), is a
    :class:`~gpuclass.errors.SourceError` naming it (pyarrow has error types of its own);
    a table without the device columns, with one of them named twice or of a type no
    device column has (:func:`~gpuclass.audit.ingest.arrow.refusal`) an
    :class:`~gpuclass.errors.InputError` naming it, the column and its type, raised
    before the first batch.
    """
    try:
        first_here = _import_pyarrow()
    except ImportError as exc:
        raise MissingExtraError("pyarrow", "dataframes", "reading Parquet") from exc
    import pyarrow as pa

    from .arrow import check_schema

    where = name or str(getattr(source, "name", source))
    try:
        first = _reader(source)
        schema = first.schema_arrow
        names = schema.names
        idx = device_columns(names, server_column, where)  # refuses a device column named twice
        check_schema(schema, {f: None if j is None else names[j] for f, j in idx.items()}, where)
        # ID columns of text as dictionaries: a few distinct IDs each, read and parsed once
        # per row group instead of once a row (the server names are as many as the servers)
        text_ids = [names[j] for f, j in idx.items() if f != "server" and j is not None
                    and schema.field(j).type in (pa.string(), pa.large_string())]
        if hasattr(source, "seek"):
            source.seek(0)
        pf = _reader(source, read_dictionary=text_ids, metadata=first.metadata)
        meta = pf.metadata
        declared = meta.num_rows
        groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises its own error types
        raise SourceError(where, None, f"not a Parquet file: {exc}") from None
    # a damaged footer can give a row group a negative count, which pyarrow takes as is and
    # reads fewer rows than the file holds: refused, as every lost row is
    if any(n < 0 for n in groups) or sum(groups) != declared:
        raise SourceError(where, None, f"damaged Parquet footer: row groups of {groups} rows "
                                       f"for a file of {declared}")
    wanted = sorted({j for j in idx.values() if j is not None})
    if batch_rows is None:
        batch_rows = batch_rows_for(declared)

    def batches() -> Iterator[Any]:
        row = 0
        it = pf.iter_batches(batch_rows, range(len(groups)), column_indices=wanted, use_threads=False)
        while True:
            try:
                batch = next(it, None)
                if batch is not None:
                    # pyarrow does not check that text read from Parquet is UTF-8: a damaged
                    # string would only fail later, when a cell is converted
                    check_batch(batch, with_numpy=not first_here or _numpy_loaded())
            except Exception as exc:  # a damaged row group
                raise SourceError(where, None, f"unreadable Parquet data after row {row}: {exc}") from None
            if batch is None:
                if row != declared:  # every row the footer declares, once
                    raise SourceError(where, None, f"damaged Parquet data: {row} rows read, "
                                                   f"the footer declares {declared}")
                return
            row += batch.num_rows
            yield batch
            batch = None  # the consumer's now: not held here while the next is decoded
    return batches()
