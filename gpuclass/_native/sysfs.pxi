# sysfs attribute reading, included into gpuclass/_core.pyx (twin: sysfs_py.py;
# contract: contract/sysfs.py, the value columns and problem texts both use).
#
# read_devices() walks the device directories in C: per device one
# openat2(RESOLVE_BENEATH) of the entry from the root (or the same walk in user
# space), then per attribute an open of a regular file only (never a FIFO or a
# device node), a read of at most 64 bytes and a close, and readlinkat per link,
# all relative to the directory's fd and with the GIL released; the hex and
# decimal attributes are parsed in C (include/gpuclass_sysfs.h).  The twin does
# the same in Python.

import errno

from libc.stdlib cimport free, malloc
from os import fsdecode as os_fsdecode
from os import fsencode as os_fsencode

from gpuclass._native.contract import args as _ARGS
from gpuclass._native.contract import sysfs as _SYS

cdef enum:
    SYS_BATCH = 1024  # devices per batch: bounds the memory of a call, whatever the tree's size


cdef int scan_threads(Py_ssize_t n):
    """Threads for n devices: one per 64 devices, at most the usable CPUs and 8."""
    if n < 128:
        return 1
    return <int> max(1, min(_ARGS.usable_cpus(), 8, n // 64))


def read_devices(int dir_fd, names, devdir, root):
    """Read the devices ``names`` of the open devices directory ``dir_fd`` (see the twin)."""
    if not GPUCLASS_SYSFS_C:  # no POSIX *at() calls on this platform, and no sysfs either
        raise OSError(errno.ENOSYS, "reading sysfs needs a POSIX system")
    cdef Py_ssize_t n = len(names), i, k, base, m
    values = np.empty((n, SV_N), dtype=np.int64)
    cdef int64_t[:, ::1] out = values
    drivers = [None] * n
    problems = [None] * n
    # The root's open directories down to the devices directory (none: the root is "/").
    cdef int depth = 0
    cdef int c_chain[64]
    prefix = None
    if root is not None:
        depth = len(root.chain)
        if not 0 < depth <= 64:
            raise ValueError("read_devices: the root chain holds 1 to 64 directories")
        for k in range(depth):
            c_chain[k] = root.chain[k]
        # rel None: resolve by the user-space walk alone (tests hold it to openat2's answers)
        prefix = None if root.rel is None else root.rel.rstrip("/") + "/"
    cdef int threads = scan_threads(n)
    cdef SysDev* devs = <SysDev*> malloc(SYS_BATCH * sizeof(SysDev))
    cdef const char** c_name = <const char**> malloc(SYS_BATCH * sizeof(char*))
    cdef const char** c_rel = <const char**> malloc(SYS_BATCH * sizeof(char*))
    cdef SysDev* d
    try:
        if devs == NULL or c_name == NULL or c_rel == NULL:
            raise MemoryError("read_devices: no memory")
        seen = {}  # driver names repeat: decode each once
        for base in range(0, n, SYS_BATCH):
            m = min(SYS_BATCH, n - base)
            # the bytes objects live in these lists while C reads their buffers
            b_name = [os_fsencode(names[base + i]) for i in range(m)]
            b_rel = [os_fsencode(prefix + names[base + i]) for i in range(m)] if prefix is not None else None
            for i in range(m):
                c_name[i] = <bytes> b_name[i]
                if b_rel is not None:
                    c_rel[i] = <bytes> b_rel[i]
            with nogil:
                gpuclass_read_devices(dir_fd, c_chain if depth else NULL, depth,
                                      c_rel if b_rel is not None else NULL, c_name, devs, m, threads)
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
                bad = None
                for k in range(OPT_N):
                    if d.ocode[k] != 0:
                        if bad is None:
                            bad = {}
                        bad[k] = (d.ocode[k], d.oraw[k][:d.oraw_len[k]])
                if d.dir_code != 0 or d.code[0] != 0 or d.code[1] != 0 or d.code[2] != 0 or bad:
                    raws = (d.raw[0][:d.raw_len[0]], d.raw[1][:d.raw_len[1]],
                            d.raw[2][:d.raw_len[2]])
                    problems[base + i] = _SYS.problem_text(
                        f"{devdir}/{names[base + i]}", d.dir_code, (d.code[0], d.code[1], d.code[2]),
                        raws, bad)
    finally:
        free(devs)
        free(c_name)
        free(c_rel)
    return values, drivers, problems
