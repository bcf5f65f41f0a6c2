/* Reading PCI device directories of sysfs: openat/read/readlinkat relative to a
   directory descriptor, never leaving the root (openat2 RESOLVE_BENEATH, or the same
   walk in user space), opening only regular files as attributes (never a FIFO or a
   device node), never following an attribute that is a link, reading at most 64
   bytes; several threads per batch.  Called from sysfs.pxi with the GIL released. */
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
#ifndef O_NOCTTY
#define O_NOCTTY 0
#endif

#if defined(__linux__)
#include <sys/vfs.h>
#define GPUCLASS_SYSFS_MAGIC 0x62656572
#endif
#include <sys/stat.h>

#define GPUCLASS_LINK_MAX 4096
#define GPUCLASS_DRIVER_MAX 255
#define GPUCLASS_OPT_RAW 32
#define GPUCLASS_WALK_MAX 64    /* directories below the root one path may descend */
#define GPUCLASS_LINKS_MAX 40   /* symlinks one path may take, as the kernel allows */

typedef struct {
    int64_t v[GPUCLASS_SV_N];    /* contract.sysfs.VALUE_COLUMNS */
    int dir_code;                /* 0, an errno (cannot open), -1 (outside the root) */
    int code[3];                 /* vendor, device, class: 0, an errno, -1 malformed, GPUCLASS_AT_* */
    int raw_len[3];
    char raw[3][64];
    int ocode[GPUCLASS_OPT_N];   /* optional attributes: 0, or an errno / GPUCLASS_AT_* flagged */
    int oraw_len[GPUCLASS_OPT_N];
    char oraw[GPUCLASS_OPT_N][GPUCLASS_OPT_RAW];
    Py_ssize_t driver_len;       /* -1: no driver link; -2: a name too long for driver[] */
    char driver[GPUCLASS_DRIVER_MAX + 1];
} gpuclass_sysdev;

/* What a file that is not a regular file is, as a negative attribute code. */
static int gpuclass_mode_code(mode_t m) {
    if (S_ISLNK(m)) return -ELOOP;
    if (S_ISDIR(m)) return -EISDIR;
    if (S_ISFIFO(m)) return -GPUCLASS_AT_FIFO;
    if (S_ISCHR(m)) return -GPUCLASS_AT_CHR;
    if (S_ISBLK(m)) return -GPUCLASS_AT_BLK;
    if (S_ISSOCK(m)) return -GPUCLASS_AT_SOCK;
    return -GPUCLASS_AT_OTHER;
}

/* Open an attribute for reading without following a link, only if it is a regular file:
   the fd, or a negative errno / attribute code.  `safe` (any tree but a sysfs mount,
   where the kernel alone makes the files): lstat it first and open it only when it is
   a regular file, so that a FIFO or a device node planted in the tree is never opened.
   The open is non-blocking and never takes a terminal, so that even a file swapped in
   between the look and the open cannot hang the scan; closing that window too (an
   O_PATH look reopened through /proc) tripled the cost of a scan. */
static int gpuclass_open_attr(int dfd, const char *name, int safe) {
    int fd;
    struct stat st;
    if (safe) {
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return -(errno ? errno : EIO);
        if (!S_ISREG(st.st_mode)) return gpuclass_mode_code(st.st_mode);
    }
    do { fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY); } while (fd < 0 && errno == EINTR);
    return fd < 0 ? -(errno ? errno : EIO) : fd;
}

/* An attribute's bytes (at most 64): the length, or a negative errno / attribute code. */
static int gpuclass_read_attr(int dfd, const char *name, char *buf, int safe) {
    int fd = gpuclass_open_attr(dfd, name, safe);
    ssize_t r;
    int e;
    if (fd < 0) return fd;
    do { r = read(fd, buf, 64); } while (r < 0 && errno == EINTR);
    e = errno;
    close(fd);
    if (r < 0) return -(e ? e : EIO);
    return (int)r;
}

/* Whether a failed read is a flagged fact (not a regular file) rather than an absent value. */
static int gpuclass_flagged(int r) {
    return r == -ELOOP || r == -EISDIR || (r <= -GPUCLASS_AT_FIFO && r >= -GPUCLASS_AT_OTHER);
}

/* "0x" and 1..width hex digits, trailing newlines ignored: the value, or -1.  The kernel
   writes these attributes as "0x%04x\n" (or %02x, %06x): a file format of its own, which
   demands the 0x and takes no blanks or brackets, so it is not the cell grammar of
   gpuclass_cell.h; its digits are the one table's (gpuclass_hex.h). */
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

/* An optional '-' and decimal digits, blanks around: 1 and *out when it fits an int32,
   2 when it does not (out of range), 0 when it is not a number. */
static int gpuclass_dec_attr(const char *s, int len, int64_t *out) {
    int a = 0, b = len, neg, sig = 0;
    int64_t v = 0;
    while (a < b && gpuclass_is_blank(s[a])) a++;
    while (b > a && gpuclass_is_blank(s[b - 1])) b--;
    neg = a < b && s[a] == '-';
    a += neg;
    if (b - a <= 0) return 0;
    for (int i = a; i < b; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        if (sig || s[i] != '0') sig++;
        if (sig <= 10) v = v * 10 + (s[i] - '0');
    }
    if (sig > 10 || v > (neg ? 2147483648LL : 2147483647LL)) return 2;
    *out = neg ? -v : v;
    return 1;
}

/* Keep the bytes of a flagged optional attribute (blanks around removed) for its problem text. */
static void gpuclass_keep_raw(gpuclass_sysdev *d, int k, const char *s, int len) {
    int a = 0, b = len;
    while (a < b && gpuclass_is_blank(s[a])) a++;
    while (b > a && gpuclass_is_blank(s[b - 1])) b--;
    if (b - a > GPUCLASS_OPT_RAW) b = a + GPUCLASS_OPT_RAW;
    memcpy(d->oraw[k], s + a, (size_t)(b - a));
    d->oraw_len[k] = b - a;
}

/* A decimal optional attribute: 1 and *out, or 0 (absent, malformed or flagged: then
   d->ocode[k] says why; 2 when it was out of range). */
static int gpuclass_dec_of(gpuclass_sysdev *d, int k, int dfd, const char *name, int64_t *out, int safe) {
    char buf[64];
    int r = gpuclass_read_attr(dfd, name, buf, safe), ok;
    if (r < 0) {
        if (gpuclass_flagged(r)) d->ocode[k] = -r;
        return 0;
    }
    ok = gpuclass_dec_attr(buf, r, out);
    if (ok == 2) {
        d->ocode[k] = GPUCLASS_AT_RANGE;
        gpuclass_keep_raw(d, k, buf, r);
        return 2;
    }
    return ok;
}

static int64_t gpuclass_hex_of(gpuclass_sysdev *d, int k, int dfd, const char *name, int width, int safe) {
    char buf[64];
    int r = gpuclass_read_attr(dfd, name, buf, safe);
    if (r < 0) {
        if (gpuclass_flagged(r)) d->ocode[k] = -r;
        return -1;
    }
    return gpuclass_hex_attr(buf, r, width);
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

/* The iommu_group link's name as a number: the kernel names groups 0, 1, ...; a name of
   digits past an int32 is flagged, any other name is no group. */
static void gpuclass_iommu_group(gpuclass_sysdev *d, int dfd) {
    char g[GPUCLASS_LINK_MAX + 1];
    Py_ssize_t n = gpuclass_link_name(dfd, "iommu_group", g, GPUCLASS_LINK_MAX);
    int64_t v = 0;
    int sig = 0;
    if (n <= 0) return;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (g[i] < '0' || g[i] > '9') return;
        if (sig || g[i] != '0') sig++;
        if (sig <= 10) v = v * 10 + (g[i] - '0');
    }
    if (sig > 10 || v > 2147483647LL) {
        d->ocode[GPUCLASS_OPT_IOMMU_GROUP] = GPUCLASS_AT_RANGE;
        gpuclass_keep_raw(d, GPUCLASS_OPT_IOMMU_GROUP, g, (int)(n > 64 ? 64 : n));
        return;
    }
    d->v[GPUCLASS_SV_IOMMU_GROUP] = v;
}

#if defined(__linux__) && defined(SYS_openat2)
struct gpuclass_open_how { uint64_t flags, mode, resolve; };
static int gpuclass_have_openat2 = 1;  /* cleared when the kernel (or a sandbox) refuses it */
#endif

/* Resolve `name` from the last directory of `chain` (the open directories from the root
   down), never leaving the root: ".." pops the chain and popping the root is outside, an
   absolute link is outside, other links are read and spliced in (at most 40).  Nothing
   above the root is ever looked up.  0 and *out, an errno, or -1 (outside the root).
   The same walk as inputs.walk_beneath, the twin's. */
static int gpuclass_walk(const int *chain, int depth, const char *name, int *out) {
    int stack[GPUCLASS_WALK_MAX + 8], own[GPUCLASS_WALK_MAX + 8];
    char buf[2][2 * GPUCLASS_LINK_MAX + 2], comp[256], t[GPUCLASS_LINK_MAX + 1];
    int n = depth, cur = 0, links = 0, rc = 0, fd, e;
    size_t len = strlen(name), cl, rl;
    const char *p, *slash;
    ssize_t r;
    if (depth < 1 || depth > GPUCLASS_WALK_MAX) return EINVAL;
    if (len >= sizeof buf[0]) return ENAMETOOLONG;
    for (int i = 0; i < n; i++) { stack[i] = chain[i]; own[i] = 0; }
    memcpy(buf[0], name, len + 1);
    p = buf[0];
    for (;;) {
        while (*p == '/') p++;
        if (!*p) break;
        slash = strchr(p, '/');
        cl = slash ? (size_t)(slash - p) : strlen(p);
        if (cl >= sizeof comp) { rc = ENAMETOOLONG; break; }
        memcpy(comp, p, cl);
        comp[cl] = 0;
        p += cl;
        if (cl == 1 && comp[0] == '.') continue;
        if (cl == 2 && comp[0] == '.' && comp[1] == '.') {
            if (n == 1) { rc = -1; break; }
            n--;
            if (own[n]) close(stack[n]);
            continue;
        }
        do { fd = openat(stack[n - 1], comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); } while (fd < 0 && errno == EINTR);
        if (fd >= 0) {
            if (n >= GPUCLASS_WALK_MAX) { close(fd); rc = ENAMETOOLONG; break; }
            stack[n] = fd;
            own[n] = 1;
            n++;
            continue;
        }
        e = errno ? errno : EIO;
        if (e != ELOOP && e != ENOTDIR && e != EMLINK) { rc = e; break; }
        r = readlinkat(stack[n - 1], comp, t, GPUCLASS_LINK_MAX);
        if (r < 0) { rc = e; break; }
        if (r >= GPUCLASS_LINK_MAX) { rc = ENAMETOOLONG; break; }
        if (++links > GPUCLASS_LINKS_MAX) { rc = ELOOP; break; }
        if (r > 0 && t[0] == '/') { rc = -1; break; }
        rl = strlen(p);
        if ((size_t)r + 1 + rl + 1 > sizeof buf[0]) { rc = ENAMETOOLONG; break; }
        memcpy(buf[1 - cur], t, (size_t)r);
        buf[1 - cur][r] = '/';
        memcpy(buf[1 - cur] + r + 1, p, rl + 1);
        cur = 1 - cur;
        p = buf[cur];
    }
    if (rc == 0) {
        if (own[n - 1]) { *out = stack[n - 1]; own[n - 1] = 0; }
        else if ((*out = dup(stack[n - 1])) < 0) rc = errno ? errno : EIO;
    }
    for (int i = 0; i < n; i++) if (own[i]) close(stack[i]);
    return rc;
}

/* Open the device directory; 0 and *out, or an errno, or -1 (outside the root).
   Without a chain (the root is "/") nothing can lead outside.  With one,
   openat2(RESOLVE_BENEATH) from the root resolves the entry inside the root in one
   call, and refuses (EXDEV) without looking above it; where the kernel or a sandbox
   lacks openat2 the same walk is made in user space. */
static int gpuclass_open_device(int dir_fd, const int *chain, int depth, const char *rel,
                                const char *name, int *out) {
    int fd;
    if (chain == NULL) {
        do { fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC); } while (fd < 0 && errno == EINTR);
        if (fd < 0) return errno ? errno : EIO;
        *out = fd;
        return 0;
    }
#if defined(__linux__) && defined(SYS_openat2)
    if (rel != NULL && __atomic_load_n(&gpuclass_have_openat2, __ATOMIC_RELAXED)) {
        struct gpuclass_open_how how;
        how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
        how.mode = 0;
        how.resolve = 0x08 | 0x02;  /* RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS */
        do { fd = (int)syscall(SYS_openat2, chain[0], rel, &how, sizeof how); } while (fd < 0 && errno == EINTR);
        if (fd >= 0) { *out = fd; return 0; }
        if (errno == EXDEV) return -1;
        if (errno != ENOSYS && errno != EPERM && errno != EINVAL && errno != EAGAIN)
            return errno ? errno : EIO;
        if (errno == ENOSYS || errno == EPERM)
            __atomic_store_n(&gpuclass_have_openat2, 0, __ATOMIC_RELAXED);
    }
#endif
    return gpuclass_walk(chain, depth, name, out);
}

static void gpuclass_read_device(int dir_fd, const int *chain, int depth, const char *rel,
                                 const char *name, gpuclass_sysdev *d) {
    static const char *const mandatory[3] = {"vendor", "device", "class"};
    static const int width[3] = {4, 4, 6};
    static const int column[3] = {GPUCLASS_SV_VENDOR, GPUCLASS_SV_DEVICE, GPUCLASS_SV_CLASS_CODE};
    /* contract.sysfs.DEFAULTS */
    static const int64_t defaults[GPUCLASS_SV_N] = {0, 0, 0, 0, 0, 0, -1, 0, -1, -1, -1, -1};
    int fd = -1, problems = 0, safe = 1;
    int64_t x, flags = 0;
    char buf[64];
    memcpy(d->v, defaults, sizeof defaults);
    d->driver_len = -1;
    for (int k = 0; k < 3; k++) { d->code[k] = 0; d->raw_len[k] = 0; }
    for (int k = 0; k < GPUCLASS_OPT_N; k++) { d->ocode[k] = 0; d->oraw_len[k] = 0; }
    d->dir_code = gpuclass_open_device(dir_fd, chain, depth, rel, name, &fd);
    if (d->dir_code != 0) return;
#if defined(__linux__)
    {
        /* A sysfs mount holds only the kernel's files: no FIFO or device node can be
           planted there, so its attributes are opened directly. */
        struct statfs sf;
        if (fstatfs(fd, &sf) == 0 && (unsigned long)sf.f_type == GPUCLASS_SYSFS_MAGIC) safe = 0;
    }
#endif
    for (int k = 0; k < 3; k++) {
        int r = gpuclass_read_attr(fd, mandatory[k], buf, safe);
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
    x = gpuclass_hex_of(d, GPUCLASS_OPT_SUBSYSTEM_VENDOR, fd, "subsystem_vendor", 4, safe);
    if (x >= 0) {
        int64_t sd = gpuclass_hex_of(d, GPUCLASS_OPT_SUBSYSTEM_DEVICE, fd, "subsystem_device", 4, safe);
        if (sd >= 0) {
            d->v[GPUCLASS_SV_SUBVENDOR] = x;
            d->v[GPUCLASS_SV_SUBDEVICE] = sd;
            d->v[GPUCLASS_SV_HAS_SUBSYSTEM] = 1;
        }
    }
    x = gpuclass_hex_of(d, GPUCLASS_OPT_REVISION, fd, "revision", 2, safe);
    if (x >= 0) d->v[GPUCLASS_SV_REVISION] = x;
    if (gpuclass_dec_of(d, GPUCLASS_OPT_NUMA_NODE, fd, "numa_node", &x, safe) == 1 && x >= 0)
        d->v[GPUCLASS_SV_NUMA_NODE] = x;
    {
        /* sriov_numvfs is read where sriov_totalvfs is a number (out of range: only to flag it) */
        int t = gpuclass_dec_of(d, GPUCLASS_OPT_SRIOV_TOTALVFS, fd, "sriov_totalvfs", &x, safe);
        int pf = t == 1 && x >= 0;
        if (pf) {
            d->v[GPUCLASS_SV_SRIOV_TOTALVFS] = x;
            if (x > 0) flags |= GPUCLASS_FLAG_PF;
        }
        if ((pf || t == 2) && gpuclass_dec_of(d, GPUCLASS_OPT_SRIOV_NUMVFS, fd, "sriov_numvfs", &x, safe) == 1
                && x >= 0 && pf)
            d->v[GPUCLASS_SV_SRIOV_NUMVFS] = x;
    }
    if ((d->v[GPUCLASS_SV_CLASS_CODE] >> 16) == 0x03 && !problems
            && gpuclass_dec_of(d, GPUCLASS_OPT_BOOT_VGA, fd, "boot_vga", &x, safe) == 1 && x == 1)
        flags |= GPUCLASS_FLAG_BOOT_VGA;
    d->driver_len = gpuclass_link_name(fd, "driver", d->driver, GPUCLASS_DRIVER_MAX);
    gpuclass_iommu_group(d, fd);
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
    int dir_fd, depth;
    const int *chain;
    const char *const *rel, *const *name;
    gpuclass_sysdev *devs;
    Py_ssize_t n, next;
} gpuclass_sysjob;

static void *gpuclass_sysjob_run(void *arg) {
    gpuclass_sysjob *j = (gpuclass_sysjob *)arg;
    for (;;) {
        Py_ssize_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n) break;
        gpuclass_read_device(j->dir_fd, j->chain, j->depth, j->rel ? j->rel[i] : NULL, j->name[i],
                             &j->devs[i]);
    }
    return NULL;
}

/* `chain`: the open directories from the root down to the devices directory (NULL when
   the root is "/"); `rel`: each entry's path from the root, for openat2. */
static void gpuclass_read_devices(int dir_fd, const int *chain, int depth, const char *const *rel,
                                  const char *const *name, gpuclass_sysdev *devs,
                                  Py_ssize_t n, int threads) {
    gpuclass_sysjob j;
    pthread_t tid[16];
    int started = 0;
    j.dir_fd = dir_fd; j.chain = chain; j.depth = depth;
    j.rel = rel; j.name = name; j.devs = devs; j.n = n; j.next = 0;
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
    int ocode[GPUCLASS_OPT_N]; int oraw_len[GPUCLASS_OPT_N]; char oraw[GPUCLASS_OPT_N][32];
    Py_ssize_t driver_len; char driver[256];
} gpuclass_sysdev;
static void gpuclass_read_devices(int dir_fd, const int *chain, int depth, const char *const *rel,
                                  const char *const *name, gpuclass_sysdev *devs,
                                  Py_ssize_t n, int threads) {}
#endif

#endif
