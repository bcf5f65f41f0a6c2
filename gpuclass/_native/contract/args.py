"""Argument checks shared by every kernel pair's ``def`` entry points.

Checks run in Python before any kernel so that the compiled core and the twin
reject exactly the same inputs with exactly the same error.

>>> as_key_array([1, 2]).dtype
dtype('uint64')
>>> as_key_array(np.array([-1]))
Traceback (most recent call last):
...
gpuclass.errors.InputError: keys: negative value -1 at index 0
"""

from __future__ import annotations

import math
import os

import numpy as np

from ...errors import InputError

__all__ = ["as_key_array", "check_sorted_keys", "as_id_array", "as_unsigned", "as_int64",
           "contiguous", "usable_cpus", "cgroup_cpu_limit"]

_UNSIGNED = (np.uint8, np.uint16, np.uint32, np.uint64)


def as_key_array(values, name: str = "keys") -> np.ndarray:
    """A 1-D unsigned integer array: unsigned input as is, other integers range-checked."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        if arr.ndim == 0:
            arr = arr.reshape(1)
        else:
            raise InputError(f"{name}: expected a 1-D array, got shape {arr.shape}")
    if arr.dtype.type in _UNSIGNED:
        return arr
    if arr.size == 0:
        return arr.astype(np.uint64)
    if arr.dtype.kind != "i":
        raise InputError(f"{name}: expected an integer array, got dtype {arr.dtype}")
    lo = int(arr.min())
    if lo < 0:
        at = int(np.argmin(arr))
        raise InputError(f"{name}: negative value {lo} at index {at}")
    return arr.astype(np.uint64)


def as_unsigned(values, name: str, dtype, limit: int) -> np.ndarray:
    """A 1-D array as ``dtype``: kept as is when it already has that dtype, else
    range-checked against ``limit`` and converted."""
    arr = as_key_array(values, name)
    if arr.dtype == dtype:
        return arr
    if arr.size and int(arr.max()) > limit:
        at = int(np.argmax(arr))
        raise InputError(f"{name}: value {int(arr[at]):#x} at index {at} exceeds {limit:#x}")
    return arr.astype(dtype)


def as_id_array(values, name: str, bits: int = 16) -> np.ndarray:
    """A 1-D array of IDs of ``bits`` bits (16: vendor/device; 24: class), as uint16/uint32."""
    return as_unsigned(values, name, np.uint16 if bits <= 16 else np.uint32, (1 << bits) - 1)


def check_sorted_keys(keys) -> np.ndarray:
    """Sorted, unique, unsigned keys for an index (a contiguous copy when needed)."""
    arr = as_key_array(keys, "keys")
    if arr.size > 1 and not bool(np.all(arr[1:] > arr[:-1])):
        raise InputError("keys: must be sorted in strictly increasing order")
    return contiguous(arr)


def as_int64(values, name: str) -> np.ndarray:
    """A 1-D int64 array of group ids (zero-copy for int64)."""
    arr = np.asarray(values)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise InputError(f"{name}: expected a 1-D array, got shape {arr.shape}")
    if arr.dtype == np.int64:
        return arr
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iu" and arr.dtype != np.bool_:
        raise InputError(f"{name}: expected an integer array, got dtype {arr.dtype}")
    if arr.dtype == np.uint64 and int(arr.max()) > 0x7FFFFFFFFFFFFFFF:
        at = int(np.argmax(arr))
        raise InputError(f"{name}: value {int(arr[at])} at index {at} exceeds the int64 range")
    return arr.astype(np.int64)


def contiguous(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous, aligned array: zero-copy when it is one, one copy (never per
    row) if not.  An unaligned array (a view at an odd offset of a buffer, such as a
    memory-mapped file) would make the kernels' 64-bit loads misaligned."""
    if a.flags.c_contiguous and a.flags.aligned:
        return a
    return np.require(a, requirements=("C", "A"))


#: Where the cgroup hierarchies are mounted, and this process's cgroups (tests point these
#: at a made-up tree).
CGROUP_ROOT = "/sys/fs/cgroup"
PROC_CGROUP = "/proc/self/cgroup"


def _read_quota(directory: str, v2: bool) -> float | None:
    """The CPUs one cgroup's quota allows (None: no quota, or no readable files there)."""
    try:
        if v2:
            with open(os.path.join(directory, "cpu.max")) as f:
                quota, period = f.read().split()[:2]
            if quota == "max":
                return None
        else:
            with open(os.path.join(directory, "cpu.cfs_quota_us")) as f:
                quota = f.read().strip()
            with open(os.path.join(directory, "cpu.cfs_period_us")) as f:
                period = f.read().strip()
        q, t = int(quota), int(period)
    except (OSError, ValueError):
        return None
    return q / t if q > 0 and t > 0 else None


def cgroup_cpu_limit(root: str | None = None, proc: str | None = None) -> float | None:
    """The CPUs that a CPU quota on this process's cgroups allows (cgroup v2 ``cpu.max``,
    v1 ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``), the tightest of its own cgroup and
    those above it; None where none sets one (or none can be read).  A container's CPU
    limit is such a quota, and its affinity mask still shows every CPU of the machine.  A
    cgroup path that this mount does not show (a container's view) is looked up from the
    mount's top, which is then the container's own cgroup."""
    root = CGROUP_ROOT if root is None else root
    try:
        with open(PROC_CGROUP if proc is None else proc) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    limits = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            base, v2 = root, True
        elif "cpu" in controllers.split(","):
            base, v2 = os.path.join(root, controllers), False
            if not os.path.isdir(base):
                base = os.path.join(root, "cpu")
        else:
            continue
        at = "/" + path.strip("/")
        while True:
            here = os.path.join(base, at.lstrip("/"))
            if os.path.isdir(here):
                limit = _read_quota(here, v2)
                if limit is not None:
                    limits.append(limit)
            if at == "/":
                break
            at = os.path.dirname(at)
    return min(limits) if limits else None


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask (where the platform has one),
    at most what a cgroup CPU quota allows (rounded up), which is what a kernel that shares
    its work out to threads can use."""
    try:
        cpus = len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no sched_getaffinity on this platform
        cpus = os.cpu_count() or 1
    limit = cgroup_cpu_limit()
    if limit is not None:
        cpus = min(cpus, max(1, math.ceil(limit)))
    return cpus
