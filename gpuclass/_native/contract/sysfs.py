"""The sysfs pair's contract: the value matrix, the problem texts, the checks both make.

``read_devices`` (``sysfs.pxi`` compiled, ``sysfs_py.py`` the twin) returns an
``(n, N_VALUES)`` int64 matrix with the columns ``VALUE_COLUMNS`` (defaults
``DEFAULTS`` where a device could not be read), the driver names and the problem
texts; both build those texts with :func:`problem_text`, so they agree to the byte.

>>> problem_text("/sys/bus/pci/devices/0000:01:00.0", 0, (2, 0, MALFORMED), (b"", b"", b"zz"))
"/sys/bus/pci/devices/0000:01:00.0/vendor: missing; /sys/bus/pci/devices/0000:01:00.0/class: malformed 'zz'"
"""

from __future__ import annotations

import errno
import os

__all__ = ["VALUE_COLUMNS", "N_VALUES", "DEFAULTS", "MANDATORY", "DIR_OUTSIDE", "MALFORMED",
           "DIRFLAGS", "why", "problem_text", "inside", "link_name"]

# Columns of read_devices' value matrix (int64).
VALUE_COLUMNS = ("vendor", "device", "subvendor", "subdevice", "has_subsystem", "class_code",
                 "revision", "flags", "numa_node", "iommu_group", "sriov_totalvfs", "sriov_numvfs")
N_VALUES = len(VALUE_COLUMNS)
# Defaults of a device that could not be read: 0 IDs, -1 small integers, no flags.
DEFAULTS = (0, 0, 0, 0, 0, 0, -1, 0, -1, -1, -1, -1)

MANDATORY = (("vendor", 4), ("device", 4), ("class", 6))
DIR_OUTSIDE = -1   # dir code: the entry resolves outside the root
MALFORMED = -1     # attribute code: read, but not 0x and 1..width hex digits

DIRFLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def why(code: int) -> str:
    """The reason for an errno, as problems print it."""
    if code == errno.ELOOP:
        return "is a symlink (refused)"
    return os.strerror(code)


def problem_text(where: str, dir_code: int, codes: tuple[int, int, int],
                 raws: tuple[bytes, bytes, bytes]) -> str | None:
    """A device's problems: ``dir_code`` (0, an errno, DIR_OUTSIDE) and per mandatory
    attribute a code (0, an errno, MALFORMED) with the bytes read; None when all is well."""
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
            out.append(f"{where}/{name}: " + ("missing" if code == errno.ENOENT
                                               else f"unreadable: {why(code)}"))
    return "; ".join(out) if out else None


def inside(path: str, root: str) -> bool:
    """Whether ``path`` (resolved) lies under ``root`` (resolved)."""
    return root == "/" or path == root or path.startswith(root + "/")


def link_name(dir_fd: int, name: str, readlink=os.readlink) -> str | None:
    """The last component of a link's target (never followed), or None."""
    try:
        target = readlink(name, dir_fd=dir_fd)
    except OSError:
        return None  # absent, or not a link: either way no value
    return os.path.basename(target.rstrip("/")) or None
