"""The matcher: every allowlisted ID, every trap, companions, VFs, rollups, errors, threads."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from types import SimpleNamespace

import numpy as np
import pytest

from gpuclass import constants as C
from gpuclass.classify import (COMPANION, INVALID, NOT_GPU, SUPPORTED, UNSUPPORTED,
                               VIRTUAL_FUNCTION, classify, classify_table, compile_policy,
                               summarize)
from gpuclass.db import default_database
from gpuclass.errors import InputError
from gpuclass.models import json_schemas
from gpuclass.policy import Policy

NV = 0x10DE
VGA, D3, OTHER_DISPLAY, AUDIO, USB, UCSI, NIC = 0x030000, 0x030200, 0x038000, 0x040300, 0x0C0330, 0x0C8000, 0x020000
ALLOWLIST = {0x1B80: "gtx-1080", 0x1B06: "gtx-1080-ti", 0x27B0: "rtx-4000-sff-ada",
             0x26B1: "rtx-6000-ada", 0x2BB1: "rtx-pro-6000-blackwell-workstation",
             0x2BB4: "rtx-pro-6000-blackwell-max-q", 0x2BB5: "rtx-pro-6000-blackwell-server"}


def run(core, rows, policy=None, **kw):
    """Classify rows of (vendor, device, subvendor|None, subdevice|None, class) with one core."""
    v = [r[0] for r in rows]
    d = [r[1] for r in rows]
    sv = [r[2] or 0 for r in rows]
    sd = [r[3] or 0 for r in rows]
    hs = np.array([r[2] is not None for r in rows])
    c = [r[4] for r in rows]
    return classify(v, d, sv, sd, c, has_subsystem=hs, policy=policy, core=core, **kw)


@pytest.mark.parametrize("cls", [VGA, D3])
def test_every_allowlisted_id_is_supported_with_four_slices(core, cls):
    r = run(core, [(NV, dev, None, None, cls) for dev in ALLOWLIST])
    assert r.status.tolist() == [SUPPORTED] * len(ALLOWLIST)
    assert r.card_ids() == list(ALLOWLIST.values())
    assert r.slices.tolist() == [4] * len(ALLOWLIST)
    assert (r.status.dtype, r.card.dtype, r.slices.dtype) == (np.uint8, np.int16, np.uint16)


# (name, vendor, device, subsystem, expected card id or None)
TRAPS = [
    ("GTX 1080", NV, 0x1B80, None, "gtx-1080"),
    ("GTX 1080 Ti", NV, 0x1B06, None, "gtx-1080-ti"),
    ("GTX 1080 Ti 10GB", NV, 0x1B01, None, None),
    ("GTX 1080 Mobile", NV, 0x1BA0, None, None),
    ("GTX 1080 Mobile (GP104BM)", NV, 0x1BE0, None, None),
    ("GTX 1080 Max-Q", NV, 0x1BE0, (0x1028, 0x07C0), None),
    ("GTX 1070", NV, 0x1B81, None, None),
    ("RTX 6000 Ada", NV, 0x26B1, None, "rtx-6000-ada"),
    ("Quadro RTX 6000 (1e30)", NV, 0x1E30, (NV, 0x12BA), None),
    ("Quadro RTX 8000 (1e30)", NV, 0x1E30, (NV, 0x129E), None),
    ("Quadro RTX 6000 (1e36)", NV, 0x1E36, None, None),
    ("RTX 6000D", NV, 0x2BB9, None, None),
    ("RTX 5000 Ada", NV, 0x26B2, None, None),
    ("RTX 4000 SFF Ada", NV, 0x27B0, None, "rtx-4000-sff-ada"),
    ("RTX 4000 SFF Ada with a subsystem", NV, 0x27B0, (NV, 0x16FA), "rtx-4000-sff-ada"),
    ("RTX 4000 Ada", NV, 0x27B2, None, None),
    ("RTX 4000 Ada Laptop", NV, 0x27BA, None, None),
    ("RTX PRO 6000 Blackwell Workstation", NV, 0x2BB1, None, "rtx-pro-6000-blackwell-workstation"),
    ("RTX PRO 6000D", NV, 0x2BB2, None, None),
    ("RTX PRO 6000D Max-Q", NV, 0x2BBC, None, None),
    ("RTX PRO 5000 Blackwell", NV, 0x2BB3, None, None),
    ("Intel 27b0 is not the SFF card", 0x8086, 0x27B0, None, None),
    ("NI 1e30 is not a Quadro", 0x1093, 0x1E30, None, None),
]


@pytest.mark.parametrize("name, vendor, device, sub, expect", TRAPS, ids=[t[0] for t in TRAPS])
def test_traps(core, name, vendor, device, sub, expect):
    sv, sd = sub if sub else (None, None)
    r = run(core, [(vendor, device, sv, sd, VGA)])
    assert r.card_ids() == [expect]
    want = SUPPORTED if expect else (UNSUPPORTED if vendor == NV else NOT_GPU)
    assert r.status.tolist() == [want]
    assert r.slices.tolist() == [4 if expect else 0]


def quadro_policy(deny=True):
    data = {"cards": [
        {"id": "quadro-rtx-6000", "name": "Quadro RTX 6000", "family": "turing", "kernel_module": "open",
         "match": [{"vendor": "10de", "device": "1e30", "subvendor": "10de", "subdevice": "12ba"},
                   {"vendor": "10de", "device": "1e36"}]},
        {"id": "quadro-rtx", "name": "Quadro RTX 6000/8000", "family": "turing", "kernel_module": "open",
         "match": [{"vendor": "10de", "device": "1e78"}], "slices": 2},
    ]}
    if deny:
        data["deny"] = [{"vendor": "10de", "device": "1e78", "subvendor": "10de", "subdevice": "13d8",
                         "reason": "RTX 8000 is not offered"}]
    return Policy.model_validate(data)


def test_subsystem_rule_tells_quadro_rtx_6000_from_rtx_8000(core):
    rows = [(NV, 0x1E30, NV, 0x12BA, VGA), (NV, 0x1E30, NV, 0x129E, VGA), (NV, 0x1E30, None, None, VGA),
            (NV, 0x1E36, None, None, VGA), (NV, 0x1E78, NV, 0x13D9, VGA), (NV, 0x1E78, NV, 0x13D8, VGA),
            (NV, 0x1E78, None, None, VGA)]
    r = run(core, rows, policy=quadro_policy())
    assert r.card_ids() == ["quadro-rtx-6000", None, None, "quadro-rtx-6000", "quadro-rtx", None, "quadro-rtx"]
    assert r.slices.tolist() == [4, 0, 0, 4, 2, 0, 2]
    note = r.explain(5)[2]
    assert note == "denied by policy: RTX 8000 is not offered"


def test_absent_subsystem_never_matches_a_subsystem_rule(core):
    pol = quadro_policy()
    r = classify([NV], [0x1E30], None, None, [VGA], policy=pol, core=core)
    assert r.status.tolist() == [UNSUPPORTED]
    # the mask wins over whatever the arrays hold
    r = classify([NV], [0x1E30], [NV], [0x12BA], [VGA], has_subsystem=[False], policy=pol, core=core)
    assert r.status.tolist() == [UNSUPPORTED]


def test_ids_newer_than_the_bundled_database_classify_by_id(core):
    db = default_database()
    assert db.device_name(NV, 0x2DFF) is None
    pol = {"cards": [{"id": "future", "name": "Future GPU", "family": "rubin", "kernel_module": "open",
                      "match": [{"vendor": "10de", "device": "2dff"}]}]}
    r = run(core, [(NV, 0x2DFF, None, None, D3), (NV, 0x2DFE, None, None, D3)], policy=pol)
    assert r.card_ids() == ["future", None]
    assert r.status.tolist() == [SUPPORTED, UNSUPPORTED]
    devices = r.devices(db=db)
    assert devices[0].name is None and devices[0].card == "future"
    assert devices[1].name is None and devices[1].near_miss is None


def test_class_decides_what_is_a_gpu(core):
    rows = [(NV, 0x26B1, None, None, OTHER_DISPLAY), (NV, 0x26B1, None, None, 0x030001),
            (0x1A03, 0x2000, None, None, VGA), (0x8086, 0x56C0, None, None, D3), (NV, 0x26B1, None, None, NIC)]
    r = run(core, rows)
    # 0x0380 is not a GPU class; the ASPEED BMC and an Intel GPU are not NVIDIA GPUs
    assert r.status.tolist() == [NOT_GPU, SUPPORTED, NOT_GPU, NOT_GPU, NOT_GPU]
    assert r.card.tolist() == [-1, 3, -1, -1, -1]


def card_slot_rows():
    """Two cards on two buses and their audio/USB/UCSI functions, plus unrelated devices."""
    return [
        # vendor, device, class, domain, bus, slot
        (NV, 0x2BB5, D3, 0, 0x41, 0),
        (NV, 0x22E8, AUDIO, 0, 0x41, 0),
        (NV, 0x1AD8, USB, 0, 0x41, 0),
        (NV, 0x1AD9, UCSI, 0, 0x41, 0),
        (NV, 0x22BC, AUDIO, 0, 0x01, 0),   # before its GPU in row order
        (NV, 0x27B2, VGA, 0, 0x01, 0),     # RTX 4000 Ada: unsupported
        (NV, 0x22BC, AUDIO, 0, 0x02, 0),   # an NVIDIA audio function with no GPU in its slot
        (0x8086, 0xA0C8, AUDIO, 0, 0x00, 0x1F),
        (0x8086, 0x1533, NIC, 0, 0x41, 1),  # same bus, other slot
    ]


def test_companions_by_slot(core):
    rows = card_slot_rows()
    a = np.array(rows, dtype=np.int64).T
    r = classify(a[0], a[1], None, None, a[2], domain=a[3], bus=a[4], slot=a[5], core=core)
    assert r.status.tolist() == [SUPPORTED, COMPANION, COMPANION, COMPANION, COMPANION, UNSUPPORTED,
                                 NOT_GPU, NOT_GPU, NOT_GPU]
    assert r.card.tolist() == [6, 6, 6, 6, -1, -1, -1, -1, -1]
    assert r.slices.tolist() == [4, 0, 0, 0, 0, 0, 0, 0, 0]
    s = r.summary().node(0)
    assert (s.supported_cards, s.slices, s.unsupported_gpus, s.companions) == (1, 4, 1, 4)


def test_companions_without_addresses(core):
    rows = card_slot_rows()
    a = np.array(rows, dtype=np.int64).T
    r = classify(a[0], a[1], None, None, a[2], core=core)
    # audio/USB/UCSI of a GPU vendor: companions of an unknown card
    assert r.status.tolist() == [SUPPORTED, COMPANION, COMPANION, COMPANION, COMPANION, UNSUPPORTED,
                                 COMPANION, NOT_GPU, NOT_GPU]
    assert r.card.tolist() == [6, -1, -1, -1, -1, -1, -1, -1, -1]


def test_groups_keep_machines_apart(core):
    # the same address on two machines: only machine 0 has a GPU there
    r = classify([NV, NV], [0x2BB5, 0x22E8], None, None, [D3, AUDIO], group=[0, 1],
                 domain=[0, 0], bus=[1, 1], slot=[0, 0], core=core)
    assert r.status.tolist() == [SUPPORTED, NOT_GPU]


def test_virtual_functions_and_invalid_records(core):
    rows = [(NV, 0x2BB5, D3), (NV, 0x2BB5, D3), (NV, 0x2BB2, D3), (0x8086, 0x1515, NIC), (NV, 0x2BB5, D3)]
    a = np.array(rows).T
    flags = [C.FLAG_PF, C.FLAG_VF, C.FLAG_VF, C.FLAG_VF, C.FLAG_INVALID]
    r = classify(a[0], a[1], None, None, a[2], flags=flags, core=core)
    assert r.status.tolist() == [SUPPORTED, VIRTUAL_FUNCTION, VIRTUAL_FUNCTION, NOT_GPU, INVALID]
    assert r.card.tolist() == [6, 6, -1, -1, -1]
    assert r.slices.tolist() == [4, 0, 0, 0, 0]
    s = r.summary().node(0)
    assert (s.supported_cards, s.slices, s.virtual_functions, s.invalid) == (1, 4, 2, 1)
    assert any("could not be read" in w for w in s.warnings)


def test_mixed_nodes_and_labels(core):
    rows = [  # group, device
        (0, 0x27B0), (0, 0x27B0), (0, 0x27B2),      # supported next to unsupported
        (1, 0x26B1), (1, 0x2BB5), (1, 0x2BB5),      # two supported models
        (2, 0x1B81),                                 # only an unsupported GPU
        (4, 0x2BB4), (4, 0x2BB4),                    # a clean GPU node; group 3 is empty
    ]
    g = [r[0] for r in rows]
    r = classify([NV] * len(rows), [r[1] for r in rows], None, None, [VGA] * len(rows), group=g, core=core)
    roll = r.summary()
    assert len(roll) == 5
    assert roll.cards.tolist() == [2, 3, 0, 0, 2]
    assert roll.slices.tolist() == [8, 12, 0, 0, 8]
    assert roll.gpu_node.tolist() == [True, True, False, False, True]
    assert roll.mixed.tolist() == [C.MIXED_UNSUPPORTED, C.MIXED_MODELS, 0, 0, 0]
    nodes = roll.nodes(names=["a", "b", "c", "d", "e"])
    assert nodes[0].labels == {"autopilot.syself.com/gpu": "true"} and nodes[0].mixed
    assert nodes[1].cards == {"rtx-6000-ada": 1, "rtx-pro-6000-blackwell-server": 2}
    assert "more than one supported card model" in nodes[1].warnings[0]
    assert nodes[2].labels == {} and not nodes[2].gpu_node and nodes[2].unsupported_gpus == 1
    assert nodes[3].model_dump()["slices"] == 0
    assert nodes[4].cards == {"rtx-pro-6000-blackwell-max-q": 2} and nodes[4].warnings == []
    # raw arrays give the same rollup
    again = summarize(status=r.status, card=r.card, slices=r.slices, group=g, core=core)
    assert np.array_equal(again.matrix, roll.matrix)


def test_near_misses_are_explained():
    db = default_database()
    rows = [(NV, 0x1B01, None, None, VGA), (NV, 0x27B2, None, None, VGA), (NV, 0x2BB2, None, None, VGA),
            (NV, 0x1E30, NV, 0x12BA, VGA), (NV, 0x1BE0, 0x1028, 0x07C0, VGA), (NV, 0x2BB9, None, None, VGA),
            (NV, 0x1B81, None, None, VGA), (NV, 0x1E30, NV, 0x129E, VGA), (NV, 0x27B0, None, None, VGA)]
    devs = run(None, rows).devices(db=db)
    got = [(d.name, d.near_miss.card if d.near_miss else None) for d in devs]
    assert got == [
        ("GP102 [GeForce GTX 1080 Ti 10GB]", "gtx-1080-ti"),
        ("AD104GL [RTX 4000 Ada Generation]", "rtx-4000-sff-ada"),
        ("GB202GL [RTX PRO 6000D Blackwell Workstation Edition]", "rtx-pro-6000-blackwell-workstation"),
        ("Quadro RTX 6000", "rtx-6000-ada"),
        ("GeForce GTX 1080 Max-Q", "gtx-1080"),
        ("GB202GL [RTX 6000D]", "rtx-6000-ada"),
        ("GP104 [GeForce GTX 1070]", None),
        ("Quadro RTX 8000", None),
        ("AD104GL [RTX 4000 SFF Ada Generation]", None),
    ]
    assert "(10de:27b2) is not the RTX 4000 SFF Ada Generation (10de:27b0)" in devs[1].near_miss.reason
    assert devs[8].status == "supported" and devs[8].note is None
    assert devs[0].note.startswith("not on the allowlist")


def test_models_serialise_and_have_schemas():
    rows = card_slot_rows()
    a = np.array(rows, dtype=np.int64).T
    r = classify(a[0], a[1], None, None, a[2], domain=a[3], bus=a[4], slot=a[5],
                 function=np.arange(len(rows)) % 8)
    devs = r.devices()
    assert devs[0].slot == "0000:41:00.0"
    assert devs[0].status == "supported" and devs[0].card == "rtx-pro-6000-blackwell-server"
    assert devs[1].status == "companion" and devs[1].card == "rtx-pro-6000-blackwell-server"
    doc = json.loads(json.dumps([d.model_dump(mode="json") for d in devs]))
    assert doc[5]["status"] == "unsupported"
    schemas = json_schemas()
    assert set(schemas) == {"GpuCard", "DeviceClassification", "NodeGpuSummary"}
    props = schemas["DeviceClassification"]["properties"]
    assert "status" in props and "class" in props and "class_" not in props
    card = compile_policy().gpu_card(2)
    assert card.model_dump() == {"id": "rtx-4000-sff-ada", "name": "RTX 4000 SFF Ada Generation",
                                 "family": "ada-lovelace", "kernel_module": "open", "slices": 4,
                                 "device_ids": ["10de:27b0"]}


def test_device_table_duck_typing(core):
    n = 4
    table = SimpleNamespace(
        vendor=np.array([NV, NV, NV, 0x8086], np.uint16), device=np.array([0x2BB5, 0x22E8, 0x1E30, 0x1533], np.uint16),
        subvendor=np.array([NV, NV, NV, 0], np.uint16), subdevice=np.array([0x204E, 0x204E, 0x12BA, 0], np.uint16),
        has_subsystem=np.array([True, True, True, False]),
        class_code=np.array([D3, AUDIO, VGA, NIC], np.uint32), flags=np.zeros(n, np.uint32),
        domain=np.zeros(n, np.uint32), bus=np.array([1, 1, 2, 3], np.uint8),
        slot=np.zeros(n, np.uint8), function=np.array([0, 1, 0, 0], np.uint8))
    r = classify_table(table, core=core)
    assert r.status.tolist() == [SUPPORTED, COMPANION, UNSUPPORTED, NOT_GPU]
    r2 = classify_table(table, quadro_policy(), core=core)
    assert r2.card_ids() == [None, None, "quadro-rtx-6000", None]
    with pytest.raises(InputError, match="not a device table"):
        classify_table(object())


def test_default_classification_does_not_import_pydantic():
    code = ("import sys; from gpuclass.classify import classify; "
            "r = classify([0x10de], [0x2bb5], None, None, [0x030200]); "
            "print(r.card_ids(), 'pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['rtx-pro-6000-blackwell-server'] False"


def test_strided_and_other_dtypes_give_the_same_result(core):
    rng = np.random.default_rng(1)
    v = rng.choice(np.array([NV, 0x8086], np.uint16), 200)
    d = rng.choice(np.array(list(ALLOWLIST) + [0x27B2, 0x1533], np.uint16), 200)
    c = rng.choice(np.array([VGA, D3, AUDIO, NIC], np.uint32), 200)
    base = classify(v, d, None, None, c, core=core)
    wide = np.stack([v.astype(np.int64), d.astype(np.int64), c.astype(np.int64)], axis=1)
    other = classify(wide[:, 0], wide[:, 1], None, None, wide[:, 2], core=core)  # strided int64 columns
    for x, y in zip((base.status, base.card, base.slices), (other.status, other.card, other.slices)):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("kwargs, message", [
    (dict(vendor=[1.5], device=[1], class_code=[VGA]), "vendor: expected an integer array"),
    (dict(vendor=[1, 2], device=[1], class_code=[VGA, VGA]), "device: length 1 does not match vendor's length 2"),
    (dict(vendor=[0x10000], device=[1], class_code=[VGA]), "vendor: value 0x10000 at index 0 exceeds 0xffff"),
    (dict(vendor=[-1], device=[1], class_code=[VGA]), "vendor: negative value -1 at index 0"),
    (dict(vendor=[1, 1], device=[1, 1], class_code=np.array([VGA, 0x1000000], np.uint32)),
     "class_code: value 0x1000000 at index 1 exceeds 0xffffff"),
    (dict(vendor=[1, 1], device=[1, 1], class_code=np.array([VGA, 0x1000000], np.int64)),
     "class_code: value 0x1000000 at index 1 exceeds 0xffffff"),
    (dict(vendor=[1], device=[1], class_code=None), "class_code: required"),
    (dict(vendor=[1], device=[1], class_code=[VGA], subvendor=[1]), "give both or neither"),
    (dict(vendor=[1], device=[1], class_code=[VGA], domain=[0], bus=[0], slot=[32]), "slot: value 0x20 at index 0 exceeds 0x1f"),
    (dict(vendor=[1], device=[1], class_code=[VGA], domain=[0], bus=[0]), "give all three or none"),
    (dict(vendor=[1], device=[1], class_code=[VGA], subvendor=[1], subdevice=[1], has_subsystem=[2]),
     "has_subsystem: expected a boolean mask"),
    (dict(vendor=[[1]], device=[1], class_code=[VGA]), "vendor: expected a 1-D array"),
])
def test_bad_inputs_raise_clear_errors(core, kwargs, message):
    t = compile_policy().tables
    kwargs = dict(kwargs)  # shared between the two cores' runs
    args = {k: kwargs.pop(k, None) for k in ("subvendor", "subdevice")}
    with pytest.raises(InputError) as info:
        core.match_devices(t, kwargs.pop("vendor"), kwargs.pop("device"), args["subvendor"],
                           args["subdevice"], kwargs.pop("class_code"), **kwargs)
    assert message in str(info.value)


def test_bad_tables_and_rollup_inputs(core):
    t = compile_policy().tables
    with pytest.raises(InputError, match="expected MatchTables"):
        core.match_devices((1, 2), [1], [1], None, None, [VGA])
    with pytest.raises(InputError, match="tables.dev_card"):
        core.match_devices(t._replace(dev_card=t.dev_card.astype(np.int32)), [1], [1], None, None, [VGA])
    with pytest.raises(InputError, match="card index out of range"):
        core.match_devices(t._replace(dev_card=t.dev_card + 7), [1], [1], None, None, [VGA])
    with pytest.raises(InputError, match=r"group: value 3 at index 1 is outside \[0, 2\)"):
        core.rollup([1, 1], [0, 0], [4, 4], [0, 3], 2)
    with pytest.raises(InputError, match=r"group: value -1 at index 0"):
        core.rollup([1], [0], [4], [-1], 2)
    with pytest.raises(InputError, match="status: value 9 at index 1"):
        core.rollup([1, 9], [0, 0], [4, 4], [0, 5], 2)
    with pytest.raises(InputError, match="slices: length"):
        core.rollup([1, 1], [0, 0], [4], None, 1)
    assert core.rollup([], [], [], None, 0).shape == (0, C.ROLLUP_COLUMNS)
    with pytest.raises(InputError, match="outside"):
        core.rollup([0], [0], [0], [0], 0)


def test_empty_input(core):
    r = classify([], [], None, None, [], core=core)
    assert len(r) == 0 and r.summary().node(0).gpu_node is False


def test_readonly_inputs_are_accepted(core):
    v = np.array([NV], np.uint16)
    v.flags.writeable = False
    r = classify(v, np.array([0x2BB5], np.uint16), None, None, np.array([D3], np.uint32), core=core)
    assert r.status.tolist() == [SUPPORTED]


def test_identical_results_from_eight_threads(core):
    rng = np.random.default_rng(7)
    n = 200_000 if core.IS_COMPILED else 5_000
    v = rng.choice(np.array([NV, 0x8086, 0x1A03], np.uint16), n)
    d = rng.choice(np.array(list(ALLOWLIST) + [0x27B2, 0x2BB2, 0x1E30], np.uint16), n)
    sv = rng.choice(np.array([NV, 0x1028], np.uint16), n)
    sd = rng.choice(np.array([0x12BA, 0x129E], np.uint16), n)
    c = rng.choice(np.array([VGA, D3, AUDIO, NIC], np.uint32), n)
    f = rng.choice(np.array([0, C.FLAG_VF, C.FLAG_INVALID], np.uint32), n, p=[0.9, 0.05, 0.05])
    g = np.sort(rng.integers(0, n // 10, n))
    pol = compile_policy(quadro_policy())
    expect = core.match_devices(pol.tables, v, d, sv, sd, c, flags=f, group=g,
                                domain=np.zeros(n, np.uint32), bus=(g % 256).astype(np.uint8),
                                slot=np.zeros(n, np.uint8))
    expect_roll = core.rollup(*expect, g, n // 10)
    results = [None] * 8
    barrier = threading.Barrier(8)

    def work(k):
        barrier.wait()
        out = core.match_devices(pol.tables, v, d, sv, sd, c, flags=f, group=g,
                                 domain=np.zeros(n, np.uint32), bus=(g % 256).astype(np.uint8),
                                 slot=np.zeros(n, np.uint8))
        results[k] = (out, core.rollup(*out, g, n // 10))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for out, roll in results:
        assert all(np.array_equal(a, b) for a, b in zip(out, expect))
        assert np.array_equal(roll, expect_roll)


def test_a_large_call_shared_out_to_threads_answers_as_one_thread(core, monkeypatch):
    """``classify(threads=...)``: the same result on one thread and on several (the rows
    shared out from 2048 a thread here, a quarter of a million by default), the count
    checked by both cores alike."""
    from gpuclass._native.contract import match as MS

    monkeypatch.setattr(MS, "ROWS_PER_THREAD", 2048)
    rng = np.random.default_rng(31)
    n = 20_000 if core.IS_COMPILED else 3_000
    v = rng.choice(np.array([NV, 0x8086], np.uint16), n)
    d = rng.choice(np.array(list(ALLOWLIST) + [0x1E30], np.uint16), n)
    c = rng.choice(np.array([VGA, D3, AUDIO, NIC], np.uint32), n)
    one = classify(v, d, None, None, c, core=core, threads=1)
    for threads in (None, 2, 7):
        got = classify(v, d, None, None, c, core=core, threads=threads)
        assert all(np.array_equal(a, b) for a, b in
                   ((got.status, one.status), (got.card, one.card), (got.slices, one.slices)))
    assert one.supported_cards > 0
    with pytest.raises(InputError, match="threads: expected a positive integer or None, got 0"):
        classify(v, d, None, None, c, core=core, threads=0)
