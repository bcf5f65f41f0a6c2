# sysfs attribute reading, included into gpuclass/_core.pyx (twin: sysfs_py.py;
# contract: contract/sysfs.py, the value columns and problem texts both use).
#
# read_devices() walks the device directories in C: per device one openat of
# the entry, one readlink of /proc/self/fd/N to check that it resolves inside
# the root, then openat(O_NOFOLLOW)/read/close per attribute and readlinkat per
# link, all relative to the directory's fd and with the GIL released; the hex
# and decimal attributes are parsed in C (include/gpuclass_sysfs.h).  The twin does
# the same in Python.

import errno

from libc.stdlib cimport free, malloc
from os import close as os_close, cpu_count as os_cpu_count, fsdecode as os_fsdecode
from os import fsencode as os_fsencode, open as os_open
try:
    from os import sched_getaffinity as os_sched_getaffinity
except ImportError:  # not on every platform
    os_sched_getaffinity = None

from gpuclass._native.contract import sysfs as _SYS

cdef enum:
    SYS_BATCH = 1024  # devices per batch: bounds the memory of a call, whatever the tree's size


cdef int scan_threads(Py_ssize_t n):
    """Threads for n devices: one per 64 devices, at most the usable CPUs and 8."""
    try:
        cpus = len(os_sched_getaffinity(0))
    except (TypeError, OSError):  # no sched_getaffinity here
        cpus = os_cpu_count() or 1
    return <int> max(1, min(cpus, 8, n // 64))


def read_devices(int dir_fd, names, devdir, root):
    """Read the devices ``names`` of the open devices directory ``dir_fd`` (see the twin)."""
    if not GPUCLASS_SYSFS_C:  # no POSIX *at() calls on this platform, and no sysfs either
        raise OSError(errno.ENOSYS, "reading sysfs needs a POSIX system")
    cdef Py_ssize_t n = len(names), i, k, base, m
    values = np.empty((n, SV_N), dtype=np.int64)
    cdef int64_t[:, ::1] out = values
    drivers = [None] * n
    problems = [None] * n
    cdef bytes root_b = os_fsencode(root)
    cdef const char* c_root = root_b
    cdef size_t rlen = len(root_b)
    # The devices directory relative to the root, for openat2 (None: not under it).
    prefix = None
    if root != "/" and devdir.startswith(root + "/"):
        prefix = devdir[len(root) + 1:] + "/"
    cdef int root_fd = -1
    if prefix is not None:
        try:
            root_fd = os_open(root, _SYS.DIRFLAGS)
        except OSError:
            root_fd = -1
    cdef int threads = scan_threads(n)
    cdef SysDev* devs = <SysDev*> malloc(SYS_BATCH * sizeof(SysDev))
    cdef const char** c_name = <const char**> malloc(SYS_BATCH * sizeof(char*))
    cdef const char** c_where = <const char**> malloc(SYS_BATCH * sizeof(char*))
    cdef const char** c_rel = <const char**> malloc(SYS_BATCH * sizeof(char*))
    cdef SysDev* d
    try:
        if devs == NULL or c_name == NULL or c_where == NULL or c_rel == NULL:
            raise MemoryError("read_devices: no memory")
        seen = {}  # driver names repeat: decode each once
        for base in range(0, n, SYS_BATCH):
            m = min(SYS_BATCH, n - base)
            # the bytes objects live in these lists while C reads their buffers
            b_name = [os_fsencode(names[base + i]) for i in range(m)]
            wheres = [f"{devdir}/{names[base + i]}" for i in range(m)]
            b_where = [os_fsencode(w) for w in wheres]
            b_rel = [os_fsencode(prefix + names[base + i]) for i in range(m)] if root_fd >= 0 else None
            for i in range(m):
                c_name[i] = <bytes> b_name[i]
                c_where[i] = <bytes> b_where[i]
                if b_rel is not None:
                    c_rel[i] = <bytes> b_rel[i]
            with nogil:
                gpuclass_read_devices(dir_fd, root_fd, c_rel if root_fd >= 0 else NULL, c_name,
                                      c_where, c_root, rlen, devs, m, threads)
            for i in range(m):
                d = &devs[i]
                for k in range(SV_N):
                    out[base + i, k] = d.v[k]
                if d.driver_len >= 0:
                    raw = d.driver[:d.driver_len]
                    drv = seen.get(raw)
                    if drv is None:
                        drv = seen[raw] = os_fsdecode(raw)
                    drivers[base + i] = drv
                elif d.driver_len == -2:  # a name too long for the buffer: read it again here
                    drivers[base + i] = _SYS.link_name(dir_fd, f"{names[base + i]}/driver")
                if d.dir_code != 0 or d.code[0] != 0 or d.code[1] != 0 or d.code[2] != 0:
                    raws = (d.raw[0][:d.raw_len[0]], d.raw[1][:d.raw_len[1]],
                            d.raw[2][:d.raw_len[2]])
                    problems[base + i] = _SYS.problem_text(
                        wheres[i], d.dir_code, (d.code[0], d.code[1], d.code[2]), raws)
    finally:
        free(devs)
        free(c_name)
        free(c_where)
        free(c_rel)
        if root_fd >= 0:
            os_close(root_fd)
    return values, drivers, problems
