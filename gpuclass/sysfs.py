"""Scan ``<root>/sys/bus/pci/devices`` into a DeviceTable.

Per device it reads only the attributes it needs: ``vendor``, ``device``,
``class`` (mandatory), ``subsystem_vendor``, ``subsystem_device``,
``revision``, ``numa_node``, ``sriov_totalvfs``/``sriov_numvfs``, ``boot_vga``
(VGA devices only) and the names of the ``driver``, ``iommu_group`` and
``physfn`` links.  Links are read, never followed, and an attribute that is a
symlink is refused (``O_NOFOLLOW``); the one link that is followed, the device
entry itself, must resolve inside ``root``.

Tolerance is per attribute: a missing optional attribute is a missing value
(-1, ``None``, no subsystem); a missing or malformed mandatory one makes that
device a flagged row whose ``problems`` names the file.  A missing or
unreadable root is a :class:`~gpuclass.errors.SourceError`.

>>> t = scan_sysfs("/")                            # doctest: +SKIP
>>> t.addresses()[:1], t.source                    # doctest: +SKIP
(['0000:00:00.0'], '/sys/bus/pci/devices')
"""

from __future__ import annotations

import errno
import os
import re

import numpy as np

from .devices import FLAG_BOOT_VGA, FLAG_PF, FLAG_VF, NO_ADDRESS, DeviceTable
from .errors import SourceError

__all__ = ["scan_sysfs", "parse_address", "PCI_DEVICES"]

PCI_DEVICES = os.path.join("sys", "bus", "pci", "devices")

_ADDRESS = re.compile(r"([0-9a-f]{4,8}):([0-9a-f]{2}):([01][0-9a-f])\.([0-7])")
# O_NONBLOCK: a FIFO or a tty planted in a mounted root must not block the scan
# (regular and sysfs files ignore it)
_NOFOLLOW = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_NONBLOCK", 0))
_DIRFLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_PROC_FD = "/proc/self/fd"


def parse_address(name: str) -> tuple[int, int, int, int] | None:
    """(domain, bus, slot, function) of a sysfs entry name, or None.

    >>> parse_address("10000:e1:00.0"), parse_address("bogus")
    ((65536, 225, 0, 0), None)
    """
    m = _ADDRESS.fullmatch(name)
    if m is None:
        return None
    d, b, s, f = m.groups()
    return int(d, 16), int(b, 16), int(s, 16), int(f)


_HEXDIGITS = b"0123456789abcdefABCDEF"
_DECDIGITS = b"0123456789"
# module-level names: fewer lookups in the hot loop (and one place for tests to watch)
_open, _read, _close, _readlink = os.open, os.read, os.close, os.readlink


def _read_attr(dir_fd: int, name: str) -> bytes | int:
    """An attribute's bytes, read without following links, or the negative errno."""
    try:
        fd = _open(name, _NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        return -(exc.errno or errno.EIO)
    try:
        # sysfs attributes are a few bytes; 64 bounds a hostile or corrupt file
        return _read(fd, 64)
    except OSError as exc:
        return -(exc.errno or errno.EIO)
    finally:
        _close(fd)


def _hex_value(raw: bytes, width: int) -> int | None:
    """``0x`` and 1..width hex digits (the kernel's %#0Nx), else None."""
    body = raw.rstrip(b"\n")
    if body[:2] != b"0x" or not 2 < len(body) <= width + 2 or body[2:].translate(None, _HEXDIGITS):
        return None
    return int(body, 16)


def _dec_value(raw: bytes | int) -> int | None:
    if isinstance(raw, int):
        return None
    body = raw.strip()
    digits = body[1:] if body[:1] == b"-" else body
    if not 0 < len(digits) <= 10 or digits.translate(None, _DECDIGITS):
        return None
    return int(body)


def _link_name(dir_fd: int, name: str) -> str | None:
    """The last component of a link's target (never followed), or None."""
    try:
        target = _readlink(name, dir_fd=dir_fd)
    except OSError:
        return None  # absent, or not a link: either way no value
    return os.path.basename(target.rstrip("/")) or None


def _why(exc: OSError | int) -> str:
    code = exc if isinstance(exc, int) else exc.errno
    if code == errno.ELOOP:
        return "is a symlink (refused)"
    return os.strerror(code) if code else str(exc)


class _Device:
    """One device's values while it is read (plain attributes, no numpy)."""

    __slots__ = ("vendor", "device", "subvendor", "subdevice", "has_sub", "class_code",
                 "revision", "flags", "numa", "iommu", "totalvfs", "numvfs", "driver", "problems")

    def __init__(self) -> None:
        self.vendor = self.device = self.subvendor = self.subdevice = self.class_code = 0
        self.has_sub = False
        self.revision = self.numa = self.iommu = self.totalvfs = self.numvfs = -1
        self.flags = 0
        self.driver: str | None = None
        self.problems: list[str] = []


def _mandatory(dev: _Device, raw: bytes | int, name: str, width: int, where: str) -> int:
    if isinstance(raw, int):
        why = "missing" if raw == -errno.ENOENT else f"unreadable: {_why(-raw)}"
        dev.problems.append(f"{where}/{name}: {why}")
        return 0
    value = _hex_value(raw, width)
    if value is None:
        text = raw.decode("ascii", "replace").strip()
        dev.problems.append(f"{where}/{name}: malformed {text[:32]!r}")
        return 0
    return value


def _read_device(dir_fd: int, where: str) -> _Device:
    dev = _Device()
    dev.vendor = _mandatory(dev, _read_attr(dir_fd, "vendor"), "vendor", 4, where)
    dev.device = _mandatory(dev, _read_attr(dir_fd, "device"), "device", 4, where)
    dev.class_code = code = _mandatory(dev, _read_attr(dir_fd, "class"), "class", 6, where)
    raw = _read_attr(dir_fd, "subsystem_vendor")
    sv = None if isinstance(raw, int) else _hex_value(raw, 4)
    if sv is not None:
        raw = _read_attr(dir_fd, "subsystem_device")
        sd = None if isinstance(raw, int) else _hex_value(raw, 4)
        if sd is not None:
            dev.subvendor, dev.subdevice, dev.has_sub = sv, sd, True
    raw = _read_attr(dir_fd, "revision")
    rev = None if isinstance(raw, int) else _hex_value(raw, 2)
    if rev is not None:
        dev.revision = rev
    numa = _dec_value(_read_attr(dir_fd, "numa_node"))
    if numa is not None and numa >= 0:  # the kernel says -1 when it does not know
        dev.numa = numa
    total = _dec_value(_read_attr(dir_fd, "sriov_totalvfs"))
    if total is not None and total >= 0:
        dev.totalvfs = total
        if total > 0:
            dev.flags |= FLAG_PF
        num = _dec_value(_read_attr(dir_fd, "sriov_numvfs"))
        if num is not None and num >= 0:
            dev.numvfs = num
    # the kernel creates boot_vga for display devices only (class 0x03....)
    if code >> 16 == 0x03 and not dev.problems and _dec_value(_read_attr(dir_fd, "boot_vga")) == 1:
        dev.flags |= FLAG_BOOT_VGA
    dev.driver = _link_name(dir_fd, "driver")
    group = _link_name(dir_fd, "iommu_group")
    if group is not None and group.isdigit():
        dev.iommu = int(group)
    try:
        _readlink("physfn", dir_fd=dir_fd)
        dev.flags |= FLAG_VF
    except OSError:
        pass
    return dev


def _resolved(fd: int, fallback: str) -> str:
    """Where an open directory really is (the kernel's answer, one syscall)."""
    try:
        return _readlink(f"{_PROC_FD}/{fd}")
    except OSError:  # no /proc: resolve in Python, slower but the same answer
        return os.path.realpath(fallback)


def _inside(path: str, root: str) -> bool:
    return root == "/" or path == root or path.startswith(root + "/")


def scan_sysfs(root: str | os.PathLike = "/") -> DeviceTable:
    """Every PCI device under ``<root>/sys/bus/pci/devices``, sorted by address.

    ``source`` of the result is the devices directory.  Raises
    :class:`SourceError` when ``root`` or its devices directory is missing,
    unreadable or leads outside ``root``.
    """
    root_s = os.fspath(root)
    root_real = os.path.realpath(root_s)
    if not os.path.isdir(root_real):
        why = "not a directory" if os.path.exists(root_real) else "no such directory"
        raise SourceError(root_s, None, f"{why} (the root to scan)")
    devdir = os.path.join(root_real, PCI_DEVICES)
    try:
        dir_fd = _open(devdir, _DIRFLAGS)
    except OSError as exc:
        raise SourceError(devdir, None, f"cannot open the PCI devices directory: {_why(exc)}"
                          " (is sysfs mounted under this root?)") from exc
    try:
        if not _inside(_resolved(dir_fd, devdir), root_real):
            raise SourceError(devdir, None, "leads outside the root")
        try:
            names = os.listdir(dir_fd)
        except OSError as exc:
            raise SourceError(devdir, None, f"cannot list: {_why(exc)}") from exc
        return _scan_entries(dir_fd, devdir, root_real, names)
    finally:
        os.close(dir_fd)


def _scan_entries(dir_fd: int, devdir: str, root_real: str, names: list[str]) -> DeviceTable:
    keyed = []
    for name in names:
        addr = parse_address(name)
        # entries without an address sort last, by name
        keyed.append(((0, *addr, "") if addr else (1, 0, 0, 0, 0, name), name, addr))
    keyed.sort()
    n = len(keyed)
    cols: dict[str, list] = {k: [] for k in (
        "domain", "bus", "slot", "function", "vendor", "device", "subvendor", "subdevice",
        "has_subsystem", "class_code", "revision", "flags", "numa_node", "iommu_group",
        "sriov_totalvfs", "sriov_numvfs", "driver", "problems")}
    for _, name, addr in keyed:
        where = f"{devdir}/{name}"
        if addr is None:
            dev = _Device()
            dev.problems.append(f"{where}: not a PCI address")
            addr = (0, 0, 0, NO_ADDRESS)
        else:
            try:
                fd = _open(name, _DIRFLAGS, dir_fd=dir_fd)
            except OSError as exc:
                dev = _Device()
                dev.problems.append(f"{where}: cannot open: {_why(exc)}")
            else:
                try:
                    if _inside(_resolved(fd, where), root_real):
                        dev = _read_device(fd, where)
                    else:
                        dev = _Device()
                        dev.problems.append(f"{where}: link leads outside the root (not followed)")
                finally:
                    os.close(fd)
        cols["domain"].append(addr[0])
        cols["bus"].append(addr[1])
        cols["slot"].append(addr[2])
        cols["function"].append(addr[3])
        cols["vendor"].append(dev.vendor)
        cols["device"].append(dev.device)
        cols["subvendor"].append(dev.subvendor)
        cols["subdevice"].append(dev.subdevice)
        cols["has_subsystem"].append(dev.has_sub)
        cols["class_code"].append(dev.class_code)
        cols["revision"].append(dev.revision)
        cols["flags"].append(dev.flags)
        cols["numa_node"].append(dev.numa)
        cols["iommu_group"].append(dev.iommu)
        cols["sriov_totalvfs"].append(dev.totalvfs)
        cols["sriov_numvfs"].append(dev.numvfs)
        cols["driver"].append(dev.driver)
        cols["problems"].append("; ".join(dev.problems) if dev.problems else None)
    if n == 0:
        return DeviceTable.empty(devdir)
    arrays = {k: np.array(v, dtype=np.int64) for k, v in cols.items()
              if k not in ("driver", "problems", "has_subsystem")}
    return DeviceTable.from_columns(devdir, has_subsystem=np.array(cols["has_subsystem"], dtype=bool),
                                    driver=cols["driver"], problems=cols["problems"], **arrays)
