"""``gpuclass lookup VENDOR:DEVICE[:SUBVENDOR:SUBDEVICE]``: names from the PCI ID database."""

from __future__ import annotations

from ..errors import InputError
from ..ids import parse_id
from .options import emit_json, emit_table

NAME = "lookup"
HELP = "names of PCI IDs from the database"
DESCRIPTION = "Print vendor, device and subsystem names for PCI IDs."
EXAMPLES = """examples:
  gpuclass lookup 10de:27b0
  gpuclass lookup 10de:1e30:10de:12ba --format json
  gpuclass lookup 10de                      (a vendor alone)
"""
OPTIONS = ("format", "db")


def arguments(p) -> None:
    p.add_argument("ids", nargs="+", metavar="ID",
                   help="VENDOR, VENDOR:DEVICE or VENDOR:DEVICE:SUBVENDOR:SUBDEVICE, in hex")


def parse_ids(text: str) -> list[int]:
    """Split ``10de:1e30:10de:12ba`` into integers; 1, 2 or 4 parts."""
    parts = text.split(":")
    if len(parts) not in (1, 2, 4):
        raise InputError(f"ID {text!r}: expected VENDOR, VENDOR:DEVICE or VENDOR:DEVICE:SUBVENDOR:SUBDEVICE")
    names = ("vendor", "device", "subvendor", "subdevice")
    return [parse_id(part, f"ID {text!r} {names[i]}") for i, part in enumerate(parts)]


def describe(db, ids: list[int]) -> dict:
    """The lookup result for one parsed ID as a JSON-ready dict."""
    out: dict = {"vendor_id": f"{ids[0]:04x}", "vendor": db.vendor_name(ids[0])}
    if len(ids) >= 2:
        out["device_id"] = f"{ids[1]:04x}"
        out["device"] = db.device_name(ids[0], ids[1])
    if len(ids) == 4:
        out["subvendor_id"] = f"{ids[2]:04x}"
        out["subvendor"] = db.subvendor_name(ids[2])
        out["subdevice_id"] = f"{ids[3]:04x}"
        out["subsystem"] = db.subsystem_name(*ids)
    return out


def run(args) -> int:
    from ..db import default_database

    parsed = [parse_ids(text) for text in args.ids]  # all-or-nothing: validate first
    db = default_database(args.db)
    results = [describe(db, ids) for ids in parsed]
    if args.format == "json":
        emit_json(results[0] if len(results) == 1 else results)
    else:
        rows = [("FIELD", "ID", "NAME")]
        for i, res in enumerate(results):
            if i:
                rows.append(("", "", ""))
            for field, key in (("vendor", "vendor"), ("device", "device"),
                               ("subvendor", "subvendor"), ("subdevice", "subsystem")):
                id_key = f"{field}_id"
                if id_key in res:
                    name = res[key]
                    rows.append((field, res[id_key], "(unknown)" if name is None else name))
        emit_table(rows)
    # Exit 1 when the database knows none of the looked-up names.
    known = all(
        all(v is not None for k, v in res.items() if not k.endswith("_id")) for res in results
    )
    return 0 if known else 1
