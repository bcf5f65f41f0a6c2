"""Faults: the compiled cache and the sysfs scanner under broken disks, dead writers,
races and misbehaving files.  Every case ends with a correct answer and at most a
warning (cache), or a flagged record in bounded time (sysfs); never a crash.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import fakesys
from gpuclass import PciDatabase, cachedir
from gpuclass.db import aliases
from gpuclass.db import cache as dbmod
from gpuclass.sources import sysfs as sysmod
from gpuclass.devices import FLAG_INVALID
from gpuclass.sources.sysfs import scan_sysfs

IDS = (b"# Version: 2026.01.01\n10de  NVIDIA Corporation\n\t27b0  AD104GL [RTX 4000 SFF Ada Generation]\n"
       b"\t\t10de 16fa  RTX 4000 SFF Ada Generation\n8086  Intel Corporation\nC 03  Display controller\n"
       b"\t00  VGA compatible controller\n")


def _right(db) -> None:
    """The database answers like a fresh parse of IDS."""
    assert db.vendor_name(0x10DE) == "NVIDIA Corporation"
    assert db.device_name(0x10DE, 0x27B0) == "AD104GL [RTX 4000 SFF Ada Generation]"
    assert db.subsystem_name(0x10DE, 0x27B0, 0x10DE, 0x16FA) == "RTX 4000 SFF Ada Generation"
    assert db.class_name(3, 0) == "VGA compatible controller"
    assert db.counts() == PciDatabase.from_bytes(IDS).counts()


@pytest.fixture
def ids(tmp_path):
    p = tmp_path / "pci.ids"
    p.write_bytes(IDS)
    return p


def _caches(cdir) -> list[str]:
    return sorted(n for n in os.listdir(cdir) if n.startswith("pciids-")) if os.path.isdir(cdir) else []


def _temps(cdir) -> list[str]:
    return sorted(n for n in os.listdir(cdir) if n.startswith(".tmp-")) if os.path.isdir(cdir) else []


# -- cache ------------------------------------------------------------------------------

def test_missing_cache_dir_is_created(ids, tmp_path, monkeypatch):
    cdir = tmp_path / "cache"
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(cdir))
    _right(PciDatabase.load(ids))
    assert len(_caches(cdir)) == 1
    _right(PciDatabase.load(ids))  # and used


def test_cache_dir_whose_parents_are_missing_is_not_created(ids, tmp_path, monkeypatch):
    """Only the cache directory itself is made, never folders above it (issue 28): the
    database is parsed without a cache."""
    cdir = tmp_path / "a" / "b" / "cache"
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(cdir))
    db = PciDatabase.load(ids)
    _right(db)
    assert db.cache_refused and not (tmp_path / "a").exists()


def test_cache_dir_is_a_file(ids, tmp_path, monkeypatch):
    cdir = tmp_path / "cache"
    cdir.write_text("not a directory")
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(cdir))
    _right(PciDatabase.load(ids))


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES])
def test_read_only_cache_dir(ids, tmp_path, monkeypatch, code):
    # root ignores mode bits, so the refusal is injected where the library creates files
    cdir = tmp_path / "cache"
    cdir.mkdir()
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(cdir))

    def refuse(*a, **kw):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(cachedir, "private_file", refuse)
    monkeypatch.setattr(dbmod.os, "symlink", refuse)
    _right(PciDatabase.load(ids))
    _right(PciDatabase.load(ids))
    assert os.listdir(cdir) == []


def test_disk_full_while_writing(ids, tmp_path, monkeypatch):
    """ENOSPC from write or fsync: the load still answers, and no temp file is left."""
    cdir = tmp_path / "cache"
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(cdir))
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            self.fh.write(data[: len(data) // 3])
            self.fh.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(dbmod.os, "fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    _right(PciDatabase.load(ids))
    assert _caches(cdir) == [] and _temps(cdir) == []
    monkeypatch.setattr(dbmod.os, "fdopen", real_fdopen)

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(dbmod.os, "fsync", no_space)
    _right(PciDatabase.load(ids))
    assert _caches(cdir) == [] and _temps(cdir) == []


def test_file_size_limit_is_a_real_full_disk(ids, tmp_path):
    """No mocking: RLIMIT_FSIZE makes the kernel refuse the cache write (EFBIG)."""
    cdir = tmp_path / "cache"
    code = textwrap.dedent(f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (256, 256))
        from gpuclass import PciDatabase
        db = PciDatabase.load({str(ids)!r})
        print(db.vendor_name(0x10de), db.counts()["device"])
    """)
    env = dict(os.environ, GPUCLASS_CACHE_DIR=str(cdir))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["NVIDIA", "Corporation", "1"]
    assert _caches(cdir) == [] and _temps(cdir) == []


@pytest.mark.parametrize("how", ["truncate", "flip", "empty", "garbage"])
def test_damaged_cache_on_disk_is_rebuilt(ids, tmp_path, monkeypatch, how):
    cdir = tmp_path / "cache"
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(cdir))
    PciDatabase.load(ids)
    (name,) = _caches(cdir)
    path = cdir / name
    raw = path.read_bytes()
    damaged = {"truncate": raw[: len(raw) // 2], "flip": raw[:-9] + bytes([raw[-9] ^ 0xFF]) + raw[-8:],
               "empty": b"", "garbage": os.urandom(len(raw))}[how]
    path.write_bytes(damaged)
    _right(PciDatabase.load(ids))
    # rebuilt in place: the next load takes the cache again
    assert PciDatabase.load_compiled(path, verify=True).counts() == PciDatabase.from_bytes(IDS).counts()


def test_alias_pointing_at_garbage(ids, tmp_path, monkeypatch):
    cdir = tmp_path / "cache"
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(cdir))
    PciDatabase.load(ids)
    for name in os.listdir(cdir):
        if name.startswith("stat-"):
            os.unlink(cdir / name)
            os.symlink("/nonexistent/elsewhere", cdir / name)
    _right(PciDatabase.load(ids))


_SLOW_WRITER = textwrap.dedent("""
    import os, sys, time
    from gpuclass import PciDatabase
    from gpuclass.db import cache
    real = os.fsync
    def stall(fd):
        print("writing", flush=True)
        time.sleep(60)
    cache.os.fsync = stall
    PciDatabase.load(sys.argv[1])
""")


def test_writer_killed_mid_write(ids, tmp_path):
    """SIGKILL while the cache is half written: no cache is trusted, the next load is right."""
    cdir = tmp_path / "cache"
    env = dict(os.environ, GPUCLASS_CACHE_DIR=str(cdir))
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(ids)], env=env,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
    assert _caches(cdir) == [] and len(_temps(cdir)) == 1  # the dead writer's temp file
    code = f"from gpuclass import PciDatabase; db = PciDatabase.load({str(ids)!r}); print(db.vendor_name(0x10de))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "NVIDIA Corporation", out.stderr
    assert len(_caches(cdir)) == 1
    # an old dead writer's leftovers are swept on the next rebuild
    (tmp,) = _temps(cdir)
    old = time.time() - 2 * aliases.STALE_TEMP_SECONDS
    os.utime(cdir / tmp, (old, old))
    for name in _caches(cdir):
        os.unlink(cdir / name)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, timeout=60)
    assert _temps(cdir) == []


_BUILDER = textwrap.dedent("""
    import sys, time
    start = float(sys.argv[2])
    while time.time() < start:
        time.sleep(0.001)
    from gpuclass import PciDatabase
    for _ in range(5):
        db = PciDatabase.load(sys.argv[1])
        assert db.device_name(0x10de, 0x27b0) == "AD104GL [RTX 4000 SFF Ada Generation]"
    print(db.counts()["device"])
""")


def test_processes_building_at_once(ids, tmp_path):
    cdir = tmp_path / "cache"
    env = dict(os.environ, GPUCLASS_CACHE_DIR=str(cdir))
    start = str(time.time() + 1.5)
    procs = [subprocess.Popen([sys.executable, "-c", _BUILDER, str(ids), start], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [o[1][-500:] for o in outs]
    assert [o[0].strip() for o in outs] == ["1"] * 4
    assert len(_caches(cdir)) == 1 and _temps(cdir) == []
    _right(PciDatabase.load_compiled(cdir / _caches(cdir)[0], verify=True))


def test_pci_ids_changed_under_the_cache(ids, tmp_path, monkeypatch):
    """Rewritten in place with the same size and its old mtime put back: still noticed."""
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(tmp_path / "cache"))
    assert PciDatabase.load(ids).vendor_name(0x10DE) == "NVIDIA Corporation"
    st = os.stat(ids)
    changed = IDS.replace(b"NVIDIA Corporation", b"NVIDIA Corporatiox")
    with open(ids, "r+b") as fh:
        fh.write(changed)
    os.utime(ids, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(ids).st_size == st.st_size and os.stat(ids).st_mtime_ns == st.st_mtime_ns
    assert PciDatabase.load(ids).vendor_name(0x10DE) == "NVIDIA Corporatiox"
    # and the process-wide default notices too
    from gpuclass.db import default_database
    monkeypatch.setenv("GPUCLASS_PCI_IDS", str(ids))
    assert default_database().vendor_name(0x10DE) == "NVIDIA Corporatiox"
    with open(ids, "r+b") as fh:
        fh.write(IDS)
    os.utime(ids, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert default_database().vendor_name(0x10DE) == "NVIDIA Corporation"


def test_pci_ids_replaced_by_a_different_file(ids, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(tmp_path / "cache"))
    PciDatabase.load(ids)
    new = tmp_path / "new.ids"
    new.write_bytes(IDS + b"1af4  Red Hat, Inc.\n")
    os.replace(new, ids)
    db = PciDatabase.load(ids)
    assert db.vendor_name(0x1AF4) == "Red Hat, Inc."


# -- sysfs ------------------------------------------------------------------------------

@pytest.fixture(params=["active", "python"])
def machine(tmp_path, request, monkeypatch):
    """A fixture machine, scanned by the active reader and by the pure-Python one.

    Where device reading lives in the core (``sysfs._core.read_devices``, the perf
    work), "python" forces the twin; before that, the scanner is Python already.
    """
    if request.param == "python" and hasattr(sysmod, "_core"):
        from gpuclass._native import twin

        monkeypatch.setattr(sysmod, "_core", twin)
    elif request.param == "python":
        pytest.skip("the scanner is pure Python already")
    root = tmp_path / "root"
    fakesys.write_tree(root, fakesys.gex44())
    return root


def _io(monkeypatch):
    """The module whose ``_open``/``_read`` the Python device reader calls (faults are
    injected there): gpuclass.sources.sysfs, or the twin gpuclass._sysfs_py once device reading
    moved into the core, which is then forced."""
    from gpuclass._native import sysfs_py as _sysfs_py

    if hasattr(_sysfs_py, "_read") and hasattr(sysmod, "_core"):
        from gpuclass._native import twin

        monkeypatch.setattr(sysmod, "_core", twin)
        return _sysfs_py
    return sysmod


def _row(table, address: str) -> int:
    return table.addresses().index(address)


def _fd_names(monkeypatch):
    """Wrap the scanner's open so that each fd's file name is known; returns the map."""
    names: dict[int, str] = {}
    io = _io(monkeypatch)
    real_open = io._open

    def spy(path, flags, *args, **kw):
        fd = real_open(path, flags, *args, **kw)
        name = os.path.basename(os.fspath(path))
        # an attribute is reopened through /proc/self/fd/N once known to be a regular file
        names[fd] = names.get(int(name), name) if name.isdigit() else name
        return fd

    monkeypatch.setattr(io, "_open", spy)
    return names, io


GPU = "0000:01:00.0"


def test_device_unplugged_between_listing_and_open(machine, monkeypatch):
    import shutil

    io = _io(monkeypatch)
    real_open = io._open

    def unplug_then_open(path, flags, *args, **kw):
        if os.fspath(path) == GPU:
            target = os.path.realpath(os.path.join(machine, "sys/bus/pci/devices", GPU))
            shutil.rmtree(target)
        return real_open(path, flags, *args, **kw)

    monkeypatch.setattr(io, "_open", unplug_then_open)
    t = scan_sysfs(machine)
    i = _row(t, GPU)
    assert t.flags[i] & FLAG_INVALID and "cannot open" in t.problems[i]
    assert len(t) == len(fakesys.gex44())


def test_device_unplugged_while_reading(machine, monkeypatch):
    import shutil

    io = _io(monkeypatch)
    real_open = io._open

    def unplug_after_vendor(path, flags, *args, dir_fd=None, **kw):
        fd = real_open(path, flags, *args, dir_fd=dir_fd, **kw)
        if path == "vendor" and os.readlink(f"/proc/self/fd/{dir_fd}").endswith(GPU):
            shutil.rmtree(os.readlink(f"/proc/self/fd/{dir_fd}"))
        return fd

    monkeypatch.setattr(io, "_open", unplug_after_vendor)
    t = scan_sysfs(machine)
    i = _row(t, GPU)
    assert t.flags[i] & FLAG_INVALID and "device: missing" in t.problems[i]


@pytest.mark.parametrize("attr,code,flagged", [
    ("vendor", errno.EIO, True), ("class", errno.EACCES, True), ("device", errno.EIO, True),
    ("numa_node", errno.EIO, False), ("subsystem_vendor", errno.EACCES, False),
    ("revision", errno.EIO, False),
])
def test_read_errors(machine, monkeypatch, attr, code, flagged):
    names, io = _fd_names(monkeypatch)
    real_read = io._read

    def failing(fd, n):
        if names.get(fd) == attr:
            raise OSError(code, os.strerror(code))
        return real_read(fd, n)

    monkeypatch.setattr(io, "_read", failing)
    t = scan_sysfs(machine)
    assert len(t) == len(fakesys.gex44())
    i = _row(t, GPU)
    if flagged:
        assert t.flags[i] & FLAG_INVALID and os.strerror(code) in t.problems[i]
    else:
        assert not t.flags[i] & FLAG_INVALID
        col = {"numa_node": t.numa_node, "revision": t.revision}.get(attr)
        if col is not None:
            assert col[i] == -1
        else:
            assert not t.has_subsystem[i]


@pytest.mark.parametrize("code", [errno.EACCES, errno.EIO, errno.ENOENT])
def test_open_errors_on_attributes(machine, monkeypatch, code):
    io = _io(monkeypatch)
    real_open = io._open

    def refuse(path, flags, *args, **kw):
        if path == "class":
            raise OSError(code, os.strerror(code))
        return real_open(path, flags, *args, **kw)

    monkeypatch.setattr(io, "_open", refuse)
    t = scan_sysfs(machine)
    assert np.all(t.flags & FLAG_INVALID)
    assert all("class" in p for p in t.problems)


def test_device_gone_after_listing_no_mocks(machine):
    """An unplugged device as the kernel leaves it for a moment: the entry's target is gone."""
    import shutil

    shutil.rmtree(os.path.realpath(machine / "sys/bus/pci/devices" / GPU))
    t = scan_sysfs(machine)
    i = _row(t, GPU)
    assert t.flags[i] & FLAG_INVALID and len(t) == len(fakesys.gex44())


def test_symlink_loops(machine):
    devices = machine / "sys/bus/pci/devices"
    os.symlink("0000:09:00.0", devices / "0000:09:00.0")          # the entry itself
    os.symlink("0000:0a:00.0", devices / "0000:0b:00.0")          # a two-link cycle
    os.symlink("0000:0b:00.0", devices / "0000:0a:00.0")
    gpu = os.path.realpath(devices / GPU)
    os.unlink(os.path.join(gpu, "vendor"))
    os.symlink("vendor", os.path.join(gpu, "vendor"))             # an attribute
    os.symlink(".", os.path.join(gpu, "iommu_group_loop"))
    t0 = time.perf_counter()
    t = scan_sysfs(machine)
    assert time.perf_counter() - t0 < 5
    for addr in ("0000:09:00.0", "0000:0a:00.0", "0000:0b:00.0"):
        i = _row(t, addr)
        assert t.flags[i] & FLAG_INVALID and "cannot open" in t.problems[i]
    i = _row(t, GPU)
    assert t.flags[i] & FLAG_INVALID and "vendor" in t.problems[i]


def test_huge_attribute_files(machine):
    """1 MB in an attribute: read in a bounded chunk, flagged as malformed, fast."""
    gpu = os.path.realpath(machine / "sys/bus/pci/devices" / GPU)
    for name in ("vendor", "numa_node", "subsystem_vendor"):
        with open(os.path.join(gpu, name), "wb") as fh:
            fh.write(b"0x10de" + b" " * (1 << 20) + b"\n")
    t0 = time.perf_counter()
    t = scan_sysfs(machine)
    assert time.perf_counter() - t0 < 5
    i = _row(t, GPU)
    assert t.flags[i] & FLAG_INVALID and "malformed" in t.problems[i]
    assert t.numa_node[i] == -1 and not t.has_subsystem[i]


def test_attribute_is_a_directory_or_fifo(machine):
    gpu = os.path.realpath(machine / "sys/bus/pci/devices" / GPU)
    os.unlink(os.path.join(gpu, "device"))
    os.mkdir(os.path.join(gpu, "device"))
    os.unlink(os.path.join(gpu, "class"))
    os.mkfifo(os.path.join(gpu, "class"))  # a read would block forever were it opened blocking
    t = _scan_with_timeout(machine, 20)
    i = _row(t, GPU)
    assert t.flags[i] & FLAG_INVALID and "device" in t.problems[i]


def _scan_with_timeout(root, seconds):
    import threading

    box = {}

    def run():
        box["t"] = scan_sysfs(root)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(seconds)
    if th.is_alive():
        # unblock the reader so the thread ends, then fail
        for dirpath, _, files in os.walk(root):
            for f in files:
                p = os.path.join(dirpath, f)
                if os.path.exists(p) and not os.path.isfile(p):
                    try:
                        fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK)
                        os.close(fd)
                    except OSError:
                        pass
        th.join(5)
        pytest.fail(f"scan_sysfs blocked for more than {seconds}s")
    return box["t"]


def test_rebuild_never_writes_into_a_mapped_cache(ids, tmp_path, monkeypatch):
    """A process still reading a mapped cache keeps a whole, unchanged file.

    The cache is only ever replaced by rename, so an old mapping keeps its own
    inode (a truncation in place by someone else would SIGBUS a mapped reader:
    gpuclass never does that).
    """
    cdir = tmp_path / "cache"
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(cdir))
    PciDatabase.load(ids)
    (name,) = _caches(cdir)
    old = PciDatabase.load_compiled(cdir / name)  # mapped, checks still pending
    ino = os.stat(cdir / name).st_ino
    garbage = cdir / "g"
    garbage.write_bytes(b"GPCLSDB\x01" + os.urandom(200))
    os.replace(garbage, cdir / name)              # damaged by replacement, not in place
    _right(PciDatabase.load(ids))                  # rebuilt by rename
    assert os.stat(cdir / name).st_ino != ino
    _right(old)                                    # the old mapping still reads its intact inode
