"""The text matcher, built once and kept beside the compiled database: raw data, no pickle.

Building a :class:`~gpuclass.textmatch.matcher.TextMatcher` reads every GPU name of
pci.ids and spells each several ways (about half a second); loading the built state
takes a few tens of milliseconds and needs neither numpy nor the database.  The state is
keyed by what it is made of: the policy's data, the pci.ids file (its path and
identity on disk: inode, size, times), the code that builds it and the automaton
library; a change to any of them is a new key, never a stale matcher.

A matcher is kept in two files: what every listing needs (the names, the words of the
automaton of all but the look-alike spellings, the gate words that tell when a text
could hold one) and the words of every name, read only when a text needs them (see
:meth:`~gpuclass.textmatch.matcher.TextMatcher.cached`).  A file is a trust boundary,
so it holds data only, never code: a fixed head (magic, format, key length, payload
length, CRC-32 of the payload), the whole key, then typed sections (bytes, UTF-8 text,
little-endian unsigned arrays, lists of strings as a count and the strings NUL-separated) in an order
fixed here; the automata are built again from their words on load (a pickled
pyahocorasick automaton, as this cache held up to format 5, runs whatever a crafted
file names when it is loaded; pyahocorasick's own file format is read by C code that
takes the trie's pointers from the file).  A file is read only under the cache's trust
rules (:func:`gpuclass.cachedir.trust_problem`, and again on the open file: the
directory and the file owned by this user and writable by no one else), only when its
size is the one its head states and at most ``MAX_PAYLOAD`` (a file grown to gigabytes
is refused before a byte past the head is read), its key is the one asked for and its
CRC matches; then every value is checked (lengths agree, indices in range, each word as
long as its table says).  Anything else is ignored and the matcher rebuilt.  Writing is
best effort: a cache that cannot be written costs the build, nothing more.  A new
matcher retires all but the ``KEPT`` newest of its kind (and every file of the pickle
format before it).

>>> raw = _encode("all", {"words": [" gtx 1080 ", "mining"]})
>>> _decode("all", raw)
{'words': [' gtx 1080 ', 'mining']}
"""

from __future__ import annotations

import json
import os
import stat
import struct
import sys
import zlib
from array import array

from ..cachedir import cache_dir, file_problem, make_cache_dir, prune, trust_problem, write_atomic
from ..errors import MissingExtraError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["matcher_key", "load_state", "save_state", "cache_path", "common_state", "restore", "automaton",
           "gate", "FORMAT", "MAGIC", "PARTS", "KEPT", "MAX_PAYLOAD", "SCHEMA"]

FORMAT = 6
MAGIC = b"GPCLSTM\x06"
SUFFIX = ".gpctm"
PARTS = ("common", "all")  # what every listing reads; the words of every name
KEPT = 4  # matchers kept per part: a new key (a reinstall, a changed pci.ids or policy) retires the oldest
MAX_PAYLOAD = 256 << 20  # the default matcher's common part is about 1 MB
# magic, format, key length, payload length, CRC-32 of the payload
_HEAD = struct.Struct("<8sIIQI")
_SECTION = struct.Struct("<cQ")  # a section's type and its length in bytes
# The sections of each part, in order, and their types: y bytes, s text, i unsigned
# integers, l a list of strings.
SCHEMA = {
    "common": (("kinds", "y"), ("targets", "y"), ("names", "s"), ("device_ids", "s"), ("chips", "s"),
               ("labels", "s"), ("word_lengths", "i"), ("word_entries", "i"), ("variant_keys", "i"),
               ("variant_values", "i"), ("marker_phrases", "l"), ("marker_entries", "i"), ("heads", "l"),
               ("common_index", "i"), ("common_words", "l"), ("gate_words", "l"), ("flags", "i")),
    "all": (("words", "l"),),
}
_INT_CODES = {b"B": 1, b"H": 2, b"I": 4}  # array typecodes by width (checked below)
_BIG = sys.byteorder == "big"
# the modules whose code decides what a built matcher holds
_BUILD_CODE = ("build.py", "entries.py", "names.py", "normalize.py", "clauses.py", "quantity.py", "matcher.py",
               "overlaps.py", "../pcinames.py")


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
    return os.path.join(cache_dir(), f"matcher-{name}-{part}{SUFFIX}")


# -- the file: head, key, sections ------------------------------------------------------------

def _ints(values: Any) -> tuple[bytes, bytes]:
    top = max(values, default=0)
    if min(values, default=0) < 0 or top >= 1 << 32:
        raise ValueError("an integer the cache cannot hold")
    code = b"B" if top < 1 << 8 else b"H" if top < 1 << 16 else b"I"
    arr = array(code.decode(), values)
    if arr.itemsize != _INT_CODES[code]:  # pragma: no cover - a platform of other widths
        raise ValueError("no array type of that width")
    if _BIG:  # pragma: no cover
        arr.byteswap()
    return code, arr.tobytes()


def _strings(items: list[str]) -> bytes:
    if any("\0" in s for s in items):
        raise ValueError("a string the cache cannot hold")
    return struct.pack("<I", len(items)) + "\0".join(items).encode("utf-8", "surrogatepass")


def _encode(part: str, state: dict[str, Any]) -> bytes:
    """The sections of ``part`` from ``state`` (its keys exactly the schema's)."""
    schema = SCHEMA[part]
    if set(state) != {name for name, _ in schema}:
        raise ValueError(f"a {part} state holds other fields")
    out = []
    for name, kind in schema:
        value = state[name]
        if kind == "y":
            code, data = b"y", bytes(value)
        elif kind == "s":
            code, data = b"s", value.encode("utf-8", "surrogatepass")
        elif kind == "i":
            code, data = _ints(value)
        else:
            code, data = b"l", _strings(list(value))
        out += (_SECTION.pack(code, len(data)), data)
    return b"".join(out)


def _decode(part: str, payload: bytes | memoryview) -> dict[str, Any]:
    """The state of ``part`` from its sections; ValueError (or UnicodeDecodeError, its kind)
    where they are not what the schema says."""
    view = memoryview(payload)
    at, out = 0, {}
    for name, kind in SCHEMA[part]:
        code, n = _SECTION.unpack_from(view, at)
        at += _SECTION.size
        if n > len(view) - at:
            raise ValueError(f"section {name} runs past the payload")
        data = view[at:at + n]
        at += n
        if kind == "y" and code == b"y":
            out[name] = bytes(data)
        elif kind == "s" and code == b"s":
            out[name] = str(data, "utf-8", "surrogatepass")
        elif kind == "i" and code in _INT_CODES:
            out[name] = _array(code, data)
        elif kind == "l" and code == b"l":
            out[name] = _unstrings(data)
        else:
            raise ValueError(f"section {name} of type {code!r}")
    if at != len(view):
        raise ValueError("bytes after the last section")
    return out


def _array(code: bytes, data: memoryview) -> array:
    if len(data) % _INT_CODES[code]:
        raise ValueError("an array of a part of an item")
    arr = array(code.decode())
    arr.frombytes(data)
    if _BIG:  # pragma: no cover
        arr.byteswap()
    return arr


def _unstrings(data: memoryview) -> list[str]:
    if len(data) < 4:
        raise ValueError("a list of strings without its count")
    (count,) = struct.unpack_from("<I", data)
    items = str(data[4:], "utf-8", "surrogatepass").split("\0") if count else []
    if len(items) != count or (not count and len(data) > 4):
        raise ValueError("a list of strings of another count than its own")
    return items


def load_state(key: str, part: str = "common") -> dict[str, Any] | None:
    """The cached state of ``part`` for ``key`` as :data:`SCHEMA` names it, or None (no
    file, an untrusted one, one of another size than its head says or too large, one of
    another key, a damaged one).  The values are data only: :func:`restore` checks them."""
    path = cache_path(key, part)
    if not os.path.lexists(path) or trust_problem(os.path.dirname(path)) or trust_problem(path, kind="file"):
        return None
    want = key.encode("utf-8", "surrogatepass")
    flags = (os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if file_problem(st, path) or st.st_size > _HEAD.size + len(want) + MAX_PAYLOAD:
                return None  # swapped since it was judged, or grown past any matcher: not read
            head = fh.read(_HEAD.size)
            if len(head) != _HEAD.size:
                return None
            magic, fmt, n_key, n_payload, crc = _HEAD.unpack(head)
            if (magic != MAGIC or fmt != FORMAT or n_key != len(want) or n_payload > MAX_PAYLOAD
                    or st.st_size != _HEAD.size + n_key + n_payload):
                return None
            if fh.read(n_key) != want:
                return None  # another matcher whose key names the same file
            payload = fh.read(n_payload)
    except OSError:
        return None
    if len(payload) != n_payload or zlib.crc32(payload) != crc:
        return None
    try:
        return _decode(part, payload)
    except (ValueError, struct.error):  # UnicodeDecodeError is a ValueError
        return None


def save_state(key: str, state: dict[str, Any], part: str = "common") -> str | None:
    """Write the state of ``part`` for ``key`` (the fields :data:`SCHEMA` names); the path,
    or None where the cache cannot take it."""
    path = cache_path(key, part)
    try:
        payload = _encode(part, state)
        if len(payload) > MAX_PAYLOAD:
            return None
        make_cache_dir(os.path.dirname(path))
        if trust_problem(os.path.dirname(path)):
            return None
        raw = key.encode("utf-8", "surrogatepass")
        write_atomic(path, b"".join((_HEAD.pack(MAGIC, FORMAT, len(raw), len(payload), zlib.crc32(payload)),
                                     raw, payload)))
    except (OSError, ValueError):
        return None
    folder = os.path.dirname(path)
    prune(folder, "matcher-", f"-{part}{SUFFIX}", KEPT, spare=path)
    prune(folder, "matcher-", f"-{part}.pkl", 0)  # the pickles of format 5 and before: never read again
    return path


# -- a matcher's state ------------------------------------------------------------------------

def automaton(ahocorasick: Any, words: Any) -> Any:
    """The automaton of ``words``, pairs ``(k, word)``: a hit's value is ``k``, the word's
    index in the matcher's word table (an int, kept in the automaton's nodes)."""
    auto = ahocorasick.Automaton(ahocorasick.STORE_INTS)
    add = auto.add_word
    for k, word in words:
        add(word, k)
    auto.make_automaton()
    return auto


def gate(ahocorasick: Any, words: list[str]) -> Any:
    """The gate automaton of ``words`` (see :meth:`TextMatcher._automaton`)."""
    auto = ahocorasick.Automaton(ahocorasick.STORE_LENGTH)
    add = auto.add_word
    for word in words:
        add(word)
    auto.make_automaton()
    return auto


def common_state(m: Any) -> dict[str, Any]:
    """What the common part keeps of a built matcher ``m`` (ValueError where an entry's
    text or a number cannot be kept)."""
    from .entries import EntryTable

    kinds, targets, names, device_ids, chips, labels = EntryTable.columns_of(m.entries)
    return {"kinds": kinds, "targets": targets, "names": names, "device_ids": device_ids, "chips": chips,
            "labels": labels, "word_lengths": m._word.lengths, "word_entries": m._word.entries,
            "variant_keys": list(m.variant_of), "variant_values": list(m.variant_of.values()),
            "marker_phrases": list(m._markers), "marker_entries": list(m._markers.values()),
            "heads": sorted(m._heads), "common_index": m._common_index,
            "common_words": [m._words[k] for k in m._common_index], "gate_words": m._gate_words or [],
            "flags": [int(m.leftmost_longest), int(m._gate_words is not None), m.n_patterns]}


def restore(m: Any, state: dict[str, Any]) -> bool:
    """Set a matcher ``m`` (its policy's cards set) from a common ``state``, its automata
    built again from their words; False where a value does not hold (nothing set then)."""
    from .entries import VARIANT_MARK, EntryTable, WordTable

    kinds, targets = state["kinds"], state["targets"]
    n = len(kinds)
    lengths, entries = state["word_lengths"], state["word_entries"]
    index, words = state["common_index"], state["common_words"]
    flags = state["flags"]
    if not (n and len(targets) == n and max(kinds) <= VARIANT_MARK and max(targets) <= len(m.card_ids)
            and all(state[c].count("\n") == n - 1 for c in ("names", "device_ids", "chips", "labels"))
            and len(lengths) == len(entries) and max(entries, default=0) < n
            and len(state["variant_keys"]) == len(state["variant_values"])
            and max(state["variant_keys"], default=0) < n and max(state["variant_values"], default=0) < n
            and len(state["marker_phrases"]) == len(state["marker_entries"])
            and max(state["marker_entries"], default=0) < n
            and len(index) == len(words) and max(index, default=0) < len(lengths)
            and all(len(w) == lengths[k] + 1 for k, w in zip(index, words))
            and len(flags) == 3 and flags[0] <= 1 and flags[1] <= 1 and (flags[1] or not state["gate_words"])):
        return False
    try:
        import ahocorasick
    except ImportError as exc:  # pragma: no cover - the key needs it first
        raise MissingExtraError("ahocorasick", "audit", "free-text matching") from exc
    m.entries = EntryTable(kinds, targets, state["names"], state["device_ids"], state["chips"], state["labels"])
    m.variant_of = dict(zip(state["variant_keys"], state["variant_values"]))
    m._markers = dict(zip(state["marker_phrases"], state["marker_entries"]))
    m._word = WordTable(lengths, entries)
    m.leftmost_longest = bool(flags[0])
    m._heads = frozenset(state["heads"])
    m._common = automaton(ahocorasick, zip(index, words))
    m._gate = gate(ahocorasick, state["gate_words"]) if flags[1] else None
    m._gate_words = state["gate_words"] if flags[1] else None
    m.n_patterns = flags[2]
    m._auto = None if m._gate is not None else m._common
    return True


def all_words(m: Any, state: dict[str, Any] | None) -> list[str] | None:
    """The words of every name from an ``all`` state, where they fit ``m``'s word table."""
    if state is None:
        return None
    words, lengths = state["words"], m._word.lengths
    if len(words) != len(lengths) or not all(len(w) == n + 1 for w, n in zip(words, lengths)):
        return None
    return words
