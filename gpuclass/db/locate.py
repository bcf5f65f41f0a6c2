"""Where a pci.ids comes from, and reading it (compressed or not).

Resolution order: an explicit path, else ``$GPUCLASS_PCI_IDS``, else the copy
bundled in the package.  ``system_pci_ids()`` finds the operating system's copy
for callers that prefer it.

>>> bundled_path().name
'pci.ids'
>>> read_pci_ids(bundled_path())[:1]
b'#'
"""

from __future__ import annotations

import os
import zlib

from ..compression import STDLIB_KINDS, SUFFIXES, compression_of, decompressing
from ..compression import errors as compression_errors
from ..errors import PciIdsError, SourceError
from ..inputs import input_name, read_input
from ..lazy import Pattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "ENV_PCI_IDS",
    "SYSTEM_LOCATIONS",
    "bundled_path",
    "bundled_name",
    "shipped_cache",
    "shipped_cache_name",
    "system_pci_ids",
    "resolve_path",
    "resolve_name",
    "read_pci_ids",
    "header_info",
]

ENV_PCI_IDS = "GPUCLASS_PCI_IDS"

# Where distributions install pci.ids (hwdata on Fedora/Arch/Debian-new, misc on older Debian).
SYSTEM_LOCATIONS = (
    "/usr/share/hwdata/pci.ids",
    "/usr/share/misc/pci.ids",
    "/usr/share/pci.ids",
    "/usr/local/share/pci.ids",
)
# the plain file, then each compressed form the standard library reads
_SUFFIXES = ("", *(suffix for suffix, plain, kind in SUFFIXES if not plain and kind in STDLIB_KINDS))

# A generous bound on the decompressed size: pci.ids is under 2 MB today.
MAX_DECOMPRESSED = 256 * 1024 * 1024
# pci.ids compresses 4-8x (a synthetic one up to ~150x): 200x its compressed size, past
# 16 MiB, is a bomb.
MAX_RATIO = 200
RATIO_FLOOR = 16 * 1024 * 1024


def bundled_path() -> Path:
    """The pci.ids shipped with the package (or the source tree's ``data/`` copy)."""
    from pathlib import Path

    return Path(bundled_name())


def bundled_name() -> str:
    """:func:`bundled_path` as a string (no pathlib: a listing audit starts without it)."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    packaged = os.path.join(package, "data", "pci.ids")
    if os.path.isfile(packaged):
        return packaged
    return os.path.join(os.path.dirname(package), "data", "pci.ids")


def shipped_cache_name(data: bytes) -> str:
    """The file name under which a wheel ships the compiled cache of the pci.ids ``data``
    beside it: its length and CRC-32 (``pci.ids-1659114-0a1b2c3d.gpcdb``)."""
    return f"pci.ids-{len(data)}-{zlib.crc32(data):08x}.gpcdb"


def shipped_cache(src: str | os.PathLike) -> str | None:
    """The compiled cache the wheel ships beside the bundled pci.ids, when ``src`` is that
    file and the cache was compiled from its bytes as they are now (the name says their
    length and CRC-32: :func:`shipped_cache_name`); else None (a source checkout, another
    pci.ids, a bundled file changed since).

    A fresh machine (a rescue system at every boot) has no cache of its own yet: its first
    command maps this one (:func:`gpuclass.db.mapped.cached_names`) instead of importing
    numpy to parse the text and write one, at the cost of reading the file once (about
    1.5 ms).  Its contents are trusted as the user's own cache is, on the same checks:
    owned by this user or root and writable by no one else, every array's CRC-32.
    """
    bundled = bundled_name()
    if os.path.abspath(src) != os.path.abspath(bundled):
        return None
    directory = os.path.dirname(bundled)
    try:
        shipped = {n for n in os.listdir(directory) if n.startswith("pci.ids-") and n.endswith(".gpcdb")}
        if not shipped:
            return None
        with open(bundled, "rb") as fh:
            name = shipped_cache_name(fh.read(MAX_DECOMPRESSED + 1))
    except OSError:
        return None
    return os.path.join(directory, name) if name in shipped else None


def system_pci_ids(root: str | os.PathLike = "/") -> Path | None:
    """The first pci.ids the system has, plain or compressed, or None.

    >>> system_pci_ids("/nonexistent") is None
    True
    """
    from pathlib import Path

    base = Path(root)
    for loc in SYSTEM_LOCATIONS:
        for suffix in _SUFFIXES:
            cand = base / (loc.lstrip("/") + suffix)
            if cand.is_file():
                return cand
    return None


def resolve_path(path: str | os.PathLike | None = None) -> Path:
    """The pci.ids to use: ``path``, else ``$GPUCLASS_PCI_IDS``, else the bundled copy.

    ``-`` (standard input) stays ``Path("-")``: :func:`read_pci_ids` reads it.
    """
    from pathlib import Path

    return Path(resolve_name(path))


def resolve_name(path: str | os.PathLike | None = None) -> str:
    """:func:`resolve_path` as a string (no pathlib)."""
    if path is not None:
        return os.fspath(path)
    env = os.environ.get(ENV_PCI_IDS)
    if env:
        return env
    return bundled_name()


def _decompress(raw: bytes, name: str) -> bytes:
    kind = compression_of(raw[:8])
    if kind is None:
        return raw
    if kind not in STDLIB_KINDS:
        raise PciIdsError(name, None, f"a {kind} archive: gpuclass reads pci.ids plain, gzip, xz or bzip2")
    try:
        return _bounded(decompressing(_BytesReader(raw), kind, name), name, len(raw))
    except compression_errors() as exc:
        raise PciIdsError(name, None, f"truncated or corrupt {_WORD.get(kind, kind)} archive: {exc}") from None


_WORD = {"bz2": "bzip2"}


class _BytesReader:
    """Minimal file object over bytes (io.BytesIO would copy the input)."""

    def __init__(self, data: bytes) -> None:
        self._view = memoryview(data)
        self._pos = 0

    def read(self, n: int = -1) -> bytes:
        end = len(self._view) if n is None or n < 0 else min(len(self._view), self._pos + n)
        chunk = self._view[self._pos : end].tobytes()
        self._pos = end
        return chunk

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        pass


def _bounded(stream, name: str, packed: int) -> bytes:
    """The decompressed text, a megabyte at a time, stopped at MAX_DECOMPRESSED bytes or
    at MAX_RATIO times the compressed size (past a floor): a bomb is refused early."""
    parts = []
    size = 0
    ratio_limit = max(RATIO_FLOOR, MAX_RATIO * packed)
    with stream:
        while True:
            chunk = stream.read(1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_DECOMPRESSED:
                raise PciIdsError(name, None, f"decompressed size exceeds {MAX_DECOMPRESSED} bytes")
            if size > ratio_limit:
                raise PciIdsError(name, None, f"decompresses more than {MAX_RATIO} times its "
                                              f"{packed} bytes (a decompression bomb?)")
            parts.append(chunk)
    return b"".join(parts)


def read_pci_ids(path: str | os.PathLike) -> bytes:
    """The text of a pci.ids file (``-``: standard input); gzip, xz and bzip2 are
    recognised by their magic bytes.

    The file must be a regular file (a FIFO, a device, a directory or a socket
    is refused at once) and hold at most :data:`MAX_DECOMPRESSED` bytes, before
    and after decompression.  A truncated or corrupt archive raises
    :class:`PciIdsError` rather than yielding a silently shorter database.
    """
    name = input_name(path)
    try:
        raw = read_input(path, "database", MAX_DECOMPRESSED)
    except SourceError as exc:
        raise PciIdsError(name, None, exc.reason) from None
    return _decompress(raw, name)


# Whitespace is stripped in Python: a lazy group before "\s*$" backtracked quadratically.
_HEADER_RE = Pattern(rb"(?m)^#[ \t]*(Version|Date):([^\n]*)")


def header_info(data: bytes) -> dict[str, str | None]:
    """Version and date from the comment header of a pci.ids text.

    >>> header_info(b"#\\tVersion: 2026.08.22\\n#\\tDate:    2026-08-22 03:15:01\\n")
    {'version': '2026.08.22', 'date': '2026-08-22 03:15:01'}
    """
    info: dict[str, str | None] = {"version": None, "date": None}
    # The header is the leading comment block; never scan the whole file.
    head = data[:4096]
    for m in _HEADER_RE.finditer(head):
        key = m.group(1).decode().lower()
        if info[key] is None:
            info[key] = m.group(2).strip().decode("utf-8", "replace")
    return info
