"""PciDatabase: lookups, vectorized lookups, sources, compressed files and the cache."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os

import numpy as np
import pytest

from gpuclass.db import TABLES
from gpuclass.db import cache as dbmod
from gpuclass.db import PciDatabase, default_database
from gpuclass.errors import CacheError, InputError, PciIdsError
from gpuclass.db.locate import bundled_path, header_info, read_pci_ids, resolve_path, system_pci_ids

SMALL = (
    "#\tVersion: 2099.01.02\n"
    "#\tDate:    2099-01-02 03:04:05\n"
    "0000  Vendor zero\n"
    "\t0001  Device of vendor zero\n"
    "\t\t1af4 1100  specific subsystem of a zero vendor\n"
    "10de  NVIDIA Corporation\n"
    "\t1e30  TU102GL [Quadro RTX 6000/8000]\n"
    "\t\t10de 12ba  Quadro RTX 6000\n"
    "\t\t10de 12bb  Quadro RTX 8000\n"
    "\t27b0  AD104GL [RTX 4000 SFF Ada Generation]\n"
    "1af4  Red Hat, Inc.\n"
    "\t1041  Virtio network device\n"
    "S 1af4\n"
    "\t1100  QEMU Virtual Machine\n"
    "C 01  Mass storage controller\n"
    "\t01  IDE interface\n"
    "\t\t05  PCI native mode-only controller\n"
    "C 03  Display controller\n"
    "\t00  VGA compatible controller\n"
    "\t02  3D controller\n"
).encode()


@pytest.fixture
def small():
    return PciDatabase.from_bytes(SMALL, source="small.ids")


def test_scalar_lookups(small):
    assert small.vendor_name(0x10DE) == "NVIDIA Corporation"
    assert small.vendor_name(0x1234) is None
    assert small.device_name(0x10DE, 0x27B0) == "AD104GL [RTX 4000 SFF Ada Generation]"
    assert small.device_name(0x10DE, 0x27B2) is None
    assert small.subvendor_name(0x1AF4) == "Red Hat, Inc."


def test_subsystem_semantics_follow_libpci(small):
    # device-specific entry first: the Quadro RTX 6000/8000 trap
    assert small.subsystem_name(0x10DE, 0x1E30, 0x10DE, 0x12BA) == "Quadro RTX 6000"
    assert small.subsystem_name(0x10DE, 0x1E30, 0x10DE, 0x12BB) == "Quadro RTX 8000"
    # then the generic S block entry
    assert small.subsystem_name(0x10DE, 0x27B0, 0x1AF4, 0x1100) == "QEMU Virtual Machine"
    # then the device's own name when the subsystem equals the device
    assert small.subsystem_name(0x1AF4, 0x1041, 0x1AF4, 0x1041) == "Virtio network device"
    assert small.subsystem_name(0x10DE, 0x27B0, 0x10DE, 0x16FA) is None
    # libpci skips the device-specific table when vendor or device is 0000
    assert small.subsystem_name(0x0000, 0x0001, 0x1AF4, 0x1100) == "QEMU Virtual Machine"


def test_class_and_progif(small):
    assert small.class_name(0x03, 0x02) == "3D controller"
    assert small.class_name(0x03, 0x80) == "Display controller [0380]"  # the class, numbered as libpci
    assert small.class_name(0x03) == "Display controller"
    assert small.subclass_name(0x03, 0x80) is None
    assert small.class_name(0x42, 0x00) is None
    assert small.progif_name(0x01, 0x01, 0x05) == "PCI native mode-only controller"
    # IDE prog-ifs not in the file are described by their bits
    assert small.progif_name(0x01, 0x01, 0x8A) == "Master SecP PriP"
    assert small.progif_name(0x01, 0x01, 0x00) == ""
    assert small.progif_name(0x01, 0x01, 0x70) is None
    assert small.progif_name(0x03, 0x00, 0x01) is None


@pytest.mark.parametrize("call", [
    lambda d: d.vendor_name(0x10000),
    lambda d: d.vendor_name(-1),
    lambda d: d.device_name(0x10DE, "x"),
    lambda d: d.class_name(0x100),
    lambda d: d.progif_name(1, 1, 256),
])
def test_scalar_range_errors(small, call):
    with pytest.raises(InputError):
        call(small)


def test_vectorized_lookups(small):
    v = np.array([0x10DE, 0x10DE, 0x1234, 0x1AF4], dtype=np.uint16)
    d = np.array([0x27B0, 0xFFFF, 0x0000, 0x1041], dtype=np.uint16)
    idx = small.device_index(v, d)
    assert idx.dtype == np.int32
    assert small.names("device", idx) == ["AD104GL [RTX 4000 SFF Ada Generation]", None, None, "Virtio network device"]
    assert small.names("vendor", small.vendor_index(v)) == ["NVIDIA Corporation"] * 2 + [None, "Red Hat, Inc."]
    sub = small.subsystem_index([0x10DE, 0x10DE], [0x1E30, 0x1E30], [0x10DE, 0x10DE], [0x12BB, 0x0001])
    assert small.names("subsys", sub) == ["Quadro RTX 8000", None]
    cls = small.class_index(np.array([0x030200, 0x038000, 0x010105], dtype=np.uint32))
    assert small.names("subclass", cls) == ["3D controller", None, "IDE interface"]
    # any integer dtype with values in range is accepted, as lists too
    assert small.device_index([0x10DE], np.array([0x27B0], dtype=np.int64)).tolist() == idx[:1].tolist()


@pytest.mark.parametrize("args, message", [
    (([0x10DE, 0x10DE], [0x27B0]), "length"),
    (([0x10000], [0]), "exceeds 0xffff"),
    (([-1], [0]), "negative"),
    ((np.array([1.5]), [0]), "integer array"),
    ((np.zeros((2, 2), dtype=np.uint16), [0]), "1-D"),
])
def test_vectorized_errors(small, args, message):
    with pytest.raises(InputError, match=message):
        small.device_index(*args)


def test_names_rejects_bad_index(small):
    with pytest.raises(InputError):
        small.names("device", [99999])
    with pytest.raises(InputError):
        small.names("nope", [0])


def test_header_and_info(small):
    assert (small.version, small.date) == ("2099.01.02", "2099-01-02 03:04:05")
    info = small.info()
    assert info["counts"]["device"] == 4 and info["counts"]["gensub"] == 1
    assert info["core"] in ("compiled", "python")
    assert header_info(b"no header here\n") == {"version": None, "date": None}


def test_bundled_database(bundled_bytes):
    db = default_database()
    assert db.version == "2026.08.22"
    assert db.source == os.fspath(bundled_path())
    assert db.device_name(0x10DE, 0x2BB1) == "GB202GL [RTX PRO 6000 Blackwell Workstation Edition]"
    assert default_database() is db  # loaded once per process


@pytest.mark.parametrize("compress", [gzip.compress, lzma.compress, bz2.compress], ids=["gz", "xz", "bz2"])
def test_compressed_files_read_transparently(tmp_path, compress):
    path = tmp_path / "pci.ids.any"
    path.write_bytes(compress(SMALL))
    assert read_pci_ids(path) == SMALL
    db = PciDatabase.load(path)
    assert db.subsystem_name(0x10DE, 0x1E30, 0x10DE, 0x12BA) == "Quadro RTX 6000"


@pytest.mark.parametrize("compress", [gzip.compress, lzma.compress, bz2.compress], ids=["gz", "xz", "bz2"])
def test_truncated_archive_is_an_error(tmp_path, compress):
    blob = compress(SMALL * 20)
    path = tmp_path / "pci.ids.cut"
    path.write_bytes(blob[: len(blob) * 2 // 3])
    with pytest.raises(PciIdsError, match="truncated or corrupt") as info:
        PciDatabase.load(path)
    assert info.value.filename == os.fspath(path) and info.value.line is None


def test_missing_file_is_a_typed_error(tmp_path):
    with pytest.raises(PciIdsError, match="cannot read"):
        PciDatabase.load(tmp_path / "absent.ids")


def test_strict_load_error_names_the_file(tmp_path):
    path = tmp_path / "bad.ids"
    path.write_bytes(SMALL + b"\tzzzz  bad\n")
    with pytest.raises(PciIdsError) as info:
        PciDatabase.load(path)
    assert info.value.filename == os.fspath(path)
    assert info.value.line == SMALL.count(b"\n") + 1


def test_lenient_load_reports_skipped(tmp_path):
    path = tmp_path / "bad.ids"
    path.write_bytes(SMALL + b"\tzzzz  bad\n")
    db = PciDatabase.load(path, strict=False)
    assert [s.line for s in db.skipped] == [SMALL.count(b"\n") + 1]
    assert db.device_name(0x10DE, 0x27B0) is not None


def test_resolution_order(tmp_path, monkeypatch):
    assert resolve_path() == bundled_path()
    env_file = tmp_path / "env.ids"
    env_file.write_bytes(SMALL)
    monkeypatch.setenv("GPUCLASS_PCI_IDS", str(env_file))
    assert resolve_path() == env_file
    assert default_database().version == "2099.01.02"
    assert resolve_path(bundled_path()) == bundled_path()


def test_system_pci_ids_finds_compressed_variants(tmp_path):
    assert system_pci_ids(tmp_path) is None
    target = tmp_path / "usr/share/misc/pci.ids.gz"
    target.parent.mkdir(parents=True)
    target.write_bytes(gzip.compress(SMALL))
    assert system_pci_ids(tmp_path) == target
    hw = tmp_path / "usr/share/hwdata/pci.ids"
    hw.parent.mkdir(parents=True)
    hw.write_bytes(SMALL)
    assert system_pci_ids(tmp_path) == hw


# -- the compiled cache ------------------------------------------------------------


def _ids_file(tmp_path, data=SMALL):
    path = tmp_path / "pci.ids"
    path.write_bytes(data)
    return path


def test_cache_round_trip(tmp_path):
    src = _ids_file(tmp_path)
    first = PciDatabase.load(src)
    assert first.cache_path is not None and os.path.exists(first.cache_path)
    again = PciDatabase.load(src)
    assert again.cache_path is not None
    again.verify()
    for table in TABLES:
        keys = first.arrays()[f"{table}_keys"]
        assert np.array_equal(keys, again.arrays()[f"{table}_keys"]), table
        rows = np.arange(len(keys))
        assert first.names(table, rows) == again.names(table, rows), table
    # the cache holds the names alone, back to back
    arrays = again.arrays()
    assert len(arrays["blob"]) == int(np.sum(arrays["name_end"] - arrays["name_start"])) < len(SMALL)
    assert again.subsystem_name(0x10DE, 0x1E30, 0x10DE, 0x12BB) == "Quadro RTX 8000"
    assert (again.version, again.source) == ("2099.01.02", os.fspath(src))


def test_cache_is_keyed_by_content(tmp_path):
    src = _ids_file(tmp_path)
    PciDatabase.load(src)
    src.write_bytes(SMALL.replace(b"Quadro RTX 8000", b"Quadro RTX 8000 (changed)"))
    os.utime(src, ns=(1, 1))  # even a file changed under an unchanged-looking mtime
    db = PciDatabase.load(src)
    assert db.subsystem_name(0x10DE, 0x1E30, 0x10DE, 0x12BB) == "Quadro RTX 8000 (changed)"


def test_cache_files_never_unpickle_and_have_magic(tmp_path):
    db = PciDatabase.from_bytes(SMALL)
    out = db.save_compiled(tmp_path / "x.gpcdb")
    raw = out.read_bytes()
    assert raw.startswith(dbmod.CACHE_MAGIC)
    assert b"pickle" not in raw


def _array_start(raw: bytes, name: str) -> int:
    """File offset of one array in a cache file (read through the format's own layout)."""
    _magic, _fmt, meta_len, _payload_len = dbmod._CACHE_HEAD.unpack_from(raw, 0)
    table = dbmod._CACHE_TABLE.unpack_from(raw, dbmod._CACHE_HEAD.size)
    i = dbmod.ARRAYS.index(name)
    return dbmod._CACHE_HEAD.size + dbmod._CACHE_TABLE.size + meta_len + table[3 * i]


@pytest.mark.parametrize("damage", ["flip_key", "flip_blob", "truncate", "garbage", "empty", "header",
                                    "format", "table"])
def test_corrupt_cache_is_detected(tmp_path, damage):
    db = PciDatabase.from_bytes(SMALL)
    path = db.save_compiled(tmp_path / "x.gpcdb")
    raw = bytearray(path.read_bytes())
    if damage == "flip_key":
        # flip a byte inside the device key array
        raw[_array_start(raw, "device_keys")] ^= 0x40
    elif damage == "flip_blob":
        raw[_array_start(raw, "blob") + 3] ^= 0x01
    elif damage == "truncate":
        raw = raw[: len(raw) - 7]
    elif damage == "garbage":
        raw = bytearray(os.urandom(len(raw)))
    elif damage == "empty":
        raw = bytearray()
    elif damage == "format":
        raw[8:12] = (99).to_bytes(4, "little")
    elif damage == "table":  # an offset far past the payload
        raw[dbmod._CACHE_HEAD.size : dbmod._CACHE_HEAD.size + 8] = (2**40).to_bytes(8, "little")
    else:  # the metadata JSON
        at = dbmod._CACHE_HEAD.size + dbmod._CACHE_TABLE.size
        raw[at : at + 8] = b"{{{{{{{{"
    path.write_bytes(bytes(raw))
    with pytest.raises(CacheError):
        PciDatabase.load_compiled(path, verify=True)


def test_corrupt_cache_is_rebuilt_by_load(tmp_path):
    src = _ids_file(tmp_path)
    db = PciDatabase.load(src)
    target = os.path.realpath(db.cache_path)
    with open(target, "r+b") as fh:
        fh.seek(-3, os.SEEK_END)
        fh.write(b"\xff\xff\xff")
    rebuilt = PciDatabase.load(src)
    assert rebuilt.device_name(0x10DE, 0x27B0) == "AD104GL [RTX 4000 SFF Ada Generation]"
    rebuilt.verify()
    assert PciDatabase.load_compiled(target, verify=True).device_name(0x10DE, 0x27B0) is not None


def test_deferred_check_fires_before_first_use(tmp_path):
    db = PciDatabase.from_bytes(SMALL)
    path = db.save_compiled(tmp_path / "x.gpcdb")
    raw = bytearray(path.read_bytes())
    raw[_array_start(raw, "vendor_keys")] ^= 0x01
    path.write_bytes(bytes(raw))
    loaded = PciDatabase.load_compiled(path)  # cheap load succeeds ...
    with pytest.raises(CacheError, match="vendor_keys"):
        loaded.vendor_name(0x10DE)  # ... but the table is verified before it answers


def test_stale_cache_rejected(tmp_path):
    db = PciDatabase.from_bytes(SMALL)
    path = db.save_compiled(tmp_path / "x.gpcdb")
    with pytest.raises(CacheError, match="stale"):
        PciDatabase.load_compiled(path, expect_sha256="0" * 64)


def test_unwritable_cache_location_still_loads(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"not a directory")
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(blocker / "sub"))
    db = PciDatabase.load(_ids_file(tmp_path))
    assert db.cache_path is None
    assert db.vendor_name(0x10DE) == "NVIDIA Corporation"


def test_no_temp_files_left_behind(tmp_path, monkeypatch):
    cdir = tmp_path / "cache"
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(cdir))
    PciDatabase.load(_ids_file(tmp_path))
    PciDatabase.load(_ids_file(tmp_path))
    assert not [p for p in os.listdir(cdir) if p.startswith(".tmp")]


def test_vector_and_scalar_subsystem_lookups_agree_on_zero_ids():
    """libpci looks a device-specific subsystem up only when vendor and device are both
    non-zero; the bundled file has 14 entries under a 0000 vendor or device, and neither
    path may name them (the scalar path then falls back like libpci)."""
    db = default_database()
    keys = db.arrays()["subsys_keys"].astype(np.uint64)
    parts = [((keys >> np.uint64(s)) & np.uint64(0xFFFF)).astype(np.uint16) for s in (48, 32, 16, 0)]
    zero = (parts[0] == 0) | (parts[1] == 0)
    assert int(zero.sum()) == 14
    idx = db.subsystem_index(*(p[zero] for p in parts))
    assert (idx == -1).all()
    rows = db.subsystem_index(*(p[~zero] for p in parts))
    assert (rows >= 0).all()  # every other entry is found by its own key
    for v, d, sv, sd in zip(*(p[zero].tolist() for p in parts)):
        name = db.subsystem_name(v, d, sv, sd)
        gensub = db._find("gensub", (sv << 16) | sd)
        own = db.device_name(v, d) if (v, d) == (sv, sd) else None
        assert name == (gensub or own)
