"""``gpuclass scan``: this machine's (or a root's, or a dump's) PCI devices, classified.

Each device shows its classification (status, supported card, slices); below
the devices come the machine's supported cards, its slice total and the node
label it earns, and why any other NVIDIA GPU is not supported.  JSON and YAML
give every device in the record shape of :mod:`gpuclass.records` plus what the
source read and the classification.  The default policy is applied without
pydantic, so the command stays quick.

Exit codes: 0 when every device read cleanly, 1 when some device is flagged
(its reason is shown) or the supported cards conflict (no node label then: see
``gpuclass plan``), 2 usage error, 3 when the source or the PCI ID database
cannot be read (--no-names proceeds without names).
"""

from __future__ import annotations

from .options import emit, emit_lines, emit_table, outcome

NAME = "scan"
HELP = "classify this machine's PCI devices and GPUs"
DESCRIPTION = ("List PCI devices with address, IDs, class, flags and their classification (status, "
               "card, slices), then the supported cards and slice total.")
EXAMPLES = """examples:
  gpuclass scan                              this machine: devices, cards, slices
  gpuclass scan --root /mnt/target -o json
  gpuclass scan --lspci collected/lspci-nnmm.txt
  gpuclass scan --policy allowlist.yaml      classify against another allowlist
"""
OPTIONS = ("root|lspci", "policy", "format", "db|no-names")
OPTION_HELP = {"root": "scan DIR/sys/bus/pci/devices (default: /)"}


# Up to this many device directories, a scan runs on lists, without numpy (a machine has
# tens to a few hundred functions; the compiled reader is the one for thousands).
QUICK_DEVICES = 512

_SUMMARY_FIELDS = ("supported_cards", "cards", "slices", "resource", "gpu_node", "labels", "conflicts",
                   "unsupported_gpus", "companions", "virtual_functions", "invalid", "warnings")


def _summary(data: dict) -> dict:
    """The machine's rollup (``node_data``: labels and conflicts from the one node
    decision) as the command prints it."""
    return {k: data[k] for k in _SUMMARY_FIELDS}


def collect(args, quick: bool = True) -> tuple[str, list[dict], dict, bool]:
    """``(source, records, summary, any device flagged)`` of the scan ``args`` ask for:
    without numpy where ``quick`` and the machine allows it (see the module docstring),
    else through a DeviceTable."""
    got = _collect_quick(args) if quick and args.lspci is None else None
    return got if got is not None else _collect_table(args)


def _names(args):
    if args.no_names:
        from ..pcinames import NO_NAMES

        return NO_NAMES
    from ..db import default_database

    return default_database(args.db)


def _quick_names(args):
    if args.no_names:
        return _names(args)
    from ..db.mapped import cached_names

    return cached_names(args.db)


def _collect_table(args) -> tuple[str, list[dict], dict, bool]:
    if args.lspci is not None:
        from ..errors import NotLspciOutput, SourceError
        from ..sources.lspci import read_lspci

        try:
            table = read_lspci(args.lspci)
        except NotLspciOutput as exc:  # also an InputError (exit 2); here an unreadable source: exit 3
            raise SourceError(exc.path, exc.line, exc.reason) from exc
    else:
        from ..sources.sysfs import scan_sysfs

        table = scan_sysfs(args.root or "/")
    db = _names(args)
    records = table.to_records(db)
    from ..classify import classify_table

    result = classify_table(table, args.policy)
    for rec, verdict in zip(records, result.verdicts(db)):
        rec.update(verdict)
    return table.source, records, _summary(result.summary().node_data(0)), bool(table.invalid_mask().any())


def _collect_quick(args) -> tuple[str, list[dict], dict, bool] | None:
    """The scan of a machine's few devices on lists; None where it takes the table path
    (more devices, or no database cache to map yet)."""
    db = _quick_names(args)
    if db is None:
        return None
    from ..sources.sysfs import scan_sysfs_rows

    rows = scan_sysfs_rows(args.root or "/", limit=QUICK_DEVICES)
    if rows is None:
        return None
    from .. import constants as C
    from .. import verdicts
    from .._native import match_rows, rollup_rows
    from ..policy import compile_policy
    from ..records import column_records

    compiled = compile_policy(args.policy)
    c = rows.columns
    status, card, slices = match_rows(
        compiled.rules, c["vendor"], c["device"], c["subvendor"], c["subdevice"], c["class_code"],
        has_subsystem=c["has_subsystem"], flags=c["flags"], domain=c["domain"], bus=c["bus"],
        slot=c["slot"])
    row = rollup_rows(status, card, slices)
    counted = None
    if row[C.R_MIXED] & C.MIXED_MODELS:
        counted = verdicts.tally([0] * len(status), status, card).get(0, {})
    records = column_records(c, rows.driver, rows.problems, rows.addresses, db)

    def ids(i: int):
        has = c["has_subsystem"][i]
        return c["vendor"][i], c["device"][i], c["subvendor"][i] if has else None, c["subdevice"][i] if has else None

    for rec, verdict in zip(records, verdicts.verdicts(compiled, status, card, slices, ids, db)):
        rec.update(verdict)
    summary = _summary(verdicts.node_data(row, verdicts.card_counts(row, counted), compiled, 0))
    return rows.source, records, summary, any(p is not None for p in rows.problems)


def _footer(summary: dict, records: list[dict]) -> list[str]:
    lines = [""]
    n = summary["supported_cards"]
    if n:
        cards = ", ".join(f"{k} x{v}" for k, v in summary["cards"].items())
        lines.append(f"supported cards: {n} ({cards})")
        if summary["conflicts"]:  # the node decision: nothing GPU-related is installed
            lines.append(f"slices: none advertised until the conflict is resolved (the cards give "
                         f"{summary['slices']} {summary['resource']})")
            lines.append("node label: none until the conflict is resolved (see 'gpuclass plan')")
            lines += [f"conflict: {c}" for c in summary["conflicts"]]
        else:
            lines.append(f"slices: {summary['slices']} {summary['resource']} "
                         "(Capacity and Allocatable)")
            lines.append("node label: " + ", ".join(f"{k}={v}" for k, v in summary["labels"].items()))
    else:
        lines.append("supported cards: 0: no GPU support, no node label, no slices")
    for rec in records:
        if rec["status"] == "unsupported":
            why = rec["note"] + (f"; {rec['near_miss']['reason']}" if rec["near_miss"] else "")
            lines.append(f"unsupported GPU {rec['slot'] or '-'} "
                         f"({rec['vendor']}:{rec['device']}): {why}")
    lines += [f"warning: {w}" for w in summary["warnings"]]
    return lines


def run(args) -> int:
    source, records, summary, invalid = collect(args)
    if args.format != "table":
        emit({"source": source, "count": len(records), "devices": records, "summary": summary},
             args.format)
    else:
        rows = [("ADDRESS", "CLASS", "ID", "SUBSYSTEM", "REV", "DRIVER", "FLAGS", "STATUS", "CARD",
                 "SLICES", "NAME")]
        for rec in records:
            if rec["problem"] is not None:
                name = f"INVALID: {rec['problem']}"
            else:
                name = " ".join(x for x in (rec["vendor_name"] or f"[{rec['vendor']}]",
                                            rec["device_name"] or f"Device [{rec['device']}]") if x)
            sub = f"{rec['svendor']}:{rec['sdevice']}" if rec["svendor"] is not None else "-"
            rows.append((rec["slot"] or "-", rec["class"] + (rec["progif"] or ""),
                         f"{rec['vendor']}:{rec['device']}", sub, rec["rev"] or "-",
                         rec["driver"] or "-", ",".join(rec["flags"]) or "-", rec["status"],
                         rec["card"] or "-", str(rec["slices"]), name))
        emit_table(rows)
        emit_lines(_footer(summary, records))
    return outcome(bool(invalid or summary["conflicts"]))
