"""The text matcher, built once and kept beside the compiled database.

Building a :class:`~gpuclass.textmatch.matcher.TextMatcher` reads every GPU name of
pci.ids and spells each several ways (about half a second); loading the built state
takes a few milliseconds and needs neither numpy nor the database.  The state is
keyed by what it is made of: the policy's data, the pci.ids file's bytes, the code
that builds it and the automaton library; a change to any of them is a new key, never
a stale matcher.

The file holds a pickle (the automaton library pickles its automaton), so it is
read only under the cache's trust rules (:func:`gpuclass.cachedir.trust_problem`:
the directory and the file owned by this user and writable by no one else) and only
when its recorded SHA-256 matches; anything else is ignored and the matcher rebuilt.
Writing is best effort: a cache that cannot be written costs the build, nothing more.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path
from typing import Any

from ..cachedir import cache_dir, make_cache_dir, trust_problem, write_atomic

__all__ = ["matcher_key", "load_state", "save_state", "cache_path", "FORMAT", "MAGIC"]

FORMAT = 1
MAGIC = b"GPCLSTM\x01"
_HEAD = len(MAGIC) + 32  # the magic, then the payload's SHA-256
# the modules whose code decides what a built matcher holds
_BUILD_CODE = ("build.py", "names.py", "normalize.py", "clauses.py", "quantity.py", "matcher.py")


def _code_digest() -> str:
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in (*_BUILD_CODE, "../pcinames.py"):
        try:
            h.update((here / name).read_bytes())
        except OSError:
            h.update(name.encode())
    import ahocorasick

    lib = getattr(ahocorasick, "__file__", None)
    if lib:
        st = os.stat(lib)
        h.update(f"{os.path.basename(lib)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


def matcher_key(policy_data: dict, pci_ids: str | os.PathLike) -> str:
    """The key of a matcher built for ``policy_data`` (a compiled policy's ``data``) from
    the pci.ids file ``pci_ids``: a hex SHA-256."""
    h = hashlib.sha256()
    h.update(f"{FORMAT}\0".encode())
    h.update(json.dumps(policy_data, sort_keys=True).encode())
    with open(pci_ids, "rb") as fh:
        h.update(hashlib.file_digest(fh, "sha256").digest())
    h.update(_code_digest().encode())
    return h.hexdigest()


def cache_path(key: str) -> Path:
    return cache_dir() / f"matcher-{key[:40]}.pkl"


def load_state(key: str) -> dict[str, Any] | None:
    """The cached state for ``key``, or None (no file, an untrusted one, a damaged one)."""
    path = cache_path(key)
    if not os.path.lexists(path) or trust_problem(path.parent) or trust_problem(path, kind="file"):
        return None
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    if len(raw) < _HEAD or raw[:len(MAGIC)] != MAGIC:
        return None
    payload = memoryview(raw)[_HEAD:]
    if hashlib.sha256(payload).digest() != raw[len(MAGIC):_HEAD]:
        return None
    try:
        state = pickle.loads(payload)
    except Exception:  # a file of another library version: rebuilt
        return None
    return state if isinstance(state, dict) and state.get("key") == key else None


def save_state(key: str, state: dict[str, Any]) -> Path | None:
    """Write the state for ``key``; the path, or None where the cache cannot take it."""
    path = cache_path(key)
    try:
        make_cache_dir(path.parent)
        if trust_problem(path.parent):
            return None
        payload = pickle.dumps({**state, "key": key}, protocol=pickle.HIGHEST_PROTOCOL)
        write_atomic(path, MAGIC + hashlib.sha256(payload).digest() + payload)
    except (OSError, pickle.PicklingError):
        return None
    return path
