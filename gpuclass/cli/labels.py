"""``gpuclass labels``: the labels and GPU capacity this machine's node must carry, as a
Node patch, a node-feature-discovery feature file or ``NodeFeature``, the bare-metal host's
patch; or the device plugin's time-slicing ConfigMap, or a check of a deployed one.

Every output carries the one node decision (:func:`gpuclass.policy.nodes.decide_node`):
``autopilot.syself.com/gpu=true`` only with a supported card whose cards do not conflict.
The ConfigMap follows the policy in use (``--policy``): its ``replicas`` and
``failRequestsGreaterThanOne``, its default config under the key ``default`` (which the
device plugin's Helm chart selects with ``config.default: default`` or by its default
fallbacks), and a config of its own for every card that sets its own slices (nodes with
such a card get the ``nvidia.com/device-plugin.config`` label that selects it), so the
capacity shown here and the plugin's config always agree.  ``--check`` reads a config
file or ConfigMap as the plugin reads it and reports each problem on a line.

Exit codes: 0 done (a machine without a supported card gets no labels, which is not an
error; --check: no problem found), 1 the cards conflict (see ``gpuclass plan``; --patch,
--nfd, --node-feature and --host-patch still print their object, without the GPU label)
or --check found a problem (one line each), 2 usage error (an option that does not apply
to what was asked: --node without --patch or --node-feature, --remove-stale without
--patch or --host-patch, --name or --namespace without --configmap or --node-feature,
--host without --host-patch, --default-key without --check, --root/--report/--db/--no-names
with --configmap or --check), 3 the machine, report, policy, config or PCI ID database
cannot be read.
"""

from __future__ import annotations

import sys

from .options import (EXIT_OK, UsageError, emit, emit_json, emit_lines, emit_table, given, report_data,
                      outcome, printable, reject)

NAME = "labels"
HELP = "node labels, expected GPU capacity, device plugin config"
DESCRIPTION = ("The labels a node with this machine's hardware carries (autopilot.syself.com/gpu=true "
               "only with a supported card and no conflict), its expected nvidia.com/gpu, a Node merge "
               "patch, an NFD feature file or NodeFeature, the HetznerBareMetalHost patch; the NVIDIA "
               "device plugin's time-slicing ConfigMap, or a check of an existing config.")
EXAMPLES = """examples:
  gpuclass labels                                node label, host label, nvidia.com/gpu
  gpuclass labels -o json
  kubectl patch node worker-1 --type merge -p "$(gpuclass labels --patch --node worker-1)"
  gpuclass labels --nfd > /etc/kubernetes/node-feature-discovery/features.d/gpuclass
  gpuclass labels --node-feature --node worker-1 | kubectl apply -f -
  kubectl patch hetznerbaremetalhost bm-1 --type merge -p "$(gpuclass labels --host-patch)"
  gpuclass labels --configmap | kubectl apply -f -
  gpuclass labels --configmap --policy allowlist.yaml --namespace nvidia-device-plugin -o json
  kubectl get cm -n nvidia-device-plugin nvidia-device-plugin-config -o yaml | gpuclass labels --check -
"""
OPTIONS = ("root|report", "policy", "format", "db|no-names")
CONFIGMAP_NAME, CONFIGMAP_NAMESPACE = "nvidia-device-plugin-config", "kube-system"
MACHINE = ("root", "report", "db", "no_names")
# option -> the modes it applies to
APPLIES = {"node": ("patch", "node_feature"), "remove_stale": ("patch", "host_patch"),
           "name": ("configmap", "node_feature"), "namespace": ("configmap", "node_feature"),
           "host": ("host_patch",), "default_key": ("check",)}
MODES = ("patch", "configmap", "check", "nfd", "node_feature", "host_patch")


def arguments(p) -> None:
    what = p.add_mutually_exclusive_group()
    what.add_argument("--patch", action="store_true",
                      help="print a Node merge patch (one line of JSON; YAML with -o yaml) with "
                           "the node's labels; it deletes a device plugin config label the node "
                           "no longer needs")
    what.add_argument("--nfd", action="store_true",
                      help="print the node's labels as a node-feature-discovery feature file "
                           "(features.d format); NFD removes a label whose line is gone")
    what.add_argument("--node-feature", action="store_true",
                      help="print the node's labels as an NFD NodeFeature object (YAML; JSON with "
                           "-o json); needs --node")
    what.add_argument("--host-patch", action="store_true",
                      help="print a HetznerBareMetalHost merge patch with the plan's host labels "
                           "(hardware: gpu), which put the host into the GPU pool")
    what.add_argument("--configmap", action="store_true",
                      help="print the device plugin's time-slicing ConfigMap of the policy "
                           "(YAML; JSON with -o json); reads no machine")
    what.add_argument("--check", default=None, metavar="FILE",
                      help="check a device plugin config file or ConfigMap (- for stdin) as the "
                           "plugin reads it, against the policy; reads no machine")
    p.add_argument("--node", default=None, metavar="NAME",
                   help="--patch, --node-feature: the node's name")
    p.add_argument("--remove-stale", action="store_true",
                   help="--patch, --host-patch: on a machine without a supported card (or with a "
                        "conflict), delete the labels it must not carry (default: set nothing)")
    p.add_argument("--host", default=None, metavar="NAME",
                   help="--host-patch: the HetznerBareMetalHost's name")
    p.add_argument("--name", default=None,
                   help=f"--configmap: the ConfigMap's name (default: {CONFIGMAP_NAME}); "
                        "--node-feature: the object's (default: gpuclass-NODE)")
    p.add_argument("--namespace", default=None,
                   help=f"--configmap: the ConfigMap's namespace (default: {CONFIGMAP_NAMESPACE}); "
                        "--node-feature: NFD's (default: node-feature-discovery)")
    p.add_argument("--default-key", default=None, metavar="KEY",
                   help="--check: the Helm chart's config.default (default: the key 'default', "
                        "else the only key)")


def _mode(args) -> str | None:
    mode = next((m for m in MODES if given(args, m)), None)
    for dest, modes in APPLIES.items():
        if given(args, dest) and mode not in modes:
            flag = "--" + dest.replace("_", "-")
            raise UsageError(f"{flag} applies only with " + " or ".join(
                "--" + m.replace("_", "-") for m in modes))
    if mode in ("configmap", "check"):
        reject(args, MACHINE, f"with --{mode} (it reads no machine)")
    elif args.report is not None:
        reject(args, ("policy", "db", "no_names"), "with --report (the report is already classified)")
    if mode == "node_feature" and not args.node:
        raise UsageError("--node-feature needs --node NAME (the object names its node)")
    if mode == "nfd" and args.format != "table":
        raise UsageError("-o does not apply with --nfd (a feature file is text)")
    return mode


def run(args) -> int:
    from ..k8s import labels as k8s_labels

    mode = _mode(args)
    if mode == "configmap":
        cm = k8s_labels.device_plugin_configmap(args.policy, name=args.name or CONFIGMAP_NAME,
                                                namespace=args.namespace or CONFIGMAP_NAMESPACE)
        emit(cm, "json" if args.format == "json" else "yaml")
        return EXIT_OK
    if mode == "check":
        return _check(args)
    from ..planning import plan_data

    # the plan as plain data (gpuclass.planning): the one node decision, no labels until a
    # conflict is resolved, without pydantic's import
    report = report_data(args)
    decided = plan_data(report)
    conflicts = decided["conflicts"]
    rc = outcome(bool(conflicts))
    if mode is not None:
        _publish(mode, args, decided)
        _conflicts(conflicts)
        return rc
    labels = decided["node_labels"]
    res = k8s_labels.expected_resources(decided)  # empty under a conflict
    host = decided["host_labels"]["labels"]
    summary = report["summary"]
    if args.format != "table":
        emit({"node_labels": labels, "host_labels": host, **res,
              "supported_cards": summary["supported_cards"],
              "cards": summary["cards"], "conflicts": conflicts}, args.format)
        return rc
    none = "(none: conflict, see 'gpuclass plan')" if conflicts else "(none: no supported card)"
    rows = [("node labels", ", ".join(f"{k}={v}" for k, v in labels.items()) or none),
            ("host labels", ", ".join(f"{k}={v}" for k, v in host.items()) or none),
            ("capacity", ", ".join(f"{k}: {v}" for k, v in res["capacity"].items()) or none),
            ("allocatable", ", ".join(f"{k}: {v}" for k, v in res["allocatable"].items()) or none)]
    if summary["cards"]:
        rows.append(("cards", ", ".join(f"{k} x{v}" for k, v in summary["cards"].items())))
    rows += [("conflict", c) for c in conflicts]
    emit_table(rows)
    sys.stdout.flush()
    return rc


def _publish(mode: str, args, decided) -> None:
    """The node decision as an object for the cluster: a patch, a feature file, a NodeFeature."""
    from ..k8s import labels as k8s_labels
    from ..k8s import publish

    if mode == "nfd":
        emit_lines(publish.nfd_feature_file(decided).splitlines())
        return
    if mode == "node_feature":
        obj = publish.node_feature(decided, args.node, namespace=args.namespace or publish.NFD_NAMESPACE,
                                   name=args.name)
        if args.format == "json":
            emit_json(obj)
        else:  # for kubectl apply; the comment says where the pool label comes from
            sys.stdout.write(printable(f"# {publish.POOL_LABEL_NOTE}") + "\n")
            emit(obj, "yaml")
        return
    if mode == "patch":
        obj = k8s_labels.labels_patch(decided, args.node, remove_stale=args.remove_stale)
    else:
        obj = publish.host_labels_patch(decided, args.host, remove_stale=args.remove_stale)
    if args.format == "table":  # one line, for kubectl patch -p "$(...)"
        emit_json(obj, compact=True)
    else:
        emit(obj, args.format)


def _check(args) -> int:
    """``--check FILE``: one line per problem of a device plugin config (exit 1), as the plugin
    and its config-manager read it."""
    from ..inputs import input_name
    from ..k8s.plugin_config import check_device_plugin_config
    from ..k8s.objects import read_text

    text, source = read_text(args.check)
    findings = check_device_plugin_config(text, policy=args.policy, default_key=args.default_key,
                                          source=source)
    source = source or input_name(args.check)
    if args.format != "table":
        emit({"source": source, "ok": not findings,
              "findings": [f.model_dump(mode="json") for f in findings]}, args.format)
    elif findings:
        emit_lines([f"{source}: {f.path or '-'}: {f.message} [{f.code}]" for f in findings])
    else:
        emit_lines([f"{source}: no problem found: the device plugin reads it as the policy means"])
    return outcome(bool(findings))


def _conflicts(conflicts: list[str]) -> None:
    """A generated object under a conflict carries no GPU label: say why on stderr (the
    object itself goes to a pipe or a file)."""
    for c in conflicts:
        print(printable(f"gpuclass: conflict: {c}: no GPU label (see 'gpuclass plan')"),
              file=sys.stderr)
