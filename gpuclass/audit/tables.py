"""Device tables: one PCI function per row, from CSV rows or Parquet batches, as column chunks.

>>> is_device_header(["server", "vendor_id", "device_id", "class"]), is_device_header(["id", "text"])
(True, False)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from ..errors import InputError, SourceError
from .csvfiles import BadCsvRow
from .readers import CHUNK_ROWS, DEVICE_ALIASES, DEVICE_FIELDS, is_device_header

__all__ = ["DEVICE_FIELDS", "device_columns", "is_device_header", "iter_device_csv", "parquet_batches",
           "arrow_column"]




def device_columns(header: Sequence[str], server_column: str | None) -> dict[str, int | None]:
    low = [str(h).strip().lower() for h in header]
    out: dict[str, int | None] = {}
    for f in DEVICE_FIELDS:
        names = (server_column.lower(),) if f == "server" and server_column else DEVICE_ALIASES[f]
        out[f] = next((low.index(n) for n in names if n in low), None)
    missing = [f for f in ("server", "vendor", "device", "class") if out[f] is None]
    if missing:
        raise InputError(f"device table lacks columns {missing} (header: {list(header)})")
    return out


def iter_device_csv(rows: Iterator[list[str]], header: list[str],
                     server_column: str | None) -> Iterator[dict[str, Any]]:
    idx = device_columns(header, server_column)
    width = len(header)
    it = enumerate(rows, 1)
    while True:
        part = list(itertools.islice(it, CHUNK_ROWS))
        if not part:
            return
        cols: dict[str, list[Any]] = {k: [] for k in ("row", *DEVICE_FIELDS, "error")}
        for row, cells in part:
            cols["row"].append(row)
            if isinstance(cells, BadCsvRow):
                err = cells.problem
            else:
                err = None if len(cells) == width else f"expected {width} fields, got {len(cells)}"
            for f in DEVICE_FIELDS:
                i = idx[f]
                cols[f].append(cells[i] if i is not None and i < len(cells) else None)
            cols["error"].append(err)
        yield cols




def parquet_batches(source: Path | IO[bytes], server_column: str | None,
                    name: str | None = None, batch_rows: int = 1 << 17) -> Iterator[Any]:
    """The record batches of a Parquet device table (a path or a seekable file object),
    only its device columns, read row group by row group.

    A file pyarrow cannot read, at its start or in a later row group, is a
    :class:`~gpuclass.errors.SourceError` naming it (pyarrow has error types of its own);
    a table without the device columns an :class:`~gpuclass.errors.InputError`, raised
    before the first batch.
    """
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise InputError("reading Parquet needs pyarrow: pip install 'gpuclass[dataframes]'") from exc
    import pyarrow as pa

    where = name or str(getattr(source, "name", source))
    try:
        schema = pq.ParquetFile(source).schema_arrow
        names = schema.names
        idx = device_columns(names, server_column)
        # ID columns of text as dictionaries: a few distinct IDs each, read and parsed once
        # per row group instead of once a row (the server names are as many as the servers)
        text_ids = [names[j] for f, j in idx.items() if f != "server" and j is not None
                    and schema.field(j).type in (pa.string(), pa.large_string())]
        if hasattr(source, "seek"):
            source.seek(0)
        pf = pq.ParquetFile(source, read_dictionary=text_ids)
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises its own error types
        raise SourceError(where, None, f"not a Parquet file: {exc}") from None
    wanted = sorted({j for j in idx.values() if j is not None})

    def batches() -> Iterator[Any]:
        row = 0
        it = pf.iter_batches(batch_size=batch_rows, columns=[names[j] for j in wanted])
        while True:
            try:
                batch = next(it, None)
                if batch is not None:
                    # pyarrow does not check that text read from Parquet is UTF-8: a damaged
                    # string would only fail later, when a cell is converted
                    batch.validate(full=True)
            except Exception as exc:  # a damaged row group
                raise SourceError(where, None, f"unreadable Parquet data after row {row}: {exc}") from None
            if batch is None:
                return
            row += batch.num_rows
            yield batch
    return batches()


def arrow_column(col: Any) -> Any:
    import pyarrow as pa

    if pa.types.is_integer(col.type) and col.null_count == 0:
        return col.to_numpy()
    return col.to_pylist()
