"""One device record everywhere: scan, plan and lookup print the same field names, the same
hex forms and separate names, and those fields say what ``lspci -vmm -nn`` says."""

from __future__ import annotations

import json
import re
import subprocess

import fakemachine
import fakesys
import helpers
import pytest
import recorded

from gpuclass.db import bundled_path
from gpuclass.models import DeviceClassification
from gpuclass.records import DEVICE_FIELDS, ID_FIELDS, SOURCE_FIELDS

HEX = {"vendor": 4, "device": 4, "svendor": 4, "sdevice": 4, "class": 4, "progif": 2, "rev": 2}


def check_ids(rec: dict) -> None:
    for field, width in HEX.items():
        if field in rec and rec[field] is not None:
            assert isinstance(rec[field], str) and re.fullmatch(f"[0-9a-f]{{{width}}}", rec[field]), (field, rec)
    for field in rec:
        if field.endswith("_name"):
            assert rec[field] is None or isinstance(rec[field], str)


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    return fakemachine.write_machine(tmp_path_factory.mktemp("gex130"), fakesys.gex130())


def cli_json(*args, rc=0):
    proc = helpers.run_in_process(*args, "-o", "json")
    assert proc.returncode == rc, proc.stderr
    return json.loads(proc.stdout)


def test_scan_plan_and_lookup_share_the_record(machine):
    scanned = cli_json("scan", "--root", machine)["devices"]
    planned = cli_json("plan", "--root", machine)["report"]["devices"]
    assert scanned and planned
    for rec in scanned:
        assert list(rec)[: len(DEVICE_FIELDS)] == list(DEVICE_FIELDS)
        assert list(rec)[len(DEVICE_FIELDS): len(DEVICE_FIELDS) + len(SOURCE_FIELDS)] == list(SOURCE_FIELDS)
        check_ids(rec)
    by_slot = {r["slot"]: r for r in scanned}
    for rec in planned:  # the report keeps the GPU-related functions, in the same shape
        assert set(DEVICE_FIELDS) <= set(rec)
        check_ids(rec)
        assert {f: rec[f] for f in DEVICE_FIELDS} == {f: by_slot[rec["slot"]][f] for f in DEVICE_FIELDS}
        assert by_slot[rec["slot"]]["status"] == rec["status"]
    gpu = next(r for r in planned if r["status"] == "supported")
    ids = ":".join([gpu["vendor"], gpu["device"], gpu["svendor"], gpu["sdevice"]])
    (looked_up,) = cli_json("lookup", ids, rc=1)  # pci.ids has no name for this subsystem: exit 1
    assert list(looked_up) == list(ID_FIELDS)
    assert looked_up == {f: gpu[f] for f in ID_FIELDS}


def test_the_json_schema_names_the_same_fields():
    schema = DeviceClassification.model_json_schema(by_alias=True)
    assert set(DEVICE_FIELDS) <= set(schema["properties"])


def test_a_list_for_one_id_and_for_several():
    assert len(cli_json("lookup", "10de")) == 1
    assert [r["device"] for r in cli_json("lookup", "10de:27b0", "10de:26b1")] == ["27b0", "26b1"]


def _vmm(text: str) -> list[dict[str, str]]:
    out = []
    for block in text.strip().split("\n\n"):
        out.append(dict(line.split(":\t", 1) for line in block.splitlines() if ":\t" in line))
    return out


def _split(value: str) -> tuple[str | None, str]:
    """``Name [id]`` as lspci -nn prints it: (name, id); an unknown name reads ``Device``."""
    m = re.fullmatch(r"(.*) \[([0-9a-f]+)\]", value)
    return m.group(1), m.group(2)


@pytest.mark.parametrize("source", ["recorded", "live"])
@pytest.mark.parametrize("server", ["gex44", "gex130", "sriov", "turing"])
def test_fields_say_what_lspci_vmm_says(tmp_path, server, source):
    """lspci's answer as recorded in tests/reference/ (for the same tree: its digest is
    checked by test_references), and the installed lspci's where there is one."""
    root = fakemachine.write_machine(tmp_path, fakesys.SERVERS[server]())
    if source == "recorded":
        text = recorded.lspci_answers()["trees"][server]["forms"]["-vmm -nnk -D"]["stdout"]
    else:
        lspci = recorded.live_lspci()
        if lspci is None:
            recorded.missing("lspci", "apt-get install pciutils")
        text = subprocess.run(recorded.lspci_command(lspci, "-vmm -nnk -D", root, bundled_path()),
                              capture_output=True, text=True, check=True).stdout
    theirs = _vmm(text)
    ours = cli_json("scan", "--root", root)["devices"]
    assert len(theirs) == len(ours)
    for lspci, rec in zip(theirs, ours):
        assert rec["slot"] == lspci["Slot"]
        for field, key in (("class", "Class"), ("vendor", "Vendor"), ("device", "Device"),
                           ("svendor", "SVendor"), ("sdevice", "SDevice")):
            if key not in lspci:
                assert rec[field] is None or rec["svendor"] in ("0000", "ffff"), (key, rec)
                continue
            name, ident = _split(lspci[key])
            assert rec[field] == ident, (key, lspci, rec)
            # lspci prints "Device" (or "Class") where pci.ids has no name
            assert rec[f"{field}_name"] == (None if name in ("Device", "Class") and field != "vendor"
                                            else name), (key, lspci, rec)
        assert rec["rev"] == lspci.get("Rev", "00") or (rec["rev"] == "00" and "Rev" not in lspci)
        assert rec["progif"] == lspci.get("ProgIf", "00")
        assert rec["driver"] == lspci.get("Driver")
