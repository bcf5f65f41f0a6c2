r"""Text that is safe on a terminal: what every command's output and message goes through.

Names, paths and listing text come from input (a device entry, a pci.ids, a manifest, an
auction record): printed as they are, a newline in one would inject a row and an escape
sequence would drive the terminal.  :func:`printable` escapes them for text output;
:func:`safe_json` does the same inside JSON strings, where every reader turns the
``\u`` escapes back into the same string.

>>> printable("a\u202eb"), safe_json('{"x": "a\u202eb"}')
('a\\u202eb', '{"x": "a\\u202eb"}')
"""

from __future__ import annotations

__all__ = ["printable", "safe_json"]


def printable(text: str) -> str:
    r"""``text`` safe to print as one line on a terminal: every control character, line or
    paragraph separator and invisible format character (a bidi override) escaped, and
    bytes that were not UTF-8 (decoded as surrogates) shown as ``\xNN``.

    Names and paths come from input (a device entry, a pci.ids, a manifest): without
    this a newline in one would inject a row, and an escape sequence would drive the
    terminal.

    >>> printable("GPU\n0000:02:00.0  fake row\x1b[2J \udcff ok")
    'GPU\\n0000:02:00.0  fake row\\x1b[2J \\xff ok'
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(c: str) -> str:
    code = ord(c)
    if c in _NAMED:
        return _NAMED[c]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _json_escape(c: str) -> str:
    code = ord(c)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def safe_json(text: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) with every character
    that is not printable (controls, separators, bidi overrides, bytes that were not UTF-8)
    written as a ``\\u`` escape; the structure is ASCII, so only strings change."""
    if text.replace("\n", "").isprintable():
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.isprintable():
            lines[i] = "".join(c if c.isprintable() else _json_escape(c) for c in line)
    return "\n".join(lines)
