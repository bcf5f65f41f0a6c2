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
# The kernel prints IDs as 0x%04x, class as 0x%06x, revision as 0x%02x.
_HEX_ATTR = {
    "vendor": re.compile(r"0x[0-9a-fA-F]{1,4}"),
    "device": re.compile(r"0x[0-9a-fA-F]{1,4}"),
    "subsystem_vendor": re.compile(r"0x[0-9a-fA-F]{1,4}"),
    "subsystem_device": re.compile(r"0x[0-9a-fA-F]{1,4}"),
    "class": re.compile(r"0x[0-9a-fA-F]{1,6}"),
    "revision": re.compile(r"0x[0-9a-fA-F]{1,2}"),
}
_DEC = re.compile(r"-?[0-9]{1,10}")
_NOFOLLOW = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
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


class _Missing(Exception):
    """An attribute file that does not exist (an absent value, not a problem)."""


def _read_attr(dir_fd: int, name: str) -> str:
    """An attribute's text, read without following links; _Missing or OSError."""
    try:
        fd = os.open(name, _NOFOLLOW, dir_fd=dir_fd)
    except FileNotFoundError:
        raise _Missing(name) from None
    try:
        # sysfs attributes are a few bytes; 64 bounds a hostile or corrupt file
        return os.read(fd, 64).decode("ascii", "replace").strip()
    finally:
        os.close(fd)


def _link_name(dir_fd: int, name: str) -> str | None:
    """The last component of a link's target (never followed), or None."""
    try:
        target = os.readlink(name, dir_fd=dir_fd)
    except OSError:
        return None  # absent, or not a link: either way no value
    return os.path.basename(target.rstrip("/")) or None


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "is a symlink (refused)"
    return os.strerror(exc.errno) if exc.errno else str(exc)


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


def _hex_attr(dev: _Device, dir_fd: int, name: str, where: str, mandatory: bool) -> int | None:
    try:
        text = _read_attr(dir_fd, name)
    except _Missing:
        if mandatory:
            dev.problems.append(f"{where}/{name}: missing")
        return None
    except OSError as exc:
        if mandatory:
            dev.problems.append(f"{where}/{name}: unreadable: {_why(exc)}")
        return None
    if not _HEX_ATTR[name].fullmatch(text):
        if mandatory:
            dev.problems.append(f"{where}/{name}: malformed {text[:32]!r}")
        return None
    return int(text, 16)


def _dec_attr(dir_fd: int, name: str) -> int | None:
    try:
        text = _read_attr(dir_fd, name)
    except (_Missing, OSError):
        return None
    return int(text) if _DEC.fullmatch(text) else None


def _read_device(dir_fd: int, where: str) -> _Device:
    dev = _Device()
    vendor = _hex_attr(dev, dir_fd, "vendor", where, True)
    device = _hex_attr(dev, dir_fd, "device", where, True)
    class_code = _hex_attr(dev, dir_fd, "class", where, True)
    dev.vendor = vendor or 0
    dev.device = device or 0
    dev.class_code = class_code or 0
    sv = _hex_attr(dev, dir_fd, "subsystem_vendor", where, False)
    if sv is not None:
        sd = _hex_attr(dev, dir_fd, "subsystem_device", where, False)
        if sd is not None:
            dev.subvendor, dev.subdevice, dev.has_sub = sv, sd, True
    rev = _hex_attr(dev, dir_fd, "revision", where, False)
    if rev is not None:
        dev.revision = rev
    numa = _dec_attr(dir_fd, "numa_node")
    if numa is not None and numa >= 0:  # the kernel says -1 when it does not know
        dev.numa = numa
    total = _dec_attr(dir_fd, "sriov_totalvfs")
    if total is not None and total >= 0:
        dev.totalvfs = total
        if total > 0:
            dev.flags |= FLAG_PF
        num = _dec_attr(dir_fd, "sriov_numvfs")
        if num is not None and num >= 0:
            dev.numvfs = num
    # the kernel creates boot_vga for display devices only (class 0x03....)
    if class_code is not None and class_code >> 16 == 0x03 and _dec_attr(dir_fd, "boot_vga") == 1:
        dev.flags |= FLAG_BOOT_VGA
    dev.driver = _link_name(dir_fd, "driver")
    group = _link_name(dir_fd, "iommu_group")
    if group is not None and group.isdigit():
        dev.iommu = int(group)
    try:
        os.readlink("physfn", dir_fd=dir_fd)
        dev.flags |= FLAG_VF
    except OSError:
        pass
    return dev


def _resolved(fd: int, fallback: str) -> str:
    """Where an open directory really is (the kernel's answer, one syscall)."""
    try:
        return os.readlink(f"{_PROC_FD}/{fd}")
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
        dir_fd = os.open(devdir, _DIRFLAGS)
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
                fd = os.open(name, _DIRFLAGS, dir_fd=dir_fd)
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
