"""``gpuclass diagnose NODE.yaml``: why GPU pods do not schedule on a node.

Reads the Node object (``kubectl get node NAME -o yaml``; a ``List`` of nodes
too) and, with ``--root`` or ``--report``, this machine's hardware to compare.

Exit codes: 0 nothing wrong found, 1 a problem found (each with its action),
2 usage error, 3 a file or the machine cannot be read.
"""

from __future__ import annotations

from .options import emit_json, emit_lines, hardware_report

NAME = "diagnose"
HELP = "why GPU pods do not schedule on a node"
DESCRIPTION = ("Diagnose 'GPU not scheduling' from a Node object: missing or unhealthy device plugin, "
               "no supported card, a card without its label, a misconfigured time-slicing capacity.")
EXAMPLES = """examples:
  kubectl get node worker-1 -o yaml > node.yaml && gpuclass diagnose node.yaml
  kubectl get node worker-1 -o yaml | gpuclass diagnose - --root /      (on the node itself)
  gpuclass diagnose node.yaml --report report.json --format json
  kubectl get nodes -o yaml | gpuclass diagnose -                        every node
"""
OPTIONS = ("root|report", "policy", "format")
OPTION_HELP = {"root": "also read this machine's hardware at DIR (run on the node itself)"}


def arguments(p) -> None:
    p.add_argument("node", metavar="NODE.yaml", help="the Node object (YAML or JSON); - for stdin")


def run(args) -> int:
    from ..errors import InputError, ManifestError
    from ..k8s.diagnose import diagnose
    from ..k8s.objects import read_documents
    

    # a node that does not read is reported in its place; the others are still diagnosed
    docs, source = read_documents(args.node, keep_errors=True)
    if not docs:
        raise ManifestError("", "no Node object found", source)
    report = None
    if args.root is not None or args.report is not None:
        if len(docs) > 1:
            raise InputError(f"{source} holds {len(docs)} nodes: --root/--report describe one machine")
        report = hardware_report(args)
    results: list = []
    for doc in docs:
        try:
            results.append(doc if isinstance(doc, ManifestError) else diagnose(doc, report, source=source))
        except ManifestError as exc:
            results.append(exc)
    if all(isinstance(d, ManifestError) for d in results):
        raise results[0]  # nothing could be diagnosed: the input is the problem (exit 3)
    ok = all(not isinstance(d, ManifestError) and d.ok for d in results)
    if args.format == "json":
        out = [{"ok": False, "error": str(d)} if isinstance(d, ManifestError)
               else d.model_dump(mode="json") | {"ok": d.ok} for d in results]
        emit_json(out[0] if len(out) == 1 else out)
        return 0 if ok else 1
    lines = []
    for d in results:
        if isinstance(d, ManifestError):
            lines.append(f"error: {d}")
            continue
        cap = "-" if d.capacity is None else str(d.capacity)
        alloc = "-" if d.allocatable is None else str(d.allocatable)
        exp = "unknown" if d.expected is None else str(d.expected)
        lines.append(f"node {d.node or '-'}: label {'set' if d.labeled else 'absent'}, "
                     f"nvidia.com/gpu capacity {cap}, allocatable {alloc}, expected {exp}")
        for f in d.findings:
            lines.append(f"  {f.severity}: [{f.code}] {f.message}")
            if f.action:
                lines.append(f"    action: {f.action}")
    emit_lines(lines)
    return 0 if ok else 1
