"""``gpuclass lookup VENDOR:DEVICE[:SUBVENDOR:SUBDEVICE]...``: names from the PCI ID database.

JSON and YAML give a list with one record per ID asked about (a list of one for one
ID), in the device record shape of :mod:`gpuclass.records`: ``vendor``, ``device``,
``svendor``, ``sdevice`` as 4-digit hex, each name in its ``*_name`` field.

Exit codes: 0 every name was found, 1 the database lacks some name (shown as
unknown/null), 2 a malformed ID, 3 the database is missing or cannot be read.

Names come from the database's compiled cache mapped without numpy
(:mod:`gpuclass.db.mapped`) once a first run has written it.
"""

from __future__ import annotations

from .options import emit, emit_table, outcome

NAME = "lookup"
HELP = "names of PCI IDs from the database"
DESCRIPTION = "Print vendor, device and subsystem names for PCI IDs."
EXAMPLES = """examples:
  gpuclass lookup 10de:27b0
  gpuclass lookup 10de:1e30:10de:12ba -o json
  gpuclass lookup 10de                      (a vendor alone)
"""
OPTIONS = ("format", "db")


def arguments(p) -> None:
    p.add_argument("ids", nargs="+", metavar="ID",
                   help="VENDOR, VENDOR:DEVICE or VENDOR:DEVICE:SUBVENDOR:SUBDEVICE, in hex")


def parse_ids(text: str) -> list[int]:
    """Split ``10de:1e30:10de:12ba`` into integers; 1, 2 or 4 parts."""
    from ..errors import InputError
    from ..ids import parse_id

    parts = text.split(":")
    if len(parts) not in (1, 2, 4):
        raise InputError(f"ID {text!r}: expected VENDOR, VENDOR:DEVICE or VENDOR:DEVICE:SUBVENDOR:SUBDEVICE")
    names = ("vendor", "device", "subvendor", "subdevice")
    return [parse_id(part, f"ID {text!r} {names[i]}") for i, part in enumerate(parts)]


def run(args) -> int:
    from ..db.mapped import names_for
    from ..records import id_record

    parsed = [parse_ids(text) for text in args.ids]  # all-or-nothing: validate first
    db = names_for(args.db)
    results = [id_record(ids, db) for ids in parsed]
    if args.format != "table":
        emit(results, args.format)
    else:
        rows = [("FIELD", "ID", "NAME")]
        for i, res in enumerate(results):
            if i:
                rows.append(("", "", ""))
            for field in ("vendor", "device", "svendor", "sdevice"):
                if field in res:
                    name = res[f"{field}_name"]
                    rows.append((field, res[field], "(unknown)" if name is None else name))
        emit_table(rows)
    known = all(v is not None for res in results for k, v in res.items() if k.endswith("_name"))
    return outcome(not known)
