"""A compiled database cache read without numpy: what ``gpuclass scan`` starts with.

:class:`MappedNames` maps a cache file (:mod:`gpuclass.db.layout`) and answers
libpci's scalar lookups (:class:`~gpuclass.db.names.NameRules`, the rules
:class:`~gpuclass.db.PciDatabase` uses too) by bisection over the mapped keys.
Its checks are those the issue of a cheap load asks for: the file is read only
where no one but this user (or root) could have written it, the directory and
the file both (:func:`~gpuclass.cachedir.trust_problem`), so what it holds is
what gpuclass wrote after parsing and checking the text; and every array's
CRC-32 is checked at once (a whole file takes well under a millisecond), so a
damaged file is never read.  The value checks a numpy load runs (sorted keys,
offsets inside the blob, UTF-8) guard the compiled kernels' memory reads; here
every read is a bounds-checked Python slice, and a name that is not UTF-8 is
decoded with U+FFFD as everywhere else.

:func:`cached_names` finds the default database's cache the way
:meth:`PciDatabase.load` does, through the alias named by the pci.ids file's
identity; where there is none yet, the bundled file of an installed wheel has the
cache the wheel ships (:func:`~gpuclass.db.locate.shipped_cache`).  It answers None
where neither is there (or can be trusted): the caller then loads the database the
usual way, which writes the cache and the alias for the next start.  ``tests/db/test_mapped.py`` holds every lookup
equal to :class:`PciDatabase`'s, over every key of the bundled database.
"""

from __future__ import annotations

import os
import sys
import zlib
from bisect import bisect_left

from ..cachedir import cache_dir, trust_problem
from ..errors import CacheError
from .aliases import alias_target, stat_alias
from .layout import FORMATS, ITEMSIZE, TABLES, map_file, parse_head
from .locate import resolve_name, shipped_cache
from .names import NameRules

__all__ = ["MappedNames", "cached_names", "names_for"]


class MappedNames(NameRules):
    """The scalar name lookups of a trusted, checksummed cache file (see the module
    docstring); ``source`` is the cache file's path."""

    __slots__ = ("source", "_map", "_tables", "_blob", "_start", "_end")

    def __init__(self, path: str) -> None:
        if sys.byteorder != "little":  # the arrays are little-endian; memoryviews are native
            raise CacheError(f"{path}: a little-endian cache on a big-endian machine")
        self.source = path
        self._map = map_file(path, trusted=True)
        views = self._views(path)  # a refused file's map goes with its last view
        self._tables = {t: (views[f"{t}_keys"], views[f"{t}_name"]) for t in TABLES}
        self._blob, self._start, self._end = views["blob"], views["name_start"], views["name_end"]

    def _views(self, path: str) -> dict[str, memoryview]:
        """Each array as a memoryview of its format, its CRC-32 checked."""
        head = parse_head(self._map, path)
        views = {}
        payload = memoryview(self._map)[head.payload_at:]
        for name, (offset, count, crc) in head.arrays.items():
            fmt = FORMATS[name]
            raw = payload[offset:offset + count * ITEMSIZE[name]]
            if zlib.crc32(raw) != crc:
                raise CacheError(f"{path}: checksum mismatch in {name}")
            views[name] = raw if fmt == "B" else raw.cast(fmt)
        return views

    def _find(self, table: str, key: int) -> str | None:
        keys, names = self._tables[table]
        pos = bisect_left(keys, key)
        if pos == len(keys) or keys[pos] != key:
            return None
        i = names[pos]
        if i >= len(self._start):
            raise CacheError(f"{self.source}: {table}_name points past the name table")
        # libpci takes names as bytes; one that is not UTF-8 reads with U+FFFD per bad byte
        return bytes(self._blob[self._start[i]:self._end[i]]).decode("utf-8", "replace")


def cached_names(path: str | os.PathLike | None = None) -> MappedNames | None:
    """The names of the pci.ids ``path`` (default: ``$GPUCLASS_PCI_IDS``, else the bundled
    file) from its compiled cache, where :meth:`PciDatabase.load` has written one that
    this user can trust, or, for the bundled file of an installed wheel, the cache
    compiled when the wheel was built (:func:`~gpuclass.db.locate.shipped_cache`); None
    otherwise (no cache yet, a changed file, a refused directory, a damaged cache,
    standard input)."""
    src = resolve_name(path)
    if src == "-":
        return None
    cdir = cache_dir()
    if trust_problem(cdir) is None:
        alias = stat_alias(cdir, src)
        target = None if alias is None else alias_target(alias)
        if target is not None:
            try:
                return MappedNames(os.fspath(target))
            except CacheError:
                pass
    shipped = shipped_cache(src)  # a wheel's bundled database, compiled when it was built
    if shipped is None:
        return None
    try:
        return MappedNames(shipped)
    except CacheError:
        return None


def names_for(path: str | os.PathLike | None = None):
    """The names of the pci.ids ``path``: :func:`cached_names` where the cache is there
    (every run after the first), else the database loaded (which writes the cache; a
    missing or broken file is its :class:`~gpuclass.errors.PciIdsError`)."""
    names = cached_names(path)
    if names is None:
        from .database import default_database

        return default_database(path)
    return names
