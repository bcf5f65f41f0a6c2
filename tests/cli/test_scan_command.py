"""``gpuclass scan`` in-process and through the installed entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import fakesys
import pytest

from gpuclass.cli import main


def test_scan_table_of_a_fake_root(tmp_path, capsys):
    fakesys.write_tree(tmp_path, fakesys.gex44())
    assert main(["scan", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["ADDRESS", "CLASS", "ID"]
    gpu = next(line for line in out if line.startswith("0000:01:00.0"))
    assert "10de:27b0" in gpu and "10de:16fa" in gpu and "nvidia" in gpu
    assert "RTX 4000 SFF Ada Generation" in gpu
    assert "boot_vga" in next(line for line in out if line.startswith("0000:00:02.0"))


def test_scan_json_with_flagged_devices_exits_1(tmp_path, capsys):
    fakesys.write_tree(tmp_path, fakesys.broken())
    assert main(["scan", "--root", str(tmp_path), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["count"] == len(fakesys.broken())
    by_addr = {d["slot"]: d for d in doc["devices"]}
    assert by_addr["0000:01:00.0"]["device_name"] == "AD104GL [RTX 4000 SFF Ada Generation]"
    assert by_addr["0000:01:00.0"]["flags"] == []
    assert "vendor: missing" in by_addr["0000:02:00.0"]["problem"]
    assert by_addr["0000:02:00.0"]["flags"] == ["invalid"]
    assert by_addr[None]["problem"].endswith("garbage: not a PCI address")


def test_scan_of_an_lspci_dump(tmp_path, capsys):
    from gpuclass.sources.sysfs import scan_sysfs

    fakesys.write_tree(tmp_path / "root", fakesys.sriov_server())
    dump = tmp_path / "dump.txt"
    dump.write_text(scan_sysfs(tmp_path / "root").to_lspci_text("-vmm -nn -D"))
    assert main(["scan", "--lspci", str(dump), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == str(dump)
    assert [d["device"] for d in doc["devices"]].count("2bb5") == 3


def test_missing_root_is_exit_3_with_one_line(tmp_path, capsys):
    assert main(["scan", "--root", str(tmp_path / "nope")]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such directory" in err


def test_root_and_lspci_are_exclusive(capsys):
    assert main(["scan", "--root", "/", "--lspci", "x"]) == 2


def test_module_scans_this_machine():
    proc = subprocess.run([sys.executable, "-m", "gpuclass.cli", "scan", "--format", "json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["source"] == "/sys/bus/pci/devices"
    assert all(d["problem"] is None for d in doc["devices"])


@pytest.mark.parametrize("machine", ["gex44", "gex130", "gtx1080_box", "turing_box", "sriov_server", "quirks",
                                     "broken"])
def test_scan_says_what_the_library_says_of_each_device(tmp_path, capsys, machine):
    """``scan -o json`` and :meth:`ClassificationResult.devices` give every device the same
    classification (status, card, slices, note, near miss) and the same record fields."""
    from gpuclass.classify import classify_table
    from gpuclass.sources.sysfs import scan_sysfs

    fakesys.write_tree(tmp_path, getattr(fakesys, machine)())
    main(["scan", "--root", str(tmp_path), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    models = classify_table(scan_sysfs(tmp_path)).devices()
    assert len(models) == len(doc["devices"])
    for rec, model in zip(doc["devices"], models):
        want = model.model_dump(mode="json")
        assert {k: rec[k] for k in want if k != "index"} == {k: v for k, v in want.items() if k != "index"}
    assert any(d["status"] == "unsupported" and d["note"] for d in doc["devices"]) == \
        any(m.status == "unsupported" for m in models)
