"""The installed package: compiled core loaded, bundled pci.ids shipped, lazy imports."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpuclass
from gpuclass import _native
from gpuclass.db.locate import bundled_path

REPO = Path(__file__).resolve().parent.parent


def test_compiled_core_loaded_unless_disabled():
    if os.environ.get("GPUCLASS_NO_EXTENSIONS", "") not in ("", "0"):
        assert _native.core.IS_COMPILED is False
    else:
        assert _native.COMPILED_IMPORT_ERROR is None, _native.COMPILED_IMPORT_ERROR
        assert _native.core.IS_COMPILED is True


def test_env_switch_selects_the_twin():
    code = "from gpuclass._native import core; print(core.IS_COMPILED, core.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, GPUCLASS_NO_EXTENSIONS="1")).stdout.split()
    assert out == ["False", "gpuclass._native.twin"]


def test_bundled_pci_ids_ships_inside_the_package():
    path = bundled_path()
    assert path.is_file()
    pkg_dir = Path(gpuclass.__file__).resolve().parent
    # installed from a wheel, the file lies in the package; in a source checkout, in data/
    assert path.parent in (pkg_dir / "data", pkg_dir.parent / "data")
    head = path.read_bytes()[:200]
    assert b"Version: 2026.08.22" in head
    repo_copy = REPO / "data" / "pci.ids"
    if repo_copy.is_file():
        assert hashlib.sha256(repo_copy.read_bytes()).digest() == hashlib.sha256(path.read_bytes()).digest()


def test_import_is_lazy():
    code = ("import sys, gpuclass; heavy = [m for m in ('numpy', 'pydantic', 'yaml', 'gpuclass.db') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_public_names_resolve():
    for name in gpuclass.__all__:
        assert getattr(gpuclass, name) is not None


@pytest.mark.parametrize("before", [
    "", "import gpuclass.classify", "from gpuclass.classify import classify_table",
    "import gpuclass.provisioner", "from gpuclass import classify_table",
    "import gpuclass.cli.scan", "import gpuclass; gpuclass.classify; import gpuclass.classify",
])
def test_classify_is_always_the_function(before):
    """``gpuclass/classify.py`` shares the function's name: importing the module first must
    not turn ``gpuclass.classify`` into the module."""
    code = (f"{before}\nimport gpuclass, types, importlib\n"
            "assert callable(gpuclass.classify) and not isinstance(gpuclass.classify, types.ModuleType), "
            "gpuclass.classify\n"
            "from gpuclass import classify\nassert classify is gpuclass.classify\n"
            "assert importlib.import_module('gpuclass.classify').classify is classify\n"
            "import gpuclass.classify\nassert gpuclass.classify is classify\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
