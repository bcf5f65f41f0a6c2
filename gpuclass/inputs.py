"""Opening what a user names as input: a regular file or ``-`` (standard input), bounded.

Every file gpuclass reads on a user's behalf (the database, policies, manifests,
hardware reports, lspci dumps, audit inputs) is opened here.  A FIFO, a device
(``/dev/zero``, ``/dev/urandom``), a directory or a socket is refused at once with a
:class:`~gpuclass.errors.SourceError` that says what it is, before a single byte is
read, so nothing hangs and nothing reads forever.  Whole-file reads are bounded:
past the limit the read stops with an error naming the file and the limit.

The open never blocks: a FIFO is opened non-blocking, recognised by ``fstat``
and closed.  Standard input is read once: a second option naming ``-`` in the
same process is an error rather than an empty read.

Files of a *machine* (a mounted root: its ``sys/``, ``proc/``, ``dev/``) are
opened with :func:`open_beneath` / :func:`read_beneath`: every component is
resolved inside the root, symlinks included, so that nothing outside the root
is ever opened (not even a directory to check where it is); a file must be
a regular file, and is opened only once ``lstat`` says so, so that a device
node inside the root is never opened.

>>> import tempfile, os, pathlib
>>> d = tempfile.mkdtemp()
>>> read_input(d, "policy")
Traceback (most recent call last):
...
gpuclass.errors.NotAFileError: ...: policy is a directory, not a regular file
>>> p = os.path.join(d, "x.txt"); _ = pathlib.Path(p).write_text("hello")
>>> read_input(p, "text")
b'hello'
>>> read_input(p, "text", limit=4)
Traceback (most recent call last):
...
gpuclass.errors.SourceError: ...x.txt: text is larger than 4 bytes (the limit for this input)
"""

from __future__ import annotations

import errno
import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

from .errors import NotAFileError, SourceError

__all__ = ["STDIN", "MiB", "LIMITS", "open_input", "read_input", "kind_of", "is_stdin", "input_name",
           "DIRFLAGS", "MAX_LINKS", "MAX_WALK", "MAX_PATH", "walk_beneath", "open_beneath", "open_regular", "read_beneath",
           "lstat_beneath"]

STDIN = "-"
MiB = 1 << 20

# Documented size limits per kind of input (docs/limits.md); whole-file reads only.
LIMITS = {
    "database": 256 * MiB,   # pci.ids, decompressed (today's file is under 2 MiB)
    "policy": 16 * MiB,
    "manifest": 64 * MiB,    # a `kubectl get ... -o yaml` of a large cluster
    "report": 64 * MiB,      # a hardware report or plan (JSON)
    "lspci": 256 * MiB,      # one dump, or many machines' concatenated
    "cpuinfo": 16 * MiB,
    "audit member": 256 * MiB,  # one file of an audited directory or archive
}

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symlink"))


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, in words ("a FIFO"); "a regular file" for one."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def is_stdin(path: object) -> bool:
    """Whether ``path`` names standard input (``-``; a file named so is ``./-``)."""
    return isinstance(path, (str, os.PathLike)) and os.fspath(path) == STDIN


def input_name(path: str | os.PathLike) -> str:
    """How errors name an input: ``<stdin>`` for ``-``, else the path."""
    return "<stdin>" if is_stdin(path) else os.fspath(path)


# The standard input stream this process has read to its end (a second read would
# silently see nothing: two options naming "-" in one command).
_stdin_read: list[object] = []


def _stdin(what: str) -> BinaryIO:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise SourceError("<stdin>", None, f"cannot read {what}: no standard input")
    if any(s is stream for s in _stdin_read):
        raise SourceError("<stdin>", None, f"cannot read {what}: standard input was already read "
                                           "(name '-' for one input only)")
    return stream


def open_input(path: str | os.PathLike, what: str = "input", *, dir_fd: int | None = None,
               follow: bool = True) -> BinaryIO:
    """A binary file object for ``path`` (``-``: standard input), which must be a regular file.

    ``dir_fd`` opens ``path`` relative to an open directory; ``follow=False``
    refuses a symlink in the last component (``O_NOFOLLOW``).
    """
    if is_stdin(path):
        return _stdin(what)
    name = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a FIFO's reader-less peer): not a file
            raise NotAFileError(name, None, f"{what} is a socket, not a regular file") from None
        if exc.errno == errno.ELOOP and not follow:
            raise NotAFileError(name, None, f"{what} is a symlink (not followed)") from None
        raise SourceError(name, None, f"cannot read {what}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotAFileError(name, None, f"{what} is {kind_of(mode)}, not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return open(fd, "rb")  # noqa: SIM115 - the caller closes it
    except BaseException:
        os.close(fd)
        raise


def _read_bounded(fh: BinaryIO, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``fh``, never reserving more than the file holds
    (``read(limit + 1)`` reserves the whole limit at once: 256 MiB for a small file)."""
    try:
        size = os.fstat(fh.fileno()).st_size
    except (OSError, ValueError, AttributeError):
        size = 0
    if size > limit:
        return fh.read(limit + 1)
    data = fh.read(size if size else 1 << 16)
    parts, total = [data], len(data)
    while total <= limit:  # grown, or a stream of unknown size: a megabyte at a time
        chunk = fh.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_input(path: str | os.PathLike, what: str = "input", limit: int | None = None, *,
               dir_fd: int | None = None, follow: bool = True) -> bytes:
    """The bytes of a regular file or of standard input, at most ``limit`` of them.

    ``limit`` defaults to ``LIMITS[what]`` (or 256 MiB); a larger input is a
    :class:`SourceError` naming the limit, and reading stops there.
    """
    if limit is None:
        limit = LIMITS.get(what, 256 * MiB)
    name = input_name(path)
    fh = open_input(path, what, dir_fd=dir_fd, follow=follow)
    try:
        data = _read_bounded(fh, limit)
    except OSError as exc:
        raise SourceError(name, None, f"cannot read {what}: {exc.strerror or exc}") from None
    finally:
        if is_stdin(path):
            _stdin_read.append(fh)
        else:
            fh.close()
    if len(data) > limit:
        raise SourceError(name, None, f"{what} is larger than {limit} bytes (the limit for this input)")
    return data


# -- files of a machine under a root ------------------------------------------------

DIRFLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READFLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
              | getattr(os, "O_NOCTTY", 0))
MAX_LINKS = 40  # symlinks followed in one path, as the kernel allows (then ELOOP)
MAX_WALK = 64   # directories from the root down one walk may hold open
MAX_PATH = 2 * 4096  # bytes of path left to walk, links spliced in


def _is_link(dir_fd: int, name: str) -> str | None:
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError:
        return None


def walk_beneath(chain: list[int], path: str, owned: list[int], *, last_dir: bool = True,
                 opener=os.open) -> str | None:
    """Resolve ``path`` from ``chain[-1]``, pushing the directories walked onto ``chain``.

    ``chain`` holds open directories from the root down (``chain[0]`` is the
    root); ``..`` pops one, and popping the root is :data:`errno.EXDEV`, as is
    an absolute symlink: nothing above the root is ever looked up.  Symlinks
    are read (never followed by the kernel) and spliced into the path, at most
    :data:`MAX_LINKS`.  Every descriptor opened is appended to ``owned`` (the
    caller closes them).  With ``last_dir=False`` the last component is not
    opened but returned as it is, a file to open in ``chain[-1]`` without
    following a link (``None`` when the path ends in ``..``).  The bounds are the
    compiled sysfs reader's: :data:`MAX_LINKS` links, :data:`MAX_WALK` directories
    below the root, paths of :data:`MAX_PATH` bytes.
    """
    if len(path) >= MAX_PATH:
        raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))
    parts = [p for p in path.split("/") if p not in ("", ".")][::-1]
    links = 0
    while parts:
        comp = parts.pop()
        if comp == "..":
            if len(chain) == 1:
                raise OSError(errno.EXDEV, "leads outside the root")
            chain.pop()
            continue
        if not parts and not last_dir:
            return comp  # a file: the caller opens it without following a link
        if len(os.fsencode(comp)) > 255:
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))
        try:
            fd = opener(comp, DIRFLAGS | _NOFOLLOW, dir_fd=chain[-1])
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                raise
            target = _is_link(chain[-1], comp)
            if target is None:
                raise
        else:
            owned.append(fd)
            if len(chain) >= MAX_WALK:
                raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))
            chain.append(fd)
            continue
        if len(os.fsencode(target)) >= MAX_PATH // 2:
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))
        links += 1
        if links > MAX_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
        if target.startswith("/"):
            raise OSError(errno.EXDEV, "leads outside the root")
        new = [p for p in target.split("/") if p not in ("", ".")]
        if sum(len(os.fsencode(p)) + 1 for p in (*new, *parts)) >= MAX_PATH:
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))
        parts.extend(new[::-1])
    return None


def _close_all(fds) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def open_beneath(root_fd: int, path: str) -> int:
    """An open directory ``path`` under the open root ``root_fd``, resolved inside it.

    Raises ``OSError``: ``EXDEV`` when the path (or a symlink on it) leads
    outside the root, ``ELOOP`` past :data:`MAX_LINKS` links, or the error of
    the component that failed.
    """
    chain, owned = [root_fd], []
    try:
        walk_beneath(chain, path, owned)
        return os.dup(chain[-1]) if chain[-1] == root_fd else chain[-1]
    finally:
        _close_all(fd for fd in owned if fd != chain[-1])


def open_regular(dir_fd: int, name: str) -> tuple[int, int]:
    """``(fd, st_mode)``: ``name`` in ``dir_fd`` opened for reading if it is a regular file.

    The file is looked at first (``lstat``: a symlink is never followed) and opened
    only when it is a regular file, so that a device node, FIFO or socket is never
    opened; the open file must be the one looked at.  For anything else ``fd`` is -1
    and ``st_mode`` says what it is.
    """
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if not stat.S_ISREG(st.st_mode):
        return -1, st.st_mode
    fd = os.open(name, _READFLAGS | _NOFOLLOW, dir_fd=dir_fd)
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) or not stat.S_ISREG(now.st_mode):
        os.close(fd)  # swapped between the look and the open
        return -1, now.st_mode
    return fd, st.st_mode


def _root_fd(root: str | os.PathLike) -> int:
    return os.open(os.fspath(root), DIRFLAGS)


def read_beneath(root: str | os.PathLike, path: str, what: str, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` under the machine root ``root``, bounded.

    Nothing outside ``root`` is opened (see :func:`walk_beneath`); a symlink
    leading out, a FIFO, a device or a directory is a :class:`SourceError`
    that says so, and so is a file past ``limit`` (default ``LIMITS[what]``).
    """
    if limit is None:
        limit = LIMITS.get(what, 256 * MiB)
    where = os.path.join(os.fspath(root), path)
    try:
        rfd = _root_fd(root)
    except OSError as exc:
        raise SourceError(os.fspath(root), None, f"cannot open the root: {exc.strerror or exc}") from None
    chain, owned = [rfd], [rfd]
    try:
        name = walk_beneath(chain, path, owned, last_dir=False)
        if name is None:
            raise SourceError(where, None, f"{what} is a directory, not a regular file")
        fd, mode = open_regular(chain[-1], name)
    except OSError as exc:
        raise SourceError(where, None, _beneath_reason(exc, what)) from None
    finally:
        _close_all(owned)
    if fd < 0:
        raise SourceError(where, None, f"{what} is {kind_of(mode)}, not a regular file (not read)")
    try:
        with os.fdopen(fd, "rb") as fh:
            data = _read_bounded(fh, limit)
    except OSError as exc:
        raise SourceError(where, None, f"cannot read {what}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise SourceError(where, None, f"{what} is larger than {limit} bytes (the limit for this input)")
    return data


def lstat_beneath(root: str | os.PathLike, path: str) -> os.stat_result | None:
    """``lstat`` of ``path`` under ``root`` (its directories resolved inside the root), or
    None when it does not exist; ``OSError`` (``EXDEV``: outside the root) otherwise."""
    rfd = _root_fd(root)
    chain, owned = [rfd], [rfd]
    try:
        name = walk_beneath(chain, path, owned, last_dir=False)
        if name is None:
            return os.fstat(chain[-1])
        return os.stat(name, dir_fd=chain[-1], follow_symlinks=False)
    except FileNotFoundError:
        return None
    finally:
        _close_all(owned)


def _beneath_reason(exc: OSError, what: str) -> str:
    if exc.errno == errno.EXDEV:
        return f"{what} leads outside the root (not followed)"
    if exc.errno == errno.ELOOP:
        return f"{what}: too many levels of symbolic links (not followed)"
    return f"cannot read {what}: {exc.strerror or exc}"
