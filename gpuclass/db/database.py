"""PciDatabase: the PCI ID database as compact arrays and one UTF-8 name blob.

Each table is a sorted array of integer keys with, per key, the index of its
name; name ``i`` is ``blob[name_start[i]:name_end[i]]``.  Freshly parsed, the
blob is the pci.ids text itself (no copy); a saved cache holds the names back
to back.  There are no per-entry Python objects: a name is decoded only when
asked for.

Lookups follow libpci's ``pci_lookup_name`` exactly (with numbers turned off): the
rules, its subsystem and class fallbacks included, are :class:`~gpuclass.db.names.NameRules`',
over this class's key index.

>>> db = default_database()
>>> db.device_name(0x10de, 0x27b0)
'AD104GL [RTX 4000 SFF Ada Generation]'
>>> db.subsystem_name(0x10de, 0x1e30, 0x10de, 0x12ba)
'Quadro RTX 6000'
>>> db.class_name(0x03, 0x02)
'3D controller'

Names are bytes in pci.ids; one that is not UTF-8 (libpci takes any byte) is
decoded with U+FFFD for each bad byte, as a UTF-8 reader of libpci's output
shows it.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

from .._native import TABLES, core
from ..errors import CacheError, InputError, PciIdsError, SkippedLine
from ..inputs import input_name, is_stdin
from .aliases import alias_target, link_alias, retire_old, stat_alias, sweep_temps
from .cache import ARRAYS, EagerArrays, cache_dir, make_cache_dir, read_cache, trust_problem, write_cache
from .locate import header_info, read_pci_ids, resolve_path, shipped_cache_name
from .names import NameRules
from .vector import VectorLookups

__all__ = ["PciDatabase", "default_database", "write_shipped_cache", "TABLES"]


def _sha256(data: bytes) -> str:
    """SHA-256 of ``data``, hex (``hashlib`` imported here: it loads OpenSSL, 4-5 ms of a
    command's start that a database found through the cache alias never needs)."""
    import hashlib

    return hashlib.sha256(data).hexdigest()


class _Table:
    """One sorted key table: its keys and name indices, and a lazily built hash index.

    Arrays come from ``source`` (see :mod:`gpuclass.db.cache`);
    a table read from a cache is verified when its arrays are first made.
    """

    __slots__ = ("name", "_source", "_index")

    def __init__(self, name: str, source) -> None:
        self.name = name
        self._source = source
        self._index = None

    @property
    def keys(self) -> np.ndarray:
        return self._source.get(f"{self.name}_keys")

    @property
    def names(self) -> np.ndarray:
        return self._source.get(f"{self.name}_name")

    @property
    def index(self):
        if self._index is None:
            self._index = core.KeyIndex(self.keys)
        return self._index

    def __len__(self) -> int:
        return self._source.length(f"{self.name}_keys")


class PciDatabase(NameRules, VectorLookups):
    """The PCI ID database: vendors, devices, subsystems, classes, as arrays.

    Build one with :meth:`load` (a pci.ids path, cached), :meth:`from_bytes`
    (text in memory) or :meth:`load_compiled` (a cache file).  Scalar lookups
    (``vendor_name``, ``device_name``, ``subsystem_name``, ``class_name``, ...) are
    :class:`~gpuclass.db.names.NameRules`' (libpci's rules, written once over
    ``_find``); their array forms (``*_index``, ``*_names``) are
    :class:`~gpuclass.db.vector.VectorLookups`'.
    """

    def __init__(self, arrays: dict[str, np.ndarray] | None = None, *, source: str = "<memory>",
                 version: str | None = None, date: str | None = None,
                 sha256: str | None = None, skipped: list[SkippedLine] | None = None,
                 _source=None) -> None:
        if _source is None:
            arrays = arrays or {}
            missing = [name for name in ARRAYS if name not in arrays]
            if missing:
                raise InputError(f"database arrays missing: {', '.join(missing)}")
            _source = EagerArrays(arrays)
        self._source = _source
        self.source = source
        self.version = version
        self.date = date
        self._sha256 = sha256
        self._text: bytes | None = None
        # lenient parsing lists the lines it skipped, and apart from them the lines it kept
        # but not as written (a name that is not UTF-8, a prog-if directly under its class)
        self.skipped: list[SkippedLine] = [s for s in skipped or [] if not s.kept]
        self.flagged: list[SkippedLine] = [s for s in skipped or [] if s.kept]
        self.cache_path: str | None = None
        self.cache_refused: str | None = None  # why the cache directory was not used
        self._names = None  # (blob memoryview, starts, ends), made on first name
        self._tables = {t: _Table(t, _source) for t in TABLES}

    @property
    def sha256(self) -> str | None:
        """SHA-256 of the pci.ids text this database was built from."""
        if self._sha256 is None and self._text is not None:
            self._sha256 = _sha256(self._text)
        return self._sha256

    # -- construction ---------------------------------------------------------------

    @classmethod
    def from_bytes(cls, data: bytes, *, strict: bool = True, source: str = "<memory>") -> "PciDatabase":
        """Parse pci.ids text held in memory.

        >>> PciDatabase.from_bytes(b"10de  NVIDIA Corporation\\n").vendor_name(0x10DE)
        'NVIDIA Corporation'
        """
        data = bytes(data)
        tables, skipped = core.parse_pci_ids(data, strict, source)
        info = header_info(data)
        db = cls(tables, source=source, version=info["version"], date=info["date"], skipped=skipped)
        db._text = data  # hashed only if someone asks (sha256, save_compiled)
        return db

    @classmethod
    def load(cls, path: str | os.PathLike | None = None, *, strict: bool = True,
             cache: bool = True) -> "PciDatabase":
        """Load a pci.ids (plain, .gz, .xz or .bz2; ``-``: standard input), through the
        compiled cache.

        ``path`` defaults to ``$GPUCLASS_PCI_IDS``, else the bundled file.  The
        cache is keyed by the file's content hash; a stale, corrupt or
        unwritable cache is never trusted and never an error: the file is parsed.
        A cache directory or file that another user could have written (see
        :func:`gpuclass.cachedir.trust_problem`) is neither read nor written
        (``cache_refused`` says why).  Lenient loads (``strict=False``) are not
        cached, so that their skipped lines are always reported.
        """
        src = resolve_path(path)
        name = input_name(src)
        if not (cache and strict):
            return cls.from_bytes(read_pci_ids(src), strict=strict, source=name)
        cdir = Path(cache_dir())
        try:
            make_cache_dir(cdir)
        except OSError:
            pass  # a read-only place: trust_problem says so, and the file is parsed
        refused = trust_problem(cdir)
        if refused is not None:
            db = cls.from_bytes(read_pci_ids(src), strict=strict, source=name)
            db.cache_refused = refused
            return db
        # Fast path: an alias named by the file's identity (path, inode, size,
        # mtime) points at the content-keyed cache, so an unchanged file is
        # not even read.  The alias is only a shortcut: the content hash stays the key.
        alias = None if is_stdin(src) else stat_alias(cdir, src)
        target = None if alias is None else alias_target(alias)
        if target is not None:
            try:
                # Verified in full here, so that a damaged cache is rebuilt now
                # rather than failing at the caller's first lookup.
                db = cls.load_compiled(target, verify=True, trusted=True)
            except CacheError:
                pass
            else:
                db.source = name
                return db
        data = read_pci_ids(src)
        digest = _sha256(data)
        cpath = cdir / f"pciids-{digest[:32]}.gpcdb"
        db = written = None
        if os.path.lexists(cpath):
            try:
                db = cls.load_compiled(cpath, expect_sha256=digest, verify=True, trusted=True)
            except CacheError:
                db = None  # rebuilt below, and replaced by rename
        if db is None:
            db = cls.from_bytes(data, strict=strict, source=name)
            db._sha256 = digest
            try:
                written = db.save_compiled(cpath)
            except (OSError, CacheError):
                return db  # read-only or full cache directory: parsing again next time is fine
            sweep_temps(cdir)
        db.source = name
        if alias is not None:
            link_alias(alias, cpath)
        retire_old(cdir, written, alias)  # the newest databases and aliases stay
        return db

    # -- compiled cache --------------------------------------------------------------

    def save_compiled(self, path: str | os.PathLike) -> Path:
        """Write the arrays to a cache file atomically (see :mod:`gpuclass.db.cache`)."""
        meta = {"sha256": self.sha256, "source": self.source, "version": self.version, "date": self.date}
        path = write_cache(Path(path), self.arrays(), meta)
        self.cache_path = os.fspath(path)
        return path

    @classmethod
    def load_compiled(cls, path: str | os.PathLike, *, expect_sha256: str | None = None,
                      verify: bool = False, trusted: bool = False) -> "PciDatabase":
        """Load a cache file written by :meth:`save_compiled`; :class:`CacheError` if invalid.

        The file (a regular file, never a link) is memory-mapped.  The header,
        sizes, alignment, dtypes, bounds and metadata are checked at once; each
        table's CRC-32 and ordering are checked before its first lookup, and the
        name blob's (offsets, UTF-8) before the first name is decoded
        (``verify=True`` checks everything now).  A corrupt or hostile table
        therefore raises :class:`CacheError` instead of answering wrongly.
        ``trusted`` also refuses a file another user could have written.
        """
        name = os.fspath(path)
        source, meta = read_cache(name, expect_sha256, verify, trusted=trusted)
        db = cls(source=meta.get("source") or name, version=meta.get("version"),
                 date=meta.get("date"), sha256=meta.get("sha256"), _source=source)
        db.cache_path = name
        return db

    def verify(self) -> None:
        """Run every pending cache check now (raises :class:`CacheError`)."""
        self._source.verify()

    # -- names -----------------------------------------------------------------------

    def _name(self, i: int) -> str:
        if self._names is None:
            src = self._source
            self._names = (memoryview(src.get("blob")).cast("B"), src.get("name_start"), src.get("name_end"))
        blob, start, end = self._names
        # libpci takes names as bytes; one that is not UTF-8 (Latin-1 in old files) reads as
        # a UTF-8 reader of libpci's output shows it, with U+FFFD for each bad byte
        return bytes(blob[int(start[i]) : int(end[i])]).decode("utf-8", "replace")

    def _find(self, table: str, key: int) -> str | None:
        t = self._tables[table]
        pos = t.index.find(key)
        return None if pos < 0 else self._name(int(t.names[pos]))

    # -- facts -----------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Entries per table."""
        return {t: len(self._tables[t]) for t in TABLES}

    def arrays(self) -> dict[str, np.ndarray]:
        """The raw arrays (read-only views where loaded from a cache)."""
        return {name: self._source.get(name) for name in ARRAYS}

    def info(self) -> dict:
        """Source, version, date, hash, counts and the core in use."""
        return {
            "source": self.source,
            "version": self.version,
            "date": self.date,
            "sha256": self.sha256,
            "counts": self.counts(),
            "names_bytes": int(np.sum(self._source.get("name_end").astype(np.int64)
                                      - self._source.get("name_start"))),
            "cache": self.cache_path,
            "cache_refused": self.cache_refused,
            "core": "compiled" if core.IS_COMPILED else "python",
            "skipped_lines": len(self.skipped),
            "flagged_lines": len(self.flagged),
        }

    def __reduce__(self):
        """Pickled as its source when that file still holds the same text (the receiving
        process loads it through its own cache), else as its compacted arrays."""
        digest = self.sha256
        src = Path(self.source)
        try:
            same = digest is not None and src.is_file() and \
                _sha256(read_pci_ids(src)) == digest
        except PciIdsError:
            same = False
        arrays = None if same else {k: np.array(v) for k, v in self.arrays().items()}
        return (_restore, (self.source, digest, self.version, self.date, arrays))

    def __repr__(self) -> str:
        c = self.counts()
        return (f"PciDatabase(source={self.source!r}, version={self.version!r}, "
                f"vendors={c['vendor']}, devices={c['device']}, subsystems={c['subsys']})")


def _restore(source: str, sha256: str | None, version: str | None, date: str | None,
             arrays: dict | None) -> PciDatabase:
    if arrays is None:
        db = default_database(source)
        if db.sha256 != sha256:  # the file changed after the pickle was made
            raise CacheError(f"{source}: no longer the pci.ids this database was pickled from")
        return db
    return PciDatabase(arrays, source=source, version=version, date=date, sha256=sha256)


_stdin_database: list[PciDatabase] = []


@functools.lru_cache(maxsize=8)
def _default(path: str | None, stamp: tuple) -> PciDatabase:
    return PciDatabase.load(path)


def default_database(path: str | os.PathLike | None = None) -> PciDatabase:
    """The process-wide database for ``path`` (default: env, else bundled), loaded once.

    Reloaded when the file changes on disk.
    """
    src = resolve_path(path)
    if is_stdin(src):  # read once per process: standard input cannot be read again
        if not _stdin_database:
            _stdin_database.append(PciDatabase.load(src))
        return _stdin_database[0]
    try:
        st = src.stat()
    except OSError as exc:
        raise PciIdsError(os.fspath(src), None, f"cannot read: {exc.strerror or exc}") from None
    return _default(os.fspath(src), (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))


def write_shipped_cache(src: str | os.PathLike, directory: str | os.PathLike) -> Path:
    """Compile the pci.ids ``src`` into ``directory`` under the name
    :func:`~gpuclass.db.locate.shipped_cache_name` gives its bytes, readable by all: what
    the wheel's build (``setup.py``) ships beside the bundled file, so that a fresh
    machine's first command maps it (:func:`~gpuclass.db.locate.shipped_cache`)."""
    raw = Path(src).read_bytes()
    db = PciDatabase.from_bytes(read_pci_ids(src), source="pci.ids")
    path = db.save_compiled(Path(directory) / shipped_cache_name(raw))
    os.chmod(path, 0o644)
    return path
