"""The text matcher, built once and kept beside the compiled database.

Building a :class:`~gpuclass.textmatch.matcher.TextMatcher` reads every GPU name of
pci.ids and spells each several ways (about half a second); loading the built state
takes a few milliseconds and needs neither numpy nor the database.  The state is
keyed by what it is made of: the policy's data, the pci.ids file (its path and
identity on disk: inode, size, times), the code that builds it and the automaton
library; a change to any of them is a new key, never a stale matcher.

A matcher is kept in two files: what every listing needs (the names, the automaton of
all but the look-alike spellings, the gate that tells when a text could hold one) and
the automaton of every name, read only when a text needs it (see
:meth:`~gpuclass.textmatch.matcher.TextMatcher.cached`).  Each file holds its whole key
and a CRC-32 of its payload, a pickle (the automaton library pickles its automaton):
it is read only under the cache's trust rules (:func:`gpuclass.cachedir.trust_problem`:
the directory and the file owned by this user and writable by no one else), only when
its key is the one asked for and its CRC matches; anything else is ignored and the
matcher rebuilt.  Writing is best effort: a cache that cannot be written costs the
build, nothing more.  A new matcher retires all but the ``KEPT`` newest of its kind.
"""

from __future__ import annotations

import json
import os
import zlib

try:  # the unpickler itself: the pickle module around it costs a listing audit's start 2 ms
    from _pickle import loads as _loads
except ImportError:  # pragma: no cover - an interpreter without the C pickle
    from pickle import loads as _loads

from ..cachedir import cache_dir, make_cache_dir, prune, trust_problem, write_atomic
from ..errors import MissingExtraError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["matcher_key", "load_state", "save_state", "cache_path", "FORMAT", "MAGIC", "PARTS", "KEPT"]

FORMAT = 5
MAGIC = b"GPCLSTM\x04"
PARTS = ("common", "all")  # what every listing reads; the automaton of every name
_LEN = 4  # bytes of a length or a CRC, little-endian
KEPT = 4  # matchers kept per part: a new key (a reinstall, a changed pci.ids or policy) retires the oldest
# the modules whose code decides what a built matcher holds
_BUILD_CODE = ("build.py", "entries.py", "names.py", "normalize.py", "clauses.py", "quantity.py", "matcher.py",
               "../pcinames.py")


def _identity(path: str) -> str:
    st = os.stat(path)
    # ctime too: a rewrite that keeps size and restores mtime still moves it
    return f"{os.path.realpath(path)} {st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}"


def _code_identity() -> str:
    here = os.path.dirname(__file__)
    out = []
    for name in _BUILD_CODE:
        try:
            out.append(_identity(os.path.join(here, name)))
        except OSError:
            out.append(name)
    try:
        import ahocorasick
    except ImportError as exc:
        raise MissingExtraError("ahocorasick", "audit", "free-text matching") from exc

    lib = getattr(ahocorasick, "__file__", None)
    if lib:
        out.append(_identity(lib))
    return "\n".join(out)


def matcher_key(policy_data: dict, pci_ids: str | os.PathLike) -> str:
    """The key of a matcher built for ``policy_data`` (a compiled policy's ``data``) from
    the pci.ids file ``pci_ids`` as it is on disk now: a text (the files hold it whole).

    Raises OSError when ``pci_ids`` cannot be stat'ed.
    """
    return "\n".join((f"gpuclass text matcher {FORMAT}", json.dumps(policy_data, sort_keys=True),
                      "pci.ids " + _identity(os.fspath(pci_ids)), _code_identity()))


def cache_path(key: str, part: str = "common") -> str:
    """The file of ``part`` (one of ``PARTS``) of the matcher of ``key``."""
    raw = key.encode("utf-8", "surrogatepass")
    name = f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}"
    return os.path.join(cache_dir(), f"matcher-{name}-{part}.pkl")


def load_state(key: str, part: str = "common") -> dict[str, Any] | None:
    """The cached state of ``part`` for ``key``, or None (no file, an untrusted one, one of
    another key, a damaged one)."""
    path = cache_path(key, part)
    if not os.path.lexists(path) or trust_problem(os.path.dirname(path)) or trust_problem(path, kind="file"):
        return None
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    want = key.encode("utf-8", "surrogatepass")
    head = len(MAGIC) + _LEN
    if len(raw) < head + len(want) + _LEN or raw[:len(MAGIC)] != MAGIC:
        return None
    n = int.from_bytes(raw[len(MAGIC):head], "little")
    if n != len(want) or raw[head:head + n] != want:
        return None  # another matcher whose key names the same file
    crc = int.from_bytes(raw[head + n:head + n + _LEN], "little")
    payload = memoryview(raw)[head + n + _LEN:]
    if zlib.crc32(payload) != crc:
        return None
    try:
        state = _loads(payload)
    except Exception:  # a file of another library version: rebuilt
        return None
    return state if isinstance(state, dict) else None


def save_state(key: str, state: dict[str, Any], part: str = "common") -> str | None:
    """Write the state of ``part`` for ``key``; the path, or None where the cache cannot take it."""
    import pickle

    path = cache_path(key, part)
    try:
        make_cache_dir(os.path.dirname(path))
        if trust_problem(os.path.dirname(path)):
            return None
        payload = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
        raw = key.encode("utf-8", "surrogatepass")
        write_atomic(path, b"".join((MAGIC, len(raw).to_bytes(_LEN, "little"), raw,
                                     zlib.crc32(payload).to_bytes(_LEN, "little"), payload)))
    except (OSError, pickle.PicklingError):
        return None
    prune(os.path.dirname(path), "matcher-", f"-{part}.pkl", KEPT, spare=path)
    return path
