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


_SUMMARY_FIELDS = ("supported_cards", "cards", "slices", "resource", "gpu_node", "labels", "conflicts",
                   "unsupported_gpus", "companions", "virtual_functions", "invalid", "warnings")


def collect(args, quick: bool = True) -> tuple[str, list[dict], dict, bool]:
    """``(source, records, summary, any device flagged)`` of the scan ``args`` ask for
    (:func:`gpuclass.machine.scan_machine`; without numpy where ``quick`` and the machine
    allow)."""
    from ..machine import scan_machine

    m = scan_machine(args.root or "/", policy=args.policy, db=args.db, names=not args.no_names,
                     lspci=args.lspci, quick=quick)
    return m.source, m.records, {k: m.summary[k] for k in _SUMMARY_FIELDS}, m.invalid


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
