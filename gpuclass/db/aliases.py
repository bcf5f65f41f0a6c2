"""The cache directory's housekeeping: aliases by file identity, temp files of dead writers, old files.

An alias ``stat-<hash>.gpcdb`` is a symlink named by a pci.ids file's identity
(path, inode, size, times) to the content-keyed cache file ``pciids-<hash>.gpcdb``
of the same directory, so that an unchanged file is not even read.  It is only a
shortcut: :func:`alias_target` accepts nothing but a bare cache file name, and the
file it names is checked like any other (:mod:`gpuclass.db.cache`).

Paths are strings here (``os.path``; a :class:`~pathlib.Path` is accepted), so that the
start of ``gpuclass scan`` (:mod:`gpuclass.db.mapped`) finds its cache without pathlib
or OpenSSL: the SHA-256 is the interpreter's built-in one where it has it.

>>> alias_target("/nonexistent/stat-0.gpcdb") is None
True
"""

from __future__ import annotations

import os

try:  # the interpreter's own SHA-256 (no OpenSSL to load); the same digest as hashlib's
    from _sha2 import sha256 as _sha256  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256 as _sha256  # Python 3.11
    except ImportError:  # a build without them
        from hashlib import sha256 as _sha256

__all__ = ["stat_alias", "alias_target", "link_alias", "sweep_temps", "retire_old", "STALE_TEMP_SECONDS",
           "DATABASES_KEPT", "ALIASES_KEPT"]


def stat_alias(cdir: str | os.PathLike, src: str | os.PathLike) -> str | None:
    """The alias file name for ``src`` as it is now on disk (None if it cannot be stat'ed)."""
    try:
        st = os.stat(src)
        # ctime too: a rewrite that keeps size and restores mtime (touch -r, cp -p over
        # the same inode) still moves ctime, which no one can set back.
        ident = (f"{os.path.realpath(src)}\0{st.st_dev}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}"
                 f"\0{st.st_ctime_ns}")
    except (OSError, ValueError):
        return None
    digest = _sha256(ident.encode("utf-8", "surrogateescape")).hexdigest()
    return os.path.join(cdir, f"stat-{digest[:32]}.gpcdb")


# A temp file this old is a writer's that died (killed, power cut) before its rename.
STALE_TEMP_SECONDS = 3600


def sweep_temps(cdir: str | os.PathLike) -> None:
    """Remove temp files that dead writers left in the cache directory (best effort)."""
    import time

    cutoff = time.time() - STALE_TEMP_SECONDS
    try:
        entries = list(os.scandir(cdir))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".tmp-"):
            try:
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                pass


# Compiled databases kept (about 2 MB each: the bundled pci.ids, the system's, the ones
# before an update) and aliases (one per pci.ids file as it was on disk: a reinstall
# makes a new one); a new one retires the oldest, and an alias whose file is gone goes.
DATABASES_KEPT = 4
ALIASES_KEPT = 16


def retire_old(cdir: str | os.PathLike, cache: str | os.PathLike | None = None,
               alias: str | os.PathLike | None = None) -> None:
    """After ``cache`` (a compiled database) or ``alias`` was written: remove all but the
    newest databases and aliases (best effort; see :func:`gpuclass.cachedir.prune`)."""
    from ..cachedir import prune

    if cache is not None:
        prune(cdir, "pciids-", ".gpcdb", DATABASES_KEPT, spare=cache)
    prune(cdir, "stat-", ".gpcdb", ALIASES_KEPT, spare=alias)


def is_cache_name(name: str) -> bool:
    """Whether ``name`` is a bare cache file name, ``pciids-`` 32 lowercase hex digits
    ``.gpcdb`` (what ``re.fullmatch(r"pciids-[0-9a-f]{32}\\.gpcdb", name)`` accepts; read
    without :mod:`re`, whose import is a few ms of every start).

    >>> is_cache_name("pciids-" + "0a" * 16 + ".gpcdb"), is_cache_name("../pciids-x.gpcdb")
    (True, False)
    """
    return (len(name) == 45 and name.startswith("pciids-") and name.endswith(".gpcdb")
            and all(c in "0123456789abcdef" for c in name[7:39]))


def alias_target(alias: str | os.PathLike) -> str | None:
    """The cache file an alias names, when it is a link to a cache file of the same
    directory (anything else, a link that leaves the directory included, is no alias)."""
    try:
        target = os.readlink(alias)
    except OSError:
        return None
    return os.path.join(os.path.dirname(alias), target) if is_cache_name(target) else None


def link_alias(alias: str | os.PathLike, target: str | os.PathLike) -> None:
    """Point ``alias`` at ``target`` atomically; failures only cost the fast path."""
    alias = os.fspath(alias)
    tmp = os.path.join(os.path.dirname(alias), f".tmp-{os.getpid()}-{os.path.basename(alias)}")
    try:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        os.symlink(os.path.basename(target), tmp)
        os.replace(tmp, alias)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


