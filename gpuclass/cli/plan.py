"""``gpuclass plan``: what this machine needs: driver, kernel module, device plugin,
secure runtime, host labels, each with its reason.

JSON and YAML give ``{"report": ..., "plan": ...}``: the hardware report (devices in
the record shape of :mod:`gpuclass.records`) and the plan, whose decisions carry
their choice as data (``{"resource": "nvidia.com/gpu", "replicas": 4, ...}``).

Exit codes: 0 a plan without conflicts (also for a machine without a supported
card: it simply gets nothing GPU-related), 1 a conflict (supported cards that
need different kernel modules, or different slices per card), 2 usage error, 3
the machine, the report or the PCI ID database cannot be read (--no-names
proceeds without names).
"""

from __future__ import annotations

from .options import emit, emit_lines, emit_table, outcome, reject, report_data, yes

NAME = "plan"
HELP = "what the provisioner installs on this machine, and why"
DESCRIPTION = ("Inspect the machine and decide: NVIDIA driver, kernel module flavour, device plugin, "
               "secure runtime and host labels.")
EXAMPLES = """examples:
  gpuclass plan                                  plan for this machine
  gpuclass plan --root /mnt/rescue-target
  gpuclass plan -o json > report.json            the hardware report and the plan
  gpuclass plan --report report.json             plan again from a saved report
"""
OPTIONS = ("root|report", "policy", "format", "db|no-names")


def value_text(d: dict) -> str:
    """A decision's choice in a table cell: its labels, else its value's scalars."""
    if d["labels"]:
        return ",".join(f"{k}={v}" for k, v in d["labels"].items())
    value = d["value"]
    if "resource" in value and "replicas" in value:
        return f"{value['resource']}, {value['replicas']} per card"
    items = [(k, v) for k, v in value.items() if not isinstance(v, (list, dict))]
    if len(items) == 1:
        return str(items[0][1])
    return ",".join(f"{k}={v}" for k, v in items) or "-"


DECISIONS = ("nvidia_driver", "kernel_module", "device_plugin", "secure_runtime", "host_labels")


def run(args) -> int:
    from ..planning import plan_data

    if args.report is not None:  # the report was classified and named when it was taken
        reject(args, ("policy", "db", "no_names"), "with --report (the report is already classified)")
    # plain data (gpuclass.planning): the provisioner's decisions without pydantic's import
    report = report_data(args)
    result = plan_data(report)
    ok = not result["conflicts"]
    if args.format != "table":
        emit({"report": report, "plan": result}, args.format)
        return outcome(not ok)
    rows = [("DECISION", "INSTALL", "VALUE", "REASON")]
    for d in (result[k] for k in DECISIONS):
        rows.append((d["name"], "CONFLICT" if d["conflict"] else yes(d["install"]), value_text(d),
                     d["reason"]))
    emit_table(rows)
    out = ["", f"machine: {report['root']} ({report['pci_devices']} PCI functions)"]
    supported = report["summary"]["supported_cards"]
    if result["gpu_node"]:
        out.append("node labels: " + ", ".join(f"{k}={v}" for k, v in result["node_labels"].items()))
        out.append(f"nvidia.com/gpu: {result['slices']} (Capacity and Allocatable)")
    elif supported:
        out.append(f"node labels: none until the conflict is resolved ({supported} supported "
                   "card(s) found)")
    else:
        out.append("node labels: none (no supported card)")
    cpu = report["cpu"]
    if cpu is not None:
        out.append(f"cpu: {cpu['model_name'] or cpu['vendor'] or 'unknown'}, "
                   f"{cpu['logical_cpus']} logical CPUs")
    blocked = [d["name"] for d in (result["kernel_module"], result["device_plugin"])
               if d["conflict"] and d["reason"] in result["conflicts"]]
    if blocked:  # the reasons are in the table above: say them once
        out.append(f"conflict: {', '.join(blocked)} (see above): nothing GPU-related is installed "
                   "until it is resolved")
    out += [f"warning: {w}" for w in result["warnings"]]
    emit_lines(out)
    return outcome(not ok)
