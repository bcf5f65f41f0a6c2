"""The ValidatingAdmissionPolicy made from the policy gives validate-pod's verdict, and the
webhook's AdmissionReview answer is validate-pod's.

The CEL is evaluated with cel-python (``celk8s``) on pods the API server's own validation
admits (an admission policy never sees any other): an extended resource has a limit,
requests equal limits, whole numbers, ephemeral containers without resources.  On those,
the policy refuses a pod exactly when :func:`validate_pod` calls it invalid.
"""

from __future__ import annotations

import copy
import json

import celk8s
import helpers
import kube
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from k8s_samples import POD

from gpuclass.errors import ManifestError
from gpuclass.k8s.admission import admission_policy, admission_review
from gpuclass.k8s.pods import validate_pod
from gpuclass.policy import Policy

GPU, SHARED = "nvidia.com/gpu", "nvidia.com/gpu.shared"
LENIENT = Policy.loads('{"fail_requests_greater_than_one": false}', "json")


def spelled(n: int):
    """The ways a manifest writes the whole number ``n`` (the API server takes them all)."""
    forms = [n, str(n), f"{n * 1000}m", f"{n}e0", f"+{n}"]
    if n == 1000:
        forms.append("1k")
    return st.sampled_from(forms)


@st.composite
def container(draw, name: str, restart: bool = False):
    limits: dict = {}
    requests: dict = {}
    for r in sorted(draw(st.sets(st.sampled_from([GPU, SHARED, "cpu", "memory"])))):
        if r in (GPU, SHARED):
            n = draw(st.sampled_from([0, 1, 1, 1, 2, 3, 1000]))
            limits[r] = draw(spelled(n))
            if draw(st.booleans()):
                requests[r] = draw(spelled(n))  # equal to the limit, maybe written otherwise
        elif r == "cpu":
            requests["cpu"] = "500m"
        else:
            limits["memory"] = "1Gi"
    c: dict = {"name": name, "image": "cuda:12"}
    res = {k: v for k, v in (("limits", limits), ("requests", requests)) if v}
    if res:
        c["resources"] = res
    if restart:
        c["restartPolicy"] = "Always"
    return c


@st.composite
def admitted_pod(draw):
    """A pod the API server's validation admits, with GPUs anywhere a container may ask."""
    spec: dict = {"containers": [draw(container(f"app-{i}")) for i in range(draw(st.integers(1, 3)))]}
    inits = draw(st.integers(0, 2))
    if inits:
        spec["initContainers"] = [draw(container(f"init-{i}", restart=draw(st.booleans())))
                                  for i in range(inits)]
    if draw(st.booleans()):
        spec["ephemeralContainers"] = [{"name": "debugger", "image": "busybox",
                                        "targetContainerName": "app-0"}]
    if draw(st.booleans()):
        spec["resources"] = {"limits": {"cpu": "4", "memory": "8Gi"}}  # pod-level: cpu, memory only
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": spec}


@pytest.fixture(scope="module")
def strict():
    return celk8s.Policy(admission_policy()[0])


@pytest.fixture(scope="module")
def lenient():
    return celk8s.Policy(admission_policy(LENIENT)[0])


@settings(max_examples=300, deadline=None)
@given(pod=admitted_pod())
def test_the_cel_gives_validate_pods_verdict(strict, pod):
    assert kube.schema_errors(pod, kube.NEWEST) == []  # a real pod (pod-level resources: 1.32+)
    verdict = validate_pod(pod)
    assert verdict.valid == (strict.refusals(pod) == []), (verdict.errors, pod)
    # only the rules an admission policy adds are broken: the API server's own are met
    assert all("maximum request size" in e or SHARED in e for e in verdict.errors)


@settings(max_examples=150, deadline=None)
@given(pod=admitted_pod())
def test_the_lenient_policys_cel_gives_its_verdict(lenient, pod):
    assert validate_pod(pod, policy=LENIENT).valid == (lenient.refusals(pod) == [])


def _pod(**containers):
    pod = copy.deepcopy(POD)
    for field, items in containers.items():
        pod["spec"][field] = items
    return pod


@pytest.mark.parametrize("pod, refused", [
    (POD, False),  # init, sidecar and app containers with one slice each, an ephemeral debugger
    (_pod(containers=[{"name": "t", "resources": {"limits": {GPU: "2"}}}]), True),
    (_pod(initContainers=[{"name": "w", "resources": {"limits": {GPU: 2}, "requests": {GPU: "2"}}}]), True),
    (_pod(initContainers=[{"name": "s", "restartPolicy": "Always",
                           "resources": {"limits": {GPU: "1k"}}}]), True),
    (_pod(containers=[{"name": "t", "resources": {"limits": {GPU: "1", SHARED: "1"}}}]), True),
    (_pod(containers=[{"name": "t", "resources": {"limits": {SHARED: "1"}}}]), True),
    (_pod(containers=[{"name": "t", "resources": {"limits": {GPU: "1000m"}}}]), False),
    (_pod(containers=[{"name": "t", "resources": {"limits": {GPU: "0"}}},
                      {"name": "u", "resources": {"limits": {GPU: "1"}}}]), False),
])
def test_sample_pods(strict, pod, refused):
    assert bool(strict.refusals(pod)) is refused is (not validate_pod(pod).valid)


def test_the_policy_and_binding_are_v1_objects_from_kubernetes_1_30():
    vap, binding = admission_policy()
    for obj in (vap, binding):
        assert kube.schema_errors(obj, kube.NEWEST) == [] == kube.schema_errors(obj, "1.30.0")
        assert not kube.has_schema(obj, "1.29.0") and not kube.has_schema(obj, kube.OLDEST)
    assert binding["spec"] == {"policyName": vap["metadata"]["name"], "validationActions": ["Deny"]}
    rules = vap["spec"]["matchConstraints"]["resourceRules"]
    assert rules[0]["resources"] == ["pods", "pods/ephemeralcontainers"]
    assert [v["reason"] for v in vap["spec"]["validations"]] == ["Invalid", "Invalid"]
    # without the one-slice rule, only the renamed resource is refused
    (only,) = admission_policy(LENIENT)[0]["spec"]["validations"]
    assert SHARED in only["message"] and "isGreaterThan" not in only["expression"]


def _review(obj, uid="b7c1e2a0-5e7e-4a1e-9a43-0f1e2d3c4b5a", version="admission.k8s.io/v1"):
    request = {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
               "resource": {"group": "", "version": "v1", "resource": "pods"},
               "namespace": "ml", "operation": "CREATE" if obj else "DELETE",
               "userInfo": {"username": "system:serviceaccount:ml:trainer"}}
    if obj is not None:
        request["object"] = obj
    return {"apiVersion": version, "kind": "AdmissionReview", "request": request}


def test_admission_review_answers_with_validate_pods_verdict():
    bad = _pod(containers=[{"name": "t", "resources": {"limits": {GPU: "2"}}}])
    answer = admission_review(_review(bad))
    assert answer["apiVersion"] == "admission.k8s.io/v1" and answer["kind"] == "AdmissionReview"
    response = answer["response"]
    assert response["uid"] == "b7c1e2a0-5e7e-4a1e-9a43-0f1e2d3c4b5a" and response["allowed"] is False
    assert response["status"]["code"] == 403
    assert response["status"]["message"] == "; ".join(validate_pod(bad).errors)
    good = admission_review(_review(POD))["response"]
    assert good["allowed"] is True and "status" not in good
    assert good["warnings"] == validate_pod(POD).warnings
    assert admission_review(_review(None))["response"] == {"uid": _review(None)["request"]["uid"],
                                                            "allowed": True}
    beta = admission_review(_review(bad, version="admission.k8s.io/v1beta1"))
    assert beta["apiVersion"] == "admission.k8s.io/v1beta1"
    service = _review({"apiVersion": "v1", "kind": "Service", "spec": {}})
    assert admission_review(service)["response"]["allowed"] is True


@pytest.mark.parametrize("review, fragment", [
    ({"kind": "Pod"}, "expected an AdmissionReview"),
    ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}, "request: missing"),
    ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"object": POD}},
     "request.uid: missing"),
])
def test_a_malformed_review_is_a_manifest_error(review, fragment):
    with pytest.raises(ManifestError, match=fragment):
        admission_review(review)


def test_the_commands(tmp_path):
    proc = helpers.run_in_process("validate-pod", "--admission-policy")
    assert proc.returncode == 0, proc.stderr
    docs = list(yaml.safe_load_all(proc.stdout))
    assert [d["kind"] for d in docs] == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    assert docs == admission_policy()
    as_json = json.loads(helpers.run_in_process("validate-pod", "--admission-policy", "-o", "json").stdout)
    assert as_json["kind"] == "List" and as_json["items"] == admission_policy()
    bad = _review(_pod(containers=[{"name": "t", "resources": {"limits": {GPU: "2"}}}]))
    proc = helpers.run_in_process("validate-pod", "--admission-review", "-", stdin=json.dumps(bad))
    assert proc.returncode == 1 and json.loads(proc.stdout) == admission_review(bad)
    proc = helpers.run_in_process("validate-pod", "--admission-review", "-", stdin=json.dumps(_review(POD)))
    assert proc.returncode == 0 and json.loads(proc.stdout)["response"]["allowed"] is True
    usage = helpers.run_in_process("validate-pod", "--admission-policy", "pod.yaml")
    assert usage.returncode == 2
    assert helpers.run_in_process("validate-pod").returncode == 2  # neither files nor a mode
