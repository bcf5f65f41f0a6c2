"""``gpuclass labels``: the labels and GPU capacity this machine's node must carry,
as a Node patch, or the device plugin's time-slicing ConfigMap.

The ConfigMap follows the policy in use (``--policy``): its ``replicas`` and
``failRequestsGreaterThanOne``, and a config of its own for every card that sets its
own slices (nodes with such a card get the ``nvidia.com/device-plugin.config`` label
that selects it), so the capacity shown here and the plugin's config always agree.

Exit codes: 0 done (a machine without a supported card gets no labels, which is
not an error), 1 the cards conflict (see ``gpuclass plan``), 2 usage error (an
option that does not apply: --node or --remove-stale without --patch, --name or
--namespace without --configmap, --root/--report/--db/--no-names with
--configmap), 3 the machine, report, policy or PCI ID database cannot be read.
"""

from __future__ import annotations

import sys

from .main import EXIT_FOUND_PROBLEM, EXIT_OK
from .options import emit, emit_json, emit_table, hardware_report, printable, reject, require

NAME = "labels"
HELP = "node labels, expected GPU capacity, device plugin config"
DESCRIPTION = ("The labels a node with this machine's hardware carries (autopilot.syself.com/gpu=true "
               "only with a supported card), its expected nvidia.com/gpu, a Node merge patch, or the "
               "NVIDIA device plugin's time-slicing ConfigMap.")
EXAMPLES = """examples:
  gpuclass labels                                node label, host label, nvidia.com/gpu
  gpuclass labels -o json
  kubectl patch node worker-1 --type merge -p "$(gpuclass labels --patch --node worker-1)"
  gpuclass labels --configmap | kubectl apply -f -
  gpuclass labels --configmap --policy allowlist.yaml --namespace nvidia-device-plugin -o json
"""
OPTIONS = ("root|report", "policy", "format", "db|no-names")
CONFIGMAP_NAME, CONFIGMAP_NAMESPACE = "nvidia-device-plugin-config", "kube-system"


def arguments(p) -> None:
    what = p.add_mutually_exclusive_group()
    what.add_argument("--patch", action="store_true",
                      help="print a Node merge patch (one line of JSON; YAML with -o yaml) with "
                           "the node's labels")
    what.add_argument("--configmap", action="store_true",
                      help="print the device plugin's time-slicing ConfigMap of the policy "
                           "(YAML; JSON with -o json); reads no machine")
    p.add_argument("--node", default=None, metavar="NAME", help="--patch: the node's name")
    p.add_argument("--remove-stale", action="store_true",
                   help="--patch: on a node without a supported card, delete the GPU label "
                        "(default: set nothing)")
    p.add_argument("--name", default=None,
                   help=f"--configmap: the ConfigMap's name (default: {CONFIGMAP_NAME})")
    p.add_argument("--namespace", default=None,
                   help=f"--configmap: the ConfigMap's namespace (default: {CONFIGMAP_NAMESPACE})")


def run(args) -> int:
    from ..k8s import labels as k8s_labels

    require(args, ("node", "remove_stale"), "--patch")
    require(args, ("name", "namespace"), "--configmap")
    if args.configmap:
        reject(args, ("root", "report", "db", "no_names"), "with --configmap (it reads no machine)")
        cm = k8s_labels.device_plugin_configmap(args.policy, name=args.name or CONFIGMAP_NAME,
                                                namespace=args.namespace or CONFIGMAP_NAMESPACE)
        emit(cm, "json" if args.format == "json" else "yaml")
        return EXIT_OK
    if args.report is not None:
        reject(args, ("policy", "db", "no_names"), "with --report (the report is already classified)")
    report = hardware_report(args)
    from ..provisioner import plan

    decided = plan(report)  # the one node decision: no labels until a conflict is resolved
    rc = EXIT_OK if decided.ok else EXIT_FOUND_PROBLEM
    if args.patch:
        patch = k8s_labels.labels_patch(decided, args.node, remove_stale=args.remove_stale)
        if args.format == "table":  # one line, for kubectl patch -p "$(...)"
            emit_json(patch, compact=True)
        else:
            emit(patch, args.format)
        _conflicts(decided.conflicts)
        return rc
    labels = decided.node_labels
    res = k8s_labels.expected_resources(report)  # empty under a conflict
    host = decided.host_labels.labels
    if args.format != "table":
        emit({"node_labels": labels, "host_labels": host, **res,
              "supported_cards": report.summary.supported_cards,
              "cards": report.summary.cards, "conflicts": decided.conflicts}, args.format)
        return rc
    none = "(none: conflict, see 'gpuclass plan')" if decided.conflicts else "(none: no supported card)"
    rows = [("node labels", ", ".join(f"{k}={v}" for k, v in labels.items()) or none),
            ("host labels", ", ".join(f"{k}={v}" for k, v in host.items()) or none),
            ("capacity", ", ".join(f"{k}: {v}" for k, v in res["capacity"].items()) or none),
            ("allocatable", ", ".join(f"{k}: {v}" for k, v in res["allocatable"].items()) or none)]
    if report.summary.cards:
        rows.append(("cards", ", ".join(f"{k} x{v}" for k, v in report.summary.cards.items())))
    rows += [("conflict", c) for c in decided.conflicts]
    emit_table(rows)
    sys.stdout.flush()
    return rc


def _conflicts(conflicts: list[str]) -> None:
    """A generated object under a conflict carries no GPU label: say why on stderr (the
    object itself goes to a pipe or a file)."""
    for c in conflicts:
        print(printable(f"gpuclass: conflict: {c}: no GPU label (see 'gpuclass plan')"),
              file=sys.stderr)
