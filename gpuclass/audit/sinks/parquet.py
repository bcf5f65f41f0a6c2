"""An audit as Parquet: typed columns (:func:`~gpuclass.audit.results.columns.typed_schema`),
a row group per chunk (reports that come one by one are gathered first)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ..results.reports import AuditSummary

from ..results.columns import typed_schema

__all__ = ["write_parquet", "parquet_writer"]

_GROUP = 65536  # reports per row group where they come a few at a time
# a server's own row number and name: a dictionary of these would be as long as the column
_DISTINCT = ("row", "server")


def parquet_writer(out: Any, schema: Any) -> Any:
    """A ParquetWriter for an audit's rows: dictionary-encoded columns where values repeat
    (counts, texts), plain where each server has its own (a quarter less time writing)."""
    import pyarrow.parquet as pq

    return pq.ParquetWriter(out, schema, use_dictionary=[n for n in schema.names if n not in _DISTINCT])


def write_parquet(chunks: Iterable[Any], out: Any, card_ids: tuple[str, ...], summary: AuditSummary) -> None:
    import pyarrow as pa

    schema = typed_schema(card_ids)
    writer = parquet_writer(out, schema)
    held: list[Any] = []
    n_held = 0

    def flush() -> None:
        nonlocal n_held
        if held:
            writer.write_table(pa.concat_tables(held) if len(held) > 1 else held[0])
            held.clear()
            n_held = 0

    try:
        for chunk in chunks:
            chunk.add_to(summary)
            table = chunk.typed(card_ids)
            if table.num_rows >= _GROUP:
                flush()
                writer.write_table(table, row_group_size=1 << 20)
                continue
            held.append(table)
            n_held += table.num_rows
            if n_held >= _GROUP:
                flush()
        flush()
    finally:
        writer.close()
