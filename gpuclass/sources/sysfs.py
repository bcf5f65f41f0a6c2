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

The same reading comes as lists from :func:`scan_sysfs_rows` (no numpy: the
twin's reader, ``read_device_rows``, held equal to the compiled one), which
:func:`gpuclass.machine.scan_machine` uses for a machine's few devices; the entry
order, the flagged rows and the absent-subsystem rule are this module's, once, for both.

>>> t = scan_sysfs("/")                            # doctest: +SKIP
>>> t.addresses()[:1], t.source                    # doctest: +SKIP
(['0000:00:00.0'], '/sys/bus/pci/devices')
"""

from __future__ import annotations

import errno
import os

from .._native import DIRFLAGS, SYSFS_COLUMNS, SYSFS_DEFAULTS, Root, why
from ..constants import FLAG_INVALID, NO_ADDRESS
from ..errors import SourceError
from ..ids import address_text, parse_address
from ..inputs import walk_beneath

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from ..devices import DeviceTable

__all__ = ["scan_sysfs", "scan_sysfs_rows", "DeviceRows", "PCI_DEVICES"]

PCI_DEVICES = os.path.join("sys", "bus", "pci", "devices")
_open, _close = os.open, os.close


def __getattr__(name: str) -> Any:
    if name == "_core":  # the core in use, loaded on first scan_sysfs (tests set another)
        from .._native import core

        return core
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    return _scan(root, _scan_entries)


class DeviceRows:
    """A scan as lists (:func:`scan_sysfs_rows`): ``columns`` maps each of
    :data:`gpuclass.records.RECORD_COLUMNS` and ``domain``, ``bus``, ``slot``, ``function``
    to a list of ints, with ``driver``, ``problems`` and ``addresses`` as a DeviceTable
    has them (flags carry ``FLAG_INVALID`` where a problem is set)."""

    __slots__ = ("source", "columns", "driver", "problems", "addresses")

    def __init__(self, source: str, columns: dict[str, list[int]], driver: list, problems: list,
                 addresses: list[str]) -> None:
        self.source, self.columns, self.driver = source, columns, driver
        self.problems, self.addresses = problems, addresses

    def __len__(self) -> int:
        return len(self.addresses)


def scan_sysfs_rows(root: str | os.PathLike = "/", limit: int | None = None) -> DeviceRows | None:
    """:func:`scan_sysfs` as lists, without numpy; None where the devices directory holds
    more than ``limit`` entries (the compiled reader is the one for many devices)."""
    return _scan(root, lambda fd, devdir, beneath, names: None if limit is not None and len(names) > limit
                 else _row_entries(fd, devdir, beneath, names))


def _scan(root: str | os.PathLike, build: Callable[..., Any]) -> Any:
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
        return build(dir_fd, devdir, beneath, names)
    finally:
        for fd in owned:
            _close(fd)


def _keyed(names: list[str]) -> tuple[list, list[str]]:
    """The entries in address order (entries without an address last, by name), and the
    names of those with one (the ones read)."""
    keyed = []
    for name in names:
        addr = parse_address(name, domain=True)
        keyed.append(((0, *addr, "") if addr else (1, 0, 0, 0, 0, name), name, addr))
    keyed.sort()
    return keyed, [name for _, name, addr in keyed if addr is not None]


def _not_an_address(devdir: str, name: str) -> str:
    return f"{devdir}/{name}: not a PCI address"


def _no_subsystem(has: Any, subvendor: Any) -> Any:
    """lspci shows no subsystem when its vendor is 0000 or ffff (unprogrammed IDs): neither
    does the scan.  Elementwise: numpy columns or one row's ints."""
    return (has == 0) | (subvendor == 0) | (subvendor == 0xFFFF)


def _scan_entries(dir_fd: int, devdir: str, root: Root | None, names: list[str]) -> DeviceTable:
    import numpy as np

    from ..devices import DeviceTable

    _core = globals().get("_core") or __getattr__("_core")
    keyed, good = _keyed(names)
    n = len(keyed)
    if n == 0:
        return DeviceTable.empty(devdir)
    values, drivers, problems = _core.read_devices(dir_fd, good, devdir, root)
    bad = n - len(good)
    if bad:  # not a PCI address: a flagged row with defaults and no address
        fill = np.empty((bad, len(SYSFS_COLUMNS)), dtype=np.int64)
        fill[:] = SYSFS_DEFAULTS
        values = np.concatenate((values, fill))
        drivers = [*drivers, *([None] * bad)]
        problems = [*problems, *(_not_an_address(devdir, name) for _, name, _ in keyed[-bad:])]
    addrs = np.array([addr or (0, 0, 0, NO_ADDRESS) for _, _, addr in keyed], dtype=np.int64)
    cols = {k: values[:, j] for j, k in enumerate(SYSFS_COLUMNS)}
    absent = _no_subsystem(cols["has_subsystem"], cols["subvendor"])
    cols["has_subsystem"] = ~absent
    cols["subvendor"] = np.where(absent, 0, cols["subvendor"])
    cols["subdevice"] = np.where(absent, 0, cols["subdevice"])
    return DeviceTable.from_columns(devdir, domain=addrs[:, 0], bus=addrs[:, 1], slot=addrs[:, 2],
                                    function=addrs[:, 3], driver=drivers, problems=problems, **cols)


def _row_entries(dir_fd: int, devdir: str, root: Root | None, names: list[str]) -> DeviceRows:
    from .._native import read_device_rows

    keyed, good = _keyed(names)
    rows, drivers, problems = read_device_rows(dir_fd, good, devdir, root)
    bad = len(keyed) - len(good)
    if bad:
        rows += [list(SYSFS_DEFAULTS) for _ in range(bad)]
        drivers = [*drivers, *([None] * bad)]
        problems = [*problems, *(_not_an_address(devdir, name) for _, name, _ in keyed[-bad:])]
    cols: dict[str, list[int]] = {k: [row[j] for row in rows] for j, k in enumerate(SYSFS_COLUMNS)}
    absent = [bool(_no_subsystem(h, sv)) for h, sv in zip(cols["has_subsystem"], cols["subvendor"])]
    cols["has_subsystem"] = [int(not a) for a in absent]
    cols["subvendor"] = [0 if a else v for a, v in zip(absent, cols["subvendor"])]
    cols["subdevice"] = [0 if a else v for a, v in zip(absent, cols["subdevice"])]
    cols["flags"] = [f | FLAG_INVALID if p is not None else f for f, p in zip(cols["flags"], problems)]
    addrs = [addr or (0, 0, 0, NO_ADDRESS) for _, _, addr in keyed]
    for j, k in enumerate(("domain", "bus", "slot", "function")):
        cols[k] = [a[j] for a in addrs]
    text = [address_text(*a) for a in addrs]
    return DeviceRows(devdir, cols, drivers, problems, text)
