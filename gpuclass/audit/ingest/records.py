"""Auction feeds and NDJSON as streams of records, each with its row and any error.

The auction feed (an object with a ``server`` list, or a bare array: a feed snapshot) is
decoded one record at a time (``json.JSONDecoder.raw_decode`` over a sliding buffer; one
record must fit in memory); runs of well-formed records are read by the compiled scanner
(:mod:`gpuclass._feed`) where it is built.  A record that cannot be read comes out with its
error, never dropped, and reading goes on at the next record.

>>> import io
>>> from .text import Reader
>>> [(row, rec, err) for row, _, rec, err in iter_ndjson(Reader(io.BytesIO(b'{"id": 1}\\n{\\n')), "x")]
[(1, {'id': 1}, None), (2, None, 'malformed JSON line: Expecting property name enclosed in double quotes at column 1')]
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

from ...lazy import compiled_function
from . import text
from .text import LongLine, Reader

__all__ = ["iter_feed", "iter_ndjson"]



def too_long(size: int | None = None) -> str:
    """The problem of a record over the limit (:data:`~.text.MAX_RECORD` characters)."""
    what = f" ({size} characters)" if size else ""
    return f"a record longer than {text.MAX_RECORD} characters{what}: not read (the limit on one record)"
_SCAN = 256             # feed records the compiled scanner hands over at a time (few kept alive)
_TOO_DEEP = "malformed JSON: nested deeper than the decoder reads"
_TOO_LONG = "malformed JSON: an integer longer than Python reads (sys.get_int_max_str_digits())"


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"\s*')   # a JSON string and the blanks after it
_KEY = re.compile(r'"(?:[^"\\]|\\.)*"\s*:')     # ... followed by a colon: an object key


def _record_scanner() -> Any:
    """The compiled record scanner (:mod:`gpuclass._feed`), or None (then every record is
    decoded by :mod:`json`; see :func:`~gpuclass.lazy.compiled_function`)."""
    return compiled_function("gpuclass._feed", "scan_records")


def iter_feed(reader: Reader, source: str,
              fields: tuple[str, ...] | None = None) -> Iterator[tuple[int, str, Any, str | None]]:
    """Records of ``{"server": [...]}`` or of a bare array ``[...]`` (a feed snapshot),
    decoded one at a time from a sliding buffer.

    With ``fields`` (the keys the caller reads), a record may come as a dict of only those
    of its keys: runs of well-formed records are then read by the compiled scanner
    (:mod:`gpuclass._feed`), and any record it is not sure of, damaged ones included,
    by :mod:`json` as without ``fields``."""
    dec = json.JSONDecoder()
    scan = _record_scanner() if fields else None
    buf = ""
    pos = 0
    row = 0

    def fill(want: int = 1) -> bool:
        """Read on until ``want`` more characters came (or the end): the reads joined
        once, so that reading on across a long record copies the buffer once, not per read."""
        nonlocal buf, pos
        if reader.eof:
            return False
        pieces = [buf[pos:]] if pos > len(buf) // 2 else [buf]
        if pos > len(buf) // 2:
            pos = 0
        got = 0
        while got < want and not reader.eof:
            piece = reader.read()
            pieces.append(piece)
            got += len(piece)
        buf = "".join(pieces)
        return True

    def skip_ws() -> str:
        nonlocal pos
        while True:
            while pos < len(buf) and buf[pos] in " \t\r\n":
                pos += 1
            if pos < len(buf):
                return buf[pos]
            if not fill():
                return ""

    def more(start: int) -> None:
        """Read on until the text from ``start`` is twice as long as now (or the limit, or
        the end): a record cut off by a read is decoded again only after its text doubled,
        so a long record costs linear time in all, not a decode per read."""
        nonlocal pos
        want = min(2 * (len(buf) - start) + 1, text.MAX_RECORD + 1)
        fill(want - (len(buf) - start))

    def value() -> tuple[Any, str | None]:
        """Decode the value at ``pos``: (value, None) or (None, error); reads on as needed,
        up to :data:`~.text.MAX_RECORD` characters (past it: the record is flagged)."""
        nonlocal pos
        last = None
        while True:
            try:
                v, end = dec.raw_decode(buf, pos)
                pos = end
                return v, None
            except RecursionError:
                return None, _TOO_DEEP
            except json.JSONDecodeError as exc:
                if len(buf) - pos > text.MAX_RECORD:
                    return None, too_long()
                if reader.eof:
                    return None, f"malformed JSON: {exc.msg} at byte {exc.pos - pos} of the record"
                key = (exc.msg, exc.pos)
                if key == last and not exc.msg.startswith("Unterminated"):
                    # more text did not change the error: it is in the record itself
                    return None, f"malformed JSON: {exc.msg} at byte {exc.pos - pos} of the record"
                last = key
                more(pos)
            except ValueError:  # an integer longer than Python converts (not a decode error)
                return None, _TOO_LONG

    def resync(start: int) -> bool:
        """Move ``pos`` to the next record after a malformed one at ``start``: an object
        with an "id" that begins a list element (after ',' or '['); False at the end."""
        nonlocal pos
        pos = start
        at = start + 1
        while True:
            nxt = buf.find("{", at)
            if nxt < 0:
                # nothing to resume at so far: only the last character that is not a
                # blank is kept (a "," or "[" before the next "{"), so that what was
                # searched is let go (a record that never closes is not held whole)
                keep = len(buf.rstrip(" \t\r\n")) - 1
                if keep > pos:
                    pos = keep
                ahead = len(buf) - pos
                if not fill():
                    pos = len(buf)
                    return False
                at = pos + ahead
                continue
            k = nxt - 1
            while k > pos and buf[k] in " \t\r\n":
                k -= 1
            if buf[k] in ",[":
                v, seen = None, None
                while True:
                    try:
                        v, _ = dec.raw_decode(buf, nxt)
                        break
                    except json.JSONDecodeError as exc:
                        # a candidate cut off by the end of what was read: read on while
                        # more text changes the error
                        key = (exc.msg, exc.pos - nxt)
                        if reader.eof or len(buf) - nxt > text.MAX_RECORD or (
                                key == seen and not exc.msg.startswith("Unterminated")):
                            break
                        seen = key
                        rel = nxt - pos
                        more(nxt)
                        nxt = pos + rel
                    except (RecursionError, ValueError):  # not a record to resume at
                        break
                if isinstance(v, dict) and ("id" in v or "server" in v):
                    pos = nxt
                    return True
            pos = nxt  # no record starts here: the text before it is let go
            at = nxt + 1

    def key_follows() -> bool:
        """Whether the text at ``pos`` is an object key: a string, then ':' (not consumed)."""
        while True:
            m = _KEY.match(buf, pos)
            if m is not None:
                return True
            end = _STRING.match(buf, pos)
            if end is not None and end.end() < len(buf):
                return False  # a complete string and something else after it
            if len(buf) - pos > text.MAX_RECORD or not fill():
                return False

    def items() -> Iterator[tuple[int, str, Any, str | None]]:
        nonlocal pos, row
        while True:
            c = skip_ws()
            if c == "]":
                pos += 1
                return
            if c == ",":
                pos += 1
                continue
            if c == "{" and scan is not None:
                sure, end = scan(buf, pos, fields, _SCAN)
                if sure:
                    pos = end
                    first = row + 1
                    row += len(sure)
                    yield from [(n, source, rec, None) for n, rec in enumerate(sure, first)]
                    continue
            if c == "":
                yield row + 1, source, None, "feed ends inside the server list"
                ended[0] = True
                return
            row += 1
            rec, err = value()
            if err is None:
                c = skip_ws()
                if c == "," and isinstance(rec, dict):
                    pos += 1
                    c = skip_ws()
                    # a key and a colon after the comma: the record closed early (a line
                    # lost inside it), and what follows is its rest; any value is the next item
                    ok = c != '"' or not key_follows()
                else:
                    ok = c in (",", "]", "")
                if ok:
                    yield row, source, rec, None
                    continue
                # the record closed early (a line lost inside it): what follows is its rest
                err = "malformed JSON: text after the record's closing brace"
            yield row, source, None, err
            if not resync(pos):  # pos is still where the broken record starts
                ended[0] = True
                return

    ended = [False]   # the text ended inside the list (already reported)
    first = skip_ws()
    if first == "[":
        pos += 1
        yield from items()
        if not ended[0] and skip_ws() != "":
            yield row + 1, source, None, "text after the end of the feed"
        return
    if first != "{":
        yield 1, source, None, "not an auction feed: expected a JSON array or an object with a \"server\" list"
        return
    pos += 1
    lists = 0
    while True:
        c = skip_ws()
        if c == "}" or c == "":
            if c == "":
                yield row + 1, source, None, "feed ends before its closing brace"
                return
            pos += 1
            if not lists:
                yield row + 1, source, None, "not an auction feed: no \"server\" list"
            elif skip_ws() != "":
                yield row + 1, source, None, "text after the end of the feed"
            return
        if c == ",":
            pos += 1
            continue
        key, err = value()
        if err is not None or not isinstance(key, str):
            yield row + 1, source, None, f"not an auction feed: {err or 'expected a key'}"
            return
        if skip_ws() != ":":
            yield row + 1, source, None, "not an auction feed: expected ':' after a key"
            return
        pos += 1
        c = skip_ws()
        if key != "server" or c != "[":
            _, err = value()  # another top-level field: decoded and left alone
            if err is not None:
                yield row + 1, source, None, f"not an auction feed: {err}"
                return
            continue
        pos += 1
        lists += 1
        yield from items()
        if ended[0]:
            return


def iter_ndjson(reader: Reader, source: str) -> Iterator[tuple[int, str, Any, str | None]]:
    """Records of NDJSON, one a line; a line longer than :data:`~.text.MAX_RECORD`
    characters is one flagged row (read past, never held), and the next line is read."""
    row = 0
    for line in reader.lines():
        if not line.strip():
            continue  # blank lines are not rows
        row += 1
        if isinstance(line, LongLine):
            yield row, source, None, too_long(line.size)
            continue
        try:
            yield row, source, json.loads(line), None
        except json.JSONDecodeError as exc:
            yield row, source, None, f"malformed JSON line: {exc.msg} at column {exc.colno}"
        except RecursionError:
            yield row, source, None, _TOO_DEEP
        except ValueError:
            yield row, source, None, _TOO_LONG
