"""Small helpers shared by test modules (tests/ is on sys.path via pytest's pythonpath)."""

from __future__ import annotations


def names_of(tables, table):
    """{key: name} for one table of a parse result."""
    blob = tables["blob"].tobytes()
    start, end = tables["name_start"], tables["name_end"]
    return {
        int(k): blob[start[n] : end[n]].decode("utf-8")
        for k, n in zip(tables[f"{table}_keys"], tables[f"{table}_name"])
    }
