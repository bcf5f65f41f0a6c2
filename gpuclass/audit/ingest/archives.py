"""Collections of inputs: a directory tree, a tar or zip archive (compressed or not).

Each entry comes out as a :class:`Member`: its name inside the collection and how to
open it, or why it is skipped.  Only regular files are read, each through
:func:`gpuclass.inputs.open_input` (a directory's) or the archive's own reader; a
FIFO, a device, a socket, a symlink that leaves the directory (or any symlink in an
archive) is a skipped member, reported and never followed.  A symlink to a regular
file inside the directory is read under its own name.  A damaged tar header is an
error naming the member before it, never an early end of the archive; a member that
cannot be read is an error naming it.

>>> server_name("dumps/gex44-01.lspci.txt"), server_name("fleet/host2/lspci.txt")
('gex44-01.lspci', 'host2')
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import IO

from ...errors import SourceError
from ...inputs import kind_of, open_input
from .compressed import Bounded, Limits, archive_kind, decompress_errors

if TYPE_CHECKING:  # tarfile and zipfile load with the first archive read
    import tarfile
    import zipfile

__all__ = ["Member", "server_name", "iter_dir", "iter_tar", "iter_zip", "archive_kind", "DUMP_SUFFIXES"]

DUMP_SUFFIXES = (".lspci", ".txt", ".out", ".log")
# File names a collector gives every host's dump alike: the server is the folder.
_GENERIC = ("lspci", "pci", "devices", "hardware", "dump", "output")
_TAR_BLOCK = 512


class Member:
    """One entry of a collection: ``open`` gives its bytes, or ``skipped`` says why not."""

    __slots__ = ("name", "open", "skipped", "size")

    def __init__(self, name: str, open: Callable[[], IO[bytes]] | None = None, skipped: str | None = None,
                 size: int = 0) -> None:
        self.name, self.open, self.skipped, self.size = name, open, skipped, size

    def __repr__(self) -> str:
        return f"Member({self.name!r}, open={self.open!r}, skipped={self.skipped!r}, size={self.size!r})"


def server_name(member: str) -> str:
    """The server a dump names: the file name less ``.lspci``/``.txt``/``.out``/``.log``,
    or its folder's name where the file has a name every host's dump shares (``lspci.txt``)."""
    parts = [p for p in member.replace(os.sep, "/").split("/") if p not in ("", ".")]
    name = parts[-1] if parts else ""
    for suffix in DUMP_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    stem = name.split(".")[0].lower()
    if len(parts) > 1 and stem.startswith(_GENERIC):
        return parts[-2]
    return name


def iter_dir(root: str) -> Iterator[Member]:
    """The regular files under ``root`` in name order (symlinked folders are not entered)."""
    real_root = os.path.realpath(root)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        entries = sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))])
        for fname in entries:
            path = os.path.join(dirpath, fname)
            rel = os.path.relpath(path, root)
            try:
                st = os.lstat(path)
            except OSError as exc:
                yield Member(rel, skipped=f"cannot read: {exc.strerror or exc}")
                continue
            if stat.S_ISLNK(st.st_mode):
                target = os.path.realpath(path)
                inside = os.path.commonpath([real_root, target]) == real_root
                try:
                    tst = os.stat(target)
                except OSError:
                    yield Member(rel, skipped="a dangling symlink (not followed)")
                    continue
                if not inside:
                    yield Member(rel, skipped="a symlink leaving the directory (not followed)")
                elif not stat.S_ISREG(tst.st_mode):
                    yield Member(rel, skipped=f"a symlink to {kind_of(tst.st_mode)} (not followed)")
                else:
                    yield Member(rel, _opener(target), size=tst.st_size)
                continue
            if not stat.S_ISREG(st.st_mode):
                yield Member(rel, skipped=f"{kind_of(st.st_mode)} (not read)")
                continue
            yield Member(rel, _opener(path), size=st.st_size)


def _opener(path: str) -> Callable[[], IO[bytes]]:
    return lambda: open_input(path, "audit member", follow=False)


def iter_tar(stream: IO[bytes], name: str, limits: Limits, total: list[int],
             counted: bool | None = None) -> Iterator[Member]:
    """Members of a tar stream, read in order (each opened before the next is asked for).
    ``counted``: the stream is expanded from a compressed one that counts every byte (the
    members' too) against the limits (by default: whether ``stream`` is a ``Bounded``)."""
    import tarfile

    if counted is None:
        counted = isinstance(stream, Bounded)
    try:
        tf = tarfile.open(fileobj=stream, mode="r:" if stream.seekable() else "r|")
    except (tarfile.TarError, *decompress_errors()) as exc:
        raise SourceError(name, None, f"not a readable tar archive: {exc}") from None
    last = None
    seen = 0
    with tf:
        while True:
            # reading a hard link makes tarfile load the rest of the index: take the
            # members from there before asking for more
            if seen < len(tf.members):
                info = tf.members[seen]
            else:
                try:
                    info = tf.next()
                except (tarfile.TarError, *decompress_errors()) as exc:
                    raise SourceError(name, None, f"damaged tar archive after member {last!r}: {exc}") from None
                if info is None:
                    _check_tar_end(tf, stream, name, last)
                    return
                if seen and info is tf.members[seen - 1]:
                    continue  # the member tarfile read on opening, handed out again
            seen += 1
            last = info.name
            if info.isdir():
                continue
            if info.isfile() or info.islnk():
                yield Member(info.name, _tar_opener(tf, info, f"{name}:{info.name}", limits, total, counted),
                             size=info.size)
            elif info.issym():
                yield Member(info.name, skipped=f"a symlink to {info.linkname!r} (not followed)")
            else:
                what = "a FIFO" if info.isfifo() else "a device" if info.isdev() else "not a regular file"
                yield Member(info.name, skipped=f"{what} (not read)")


def _check_tar_end(tf: tarfile.TarFile, stream: IO[bytes], name: str, last: str | None) -> None:
    """tarfile ends quietly at a header it cannot read, and where the data ends: only the
    zero blocks that end an archive may follow, at least one whole one."""
    if not stream.seekable():
        return
    try:
        stream.seek(tf.offset)
        rest = stream.read(2 * _TAR_BLOCK)
    except (OSError, *decompress_errors()):
        return
    where = f"after member {last!r}" if last else "at its start"
    if rest.strip(b"\0"):
        raise SourceError(name, None, f"damaged tar header {where} (at byte {tf.offset}); "
                                      "the archive goes on past it")
    if len(rest) < _TAR_BLOCK:  # not even one whole zero block: cut short (a cut inside the
        # zeros that end the archive, or where a member's header was: members lost)
        raise SourceError(name, None, f"the archive ends {where} without its end-of-archive "
                                      "blocks (truncated?)")


def _tar_opener(tf: tarfile.TarFile, info: tarfile.TarInfo, name: str, limits: Limits,
                total: list[int], counted: bool) -> Callable[[], IO[bytes]]:
    import tarfile

    def open_member() -> IO[bytes]:
        try:
            fh = tf.extractfile(info)
        except (tarfile.TarError, KeyError, *decompress_errors()) as exc:
            raise SourceError(name, None, f"cannot read member: {exc}") from None
        if fh is None:
            raise SourceError(name, None, "cannot read member: not a file")
        # a compressed tar's stream counts every byte it expands, the members' among them:
        # counted again here they would count twice (a 130x archive refused as 260x)
        return Bounded(fh, name, limits, None, None if counted else total)
    return open_member


def iter_zip(stream: IO[bytes], name: str, limits: Limits, total: list[int]) -> Iterator[Member]:
    """Members of a zip archive (the stream must be seekable)."""
    import zipfile

    try:
        zf = zipfile.ZipFile(stream)
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, *decompress_errors()) as exc:
        raise SourceError(name, None, f"not a readable zip archive: {exc}") from None
    listed = _zip_members_listed(stream)
    if listed is not None and listed != len(infos):
        zf.close()
        raise SourceError(name, None, f"damaged zip directory: its end record lists {listed} members, "
                                      f"{len(infos)} could be read")
    with zf:
        for info in infos:
            if info.is_dir():
                continue
            mode = info.external_attr >> 16
            if info.create_system == 3 and stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                yield Member(info.filename, skipped=f"{kind_of(mode)} (not read)")
                continue
            yield Member(info.filename, _zip_opener(zf, info, f"{name}:{info.filename}", limits, total),
                         size=info.file_size)


_EOCD, _EOCD64, _EOCD64_LOCATOR = b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07"


def _zip_members_listed(stream: IO[bytes]) -> int | None:
    """How many members a zip's end-of-directory record says its directory holds (the zip64
    record's count where the plain one overflows), or None where it cannot be read.

    zipfile reads directory entries for as many bytes as the end record gives the
    directory and says nothing when a damaged length ends that early: the count is the
    check that no member was lost.
    """
    try:
        size = stream.seek(0, 2)
        tail_len = min(size, 22 + 0xFFFF)  # the record, and a comment of up to 64 KiB
        stream.seek(size - tail_len)
        tail = stream.read(tail_len)
        at = tail.rfind(_EOCD)
        if at < 0 or at + 22 > len(tail):
            return None
        listed = int.from_bytes(tail[at + 10:at + 12], "little")
        if listed == 0xFFFF:  # zip64: the count is in the zip64 end record
            loc = size - tail_len + at - 20
            if loc < 0:
                return None
            stream.seek(loc)
            locator = stream.read(20)
            if locator[:4] != _EOCD64_LOCATOR:
                return None
            stream.seek(int.from_bytes(locator[8:16], "little"))
            record = stream.read(56)
            if record[:4] != _EOCD64:
                return None
            listed = int.from_bytes(record[32:40], "little")
        return listed
    except (OSError, ValueError, *decompress_errors()):
        return None


def _zip_opener(zf: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, limits: Limits,
                total: list[int]) -> Callable[[], IO[bytes]]:
    import zipfile

    def open_member() -> IO[bytes]:
        try:
            fh = zf.open(info)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, *decompress_errors()) as exc:
            raise SourceError(name, None, f"cannot read member: {exc}") from None
        start, size = info.header_offset, info.compress_size

        def consumed() -> int:
            # the archive's compressed bytes read so far (members are read in order): the
            # ratio is the archive's, expanded so far over read so far, checked piece by piece
            return max(start + size - getattr(fh, "_compress_left", 0), 1)
        return Bounded(fh, name, limits, consumed, total)
    return open_member
