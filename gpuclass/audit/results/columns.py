"""The columns of an audit's outputs, named once for every door and every sink.

- :data:`REPORT_FIELDS`: a report's fields as one flat row (CSV, ``audit_frame``, the
  ``flat()`` of a device audit), then one count per allowlisted card
  (:func:`card_column`: ``cards.<card id>``), then the passthrough fields of auction
  records (:data:`PASSTHROUGH`): :func:`flat_columns`;
- :func:`typed_schema`: the same as typed Arrow columns (``--format parquet``), less the
  two sentences (``cards`` and ``reason``: the counts are columns there);
- :func:`table_columns`: the per-server table of a device audit (``audit_table().table``,
  ``gpuclass.dask.audit``), with the same ``cards.<card id>`` columns and ``row`` counted
  from 1 as in every report; its ``problems`` are the rows' own, its ``conflicts`` those of
  the cards it holds together (a report's problems are both).

>>> flat_columns(["gtx-1080"])[9:]
('reason', 'problems', 'rows', 'cards.gtx-1080', 'cpu', 'price', 'datacenter', 'hourly_price')
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = ["REPORT_FIELDS", "PASSTHROUGH", "CSV_COLUMNS", "SENTENCES", "COUNT_FIELDS", "card_column",
           "flat_columns", "typed_schema", "table_columns", "int32_columns"]

REPORT_FIELDS = ("row", "source", "server", "gpu_capable", "cards", "supported_cards", "slices",
                 "unsupported", "unsupported_gpus", "reason", "problems", "rows")
PASSTHROUGH = ("cpu", "price", "datacenter", "hourly_price")
# a report's flat fields without the per-card counts (those depend on the policy)
CSV_COLUMNS = REPORT_FIELDS + PASSTHROUGH
SENTENCES = ("cards", "reason")
# the integer fields of a flat row (typed columns: int64)
COUNT_FIELDS = ("row", "supported_cards", "slices", "unsupported_gpus", "rows")
_CARD_PREFIX = "cards."


def card_column(card_id: str) -> str:
    """The count column of one card, in every output that has one.

    >>> card_column("rtx-6000-ada")
    'cards.rtx-6000-ada'
    """
    return _CARD_PREFIX + card_id


def flat_columns(card_ids: Sequence[str]) -> tuple[str, ...]:
    """The columns of a flat report row for a policy with these cards."""
    return REPORT_FIELDS + tuple(card_column(c) for c in card_ids) + PASSTHROUGH


def typed_schema(card_ids: Sequence[str]) -> Any:
    """:func:`flat_columns` less the sentences, as an Arrow schema: counts int64, prices
    float64, ``gpu_capable`` bool, the rest text."""
    import pyarrow as pa

    types = {"gpu_capable": pa.bool_(), "price": pa.float64(), "hourly_price": pa.float64()}
    return pa.schema([(c, types.get(c, pa.int64() if c in COUNT_FIELDS or c.startswith(_CARD_PREFIX)
                                    else pa.string()))
                      for c in flat_columns(card_ids) if c not in SENTENCES])


def int32_columns(card_ids: Sequence[str]) -> list[str]:
    """The int32 columns of a device audit's table (adjacent, in this order): the counts
    a merge of two audits adds up."""
    return ["supported_cards", "slices", "unsupported_gpus", *map(card_column, card_ids), "invalid_rows"]


def table_columns(card_ids: Sequence[str]) -> list[str]:
    """The columns of a device audit's per-server table, in order."""
    return ["server", "gpu_capable", *int32_columns(card_ids), "rows", "row", "problems", "conflicts"]
