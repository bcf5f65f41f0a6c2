"""Prices as listings give them: an amount per month (``price``), per hour where given
(``hourly_price``), in the currency the input states; never converted, never guessed.

The server auction's feed states its currency in its file name, not in its records
(``live_data_sb_EUR.json``), so a source's currency is the ISO 4217 code (upper case,
after ``_`` or ``-``, before a dot or the end) that comes last in its file name; a source
without one has an unknown currency.

>>> read_price(39.0), read_price(" 44.50 "), read_price(""), read_price(None)
((39.0, None), (44.5, None), (None, None), (None, None))
>>> read_price("39,00 EUR")
(None, "'39,00 EUR' is not a plain number")
>>> source_currency("feeds/live_data_sb_EUR.json"), source_currency("auction.json")
('EUR', None)
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
from typing import Any

__all__ = ["PRICE_FIELDS", "read_price", "source_currency", "ISO_4217"]

# the feed's fields: monthly price and, where the feed has it, the hourly one
PRICE_FIELDS = ("price", "hourly_price")

# ISO 4217 currency codes in use (funds and precious metals left out): a name that ends in
# "_GEX" or "_DEV" names no currency
ISO_4217 = frozenset("""
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP
BYN BZD CAD CDF CHF CLP CNY COP CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP
GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS
KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR
MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF
SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD
TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG ZWL
""".split())

_NUMBER = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,15})?")
# a code that ends a part of the name: "_EUR" before a dot or at the end
_CODE_AT_END = re.compile(r"[_\-]([A-Z]{3})(?=\.|$)")


def read_price(value: Any) -> tuple[float | None, str | None]:
    """``(amount, None)`` for a usable price, ``(None, None)`` for none given, ``(None,
    problem)`` for a value that is not a finite amount of at least zero.

    Text must be a plain decimal number (``44.50``): ``39,00`` (a decimal comma or a
    thousands separator?) and ``€39`` are reported, not read.
    """
    if value is None:
        return None, None
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, decimal.Decimal, str)):
        return None, f"{_show(value)} is not a number"
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None, None
        if not _NUMBER.fullmatch(text):
            return None, f"{_show(value)} is not a plain number"
        return float(text), None
    amount = float(value)
    if not math.isfinite(amount) or amount < 0:
        return None, f"{_show(value)} is not an amount"
    return amount, None


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def source_currency(source: str) -> str | None:
    """The last ISO 4217 code that ends a part of a file name (``live_data_sb_EUR.json``), or None."""
    name = re.split(r"[/\\]", source)[-1]
    codes = _CODE_AT_END.findall(name)
    code = codes[-1] if codes else None
    return code if code in ISO_4217 else None
