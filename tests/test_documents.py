"""Bounded documents: JSON, NDJSON and YAML read with every bound, errors with field paths."""

from __future__ import annotations

import json
import time
import tracemalloc

import pytest
import yaml

from gpuclass.documents import (
    ALIAS_BUDGET,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    MAX_OTHER_KEYS,
    DocumentError,
    iter_json_lines,
    iter_yaml,
    load_json,
    load_yaml,
)


def _error(fn, *args) -> DocumentError:
    t0 = time.perf_counter()
    with pytest.raises(DocumentError) as info:
        fn(*args)
    assert time.perf_counter() - t0 < 3
    return info.value


# -- the same data as PyYAML's safe loader ---------------------------------------------

SAMPLES = [
    "a: 1\nb: [x, 'y', 2.5, true, null, ~, 0x1f, 0o17, 1_000, 190:20:30, 2001-12-14]\n",
    "base: &b {cpu: 1, mem: 2}\nmerged: {<<: *b, cpu: 3}\nlist: {<<: [*b, {x: 1}], y: 2}\n",
    "- &x [1, 2]\n- *x\n- !!str 5\n- !!binary aGVsbG8=\n- !!float '1'\n",
    "---\n---\nkind: Pod\n...\n---\n[1, {a: b}]\n",
    "? complex\n: 1\n'quoted key': |\n  block\n  text\n",
    "{'a': {'b': [{'c': null}]}}",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_same_data_as_pyyaml(text):
    assert load_yaml(text) == list(yaml.load_all(text, Loader=yaml.SafeLoader))


# -- aliases: counted by the nodes they stand for ------------------------------------------

def _laughs(levels: int, width: int = 10) -> str:
    lines = ["l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text", [
    _laughs(9),                                          # the classic: 10**9 from 1 KB
    _laughs(40, 2),                                      # narrow but deep: 2**40
    "a: &a {x: 1, y: 2}\n" + "".join(f"b{i}: &b{i} {{<<: *{'a' if i == 0 else f'b{i - 1}'}, "
                                      f"k: *{'a' if i == 0 else f'b{i - 1}'}}}\n" for i in range(60)),
    "s: &s [" + ", ".join(["x"] * 1000) + "]\nt: [" + ", ".join(["*s"] * 2000) + "]\n",
])
def test_alias_bombs_are_refused_by_the_nodes_they_produce(text):
    err = _error(load_yaml, text)
    assert "alias" in err.reason and err.line is not None
    assert len(text) < 100_000


def test_aliases_within_the_budget_are_shared_data():
    text = "s: &s [" + ", ".join(["x"] * 100) + "]\nt: [" + ", ".join(["*s"] * 50) + "]\n"
    doc = load_yaml(text)[0]
    assert doc["t"][0] is doc["s"] and len(doc["t"]) == 50
    assert 50 * 101 < ALIAS_BUDGET


def test_an_alias_to_its_own_ancestor_is_refused():
    assert "contains it" in _error(load_yaml, "a: &a [1, *a]\n").reason
    assert "undefined" in _error(load_yaml, "a: *nothing\n").reason


# -- nesting -----------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["[" * 200_000, "{a: " * 200_000, "- " * 200_000,
                                  "a:\n" + "".join(" " * i + "b:\n" for i in range(1, 3000))])
def test_deep_yaml(text):
    err = _error(load_yaml, text)
    assert "nest" in err.reason  # ours at 100 levels, or libyaml's scanner at 1000


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 900, 5000, 1_000_000])
def test_deep_json_names_the_field(depth):
    text = '{"spec": {"x": ' + "[" * depth + "]" * depth + "}}"
    err = _error(load_json, text)
    assert "nested deeper" in err.reason
    assert err.where.startswith(("spec.x", "line 1"))


def test_nesting_at_the_limit_is_fine():
    depth = MAX_DEPTH
    assert load_json("[" * depth + "]" * depth) is not None
    assert load_yaml("[" * depth + "]" * depth)


def test_ndjson_one_bad_line_hides_nothing():
    lines = ['{"a": 1}', '{"b": ' + "[" * 500 + "]" * 500 + "}", "{oops", '{"c": 3}']
    out = list(iter_json_lines("\n".join(lines)))
    assert out[0] == {"a": 1} and out[3] == {"c": 3}
    assert isinstance(out[1], DocumentError) and out[1].where.startswith("b")
    assert isinstance(out[2], DocumentError) and out[2].where == "line 3"


# -- integers ------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["9" * (MAX_INT_DIGITS + 1), "-" + "1" * 100_000,
                                   "0x" + "f" * 4000, "0b" + "1" * 20_000, "1:" * 3000 + "1"])
def test_integers_past_the_conversion_limit_yaml(value):
    err = _error(load_yaml, f"spec:\n  containers:\n  - limits: {{gpu: {value}}}\n")
    assert err.where == "spec.containers[0].limits.gpu" and err.line == 3
    assert "digits" in err.reason


@pytest.mark.parametrize("value", ["9" * (MAX_INT_DIGITS + 1), "-" + "1" * 1_000_000])
def test_integers_past_the_conversion_limit_json(value):
    err = _error(load_json, '{"items": [{"n": ' + value + "}]}")
    assert err.where == "items[0].n" and "digits" in err.reason


def test_long_integers_within_the_limit_are_values():
    n = "9" * MAX_INT_DIGITS
    assert load_yaml(f"a: {n}\n")[0]["a"] == int(n) == load_json(f'{{"a": {n}}}')["a"]


# -- keys ------------------------------------------------------------------------------------

def test_colliding_integer_keys_are_bounded():
    """Integers hash to themselves modulo 2**61-1: many equal hashes would make one mapping
    quadratic.  Past MAX_OTHER_KEYS non-string keys the document is refused, fast."""
    keys = ", ".join(f"{i * (2**61 - 1)}: 1" for i in range(20_000))
    err = _error(load_yaml, "{" + keys + "}")
    assert "not strings" in err.reason
    fine = ", ".join(f"{i}: 1" for i in range(MAX_OTHER_KEYS))
    assert len(load_yaml("{" + fine + "}")[0]) == MAX_OTHER_KEYS


def test_unhashable_and_collection_keys():
    assert "scalar" in _error(load_yaml, "? [a, b]\n: 1\n").reason
    assert "tag" in _error(load_yaml, "a: !!set {x}\n").reason


# -- a bad document hides no other ---------------------------------------------------------

def test_one_bad_yaml_document_keeps_the_rest():
    text = "a: 1\n---\nb: " + "9" * 5000 + "\n---\nc: 3\n"
    out = list(iter_yaml(text))
    assert out[0] == {"a": 1} and out[2] == {"c": 3} and isinstance(out[1], DocumentError)


# -- memory ----------------------------------------------------------------------------------

def _pods(n: int) -> str:
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n  labels: {{app: a{i}}}\nspec:\n"
           "  containers:\n  - name: c\n    image: nginx:1.{i}\n    resources:\n"
           "      limits: {{nvidia.com/gpu: 1, cpu: 500m}}\n---\n")
    return "".join(pod.format(i=i) for i in range(n))


@pytest.mark.parametrize("fmt", ["yaml", "json", "ndjson", "alias"])
def test_peak_memory_is_a_small_multiple_of_the_input(fmt):
    text = _pods(2000)
    docs = load_yaml(text)
    if fmt == "json":
        text = json.dumps({"kind": "List", "items": docs})
    elif fmt == "ndjson":
        text = "\n".join(json.dumps(d) for d in docs)
    elif fmt == "alias":  # the largest document aliases may make, from a small text
        text = "s: &s [" + ", ".join(["x"] * 1000) + "]\nt: [" + ", ".join(["*s"] * 90) + "]\n"
    load = {"yaml": load_yaml, "alias": load_yaml, "json": load_json,
            "ndjson": lambda t: list(iter_json_lines(t))}[fmt]
    tracemalloc.start()
    try:
        load(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the data itself costs ~10 bytes per byte of text (Python objects); the old reader
    # held PyYAML's node graph too, over 100x
    assert peak < 20 * len(text), peak / len(text)
