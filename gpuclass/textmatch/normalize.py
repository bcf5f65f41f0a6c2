"""Text into the token form the automaton scans, and the spellings of a name.

Text is normalized byte-wise (ASCII, lower case, punctuation to spaces, line
breaks and separators such as ``;/|+`` to a hard break ``|`` no name can span, a
colon and a comma to tokens of their own, which no name spans either), so ``Nvidia RTX™ 4000 SFF Ada Generation`` and
``RTX4000 SFF ADA`` read alike.  Brackets read as spaces: a listing breaks names with
them (``RTX 6000 (Ada Generation)``) more often than it separates items.  A name's
spellings (:func:`variants`) split or join its letter/digit runs.

Before that, a text that is not ASCII is folded (:func:`fold`): format characters
(Unicode category Cf: zero-width spaces and joiners, bidirectional marks, soft hyphens)
are dropped, and a character whose compatibility form (NFKC) is ASCII is read as it
(fullwidth ``ＧＴＸ １０８０``, mathematical letters, ligatures), except a symbol that
NFKC spells with letters (``™`` stays a mark, never ``TM`` glued to the name).  Letters
of another script that only look Latin (Cyrillic ``Т`` in ``RТX``) are not read as Latin:
:func:`confusable_reading` says what the text would read as, for the caller to flag.

>>> normalize("Nvidia RTX™ 4000 SFF-Ada (20GB), GPU: 2x")
' nvidia rtx 4000 sff ada 20gb , gpu : 2x '
>>> normalize("\uff27\uff34\uff38 \uff11\uff10\uff18\uff10 G\u200bT\u200dX")
' gtx 1080 gtx '
>>> name_words("GeForce GTX 1080 Ti"), split_tokens(["rtx4000"])
(['gtx', '1080', 'ti'], ['rtx', '4000'])
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

__all__ = ["RS", "BRAND", "normalize", "normalize_bytes", "fold", "fold_char", "confusable_reading",
           "CONFUSABLES", "name_words", "split_tokens", "drop_memory", "variants"]

RS = 0x1F           # record separator between texts of a batch (never left in a text)
_BREAK = ord("|")   # a hard break: no name spans it
# Brand words dropped from names: a listing may or may not carry them.
BRAND = frozenset({"nvidia", "geforce"})
_UNSPLIT_LIMIT = 7  # joined-token variants for names of up to this many tokens


def _byte_table() -> bytes:
    table = bytearray(b" " * 256)
    for c in b"abcdefghijklmnopqrstuvwxyz0123456789":
        table[c] = c
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        table[c] = c + 32
    for c in b";|{}/+&\n\r<>=\\":
        table[c] = _BREAK
    table[ord(":")] = ord(":")
    table[ord(",")] = ord(",")
    table[RS] = RS
    return bytes(table)


_TABLE = _byte_table()
_SPACES = re.compile(rb"  +")


def fold_char(c: str) -> str:
    """What :func:`fold` reads one character as: ``""`` for a format character (Cf), the
    ASCII of its NFKC form where that is ASCII (a symbol only where that is one character:
    ``＋`` but not ``™``), else the character itself.

    >>> fold_char("\uff21"), fold_char("\u200b"), fold_char("\u2122"), fold_char("\uff5c")
    ('A', '', '™', '|')
    """
    import unicodedata  # on the first non-ASCII character only

    category = unicodedata.category(c)
    if category == "Cf":
        return ""
    if c.isascii():
        return c
    compat = unicodedata.normalize("NFKC", c)
    if compat != c and compat.isascii() and (category[0] != "S" or len(compat) == 1):
        return compat
    return c


class _FoldTable(dict):
    """:func:`fold_char` of each code point, for ``str.translate``, made the first time
    a text holds it (a listing uses a few dozen characters beyond ASCII)."""

    def __missing__(self, cp: int) -> str:
        v = self[cp] = fold_char(chr(cp))
        return v


_FOLD = _FoldTable()
_ASCII_BYTES = bytes(range(128))
_REPLACES = 8  # distinct characters folded one ``str.replace`` each; more: one translate


def fold(text: str) -> str:
    """``text`` with format characters dropped and compatibility forms read as ASCII
    (:func:`fold_char` of each character); ASCII text as it is.

    A batch of listings is mostly ASCII, where ``str.translate`` would look every character
    up: the few distinct characters beyond ASCII (found from the UTF-8 bytes) that fold to
    something else are replaced one by one instead, up to ``_REPLACES`` of them.

    >>> fold("R\u200bTX \uff16\uff10\uff10\uff10 Ada\u2122")
    'RTX 6000 Ada™'
    """
    if text.isascii():
        return text
    beyond = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")
    changes = [(c, f) for c in set(beyond) if (f := _FOLD[ord(c)]) != c]
    if len(changes) > _REPLACES:
        return text.translate(_FOLD)
    for c, f in changes:  # each f is ASCII or nothing: no replacement makes another's character
        text = text.replace(c, f)
    return text


def normalize_bytes(text: str) -> bytes:
    """Normalize a text (or a batch joined with the record separator) into tokens."""
    if not text.isascii():
        text = fold(text)
    if text.isascii():
        raw = text.encode("ascii").translate(_TABLE)
    else:
        # UTF-8 bytes: the bytes of every other non-ASCII character (marks such as
        # "RTX™", accented letters) become spaces, as any punctuation does
        raw = text.encode("utf-8", "replace")
        if b"\xc3\x97" in raw:  # the multiplication sign of "2 × RTX ..."
            raw = raw.replace(b"\xc3\x97", b" x ")
        raw = raw.translate(_TABLE)
    if b"|" in raw:
        raw = raw.replace(b"|", b" | ")
    if b":" in raw:
        raw = raw.replace(b":", b" : ")
    if b"," in raw:
        raw = raw.replace(b",", b" , ")
    if b"  " in raw:  # one linear pass over runs of spaces
        raw = _SPACES.sub(b" ", raw)
    return b" " + raw.strip(b" ") + b" "


def normalize(text: str) -> str:
    """The token form the automaton scans: lower-case ASCII words between single spaces.

    >>> normalize("Nvidia RTX™ 4000 SFF-Ada (20GB)")
    ' nvidia rtx 4000 sff ada 20gb '
    """
    return normalize_bytes(text.replace("\x1f", " ")).decode("ascii")


# Letters of other scripts that look like Latin ones (after Unicode's confusables.txt, the
# letters of Cyrillic, Greek, Armenian and Lisu a listing's name could hide): no fold reads
# them as Latin, since each is a real letter of its own language.
CONFUSABLES = {
    **dict(zip("АВЕЅІЈКМНОРСТХУҮԚԜЁЇ", "ABESIJKMHOPCTXYYQWEI")),
    **dict(zip("аеорсухѕіјһԁԛԝүкмнтвёї", "aeopcyxsijhdqwykmhtbei")),
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX")),
    **dict(zip("αικνορτυχϲϳ", "aiknoptuxcj")),
    **dict(zip("ՕՍօսհոցա", "OUouhngw")),
    **dict(zip("ꓮꓐꓚꓓꓰꓝꓖꓧꓲꓙꓗꓡꓟꓠꓳꓑꓣꓢꓔꓴꓦꓪꓫꓬꓜ", "ABCDEFGHIJKLMNOPRSTUVWXYZ")),
    "\u0131": "i", "\u0261": "g",  # dotless i, script g: Latin, but no ASCII letter
}
_CONFUSABLE_TABLE = {ord(k): v for k, v in CONFUSABLES.items()}


def confusable_reading(text: str) -> tuple[str, list[str]] | None:
    """What ``text`` reads as with its look-alike letters of other scripts taken as the
    Latin letters they imitate, and those letters (each once, in text order); None where it
    holds none.  The caller tells whether that reading names a card, reading it as it reads
    any text (folded then: no fold makes or unmakes a look-alike letter, and a zero-width
    space is still there for the matcher to read as it reads the text's own).

    >>> confusable_reading("R\u0422X 6000 Ada")
    ('RTX 6000 Ada', ['Т'])
    >>> confusable_reading("GTX 1080"), confusable_reading("\u0412\u0438\u0434\u0435\u043e")[1]
    (None, ['В', 'е', 'о'])
    """
    if text.isascii():
        return None
    letters = [c for c in dict.fromkeys(text) if c in CONFUSABLES]
    if not letters:
        return None
    return text.translate(_CONFUSABLE_TABLE), letters


_ALNUM_SPLIT = re.compile(r"(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])")
_UNITS = frozenset({"gb", "g", "mb", "tb"})


def name_words(name: str) -> list[str]:
    """A name's words as the normalizer spells them, without brand words, unless the
    name is a bare number without them (``GeForce 6800 GT`` keeps ``geforce``)."""
    words = [w for w in normalize(name).split() if w not in ("|", ":", ",")]
    bare = [w for w in words if w not in BRAND]
    return words if bare and bare[0][0].isdigit() else bare


def split_tokens(words: list[str]) -> list[str]:
    """Words with letter/digit runs split (``rtx4000`` -> ``rtx 4000``): the canonical tokens."""
    out: list[str] = []
    for w in words:
        out.extend(_ALNUM_SPLIT.sub(" ", w).split())
    return out


def drop_memory(tokens: list[str]) -> list[str]:
    """Tokens without memory sizes (``48 gb``)."""
    out: list[str] = []
    for t in tokens:
        if t in _UNITS and out and out[-1].isdigit():
            out.pop()
            continue
        out.append(t)
    return out


def variants(words: list[str], full: bool) -> Iterable[str]:
    """Spellings of a name: as written, and with letter/digit runs split or joined.

    ``full`` also tries every way of spacing or joining the canonical tokens
    (``rtx4000 sff``, ``rtx 4000sff`` ...), for names short enough; otherwise only
    the fully joined form is added (``l40`` never becomes ``l 40``).
    """
    tokens = split_tokens(words)
    if not tokens:
        return
    yield " ".join(words)
    if full:
        yield " ".join(tokens)
    if full and len(tokens) <= _UNSPLIT_LIMIT:
        for seps in itertools.product((" ", ""), repeat=len(tokens) - 1):
            yield "".join(t + s for t, s in zip(tokens, seps)) + tokens[-1]
        return
    joined = [tokens[0]]
    for tok in tokens[1:]:
        if tok[0].isdigit() != joined[-1][-1].isdigit():
            joined[-1] += tok
        else:
            joined.append(tok)
    yield " ".join(joined)


