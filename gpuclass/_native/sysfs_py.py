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
read, never followed.  An attribute that is a symlink is refused
(``O_NOFOLLOW``); the device entry itself, the one link that is followed, must
resolve inside ``root``.

>>> import os, shutil, tempfile
>>> d = tempfile.mkdtemp()
>>> for k, v in (("vendor", "0x10de"), ("device", "0x27b0"), ("class", "0x030000")):
...     with open(os.path.join(d, k), "w") as fh:
...         _ = fh.write(v + "\\n")
>>> fd = os.open(os.path.dirname(d), os.O_RDONLY)
>>> values, drivers, problems = read_devices(fd, [os.path.basename(d)], "/sys", "/")
>>> os.close(fd); shutil.rmtree(d)
>>> [hex(x) for x in values[0, :2]], drivers, problems
(['0x10de', '0x27b0'], [None], [None])
"""

from __future__ import annotations

import errno
import os

import numpy as np

from ..constants import FLAG_BOOT_VGA, FLAG_PF, FLAG_VF
from .contract.sysfs import (
    DEFAULTS,
    DIR_OUTSIDE,
    DIRFLAGS,
    MALFORMED,
    MANDATORY,
    N_VALUES,
    inside,
    link_name,
    problem_text,
)

__all__ = ["read_devices"]

# O_NONBLOCK: a FIFO or a tty planted in a mounted root must not block the scan
# (regular and sysfs files ignore it).
_NOFOLLOW = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_NONBLOCK", 0))
_PROC_FD = "/proc/self/fd"
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


def _hex_value(raw: bytes | int, width: int) -> int | None:
    """``0x`` and 1..width hex digits (the kernel's %#0Nx), else None."""
    if isinstance(raw, int):
        return None
    body = raw.rstrip(b"\n")
    if body[:2] != b"0x" or not 2 < len(body) <= width + 2 or body[2:].translate(None, _HEXDIGITS):
        return None
    return int(body, 16)


def _dec_value(raw: bytes | int) -> int | None:
    """An optional sign and 1..10 decimal digits, blanks around; else None."""
    if isinstance(raw, int):
        return None
    body = raw.strip()
    digits = body[1:] if body[:1] == b"-" else body
    if not 0 < len(digits) <= 10 or digits.translate(None, _DECDIGITS):
        return None
    return int(body)


def _resolved(fd: int, fallback: str) -> str:
    """Where an open directory really is (the kernel's answer, one syscall)."""
    try:
        return _readlink(f"{_PROC_FD}/{fd}")
    except OSError:  # no /proc: resolve in Python, slower but the same answer
        return os.path.realpath(fallback)


def _read_device(dir_fd: int, row: np.ndarray) -> tuple[str | None, list[int], list[bytes]]:
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
    sv = _hex_value(_read_attr(dir_fd, "subsystem_vendor"), 4)
    if sv is not None:
        sd = _hex_value(_read_attr(dir_fd, "subsystem_device"), 4)
        if sd is not None:
            row[2], row[3], row[4] = sv, sd, 1
    rev = _hex_value(_read_attr(dir_fd, "revision"), 2)
    if rev is not None:
        row[6] = rev
    flags = 0
    numa = _dec_value(_read_attr(dir_fd, "numa_node"))
    if numa is not None and numa >= 0:  # the kernel says -1 when it does not know
        row[8] = numa
    total = _dec_value(_read_attr(dir_fd, "sriov_totalvfs"))
    if total is not None and total >= 0:
        row[10] = total
        if total > 0:
            flags |= FLAG_PF
        num = _dec_value(_read_attr(dir_fd, "sriov_numvfs"))
        if num is not None and num >= 0:
            row[11] = num
    # the kernel creates boot_vga for display devices only (class 0x03....)
    if (row[5] >> 16 == 0x03 and not any(codes)
            and _dec_value(_read_attr(dir_fd, "boot_vga")) == 1):
        flags |= FLAG_BOOT_VGA
    driver = link_name(dir_fd, "driver", _readlink)
    group = link_name(dir_fd, "iommu_group", _readlink)
    # ASCII digits only, at most 10 (what the C twin parses); anything else: no group
    if group is not None and group.isascii() and group.isdigit() and len(group) <= 10:
        row[9] = int(group)
    try:
        _readlink("physfn", dir_fd=dir_fd)
        flags |= FLAG_VF
    except OSError:
        pass
    row[7] = flags
    return driver, codes, raws


def read_devices(dir_fd: int, names: list[str], devdir: str, root: str):
    """Read the devices ``names`` of the open devices directory ``dir_fd``.

    ``devdir`` names that directory in problem texts; ``root`` is the resolved
    root no device may lead out of.  Returns ``(values, drivers, problems)``:
    an ``(n, N_VALUES)`` int64 matrix (columns ``VALUE_COLUMNS``), the driver
    names (None: unbound) and the problem texts (None: a good device).
    """
    n = len(names)
    values = np.empty((n, N_VALUES), dtype=np.int64)
    values[:] = DEFAULTS
    drivers: list[str | None] = [None] * n
    problems: list[str | None] = [None] * n
    for i, name in enumerate(names):
        where = f"{devdir}/{name}"
        try:
            fd = _open(name, DIRFLAGS, dir_fd=dir_fd)
        except OSError as exc:
            problems[i] = problem_text(where, exc.errno or errno.EIO, (0, 0, 0), (b"", b"", b""))
            continue
        try:
            if not inside(_resolved(fd, where), root):
                problems[i] = problem_text(where, DIR_OUTSIDE, (0, 0, 0), (b"", b"", b""))
                continue
            drivers[i], codes, raws = _read_device(fd, values[i])
            if any(codes):
                problems[i] = problem_text(where, 0, tuple(codes), tuple(raws))
        finally:
            _close(fd)
    return values, drivers, problems
