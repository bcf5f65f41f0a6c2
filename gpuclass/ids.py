"""PCI IDs and addresses written as text: the one parser of each, for one value or a column.

Every source of IDs (policy files, the command line, lspci dumps, modalias
strings, audit tables, sysfs entry names) reads them here, so "what is a hex
ID" and "what is a PCI address" have one answer.

- :func:`parse_id`: one ID of at most ``bits/4`` hex digits, an optional ``0x``;
  anything else is an :class:`~gpuclass.errors.InputError` naming the field.
- :func:`parse_address`: ``[domain:]bus:slot.function`` (the domain 4 to 8 digits).
- :func:`id_column`: a column of cells (strings, integers, empty) at once.
- :func:`hex_matrix`: fixed-width hex digits of many equal-length strings at once.

>>> parse_id("10DE", "vendor"), parse_id("0x27b0", "device"), parse_id("3", "class", bits=24)
(4318, 10160, 3)
>>> parse_address("0000:e1:00.0"), parse_address("e1:00.7"), parse_address("e1:20.0")
((0, 225, 0, 0), (0, 225, 0, 7), None)
>>> values, present, bad = id_column(["10de", "0x1B80", "", "zz", 7], 16)
>>> values.tolist(), present.tolist(), bad.tolist()
([4318, 7040, 0, 0, 7], [True, True, False, True, True], [False, False, False, True, False])
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

TYPE_CHECKING = False

from .errors import InputError

if TYPE_CHECKING:
    from typing import Any

    import numpy as np

__all__ = ["HEX_DIGITS", "parse_id", "id_value", "parse_address", "ADDRESS_PATTERN",
           "id_column", "hex_matrix", "ascii_matrix", "format_address"]

HEX_DIGITS = "0123456789abcdefABCDEF"
_HEX_SET = frozenset(HEX_DIGITS)

# [domain:]bus:slot.function; slot 00-1f, function 0-7.  Bounded repeats: linear.
ADDRESS_PATTERN = r"(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([01][0-9a-fA-F])\.([0-7])"
_ADDRESS = re.compile(ADDRESS_PATTERN)


def id_value(text: str, bits: int = 16) -> int | None:
    """The value of one hex ID (optional ``0x``, at most ``bits/4`` digits), or None.

    >>> id_value("0x10de"), id_value("10dex"), id_value("12345")
    (4318, None, None)
    """
    s = text.strip()
    if s[:2] in ("0x", "0X"):
        s = s[2:]
    if not s or len(s) > bits // 4 or not _HEX_SET.issuperset(s):
        return None
    return int(s, 16)


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
    m = _ADDRESS.fullmatch(text)
    if m is None or (domain and m.group(1) is None):
        return None
    d, b, s, f = m.groups()
    return int(d, 16) if d else 0, int(b, 16), int(s, 16), int(f)


def format_address(domain: int, bus: int, slot: int, function: int) -> str:
    """``DDDD:BB:SS.F``, the domain at least four digits, as lspci -D prints it.

    >>> format_address(0x10000, 0xe1, 0, 1)
    '10000:e1:00.1'
    """
    return f"{domain:04x}:{bus:02x}:{slot:02x}.{function:x}"


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


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v) or (isinstance(v, str) and not v.strip())


def id_column(values: Sequence[Any], bits: int,
              ndigits: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A column of ID cells as ``(value int64, present bool, bad bool)``.

    Cells are hex strings (``10de``, ``0x10DE``, lspci's ``[10de]``), integers or
    empty (``None``, NaN, blank: not present).  ``ndigits``, when given, receives
    each string cell's number of digits (a class written with 4 or 6 digits).
    Integer columns pass straight through; short string columns are decoded
    with numpy, anything else cell by cell.
    """
    import numpy as np

    n = len(values)
    out = np.zeros(n, dtype=np.int64)
    present = np.ones(n, dtype=bool)
    bad = np.zeros(n, dtype=bool)
    width = bits // 4
    if n == 0:
        return out, present, bad
    arr = values if isinstance(values, np.ndarray) else np.asarray(values)
    if arr.dtype.kind in "iu":
        out[:] = arr
        bad[:] = (arr < 0) | (arr >= (1 << bits))
        out[bad] = 0
        return out, present, bad
    slow = np.ones(n, dtype=bool)
    if arr.dtype.kind == "U" and arr.dtype.itemsize // 4 <= width:
        codes = arr.view(np.uint32).reshape(n, -1)
        pad = codes == 0
        digits = _lut()[np.minimum(codes, 255)].astype(np.int64)  # non-ASCII: 0xFF too
        # strings are left-aligned: a row is good when every unpadded byte is a digit
        ok = ((digits != 0xFF) | pad).all(axis=1) & ~pad[:, 0]
        acc = np.zeros(n, dtype=np.int64)
        for k in range(codes.shape[1]):
            acc = np.where(pad[:, k], acc, acc * 16 + np.where(digits[:, k] == 0xFF, 0, digits[:, k]))
        out[ok] = acc[ok]
        if ndigits is not None:
            ndigits[:] = (~pad).sum(axis=1)
        slow = ~ok
    for i in np.flatnonzero(slow).tolist():
        v = values[i]
        if _blank(v):
            present[i] = False
            continue
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            x: int | None = int(v)
            if not 0 <= x < (1 << bits):
                x = None
        else:
            s = str(v).strip()
            if s.startswith("[") and s.endswith("]"):  # lspci's "[10de]"
                s = s[1:-1]
            x = id_value(s, bits)
            if x is not None and ndigits is not None:
                ndigits[i] = len(s) - (2 if s[:2] in ("0x", "0X") else 0)
        if x is None:
            bad[i] = True
        else:
            out[i] = x
    return out, present, bad
