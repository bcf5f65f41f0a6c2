"""``gpuclass scan``: this machine's (or a root's, or a dump's) PCI devices.

Exit codes: 0 when every device read cleanly, 1 when some device is flagged
(its reason is shown), 3 when the source cannot be read at all.
"""

from __future__ import annotations

import argparse

from ._common import add_db, add_format, emit_json, emit_table

EXAMPLES = """examples:
  gpuclass scan
  gpuclass scan --root /mnt/target --format json
  gpuclass scan --lspci collected/lspci-nnmm.txt
"""


def register(sub) -> None:
    p = sub.add_parser("scan", help="list the PCI devices of this machine",
                       description="List PCI devices with address, IDs, names, class and flags.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--root", default=None, metavar="DIR",
                     help="scan DIR/sys/bus/pci/devices (default: /)")
    src.add_argument("--lspci", default=None, metavar="FILE",
                     help="read a collected lspci -nnmm / -vmm -nn / -n dump instead")
    add_format(p)
    add_db(p)
    p.set_defaults(func=run)


def _names(db, table, i: int) -> dict[str, str | None]:
    v, d = int(table.vendor[i]), int(table.device[i])
    code = int(table.class_code[i])
    out = {
        "class_name": db.class_name(code >> 16, (code >> 8) & 0xFF),
        "vendor_name": db.vendor_name(v),
        "device_name": db.device_name(v, d),
        "subsystem_name": None,
    }
    if table.has_subsystem[i]:
        out["subsystem_name"] = db.subsystem_name(v, d, int(table.subvendor[i]), int(table.subdevice[i]))
    return out


def run(args) -> int:
    from ..db import default_database

    if args.lspci is not None:
        from ..lspci import read_lspci

        table = read_lspci(args.lspci)
    else:
        from ..sysfs import scan_sysfs

        table = scan_sysfs(args.root or "/")
    db = default_database(args.db)
    records = table.to_records()
    invalid = table.invalid_mask()
    for i, rec in enumerate(records):
        if not invalid[i]:
            rec.update(_names(db, table, i))
    if args.format == "json":
        emit_json({"source": table.source, "count": len(table), "devices": records})
    else:
        rows = [("ADDRESS", "CLASS", "ID", "SUBSYSTEM", "REV", "DRIVER", "FLAGS", "NAME")]
        for rec in records:
            if rec["problem"] is not None:
                name = f"INVALID: {rec['problem']}"
            else:
                name = " ".join(x for x in (rec["vendor_name"] or f"[{rec['vendor']}]",
                                            rec["device_name"] or f"Device [{rec['device']}]") if x)
            rows.append((rec["address"] or "-", rec["class"], f"{rec['vendor']}:{rec['device']}",
                         rec["subsystem"] or "-", rec["revision"] or "-", rec["driver"] or "-",
                         ",".join(rec["flags"]) or "-", name))
        emit_table(rows)
    return 1 if invalid.any() else 0
