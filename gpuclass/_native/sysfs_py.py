"""Pure-Python twin of the sysfs kernel (``sysfs.pxi``): PCI device directories' attributes.

:func:`read_devices` reads the PCI devices named ``names`` (entries of an open
devices directory) and returns their values, driver names and problems; the
compiled core does the same with ``openat``/``read``/``readlinkat`` in C.  Both
build their problem texts with the contract's ``problem_text``, so they agree to
the byte.

Per device it reads only ``vendor``, ``device``, ``class`` (mandatory),
``subsystem_vendor``, ``subsystem_device``, ``revision``, ``numa_node``,
``sriov_totalvfs``/``sriov_numvfs``, ``boot_vga`` (display devices only), and
the names of the ``driver``, ``iommu_group`` and ``physfn`` links, which are
read, never followed.  Only a regular file is opened as an attribute (a FIFO or
a device node is flagged, never opened), never through a symlink, and at most 64
bytes are read.  The device entry is resolved inside ``root`` without ever
looking above it (:func:`gpuclass.inputs.walk_beneath`; the compiled core uses
``openat2(RESOLVE_BENEATH)`` where the kernel has it, and the same walk where not).

>>> import os, shutil, tempfile
>>> d = tempfile.mkdtemp()
>>> for k, v in (("vendor", "0x10de"), ("device", "0x27b0"), ("class", "0x030000")):
...     with open(os.path.join(d, k), "w") as fh:
...         _ = fh.write(v + "\\n")
>>> fd = os.open(os.path.dirname(d), os.O_RDONLY)
>>> values, drivers, problems = read_devices(fd, [os.path.basename(d)], "/sys", None)
>>> os.close(fd); shutil.rmtree(d)
>>> [hex(x) for x in values[0, :2]], drivers, problems
(['0x10de', '0x27b0'], [None], [None])
"""

from __future__ import annotations

import errno
import os
import stat

from ..constants import FLAG_BOOT_VGA, FLAG_PF, FLAG_VF
from ..inputs import walk_beneath
from .contract.sysfs import (
    AT_BLK,
    AT_CHR,
    AT_FIFO,
    AT_OTHER,
    AT_RANGE,
    AT_SOCK,
    DEFAULTS,
    DIR_OUTSIDE,
    DIRFLAGS,
    MALFORMED,
    MANDATORY,
    N_VALUES,
    OPTIONAL,
    dec_value,
    link_name,
    problem_text,
)

__all__ = ["read_devices"]

_NOFOLLOW = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
_HEXDIGITS = b"0123456789abcdefABCDEF"
_OPT = {name: k for k, name in enumerate(OPTIONAL)}
# module-level names: fewer lookups in the hot loop (and one place for tests to watch)
_open, _read, _close, _readlink, _lstat = os.open, os.read, os.close, os.readlink, os.stat


def _mode_code(mode: int) -> int:
    if stat.S_ISLNK(mode):
        return errno.ELOOP
    if stat.S_ISDIR(mode):
        return errno.EISDIR
    for test, code in ((stat.S_ISFIFO, AT_FIFO), (stat.S_ISCHR, AT_CHR), (stat.S_ISBLK, AT_BLK),
                       (stat.S_ISSOCK, AT_SOCK)):
        if test(mode):
            return code
    return AT_OTHER


def _open_attr(dir_fd: int, name: str) -> int:
    """An fd for a regular-file attribute, or minus its errno / AT_* code.

    Looked at first (``lstat``) and opened only when it is a regular file, so that a
    FIFO or device node is never opened; the open never blocks nor takes a terminal.
    """
    try:
        st = _lstat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            return -_mode_code(st.st_mode)
        return _open(name, _NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        return -(exc.errno or errno.EIO)


def _read_attr(dir_fd: int, name: str) -> bytes | int:
    """An attribute's bytes (at most 64), or its negative errno / attribute code."""
    fd = _open_attr(dir_fd, name)
    if fd < 0:
        return fd
    try:
        # sysfs attributes are a few bytes; 64 bounds a hostile or corrupt file
        return _read(fd, 64)
    except OSError as exc:
        return -(exc.errno or errno.EIO)
    finally:
        _close(fd)


def _flagged(code: int) -> bool:
    """A read that failed because the file is not a regular file: a flagged fact."""
    return code in (errno.ELOOP, errno.EISDIR) or AT_FIFO <= code <= AT_OTHER


class _Optional:
    """The flagged optional attributes of one device: index -> (code, bytes)."""

    def __init__(self) -> None:
        self.bad: dict[int, tuple[int, bytes]] = {}

    def read(self, dir_fd: int, name: str) -> bytes | None:
        raw = _read_attr(dir_fd, name)
        if isinstance(raw, int):
            if _flagged(-raw):
                self.bad[_OPT[name]] = (-raw, b"")
            return None
        return raw

    def hex(self, dir_fd: int, name: str, width: int) -> int | None:
        return _hex_value(self.read(dir_fd, name), width)

    def dec(self, dir_fd: int, name: str) -> tuple[int, int]:
        raw = self.read(dir_fd, name)
        if raw is None:
            return 0, 0
        ok, value = dec_value(raw)
        if ok == 2:
            self.bad[_OPT[name]] = (AT_RANGE, raw.strip()[:32])
        return ok, value


def _hex_value(raw: bytes | int | None, width: int) -> int | None:
    """``0x`` and 1..width hex digits (the kernel's %#0Nx), else None."""
    if raw is None or isinstance(raw, int):
        return None
    body = raw.rstrip(b"\n")
    if body[:2] != b"0x" or not 2 < len(body) <= width + 2 or body[2:].translate(None, _HEXDIGITS):
        return None
    return int(body, 16)


def _iommu_group(dir_fd: int, row: list[int], opt: _Optional) -> None:
    group = link_name(dir_fd, "iommu_group", _readlink)
    # the kernel names groups by number; digits past an int32 are flagged, other names: no group
    if group is None or not (group.isascii() and group.isdigit()):
        return
    if len(group.lstrip("0")) > 10 or int(group) > 2**31 - 1:
        opt.bad[_OPT["iommu_group"]] = (AT_RANGE, os.fsencode(group)[:32])
        return
    row[9] = int(group)


def _read_device(dir_fd: int, row: list[int]) -> tuple[str | None, list[int], list[bytes], dict]:
    codes, raws = [0, 0, 0], [b"", b"", b""]
    for k, (name, width) in enumerate(MANDATORY):
        raw = _read_attr(dir_fd, name)
        if isinstance(raw, int):
            codes[k] = -raw
            continue
        value = _hex_value(raw, width)
        if value is None:
            codes[k], raws[k] = MALFORMED, raw
        else:
            row[(0, 1, 5)[k]] = value
    opt = _Optional()
    sv = opt.hex(dir_fd, "subsystem_vendor", 4)
    if sv is not None:
        sd = opt.hex(dir_fd, "subsystem_device", 4)
        if sd is not None:
            row[2], row[3], row[4] = sv, sd, 1
    rev = opt.hex(dir_fd, "revision", 2)
    if rev is not None:
        row[6] = rev
    flags = 0
    ok, numa = opt.dec(dir_fd, "numa_node")
    if ok == 1 and numa >= 0:  # the kernel says -1 when it does not know
        row[8] = numa
    ok, total = opt.dec(dir_fd, "sriov_totalvfs")
    pf = ok == 1 and total >= 0
    if pf:
        row[10] = total
        if total > 0:
            flags |= FLAG_PF
    if pf or ok == 2:  # out of range: read only to flag it too
        ok_num, num = opt.dec(dir_fd, "sriov_numvfs")
        if ok_num == 1 and num >= 0 and pf:
            row[11] = num
    # the kernel creates boot_vga for display devices only (class 0x03....)
    if row[5] >> 16 == 0x03 and not any(codes) and opt.dec(dir_fd, "boot_vga") == (1, 1):
        flags |= FLAG_BOOT_VGA
    driver = link_name(dir_fd, "driver", _readlink)
    _iommu_group(dir_fd, row, opt)
    try:
        _readlink("physfn", dir_fd=dir_fd)
        flags |= FLAG_VF
    except OSError:
        pass
    row[7] = flags
    return driver, codes, raws, opt.bad


def _open_device(dir_fd: int, name: str, root) -> int:
    """The device directory's fd, or minus an errno, or DIR_OUTSIDE (-1 is never an errno)."""
    if root is None:  # the root is "/": nothing leads outside it
        try:
            return _open(name, DIRFLAGS, dir_fd=dir_fd)
        except OSError as exc:
            return -(exc.errno or errno.EIO)
    chain, owned = list(root.chain), []
    try:
        walk_beneath(chain, name, owned, opener=_open)
    except OSError as exc:
        for fd in owned:
            _close(fd)
        return DIR_OUTSIDE if exc.errno == errno.EXDEV else -(exc.errno or errno.EIO)
    top = chain[-1]
    for fd in owned:
        if fd != top:
            _close(fd)
    return top if top in owned else os.dup(top)


def read_devices(dir_fd: int, names: list[str], devdir: str, root):
    """Read the devices ``names`` of the open devices directory ``dir_fd``.

    ``devdir`` names that directory in problem texts; ``root`` is the
    :class:`~gpuclass._native.contract.sysfs.Root` no device may lead out of
    (``None`` when the root is ``/``).  Returns ``(values, drivers, problems)``:
    an ``(n, N_VALUES)`` int64 matrix (columns ``VALUE_COLUMNS``), the driver
    names (None: unbound) and the problem texts (None: a good device).
    """
    import numpy as np  # here only: read_device_rows serves callers without numpy

    rows, drivers, problems = read_device_rows(dir_fd, names, devdir, root)
    values = np.array(rows, dtype=np.int64).reshape(len(names), N_VALUES)
    return values, drivers, problems


def read_device_rows(dir_fd: int, names: list[str], devdir: str, root):
    """:func:`read_devices` with the values as a list of ``N_VALUES``-int lists: the same
    reading, for a caller of a few devices that does without numpy."""
    n = len(names)
    rows = [list(DEFAULTS) for _ in range(n)]
    drivers: list[str | None] = [None] * n
    problems: list[str | None] = [None] * n
    none = (0, 0, 0), (b"", b"", b"")
    for i, name in enumerate(names):
        where = f"{devdir}/{name}"
        fd = _open_device(dir_fd, name, root)
        if fd == DIR_OUTSIDE:
            problems[i] = problem_text(where, DIR_OUTSIDE, *none)
            continue
        if fd < 0:
            problems[i] = problem_text(where, -fd, *none)
            continue
        try:
            drivers[i], codes, raws, bad = _read_device(fd, rows[i])
            if any(codes) or bad:
                problems[i] = problem_text(where, 0, tuple(codes), tuple(raws), bad)
        finally:
            _close(fd)
    return rows, drivers, problems
