"""The sysfs pair's contract: the value matrix, the problem texts, the checks both make.

``read_devices`` (``sysfs.pxi`` compiled, ``sysfs_py.py`` the twin) returns an
``(n, N_VALUES)`` int64 matrix with the columns ``VALUE_COLUMNS`` (defaults
``DEFAULTS`` where a device could not be read), the driver names and the problem
texts; both build those texts with :func:`problem_text`, so they agree to the byte.

>>> problem_text("/sys/bus/pci/devices/0000:01:00.0", 0, (2, 0, MALFORMED), (b"", b"", b"zz"))
"/sys/bus/pci/devices/0000:01:00.0/vendor: missing; /sys/bus/pci/devices/0000:01:00.0/class: malformed 'zz'"
>>> problem_text("/d", 0, (0, 0, 0), (b"", b"", b""), {3: (AT_RANGE, b"9999999999")})
"/d/numa_node: out of range '9999999999' (taken as unknown)"
"""

from __future__ import annotations

import errno
import os
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:  # no typing at run time: a scan's start imports this
    from ...lazy import NamedTuple

__all__ = ["VALUE_COLUMNS", "N_VALUES", "DEFAULTS", "MANDATORY", "OPTIONAL", "DIR_OUTSIDE", "MALFORMED",
           "AT_FIFO", "AT_CHR", "AT_BLK", "AT_SOCK", "AT_OTHER", "AT_RANGE", "DIRFLAGS", "Root",
           "why", "problem_text", "link_name", "dec_value", "INT32_MAX"]

# Columns of read_devices' value matrix (int64).
VALUE_COLUMNS = ("vendor", "device", "subvendor", "subdevice", "has_subsystem", "class_code",
                 "revision", "flags", "numa_node", "iommu_group", "sriov_totalvfs", "sriov_numvfs")
N_VALUES = len(VALUE_COLUMNS)
# Defaults of a device that could not be read: 0 IDs, -1 small integers, no flags.
DEFAULTS = (0, 0, 0, 0, 0, 0, -1, 0, -1, -1, -1, -1)

MANDATORY = (("vendor", 4), ("device", 4), ("class", 6))
# Optional attributes (and the iommu_group link) whose problems are flagged: one that is
# not a regular file, or a number past an int32.  Absent or malformed ones are just absent.
OPTIONAL = ("subsystem_vendor", "subsystem_device", "revision", "numa_node", "sriov_totalvfs",
            "sriov_numvfs", "boot_vga", "iommu_group")
DIR_OUTSIDE = -1   # dir code: the entry resolves outside the root
MALFORMED = -1     # attribute code: read, but not 0x and 1..width hex digits
# Attribute codes past any errno: not a regular file (never opened), or out of range.
AT_FIFO, AT_CHR, AT_BLK, AT_SOCK, AT_OTHER, AT_RANGE = range(4097, 4103)
_KIND = {AT_FIFO: "a FIFO", AT_CHR: "a character device", AT_BLK: "a block device",
         AT_SOCK: "a socket", AT_OTHER: "not a regular file"}
INT32_MAX = 2**31 - 1

DIRFLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


class Root(NamedTuple):
    """The root a scan may not leave: its open directories from the root down to the
    devices directory (``chain[0]`` the root, ``chain[-1]`` the devices directory), and
    that directory's path from the root (``rel``; None: the compiled core resolves by
    its user-space walk alone, without openat2)."""

    chain: tuple[int, ...]
    rel: str | None


def why(code: int) -> str:
    """The reason for an errno (or an attribute code), as problems print it."""
    if code == errno.ELOOP:
        return "is a symlink (refused)"
    if code in _KIND:
        return f"is {_KIND[code]}, not a regular file (not opened)"
    return os.strerror(code)


def dec_value(raw: bytes) -> tuple[int, int]:
    """``(1, value)`` for an optional '-' and decimal digits that fit an int32 (blanks
    around), ``(2, 0)`` for digits past it, ``(0, 0)`` for anything else."""
    body = raw.strip()
    digits = body[1:] if body[:1] == b"-" else body
    if not digits or not digits.isdigit() or not digits.isascii():
        return 0, 0
    sig = digits.lstrip(b"0")
    if len(sig) > 10:
        return 2, 0
    value = int(body)
    if value > INT32_MAX or value < -INT32_MAX - 1:
        return 2, 0
    return 1, value


def _attr_problem(where: str, name: str, code: int, raw: bytes) -> str:
    if code == AT_RANGE:
        text = raw.decode("ascii", "replace")
        return f"{where}/{name}: out of range {text[:32]!r} (taken as unknown)"
    return f"{where}/{name}: " + ("missing" if code == errno.ENOENT else
                                  why(code) if code in _KIND else f"unreadable: {why(code)}")


def problem_text(where: str, dir_code: int, codes: tuple[int, int, int],
                 raws: tuple[bytes, bytes, bytes], optional: dict[int, tuple[int, bytes]] | None = None
                 ) -> str | None:
    """A device's problems: ``dir_code`` (0, an errno, DIR_OUTSIDE); per mandatory
    attribute a code (0, an errno, MALFORMED, an ``AT_*`` code) with the bytes read; and
    ``optional``: for each flagged optional attribute (its index in OPTIONAL) its code
    and bytes.  None when all is well."""
    if dir_code == DIR_OUTSIDE:
        return f"{where}: link leads outside the root (not followed)"
    if dir_code:
        return f"{where}: cannot open: {why(dir_code)}"
    out = []
    for (name, _), code, raw in zip(MANDATORY, codes, raws):
        if code == MALFORMED:
            text = raw.decode("ascii", "replace").strip()
            out.append(f"{where}/{name}: malformed {text[:32]!r}")
        elif code:
            out.append(_attr_problem(where, name, code, raw))
    for k in sorted(optional or ()):
        code, raw = optional[k]
        out.append(_attr_problem(where, OPTIONAL[k], code, raw))
    return "; ".join(out) if out else None


def link_name(dir_fd: int, name: str, readlink=os.readlink) -> str | None:
    """The last component of a link's target (never followed), or None."""
    try:
        target = readlink(name, dir_fd=dir_fd)
    except OSError:
        return None  # absent, or not a link: either way no value
    return os.path.basename(target.rstrip("/")) or None
