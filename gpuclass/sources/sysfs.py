"""Scan ``<root>/sys/bus/pci/devices`` into a DeviceTable.

The device directories are read by the core (``read_devices``: C in the
compiled core, Python in the twin; see :mod:`gpuclass._native`).  Per device it reads
only the attributes it needs: ``vendor``, ``device``,
``class`` (mandatory), ``subsystem_vendor``, ``subsystem_device``,
``revision``, ``numa_node``, ``sriov_totalvfs``/``sriov_numvfs``, ``boot_vga``
(VGA devices only) and the names of the ``driver``, ``iommu_group`` and
``physfn`` links.  Nothing outside ``root`` is ever opened, not even to check
where it is: the devices directory and each device entry (the one link that is
followed) are resolved inside the root, and a path leading out is flagged.  Only
regular files are opened as attributes (a FIFO or device node is flagged, never
opened), never through a symlink, and at most 64 bytes of each are read.

Tolerance is per attribute: a missing or malformed optional attribute is a
missing value (-1, ``None``, no subsystem); a missing or malformed mandatory
one, an attribute that is not a regular file, or an optional number past an
int32 (``numa_node``, ``sriov_*``, ``iommu_group``: then taken as unknown) makes
that device a flagged row whose ``problems`` names the file; every other device
reads as usual.  A subsystem vendor of ``0000`` or ``ffff`` (an unprogrammed
subsystem) is no subsystem, as for lspci, which prints ``"" ""`` for it.  A
missing or unreadable root is a :class:`~gpuclass.errors.SourceError`.

>>> t = scan_sysfs("/")                            # doctest: +SKIP
>>> t.addresses()[:1], t.source                    # doctest: +SKIP
(['0000:00:00.0'], '/sys/bus/pci/devices')
"""

from __future__ import annotations

import errno
import os

import numpy as np

from .._native import DIRFLAGS, SYSFS_COLUMNS, SYSFS_DEFAULTS, Root, why
from .._native import core as _core
from ..constants import NO_ADDRESS
from ..devices import DeviceTable
from ..errors import SourceError
from ..ids import parse_address
from ..inputs import walk_beneath

__all__ = ["scan_sysfs", "PCI_DEVICES"]

PCI_DEVICES = os.path.join("sys", "bus", "pci", "devices")
_open, _close = os.open, os.close


def _why(exc: OSError) -> str:
    if exc.errno == errno.EXDEV:
        return "leads outside the root (not followed)"
    return why(exc.errno) if exc.errno else str(exc)


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
        root_fd = _open(root_real, DIRFLAGS)
    except OSError as exc:
        raise SourceError(root_s, None, f"cannot open the root: {_why(exc)}") from exc
    chain, owned = [root_fd], [root_fd]
    try:
        try:
            # resolved inside the root: a sys/ that links out is refused before it is opened
            walk_beneath(chain, PCI_DEVICES, owned)
        except OSError as exc:
            raise SourceError(devdir, None, f"cannot open the PCI devices directory: {_why(exc)}"
                              " (is sysfs mounted under this root?)") from exc
        dir_fd = chain[-1]
        try:
            names = os.listdir(dir_fd)
        except OSError as exc:
            raise SourceError(devdir, None, f"cannot list: {_why(exc)}") from exc
        beneath = None if root_real == "/" else Root(tuple(chain), PCI_DEVICES)
        return _scan_entries(dir_fd, devdir, beneath, names)
    finally:
        for fd in owned:
            _close(fd)


def _scan_entries(dir_fd: int, devdir: str, root: Root | None, names: list[str]) -> DeviceTable:
    keyed = []
    for name in names:
        addr = parse_address(name, domain=True)
        # entries without an address sort last, by name
        keyed.append(((0, *addr, "") if addr else (1, 0, 0, 0, 0, name), name, addr))
    keyed.sort()
    n = len(keyed)
    if n == 0:
        return DeviceTable.empty(devdir)
    good = [name for _, name, addr in keyed if addr is not None]
    values, drivers, problems = _core.read_devices(dir_fd, good, devdir, root)
    bad = n - len(good)
    if bad:  # not a PCI address: a flagged row with defaults and no address
        fill = np.empty((bad, len(SYSFS_COLUMNS)), dtype=np.int64)
        fill[:] = SYSFS_DEFAULTS
        values = np.concatenate((values, fill))
        drivers = [*drivers, *([None] * bad)]
        problems = [*problems, *(f"{devdir}/{name}: not a PCI address" for _, name, _ in keyed[-bad:])]
    addrs = np.array([addr or (0, 0, 0, NO_ADDRESS) for _, _, addr in keyed], dtype=np.int64)
    cols = {k: values[:, j] for j, k in enumerate(SYSFS_COLUMNS)}
    # lspci shows no subsystem when its vendor is 0000 or ffff (unprogrammed IDs): neither does the scan
    absent = (cols["has_subsystem"] == 0) | (cols["subvendor"] == 0) | (cols["subvendor"] == 0xFFFF)
    cols["has_subsystem"] = ~absent
    cols["subvendor"] = np.where(absent, 0, cols["subvendor"])
    cols["subdevice"] = np.where(absent, 0, cols["subdevice"])
    return DeviceTable.from_columns(devdir, domain=addrs[:, 0], bus=addrs[:, 1], slot=addrs[:, 2],
                                    function=addrs[:, 3], driver=drivers, problems=problems, **cols)
