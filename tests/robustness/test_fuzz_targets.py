"""The fuzz targets (``fuzz/fuzz_targets.py``) under a short, bounded hypothesis pass.

CI cannot run coverage-guided campaigns, so it replays every seed and every
regression input kept in ``fuzz/corpus/`` and then feeds each target a few
dozen random and mutated inputs.  Accepted outcomes are the library's typed
errors only; the targets themselves check the core against its twin.
"""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fuzz")
sys.path.insert(0, FUZZ)

import fuzz_targets  # noqa: E402

CORPUS = os.path.join(FUZZ, "corpus")


def _seeds(name: str) -> list[tuple[str, bytes]]:
    d = os.path.join(CORPUS, name)
    if not os.path.isdir(d):
        return []
    out = []
    for f in sorted(os.listdir(d)):
        with open(os.path.join(d, f), "rb") as fh:
            out.append((f, fh.read()))
    return out


def _run(name: str, data: bytes) -> None:
    try:
        fuzz_targets.TARGETS[name].fn(data)
    except fuzz_targets.ACCEPTED:
        pass


def test_every_target_has_seeds():
    for name in fuzz_targets.TARGETS:
        assert _seeds(name), f"fuzz/corpus/{name}/ is empty (python fuzz/make_seeds.py)"


def test_registry_covers_every_parser():
    expected = {"pciids", "pciids_compressed", "cache", "cache_content", "sysfs_values", "sysfs_tree",
                "lspci", "modalias", "cpuinfo", "policy", "pod", "node", "documents", "manifest_file",
                "quantity", "match", "keyindex", "audit", "audit_archive", "textmatch"}
    assert expected <= set(fuzz_targets.TARGETS)


CASES = [(n, f, d) for n in sorted(fuzz_targets.TARGETS) for f, d in _seeds(n)]


@pytest.mark.parametrize("name,file,data", CASES, ids=[f"{n}/{f}" for n, f, _ in CASES])
def test_corpus_replay(name, file, data):
    """Seeds and the inputs that once found a bug (``regress-*``) stay accepted."""
    if not fuzz_targets.TARGETS[name].available():
        pytest.skip(f"{fuzz_targets.TARGETS[name].requires} not present yet")
    _run(name, data)


@st.composite
def _mutated(draw, seeds: list[bytes]):
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.integers(0, 3))
        at = draw(st.integers(0, len(data)))
        if op == 0 and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif op == 1:
            data[at:at] = draw(st.binary(max_size=16))
        elif op == 2:
            del data[at:at + draw(st.integers(1, 64))]
        else:
            data[at:at] = bytes(draw(st.sampled_from(seeds))[:draw(st.integers(0, 200))])
    return bytes(data)


def _strategy(name: str):
    seeds = [d for _, d in _seeds(name)] or [b""]
    return st.one_of(st.binary(max_size=300), _mutated(seeds))


@pytest.mark.parametrize("name", sorted(fuzz_targets.TARGETS))
def test_target_bounded_hypothesis(name):
    if not fuzz_targets.TARGETS[name].available():
        pytest.skip(f"{fuzz_targets.TARGETS[name].requires} not present yet")

    @settings(max_examples=40, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(_strategy(name))
    def check(data):
        _run(name, data)

    check()
