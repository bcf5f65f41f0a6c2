"""``gpuclass db info|compile``: which database is in use, and its compiled cache."""

from __future__ import annotations

from .options import emit_json, emit_table

NAME = "db"
HELP = "the PCI ID database: info, compile"
DESCRIPTION = "Show or compile the PCI ID database in use."
EXAMPLES = """examples:
  gpuclass db info
  gpuclass db info --db /usr/share/hwdata/pci.ids --format json
  gpuclass db compile --db pci.ids.xz
"""
OPTIONS = ("format", "db")


def arguments(p) -> None:
    p.add_argument("action", choices=("info", "compile"),
                   help="info: source, version and counts; compile: (re)build the cache")
    p.add_argument("--output", "-o", default=None,
                   help="compile: write the compiled database here instead of the cache directory "
                        "(only a regular file is ever replaced)")


def run(args) -> int:
    from ..db import PciDatabase, default_database

    if args.action == "compile":
        db = PciDatabase.load(args.db, cache=args.output is None)
        if args.output is not None:
            db.save_compiled(args.output)
    else:
        db = default_database(args.db)
    info = db.info()
    if args.format == "json":
        emit_json(info)
        return 0
    rows = [
        ("source", info["source"]),
        ("version", info["version"] or "(none in header)"),
        ("date", info["date"] or "(none in header)"),
        ("sha256", info["sha256"] or ""),
        ("core", info["core"]),
        ("cache", info["cache"] or "(not cached)"),
    ]
    if info.get("cache_refused"):
        rows.append(("cache refused", info["cache_refused"]))
    rows += [(f"{table} entries", str(n)) for table, n in info["counts"].items()]
    rows.append(("name bytes", str(info["names_bytes"])))
    emit_table(rows)
    return 0
