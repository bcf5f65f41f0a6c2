/* Reading PCI device directories of sysfs: openat/read/readlinkat relative to a
   directory descriptor, never following an attribute that is a link; several
   threads per batch.  Called from sysfs.pxi with the GIL released. */
#ifndef GPUCLASS_SYSFS_H
#define GPUCLASS_SYSFS_H

#include "gpuclass_common.h"
#include "gpuclass_codes.h"

#if defined(__unix__) || defined(__APPLE__)
#define GPUCLASS_SYSFS_C 1
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif
#ifndef O_NOFOLLOW
#define O_NOFOLLOW 0
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif
#ifndef O_DIRECTORY
#define O_DIRECTORY 0
#endif
#ifndef O_NONBLOCK
#define O_NONBLOCK 0
#endif

#define GPUCLASS_LINK_MAX 4096
#define GPUCLASS_DRIVER_MAX 255

typedef struct {
    int64_t v[GPUCLASS_SV_N];    /* contract.sysfs.VALUE_COLUMNS */
    int dir_code;                /* 0, an errno (cannot open), -1 (outside the root) */
    int code[3];                 /* vendor, device, class: 0, an errno, -1 malformed */
    int raw_len[3];
    char raw[3][64];
    Py_ssize_t driver_len;       /* -1: no driver link; -2: a name too long for driver[] */
    char driver[GPUCLASS_DRIVER_MAX + 1];
} gpuclass_sysdev;

/* An attribute's bytes (at most 64) without following links: the length, or -errno. */
static int gpuclass_read_attr(int dfd, const char *name, char *buf) {
    int fd;
    ssize_t r;
    int e;
    /* O_NONBLOCK: a FIFO planted in a mounted root must not block the scan. */
    do { fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK); } while (fd < 0 && errno == EINTR);
    if (fd < 0) return -(errno ? errno : EIO);
    do { r = read(fd, buf, 64); } while (r < 0 && errno == EINTR);
    e = errno;
    close(fd);
    if (r < 0) return -(e ? e : EIO);
    return (int)r;
}

/* "0x" and 1..width hex digits, trailing newlines ignored: the value, or -1. */
static int64_t gpuclass_hex_attr(const char *s, int len, int width) {
    int64_t v = 0;
    while (len > 0 && s[len - 1] == '\n') len--;
    if (len <= 2 || len > width + 2 || s[0] != '0' || s[1] != 'x') return -1;
    for (int i = 2; i < len; i++) {
        int h = gpuclass_hex[(unsigned char)s[i]];
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

static int gpuclass_is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\x0b' || c == '\x0c';
}

/* An optional '-' and 1..10 decimal digits, blanks around: 1 and *out, or 0. */
static int gpuclass_dec_attr(const char *s, int len, int64_t *out) {
    int a = 0, b = len, neg;
    int64_t v = 0;
    while (a < b && gpuclass_is_blank(s[a])) a++;
    while (b > a && gpuclass_is_blank(s[b - 1])) b--;
    neg = a < b && s[a] == '-';
    a += neg;
    if (b - a <= 0 || b - a > 10) return 0;
    for (int i = a; i < b; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return 1;
}

static int gpuclass_dec_of(int dfd, const char *name, int64_t *out) {
    char buf[64];
    int r = gpuclass_read_attr(dfd, name, buf);
    return r >= 0 && gpuclass_dec_attr(buf, r, out);
}

static int64_t gpuclass_hex_of(int dfd, const char *name, int width) {
    char buf[64];
    int r = gpuclass_read_attr(dfd, name, buf);
    return r < 0 ? -1 : gpuclass_hex_attr(buf, r, width);
}

/* The last component of a link's target (never followed) into out: its length,
   -1 (no link, or an empty name) or -2 (longer than cap). */
static Py_ssize_t gpuclass_link_name(int dfd, const char *name, char *out, Py_ssize_t cap) {
    char t[GPUCLASS_LINK_MAX + 1];
    ssize_t r = readlinkat(dfd, name, t, GPUCLASS_LINK_MAX);
    ssize_t start;
    if (r < 0) return -1;
    while (r > 0 && t[r - 1] == '/') r--;
    start = r;
    while (start > 0 && t[start - 1] != '/') start--;
    if (r == start) return -1;
    if (r - start > cap) return -2;
    memcpy(out, t + start, (size_t)(r - start));
    return (Py_ssize_t)(r - start);
}

static int gpuclass_inside(const char *path, size_t plen, const char *root, size_t rlen) {
    if (rlen == 1 && root[0] == '/') return 1;
    if (plen < rlen || memcmp(path, root, rlen) != 0) return 0;
    return plen == rlen || path[rlen] == '/';
}

/* Does the open directory fd (the entry `where`) lie inside root? */
static int gpuclass_fd_inside(int fd, const char *where, const char *root, size_t rlen) {
    char proc[64], path[PATH_MAX + 1];
    ssize_t r;
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    r = readlink(proc, path, PATH_MAX);
    if (r < 0) {
        /* no /proc: resolve the entry's path instead, slower but the same answer */
        if (realpath(where, path) == NULL) return 0;
        r = (ssize_t)strlen(path);
    }
    return gpuclass_inside(path, (size_t)r, root, rlen);
}

#if defined(__linux__) && defined(SYS_openat2)
struct gpuclass_open_how { uint64_t flags, mode, resolve; };
static int gpuclass_have_openat2 = 1;  /* cleared when the kernel lacks it */
#endif

/* Open the device directory; 0 and *out, or an errno, or -1 (outside the root).
   openat2(RESOLVE_BENEATH) from the root proves "inside" in the same call;
   when it refuses for any reason (an absolute link, a path that leaves and
   comes back, an old kernel) the entry is opened as before and its resolved
   path checked, which decides every such case exactly as before. */
static int gpuclass_open_device(int dir_fd, int root_fd, const char *rel, const char *name,
                                const char *where, const char *root, size_t rlen, int *out) {
    int fd;
    int is_root = rlen == 1 && root[0] == '/';
#if defined(__linux__) && defined(SYS_openat2)
    if (!is_root && root_fd >= 0 && rel != NULL
            && __atomic_load_n(&gpuclass_have_openat2, __ATOMIC_RELAXED)) {
        struct gpuclass_open_how how;
        how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
        how.mode = 0;
        how.resolve = 0x08;  /* RESOLVE_BENEATH */
        do { fd = (int)syscall(SYS_openat2, root_fd, rel, &how, sizeof how); } while (fd < 0 && errno == EINTR);
        if (fd >= 0) { *out = fd; return 0; }
        if (errno == ENOSYS || errno == EPERM)
            __atomic_store_n(&gpuclass_have_openat2, 0, __ATOMIC_RELAXED);
    }
#endif
    do { fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC); } while (fd < 0 && errno == EINTR);
    if (fd < 0) return errno ? errno : EIO;
    if (!is_root && !gpuclass_fd_inside(fd, where, root, rlen)) { close(fd); return -1; }
    *out = fd;
    return 0;
}

static void gpuclass_read_device(int dir_fd, int root_fd, const char *rel, const char *name,
                                 const char *where, const char *root, size_t rlen,
                                 gpuclass_sysdev *d) {
    static const char *const mandatory[3] = {"vendor", "device", "class"};
    static const int width[3] = {4, 4, 6};
    static const int column[3] = {GPUCLASS_SV_VENDOR, GPUCLASS_SV_DEVICE, GPUCLASS_SV_CLASS_CODE};
    /* contract.sysfs.DEFAULTS */
    static const int64_t defaults[GPUCLASS_SV_N] = {0, 0, 0, 0, 0, 0, -1, 0, -1, -1, -1, -1};
    int fd = -1, problems = 0;
    int64_t x, flags = 0;
    char buf[64];
    memcpy(d->v, defaults, sizeof defaults);
    d->driver_len = -1;
    for (int k = 0; k < 3; k++) { d->code[k] = 0; d->raw_len[k] = 0; }
    d->dir_code = gpuclass_open_device(dir_fd, root_fd, rel, name, where, root, rlen, &fd);
    if (d->dir_code != 0) return;
    for (int k = 0; k < 3; k++) {
        int r = gpuclass_read_attr(fd, mandatory[k], buf);
        if (r < 0) { d->code[k] = -r; problems = 1; continue; }
        x = gpuclass_hex_attr(buf, r, width[k]);
        if (x < 0) {
            d->code[k] = -1;
            d->raw_len[k] = r;
            memcpy(d->raw[k], buf, (size_t)r);
            problems = 1;
        } else {
            d->v[column[k]] = x;
        }
    }
    x = gpuclass_hex_of(fd, "subsystem_vendor", 4);
    if (x >= 0) {
        int64_t sd = gpuclass_hex_of(fd, "subsystem_device", 4);
        if (sd >= 0) {
            d->v[GPUCLASS_SV_SUBVENDOR] = x;
            d->v[GPUCLASS_SV_SUBDEVICE] = sd;
            d->v[GPUCLASS_SV_HAS_SUBSYSTEM] = 1;
        }
    }
    x = gpuclass_hex_of(fd, "revision", 2);
    if (x >= 0) d->v[GPUCLASS_SV_REVISION] = x;
    if (gpuclass_dec_of(fd, "numa_node", &x) && x >= 0) d->v[GPUCLASS_SV_NUMA_NODE] = x;
    if (gpuclass_dec_of(fd, "sriov_totalvfs", &x) && x >= 0) {
        d->v[GPUCLASS_SV_SRIOV_TOTALVFS] = x;
        if (x > 0) flags |= GPUCLASS_FLAG_PF;
        if (gpuclass_dec_of(fd, "sriov_numvfs", &x) && x >= 0) d->v[GPUCLASS_SV_SRIOV_NUMVFS] = x;
    }
    if ((d->v[GPUCLASS_SV_CLASS_CODE] >> 16) == 0x03 && !problems && gpuclass_dec_of(fd, "boot_vga", &x) && x == 1)
        flags |= GPUCLASS_FLAG_BOOT_VGA;
    d->driver_len = gpuclass_link_name(fd, "driver", d->driver, GPUCLASS_DRIVER_MAX);
    {
        char g[16];
        Py_ssize_t n = gpuclass_link_name(fd, "iommu_group", g, 10);
        if (n > 0 && n <= 10) {
            int64_t v = 0;
            Py_ssize_t i;
            for (i = 0; i < n && g[i] >= '0' && g[i] <= '9'; i++) v = v * 10 + (g[i] - '0');
            if (i == n) d->v[GPUCLASS_SV_IOMMU_GROUP] = v;
        }
    }
    {
        char t[8];
        if (readlinkat(fd, "physfn", t, sizeof t) >= 0) flags |= GPUCLASS_FLAG_VF;
    }
    d->v[GPUCLASS_SV_FLAGS] = flags;
    close(fd);
}

/* Devices are independent, so a batch is shared out to a few threads (each
   takes the next device off a counter): the scan is all system calls, and
   those run in parallel on separate cores. */
typedef struct {
    int dir_fd, root_fd;
    const char *root;
    size_t rlen;
    const char *const *rel, *const *name, *const *where;
    gpuclass_sysdev *devs;
    Py_ssize_t n, next;
} gpuclass_sysjob;

static void *gpuclass_sysjob_run(void *arg) {
    gpuclass_sysjob *j = (gpuclass_sysjob *)arg;
    for (;;) {
        Py_ssize_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n) break;
        gpuclass_read_device(j->dir_fd, j->root_fd, j->rel ? j->rel[i] : NULL, j->name[i],
                             j->where[i], j->root, j->rlen, &j->devs[i]);
    }
    return NULL;
}

static void gpuclass_read_devices(int dir_fd, int root_fd, const char *const *rel,
                                  const char *const *name, const char *const *where,
                                  const char *root, size_t rlen, gpuclass_sysdev *devs,
                                  Py_ssize_t n, int threads) {
    gpuclass_sysjob j;
    pthread_t tid[16];
    int started = 0;
    j.dir_fd = dir_fd; j.root_fd = root_fd; j.root = root; j.rlen = rlen;
    j.rel = rel; j.name = name; j.where = where; j.devs = devs; j.n = n; j.next = 0;
    if (threads > 16) threads = 16;
    for (int t = 1; t < threads; t++)
        if (pthread_create(&tid[started], NULL, gpuclass_sysjob_run, &j) == 0) started++;
    gpuclass_sysjob_run(&j);  /* this thread works too; fewer helpers only means slower */
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
}
#else
#define GPUCLASS_SYSFS_C 0
typedef struct {
    int64_t v[GPUCLASS_SV_N]; int dir_code; int code[3]; int raw_len[3]; char raw[3][64];
    Py_ssize_t driver_len; char driver[256];
} gpuclass_sysdev;
static void gpuclass_read_devices(int dir_fd, int root_fd, const char *const *rel,
                                  const char *const *name, const char *const *where,
                                  const char *root, size_t rlen, gpuclass_sysdev *devs,
                                  Py_ssize_t n, int threads) {}
#endif

#endif
