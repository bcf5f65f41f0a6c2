"""The installed package: compiled core loaded, bundled pci.ids shipped, lazy imports."""

from __future__ import annotations

import hashlib
import os
import struct
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


@pytest.mark.skipif(sys.version_info < (3, 11), reason="PYTHONSAFEPATH is Python 3.11's")
def test_processes_the_tests_start_import_this_package(tmp_path):
    """From the repository's root (where CI runs), ``python -c`` would put the sources first
    on its path; the tests' processes import the package under test, core and all."""
    code = "import gpuclass, gpuclass._native as n; print(gpuclass.__file__, n.core.IS_COMPILED)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=REPO).stdout.split()
    assert out == [gpuclass.__file__, str(_native.core.IS_COMPILED)]


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


def _elf_section_names(path: Path) -> list[str]:
    """Section names of a 64-bit little-endian ELF file (the extension on Linux x86-64/AArch64)."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not a 64-bit little-endian ELF"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx][4]
    return [data[strtab + h[0]: data.index(b"\0", strtab + h[0])].decode() for h in headers]


def test_extension_carries_no_debug_info_unless_asked(compiled_core):
    """setup.py builds without -g and strips, unless a debug or sanitizer build was asked for
    (tools/sanitize.sh preloads the sanitizer runtime into the interpreter it tests with)."""
    if sys.platform != "linux":
        return  # the ELF check is Linux's
    from gpuclass import _feed  # the feed scanner: built beside the core, the same way

    asked = (any(os.environ.get(v) == "1" for v in ("GPUCLASS_CYTHON_DEBUG", "GPUCLASS_SANITIZE"))
             or "asan" in os.environ.get("LD_PRELOAD", ""))
    for module in (compiled_core, _feed):
        names = _elf_section_names(Path(module.__file__))
        assert ".text" in names
        debug = [n for n in names if n.startswith(".debug")]
        assert bool(debug) == asked, (module.__name__, debug)
