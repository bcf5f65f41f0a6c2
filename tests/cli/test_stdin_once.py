"""'-' (standard input) given to two inputs of one command is a usage error before anything
is read: the second read would see an empty stream (a policy of no cards, a manifest of
nothing), a silent wrong answer."""

from __future__ import annotations

import io
import itertools
import sys

import pytest

from gpuclass.cli import main


class _Unread(io.StringIO):
    def read(self, *a):  # pragma: no cover - the point is that it is never called
        raise AssertionError("standard input was read")

    readline = read
    buffer = property(lambda self: self)


# each command's inputs that read a file ('-': standard input), as argv pieces
INPUTS = {
    "audit": [["-"], ["-"], ["--policy", "-"]],
    "scan": [["--lspci", "-"], ["--policy", "-"]],
    "plan": [["--report", "-"], ["--policy", "-"]],
    "labels": [["--report", "-"], ["--policy", "-"], ["--check", "-"]],
    "validate-pod": [["-"], ["--policy", "-"], ["--admission-review", "-"]],
    "diagnose": [["-"], ["--policy", "-"], ["--report", "-"]],
}
CASES = [(cmd, a, b) for cmd, opts in INPUTS.items() for a, b in itertools.combinations(opts, 2)
         if not (cmd == "labels" and "--check" in a + b and "--report" in a + b)]


@pytest.mark.parametrize("cmd, first, second", CASES, ids=[f"{c}:{' '.join(a)}+{' '.join(b)}" for c, a, b in CASES])
def test_standard_input_given_twice_is_refused_before_any_read(monkeypatch, capsys, cmd, first, second):
    monkeypatch.setattr(sys, "stdin", _Unread())
    positional = [p for p in (first, second) if p == ["-"]]
    options = [p for p in (first, second) if p != ["-"]]
    argv = [cmd, *itertools.chain(*options), *itertools.chain(*positional)]
    if cmd == "labels" and "--check" not in argv:
        argv.append("--configmap")
    if cmd == "diagnose" and not positional:
        argv.append("node.yaml")  # never opened: the refusal comes first
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "standard input can be read once" in err


def test_one_dash_is_read_and_an_output_dash_is_standard_output(monkeypatch, capsys):
    feed = '{"server": [{"id": 1, "description": ["GTX 1080"]}]}'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(feed.encode())))
    assert main(["audit", "-", "-o", "-", "--format", "ndjson"]) == 0
    assert '"gpu_capable": true' in capsys.readouterr().out
