"""Kubernetes quantities, read exactly as apimachinery's ``resource.ParseQuantity`` reads them.

A quantity is a sign, a number (``1``, ``1.5``, ``1.``, ``.5``), then a binary suffix
(``Ki`` .. ``Ei``), a decimal one (``n u m k M G T P E``) or an exponent (``e3``,
``E-2``).  Values are exact: non-zero amounts round up (away from zero) to a whole
nano, binary amounts stop at 2**63-1, and an exponent beyond 32 bits is refused, as in
apimachinery.  Two bounds of gpuclass's own keep hostile text cheap: at most
:data:`MAX_QUANTITY_CHARS` characters, and magnitudes below ``10**MAX_ORDER``; both are
a :class:`~gpuclass.errors.QuantityError`, like any malformed value.

>>> parse_quantity("1Ei"), parse_quantity("1500m"), parse_quantity("0.1n")
(Fraction(1152921504606846976, 1), Fraction(3, 2), Fraction(1, 1000000000))
>>> parse_quantity("1K")
Traceback (most recent call last):
...
gpuclass.errors.QuantityError: '1K' is not a quantity: unknown suffix 'K' (decimal suffixes are n u m k M G T P E, binary ones Ki Mi Gi Ti Pi Ei)
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

from ..errors import QuantityError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from typing import Any

__all__ = ["parse_quantity", "quantity_text", "MAX_QUANTITY_CHARS", "MAX_ORDER", "MAX_ALLOWED"]

MAX_QUANTITY_CHARS = 256
# |value| < 10**MAX_ORDER: far past int64, where every resource count ends
MAX_ORDER = 64
# apimachinery caps a binary-suffixed amount here ("9Ei" reads as 2**63-1)
MAX_ALLOWED = 2**63 - 1
_MAX_EXPONENT = 2**31 - 1  # apimachinery keeps the exponent in an int32 scale
_NANO = 10**9
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_SHOWN = 40


def quantity_text(value: Any) -> str:
    """How a value is shown in messages: text shortened, a huge integer described rather
    than converted (Python refuses ``str()`` of integers past 4300 digits).

    >>> quantity_text(10**5000), quantity_text("9" * 50)
    ('an integer of 16610 bits', '9999999999999999999999999999999999999999...')
    """
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, numbers.Integral):
        v = int(value)
        return str(v) if v.bit_length() <= 200 else f"an integer of {v.bit_length()} bits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return value if len(value) <= _SHOWN else value[:_SHOWN] + "..."
    return f"a {type(value).__name__}"


def _fail(text: str, reason: str) -> QuantityError:
    return QuantityError(repr(text) if len(text) <= _SHOWN else repr(text[:_SHOWN]) + "...", reason)


def _run(s: str, pos: int, chars: frozenset) -> int:
    while pos < len(s) and s[pos] in chars:
        pos += 1
    return pos


def _parse(s: str) -> Fraction:
    """apimachinery's parseQuantityString and ParseQuantity on a stripped string."""
    if not s:
        raise _fail(s, "empty")
    end = len(s)
    pos = 1 if s[0] in "+-" else 0
    negative = s[0] == "-"
    pos = _run(s, pos, frozenset("0"))
    if pos >= end:  # only a sign and zeros (also a bare sign): zero
        return Fraction(0)
    start = pos
    pos = _run(s, pos, _DIGITS)
    num = s[start:pos]
    denom = ""
    if pos < end and s[pos] == ".":
        start = pos + 1
        pos = _run(s, start, _DIGITS)
        denom = s[start:pos]
    suffix_start = pos
    pos = _run(s, pos, _SUFFIX_CHARS)
    if pos < end and s[pos] in "+-":
        pos += 1
    pos = _run(s, pos, _DIGITS)
    if pos < end:
        raise _fail(s, f"unexpected {s[pos]!r} at character {pos + 1} (a quantity is a number "
                       "and a suffix, such as 1, 500m, 2Gi or 1e3)")
    suffix = s[suffix_start:]
    digits = (num + denom).lstrip("0")
    if suffix in _BINARY:
        return _binary(digits, len(denom), _BINARY[suffix], negative)
    if suffix in _DECIMAL:
        exponent = _DECIMAL[suffix]
    elif len(suffix) > 1 and suffix[0] in "eE" and _is_int(suffix[1:]):
        exponent = int(suffix[1:])
        if abs(exponent) > _MAX_EXPONENT:
            raise _fail(s, f"exponent {quantity_text(exponent)} is outside the 32-bit range")
    else:
        raise _fail(s, f"unknown suffix {suffix!r} (decimal suffixes are n u m k M G T P E, "
                       "binary ones Ki Mi Gi Ti Pi Ei)")
    return _decimal(s, digits, exponent - len(denom), negative)


def _is_int(text: str) -> bool:
    body = text[1:] if text[:1] in ("+", "-") else text
    return bool(body) and all(c in _DIGITS for c in body)


def _decimal(s: str, digits: str, scale: int, negative: bool) -> Fraction:
    """``digits * 10**scale`` rounded up to a nano, or a QuantityError past the bound."""
    if not digits:
        return Fraction(0)
    if len(digits) + scale > MAX_ORDER:
        raise _fail(s, f"out of range: gpuclass reads quantities below 1e{MAX_ORDER}")
    if scale >= -9:
        value = Fraction(int(digits) * 10**scale) if scale >= 0 else Fraction(int(digits), 10**-scale)
    else:
        drop = -scale - 9  # digits below a nano: any of them non-zero rounds up
        if drop >= len(digits):
            nanos = 1
        else:
            nanos = int(digits[:-drop] or "0") + (digits[-drop:].strip("0") != "")
        value = Fraction(nanos, _NANO)
    return -value if negative else value


def _binary(digits: str, decimals: int, exponent: int, negative: bool) -> Fraction:
    if not digits:
        return Fraction(0)
    amount = Fraction(int(digits) << exponent, 10**decimals)
    value = Fraction(math.ceil(amount * _NANO), _NANO)
    value = min(value, Fraction(MAX_ALLOWED))
    return -value if negative else value


def parse_quantity(value: Any) -> Fraction:
    """A Kubernetes quantity (``4``, ``"4"``, ``"1500m"``, ``"2Ki"``, ``"1e3"``) as an exact Fraction.

    Strings are stripped first, as the API server's JSON decoding does; numbers (as
    YAML and JSON give them) read like their text.  Anything else, or a value outside
    the bounds above, raises :class:`~gpuclass.errors.QuantityError` (a ``ValueError``).
    """
    if isinstance(value, bool):
        raise QuantityError(repr(value), "a boolean, not a number")
    if isinstance(value, numbers.Integral):
        v = int(value)
        if abs(v) >= 10**MAX_ORDER:
            raise QuantityError(quantity_text(v), f"out of range: gpuclass reads quantities below "
                                                  f"1e{MAX_ORDER}")
        return Fraction(v)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(repr(value), "not a finite number")
        text = repr(value)
    elif isinstance(value, str):
        text = value.strip()
    else:
        raise QuantityError(quantity_text(value), "expected a string or a number")
    if len(text) > MAX_QUANTITY_CHARS:
        raise _fail(text, f"longer than {MAX_QUANTITY_CHARS} characters")
    return _parse(text)
