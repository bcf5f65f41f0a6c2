"""``gpuclass labels``: the labels and GPU capacity this machine's node must carry,
as a Node patch, or the device plugin's time-slicing ConfigMap.

Exit codes: 0 done (a machine without a supported card gets no labels, which is
not an error), 1 the cards conflict (see ``gpuclass plan``), 3 the machine or
report cannot be read.
"""

from __future__ import annotations

import json
import sys

from .options import emit_json, emit_table, hardware_report

NAME = "labels"
HELP = "node labels, expected GPU capacity, device plugin config"
DESCRIPTION = ("The labels a node with this machine's hardware carries (autopilot.syself.com/gpu=true "
               "only with a supported card), its expected nvidia.com/gpu, a Node merge patch, or the "
               "NVIDIA device plugin's time-slicing ConfigMap.")
EXAMPLES = """examples:
  gpuclass labels                                node label, host label, nvidia.com/gpu
  gpuclass labels --format json
  kubectl patch node worker-1 --type merge -p "$(gpuclass labels --patch --node worker-1)"
  gpuclass labels --configmap | kubectl apply -f -
  gpuclass labels --configmap --namespace nvidia-device-plugin --format json
"""
OPTIONS = ("root|report", "policy", "format")


def arguments(p) -> None:
    what = p.add_mutually_exclusive_group()
    what.add_argument("--patch", action="store_true",
                      help="print a Node merge patch (JSON) with the GPU label")
    what.add_argument("--configmap", action="store_true",
                      help="print the device plugin's time-slicing ConfigMap (YAML; JSON with "
                           "--format json); reads no machine")
    p.add_argument("--node", default=None, metavar="NAME", help="node name for --patch")
    p.add_argument("--remove-stale", action="store_true",
                   help="--patch: on a node without a supported card, delete the GPU label "
                        "(default: set nothing)")
    p.add_argument("--name", default="nvidia-device-plugin-config",
                   help="ConfigMap name (default: %(default)s)")
    p.add_argument("--namespace", default="kube-system", help="ConfigMap namespace (default: %(default)s)")


def run(args) -> int:
    from ..k8s import labels as k8s_labels

    if args.configmap:
        cm = k8s_labels.device_plugin_configmap(name=args.name, namespace=args.namespace)
        if args.format == "json":
            emit_json(cm)
        else:
            from ..k8s.objects import dump_yaml

            sys.stdout.write(dump_yaml(cm))
        return 0
    report = hardware_report(args)
    if args.patch:
        patch = k8s_labels.labels_patch(report, args.node, remove_stale=args.remove_stale)
        if args.format == "json":
            emit_json(patch)
        else:  # one line, for kubectl patch -p "$(...)"
            sys.stdout.write(json.dumps(patch, separators=(",", ":")) + "\n")
        return 0
    from ..provisioner import plan

    labels = k8s_labels.node_labels(report)
    res = k8s_labels.expected_resources(report)
    decided = plan(report)  # the host label waits until a conflict is resolved
    host = decided.host_labels.labels
    rc = 0 if decided.ok else 1
    if args.format == "json":
        emit_json({"node_labels": labels, "host_labels": host, **res,
                   "supported_cards": report.summary.supported_cards,
                   "cards": report.summary.cards, "conflicts": decided.conflicts})
        return rc
    none = "(none: no supported card)"
    rows = [("node labels", ", ".join(f"{k}={v}" for k, v in labels.items()) or none),
            ("host labels", ", ".join(f"{k}={v}" for k, v in host.items()) or none),
            ("capacity", ", ".join(f"{k}: {v}" for k, v in res["capacity"].items()) or none),
            ("allocatable", ", ".join(f"{k}: {v}" for k, v in res["allocatable"].items()) or none)]
    if report.summary.cards:
        rows.append(("cards", ", ".join(f"{k} x{v}" for k, v in report.summary.cards.items())))
    rows += [("conflict", c) for c in decided.conflicts]
    emit_table(rows)
    return rc
