"""Test tiers: ``slow`` and ``subprocess`` markers from a recorded run.

Which tests are slow, or start a child process, is measured rather than guessed: a run
with ``--store-tiers`` times every test (setup, call and teardown) and notes whether it
started a process (any ``subprocess.Popen``), and writes the slow ones to
``tests/tiers.json``. Every
later run marks, at collection:

- ``subprocess``: the tests that started a process in the recorded run;
- ``slow``: those, and every test that took at least :data:`SLOW_SECONDS`.

``pytest -m "not slow"`` is then the fast tier (the inner loop), ``pytest -m "not
subprocess"`` the in-process tests. A test the record does not know yet (new since the
last ``--store-tiers``) is in the fast tier until the next record; the whole suite, as the
README and CI run it, runs every test whatever its tier.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

TIERS = Path(__file__).with_name("tiers.json")
#: a test at least this long (setup, call and teardown, on the machine that recorded) is slow
SLOW_SECONDS = 0.25

_spawned: set[str] = set()
_durations: dict[str, float] = {}
_current: list[str] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--store-tiers", action="store_true",
                     help="time every test and note which start a process; write tests/tiers.json")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: took at least %.2f s in the recorded run (tests/tiers.json)"
                            % SLOW_SECONDS)
    config.addinivalue_line("markers", "subprocess: started a child process in the recorded run")
    if config.getoption("--store-tiers"):
        original = subprocess.Popen.__init__

        def noting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            if _current:
                _spawned.add(_current[-1])
            original(self, *args, **kwargs)

        subprocess.Popen.__init__ = noting  # type: ignore[method-assign]


def load_tiers(path: Path = TIERS) -> dict[str, list]:
    """``{nodeid: [seconds, started_a_process]}`` of the slow tests in the record (empty
    without one)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))["tests"]
    except FileNotFoundError:
        return {}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known = load_tiers()
    for item in items:
        seconds, spawned = known.get(item.nodeid, (0.0, False))
        if spawned:
            item.add_marker(pytest.mark.subprocess)
        if spawned or seconds >= SLOW_SECONDS:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    if not item.config.getoption("--store-tiers"):  # timed only when recording
        yield
        return
    _current.append(item.nodeid)
    start = time.perf_counter()
    try:
        yield
    finally:
        _durations[item.nodeid] = time.perf_counter() - start
        _current.pop()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not session.config.getoption("--store-tiers") or not _durations:
        return
    # a run of part of the suite updates its tests' entries and keeps the others (but not
    # those of files that are gone)
    root = Path(str(session.config.rootpath))
    tests = {k: v for k, v in load_tiers().items() if (root / k.split("::", 1)[0]).is_file()}
    tests.update((k, [round(v, 3), k in _spawned]) for k, v in _durations.items())
    # only the slow ones are kept: any other test is in the fast tier
    tests = {k: v for k, v in tests.items() if v[1] or v[0] >= SLOW_SECONDS}
    # one test a line, sorted: a new record's diff shows what changed tier
    lines = [f"{json.dumps(k)}: [{v[0]}, {json.dumps(v[1])}]" for k, v in sorted(tests.items())]
    TIERS.write_text('{"slow_seconds": %s, "tests": {\n' % SLOW_SECONDS + ",\n".join(lines) + "\n}}\n",
                     encoding="utf-8")
