"""Policy documents: JSON, YAML and TOML in and out, with errors that name the file.

IDs are hex strings in files (``"1b80"``); a bare number in a file is refused
rather than guessed (YAML reads ``0300`` as octal and TOML ``2684`` as decimal),
so the YAML loader here leaves unquoted numbers as text.

>>> parse_document('{"slices_per_card": 4}', "json")
{'slices_per_card': 4}
>>> format_for("allowlist.yml")
'yaml'
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from ..errors import PolicyError, SourceError
from ..inputs import input_name, is_stdin, read_input

__all__ = ["FORMATS", "format_for", "parse_document", "read_document", "dump_document"]

FORMATS = ("json", "yaml", "toml")


def format_for(path: str | os.PathLike) -> str:
    """The document format a file name implies."""
    suffix = Path(path).suffix.lower()
    fmt = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}.get(suffix)
    if fmt is None:
        raise PolicyError("", f"cannot tell the format of {os.fspath(path)!r}: use .json, .yaml or .toml")
    return fmt


def _check_format(format: str) -> str:
    fmt = format.lower()
    if fmt == "yml":
        fmt = "yaml"
    if fmt not in FORMATS:
        raise PolicyError("", f"unknown policy format {format!r}: expected json, yaml or toml")
    return fmt


class BareNumber(str):
    """An unquoted YAML scalar of decimal digits (``2684``, ``0300``), kept as its text: a
    count reads it as the number it is, an ID refuses it (is ``0300`` the class 0300, octal
    192 or decimal 300?), as JSON's and TOML's numbers are refused there."""

    __slots__ = ()


_DIGITS = re.compile(r"^[-+]?[0-9][0-9_]*$")
_BARE_TAG = "tag:gpuclass,2026:bare-number"


def _yaml_loader():
    import yaml

    from ..documents import default_yaml_loader

    class Loader(default_yaml_loader()):
        """The safe loader, leaving unquoted numbers as text: ``0300`` is a class, not octal 192."""

    Loader.yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in v if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")]
        for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    # an unquoted run of digits resolves to a tag of its own (quoted text never resolves)
    Loader.add_implicit_resolver(_BARE_TAG, _DIGITS, list("-+0123456789"))
    Loader.add_constructor(_BARE_TAG, lambda loader, node: BareNumber(loader.construct_scalar(node)))
    return Loader


_HEX = re.compile(r"(0[xX])?[0-9a-fA-F]+")


def _yaml_dumper():
    import yaml

    class Dumper(yaml.SafeDumper):
        """The safe dumper, quoting every text that reads as hex: IDs are written as the
        quoted strings a policy file must hold (``'10de'``, ``'2684'``), never bare."""

    def text(dumper, value):
        style = "'" if _HEX.fullmatch(value) else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return Dumper


def parse_document(text: str | bytes, format: str, source: str | None = None) -> Any:
    """A policy document's data; malformed text, or text past a bound of
    :mod:`gpuclass.documents` (nesting, integer size, aliases), is a
    :class:`PolicyError` naming ``source`` and the field."""
    from ..documents import DocumentError, check_tree, load_json, load_yaml

    fmt = _check_format(format)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PolicyError("", f"not UTF-8 at byte {exc.start}", source=source) from None
    try:
        if fmt == "json":
            return load_json(text)
        if fmt == "yaml":
            docs = load_yaml(text, _yaml_loader())
            if len(docs) > 1:
                raise PolicyError("", f"not valid YAML: {len(docs)} documents, expected one",
                                  source=source)
            return docs[0] if docs else None
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        data = tomllib.loads(text)
        check_tree(data)
        return data
    except DocumentError as exc:
        if exc.where.startswith("line ") or not exc.where:  # no field: the place is the line
            where = f"{exc.where}: " if exc.where else (f"line {exc.line}: " if exc.line else "")
            raise PolicyError("", f"not valid {fmt.upper()}: {where}{exc.reason}", source=source) from None
        where = f"{exc.where} (line {exc.line})" if exc.line else exc.where
        raise PolicyError(where, f"not valid {fmt.upper()}: {exc.reason}", source=source) from None
    except ValueError as exc:  # TOMLDecodeError is a ValueError
        raise PolicyError("", f"not valid {fmt.upper()}: {exc}", source=source) from None
    except RecursionError:  # the TOML parser recurses per nesting level
        raise PolicyError("", f"not valid {fmt.upper()}: nested too deeply", source=source) from None


def read_document(path: str | os.PathLike, format: str | None = None) -> tuple[bytes, str, str]:
    """``(bytes, format, source name)`` of a policy file (``-``: standard input).

    The format follows the suffix unless given; standard input is JSON when it
    starts with ``{``, TOML when it reads as TOML, else YAML.  The file must be
    a regular file of at most ``LIMITS["policy"]`` bytes.
    """
    name = input_name(path)
    try:
        data = read_input(path, "policy")
    except SourceError as exc:
        raise PolicyError("", exc.reason, source=name) from None
    fmt = format or (_sniff(data) if is_stdin(path) else format_for(path))
    return data, fmt, name


def _sniff(data: bytes) -> str:
    """The format of a document without a file name: JSON, TOML or YAML."""
    head = data.lstrip()[:1]
    if head in (b"{", b"["):
        return "json"
    try:
        parse_document(data, "toml")
    except PolicyError:
        return "yaml"
    return "toml"


def dump_document(data: Any, format: str = "json") -> str:
    """Plain data as a policy document in ``format``."""
    fmt = _check_format(format)
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    if fmt == "yaml":
        import yaml
        return yaml.dump(data, Dumper=_yaml_dumper(), sort_keys=False)
    import tomli_w
    return tomli_w.dumps(data)
