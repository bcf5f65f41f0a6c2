"""Opening what a user names as input: a regular file or ``-`` (standard input), bounded.

Every file gpuclass reads on a user's behalf (the database, policies, manifests,
hardware reports, lspci dumps, audit inputs) is opened here.  A FIFO, a device
(``/dev/zero``, ``/dev/urandom``), a directory or a socket is refused at once with a
:class:`~gpuclass.errors.SourceError` that says what it is, before a single byte is
read, so nothing hangs and nothing reads forever.  Whole-file reads are bounded:
past the limit the read stops with an error naming the file and the limit.

The open never blocks: a FIFO is opened non-blocking, recognised by ``fstat``
and closed.

>>> import tempfile, os, pathlib
>>> d = tempfile.mkdtemp()
>>> read_input(d, "policy")
Traceback (most recent call last):
...
gpuclass.errors.SourceError: ...: policy is a directory, not a regular file
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
from typing import BinaryIO

from .errors import SourceError

__all__ = ["STDIN", "MiB", "LIMITS", "open_input", "read_input", "kind_of", "is_stdin"]

STDIN = "-"
MiB = 1 << 20

# Documented size limits per kind of input (README "Limits"); whole-file reads only.
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
    return isinstance(path, str) and path == STDIN


def open_input(path: str | os.PathLike, what: str = "input", *, dir_fd: int | None = None,
               follow: bool = True) -> BinaryIO:
    """A binary file object for ``path`` (``-``: standard input), which must be a regular file.

    ``dir_fd`` opens ``path`` relative to an open directory; ``follow=False``
    refuses a symlink in the last component (``O_NOFOLLOW``).
    """
    if is_stdin(path):
        return sys.stdin.buffer
    name = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a FIFO's reader-less peer): not a file
            raise SourceError(name, None, f"{what} is a socket, not a regular file") from None
        if exc.errno == errno.ELOOP and not follow:
            raise SourceError(name, None, f"{what} is a symlink (not followed)") from None
        raise SourceError(name, None, f"cannot read {what}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise SourceError(name, None, f"{what} is {kind_of(mode)}, not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_input(path: str | os.PathLike, what: str = "input", limit: int | None = None, *,
               dir_fd: int | None = None, follow: bool = True) -> bytes:
    """The bytes of a regular file or of standard input, at most ``limit`` of them.

    ``limit`` defaults to ``LIMITS[what]`` (or 256 MiB); a larger input is a
    :class:`SourceError` naming the limit, and reading stops there.
    """
    if limit is None:
        limit = LIMITS.get(what, 256 * MiB)
    name = "<stdin>" if is_stdin(path) else os.fspath(path)
    fh = open_input(path, what, dir_fd=dir_fd, follow=follow)
    try:
        data = fh.read(limit + 1)
    except OSError as exc:
        raise SourceError(name, None, f"cannot read {what}: {exc.strerror or exc}") from None
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()
    if len(data) > limit:
        raise SourceError(name, None, f"{what} is larger than {limit} bytes (the limit for this input)")
    return data
