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

import codecs

__all__ = ["printable", "safe_json", "utf8_text", "ESCAPE_ERRORS"]

# The codec error handler of every text gpuclass writes (standard output and error, and -o
# files): what the encoding cannot hold is escaped as printable() escapes it, so a byte that
# was not UTF-8 (a lone surrogate of surrogateescape) is the text \xNN on a terminal and in
# a file alike (backslashreplace, which it replaces, wrote \udcff there).
ESCAPE_ERRORS = "gpuclass.escape"


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


def _escape_errors(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    return "".join(_escape(c) for c in exc.object[exc.start:exc.end]), exc.end


codecs.register_error(ESCAPE_ERRORS, _escape_errors)


def utf8_text(text: str) -> str:
    r"""``text`` as UTF-8 can hold it: each lone surrogate written as :func:`printable`
    writes it (``\xNN`` for a byte that was not UTF-8, decoded by surrogateescape;
    ``\uXXXX`` for any other), everything else unchanged.  The one rule of every audit
    output (CSV, Parquet, JSON, NDJSON, the table, the HTML report): a server id is the
    same text in each.

    >>> utf8_text("srv\udcff"), utf8_text("a\ud800b"), utf8_text("日本")
    ('srv\\xff', 'a\\ud800b', '日本')
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", ESCAPE_ERRORS).decode("utf-8")
    return text


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
