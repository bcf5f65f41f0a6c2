"""Shared fixtures: both cores, the bundled database, libpci where installed."""

from __future__ import annotations

import os

import pytest

from gpuclass import _native

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


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Each test writes compiled databases into its own cache directory."""
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("GPUCLASS_PCI_IDS", raising=False)
