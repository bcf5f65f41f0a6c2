"""The compiled cache is a trust boundary: hostile files with valid checksums are never
served, caches another user could write are never used, and ``db compile --write`` replaces
nothing but a regular file."""

from __future__ import annotations

import json
import os
import stat
import struct
import threading
import zlib

import numpy as np
import pytest
from helpers import NON_REGULAR, non_regular_target
from helpers import run_in_process as run

from gpuclass import PciDatabase
from gpuclass.db import cache as C
from gpuclass.errors import CacheError

IDS = ("# Version: 2026.01.01\n10de  NVIDIA Corporation\n\t27b0  AD104GL [RTX 4000 SFF Ada Generation]\n"
       "\t\t10de 16fa  RTX 4000 SFF Ada Generation\n1234  Ünïcödé Vendor ✓\n"
       "C 03  Display controller\n\t00  VGA compatible controller\n").encode()


def _right(db) -> None:
    assert db.device_name(0x10DE, 0x27B0) == "AD104GL [RTX 4000 SFF Ada Generation]"
    assert db.vendor_name(0x1234) == "Ünïcödé Vendor ✓"
    assert db.subsystem_name(0x10DE, 0x27B0, 0x10DE, 0x16FA) == "RTX 4000 SFF Ada Generation"


@pytest.fixture
def setup(tmp_path, monkeypatch):
    ids = tmp_path / "pci.ids"
    ids.write_bytes(IDS)
    cdir = tmp_path / "cache"
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(cdir))
    db = PciDatabase.load(ids)
    _right(db)
    return ids, cdir, db.cache_path


def _write(path, arrays: dict, meta_bytes: bytes, *, misalign: str | None = None) -> None:
    """A cache file in the real format with valid checksums, whatever the content."""
    table, parts, offset = [], [], 0
    for name in C.ARRAYS:
        raw = np.ascontiguousarray(arrays[name], dtype=C._EXPECTED_DTYPES[name]).tobytes()
        pad = (-offset) % 8 + (4 if name == misalign else 0)
        parts.append(b"\0" * pad)
        offset += pad
        table += [offset, len(raw) // C._EXPECTED_DTYPES[name].itemsize, zlib.crc32(raw)]
        parts.append(raw)
        offset += len(raw)
    payload = b"".join(parts)
    meta_bytes += b" " * ((-(C._CACHE_HEAD.size + C._CACHE_TABLE.size + len(meta_bytes))) % 8)
    head = C._CACHE_HEAD.pack(C.CACHE_MAGIC, C.CACHE_FORMAT, len(meta_bytes), len(payload))
    with open(path, "wb") as fh:
        fh.write(head + C._CACHE_TABLE.pack(*table) + meta_bytes + payload)


def _arrays(cache_path) -> tuple[dict, dict]:
    db = PciDatabase.load_compiled(cache_path, verify=True)
    arrays = {k: np.array(v) for k, v in db.arrays().items()}
    src, meta = C.read_cache(cache_path)
    return arrays, meta


def _meta(meta) -> bytes:
    return json.dumps(meta).encode()


def _hostile(kind, arrays, meta):
    a, m = dict(arrays), dict(meta)
    blob = a["blob"].copy()
    if kind == "names-not-utf8":
        blob[int(a["name_start"][0])] = 0xFF
    elif kind == "name-splits-a-character":
        i = int(np.flatnonzero(blob >= 0xC0)[0])  # a multibyte character of the Unicode vendor
        j = int(np.flatnonzero((a["name_start"] <= i) & (a["name_end"] > i))[0])
        a["name_end"] = a["name_end"].copy()
        a["name_end"][j] = i + 1
    elif kind == "meta-nested":
        return a, ('{"sha256": null, "source": ' + "[" * 5000 + "]" * 5000
                   + ', "version": null, "date": null}').encode()
    elif kind == "meta-wrong-types":
        m["version"] = {"a": [1, 2]}
    elif kind == "meta-extra-key":
        m["evil"] = "x"
    elif kind == "meta-not-object":
        return a, b"[1, 2, 3]"
    elif kind == "meta-huge":
        m["source"] = "x" * (C.MAX_META + 10)
    elif kind == "meta-not-utf8":
        return a, b'{"sha256": null, "source": "\xff", "version": null, "date": null}'
    elif kind == "meta-huge-int":
        return a, b'{"sha256": null, "source": ' + b"9" * 5000 + b', "version": null, "date": null}'
    a["blob"] = blob
    return a, _meta(m)


HOSTILE = ["names-not-utf8", "name-splits-a-character", "meta-nested", "meta-wrong-types",
           "meta-extra-key", "meta-not-object", "meta-huge", "meta-not-utf8", "meta-huge-int"]


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_content_with_valid_checksums_is_refused(setup, kind):
    _, _, cpath = setup
    arrays, meta = _arrays(cpath)
    a, meta_bytes = _hostile(kind, arrays, meta)
    _write(cpath, a, meta_bytes)
    with pytest.raises(CacheError):
        PciDatabase.load_compiled(cpath, verify=True)


@pytest.mark.parametrize("kind", HOSTILE + ["misaligned"])
def test_hostile_cache_is_rebuilt_never_served(setup, kind):
    ids, _, cpath = setup
    arrays, meta = _arrays(cpath)
    if kind == "misaligned":
        _write(cpath, arrays, _meta(meta), misalign="device_keys")
    else:
        a, meta_bytes = _hostile(kind, arrays, meta)
        _write(cpath, a, meta_bytes)
    _right(PciDatabase.load(ids))
    PciDatabase.load_compiled(cpath, verify=True)  # rebuilt in place


@pytest.mark.parametrize("name", ["device_keys", "subsys_keys", "name_start", "blob"])
def test_misaligned_arrays_are_refused(setup, name):
    """An array at an odd offset would be read by 64-bit loads at that offset (UBSan
    reported them misaligned): refused at the head, before anything maps it."""
    _, _, cpath = setup
    arrays, meta = _arrays(cpath)
    _write(cpath, arrays, _meta(meta), misalign=name)
    with pytest.raises(CacheError, match="aligned"):
        PciDatabase.load_compiled(cpath)


def test_kernels_never_see_an_unaligned_array(core):
    """Defence in depth: an unaligned view handed to an index is copied, not read in place."""
    raw = np.zeros(8 * 101, dtype=np.uint8)
    raw[4:804] = (np.arange(100, dtype=np.uint64) * 3).view(np.uint8)
    view = np.frombuffer(raw.data, dtype=np.uint64, count=100, offset=4)
    assert not view.flags.aligned
    idx = core.KeyIndex(view)
    assert idx.lookup(view).tolist() == list(range(100))


# -- a cache file that is not a file ---------------------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "symlink", "dir", "chardev"])
def test_cache_file_that_is_not_a_file(setup, kind):
    ids, cdir, cpath = setup
    for name in os.listdir(cdir):  # the aliases too: the content-keyed file is looked up
        os.unlink(cdir / name)
    if kind == "fifo":
        os.mkfifo(cpath)
    elif kind == "symlink":
        other = cdir.parent / "elsewhere.gpcdb"
        PciDatabase.from_bytes(IDS).save_compiled(other)
        os.symlink(other, cpath)
    elif kind == "dir":
        os.mkdir(cpath)
    else:
        os.mknod(cpath, stat.S_IFCHR | 0o600, os.makedev(1, 5))
    done = {}
    th = threading.Thread(target=lambda: done.update(db=PciDatabase.load(ids)), daemon=True)
    th.start()
    th.join(10)
    assert "db" in done, "the load blocked"
    _right(done["db"])
    with pytest.raises(CacheError):
        PciDatabase.load_compiled(cpath)


def test_an_alias_leading_out_of_the_cache_dir_is_ignored(setup, tmp_path):
    ids, cdir, cpath = setup
    planted = tmp_path / "planted.gpcdb"
    arrays, meta = _arrays(cpath)
    a, mb = dict(arrays), _meta(meta)
    a["blob"] = arrays["blob"].copy()
    a["blob"][int(arrays["name_start"][0]):int(arrays["name_start"][0]) + 3] = list(b"EVL")
    _write(planted, a, mb)
    for name in os.listdir(cdir):
        if name.startswith("stat-"):
            os.unlink(cdir / name)
            os.symlink(planted, cdir / name)
    _right(PciDatabase.load(ids))


# -- who may write the cache -----------------------------------------------------------------

def _planted_cache(setup):
    """The cache file rewritten with wrong names and valid checksums: served only if trusted."""
    ids, cdir, cpath = setup
    arrays, meta = _arrays(cpath)
    a = dict(arrays)
    a["blob"] = arrays["blob"].copy()
    a["blob"][a["blob"] == ord("A")] = ord("E")  # AD104GL -> ED104GL
    _write(cpath, a, _meta(meta))
    return ids, cdir, cpath


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o757])
def test_a_cache_dir_others_can_write_is_refused(setup, mode):
    ids, cdir, cpath = _planted_cache(setup)
    os.chmod(cdir, mode)
    before = sorted(os.listdir(cdir))
    db = PciDatabase.load(ids)
    _right(db)
    assert db.cache_path is None and "writable by others" in db.cache_refused
    assert sorted(os.listdir(cdir)) == before  # nothing written there either


def test_a_cache_dir_of_another_user_is_refused(setup):
    ids, cdir, _ = _planted_cache(setup)
    os.chown(cdir, 12345, 12345)
    db = PciDatabase.load(ids)
    _right(db)
    assert "another user" in db.cache_refused


def test_a_cache_file_others_can_write_is_rebuilt(setup):
    ids, cdir, cpath = _planted_cache(setup)
    os.chmod(cpath, 0o666)
    _right(PciDatabase.load(ids))
    assert stat.S_IMODE(os.stat(cpath).st_mode) & 0o022 == 0  # replaced by a fresh one
    _right(PciDatabase.load(ids))


def test_a_cache_file_of_another_user_is_rebuilt(setup):
    ids, cdir, cpath = _planted_cache(setup)
    os.chown(cpath, 12345, 12345)
    _right(PciDatabase.load(ids))
    assert os.stat(cpath).st_uid == os.geteuid()


def test_the_directories_above_count_too(tmp_path, monkeypatch):
    ids = tmp_path / "pci.ids"
    ids.write_bytes(IDS)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)  # anyone could rename our cache directory away and plant theirs
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(shared / "gpuclass"))
    db = PciDatabase.load(ids)
    assert db.cache_refused and "above the cache" in db.cache_refused
    os.chmod(shared, 0o1777)  # the sticky bit, like /tmp: others cannot rename our entries
    db = PciDatabase.load(ids)
    assert db.cache_refused is None and db.cache_path is not None


def test_the_cache_dir_is_created_private(tmp_path, monkeypatch):
    ids = tmp_path / "pci.ids"
    ids.write_bytes(IDS)
    # the default cache's two levels, made in an existing home (nothing above them: issue 28)
    monkeypatch.delenv("GPUCLASS_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    PciDatabase.load(ids)
    for d in (tmp_path / "home" / ".cache", tmp_path / "home" / ".cache" / "gpuclass"):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700


def test_trust_problem_is_reusable(tmp_path):
    d = C.make_cache_dir(tmp_path / "c")
    assert C.trust_problem(d) is None
    f = d / "x"
    f.write_bytes(b"x")
    os.chmod(f, 0o600)
    assert C.trust_problem(f, kind="file") is None
    os.chmod(f, 0o620)
    assert "writable by others" in C.trust_problem(f, kind="file")
    os.symlink(f, d / "l")
    assert "symlink" in C.trust_problem(d / "l", kind="file")


# -- db compile --write ----------------------------------------------------------------------

@pytest.mark.parametrize("kind", NON_REGULAR)
def test_compile_output_replaces_only_a_regular_file(tmp_path, kind):
    out, victim = non_regular_target(tmp_path, kind, "out.gpcdb")
    before = os.lstat(out)
    proc = run("db", "compile", "--write", out)
    assert proc.returncode == 3 and "refusing to replace" in proc.stderr, proc.stderr
    after = os.lstat(out)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert victim.read_text() == "keep me"
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".tmp-")]


def test_compile_output_over_a_regular_file(tmp_path):
    out = tmp_path / "out.gpcdb"
    out.write_text("old")
    proc = run("db", "compile", "--write", out)
    assert proc.returncode == 0, proc.stderr
    PciDatabase.load_compiled(out, verify=True)


def test_head_struct_is_what_the_tests_write():
    assert struct.calcsize("<8sIIQ") == C._CACHE_HEAD.size


def test_old_databases_and_aliases_are_retired(tmp_path, monkeypatch):
    """Each pci.ids content is a compiled file and each file identity an alias: loading more
    than are kept leaves the newest, and no alias to a removed file."""
    from gpuclass.db import aliases

    cdir = tmp_path / "cache"
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(cdir))
    n = aliases.DATABASES_KEPT + 3
    for i in range(n):
        ids = tmp_path / f"pci-{i}.ids"
        ids.write_bytes(IDS + f"# update {i}\n".encode())
        _right(PciDatabase.load(ids))
        for name in os.listdir(cdir):  # an older load: its files a second apart
            os.utime(cdir / name, ns=(i * 10**9, i * 10**9), follow_symlinks=False)
    kept = sorted(cdir.glob("pciids-*.gpcdb"))
    assert len(kept) == aliases.DATABASES_KEPT
    links = list(cdir.glob("stat-*.gpcdb"))
    assert all(os.path.exists(p) for p in links) and len(links) == aliases.DATABASES_KEPT
    newest = PciDatabase.load(tmp_path / f"pci-{n - 1}.ids")
    assert os.path.dirname(newest.cache_path) == str(cdir) and _right(newest) is None


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="no user ids on this platform")
def test_prune_keeps_the_newest_and_leaves_others_alone(tmp_path, monkeypatch):
    from gpuclass.cachedir import prune

    for i in range(6):
        (tmp_path / f"k-{i}.bin").write_bytes(b"x")
        os.utime(tmp_path / f"k-{i}.bin", ns=(i * 10**9, i * 10**9))
    (tmp_path / "other.bin").write_bytes(b"x")          # another name: never touched
    os.symlink("k-gone.bin", tmp_path / "k-dead.bin")   # a link to nothing: removed first
    removed = prune(tmp_path, "k-", ".bin", 3, spare=tmp_path / "k-0.bin")
    assert sorted(os.path.basename(p) for p in removed) == ["k-1.bin", "k-2.bin", "k-3.bin", "k-dead.bin"]
    assert sorted(os.listdir(tmp_path)) == ["k-0.bin", "k-4.bin", "k-5.bin", "other.bin"]
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)  # files of another user stay
    assert prune(tmp_path, "k-", ".bin", 0) == []
    assert prune(tmp_path / "missing", "k-", ".bin", 0) == []
