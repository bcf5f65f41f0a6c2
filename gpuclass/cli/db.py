"""``gpuclass db info|compile``: which database is in use, and its compiled cache.

Exit codes: 0 done, 2 usage error, 3 the database is missing or cannot be read
(or the compiled copy cannot be written).
"""

from __future__ import annotations

import sys

from .options import EXIT_OK, add_options, emit, emit_table, exit_codes
from .parser import HelpFormatter

NAME = "db"
HELP = "the PCI ID database: info, compile"
DESCRIPTION = "Show or compile the PCI ID database in use."
EXAMPLES = """examples:
  gpuclass db info
  gpuclass db info --db /usr/share/hwdata/pci.ids -o json
  gpuclass db compile --db pci.ids.xz
  gpuclass db compile --write pci.gpcdb      a compiled copy to ship elsewhere
"""
OPTIONS = ()


def arguments(p) -> None:
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    codes = exit_codes(sys.modules[__name__])
    info = actions.add_parser("info", formatter_class=HelpFormatter, epilog=codes, help="source, version and counts of the database in use",
                              description="Source, version, checksum, cache and entry counts.")
    add_options(info, ("format", "db"))
    compile_ = actions.add_parser("compile", formatter_class=HelpFormatter, epilog=codes, help="(re)build the compiled cache, then show info",
                                  description="Parse the database and write its compiled cache "
                                              "(or the file given to --write).")
    add_options(compile_, ("format", "db"))
    compile_.add_argument("--write", default=None, metavar="FILE",
                          help="write the compiled database to FILE instead of the cache directory "
                               "(only a regular file is ever replaced)")


def run(args) -> int:
    from ..db import PciDatabase, default_database

    if args.action == "compile":
        db = PciDatabase.load(args.db, cache=args.write is None)
        if args.write is not None:
            db.save_compiled(args.write)
    else:
        db = default_database(args.db)
    info = db.info()
    if args.format != "table":
        emit(info, args.format)
        return EXIT_OK
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
    return EXIT_OK
