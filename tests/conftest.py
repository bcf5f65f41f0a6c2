"""Shared fixtures: both cores, the bundled database, libpci where installed."""

from __future__ import annotations

import os

import pytest

from gpuclass import _native

# slow/subprocess markers from the recorded run (tests/tiers.py)
pytest_plugins = ["tiers"]

# The processes the tests start (``python -c``, ``python -m``) import the package this
# process imported, never the sources of the directory they start in (Python 3.11+): from
# a checkout whose core is not built in place those sources would load the twin, and a
# test of the compiled core would silently test the twin.
os.environ["PYTHONSAFEPATH"] = "1"


CORES = {"compiled": _native.compiled, "python": _native.twin}


@pytest.fixture(params=["compiled", "python"])
def core(request):
    """Every core test runs against the compiled core and the pure-Python twin."""
    mod = CORES[request.param]
    if mod is None:
        # Never a silent skip: a missing compiled core fails unless disabled on purpose.
        if os.environ.get("GPUCLASS_NO_EXTENSIONS", "") not in ("", "0"):
            pytest.skip("compiled core disabled by GPUCLASS_NO_EXTENSIONS")
        pytest.fail(f"compiled core did not load: {_native.COMPILED_IMPORT_ERROR}")
    return mod


def _require_compiled():
    mod = CORES["compiled"]
    if mod is None:
        if os.environ.get("GPUCLASS_NO_EXTENSIONS", "") not in ("", "0"):
            pytest.skip("compiled core disabled by GPUCLASS_NO_EXTENSIONS")
        pytest.fail(f"compiled core did not load: {_native.COMPILED_IMPORT_ERROR}")
    return mod


@pytest.fixture
def compiled_core():
    """The compiled core; a test fails (never skips) when it should have loaded and did not."""
    return _require_compiled()


@pytest.fixture(scope="session")
def bundled_bytes() -> bytes:
    from gpuclass.db.locate import bundled_path

    return bundled_path().read_bytes()


# The modules that test the caches themselves (what is written, trusted, pruned, rebuilt):
# each of their tests gets a cache directory of its own.  Every other test shares one warm
# cache directory for the session: the bundled database and the default text matcher are
# compiled once, not once a test (thousands of directories, hundreds of MB, and a minute of
# cleanup the next run).
_FRESH_CACHE_MODULES = frozenset({
    "test_matcher_cache.py", "test_cache_trust.py", "test_database.py", "test_faults.py",
    "test_hostile.py", "test_cli.py", "test_layout.py",
})


@pytest.fixture(scope="session")
def _warm_cache_dir(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("warm-cache"))


@pytest.fixture(autouse=True)
def _isolated_cache(request, tmp_path_factory, monkeypatch, _warm_cache_dir):
    """A test of the caches writes into its own cache directory; the others share one."""
    if request.node.path.name in _FRESH_CACHE_MODULES:
        monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    else:
        monkeypatch.setenv("GPUCLASS_CACHE_DIR", _warm_cache_dir)
    monkeypatch.delenv("GPUCLASS_PCI_IDS", raising=False)
