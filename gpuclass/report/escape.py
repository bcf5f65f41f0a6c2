"""Listing text made safe to show: escaped for HTML, its invisible tricks made visible.

Server names, descriptions and datacenters come from listings anyone can write.  Besides
HTML escaping (:func:`html_text`), characters that hide or reorder text (controls,
bidirectional overrides and isolates, zero-width characters, lone surrogates) are shown
as ``<U+202E>``, and long text is cut, so that what a buyer reads is what the listing says.

>>> html_text('<script>alert(1)</script>')
'&lt;script&gt;alert(1)&lt;/script&gt;'
>>> visible("gex\\u202e44"), visible("x" * 10, 4)
('gex<U+202E>44', 'xxx…')
"""

from __future__ import annotations

import html
import re

from ..printable import utf8_text

__all__ = ["visible", "html_text", "storable", "TEXT_LIMIT"]

TEXT_LIMIT = 200  # characters of one listing text shown

# C0/C1 controls (tab and newline too: they become visible, not layout), the Arabic letter
# mark, zero-width characters and marks, line and paragraph separators, bidirectional
# embeddings, overrides and isolates, word joiners, invisible operators, the BOM,
# lone surrogates, and the Unicode tag characters
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e"
                     "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffb\ud800-\udfff"
                     "\U000e0000-\U000e007f]")


def storable(text: str | None) -> str | None:
    """Text that UTF-8 (Arrow, a file) can hold: a lone surrogate is written as every audit
    output writes it (:func:`gpuclass.printable.utf8_text`: ``\\xNN`` for a byte that was
    not UTF-8, ``\\uXXXX`` for any other).

    >>> storable("a\\ud800b"), storable("srv\\udcff")
    ('a\\\\ud800b', 'srv\\\\xff')
    """
    if text is None:
        return None
    return utf8_text(text)


def visible(text: object, limit: int = TEXT_LIMIT) -> str:
    """``text`` with hidden characters shown as ``<U+XXXX>`` and cut to ``limit`` characters."""
    s = str(text)
    if len(s) > limit:
        s = s[: max(limit - 1, 0)] + "…"
    return _HIDDEN.sub(lambda m: f"<U+{ord(m.group()):04X}>", s)


def html_text(text: object, limit: int = TEXT_LIMIT) -> str:
    """:func:`visible` text, escaped for an HTML element's content or a quoted attribute."""
    return html.escape(visible(text, limit), quote=True)
