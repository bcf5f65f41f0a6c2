"""The ``gpuclass`` command through its installed entry point, in a subprocess."""

from __future__ import annotations

import json
import os

import pytest
from helpers import EXE, run

def test_entry_point_is_installed():
    assert EXE is not None, "pip install should put the gpuclass command on PATH"


def test_lookup_device_table():
    proc = run("lookup", "10de:27b0", check_rc=0)
    assert "NVIDIA Corporation" in proc.stdout
    assert "AD104GL [RTX 4000 SFF Ada Generation]" in proc.stdout


def test_lookup_subsystem_json():
    proc = run("lookup", "10de:1e30:10de:12ba", "-o", "json", check_rc=0)
    out = json.loads(proc.stdout)
    assert out == [{
        "vendor": "10de", "vendor_name": "NVIDIA Corporation",
        "device": "1e30", "device_name": "TU102GL [Quadro RTX 6000/8000]",
        "svendor": "10de", "svendor_name": "NVIDIA Corporation",
        "sdevice": "12ba", "sdevice_name": "Quadro RTX 6000",
    }]


def test_lookup_several_and_unknown():
    proc = run("lookup", "10de:2bb1", "10de:fffe", "--format", "json", check_rc=1)
    out = json.loads(proc.stdout)
    assert out[0]["device_name"] == "GB202GL [RTX PRO 6000 Blackwell Workstation Edition]"
    assert out[1]["device"] == "fffe" and out[1]["device_name"] is None


@pytest.mark.parametrize("args, rc, fragment", [
    (["lookup", "10de:zzzz"], 2, "not a hex ID"),
    (["lookup", "10de:1:2"], 2, "expected VENDOR"),
    (["lookup", "10de:27b0", "--db", "/nonexistent/pci.ids"], 3, "/nonexistent/pci.ids"),
    (["frobnicate"], 2, "invalid choice"),
    ([], 2, "required"),
])
def test_errors_are_one_line_without_traceback(args, rc, fragment):
    proc = run(*args)
    assert proc.returncode == rc
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("usage")]
    assert len(lines) == 1 and fragment in lines[0], proc.stderr


def test_malformed_database_reports_file_and_line(tmp_path):
    bad = tmp_path / "bad.ids"
    bad.write_bytes(b"10de  NVIDIA\n\t27b0\n")
    proc = run("db", "info", "--db", str(bad))
    assert proc.returncode == 3
    assert proc.stderr.strip() == f"gpuclass: error: {bad}:2: device name: missing"


def test_db_info(tmp_path):
    env = dict(os.environ, GPUCLASS_CACHE_DIR=str(tmp_path))
    proc = run("db", "info", "--format", "json", env=env, check_rc=0)
    info = json.loads(proc.stdout)
    assert info["version"] == "2026.08.22"
    assert info["source"].endswith("pci.ids")
    assert info["counts"]["device"] > 20000
    table = run("db", "info", env=env, check_rc=0).stdout
    assert "2026.08.22" in table and "device entries" in table


def test_db_compile_to_file(tmp_path):
    out = tmp_path / "compiled.gpcdb"
    run("db", "compile", "--write", str(out), check_rc=0)
    from gpuclass.db import PciDatabase

    db = PciDatabase.load_compiled(out, verify=True)
    assert db.device_name(0x10DE, 0x26B1) is not None


def test_pure_python_core_gives_the_same_output():
    env = dict(os.environ, GPUCLASS_NO_EXTENSIONS="1")
    a = run("lookup", "10de:1e30:10de:129e", "--format", "json", check_rc=0).stdout
    b = run("lookup", "10de:1e30:10de:129e", "--format", "json", env=env, check_rc=0).stdout
    assert a == b
    info = json.loads(run("db", "info", "--format", "json", env=env, check_rc=0).stdout)
    assert info["core"] == "python"


def test_help_lists_examples():
    proc = run("--help", check_rc=0)
    assert "lookup" in proc.stdout and "examples:" in proc.stdout
    assert "gpuclass lookup 10de:1e30:10de:12ba" in run("lookup", "--help", check_rc=0).stdout
