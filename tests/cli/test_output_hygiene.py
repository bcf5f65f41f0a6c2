"""Names and paths from input are printed safely: no injected rows, no terminal escapes,
bytes that are not UTF-8 shown escaped, under any locale.

The locale and ``PYTHONIOENCODING`` are read when a process starts: those tests run the
installed command; the others ask ``gpuclass.cli.main`` in this process."""

from __future__ import annotations

import json
import os

import fakesys
import pytest
from helpers import run, run_in_process

from gpuclass.sources.sysfs import PCI_DEVICES

HOSTILE = "x\n0000:99:00.0 0300  10de:27b0  -  -  nvidia  -  supported  rtx-4000-sff-ada  4  FAKE\x1b[2J\r\u202e"
LOCALES = [{"PYTHONIOENCODING": "utf-8"}, {"PYTHONIOENCODING": "ascii"},
           {"PYTHONIOENCODING": "latin-1"}, {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"},
           {"PYTHONUTF8": "1"}]


def _env(extra):
    env = dict(os.environ)
    for k in ("PYTHONIOENCODING", "LC_ALL", "LANG", "PYTHONUTF8"):
        env.pop(k, None)
    env.update(extra)
    return env


def _clean(text: str) -> None:
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text


@pytest.fixture
def hostile_machine(tmp_path):
    devices = fakesys.gex44()
    fakesys.write_tree(tmp_path, devices)
    bus = tmp_path / PCI_DEVICES
    # an entry that is not an address, named to forge a row
    os.symlink(os.readlink(bus / devices[0].address), os.fsencode(bus) + b"/" + HOSTILE.encode())
    # a driver whose name is not UTF-8
    gpu = os.path.realpath(bus / "0000:01:00.0")
    os.unlink(os.path.join(gpu, "driver"))
    os.symlink(b"../../../bus/pci/drivers/nv\xffidia\x1b[31m", os.fsencode(gpu) + b"/driver")
    return tmp_path, len(devices) + 1


@pytest.mark.parametrize("env", LOCALES, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
def test_scan_table_has_one_row_per_device(hostile_machine, env):
    root, n = hostile_machine
    proc = run("scan", "--root", root, env=_env(env))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    table = proc.stdout.split("\n\n")[0].splitlines()
    assert len(table) == n + 1  # the header and one line per device: nothing injected
    _clean(proc.stdout)
    assert "nv\\xffidia\\x1b[31m" in proc.stdout
    assert "x\\n0000:99:00.0" in proc.stdout


@pytest.mark.parametrize("env", LOCALES, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
def test_scan_json_is_valid_and_escaped(hostile_machine, env):
    root, n = hostile_machine
    proc = run("scan", "--root", root, "--format", "json", env=_env(env))
    assert "Traceback" not in proc.stderr, proc.stderr
    out = json.loads(proc.stdout)
    assert out["count"] == n
    drivers = {d["driver"] for d in out["devices"]}
    assert "nv\udcffidia\x1b[31m" in drivers  # the same name, as JSON escapes
    _clean(proc.stdout)


def test_names_from_the_database_are_escaped(tmp_path):
    ids = tmp_path / "pci.ids"
    ids.write_text("10de  NVIDIA\x1b]0;pwned\x07 Corporation\n\t27b0  AD104GL\r\n\t\t10de 16fa  line\u2028sep\n")
    proc = run_in_process("lookup", "10de:27b0:10de:16fa", "--db", ids)
    assert proc.returncode == 0, proc.stderr
    _clean(proc.stdout)
    assert "\x07" not in proc.stdout and "\u2028" not in proc.stdout
    assert "NVIDIA\\x1b]0;pwned\\x07 Corporation" in proc.stdout and "line\\u2028sep" in proc.stdout
    assert len(proc.stdout.strip().splitlines()) == 5  # header, vendor, device, subvendor, subdevice


def test_manifest_names_are_escaped(tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text(json.dumps({"kind": "Pod", "metadata": {"name": "p\n  error: forged\x1b[2J"},
                               "spec": {"containers": [{"name": "c\r\nx", "resources": {
                                   "limits": {"nvidia.com/gpu": 2}}}]}}))
    proc = run_in_process("validate-pod", pod)
    assert proc.returncode == 1, proc.stderr
    _clean(proc.stdout)
    assert "forged" in proc.stdout
    assert not [line for line in proc.stdout.splitlines() if line.startswith("  error: forged")]


def test_errors_stay_one_line(tmp_path):
    bad = tmp_path / "a\nb\x1b[2J.yaml"
    os.mkfifo(bad)
    proc = run_in_process("validate-pod", bad)
    assert proc.returncode == 3
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "\\n" in lines[0] and "\\x1b" in lines[0]
    _clean(proc.stderr)
