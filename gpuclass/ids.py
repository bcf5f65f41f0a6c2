"""PCI IDs and addresses written as text: the one parser of each, for one value or a column.

Every source of IDs (policy files, the command line, lspci dumps, modalias
strings, audit tables, sysfs entry names) reads them here, so "what is a hex
ID" and "what is a PCI address" have one answer.

- :func:`cell_parts`: the hex-cell grammar, the one rule every reader of a written ID
  follows (the compiled core's cell parser is held equal to it by
  ``tests/native/test_cell_grammar.py``):

  1. leading and trailing whitespace is stripped, whitespace as :meth:`str.isspace`
     defines it (ASCII blanks and 0x1c-0x1f, U+0085, U+00A0, U+1680, U+2000-U+200A,
     U+2028, U+2029, U+202F, U+205F, U+3000); nothing left: the cell is missing;
  2. then one optional ``[ ]`` pair around the rest (lspci's ``[10de]``);
  3. then an optional ``0x`` or ``0X``;
  4. then 1 to ``maxdigits`` ASCII hex digits, and nothing else.

  Bytes are read as UTF-8; a byte that is not part of UTF-8 is simply not a digit
  (nor whitespace).
- :func:`class_value`: a class cell of up to 4 digits (or an integer up to 0xFFFF) is
  base class and subclass, shifted left 8; 6 digits include the prog-if.
- :func:`parse_id`: one ID of at most ``bits/4`` hex digits; anything else is an
  :class:`~gpuclass.errors.InputError` naming the field.
- :func:`parse_address`: ``[domain:]bus:slot.function`` (the domain 4 to 8 digits).
- :func:`hex_matrix`: fixed-width hex digits of many equal-length strings at once
  (lspci's fixed columns: a file format of its own, not the cell grammar).

>>> cell_parts("\\u00a0[0x10DE] ", 4), cell_parts("  ", 4), cell_parts("10de1", 4)
((0, 4318, 4), (1, 0, 0), (2, 0, 0))
>>> parse_id("10DE", "vendor"), parse_id("0x27b0", "device"), parse_id("3", "class", bits=24)
(4318, 10160, 3)
>>> parse_address("0000:e1:00.0"), parse_address("e1:00.7"), parse_address("e1:20.0")
((0, 225, 0, 0), (0, 225, 0, 7), None)
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

TYPE_CHECKING = False

from .constants import NO_ADDRESS
from .errors import InputError

if TYPE_CHECKING:
    from typing import Any

    import numpy as np

__all__ = ["HEX_DIGITS", "CELL_OK", "CELL_MISSING", "CELL_BAD", "cell_parts", "class_value",
           "parse_id", "id_value", "parse_address", "ADDRESS_PATTERN", "hex_matrix",
           "ascii_matrix", "format_address"]

HEX_DIGITS = "0123456789abcdefABCDEF"
_HEX_SET = frozenset(HEX_DIGITS)

# A cell's state (the kernels' GPUCLASS_CELL_* in gpuclass_codes.h, tested equal).
CELL_OK, CELL_MISSING, CELL_BAD = 0, 1, 2

# [domain:]bus:slot.function; slot 00-1f, function 0-7.  Bounded repeats: linear.
ADDRESS_PATTERN = r"(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([01][0-9a-fA-F])\.([0-7])"


def cell_parts(text: str | bytes, maxdigits: int) -> tuple[int, int, int]:
    """``(CELL_*, value, digits)`` of one written hex cell: the grammar above.

    ``value`` and ``digits`` are 0 unless the cell is ``CELL_OK``.  ``bytes`` are read as
    UTF-8, each byte that is not part of it as a character that is neither whitespace nor
    a digit.

    >>> cell_parts(b"\\xe3\\x80\\x80 27b0\\t", 4), cell_parts("[ 10de]", 4), cell_parts("0x", 4)
    ((0, 10160, 4), (2, 0, 0), (2, 0, 0))
    """
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8", "surrogateescape")
    s = text.strip()  # str.isspace's whitespace, the rule's step 1
    if not s:
        return CELL_MISSING, 0, 0
    if len(s) >= 2 and s[0] == "[" and s[-1] == "]":
        s = s[1:-1]
    if s[:2] in ("0x", "0X"):
        s = s[2:]
    # ASCII digits only (int() alone would take other scripts' digits and underscores)
    if not 0 < len(s) <= maxdigits or not _HEX_SET.issuperset(s):
        return CELL_BAD, 0, 0
    return CELL_OK, int(s, 16), len(s)


def class_value(value: int, digits: int) -> int:
    """The 24-bit class of a good class cell: up to 4 digits (or, ``digits`` -1, an integer
    cell up to 0xFFFF) are base class and subclass, so they move up past the prog-if.

    >>> hex(class_value(0x0300, 4)), hex(class_value(0x030000, 6)), hex(class_value(0x0302, -1))
    ('0x30000', '0x30000', '0x30200')
    """
    short = value <= 0xFFFF if digits < 0 else digits <= 4
    return value << 8 if short else value


def id_value(text: str, bits: int = 16) -> int | None:
    """The value of one hex ID (the cell grammar, at most ``bits/4`` digits), or None.

    >>> id_value("0x10de"), id_value(" [10de] "), id_value("10dex"), id_value("12345")
    (4318, 4318, None, None)
    """
    state, value, _ = cell_parts(text, bits // 4)
    return value if state == CELL_OK else None


def parse_id(text: Any, what: str = "ID", bits: int = 16) -> int:
    """One hex ID; an :class:`InputError` naming ``what`` when it is not one.

    >>> parse_id("10de1", "vendor")
    Traceback (most recent call last):
    ...
    gpuclass.errors.InputError: vendor: '10de1' is not a hex ID of at most 4 digits
    """
    value = id_value(text, bits) if isinstance(text, str) else None
    if value is None:
        raise InputError(f"{what}: {text!r} is not a hex ID of at most {bits // 4} digits")
    return value


def parse_address(text: str, *, domain: bool = False) -> tuple[int, int, int, int] | None:
    """``(domain, bus, slot, function)`` of ``[dddd:]bb:ss.f``, or None.

    With ``domain=True`` the domain must be written (a sysfs entry name).

    >>> parse_address("10000:e1:00.0"), parse_address("e1:00.0", domain=True)
    ((65536, 225, 0, 0), None)
    """
    # ADDRESS_PATTERN's grammar, read without re (whose import is a few ms of every start
    # of `gpuclass scan`); tests/test_ids.py holds the two equal on generated text.
    head, dot, f = text.rpartition(".")
    if not dot or len(f) != 1 or f not in "01234567":
        return None
    parts = head.split(":")
    if len(parts) == 3:
        d, b, s = parts
        if not 4 <= len(d) <= 8 or not _HEX_SET.issuperset(d):
            return None
    elif len(parts) == 2 and not domain:
        d, (b, s) = "", parts
    else:
        return None
    if len(b) != 2 or len(s) != 2 or s[0] not in "01" or not _HEX_SET.issuperset(b + s):
        return None
    return int(d, 16) if d else 0, int(b, 16), int(s, 16), int(f)


def format_address(domain: int, bus: int, slot: int, function: int) -> str:
    """``DDDD:BB:SS.F``, the domain at least four digits, as lspci -D prints it.

    >>> format_address(0x10000, 0xe1, 0, 1)
    '10000:e1:00.1'
    """
    return f"{domain:04x}:{bus:02x}:{slot:02x}.{function:x}"


def address_text(domain: int, bus: int, slot: int, function: int) -> str:
    """A device row's address as its records write it: :func:`format_address`, or ``-``
    for a row without one (``function`` is ``NO_ADDRESS``).

    >>> address_text(0, 1, 0, 0), address_text(0, 0, 0, 0xFF)
    ('0000:01:00.0', '-')
    """
    return format_address(domain, bus, slot, function) if function != NO_ADDRESS else "-"


# -- columns -----------------------------------------------------------------------------

# numpy is imported by the column functions only: the scalar ones above serve paths
# (listings, policies) that do without it


@functools.cache
def _lut() -> "np.ndarray":
    import numpy as np

    lut = np.full(256, 0xFF, dtype=np.uint8)  # 0xFF: not a hex digit
    lut[np.frombuffer(b"0123456789abcdef", np.uint8)] = np.arange(16, dtype=np.uint8)
    lut[np.frombuffer(b"ABCDEF", np.uint8)] = np.arange(10, 16, dtype=np.uint8)
    return lut


def ascii_matrix(strings: Sequence[str], width: int) -> np.ndarray | None:
    """Equal-width ASCII strings as an ``(n, width)`` uint8 array, or None if they are not.

    >>> ascii_matrix(["ab", "cd"], 2).tolist(), ascii_matrix(["ab", "c"], 2)
    ([[97, 98], [99, 100]], None)
    """
    import numpy as np

    try:
        raw = "".join(strings).encode("ascii")
    except UnicodeEncodeError:
        return None
    if len(raw) != len(strings) * width:
        return None
    return np.frombuffer(raw, dtype=np.uint8).reshape(len(strings), width)


def hex_matrix(chars: np.ndarray) -> np.ndarray | None:
    """The values of the hex digits in each row of an ``(n, w)`` uint8 array (uint32), or
    None when some byte is not a hex digit.

    >>> hex_matrix(ascii_matrix(["10de", "1B80"], 4)).tolist()
    [4318, 7040]
    """
    import numpy as np

    digits = _lut()[chars]
    if chars.size and int(digits.max()) == 0xFF:
        return None
    out = digits[:, 0].astype(np.uint32) if chars.shape[1] else np.zeros(chars.shape[0], np.uint32)
    for k in range(1, chars.shape[1]):
        out <<= 4
        out |= digits[:, k]
    return out
