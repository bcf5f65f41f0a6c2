"""Reading Kubernetes objects: YAML/JSON text, dicts, files, client models; quantities.

The controller takes objects the way people have them at hand: the output of
``kubectl get -o yaml``, a manifest file, a dict, or a model of the official
``kubernetes`` client.  Everything becomes a plain dict here, and anything
unreadable becomes a :class:`~gpuclass.errors.ManifestError` with the file and,
for YAML, the line.

>>> parse_quantity("2"), parse_quantity("1500m"), parse_quantity("1k")
(Fraction(2, 1), Fraction(3, 2), Fraction(1000, 1))
>>> as_object("kind: Node\\nmetadata: {name: n1}\\n")["metadata"]
{'name': 'n1'}
"""

from __future__ import annotations

import os
import re
from fractions import Fraction
from typing import Any

from ..documents import DocumentError, iter_json_lines, iter_yaml, load_json, looks_like_json
from ..errors import ManifestError, SourceError
from ..inputs import input_name, read_input

__all__ = ["load_documents", "read_documents", "check_shape", "as_object", "parse_quantity", "dig", "meta_str",
           "dump_yaml"]

# A Kubernetes resource.Quantity: sign, number, then a binary or decimal suffix or an exponent.
# (``\d+(?:\.\d*)?``, not ``\d+\.?\d*``: the latter backtracks quadratically on long digit runs.)
_QUANTITY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")
MAX_QUANTITY_CHARS = 64
MAX_EXPONENT = 64
_SUFFIX = {
    "": Fraction(1), "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40),
    "Pi": Fraction(2**50), "Ei": Fraction(2**60),
}


def parse_quantity(value: Any) -> Fraction:
    """A Kubernetes quantity (``4``, ``"4"``, ``"1500m"``, ``"2Ki"``, ``"1e3"``) as an exact Fraction.

    Raises ``ValueError`` for anything that is not a quantity.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a quantity")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value))
    text = str(value).strip()
    # Real quantities are short; a hostile "1e999999999" would take 10**999999999.
    m = _QUANTITY.match(text) if len(text) <= MAX_QUANTITY_CHARS else None
    if not m:
        raise ValueError(f"{value!r} is not a quantity")
    number, suffix = m.group(1), m.group(2) or ""
    base = Fraction(number)
    if suffix[:1] in ("e", "E") and len(suffix) > 1:
        exponent = int(suffix[1:])
        if abs(exponent) > MAX_EXPONENT:
            raise ValueError(f"{value!r} is out of range (exponent beyond +-{MAX_EXPONENT})")
        return base * Fraction(10) ** exponent
    return base * _SUFFIX[suffix]


def _manifest_error(exc: DocumentError, source: str | None, doc: int | None = None) -> ManifestError:
    where = exc.where
    if exc.line is not None and not where.startswith("line "):
        where = f"{where} (line {exc.line})" if where else f"line {exc.line}"
    if doc is not None:
        where = f"document {doc}" + (f": {where}" if where else "")
    return ManifestError(where, exc.reason, source)


def _parsed(text: str | bytes) -> list[Any]:
    """Every document of the text, or a DocumentError in the place of a bad one.

    JSON (one document, or one per line) is read by the json module, which is
    fast; anything else, and JSON that does not parse (a YAML flow mapping
    starts with ``{`` too), as YAML.
    """
    if looks_like_json(text):
        try:
            return [load_json(text)]
        except DocumentError as exc:
            if "Extra data" in exc.reason:  # one JSON value per line (NDJSON)
                return list(iter_json_lines(text))
            if "malformed JSON" not in exc.reason:
                return [exc]
    return list(iter_yaml(text))


def load_documents(text: str | bytes, source: str | None = None) -> list[Any]:
    """Every document of a YAML, JSON or NDJSON stream; empty documents are dropped.

    Anything unreadable or past a bound (see :mod:`gpuclass.documents`) is a
    :class:`ManifestError` naming the field, the line and the document.
    """
    docs = _parsed(text)
    many = len(docs) > 1
    for i, doc in enumerate(docs):
        if isinstance(doc, DocumentError):
            raise _manifest_error(doc, source, i + 1 if many else None)
    return [d for d in docs if d is not None]


def _read(path: str | os.PathLike) -> tuple[str, str]:
    name = input_name(path)
    try:
        data = read_input(path, "manifest")
    except SourceError as exc:
        raise ManifestError("", exc.reason, name) from None
    try:
        return data.decode("utf-8-sig"), name
    except UnicodeDecodeError as exc:
        raise ManifestError("", f"not UTF-8 text ({exc.reason} at byte {exc.start})", name) from None


def check_shape(doc: Any) -> tuple[str, str] | None:
    """``(field path, reason)`` where a Kubernetes object has the wrong shape, or None.

    The fields every object shares must have their types: the object and its
    ``metadata``, ``spec`` and ``status`` are mappings, ``apiVersion``, ``kind``
    and ``metadata``'s names strings, labels and annotations maps of strings.

    >>> check_shape({"kind": "Pod", "metadata": {"labels": {"a": 1}}})
    ('metadata.labels.a', 'expected a string, got int')
    """
    if not isinstance(doc, dict):
        return "", f"expected an object (a mapping), got {type(doc).__name__}"
    for key in ("apiVersion", "kind"):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            return key, f"expected a string, got {type(doc[key]).__name__}"
    for key in ("metadata", "spec", "status"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            return key, f"expected a mapping, got {type(doc[key]).__name__}"
    meta = doc.get("metadata") or {}
    for key in ("name", "namespace", "generateName", "uid", "resourceVersion"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            return f"metadata.{key}", f"expected a string, got {type(meta[key]).__name__}"
    for key in ("labels", "annotations"):
        values = meta.get(key)
        if values is None:
            continue
        if not isinstance(values, dict):
            return f"metadata.{key}", f"expected a mapping, got {type(values).__name__}"
        for k, v in values.items():
            if not isinstance(k, str):
                return f"metadata.{key}", f"keys must be strings, found {type(k).__name__}"
            if v is not None and not isinstance(v, str):
                return f"metadata.{key}.{k}", f"expected a string, got {type(v).__name__}"
    return None


def read_documents(path: str | os.PathLike, *, keep_errors: bool = False) -> tuple[list[Any], str]:
    """``(documents, source name)`` of a file (``-``: standard input); a ``List`` is unpacked.

    The file is a regular file of at most ``LIMITS["manifest"]`` bytes.  Each
    document (each item of a ``List``) must read and have the shape of a
    Kubernetes object (:func:`check_shape`); a bad one is a
    :class:`ManifestError` naming the document and the field.  With
    ``keep_errors`` that error takes the bad document's place and the others
    are still returned (one bad document never loses the rest).
    """
    text, name = _read(path)
    docs = [d for d in _parsed(text) if d is not None]
    many = len(docs) > 1
    out: list[Any] = []
    for i, doc in enumerate(docs):
        if isinstance(doc, DocumentError):
            err = _manifest_error(doc, name, i + 1 if many else None)
            if not keep_errors:
                raise err
            out.append(err)
            continue
        items, prefix = [doc], ""
        if isinstance(doc, dict) and doc.get("kind") == "List":
            if not isinstance(doc.get("items"), list):
                items = [ManifestError("items", "expected a list, got "
                                       f"{type(doc.get('items')).__name__}", name)]
            else:
                items, prefix = doc["items"], "items"
        for j, item in enumerate(items):
            bad = check_shape(item) if not isinstance(item, ManifestError) else None
            if bad is not None:
                where = ".".join(p for p in (f"{prefix}[{j}]" if prefix else "", bad[0]) if p)
                if many:
                    where = f"document {i + 1}" + (f": {where}" if where else "")
                item = ManifestError(where, bad[1], name)
            if isinstance(item, ManifestError) and not keep_errors:
                raise item
            out.append(item)
    return out, name


def as_object(obj: Any, source: str | None = None, what: str = "object") -> dict:
    """One Kubernetes object as a dict: from a dict, YAML/JSON text, a path or a client model."""
    if isinstance(obj, str) and "\n" not in obj and os.path.isfile(obj):
        from pathlib import Path

        obj = Path(obj)  # a file name rather than YAML text
    if isinstance(obj, os.PathLike):
        docs, source = read_documents(obj)
        obj = docs
    elif isinstance(obj, (str, bytes)):
        obj = load_documents(obj, source)
    elif hasattr(obj, "openapi_types") and hasattr(obj, "to_dict"):
        from kubernetes.client import ApiClient  # a client model: its camelCase wire form

        obj = ApiClient().sanitize_for_serialization(obj)
    if isinstance(obj, list):
        if len(obj) == 1:
            obj = obj[0]
        else:
            raise ManifestError("", f"expected one {what}, found {len(obj)} documents", source)
    if not isinstance(obj, dict):
        raise ManifestError("", f"expected a {what} (a mapping), got {type(obj).__name__}", source)
    return obj


def dig(obj: dict, path: str, default: Any = None) -> Any:
    """``obj["a"]["b"]`` for ``"a.b"``; ``default`` where a level is missing or not a mapping.

    >>> dig({"a": {"b": 1}}, "a.b"), dig({"a": None}, "a.b", 0)
    (1, 0)
    """
    cur: Any = obj
    for key in path.split("."):
        if not isinstance(cur, dict) or key not in cur:
            return default
        cur = cur[key]
    return default if cur is None else cur


def dump_yaml(obj: Any) -> str:
    """YAML for people and ``kubectl apply``: keys in order, multi-line strings as ``|`` blocks.

    >>> print(dump_yaml({"data": {"f": "a: 1\\nb: 2\\n"}}), end="")
    data:
      f: |
        a: 1
        b: 2
    """
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper, value):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False)


def meta_str(meta: dict, key: str, source: str | None) -> str | None:
    """``metadata.<key>`` when it is a string (or absent); anything else is a ManifestError."""
    value = meta.get(key)
    if value is not None and not isinstance(value, str):
        raise ManifestError(f"metadata.{key}", f"expected a string, got {type(value).__name__}", source)
    return value
