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

from ..documents import depth_limited
from ..errors import ManifestError

__all__ = ["load_documents", "read_documents", "as_object", "parse_quantity", "dig", "meta_str",
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


def _yaml_error(exc: Exception, source: str | None) -> ManifestError:
    mark = getattr(exc, "problem_mark", None)
    line = f"line {mark.line + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return ManifestError(line, f"malformed YAML: {problem}", source)


def load_documents(text: str | bytes, source: str | None = None) -> list[Any]:
    """Every document of a YAML (or JSON) stream; empty documents are dropped."""
    import yaml  # only when there is text to read

    try:
        docs = list(yaml.load_all(text, Loader=depth_limited(yaml.SafeLoader)))
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source) from None
    except RecursionError:  # PyYAML composes nested nodes recursively
        raise ManifestError("", "malformed YAML: nested too deeply", source) from None
    return [d for d in docs if d is not None]


def _read(path: str | os.PathLike) -> tuple[str, str]:
    name = os.fspath(path)
    if name == "-":
        import sys

        return sys.stdin.read(), "<stdin>"
    try:
        with open(name, encoding="utf-8") as fh:
            return fh.read(), name
    except UnicodeDecodeError as exc:
        raise ManifestError("", f"not UTF-8 text ({exc.reason})", name) from None


def read_documents(path: str | os.PathLike) -> tuple[list[Any], str]:
    """``(documents, source name)`` of a file (``-``: standard input); a ``List`` is unpacked."""
    text, name = _read(path)
    out: list[Any] = []
    for doc in load_documents(text, name):
        if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            out.extend(doc["items"])
        else:
            out.append(doc)
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
