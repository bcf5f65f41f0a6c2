"""Fuzz targets for every gpuclass parser: one function per input kind, taking bytes.

A target returns normally or raises one of ``ACCEPTED`` (gpuclass's own typed
errors).  Anything else is a bug: another exception, a hang (the runners bound
time), or an :class:`AssertionError` from a differential or invariant check
(the compiled core against its pure-Python twin, a fast path against the exact
path, a round trip).  The same registry drives the coverage-guided atheris
runner (``fuzz/run.py``) and the bounded hypothesis pass CI runs
(``tests/test_fuzz_targets.py``).

Adding a parser: write ``def fuzz_x(data: bytes) -> None`` and decorate it with
``@target("x", "what it feeds")`` (``requires="gpuclass.module"`` when the module
may not exist yet); put a few seed files in ``fuzz/corpus/x/`` (or let
``fuzz/make_seeds.py`` generate them from the test fixtures).

>>> sorted(TARGETS)[:4]
['audit', 'cache', 'cache_content', 'cpuinfo']
>>> TARGETS["modalias"].fn(b"pci:v000010DEd000027B0sv000010DEsd000016FAbc03sc00i00")
"""

from __future__ import annotations

import atexit
import bz2
import gzip
import importlib.util
import io
import lzma
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from typing import Callable

import numpy as np

import gpuclass
from gpuclass._native import twin
from gpuclass.errors import GpuclassError

try:
    from gpuclass import _core as _core_c
except ImportError:  # pragma: no cover - the no-build leg: the twin alone
    _core_c = None

__all__ = ["ACCEPTED", "TARGETS", "Target", "target", "available", "scratch_dir"]

# The only exceptions a target may raise: the library's own typed errors.
ACCEPTED: tuple[type[BaseException], ...] = (GpuclassError,)

CORES = [c for c in (_core_c, twin) if c is not None]


@dataclass(frozen=True)
class Target:
    name: str
    fn: Callable[[bytes], None]
    doc: str
    requires: str | None = None

    def available(self) -> bool:
        return self.requires is None or importlib.util.find_spec(self.requires) is not None


TARGETS: dict[str, Target] = {}


def target(name: str, doc: str, requires: str | None = None):
    def register(fn):
        TARGETS[name] = Target(name, fn, doc, requires)
        return fn
    return register


def available() -> list[str]:
    return sorted(n for n, t in TARGETS.items() if t.available())


_SCRATCH: str | None = None


def scratch_dir() -> str:
    """A private scratch directory for file-based targets, on tmpfs where there is one."""
    global _SCRATCH
    if _SCRATCH is None or not os.path.isdir(_SCRATCH):
        base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        _SCRATCH = tempfile.mkdtemp(prefix="gpuclass-fuzz-", dir=base)
        atexit.register(shutil.rmtree, _SCRATCH, True)
    return _SCRATCH


def _text(data: bytes) -> str:
    # what the file readers do (read_lspci, cpu_facts): undecodable bytes become U+FFFD
    return data.decode("utf-8", "replace")


def _outcome(fn, *args):
    """``("ok", value)`` or ``("err", type, message)`` for an accepted error (others propagate)."""
    try:
        return ("ok", fn(*args))
    except ACCEPTED as exc:
        return ("err", type(exc), str(exc))


def _same_arrays(a: dict, b: dict, what: str) -> None:
    assert a.keys() == b.keys(), f"{what}: keys {sorted(a)} != {sorted(b)}"
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        assert x.dtype == y.dtype and np.array_equal(x, y), f"{what}: {k} differs between cores"


# -- pci.ids ----------------------------------------------------------------------

def _both_parsers(data: bytes, strict: bool):
    outs = [_outcome(c.parse_pci_ids, data, strict, "f.ids") for c in CORES]
    first = outs[0]
    for other in outs[1:]:
        assert first[0] == other[0], f"strict={strict}: {first[:1]} vs {other[:1]} ({first[-1]!r:.200} / {other[-1]!r:.200})"
        if first[0] == "err":
            assert first[1:] == other[1:], f"strict={strict}: errors differ: {first[1:]} vs {other[1:]}"
        else:
            _same_arrays(first[1][0], other[1][0], f"strict={strict}")
            assert first[1][1] == other[1][1], f"strict={strict}: skipped lines differ"
    return first


def _probe_db(db, data: bytes) -> None:
    """Lookups with IDs taken from the input, through every API shape."""
    ids = np.frombuffer(data[: len(data) // 2 * 2][:64], dtype="<u2")
    v = ids[0::2][:16]
    d = ids[1::2][: len(v)]
    v = v[: len(d)]
    for i in range(len(v)):
        db.vendor_name(int(v[i]))
        db.device_name(int(v[i]), int(d[i]))
        db.subsystem_name(int(v[i]), int(d[i]), int(d[i]), int(v[i]))
        db.class_name(int(v[i]) & 0xFF, int(d[i]) & 0xFF)
        db.progif_name(int(v[i]) & 0xFF, int(d[i]) & 0xFF, int(v[i]) >> 8)
    rows = db.device_index(v, d)
    assert rows.dtype == np.int32 and len(rows) == len(v)
    db.names("device", rows)
    db.names("vendor", db.vendor_index(v))
    db.info()


@target("pciids", "pci.ids text: both tokenizers, strict and lenient, then lookups")
def fuzz_pciids(data: bytes) -> None:
    _both_parsers(data, True)
    lenient = _both_parsers(data, False)
    assert lenient[0] == "ok" or lenient[1] is not None
    if lenient[0] == "ok":
        db = gpuclass.PciDatabase.from_bytes(data, strict=False)
        # every line lenient mode dropped is reported with a reason
        assert all(s.line >= 1 and s.reason for s in db.skipped)
        _probe_db(db, data)
        # the tables index both cores' KeyIndex identically
        for table in ("vendor", "device", "subsys"):
            keys = db.arrays()[f"{table}_keys"]
            q = keys[: 8] if len(keys) else np.zeros(0, keys.dtype)
            res = [c.KeyIndex(keys).lookup(q) for c in CORES]
            assert all(np.array_equal(res[0], r) for r in res[1:]), f"{table}: KeyIndex differs"


_COMPRESSORS = (None, gzip.compress, lzma.compress, bz2.compress)


@target("pciids_compressed", "pci.ids through PciDatabase.load: raw archives, and text compressed then cut or flipped")
def fuzz_pciids_compressed(data: bytes) -> None:
    if not data:
        return
    mode, body = data[0] % 8, data[1:]
    if mode >= 4:
        # compress the text, then damage the archive at a position the input picks
        raw = _COMPRESSORS[mode - 4](body) if mode > 4 else body
        if body and mode > 4:
            at = body[0] * len(raw) // 256
            raw = raw[:at] if body[-1] & 1 else raw[:at] + bytes([raw[at] ^ 0x5A]) + raw[at + 1:]
    else:
        raw = _COMPRESSORS[mode](body) if mode else body
    path = os.path.join(scratch_dir(), "pci.ids.in")
    with open(path, "wb") as fh:
        fh.write(raw)
    for strict in (True, False):
        try:
            db = gpuclass.PciDatabase.load(path, strict=strict, cache=False)
        except ACCEPTED:
            continue
        db.counts()


# -- compiled cache -----------------------------------------------------------------

@target("cache", "compiled database cache files (PciDatabase.load_compiled)")
def fuzz_cache(data: bytes) -> None:
    path = os.path.join(scratch_dir(), "fuzz.gpcdb")
    with open(path, "wb") as fh:
        fh.write(data)
    for verify in (True, False):
        try:
            db = gpuclass.PciDatabase.load_compiled(path, verify=verify)
            db.counts()
            # a lazily checked cache must fail typed (CacheError) or answer
            _probe_db(db, data[-64:])
            db.verify()
        except ACCEPTED:
            pass


_SEED_IDS = (b"10de  NVIDIA Corporation\n\t27b0  AD104GL [RTX 4000 SFF Ada Generation]\n"
             b"\t\t10de 16fa  RTX 4000 SFF Ada Generation\n1234  \xc3\x9cn\xc3\xafc\xc3\xb6d\xc3\xa9 \xe2\x9c\x93\n"
             b"C 03  Display controller\n\t00  VGA compatible controller\n")


@target("cache_content", "a valid cache rewritten with hostile content and valid checksums: names, "
                         "offsets, keys, metadata, alignment")
def fuzz_cache_content(data: bytes) -> None:
    """Checksums only show a file is whole: whatever content it carries, a load is a
    CacheError or a database whose every name decodes and every lookup answers."""
    import json
    import zlib

    from gpuclass.db import cache as C

    base = gpuclass.PciDatabase.from_bytes(_SEED_IDS)
    arrays = {k: np.array(v) for k, v in base.arrays().items()}
    compact = C.compact_names(arrays)
    arrays.update(compact)
    meta = {"sha256": None, "source": "fuzz", "version": None, "date": None}
    ops = data[:64]
    for i in range(0, len(ops) - 2, 3):
        which, at, value = ops[i], ops[i + 1], ops[i + 2]
        name = C.ARRAYS[which % len(C.ARRAYS)]
        arr = arrays[name]
        if len(arr):
            arr = arr.copy()
            arr[at % len(arr)] = value % (1 << (8 * min(arr.dtype.itemsize, 1)))
            arrays[name] = arr
    if data[64:]:
        try:
            meta = json.loads(data[64:].decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            meta = {"source": data[64:200].decode("latin-1")}
    misalign = data[0] % 16 if data else 0
    table, parts, offset = [], [], 0
    for name in C.ARRAYS:
        raw = np.ascontiguousarray(arrays[name], dtype=C._EXPECTED_DTYPES[name]).tobytes()
        pad = (-offset) % 8 + (4 if misalign == C.ARRAYS.index(name) else 0)
        parts.append(b"\0" * pad)
        offset += pad
        table += [offset, len(raw) // C._EXPECTED_DTYPES[name].itemsize, zlib.crc32(raw)]
        parts.append(raw)
        offset += len(raw)
    try:
        meta_bytes = json.dumps(meta).encode()
    except (ValueError, TypeError, RecursionError):
        meta_bytes = b"{}"
    meta_bytes += b" " * ((-(C._CACHE_HEAD.size + C._CACHE_TABLE.size + len(meta_bytes))) % 8)
    path = os.path.join(scratch_dir(), "content.gpcdb")
    with open(path, "wb") as fh:
        fh.write(C._CACHE_HEAD.pack(C.CACHE_MAGIC, C.CACHE_FORMAT, len(meta_bytes), offset)
                 + C._CACHE_TABLE.pack(*table) + meta_bytes + b"".join(parts))
    try:
        db = gpuclass.PciDatabase.load_compiled(path, verify=True)
    except ACCEPTED:
        return
    for table_name in db.counts():
        n = db.counts()[table_name]
        if n:
            db.names(table_name, np.arange(n))  # every name decodes
    _probe_db(db, data[-64:])


# -- sysfs ----------------------------------------------------------------------------

def _sysfs_mod():
    from gpuclass.sources import sysfs
    return sysfs


@target("sysfs_values", "sysfs attribute values: hex IDs, class, revision, numa_node, SR-IOV counts, addresses")
def fuzz_sysfs_values(data: bytes) -> None:
    s = _sysfs_mod()
    # The value helpers are private and may move into the core (_sysfs.pxi, twin
    # _sysfs_py): whichever exist are checked; sysfs_tree covers the whole path anyway.
    from gpuclass._native import sysfs_py as _sysfs_py

    hex_value = getattr(s, "_hex_value", None) or getattr(_sysfs_py, "_hex_value", None)
    dec_value = getattr(s, "_dec_value", None) or getattr(_sysfs_py, "_dec_value", None)
    for width in (2, 4, 6):
        v = hex_value(data, width) if hex_value else None
        assert v is None or 0 <= v < 16 ** width, (width, v)
    v = dec_value(data) if dec_value else None
    assert v is None or -(10 ** 10) < v < 10 ** 10
    addr = s.parse_address(_text(data))
    if addr is not None:
        d, b, sl, f = addr
        assert 0 <= d <= 0xFFFFFFFF and 0 <= b <= 0xFF and 0 <= sl <= 0x1F and 0 <= f <= 7


_ATTRS = ("vendor", "device", "class", "subsystem_vendor", "subsystem_device", "revision",
          "numa_node", "sriov_totalvfs", "sriov_numvfs", "boot_vga", "driver", "iommu_group",
          "physfn", "modalias", "config")


def _safe_name(raw: bytes, fallback: str) -> str:
    name = raw.decode("utf-8", "replace").replace("/", "_").replace("\0", "_").strip()
    return name if name not in ("", ".", "..") else fallback


def build_tree(root: str, data: bytes) -> int:
    """Lay out ``<root>/sys/bus/pci/devices`` from a small line language; the number of entries.

    ``@NAME`` starts a device (``@NAME!loop``: its entry is a symlink loop,
    ``@NAME!out``: it points outside the root, ``@NAME!up``: a relative link that
    climbs out of the root, ``@NAME!back``: one that leaves the root and comes back
    in, ``@NAME!gone``: a dangling link, like a device unplugged after listing); in
    a device ``ATTR=VALUE`` writes VALUE and a newline, ``ATTR:VALUE`` writes VALUE
    alone, ``ATTR->TARGET`` makes a symlink, ``ATTR/`` a directory, ``ATTR|`` a
    FIFO, ``ATTR%`` a socket and ``ATTR*N`` N KiB of digits.
    """
    devices = os.path.join(root, "sys", "bus", "pci", "devices")
    real = os.path.join(root, "sys", "devices", "pci0000:00")
    os.makedirs(devices)
    os.makedirs(real)
    cur = None
    n = 0
    for line in data.split(b"\n")[:64]:
        if line.startswith(b"@"):
            name, _, how = line[1:].partition(b"!")
            name = _safe_name(name[:64], f"dev{n}")
            link = os.path.join(devices, name)
            if os.path.lexists(link):
                cur = None
                continue
            n += 1
            how = how.strip()
            if how == b"loop":
                os.symlink(name, link)
                cur = None
            elif how == b"out":
                os.symlink("/", link)
                cur = None
            elif how in (b"up", b"back"):
                cur = os.path.join(real, name)
                os.makedirs(cur, exist_ok=True)
                up = os.path.join(*[".."] * 6)
                inside = os.path.join(os.path.basename(root), "sys", "devices", "pci0000:00", name)
                os.symlink(up if how == b"up" else os.path.join(up, inside), link)
            elif how == b"gone":
                os.symlink(os.path.join(real, "gone-" + name), link)
                cur = None
            else:
                cur = os.path.join(real, name)
                os.makedirs(cur, exist_ok=True)
                os.symlink(os.path.join("..", "..", "..", "devices", "pci0000:00", name), link)
            continue
        if cur is None or not line:
            continue
        for sep in (b"->", b"=", b":", b"*", b"/", b"|", b"%"):
            key, found, value = line.partition(sep)
            if found:
                break
        else:
            continue
        key_s = _safe_name(key[:32], "x")
        if key[:2].isdigit() and int(key[:2]) < len(_ATTRS):  # compact form: 03=0x030000
            key_s = _ATTRS[int(key[:2])]
        path = os.path.join(cur, key_s)
        if os.path.lexists(path):
            continue
        if sep == b"->":
            os.symlink(value.decode("utf-8", "replace").replace("\0", "_") or ".", path)
        elif sep == b"/":
            os.mkdir(path)
        elif sep == b"|":
            os.mkfifo(path)  # opened, it would block a reader forever
        elif sep == b"%":
            os.mknod(path, 0o600 | stat.S_IFSOCK)
        elif sep == b"*":
            kib = min(int(value[:4]) if value[:4].isdigit() else 1, 1024)
            with open(path, "wb") as fh:
                fh.write(b"1" * (kib * 1024))
        else:
            with open(path, "wb") as fh:
                fh.write(value + b"\n" if sep == b"=" else value)
    return n


def _classify_both(table) -> None:
    from gpuclass.classify import classify_table
    results = [classify_table(table, core=c) for c in CORES]
    for r in results[1:]:
        for name in ("status", "card", "slices"):
            a, b = getattr(results[0], name), getattr(r, name)
            assert np.array_equal(a, b), f"classify: {name} differs between cores"


@target("sysfs_tree", "a whole sysfs tree on tmpfs: odd entries, links, loops, huge and missing attributes")
def fuzz_sysfs_tree(data: bytes) -> None:
    from gpuclass.devices import FLAG_INVALID
    from gpuclass.sources.sysfs import scan_sysfs

    root = os.path.join(scratch_dir(), "root")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    n = build_tree(root, data)
    t = scan_sysfs(root)
    # one row per entry: a bad device is flagged, never dropped
    assert len(t) == n, (len(t), n)
    # the compiled reader (openat2, and its own walk) and the twin: the same table, byte for byte
    s = _sysfs_mod()
    saved = (s._core, s.Root)
    try:
        for core, rel in ((twin, "keep"), (_core_c, None)):
            if core is None:
                continue
            s._core = core
            if rel is None:
                s.Root = lambda chain, _rel, real=saved[1]: real(chain, None)
            other = scan_sysfs(root)
            assert t.equals(other), f"sysfs: {core.__name__} differs: {t.diff(other)[:3]}"
    finally:
        s._core, s.Root = saved
    flagged = (t.flags & FLAG_INVALID) != 0
    has_problem = np.array([p is not None for p in t.problems], dtype=bool) if n else np.zeros(0, bool)
    assert np.array_equal(flagged, has_problem & flagged), "flagged row without a reason"
    assert np.all(t.vendor <= 0xFFFF) and np.all(t.class_code <= 0xFFFFFF)
    _classify_both(t)


# -- lspci ----------------------------------------------------------------------------

_FORMATS = (None, "mm", "vmm", "n")


@target("lspci", "lspci text in every format (-nnmm/-nmm, -vmm -nn, -n/-nn [-v] [-k]); fast vs exact -mm path")
def fuzz_lspci(data: bytes) -> None:
    from gpuclass.sources import lspci

    if not data:
        return
    fmt, text = _FORMATS[data[0] % 4], _text(data[1:])
    t = lspci.parse_lspci(text, fmt)
    # every row is a device line or a flagged one: noise never takes the lines after it
    nonblank = sum(1 for line in text.split("\n") if line.strip())
    assert len(t) <= nonblank, f"{len(t)} rows for {nonblank} lines"
    if fmt == "mm":
        # the column-wise fast path must agree with the line-by-line regex path
        fast = getattr(lspci, "_mm_fast", None)
        if fast is not None:
            lspci._mm_fast = lambda *a: None
            try:
                exact = lspci.parse_lspci_mm(text, "lspci")
            finally:
                lspci._mm_fast = fast
            assert t.equals(exact, text=True), f"-mm fast path differs: {t.diff(exact)[:3]}"
        nonblank = sum(1 for line in text.split("\n") if line.strip())
        assert len(t) == nonblank, f"{len(t)} rows for {nonblank} lines"
    assert np.all(t.vendor <= 0xFFFF) and np.all(t.class_code <= 0xFFFFFF)
    _classify_both(t)
    # what parsed cleanly writes back as lspci prints it and reads back the same
    # (names holding a quote are ambiguous in -mm text, for lspci itself too: skipped)
    good = t.take(np.flatnonzero(~t.invalid_mask() & t.has_address_mask()))
    quoted = any('"' in (x or "") for col in ("class_text", "vendor_text", "device_text",
                                              "subvendor_text", "subdevice_text")
                 for x in (getattr(good, col, None) if getattr(good, col, None) is not None else ()))
    if len(good) and not quoted:
        again = lspci.parse_lspci(good.to_lspci_text("-nnmm -D"), "mm")
        for col in ("domain", "bus", "slot", "function", "vendor", "device", "class_code"):
            assert np.array_equal(getattr(good, col), getattr(again, col)), f"round trip: {col}"


# -- modalias, cpuinfo ------------------------------------------------------------------

@target("modalias", "modalias strings, one per line, optionally 'ADDRESS MODALIAS'")
def fuzz_modalias(data: bytes) -> None:
    from gpuclass.sources.modalias import parse_modaliases

    items = []
    for line in _text(data).split("\n")[:256]:
        addr, sep, rest = line.partition(" ")
        items.append((addr, rest) if sep and not line.startswith("pci:") else line)
    t = parse_modaliases(items)
    assert len(t) == len(items)
    ok = ~t.invalid_mask()
    assert np.all(t.vendor[ok] <= 0xFFFF)
    _classify_both(t)


@target("cpuinfo", "/proc/cpuinfo text")
def fuzz_cpuinfo(data: bytes) -> None:
    from gpuclass.sources.cpu import parse_cpuinfo

    facts = parse_cpuinfo(_text(data))
    d = facts.to_dict()
    assert d["hardware_virtualization"] == ((facts.vmx or facts.svm) and not facts.hypervisor)


# -- policy -----------------------------------------------------------------------------

_POLICY_FORMATS = ("json", "yaml", "toml")


@target("policy", "allowlist policy documents in JSON, YAML and TOML; round trip; compiled tables")
def fuzz_policy(data: bytes) -> None:
    from gpuclass.classify import classify, compile_policy
    from gpuclass.policy import Policy

    if not data:
        return
    fmt = _POLICY_FORMATS[data[0] % 3]
    p = Policy.loads(data[1:], fmt)
    for out in _POLICY_FORMATS:
        again = Policy.loads(p.dumps(out), out)
        assert again == p, f"{fmt} -> {out} round trip changed the policy"
    compiled = compile_policy(p)
    rules = [(r.vendor, r.device) for c in p.cards for r in c.match][:32]
    if rules:
        v, d = (np.array(x, dtype=np.uint16) for x in zip(*rules))
        cls = np.full(len(v), 0x030000, dtype=np.uint32)
        res = [classify(v, d, class_code=cls, policy=compiled, core=c) for c in CORES]
        for r in res[1:]:
            assert np.array_equal(r.status, res[0].status) and np.array_equal(r.card, res[0].card)


# -- Kubernetes objects -----------------------------------------------------------------

@target("pod", "pods, workloads and pod specs as YAML/JSON text (validate_pod)")
def fuzz_pod(data: bytes) -> None:
    from gpuclass.k8s.pods import validate_pod

    v = validate_pod(_text(data), source="fuzz")
    assert v.valid == (not v.errors)
    assert v.slices >= 0
    v.model_dump_json()


@target("node", "Node objects as YAML/JSON text (diagnose)")
def fuzz_node(data: bytes) -> None:
    from gpuclass.k8s.diagnose import diagnose

    d = diagnose(_text(data), source="fuzz")
    assert d.findings
    d.model_dump_json()


def _depth(obj, limit: int) -> int:
    """Nesting depth of plain data, counted up to ``limit + 1`` (iteratively)."""
    best, stack = 0, [(obj, 0)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, (dict, list)):
            d += 1
            best = max(best, d)
            if d > limit:
                return d
            stack.extend((v, d) for v in (o.values() if isinstance(o, dict) else o))
    return best


@target("documents", "JSON, NDJSON and YAML documents through the bounded readers (DocumentError is "
                     "their documented error); YAML against PyYAML's safe loader")
def fuzz_documents(data: bytes) -> None:
    import yaml

    from gpuclass.documents import (
        MAX_DEPTH,
        DocumentError,
        default_yaml_loader,
        iter_json_lines,
        iter_yaml,
        load_json,
    )

    text = _text(data)
    try:
        load_json(data)
    except DocumentError:
        pass
    try:
        lines = list(iter_json_lines(data))
    except DocumentError:  # not UTF-8 at all
        lines = []
    for doc in lines:
        assert isinstance(doc, DocumentError) or _depth(doc, MAX_DEPTH) <= MAX_DEPTH
    docs = list(iter_yaml(text))
    for doc in docs:
        assert isinstance(doc, DocumentError) or _depth(doc, MAX_DEPTH) <= MAX_DEPTH
    if docs and not any(isinstance(d, DocumentError) for d in docs):
        try:
            ref = list(yaml.load_all(text, Loader=default_yaml_loader()))
        except (yaml.YAMLError, ValueError, TypeError, RecursionError, OverflowError):
            return
        assert _same_data(docs, ref), "documents: differs from PyYAML's safe loader"


def _same_data(a, b) -> bool:
    """Equal as data (NaN equal to NaN)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_data(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_data(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@target("manifest_file", "manifest files through read_documents: shapes, bounds, one error per bad document")
def fuzz_manifest_file(data: bytes) -> None:
    from gpuclass.errors import ManifestError
    from gpuclass.k8s.objects import check_shape, read_documents

    path = os.path.join(scratch_dir(), "manifest.yaml")
    with open(path, "wb") as fh:
        fh.write(data)
    kept, _ = read_documents(path, keep_errors=True)
    for doc in kept:
        assert isinstance(doc, ManifestError) or check_shape(doc) is None
    try:
        docs, _ = read_documents(path)
    except ManifestError:
        assert any(isinstance(d, ManifestError) for d in kept)
        return
    assert docs == kept, "manifest_file: keep_errors changed good documents"


@target("quantity", "Kubernetes quantities (ValueError is this helper's documented error)")
def fuzz_quantity(data: bytes) -> None:
    from gpuclass.k8s.objects import parse_quantity

    try:
        parse_quantity(_text(data))
    except ValueError:
        pass


# -- core kernels -------------------------------------------------------------------------

@target("match", "the allowlist matcher and rollup: compiled kernels against the twin on raw ID rows")
def fuzz_match(data: bytes) -> None:
    from gpuclass.classify import compile_policy

    rows = np.frombuffer(data[: len(data) // 12 * 12], dtype=np.uint8).reshape(-1, 12)
    if not len(rows):
        return
    u16 = rows[:, :8].copy().view("<u2")
    vendor, device, sv, sd = (u16[:, i].copy() for i in range(4))
    # bias towards the interesting vendor and GPU classes
    vendor = np.where(rows[:, 11] & 1, np.uint16(0x10DE), vendor)
    cls = (rows[:, 8].astype(np.uint32) << 16) | (rows[:, 9].astype(np.uint32) << 8) | rows[:, 10]
    cls = np.where(rows[:, 11] & 2, np.uint32(0x030000) | (cls & 0x2FF), cls)
    has_sub = (rows[:, 11] & 4) == 0
    flags = ((rows[:, 11] >> 3) & 0xF).astype(np.uint32)
    bus = (rows[:, 10] & 3).astype(np.uint8)
    slot = (rows[:, 9] & 3).astype(np.uint8)
    domain = np.zeros(len(rows), dtype=np.uint32)
    group = (rows[:, 11] >> 7).astype(np.int64)
    tables = compile_policy(None).tables
    outs = []
    for c in CORES:
        for slots in (False, True):
            extra = dict(group=group, domain=domain, bus=bus, slot=slot) if slots else {}
            outs.append(_outcome(c.match_devices, tables, vendor, device, sv, sd, cls, has_sub, flags,
                                 *(extra.get(k) for k in ("group", "domain", "bus", "slot"))))
    half = len(outs) // len(CORES)
    for i, o in enumerate(outs[half:]):
        ref = outs[i % half]
        assert ref[0] == o[0], "match: one core raised"
        if o[0] == "ok":
            for a, b in zip(ref[1], o[1]):
                assert a.dtype == b.dtype and np.array_equal(a, b), "match: cores differ"
    if outs[0][0] == "ok":
        st, card, sl = outs[0][1]
        ru = [_outcome(c.rollup, st, card, sl, group, 2) for c in CORES]
        for r in ru[1:]:
            assert r[0] == ru[0][0]
            if r[0] == "ok":
                assert all(np.array_equal(a, b) for a, b in zip(np.atleast_1d(ru[0][1]), np.atleast_1d(r[1])))


_KEY_DTYPES = (np.uint8, np.uint16, np.uint32, np.uint64, np.int64, np.int32, np.float64)


@target("keyindex", "KeyIndex construction and lookups on raw key arrays of every dtype")
def fuzz_keyindex(data: bytes) -> None:
    if len(data) < 2:
        return
    dt = np.dtype(_KEY_DTYPES[data[0] % len(_KEY_DTYPES)])
    body = data[2:]
    body = body[: len(body) // dt.itemsize * dt.itemsize]
    arr = np.frombuffer(body, dtype=dt)
    keys = np.unique(arr) if data[1] & 1 else arr
    queries = arr[::-1]
    qdt = np.dtype(_KEY_DTYPES[(data[1] >> 1) % len(_KEY_DTYPES)])
    with np.errstate(all="ignore"):
        q2 = queries.astype(qdt) if not (qdt.kind in "iu" and dt.kind == "f" and not np.all(np.isfinite(queries))) else queries
    outs = []
    for c in CORES:
        def run(c=c):
            idx = c.KeyIndex(keys)
            return (len(idx), idx.lookup(queries).tolist(), idx.lookup(q2).tolist(),
                    [idx.find(int(k)) for k in keys[:4].tolist()] if keys.dtype.kind in "iu" else [])
        outs.append(_outcome(run))
    for o in outs[1:]:
        assert o[0] == outs[0][0], f"KeyIndex: {outs[0][:2]} vs {o[:2]}"
        if o[0] == "ok":
            assert o[1] == outs[0][1], "KeyIndex: cores differ"
        else:
            assert o[1] == outs[0][1], f"KeyIndex: error types differ {outs[0][1:]} {o[1:]}"


# -- audit inputs (issue 5) -----------------------------------------------------------------

_AUDIT_KINDS = ("feed", "ndjson", "csv", "table-csv", "lspci")


@target("audit", "fleet audit inputs: auction feed JSON, NDJSON, text CSV, device CSV, lspci dumps",
        requires="gpuclass.audit")
def fuzz_audit(data: bytes) -> None:
    from gpuclass import audit

    if not data:
        return
    kind = _AUDIT_KINDS[data[0] % len(_AUDIT_KINDS)]
    path = os.path.join(scratch_dir(), "audit.in")
    with open(path, "wb") as fh:
        fh.write(data[1:])
    reports = list(audit.audit_paths([path], kind=kind))
    if hasattr(audit, "write_reports"):
        for fmt in getattr(audit, "OUTPUT_FORMATS", ("json",)):
            out = io.StringIO()
            try:
                audit.write_reports(reports, fmt, out)
            except TypeError:  # the writer's signature is issue 5's to settle
                break


# -- audit collections, compressed inputs and the text matcher ---------------------------

_CONTAINERS = ("fleet.tar", "fleet.tar.gz", "fleet.zip", "feed.json.gz", "sb-120000.xz", "dumps")


@target("audit_archive", "audit inputs inside containers: tar (plain, gzip), zip, gzip/xz streams, a directory",
        requires="gpuclass.audit")
def fuzz_audit_archive(data: bytes) -> None:
    """The first byte picks the container; the rest is its raw bytes, or (for a directory)
    files split at NUL bytes.  Every member is a report or a skipped input, or the run
    stops with a typed error; nothing else escapes."""
    from gpuclass import audit

    if not data:
        return
    name = _CONTAINERS[data[0] % len(_CONTAINERS)]
    base = os.path.join(scratch_dir(), "archive")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    path = os.path.join(base, name)
    if name == "dumps":
        os.makedirs(path)
        for i, part in enumerate(data[1:].split(b"\0")[:16]):
            sub = os.path.join(path, f"host{i}")
            os.makedirs(sub)
            with open(os.path.join(sub, "lspci.txt" if i % 2 else f"h{i}.json"), "wb") as fh:
                fh.write(part)
    else:
        with open(path, "wb") as fh:
            fh.write(data[1:])
    run = audit.audit_paths([path], limits=audit.Limits(max_expanded=64 << 20))
    reports = list(run)
    for r in reports:
        assert r.rows >= 1 and r.slices >= 0 and r.supported_cards >= 0
    for fmt in audit.OUTPUT_FORMATS:
        audit.write_reports(reports, fmt, io.StringIO())


@target("textmatch", "listing text through the free-text matcher: counts, asides, batch vs single",
        requires="ahocorasick")
def fuzz_textmatch(data: bytes) -> None:
    from gpuclass.textmatch import default_matcher

    m = default_matcher()
    texts = _text(data).split("\n")[:64]
    batch = m.find_many(texts)
    assert (batch.count >= 1).all()
    for i, t in enumerate(texts[:8]):
        assert batch.mentions(i) == m.find(t), f"batch and single differ on {t!r}"
    # an absence aside never adds a card
    base = m.find_many([" ".join(texts)]).supported_cards().sum()
    assert m.find_many([" ".join(texts) + " (not included)"]).supported_cards().sum() <= base
