"""The cache mapped without numpy (``gpuclass.db.mapped``): every lookup equal to
``PciDatabase``'s, over every key of the bundled database and keys next to them; the
same layout as the numpy reader; and what it refuses (a file another user could have
written, a damaged one, a link) with no answer rather than a wrong one."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import outside_tree
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass._native import KEY_DTYPES, TABLES
from gpuclass.db import PciDatabase
from gpuclass.db import aliases, layout
from gpuclass.db.cache import ARRAYS, CACHE_FORMAT
from gpuclass.db.locate import bundled_name
from gpuclass.db.mapped import MappedNames, cached_names
from gpuclass.errors import CacheError


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The bundled database parsed, and its cache file written."""
    db = PciDatabase.load(cache=False)
    path = tmp_path_factory.mktemp("mapped") / "db.gpcdb"
    db.save_compiled(path)
    os.chmod(path, 0o600)
    return db, str(path)


def test_layout_is_the_cores(saved):
    assert layout.TABLES == TABLES and layout.ARRAYS == ARRAYS and layout.CACHE_FORMAT == CACHE_FORMAT
    for table, dtype in zip(TABLES, KEY_DTYPES):
        assert layout.ITEMSIZE[f"{table}_keys"] == np.dtype(dtype).itemsize
    db, _ = saved
    for name, arr in db.arrays().items():
        assert layout.ITEMSIZE[name] == arr.dtype.itemsize, name


def test_every_key_of_every_table_finds_the_same_name(saved):
    db, path = saved
    mapped = MappedNames(path)
    for table in TABLES:
        keys = db._tables[table].keys.tolist()
        for key in keys:
            assert mapped._find(table, key) == db._find(table, key), (table, hex(key))
        # the keys next to them, and past both ends, are absent from both or found in both
        width = 8 * np.dtype(db._tables[table].keys.dtype).itemsize
        near = {k + d for k in keys for d in (-1, 1)} | {0, (1 << width) - 1}
        for key in sorted(k for k in near if 0 <= k < (1 << width)):
            assert mapped._find(table, key) == db._find(table, key), (table, hex(key))


ID16 = st.integers(0, 0xFFFF)


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_the_rules_answer_alike(saved, data):
    """The public lookups (fallbacks included), on IDs drawn near the database's own."""
    db, path = saved
    mapped = _mapped(path)
    subsys = db._tables["subsys"].keys
    k = int(subsys[data.draw(st.integers(0, len(subsys) - 1))])
    known = [(k >> 48) & 0xFFFF, (k >> 32) & 0xFFFF, (k >> 16) & 0xFFFF, k & 0xFFFF]
    ids = [data.draw(st.one_of(st.just(x), ID16, st.just(known[0]))) for x in known]
    v, d, sv, sd = ids
    for method, args in (("vendor_name", (v,)), ("subvendor_name", (sv,)), ("device_name", (v, d)),
                         ("subsystem_name", (v, d, sv, sd)), ("subsystem_name", (v, d, v, d)),
                         ("class_name", (v >> 8, v & 0xFF)), ("class_name", (d >> 8,)),
                         ("subclass_name", (sv >> 8, sv & 0xFF)), ("progif_name", (1, 1, sd & 0xFF)),
                         ("progif_name", (v >> 8, 0, d & 0xFF))):
        assert getattr(mapped, method)(*args) == getattr(db, method)(*args), (method, args)


_MAPPED: dict[str, MappedNames] = {}


def _mapped(path: str) -> MappedNames:
    if path not in _MAPPED:
        _MAPPED[path] = MappedNames(path)
    return _MAPPED[path]


@pytest.mark.parametrize("bad", [-1, 0x10000, "10de", None])
def test_bad_ids_raise_as_the_database_does(saved, bad):
    db, path = saved
    with pytest.raises(Exception) as want:
        db.device_name(0x10DE, bad)
    with pytest.raises(type(want.value), match=str(want.value).replace("(", r"\(").replace(")", r"\)")):
        _mapped(path).device_name(0x10DE, bad)


def _copy(path: str, tmp_path, mode: int = 0o600) -> str:
    out = tmp_path / "copy.gpcdb"
    out.write_bytes(Path(path).read_bytes())
    os.chmod(out, mode)
    return str(out)


def test_a_file_others_could_write_is_refused(saved, tmp_path):
    _, path = saved
    for mode in (0o620, 0o602, 0o666):
        with pytest.raises(CacheError, match="writable by others"):
            MappedNames(_copy(path, tmp_path, mode))


@pytest.mark.parametrize("where", ["head", "table", "payload", "blob", "truncated", "empty"])
def test_a_damaged_file_is_refused(saved, tmp_path, where):
    _, path = saved
    raw = bytearray(Path(path).read_bytes())
    if where == "head":
        raw[0] ^= 1
    elif where == "table":
        raw[layout.HEAD.size + 3] ^= 0x10  # an offset: misaligned, outside, or a length mismatch
    elif where == "payload":
        raw[-1] ^= 0x40
    elif where == "blob":
        head = layout.parse_head(bytes(raw), "x")
        raw[head.payload_at + head.arrays["blob"][0] + 100] ^= 0x20
    elif where == "truncated":
        del raw[-8:]
    else:
        raw = bytearray()
    out = tmp_path / "bad.gpcdb"
    out.write_bytes(bytes(raw))
    os.chmod(out, 0o600)
    with pytest.raises(CacheError):
        MappedNames(str(out))


def test_a_link_or_a_fifo_is_refused(saved, tmp_path):
    _, path = saved
    link = tmp_path / "link.gpcdb"
    link.symlink_to(path)
    with pytest.raises(CacheError, match="cannot read"):
        MappedNames(str(link))
    fifo = tmp_path / "fifo.gpcdb"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(CacheError, match="a FIFO, not a regular file"):
        MappedNames(str(fifo))


def _own_copy(tmp_path, monkeypatch) -> Path:
    """The default database as a copy of the bundled file: one without a wheel's shipped
    cache (tests/db/test_shipped.py), so that only the user's cache can answer."""
    src = tmp_path / "own" / "pci.ids"
    src.parent.mkdir()
    src.write_bytes(Path(bundled_name()).read_bytes())
    monkeypatch.setenv("GPUCLASS_PCI_IDS", str(src))
    return src


def test_cached_names_only_after_a_load_wrote_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(tmp_path / "cache"))
    _own_copy(tmp_path, monkeypatch)
    assert cached_names() is None  # nothing written yet: the caller loads the usual way
    db = PciDatabase.load()
    mapped = cached_names()
    assert isinstance(mapped, MappedNames) and mapped.source == db.cache_path
    assert mapped.device_name(0x10DE, 0x27B0) == db.device_name(0x10DE, 0x27B0)
    # a file of another identity (same text, a new copy) has no alias yet
    other = tmp_path / "pci.ids"
    other.write_bytes(Path(bundled_name()).read_bytes())
    assert cached_names(other) is None and cached_names("-") is None
    PciDatabase.load(other)
    assert cached_names(other).vendor_name(0x10DE) == "NVIDIA Corporation"
    # a cache directory others could write is not used
    os.chmod(tmp_path / "cache", 0o777)
    assert cached_names() is None


def test_an_alias_out_of_the_directory_is_not_followed(tmp_path, monkeypatch, saved):
    cdir = tmp_path / "cache"
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(cdir))
    src = _own_copy(tmp_path, monkeypatch)
    PciDatabase.load()
    alias = aliases.stat_alias(str(cdir), str(src))
    os.unlink(alias)
    os.symlink(saved[1], alias)  # a cache file, but another directory's
    assert cached_names() is None


def test_the_alias_name_is_hashlibs_sha256(tmp_path):
    """The built-in SHA-256 the alias uses (no OpenSSL at a scan's start) names the same
    alias as hashlib's, so caches written before keep working."""
    src = tmp_path / "pci.ids"
    src.write_bytes(b"10de  NVIDIA Corporation\n")
    st_ = os.stat(src)
    ident = (f"{os.path.realpath(src)}\0{st_.st_dev}\0{st_.st_ino}\0{st_.st_size}\0{st_.st_mtime_ns}"
             f"\0{st_.st_ctime_ns}")
    want = f"stat-{hashlib.sha256(ident.encode()).hexdigest()[:32]}.gpcdb"
    assert os.path.basename(aliases.stat_alias(str(tmp_path), src)) == want
    assert aliases.stat_alias(str(tmp_path), tmp_path / "missing") is None


def test_mapping_imports_neither_numpy_nor_hashlib(tmp_path):
    env = {**os.environ, "GPUCLASS_CACHE_DIR": str(tmp_path / "cache")}
    code = ("import sys; from gpuclass.db.mapped import cached_names; n = cached_names(); "
            "print(n.device_name(0x10de, 0x2bb1), sorted(m for m in ('numpy', 'hashlib', '_hashlib', "
            "'pathlib') if m in sys.modules))")
    subprocess.run([sys.executable, "-c", "from gpuclass.db import default_database; default_database()"],
                   env=env, check=True, cwd=outside_tree())
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True,
                         cwd=outside_tree()).stdout.split("\n")[0]
    assert out.startswith("GB202GL [RTX PRO 6000 Blackwell Workstation Edition]") or "RTX PRO 6000" in out
    assert "numpy" not in out and "hashlib" not in out


def test_an_audits_labels_come_from_the_mapped_cache(tmp_path, monkeypatch):
    """The labels of unsupported GPUs in an audit (:class:`gpuclass.pcinames.UnsupportedLabels`)
    are the database's (every device of NVIDIA's in the bundled file), and once the cache
    is there they are found without loading the database (``gpuclass.db.database``)."""
    from gpuclass.pcinames import UnsupportedLabels, unsupported_label

    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(tmp_path / "cache"))
    _own_copy(tmp_path, monkeypatch)
    first = UnsupportedLabels()
    first(0x10DE_1E30)  # no cache yet: the database is loaded (and writes it)
    db = PciDatabase.load()
    keys = [0x10DE_0000 | d for d in range(0x10000) if db.device_name(0x10DE, d)][:2000] + [0x10DE_FFFE, 0xFFFF_0001]
    assert len(keys) > 500
    mapped = UnsupportedLabels()
    want = [unsupported_label(db, k >> 16, k & 0xFFFF) for k in keys]
    assert [first(k) for k in keys] == want == [mapped(k) for k in keys]
    assert isinstance(mapped._db, MappedNames) and not isinstance(first._db, MappedNames)
    code = ("import sys; from gpuclass.pcinames import UnsupportedLabels; "
            "print(UnsupportedLabels()(0x10de1e30), '|', 'gpuclass.db.database' in sys.modules, "
            "'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), check=True, capture_output=True,
                         text=True, cwd=outside_tree()).stdout.split("\n")[0]
    assert out == f"{want[keys.index(0x10DE_1E30)]} | False False"
