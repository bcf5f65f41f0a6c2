"""``gpuclass diagnose NODE.yaml``: why GPU pods do not schedule on a node.

Reads Node objects (``kubectl get node NAME -o yaml``; ``kubectl get nodes -o
yaml``, a ``List`` or ``NodeList``, for a whole cluster) and, with ``--root`` or
``--report``, this machine's hardware to compare.  A node without any GPU is
reported as "not a GPU node" (informational), so a whole cluster's nodes can be
diagnosed at once.  A node that does not read (a malformed document, a field of
the wrong type) is reported in its place and the others are still diagnosed.
JSON and YAML give a list with one diagnosis per node (``{"ok": false, "error":
...}`` for one that does not read).

Exit codes: 0 nothing wrong found (including nodes that are not GPU nodes), 1 a
problem found on some node (each with its action) or some node does not read, 2
usage error (--root or --report with several nodes, --db or --no-names without
--root), 3 a file, the machine or the PCI ID database cannot be read (no node
reads).
"""

from __future__ import annotations

from .options import emit, emit_lines, hardware_report, outcome, reject, require

NAME = "diagnose"
HELP = "why GPU pods do not schedule on a node"
DESCRIPTION = ("Diagnose 'GPU not scheduling' from Node objects: missing or unhealthy device plugin, "
               "no supported card, a card without its label, a label value that no selector matches, "
               "a renamed resource, a misconfigured or uncounted time-slicing capacity, a stale "
               "device plugin config label, a missing GPU pool label, cards that conflict, a GPU "
               "that NFD shows and nothing names. Nothing is fixed by hand: the advice is to "
               "reprovision where the provisioner sets it.")
EXAMPLES = """examples:
  kubectl get node worker-1 -o yaml > node.yaml && gpuclass diagnose node.yaml
  kubectl get node worker-1 -o yaml | gpuclass diagnose - --root /      (on the node itself)
  gpuclass diagnose node.yaml --report report.json -o json
  kubectl get nodes -o yaml | gpuclass diagnose -                        every node
"""
OPTIONS = ("root|report", "policy", "format", "db|no-names")
OPTION_HELP = {"root": "also read this machine's hardware at DIR (run on the node itself)"}


def arguments(p) -> None:
    p.add_argument("node", metavar="NODE.yaml",
                   help="Node objects (YAML or JSON: one, a List or a NodeList); - for stdin")


def run(args) -> int:
    from ..errors import InputError, ManifestError
    from ..k8s.diagnose import diagnose_nodes
    from ..k8s.objects import read_documents
    from ..policy import compile_policy

    require(args, ("db", "no_names"), "--root")
    if args.report is not None:
        reject(args, ("db", "no_names"), "with --report")
    # a node that does not read is reported in its place; the others are still diagnosed
    nodes, source = read_documents(args.node, keep_errors=True)
    if not nodes:
        raise ManifestError("", "no Node object found", source)
    report = None
    if args.root is not None or args.report is not None:
        if len(nodes) > 1:
            raise InputError(f"{source} holds {len(nodes)} nodes: --root/--report describe one machine")
        report = hardware_report(args)
    policy = compile_policy(args.policy)  # read once, for every node
    results: list = []
    for node in nodes:
        try:
            results += [node] if isinstance(node, ManifestError) else diagnose_nodes(
                [node], report, policy=policy, source=source)
        except ManifestError as exc:
            results.append(exc)
    if all(isinstance(d, ManifestError) for d in results):
        raise results[0]  # nothing could be diagnosed: the input is the problem (exit 3)
    ok = all(not isinstance(d, ManifestError) and d.ok for d in results)
    if args.format != "table":
        emit([{"ok": False, "error": str(d)} if isinstance(d, ManifestError)
              else d.model_dump(mode="json") | {"ok": d.ok} for d in results], args.format)
        return outcome(not ok)
    lines = []
    for d in results:
        if isinstance(d, ManifestError):
            lines.append(f"error: {d}")
            continue
        cap = "-" if d.capacity is None else str(d.capacity)
        alloc = "-" if d.allocatable is None else str(d.allocatable)
        exp = "unknown" if d.expected is None else str(d.expected)
        label = "set" if d.labeled else "absent"
        lines.append(f"node {d.node or '-'}: label {label}, {d.resource} capacity {cap}, "
                     f"allocatable {alloc}, expected {exp}")
        for f in d.findings:
            lines.append(f"  {f.severity}: [{f.code}] {f.message}")
            if f.action:
                lines.append(f"    action: {f.action}")
    emit_lines(lines)
    return outcome(not ok)
