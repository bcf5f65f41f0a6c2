"""``gpuclass plan``: what this machine needs: driver, kernel module, device plugin,
secure runtime, host labels, each with its reason.

Exit codes: 0 a plan without conflicts (also for a machine without a supported
card: it simply gets nothing GPU-related), 1 a conflict (supported cards that
need different kernel modules), 3 the machine cannot be read.
"""

from __future__ import annotations

from .options import emit_json, emit_lines, emit_table, hardware_report, yes

NAME = "plan"
HELP = "what the provisioner installs on this machine, and why"
DESCRIPTION = ("Inspect the machine and decide: NVIDIA driver, kernel module flavour, device plugin, "
               "secure runtime and host labels.")
EXAMPLES = """examples:
  gpuclass plan                                  plan for this machine
  gpuclass plan --root /mnt/rescue-target
  gpuclass plan --format json > report.json      the hardware report and the plan
  gpuclass plan --report report.json             plan again from a saved report
"""
OPTIONS = ("root|report", "policy", "format")


def _value(d) -> str:
    if d.labels:
        return ",".join(f"{k}={v}" for k, v in d.labels.items())
    return d.value or "-"


def run(args) -> int:
    from ..provisioner import plan

    report = hardware_report(args)
    result = plan(report)
    if args.format == "json":
        emit_json({"report": report.model_dump(mode="json"), "plan": result.model_dump(mode="json")})
        return 0 if result.ok else 1
    rows = [("DECISION", "INSTALL", "VALUE", "REASON")]
    for d in result.decisions():
        rows.append((d.name, "CONFLICT" if d.conflict else yes(d.install), _value(d), d.reason))
    emit_table(rows)
    out = ["", f"machine: {report.root} ({report.pci_devices} PCI functions)"]
    if result.gpu_node:
        out.append("node labels: " + ", ".join(f"{k}={v}" for k, v in result.node_labels.items()))
        out.append(f"nvidia.com/gpu: {result.slices} (Capacity and Allocatable)")
    else:
        out.append("node labels: none (no supported card)")
    if report.cpu is not None:
        cpu = report.cpu
        out.append(f"cpu: {cpu.model_name or cpu.vendor or 'unknown'}, {cpu.logical_cpus} logical CPUs")
    out += [f"conflict: {c}" for c in result.conflicts]
    out += [f"warning: {w}" for w in result.warnings]
    emit_lines(out)
    return 0 if result.ok else 1
