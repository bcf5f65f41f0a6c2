"""What a DuckDB user writes to audit a Parquet device table: one query, Parquet to Parquet.

Tuned as DuckDB's users write it: ``read_parquet`` reads only the four columns the query
names, a GPU row is tested once (a subquery column), each count is an aggregate with a
``FILTER``, and ``COPY ... TO`` writes the result without a round trip through Python.
DuckDB runs on all cores (its default).  The columns are gpuclass's per-server columns
under the default policy that this query computes too (not ``row``, ``problems``,
``conflicts`` or ``invalid_rows``: with well-formed hex IDs no row is invalid).

A CSV device table (a path ending in ``.csv``) is read as a DuckDB user reads one whose
IDs are hex text: ``read_csv(..., header = true, all_varchar = true)`` (type detection
would read a class such as ``0300`` as the number 300), the same query over it.

Usage: python duckdb_devices.py DEVICES.parquet|DEVICES.csv OUT.parquet
"""

import sys

ALLOWED = {"gtx-1080": "1b80", "gtx-1080-ti": "1b06", "rtx-4000-sff-ada": "27b0", "rtx-6000-ada": "26b1",
           "rtx-pro-6000-blackwell-workstation": "2bb1", "rtx-pro-6000-blackwell-max-q": "2bb4",
           "rtx-pro-6000-blackwell-server": "2bb5"}


def query(source: str) -> str:
    """The per-server SELECT over ``source`` (a table name, or ``read_parquet('...')``)."""
    ids = ", ".join(f"'{d}'" for d in ALLOWED.values())
    cards = ",\n  ".join(f"count(*) FILTER (WHERE gpu AND device = '{d}')::INTEGER AS \"cards.{c}\""
                         for c, d in ALLOWED.items())
    return f"""
SELECT server,
  count(*) FILTER (WHERE gpu AND device IN ({ids})) > 0 AS gpu_capable,
  count(*) FILTER (WHERE gpu AND device IN ({ids}))::INTEGER AS supported_cards,
  4 * count(*) FILTER (WHERE gpu AND device IN ({ids}))::INTEGER AS slices,
  count(*) FILTER (WHERE gpu AND device NOT IN ({ids}))::INTEGER AS unsupported_gpus,
  {cards},
  count(*) AS rows
FROM (SELECT server, device,
             vendor = '10de' AND (starts_with(class, '0300') OR starts_with(class, '0302')) AS gpu
      FROM {source})
GROUP BY server"""


if __name__ == "__main__":
    import duckdb

    src, out = sys.argv[1], sys.argv[2]
    scan = f"read_csv({src!r}, header = true, all_varchar = true)" if src.endswith(".csv") else f"read_parquet({src!r})"
    duckdb.sql(f"COPY ({query(scan)}) TO {out!r} (FORMAT parquet)")
