"""Walking collections of per-server files: a directory tree, a tar or zip archive.

Each member comes out as ``(server name, bytes or the exception that stopped its
read)``; the server is named after the file.

>>> server_name("dumps/gex44-01.lspci.txt"), server_name("host2.log")
('gex44-01.lspci', 'host2')
"""

from __future__ import annotations

import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import SourceError
from .progress import Progress

__all__ = ["server_name", "iter_dir", "iter_archive"]


def server_name(member: str) -> str:
    name = Path(member).name
    for suffix in (".lspci", ".txt", ".out", ".log"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def iter_dir(path: Path, progress: "Progress | None") -> Iterator[tuple[str, bytes | Exception]]:
    for p in sorted(x for x in path.rglob("*") if not x.is_dir()):
        try:
            data = p.read_bytes()
        except OSError as exc:
            yield server_name(p.name), exc
            continue
        if progress:
            progress.advance(len(data))
        yield server_name(str(p.relative_to(path))), data


def iter_archive(path: Path, progress: "Progress | None") -> Iterator[tuple[str, bytes | Exception]]:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                try:
                    data = zf.read(info)
                except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
                    yield server_name(info.filename), exc
                    continue
                if progress:
                    progress.advance(info.compress_size)
                yield server_name(info.filename), data
        return
    try:
        tf = tarfile.open(path, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise SourceError(str(path), None, f"not a tar or zip archive: {exc}") from None
    with tf:
        # stream mode: members one after another, never the whole index in memory
        while True:
            try:
                info = tf.next()
            except tarfile.TarError as exc:
                yield f"{path.name}@{tf.offset}", exc
                return
            if info is None:
                return
            if not info.isfile():
                continue
            fh = tf.extractfile(info)
            try:
                data = fh.read() if fh is not None else b""
            except (tarfile.TarError, OSError, EOFError) as exc:
                yield server_name(info.name), exc
                return
            if progress:
                progress.set(tf.fileobj.tell() if hasattr(tf.fileobj, "tell") else 0)
            yield server_name(info.name), data
