"""Debian's libpci3 through ctypes: the reference for names (tests and benchmarks).

Only the name functions are used (no device access, so no ``pci_init``):
``pci_set_name_list_path`` picks the file, ``pci_lookup_name`` answers with
``PCI_LOOKUP_NO_NUMBERS`` (None when unknown) and ``PCI_LOOKUP_NO_HWDB`` (the
file alone, never udev's hwdb).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

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
        self._hooks = (_MSG(self._message), _MSG(lambda msg: None), _MSG(lambda msg: None))
        head.error, head.warning, head.debug = self._hooks
        head.id_lookup_mode = 0
        self.messages: list[str] = []
        self._buf = ctypes.create_string_buffer(1024)

    def _message(self, msg) -> None:
        self.messages.append((msg or b"").decode("utf-8", "replace"))

    def load(self) -> None:
        """Parse the file now (libpci otherwise parses on the first lookup)."""
        if not self._lib.pci_load_name_list(self._a):
            raise OSError("libpci could not open the name list")

    def _lookup(self, flags: int, *args: int) -> str | None:
        res = self._lib.pci_lookup_name(ctypes.c_void_p(self._a), self._buf, ctypes.c_int(1024),
                                        ctypes.c_int(flags | NO_NUMBERS | NO_HWDB),
                                        *[ctypes.c_int(a) for a in args])
        return None if res is None else res.decode("utf-8")

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
