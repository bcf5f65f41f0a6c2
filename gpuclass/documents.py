"""Reading documents from untrusted text: JSON, NDJSON and YAML, bounded, with field paths.

Policies, Kubernetes manifests and hardware reports are read here.  Whatever
the text, the result is plain data or a :class:`DocumentError` that names the
field (``spec.containers[0].resources``) and, for YAML, the line; callers turn
it into their own typed error.  The bounds:

- nesting deeper than :data:`MAX_DEPTH` levels;
- an integer past :data:`MAX_INT_DIGITS` decimal digits (Python's own
  string-conversion limit: such a number could not even be printed);
- YAML aliases: each alias counts the nodes it stands for, and a document whose
  aliases add more than its own nodes plus :data:`ALIAS_BUDGET` is refused (a
  few KB of "billion laughs" would otherwise be walked as billions of nodes);
- more than :data:`MAX_OTHER_KEYS` mapping keys that are not strings in one
  document (integers hash to chosen values, so many of them in one mapping
  could be made to collide).

YAML is read event by event (libyaml's parser where PyYAML has it), and each
value is built directly, so no node graph of the whole document is held: peak
memory is the resulting data plus the parser's buffer.

>>> load_yaml("a: [1, 2]\\n---\\nb: x\\n")
[{'a': [1, 2]}, {'b': 'x'}]
>>> load_yaml("a: {b: [" + "9" * 5000 + "]}\\n")
Traceback (most recent call last):
...
gpuclass.documents.DocumentError: a.b[0] (line 1): integer of 5000 digits (the limit is 4300)
>>> load_json('{"a": ' + "[" * 200 + "]" * 200 + "}")
Traceback (most recent call last):
...
gpuclass.documents.DocumentError: a[0][0]...[0][0] (100 levels): nested deeper than 100 levels
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a command's output imports no typing
    from typing import Any, Iterator

__all__ = ["MAX_DEPTH", "MAX_YAML_DEPTH", "MAX_INT_DIGITS", "ALIAS_BUDGET", "MAX_OTHER_KEYS",
           "DocumentError", "load_json", "iter_json_lines", "iter_yaml", "load_yaml", "check_tree",
           "format_path", "looks_like_json"]

# Real manifests nest a dozen levels, policies fewer.
MAX_DEPTH = 100
MAX_YAML_DEPTH = MAX_DEPTH
# CPython's default limit on int <-> str conversion (sys.int_info.default_max_str_digits).
MAX_INT_DIGITS = 4300
_MAX_INT_BITS = int(MAX_INT_DIGITS * 3.3219280948873622)  # log2(10): a cheap first test
_INT_LIMIT = 10 ** MAX_INT_DIGITS


def _too_big(n: int) -> bool:
    return n.bit_length() >= _MAX_INT_BITS and abs(n) >= _INT_LIMIT
ALIAS_BUDGET = 100_000
MAX_OTHER_KEYS = 1000


class DocumentError(ValueError):
    """A document that cannot be read as data: ``where`` is the field path (or
    ``line N`` for text that does not parse), ``reason`` what is wrong and
    ``line`` the 1-based line when known."""

    def __init__(self, where: str, reason: str, line: int | None = None) -> None:
        self.where = where
        self.reason = reason
        self.line = line
        if line is None or where.startswith("line "):
            loc = where
        else:
            loc = f"{where} (line {line})" if where else f"line {line}"
        super().__init__(f"{loc}: {reason}" if loc else reason)

    def __reduce__(self):
        return (type(self), (self.where, self.reason, self.line))


def format_path(keys) -> str:
    """``("spec", "containers", 0, "image")`` as ``spec.containers[0].image``.

    >>> format_path(["items", 3, "metadata"])
    'items[3].metadata'
    """
    out = []
    for k in keys:
        if isinstance(k, int) and not isinstance(k, bool):
            out.append(f"[{k}]")
        else:
            text = str(k)
            text = text if len(text) <= 64 else text[:61] + "..."
            out.append(f".{text}" if out else text)
    path = "".join(out)
    if len(path) > 200:  # a path of a hundred levels: say how deep instead
        path = f"{path[:7]}...{path[-6:]} ({len(keys)} levels)"
    return path


def _digits(text: str) -> int:
    return len(text.lstrip("+-").replace("_", ""))


class _LongInt:
    """Stands in for a JSON integer too long to convert (found again by check_tree)."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _json_int(text: str):
    n = _digits(text)
    return _LongInt(n) if n > MAX_INT_DIGITS else int(text)


def _too_long(n: int) -> str:
    return f"integer of {n} digits (the limit is {MAX_INT_DIGITS})"


def check_tree(root: Any, prefix=()) -> None:
    """Raise :class:`DocumentError` where ``root`` nests deeper than :data:`MAX_DEPTH` or
    holds an integer too long to print; iterative, so any depth is safe to check."""
    kind = type(root)
    if kind is _LongInt:
        raise DocumentError(format_path(prefix), _too_long(root.digits))
    if kind is int and _too_big(root):
        raise DocumentError(format_path(prefix), "integer beyond the limit of "
                                                 f"{MAX_INT_DIGITS} digits")
    if kind is not dict and kind is not list:
        return
    keys = list(prefix)
    frames = [iter(root.items()) if kind is dict else enumerate(root)]
    while frames:
        for key, value in frames[-1]:
            t = type(value)
            if t is dict or t is list:
                if len(frames) >= MAX_DEPTH:
                    raise DocumentError(format_path([*keys, key]), f"nested deeper than {MAX_DEPTH} levels")
                keys.append(key)
                frames.append(iter(value.items()) if t is dict else enumerate(value))
                break
            if t is _LongInt:
                raise DocumentError(format_path([*keys, key]), _too_long(value.digits))
            if t is int and _too_big(value):
                raise DocumentError(format_path([*keys, key]),
                                    f"integer beyond the limit of {MAX_INT_DIGITS} digits")
        else:
            frames.pop()
            if keys and len(keys) > len(prefix):
                keys.pop()


def _text(data: str | bytes) -> str:
    if isinstance(data, str):
        return data
    try:
        return bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError("", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _depth_line(text: str) -> int:
    """The line where brackets first nest past MAX_DEPTH (strings skipped)."""
    depth, in_str, esc, line = 0, False, False, 1
    for ch in text:
        if ch == "\n":
            line += 1
        if in_str:
            esc = not esc and ch == "\\"
            if ch == '"' and not esc:
                in_str = False
            continue
        if ch == '"':
            in_str, esc = True, False
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif ch in "]}":
            depth -= 1
    return line


def _json(text: str, line0: int = 0) -> Any:
    try:
        obj = json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"line {exc.lineno + line0}", f"malformed JSON: {exc.msg}") from None
    except RecursionError:
        raise DocumentError(f"line {_depth_line(text) + line0}",
                            f"nested deeper than {MAX_DEPTH} levels") from None
    check_tree(obj)
    return obj


def load_json(data: str | bytes) -> Any:
    """One JSON document, bounded (see the module docstring)."""
    return _json(_text(data))


def iter_json_lines(data: str | bytes) -> Iterator[Any]:
    """Each non-blank line of NDJSON: its value, or a :class:`DocumentError` in its place
    (one bad line never hides the others)."""
    text = _text(data)
    for n, line in enumerate(text.split("\n")):
        if line.strip():
            try:
                yield _json(line, n)
            except DocumentError as exc:
                yield exc


def looks_like_json(text: str | bytes) -> bool:
    """Whether a document starts as JSON does (``{`` or ``[``)."""
    head = text.lstrip()[:1]
    return head in ("{", "[", b"{", b"[")


# -- YAML, event by event ---------------------------------------------------------------

_MERGE = object()  # the key of a YAML merge ("<<")
_T = "tag:yaml.org,2002:"


def _yaml():
    import yaml

    return yaml


def default_yaml_loader():
    """PyYAML's safe loader, libyaml's parser where available."""
    yaml = _yaml()
    return getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader


class _Frame:
    __slots__ = ("kind", "items", "anchor", "size", "key", "has_key", "merges", "line")

    def __init__(self, kind: str, anchor, line) -> None:
        self.kind = kind
        self.items: Any = [] if kind == "seq" else {}
        self.anchor = anchor
        self.size = 1
        self.key: Any = None
        self.has_key = False
        self.merges: list = []
        self.line = line


def _line(mark) -> int | None:
    return None if mark is None else mark.line + 1


class _Builder:
    """Builds one document's data from parser events, with the bounds."""

    def __init__(self, loader, yaml) -> None:
        self.loader = loader
        self.yaml = yaml
        self.ScalarNode = yaml.nodes.ScalarNode
        self.SequenceNode = yaml.nodes.SequenceNode
        self.MappingNode = yaml.nodes.MappingNode
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.written = 0
        self.aliased = 0
        self.other_keys = 0
        self.root: Any = None

    def path(self, extra=()) -> str:
        keys = []
        for f in self.stack:
            if f.kind == "seq":
                keys.append(len(f.items))
            elif f.has_key:
                keys.append("<<" if f.key is _MERGE else f.key)
        return format_path([*keys, *extra])

    def fail(self, reason: str, mark) -> DocumentError:
        return DocumentError(self.path(), reason, _line(mark))

    def scalar(self, ev) -> tuple[Any, int]:
        loader, value = self.loader, ev.value
        tag = ev.tag
        if tag is None or tag == "!":
            tag = loader.resolve(self.ScalarNode, value, ev.implicit)
        if tag == _T + "str" or tag == _T + "value":
            return value, 1
        if tag == _T + "merge":
            top = self.stack[-1] if self.stack else None
            if top is not None and top.kind == "map" and not top.has_key:
                return _MERGE, 1
            return value, 1
        if tag == _T + "int" and _digits(value) > MAX_INT_DIGITS:
            raise self.fail(_too_long(_digits(value)), ev.start_mark)
        ctor = loader.yaml_constructors.get(tag) or loader.yaml_constructors.get(None)
        try:
            out = ctor(loader, self.ScalarNode(tag, value, ev.start_mark, ev.end_mark, style=ev.style))
        except self.yaml.YAMLError as exc:
            raise self.fail(getattr(exc, "problem", None) or str(exc).splitlines()[0], ev.start_mark) from None
        except (ValueError, TypeError, OverflowError) as exc:
            raise self.fail(f"bad {tag.rpartition(':')[2]} value: {str(exc)[:80]}", ev.start_mark) from None
        if type(out) is int and _too_big(out):
            raise self.fail(f"integer beyond the limit of {MAX_INT_DIGITS} digits", ev.start_mark)
        return out, 1

    def start(self, ev, kind: str) -> None:
        tag = ev.tag
        node = self.SequenceNode if kind == "seq" else self.MappingNode
        if tag is None or tag == "!":
            tag = self.loader.resolve(node, None, ev.implicit)
        if tag != _T + kind:
            raise self.fail(f"tag {tag!r} is not supported here", ev.start_mark)
        if len(self.stack) >= MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels", ev.start_mark)
        self.stack.append(_Frame(kind, ev.anchor, _line(ev.start_mark)))

    def end(self) -> tuple[Any, int, Any]:
        f = self.stack.pop()
        items = f.items
        if f.merges:
            merged: dict = {}
            for src in reversed(f.merges):
                merged.update(src)
            merged.update(items)
            items = merged
        return items, f.size, f.anchor

    def add(self, value: Any, size: int, anchor, mark) -> None:
        if anchor is not None:
            if anchor in self.anchors:
                raise self.fail(f"duplicate anchor {anchor!r}", mark)
            self.anchors[anchor] = (value, size)
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        top.size += size
        if top.kind == "seq":
            top.items.append(value)
        elif not top.has_key:
            if value is not _MERGE:
                if type(value) in (dict, list):
                    raise self.fail("a mapping key must be a scalar", mark)
                if type(value) is not str:
                    self.other_keys += 1
                    if self.other_keys > MAX_OTHER_KEYS:
                        raise self.fail(f"more than {MAX_OTHER_KEYS} mapping keys that are not "
                                        "strings", mark)
                    try:
                        hash(value)
                    except TypeError:
                        raise self.fail("a mapping key must be hashable", mark) from None
            top.key, top.has_key = value, True
        else:
            if top.key is _MERGE:
                srcs = value if isinstance(value, list) else [value]
                if not all(isinstance(s, dict) for s in srcs):
                    raise self.fail("a merge ('<<') takes a mapping or a list of mappings", mark)
                top.merges.extend(srcs)
            else:
                top.items[top.key] = value
            top.key, top.has_key = None, False

    def alias(self, ev) -> None:
        try:
            value, size = self.anchors[ev.anchor]
        except KeyError:
            if any(f.anchor == ev.anchor for f in self.stack):
                raise self.fail(f"alias *{ev.anchor} refers to a node that contains it", ev.start_mark) from None
            raise self.fail(f"undefined alias *{ev.anchor}", ev.start_mark) from None
        self.aliased += size
        if self.aliased > ALIAS_BUDGET + self.written:
            raise self.fail(f"aliases expand the document past {ALIAS_BUDGET} nodes beyond "
                            "those written (an alias bomb?)", ev.start_mark)
        self.add(value, size, None, ev.start_mark)


def iter_yaml(text: str | bytes, loader=None) -> Iterator[Any]:
    """Each document of a YAML (or JSON) stream: its data, or a :class:`DocumentError`.

    A document that breaks a bound or holds a bad value is replaced by its error
    and the next one is read; text that does not parse ends the stream with its
    error.  ``loader`` is a PyYAML loader class (its resolvers decide the tags;
    default :func:`default_yaml_loader`).
    """
    yaml = _yaml()
    ev_ = yaml.events
    loader = (loader or default_yaml_loader())(_text(text))
    b: _Builder | None = None
    skipping = False
    try:
        while True:
            try:
                if not loader.check_event():
                    return
                ev = loader.get_event()
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
                where = f"line {_line(mark)}" if mark is not None else ""
                yield DocumentError(where, f"malformed YAML: {problem}", _line(mark))
                return
            t = type(ev)
            if t is ev_.DocumentStartEvent:
                b, skipping = _Builder(loader, yaml), False
                continue
            if t is ev_.DocumentEndEvent:
                if not skipping and b is not None:
                    yield b.root
                b = None
                continue
            if skipping or b is None:
                continue
            try:
                b.written += 1
                if t is ev_.ScalarEvent:
                    value, size = b.scalar(ev)
                    b.add(value, size, ev.anchor, ev.start_mark)
                elif t is ev_.SequenceStartEvent:
                    b.start(ev, "seq")
                elif t is ev_.MappingStartEvent:
                    b.start(ev, "map")
                elif t is ev_.SequenceEndEvent or t is ev_.MappingEndEvent:
                    value, size, anchor = b.end()
                    b.add(value, size, anchor, ev.start_mark)
                elif t is ev_.AliasEvent:
                    b.alias(ev)
            except DocumentError as exc:
                skipping = True
                yield exc
    finally:
        loader.dispose()


def load_yaml(text: str | bytes, loader=None) -> list[Any]:
    """Every document of a YAML stream (``None`` for an empty one); the first problem
    is raised as a :class:`DocumentError`."""
    out = []
    for doc in iter_yaml(text, loader):
        if isinstance(doc, DocumentError):
            raise doc
        out.append(doc)
    return out
