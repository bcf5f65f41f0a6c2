"""Debian's libpci3 through ctypes: the reference for names (tests and benchmarks).

Only the name functions are used (no device access, so no ``pci_init``):
``pci_set_name_list_path`` picks the file, ``pci_lookup_name`` answers with
``PCI_LOOKUP_NO_NUMBERS`` (None when unknown) and ``PCI_LOOKUP_NO_HWDB`` (the
file alone, never udev's hwdb).  Its messages (a rejected line: reason and line
number) are collected in ``messages``.

Below the class: what ``tools/record_references.py`` records and the live tests
ask again (``record_bundled``: every entry of a pci.ids; ``record_probe``: a
small text's verdict and names; ``PROBES``: those texts).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import random
import re
from pathlib import Path

VENDOR, DEVICE, CLASS, SUBSYSTEM, PROGIF = 1, 2, 4, 8, 16
NO_NUMBERS, NO_HWDB = 0x20000, 0x800000


def find_libpci() -> str | None:
    for cand in ("libpci.so.3", ctypes.util.find_library("pci")):
        if not cand:
            continue
        try:
            ctypes.CDLL(cand)
        except OSError:
            continue
        return cand
    return None


_MSG = ctypes.CFUNCTYPE(None, ctypes.c_char_p)
# libpci's message hooks are printf-like (``void (*)(char *fmt, ...)``); on the
# x86-64 and AArch64 Linux ABIs the first variadic arguments travel in the same
# registers as fixed ones, so a hook declared with four words reads them.
_MSG_ARGS = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


def _format(fmt: bytes | None, *words: int | None) -> str:
    """A libpci message with its %s / %d arguments filled in."""
    text = (fmt or b"").decode("utf-8", "replace")
    it = iter(words)

    def one(m: re.Match) -> str:
        if m.group(0) == "%%":
            return "%"
        word = next(it, None) or 0
        if m.group(1) == "s":
            return ctypes.string_at(word).decode("utf-8", "replace") if word else "(null)"
        return str(ctypes.c_int(word & 0xFFFFFFFF).value)

    return re.sub(r"%(?:[-+ #0-9.]*)(?:l?)([sdiux%])", one, text).rstrip("\n")


class _AccessHead(ctypes.Structure):
    """The public head of ``struct pci_access`` (pci.h, stable across libpci 3.x)."""

    _fields_ = [
        ("method", ctypes.c_uint),
        ("writeable", ctypes.c_int),
        ("buscentric", ctypes.c_int),
        ("id_file_name", ctypes.c_char_p),
        ("free_id_name", ctypes.c_int),
        ("numeric_ids", ctypes.c_int),
        ("id_lookup_mode", ctypes.c_uint),
        ("debugging", ctypes.c_int),
        ("error", _MSG),
        ("warning", _MSG),
        ("debug", _MSG),
    ]


class LibPci:
    """Names from one pci.ids file, as libpci gives them."""

    def __init__(self, path: str | os.PathLike, soname: str | None = None) -> None:
        soname = soname or find_libpci()
        if soname is None:
            raise OSError("libpci.so.3 not found")
        lib = ctypes.CDLL(soname)
        lib.pci_alloc.restype = ctypes.c_void_p
        lib.pci_set_name_list_path.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        lib.pci_load_name_list.argtypes = [ctypes.c_void_p]
        lib.pci_load_name_list.restype = ctypes.c_int
        lib.pci_free_name_list.argtypes = [ctypes.c_void_p]
        lib.pci_lookup_name.restype = ctypes.c_char_p
        self._lib = lib
        self._path = ctypes.create_string_buffer(os.fsencode(os.fspath(path)))  # kept alive: libpci keeps the pointer
        self._a = lib.pci_alloc()
        lib.pci_set_name_list_path(self._a, self._path, 0)
        # Without pci_init the message hooks are NULL and the lookup mode asks
        # for the DNS cache; set quiet hooks and a plain file lookup instead.
        head = _AccessHead.from_address(self._a)
        self._hooks = (_MSG_ARGS(self._message), _MSG_ARGS(self._message), _MSG(lambda msg: None))
        head.error = ctypes.cast(self._hooks[0], _MSG)
        head.warning = ctypes.cast(self._hooks[1], _MSG)
        head.debug = self._hooks[2]
        head.id_lookup_mode = 0
        self.messages: list[str] = []
        self._buf = ctypes.create_string_buffer(1024)

    def _message(self, fmt, a, b, c) -> None:
        self.messages.append(_format(fmt, a, b, c))

    def load(self) -> None:
        """Parse the file now (libpci otherwise parses on the first lookup)."""
        if not self._lib.pci_load_name_list(self._a):
            raise OSError("libpci could not open the name list")

    def lookup_bytes(self, flags: int, *args: int) -> bytes | None:
        """libpci's answer as it gives it (bytes), None when it has no name."""
        return self._lib.pci_lookup_name(ctypes.c_void_p(self._a), self._buf, ctypes.c_int(1024),
                                         ctypes.c_int(flags | NO_NUMBERS | NO_HWDB),
                                         *[ctypes.c_int(a) for a in args])

    def _lookup(self, flags: int, *args: int) -> str | None:
        res = self.lookup_bytes(flags, *args)
        # libpci's bytes as a UTF-8 reader of its output shows them
        return None if res is None else res.decode("utf-8", "replace")

    def vendor(self, v: int) -> str | None:
        return self._lookup(VENDOR, v)

    def device(self, v: int, d: int) -> str | None:
        return self._lookup(DEVICE, v, d)

    def subvendor(self, sv: int) -> str | None:
        return self._lookup(SUBSYSTEM | VENDOR, sv)

    def subsystem(self, v: int, d: int, sv: int, sd: int) -> str | None:
        return self._lookup(SUBSYSTEM | DEVICE, v, d, sv, sd)

    def cls(self, base: int, sub: int) -> str | None:
        return self._lookup(CLASS, (base << 8) | sub)

    def progif(self, base: int, sub: int, progif: int) -> str | None:
        return self._lookup(PROGIF, (base << 8) | sub, progif)

    def close(self) -> None:
        if self._a:
            self._lib.pci_free_name_list(self._a)


# -- recording: what tools/record_references.py stores and the live tests ask again ----------

SEED = 20260822

# Small pci.ids texts: what libpci accepts or rejects (and where), and what it names.
PROBES: dict[str, bytes] = {
    "generic-and-zero-ids": (
        b"0000  Zero vendor\n\t0000  Zero device\n\t\t1af4 1100  zero-vendor specific\n"
        b"1af4  Red Hat, Inc.\n\t1041  Virtio network device\n\t\t1af4 1100  specific wins over generic\n"
        b"10de  NVIDIA\n\t0000  device zero of NVIDIA\n\t\t1af4 1100  never consulted: device 0000\n"
        b"S 1af4\n\t1100  QEMU Virtual Machine\n\t0000  generic zero\n"),
    "latin1-names": (
        b"10de  NVIDIA Gr\xf6\xdfe\n\t1b80  Dr\xe4ger GP104\n\t\t10de 0001  Caf\xe9 card\n"
        b"1af4  Red Hat\nS 1af4\n\t1100  Gen\xe9ric\nC 03  Display \xe9\n\t00  VGA \xe0\n\t\t01  \xa7 progif\n"),
    "invalid-utf8-sequences": b"10de  NVIDIA\n\t1b80  \xff\xfe bad\n\t1b06  \xed\xa0\x80 surrogate\n\t0001  ok \xc3\xa9\n",
    "progif-under-class": b"C 03  Display\n\t\t01  under the class\n\t00  VGA\n\t\t00  VGA progif\n\t02  3D\n",
    "progif-under-class-then-subclass-00-duplicate": b"C 03  Display\n\t\t01  a\n\t00  VGA\n\t\t01  b\n",
    "progif-under-class-after-subclass": b"C 03  D\n\t00  V\n\t\t01  p\nC 01  M\n\t\t05  direct\n",
    "uppercase-and-single-space": b"10DE NVIDIA\n\t1B80 GP104\n\t\t10DE 0001 sub\nC 03 Display\n\t00 VGA\n",
    "tabs-as-separators": b"10de\tNVIDIA\n\t1b80\tGP104\n\t\t10de\t0001\tsub\n",
    "trailing-blanks": b"10de  NVIDIA  \n\t1b80  GP104\t\n\t1b06  Ti \t\n",
    "cr-line-ends": b"10de  NVIDIA\r\n\t1b80  GP104\r\n\t1b06  mid\rdle\n",
    "comments-and-blank-lines": b"# c\n\n10de  NVIDIA\n\t# indented comment\n   \n\t1b80  GP104\n",
    "unknown-block": b"X 00  reserved\n\tanything  goes\n\t\tdeeper\n10de  NVIDIA\n\t1b80  GP104\n",
    "bad-vendor-hex": b"10dX  NVIDIA\n",
    "short-vendor": b"10d  NVIDIA\n",
    "long-vendor": b"10de5  NVIDIA\n",
    "vendor-without-name": b"10de\n",
    "vendor-blank-name": b"10de   \n",
    "short-device": b"10de  NVIDIA\n\t1b8  short\n",
    "device-without-name": b"10de  NVIDIA\n\t1b80\n",
    "three-tabs": b"10de  NVIDIA\n\t1b80  X\n\t\t\t0001  deep\n",
    "orphan-device": b"\t1b80  orphan device\n",
    "orphan-subsystem": b"\t\t10de 0001  orphan subsystem\n",
    "subsystem-under-vendor": b"10de  NVIDIA\n\t\t10de 0001  no device yet\n",
    "glued-subsystem": b"10de  NVIDIA\n\t1b80  X\n\t\t10de0001  glued\n",
    "short-subdevice": b"10de  NVIDIA\n\t1b80  X\n\t\t10de 001  short\n",
    "subsystem-without-name": b"10de  NVIDIA\n\t1b80  X\n\t\t10de 0001\n",
    "subsystem-without-subdevice": b"10de  NVIDIA\n\t1b80  X\n\t\t10de\n",
    "short-class": b"C 3  Display\n",
    "bad-class-hex": b"C 0g  Display\n",
    "class-without-name": b"C 03\n",
    "short-subclass": b"C 03  Display\n\t0  x\n",
    "wide-subclass": b"C 03  Display\n\t0300  x\n",
    "bad-progif-hex": b"C 03  Display\n\t00  VGA\n\t\tzz  x\n",
    "progif-without-name": b"C 03  Display\n\t00  VGA\n\t\t01\n",
    "nul-byte": b"10de  NV\x00IDIA\n\t1b80  after\n",
    "line-of-1022-bytes": b"10de  " + b"n" * 1016 + b"\n",
    "line-of-1023-bytes": b"10de  " + b"n" * 1017 + b"\n",
    "last-line-of-1023-bytes-without-newline": b"10de  " + b"n" * 1017,
    "generic-block-unknown-vendor": b"S 1af4\n",
    "generic-header-with-name": b"1af4  Red Hat\nS 1af4  named\n",
    "generic-header-short": b"1af4  Red Hat\nS 1af\n",
    "generic-block-too-deep": b"1af4  Red Hat\nS 1af4\n\t1100  X\n\t\t0001 0002  too deep\n",
    "duplicate-vendor": b"10de  NVIDIA\n10de  NVIDIA again\n",
    "duplicate-device": b"10de  N\n\t1b80  a\n\t1b80  b\n",
    "duplicate-subsystem": b"10de  N\n\t1b80  a\n\t\t10de 0001  x\n\t\t10de 0001  y\n",
    "duplicate-class": b"C 03  D\n\t00  V\nC 03  again\n",
    "duplicate-generic": b"1af4  R\nS 1af4\n\t1100  a\n\t1100  b\n",
    "device-after-generic-block": b"1af4  R\nS 1af4\n\t1100  gen\n10de  N\n\t1b80  d\n",
}

# What every accepted probe is asked (vendor, device, subsystem, class, prog-if).
_VENDORS = (0x0000, 0x10DE, 0x1AF4, 0x8086)
_DEVICES = (0x0000, 0x1B80, 0x1B06, 0x1041, 0x0001)
_SUBS = ((0x10DE, 0x0001), (0x1AF4, 0x1100), (0x1AF4, 0x0000), (0x1234, 0x5678))
_CLASSES = ((0x03, 0x00), (0x03, 0x01), (0x03, 0x02), (0x03, 0x80), (0x03, 0x7F), (0x01, 0x00), (0x01, 0x01))
_PROGIFS = (0x00, 0x01, 0x05, 0x82, 0x8A)


def _text(raw: bytes | None) -> str | None:
    """libpci's bytes as JSON-safe text, losslessly (see recorded.as_shown)."""
    return None if raw is None else raw.decode("utf-8", "surrogateescape")


class Names(LibPci):
    """LibPci answering with its raw bytes (kept as surrogate-escaped text)."""

    def _lookup(self, flags: int, *args: int):
        return _text(self.lookup_bytes(flags, *args))


def _keys(db, table: str) -> list[int]:
    return [int(k) for k in db.arrays()[f"{table}_keys"]]


def record_bundled(ref: Names, db) -> dict:
    vendors, devices, subsys = _keys(db, "vendor"), _keys(db, "device"), _keys(db, "subsys")
    subclasses = _keys(db, "subclass")
    out: dict = {
        "vendor": {"keys": vendors, "names": [ref.vendor(v) for v in vendors]},
        "subvendor": {"keys": vendors, "names": [ref.subvendor(v) for v in vendors]},
        "device": {"keys": devices, "names": [ref.device(k >> 16, k & 0xFFFF) for k in devices]},
        # a subsystem equal to its device falls back to the device's name
        "subsystem_self": {"keys": devices,
                           "names": [ref.subsystem(k >> 16, k & 0xFFFF, k >> 16, k & 0xFFFF) for k in devices]},
        "subsystem": {"keys": subsys,
                      "names": [ref.subsystem(k >> 48, (k >> 32) & 0xFFFF, (k >> 16) & 0xFFFF, k & 0xFFFF)
                                for k in subsys]},
        # every (class, subclass): libpci's answer with numbers off, fallbacks included
        "class": [[ref.cls(base, sub) for sub in range(256)] for base in range(256)],
        "progif": {"keys": subclasses,
                   "names": [[ref.progif(k >> 8, k & 0xFF, p) for p in range(256)] for k in subclasses]},
    }
    rng = random.Random(SEED)
    ids = []
    for _ in range(4000):
        if rng.random() < 0.5:  # a known device with a random subsystem
            key = rng.choice(devices)
            v, d = key >> 16, key & 0xFFFF
        else:
            v, d = rng.randrange(0x10000), rng.randrange(0x10000)
        sv, sd = rng.choice([(v, d), (rng.randrange(0x10000), rng.randrange(0x10000)),
                             (0x10DE, rng.randrange(0x10000)), (0, 0), (v, 0)])
        ids.append([v, d, sv, sd])
    out["unknown"] = {
        "ids": ids,
        "vendor": [ref.vendor(v) for v, _, _, _ in ids],
        "device": [ref.device(v, d) for v, d, _, _ in ids],
        "subvendor": [ref.subvendor(sv) for _, _, sv, _ in ids],
        "subsystem": [ref.subsystem(*i) for i in ids],
    }
    return out


def record_probe(text: bytes, tmp: Path) -> dict:
    path = tmp / "probe.ids"
    path.write_bytes(text)
    ref = Names(path)
    try:
        ref.load()
    except OSError:
        pass  # libpci gives up on a file it rejects: the message below says where and why
    error = None
    for msg in ref.messages:
        m = re.match(r"(.*) at .*, line (\d+)\s*$", msg)
        error = {"reason": m.group(1), "line": int(m.group(2))} if m else {"reason": msg, "line": None}
        break
    lookups = []
    for v in _VENDORS:
        lookups.append(["vendor", [v], ref.vendor(v)])
        for d in _DEVICES:
            lookups.append(["device", [v, d], ref.device(v, d)])
            for sv, sd in (*_SUBS, (v, d)):
                lookups.append(["subsystem", [v, d, sv, sd], ref.subsystem(v, d, sv, sd)])
    for base, sub in _CLASSES:
        lookups.append(["class", [base, sub], ref.cls(base, sub)])
        for p in _PROGIFS:
            lookups.append(["progif", [base, sub, p], ref.progif(base, sub, p)])
    ref.close()
    return {"text": _text(text), "error": error, "lookups": lookups}


