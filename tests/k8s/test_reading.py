"""Reading manifests: hostile shapes and values are ManifestErrors with the field path,
and one bad document never loses the others."""

from __future__ import annotations

import json

import pytest
from helpers import run_in_process as run

from gpuclass.errors import ManifestError
from gpuclass.k8s.objects import load_documents, read_documents

GOOD = "apiVersion: v1\nkind: Pod\nmetadata: {name: good}\nspec:\n  containers: [{name: c}]\n"


@pytest.mark.parametrize("doc, path", [
    ("kind: [Pod]\n", "kind"),
    ("kind: {a: b}\n", "kind"),
    ("apiVersion: 1\nkind: Pod\n", "apiVersion"),
    ("kind: Pod\nmetadata: [a]\n", "metadata"),
    ("kind: Pod\nmetadata: text\n", "metadata"),
    ("kind: Pod\nspec: [1, 2]\n", "spec"),
    ("kind: Node\nstatus: [1]\n", "status"),
    ("kind: Pod\nmetadata: {name: [x]}\n", "metadata.name"),
    ("kind: Pod\nmetadata: {namespace: 7}\n", "metadata.namespace"),
    ("kind: Node\nmetadata: {labels: [a]}\n", "metadata.labels"),
    ("kind: Node\nmetadata: {labels: {gpu: [true]}}\n", "metadata.labels.gpu"),
    ("kind: Node\nmetadata: {annotations: {1: x}}\n", "metadata.annotations"),
    ("- a\n- b\n", ""),
    ("kind: List\nitems: {a: 1}\n", "items"),
    ("kind: List\nitems: [{kind: Pod}, [1]]\n", "items[1]"),
    ("kind: List\nitems: [{kind: Pod, metadata: []}]\n", "items[0].metadata"),
])
def test_wrong_shapes_name_the_field(tmp_path, doc, path):
    p = tmp_path / "m.yaml"
    p.write_text(doc)
    with pytest.raises(ManifestError) as info:
        read_documents(p)
    assert info.value.path == path and info.value.source == str(p)


@pytest.mark.parametrize("text, path", [
    ("kind: Pod\nspec: {containers: [{resources: {limits: {nvidia.com/gpu: " + "9" * 5000 + "}}}]}\n",
     "spec.containers[0].resources.limits.nvidia.com/gpu (line 2)"),
    ('{"kind": "Pod", "spec": {"overhead": {"cpu": ' + "1" * 5000 + "}}}", "spec.overhead.cpu"),
    ('{"kind": "Pod", "spec": ' + "[" * 300 + "]" * 300 + "}", None),
    ("kind: Pod\nspec: " + "{a: " * 150 + "1" + "}" * 150 + "\n", None),
])
def test_values_past_the_bounds_name_the_field(text, path):
    with pytest.raises(ManifestError) as info:
        load_documents(text, "x.yaml")
    if path is not None:
        assert info.value.path == path
    else:
        assert info.value.path.startswith("spec") and "nested" in info.value.reason


def test_ndjson_streams_are_documents():
    docs = load_documents(json.dumps({"kind": "Pod"}) + "\n" + json.dumps({"kind": "Node"}) + "\n")
    assert [d["kind"] for d in docs] == ["Pod", "Node"]


def test_bad_documents_keep_their_place(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text(GOOD + "---\nkind: Pod\nmetadata: []\n---\n" + GOOD
                 + "---\nkind: Pod\nx: " + "9" * 9999 + "\n")
    docs, _ = read_documents(p, keep_errors=True)
    assert len(docs) == 4
    assert isinstance(docs[1], ManifestError) and docs[1].path == "document 2: metadata"
    assert isinstance(docs[3], ManifestError) and docs[3].path.startswith("document 4: x")
    assert docs[0]["metadata"]["name"] == docs[2]["metadata"]["name"] == "good"
    with pytest.raises(ManifestError):
        read_documents(p)


def test_validate_pod_reports_every_document(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text(GOOD + "---\nkind: Pod\nmetadata: [1]\n---\n" + GOOD.replace("good", "second"))
    proc = run("validate-pod", p, "--format", "json")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    out = json.loads(proc.stdout)
    assert [o["name"] for o in out["objects"]] == ["good", "second"]
    assert out["unreadable"][0]["document"] == 1 and "metadata" in out["unreadable"][0]["error"]


def test_diagnose_reports_every_node(tmp_path):
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n%d}\nstatus: {}\n"
    p = tmp_path / "nodes.yaml"
    p.write_text(node % 1 + "---\nkind: Node\nmetadata: {name: 5}\n---\n" + node % 3)
    proc = run("diagnose", p)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "node n1" in proc.stdout and "node n3" in proc.stdout and "metadata.name" in proc.stdout
