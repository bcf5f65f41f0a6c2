"""The cache directory and who may write it: the trust rules every cached file follows.

gpuclass caches what is costly to rebuild and cheap to load (the compiled PCI ID
database, the text matcher's names and words) under ``$GPUCLASS_CACHE_DIR``, else
``$XDG_CACHE_HOME/gpuclass`` (``~/.cache/gpuclass``).  A cached file is read only
when :func:`trust_problem` finds nothing wrong with it and the directories above it:
what a cache holds is loaded into the process, so a directory someone else can write
is no cache.  This module needs nothing but the standard library, so that paths that
do without numpy (a listing audit) can use the cache too, and only the cheap part of it
(no pathlib, tempfile or typing: a listing audit starts in the time a script takes).

>>> import tempfile
>>> d = make_cache_dir(os.path.join(tempfile.mkdtemp(), "c"))
>>> trust_problem(d) is None
True
>>> os.chmod(d, 0o777); trust_problem(d)
'...c: writable by others (mode 0777)'
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from .inputs import kind_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO, Iterator, TypeVar

    _P = TypeVar("_P", str, os.PathLike)

__all__ = ["ENV_CACHE_DIR", "cache_dir", "make_cache_dir", "trust_problem", "file_problem", "private_file",
           "replacing", "replace_refusal", "write_atomic", "prune"]

ENV_CACHE_DIR = "GPUCLASS_CACHE_DIR"


def cache_dir() -> str:
    """Where gpuclass caches: ``$GPUCLASS_CACHE_DIR``, else the XDG cache."""
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return env
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "gpuclass")


def _owner_ok(st: os.stat_result, uid: int) -> bool:
    return st.st_uid in (uid, 0)


def trust_problem(path: str | os.PathLike, *, kind: str = "dir") -> str | None:
    """Why a cache directory (``kind="dir"``) or cache file (``"file"``) cannot be
    trusted, or None when it can.

    The rules of ssh's StrictModes and pip's cache: the path itself (not
    followed if a link) must be a directory or a regular file owned by this user
    or root and writable by no one else (no group or other write bit); every
    directory above it, resolved, must be owned by this user or root and not
    writable by others unless it has the sticky bit (``/tmp``), so that no one
    else can swap it.  Where the platform has no user ids, everything is trusted.
    """
    if not hasattr(os, "geteuid"):
        return None
    uid = os.geteuid()
    name = os.fspath(path)
    try:
        st = os.lstat(name)
    except OSError as exc:
        return f"{name}: {exc.strerror or exc}"
    problem = file_problem(st, name, kind=kind)
    if problem:
        return problem
    parent = os.path.dirname(os.path.realpath(name))
    while True:
        try:
            pst = os.stat(parent)
        except OSError as exc:
            return f"{parent}: {exc.strerror or exc}"
        if not _owner_ok(pst, uid):
            return f"{parent}: owned by another user (uid {pst.st_uid}), above the cache"
        if pst.st_mode & 0o022 and not pst.st_mode & stat.S_ISVTX:
            return f"{parent}: writable by others (mode {stat.S_IMODE(pst.st_mode):04o}), above the cache"
        up = os.path.dirname(parent)
        if up == parent:
            return None
        parent = up


def file_problem(st: os.stat_result, name: str, *, kind: str = "file") -> str | None:
    """Why the entry ``st`` describes (an ``lstat``, or the ``fstat`` of a file opened
    without following links, to judge again what was opened) cannot be trusted as a cache
    file (``kind="file"``) or directory (``"dir"``) itself, or None: the first rules of
    :func:`trust_problem`, which the directories above it must pass too."""
    if not hasattr(os, "geteuid"):
        return None
    want = stat.S_ISDIR if kind == "dir" else stat.S_ISREG
    if not want(st.st_mode):
        return f"{name}: {kind_of(st.st_mode)}, not a {'directory' if kind == 'dir' else 'regular file'}"
    if not _owner_ok(st, os.geteuid()):
        return f"{name}: owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"{name}: writable by others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _levels(path: str) -> int:
    """How many missing levels of ``path`` may be created: the default cache's two
    (``.cache`` and ``gpuclass`` in an existing home), else the directory itself only (an
    existing ``$XDG_CACHE_HOME``'s ``gpuclass``, an existing folder's ``$GPUCLASS_CACHE_DIR``)."""
    if os.environ.get(ENV_CACHE_DIR) or os.environ.get("XDG_CACHE_HOME"):
        return 1
    return 2 if os.path.normpath(path) == os.path.normpath(cache_dir()) else 1


def make_cache_dir(path: _P) -> _P:
    """Create a cache directory readable and writable by its owner only (0700); an existing
    one is left as it is (:func:`trust_problem` judges it).  Returns ``path``.

    Only the levels a cache directory has are created: ``~/.cache/gpuclass`` in an existing
    home, ``gpuclass`` in an existing ``$XDG_CACHE_HOME``, ``$GPUCLASS_CACHE_DIR`` (or any
    other path) in an existing folder.  Where more is missing (``HOME=/nonexistent``) nothing
    is created: :class:`FileNotFoundError` names the folder that should exist, and the
    callers run without a cache."""
    missing = []
    p = os.path.normpath(os.fspath(path))
    while not os.path.lexists(p):
        missing.append(p)
        up = os.path.dirname(p)
        if up in ("", p):
            break
        p = up
    if len(missing) > _levels(os.fspath(path)):
        top = os.path.dirname(missing[-1])
        raise FileNotFoundError(errno.ENOENT, "no such directory (a cache directory is made only in an "
                                "existing one)", top or missing[-1])
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
    return path


def private_file(folder: str, prefix: str) -> tuple[int, str]:
    """A new file in ``folder`` that only this user may read or write (0600), under a name
    no one else holds: its descriptor (open for writing) and path.  What
    :func:`tempfile.mkstemp` does, without the imports a listing audit would pay for."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    while True:
        path = os.path.join(folder, prefix + os.urandom(6).hex())
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue


def replace_refusal(path: str | os.PathLike) -> str | None:
    """Why ``path`` must not be replaced, or None: only a regular file (or nothing) is ever
    replaced by a rename, never a FIFO, a device, a directory, a socket or a symlink (the
    rename would take the name: ``/dev/null`` itself, as root).  The one rule of every file
    gpuclass writes whole (``audit -o``, ``db compile --write``, the caches).

    >>> replace_refusal("/dev/null")
    '/dev/null: refusing to replace a character device (only a regular file is ever replaced)'
    """
    name = os.fspath(path)
    try:
        st = os.lstat(name)
    except FileNotFoundError:
        return None
    except OSError:
        return None  # what cannot be looked at fails where it is written, naming it
    if stat.S_ISREG(st.st_mode):
        return None
    return f"{name}: refusing to replace {kind_of(st.st_mode)} (only a regular file is ever replaced)"


def _refuse_non_regular(path: str | os.PathLike) -> None:
    refused = replace_refusal(path)
    if refused is not None:
        from .errors import NotReplaceableError

        raise NotReplaceableError(refused)


@contextlib.contextmanager
def replacing(path: str | os.PathLike, *, prefix: str = ".tmp-",
              mode: int | None = None) -> Iterator[BinaryIO]:
    """A private temporary file beside ``path`` (opened for binary writing), renamed over
    ``path`` when the block ends, or removed if it raises: a reader sees the old file or
    the whole new one, never a part.  ``mode``: the permissions the file gets (default
    mkstemp's, 0600).  An OSError names ``path``, never the temporary file.  Only a regular
    file is replaced (:func:`replace_refusal`): anything else at ``path`` is a
    :class:`~gpuclass.errors.NotReplaceableError`, before and again just before the rename."""
    _refuse_non_regular(path)
    try:
        fd, tmp = private_file(os.path.dirname(os.path.abspath(path)), prefix)
    except OSError as exc:  # a missing or unwritable folder: the caller's path is the one
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        if mode is not None:
            os.chmod(tmp, mode)
        _refuse_non_regular(path)  # swapped in while the file was written
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through :func:`replacing`."""
    with replacing(path) as fh:
        fh.write(data)


def prune(folder: str | os.PathLike, prefix: str, suffix: str, keep: int,
          spare: str | os.PathLike | None = None) -> list[str]:
    """Remove all but the ``keep`` newest entries of ``folder`` named ``prefix...suffix``
    (by modification time; links by their own), never ``spare``, and only entries this
    user owns; a link whose target is gone goes first.  Best effort: an entry that cannot
    be removed stays.  Returns the paths removed.

    A cache keyed by what it is made of gets a new file for every new key (a reinstall, a
    changed pci.ids or policy) and would otherwise keep every old one.  A reader that loses
    a file it was about to open rebuilds it, as for any missing cache file.
    """
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    spare_name = None if spare is None else os.path.basename(os.fspath(spare))
    found = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(suffix)) or name == spare_name:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if uid is not None and st.st_uid != uid:
            continue
        dangling = stat.S_ISLNK(st.st_mode) and not os.path.exists(entry.path)
        found.append((not dangling, st.st_mtime_ns, entry.path))
    found.sort(reverse=True)  # live links and files first, newest first; dangling links last
    keep -= spare_name is not None
    removed = []
    for i, (live, _, path) in enumerate(found):
        if live and i < keep:
            continue
        try:
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return removed
