"""``gpuclass validate-pod FILE...``: check the ``nvidia.com/gpu`` requests of pods and
workloads before they are applied; or the same rules at the API server, as a
ValidatingAdmissionPolicy or a webhook's answer.

Every Pod, PodTemplate, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job and
CronJob in the files (multi-document YAML or JSON, ``List`` and ``PodList`` too) is
checked, their containers, init containers and ephemeral containers alike, and their
pod-level resources; other kinds (Services, ConfigMaps, ...) are skipped.  ``--policy``
decides whether more than one slice per container is rejected (the platform's policy:
yes).  A document that does not read (malformed, a field of the wrong type) is reported
in its place (``unreadable`` in JSON and YAML) and the others are still checked.

``--admission-policy`` prints a ValidatingAdmissionPolicy and its binding
(``admissionregistration.k8s.io/v1``: Kubernetes 1.30 or later) whose CEL refuses, at the
API server, the pods this command refuses for their slices; ``--admission-review FILE``
answers a webhook's AdmissionReview request with this command's verdict.

Exit codes: 0 every pod is valid (--admission-policy: printed; --admission-review: the pod
is allowed), 1 some pod is invalid or some document does not read (--admission-review: the
pod is denied), 2 usage error (no FILE, or FILE with --admission-policy or
--admission-review), 3 a file, the review or the policy cannot be read, or the files hold
no pod that reads at all.
"""

from __future__ import annotations

from .options import EXIT_OK, UsageError, emit, emit_json, emit_lines, outcome, printable

NAME = "validate-pod"
HELP = "check pods' nvidia.com/gpu requests (one slice each)"
DESCRIPTION = ("Check every container, init container and ephemeral container of pods and workloads: "
               "a limit alone implies the request, requests must equal limits, whole slices only, "
               "and at most 1 nvidia.com/gpu per container.")
EXAMPLES = """examples:
  gpuclass validate-pod pod.yaml
  gpuclass validate-pod deploy/*.yaml -o json
  kubectl get deploy trainer -o yaml | gpuclass validate-pod -
  kubectl get pods -A -o yaml | gpuclass validate-pod -       every pod of a cluster
  gpuclass validate-pod --admission-policy | kubectl apply -f -     Kubernetes 1.30 or later
  gpuclass validate-pod --admission-review request.json -o json    a webhook's answer
"""
OPTIONS = ("format", "policy")


def arguments(p) -> None:
    p.add_argument("files", nargs="*", metavar="FILE", help="YAML or JSON manifests; - for stdin")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--admission-policy", action="store_true",
                      help="print a ValidatingAdmissionPolicy and its binding (YAML; a List with "
                           "-o json) that refuse these pods at the API server (Kubernetes 1.30+)")
    what.add_argument("--admission-review", default=None, metavar="FILE",
                      help="answer an AdmissionReview request (- for stdin) with this command's "
                           "verdict: the AdmissionReview response, as JSON (YAML with -o yaml)")


def run(args) -> int:
    if args.admission_policy or args.admission_review is not None:
        if args.files:
            raise UsageError("FILE does not apply with --admission-policy or --admission-review")
        return _admission(args)
    if not args.files:
        raise UsageError("give the manifests to check (FILE, or - for stdin)")
    from ..errors import ManifestError
    from ..k8s.objects import read_documents
    from ..k8s.pods import POD_TEMPLATE_KINDS, validate_pods
    from ..policy import compile_policy

    policy = compile_policy(args.policy)  # read once, for every pod
    results, skipped, unreadable = [], [], []
    for path in args.files:
        # a document that does not read is reported in its place; the others are still checked
        docs, source = read_documents(path, keep_errors=True)
        for i, doc in enumerate(docs):
            where = f"{source} (document {i + 1})" if len(docs) > 1 else source
            if isinstance(doc, ManifestError):
                unreadable.append({"source": source, "document": i, "error": str(doc), "exc": doc})
                continue
            kind = doc.get("kind")
            if kind is not None and kind not in POD_TEMPLATE_KINDS:
                meta = doc.get("metadata")
                name = meta.get("name") if isinstance(meta, dict) else None
                skipped.append({"source": source, "document": i, "kind": kind, "name": name})
                continue
            try:
                (v,) = validate_pods([doc], policy=policy, source=where)
            except ManifestError as exc:
                unreadable.append({"source": source, "document": i, "error": str(exc), "exc": exc})
                continue
            results.append((source, i, v))
    if not results:  # nothing could be checked: the input is the problem (exit 3)
        if unreadable:
            raise unreadable[0].get("exc") or ManifestError("", unreadable[0]["error"])
        raise ManifestError("", "no pod or workload with a pod template found", ", ".join(args.files))
    for u in unreadable:
        u.pop("exc", None)
    valid = all(v.valid for _, _, v in results) and not unreadable
    if args.format != "table":
        emit({"valid": valid,
              "objects": [{"source": s, "document": i, **v.model_dump(mode="json")}
                          for s, i, v in results],
              "skipped": skipped, "unreadable": unreadable}, args.format)
        return outcome(not valid)
    out = [f"INVALID document {u['document'] + 1} ({u['source']}): {u['error']}" for u in unreadable]
    for source, i, v in results:
        what = f"{v.kind}/{v.name}" if v.name else v.kind
        verdict = "valid" if v.valid else "INVALID"
        out.append(f"{what} ({source}): {verdict}, {v.slices} nvidia.com/gpu at its peak")
        for c in v.containers:
            if c.slices or c.errors:
                out.append(f"  {c.path} ({c.name or '-'}): {c.slices} slice(s)")
        out += [f"  error: {e}" for e in v.errors]
        out += [f"  warning: {w}" for w in v.warnings]
    out += [f"skipped {s['kind']}/{s['name'] or '-'} ({s['source']}): no pod template" for s in skipped]
    emit_lines(out)
    return outcome(not valid)


def _admission(args) -> int:
    """``--admission-policy`` and ``--admission-review``."""
    import sys

    from ..k8s import admission

    if args.admission_policy:
        objs = admission.admission_policy(args.policy)
        if args.format == "json":
            emit_json({"apiVersion": "v1", "kind": "List", "items": objs})
        else:
            from ..k8s.objects import dump_yaml

            sys.stdout.write(printable(f"# {admission.ADMISSION_API_VERSION}: Kubernetes 1.30 or "
                                       "later") + "\n")
            sys.stdout.write("---\n".join(dump_yaml(o) for o in objs))
        return EXIT_OK
    from ..k8s.objects import read_text

    text, source = read_text(args.admission_review)
    answer = admission.admission_review(text, policy=args.policy, source=source)
    emit(answer, "yaml" if args.format == "yaml" else "json")
    return outcome(not answer["response"]["allowed"])
