"""A machine that cannot compile the native core still installs gpuclass: the build warns
and leaves the extensions out, the pure-Python twin runs; GPUCLASS_REQUIRE_COMPILED=1 (CI's
builds) makes it a failure instead."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory):
    if not (ROOT / "setup.py").exists():
        pytest.fail("the build test needs the source tree beside the tests")
    dst = tmp_path_factory.mktemp("src")
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy2(ROOT / name, dst / name)
    shutil.copytree(ROOT / "data", dst / "data")
    shutil.copytree(ROOT / "gpuclass", dst / "gpuclass",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__", "data"))
    return dst


def _build(src: Path, **env) -> subprocess.CompletedProcess:
    shutil.rmtree(src / "build", ignore_errors=True)
    return subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=src,
                          capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "CC": "/bin/false", "LDSHARED": "/bin/false", **env})


def test_without_a_compiler_the_build_warns_and_the_twin_runs(source_copy):
    proc = _build(source_copy, GPUCLASS_REQUIRE_COMPILED="0")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "could not be compiled" in proc.stderr and "pure-Python twin" in proc.stderr
    assert not list((source_copy / "gpuclass").glob("*.so"))
    check = ("import gpuclass, gpuclass._native as n\n"
             "assert not n.core.IS_COMPILED\n"
             "print(gpuclass.default_database().device_name(0x10DE, 0x2BB5))\n")
    # the copy alone: -S keeps site's .pth files (an installed or editable gpuclass) out,
    # and the environment's packages (numpy, pydantic) come in on the path after the copy
    import sysconfig

    env = {k: v for k, v in os.environ.items() if k != "GPUCLASS_NO_EXTENSIONS"}
    path = os.pathsep.join([str(source_copy), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    env.update(PYTHONPATH=path, PYTHONSAFEPATH="1")
    run = subprocess.run([sys.executable, "-S", "-c", check], cwd=source_copy, capture_output=True,
                         text=True, timeout=120, check=False, env=env)
    assert run.returncode == 0, run.stderr
    assert "RTX PRO 6000" in run.stdout
    version = subprocess.run([sys.executable, "-S", "-m", "gpuclass", "--version"], cwd=source_copy,
                             capture_output=True, text=True, timeout=120, check=False, env=env)
    assert version.returncode == 0 and "pure-Python core: the compiled core is not built here" in version.stdout, \
        version.stdout


def test_a_build_that_requires_the_compiled_core_fails_without_a_compiler(source_copy):
    proc = _build(source_copy, GPUCLASS_REQUIRE_COMPILED="1")
    assert proc.returncode != 0
    # it failed at the compiler (CC=/bin/false), not earlier for want of a build tool
    assert "No module named" not in proc.stderr, proc.stderr[-2000:]
    assert "/bin/false" in proc.stderr or "exit status 1" in proc.stderr, proc.stderr[-2000:]
    assert "could not be compiled" not in proc.stderr
    assert not list((source_copy / "gpuclass").glob("*.so"))


def test_the_sdist_carries_the_whole_suite_or_none_of_it(tmp_path):
    """setuptools adds tests/test_*.py to an sdist by default, without the conftest, helpers
    and recorded answers they need; MANIFEST.in prunes the suite whole."""
    proc = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "--dist-dir", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    import tarfile

    (sdist,) = tmp_path.glob("*.tar.gz")
    with tarfile.open(sdist) as tf:
        names = [n.split("/", 1)[1] for n in tf.getnames() if "/" in n]
    suite = [n for n in names if n.startswith(("tests/", "benchmarks/", "fuzz/"))]
    assert suite == [] or {"tests/conftest.py", "tests/helpers.py"} <= set(suite)
    assert "data/pci.ids" in names and "setup.py" in names
