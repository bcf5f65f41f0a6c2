"""The pci.ids pair's contract: the tokenizer's output and codes, and the shared finish.

Both tokenizers (``pciids.pxi`` compiled, ``pciids_py.py`` the twin) emit one
flat entry stream in file order: keys and entry numbers per table, line numbers,
name offsets into the input, and ``(line, code, field, start)`` per bad line, with
the codes below.  :func:`finish_parse`, the one step both share, splits the stream
into per-table sorted key arrays, finds duplicates and turns codes into typed
errors; the differential tests hold the two tokenizers to the same stream.

>>> from gpuclass._native import twin
>>> t, skipped = twin.parse_pci_ids(b"10de  NVIDIA\\n\\t1b80  GP104\\n")
>>> [hex(k) for k in t["device_keys"]], skipped
(['0x10de1b80'], [])
"""

from __future__ import annotations

import numpy as np

from ...errors import PciIdsError, SkippedLine

__all__ = ["KIND_NAMES", "TABLES", "KEY_DTYPES", "KEPT", "finish_parse", "format_reason", "MAX_LINE",
           "too_large", "passes_disagree", "parse_pci_ids", "FILL_ROOM_CUT"]

# Longest line (bytes before the newline, carriage return included) that
# libpci's 1024-byte line buffer accepts; longer lines are errors there too.
MAX_LINE = 1022

# Entry kinds emitted by the tokenizer, and the table each one fills.
K_VENDOR, K_DEVICE, K_SUBSYS, K_GENSUB, K_CLASS, K_SUBCLASS, K_PROGIF = range(7)
TABLES = ("vendor", "device", "subsys", "gensub", "class", "subclass", "progif")
KEY_DTYPES = (np.uint16, np.uint32, np.uint64, np.uint32, np.uint8, np.uint16, np.uint32)
KIND_NAMES = (
    "vendor",
    "device",
    "subsystem",
    "generic subsystem",
    "class",
    "subclass",
    "prog-if",
)

# Error codes shared by both tokenizers (and _native/include/gpuclass_codes.h).
E_BAD_HEX = 1
E_WIDTH = 2
E_NO_NAME = 3
E_TABS = 4
E_DEVICE_FIRST = 5
E_SUBSYS_FIRST = 6
E_PROGIF_IN_CLASS = 7
E_DUPLICATE = 8
E_UTF8 = 9
E_TOO_LONG = 10
E_NUL = 11
E_GENSUB_VENDOR = 12
E_GENSUB_HEADER = 13
E_GENSUB_NEST = 14
E_IN_SKIPPED = 15

REASONS = {
    E_BAD_HEX: "bad hex digit",
    E_WIDTH: "wrong ID width",
    E_NO_NAME: "missing",
    E_TABS: "too many leading tabs (at most 2)",
    E_DEVICE_FIRST: "device line before any vendor or class",
    E_SUBSYS_FIRST: "subsystem line before any device",
    E_PROGIF_IN_CLASS: "prog-if line directly under its class line: read as subclass 00, as libpci does",
    E_DUPLICATE: "duplicate entry",
    E_UTF8: "not UTF-8 (kept, as libpci takes any byte; each bad byte reads as U+FFFD)",
    E_TOO_LONG: f"line too long (over {MAX_LINE} bytes)",
    E_NUL: "NUL byte in line",
    E_GENSUB_VENDOR: "generic subsystem block for a vendor not defined above",
    E_GENSUB_HEADER: "malformed generic subsystem header (expected 'S vvvv')",
    E_GENSUB_NEST: "a generic subsystem block takes one level of entries only",
    E_IN_SKIPPED: "inside a block whose header was skipped",
}

# Codes of lines that are kept (libpci accepts them) but listed in lenient mode; the
# tokenizers report them only there, and never stop at them.
KEPT = frozenset((E_UTF8, E_PROGIF_IN_CLASS))

# Field codes: which ID of the line the error is about (0: the line as a whole).
FIELDS = (
    "",
    "vendor ID",
    "device ID",
    "subsystem vendor ID",
    "subsystem device ID",
    "generic subsystem vendor ID",
    "generic subsystem device ID",
    "class ID",
    "subclass ID",
    "prog-if ID",
)
F_NONE, F_VENDOR, F_DEVICE, F_SUBVENDOR, F_SUBDEVICE, F_GSVENDOR, F_GSDEVICE, F_CLASS, F_SUBCLASS, F_PROGIF = range(10)

# A name's problem (missing, not UTF-8) is about the name of the line's entry, not its ID.
_NAME_FIELDS = {
    F_VENDOR: "vendor name",
    F_DEVICE: "device name",
    F_SUBDEVICE: "subsystem name",
    F_GSDEVICE: "generic subsystem name",
    F_CLASS: "class name",
    F_SUBCLASS: "subclass name",
    F_PROGIF: "prog-if name",
    # the line ends after the subsystem vendor: what is missing is the subsystem device ID
    F_SUBVENDOR: "subsystem device ID",
}


def too_large(size: int) -> PciIdsError:
    """The error for an input past the 4 GiB that 32-bit name offsets address."""
    return PciIdsError("<pci.ids>", None, f"input of {size} bytes exceeds the 4 GiB limit")


# The compiled tokenizer counts in a first pass and fills buffers of exactly that size in
# a second; the second checks that it writes no more than the first counted and that it
# ends with the same counts (passes_disagree otherwise).  Tests set this above 0 to give
# the second pass less room than the first counted, and so prove the check.
FILL_ROOM_CUT = 0


def passes_disagree(counted: tuple, filled: tuple, line: int | None) -> PciIdsError:
    """The error for a fill pass that did not produce what the count pass counted:
    ``(entries per kind, entries, errors)`` of each, and the line where the fill pass
    ran out of room (None: it ended with other counts)."""
    return PciIdsError("<pci.ids>", line, f"the tokenizer's passes disagree (an internal error): "
                       f"the count pass found {counted[1]} entries {list(counted[0])} and "
                       f"{counted[2]} errors, the fill pass {filled[1]} entries {list(filled[0])} "
                       f"and {filled[2]} errors")


def format_reason(code: int, field: int) -> str:
    """The human reason for an error code, naming the field when there is one.

    >>> format_reason(E_BAD_HEX, F_DEVICE), format_reason(E_NO_NAME, F_DEVICE)
    ('device ID: bad hex digit', 'device name: missing')
    """
    reason = REASONS[code]
    if code in (E_NO_NAME, E_UTF8) and field in _NAME_FIELDS:
        return f"{_NAME_FIELDS[field]}: {reason}"
    if code == E_PROGIF_IN_CLASS:
        return reason
    return f"{FIELDS[field]}: {reason}" if field else reason


def _line_text(data: bytes, start: int) -> str:
    end = data.find(b"\n", start)
    if end < 0:
        end = len(data)
    return data[start:end].rstrip(b"\r").decode("utf-8", "replace")


def _format_key(kind: int, key: int) -> str:
    if kind == K_VENDOR:
        return f"{key:04x}"
    if kind in (K_DEVICE, K_GENSUB):
        return f"{key >> 16:04x}:{key & 0xFFFF:04x}"
    if kind == K_SUBSYS:
        return f"{key >> 48:04x}:{(key >> 32) & 0xFFFF:04x} {(key >> 16) & 0xFFFF:04x}:{key & 0xFFFF:04x}"
    if kind == K_CLASS:
        return f"{key:02x}"
    if kind == K_SUBCLASS:
        return f"{key:04x}"
    return f"{key:06x}"


def _dup_reason(kind: int, key: int, first_line: int) -> str:
    return f"duplicate {KIND_NAMES[kind]} {_format_key(kind, key)} (first defined at line {first_line})"


def finish_parse(data, keys_by_kind, entries_by_kind, lines, name_start, name_end, errors, strict, filename):
    """Turn a tokenizer's entries (keys and entry numbers per table) into the tables.

    ``errors`` holds ``(line, code, field, start)`` tuples: in strict mode at
    most one (the tokenizer stops there, so every entry precedes it), in lenient
    mode every skipped line and every line kept with a note (codes in ``KEPT``),
    which becomes a ``SkippedLine`` with ``kept=True``.  A key defined twice is a duplicate: strict mode
    raises at the earliest one, lenient mode keeps the first definition.
    """
    # Group entries by table, keeping file order inside each group.
    grouped = []
    dups = []  # (line, kind, key, first_line, entry index)
    for kind, dtype in enumerate(KEY_DTYPES):
        entry = entries_by_kind[kind]
        tkeys = keys_by_kind[kind].astype(dtype)
        if len(tkeys) > 1 and not bool(np.all(tkeys[1:] > tkeys[:-1])):
            perm = np.argsort(tkeys, kind="stable")  # stable: file order among equals
            tkeys, entry = tkeys[perm], entry[perm]
            same = tkeys[1:] == tkeys[:-1]
            if same.any():
                first = 0
                for pos in range(1, len(tkeys)):
                    if not same[pos - 1]:
                        first = pos
                        continue
                    e = int(entry[pos])
                    dups.append((int(lines[e]), kind, int(tkeys[pos]), int(lines[entry[first]]), e))
                keep = np.concatenate(([True], ~same))
                tkeys, entry = tkeys[keep], entry[keep]
        grouped.append((tkeys, entry))
    dups.sort()

    if strict:
        if dups:
            line, kind, key, first, _ = dups[0]
            raise PciIdsError(filename, line, _dup_reason(kind, key, first))
        if errors:
            line, code, field, _start = errors[0]
            raise PciIdsError(filename, line, format_reason(code, field))
        skipped: list[SkippedLine] = []
    else:
        skipped = [
            SkippedLine(line, format_reason(code, field), _line_text(data, start), code in KEPT)
            for line, code, field, start in errors
        ]
        if dups:
            # Line starts are needed only here, so they are found only here.
            line_starts = np.concatenate(([0], np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + 1))
            for line, kind, key, first, _e in dups:
                text = _line_text(data, int(line_starts[line - 1]))
                skipped.append(SkippedLine(line, _dup_reason(kind, key, first), text))
        skipped.sort(key=lambda item: item.line)

    # The input itself is the name blob (zero-copy); a saved cache compacts it.
    tables = {"blob": np.frombuffer(data, dtype=np.uint8), "name_start": name_start, "name_end": name_end}
    for table, (tkeys, entry) in zip(TABLES, grouped):
        tables[f"{table}_keys"] = np.ascontiguousarray(tkeys)
        tables[f"{table}_name"] = entry.astype(np.uint32)
    return tables, skipped


def parse_pci_ids(scan, data, strict=True, filename="<pci.ids>"):
    """Parse pci.ids text with tokenizer ``scan`` into sorted key arrays and one name blob.

    Returns ``(tables, skipped)``: ``tables`` maps ``<table>_keys`` and
    ``<table>_name`` to arrays plus ``blob``, ``name_start`` and ``name_end``
    (names are slices of the input, which becomes the blob); ``skipped`` lists
    the lines lenient mode (``strict=False``) skipped.  Strict mode raises
    :class:`~gpuclass.errors.PciIdsError` at the first bad line.
    """
    data = bytes(data)
    return finish_parse(data, *scan(data, strict), strict, filename)
