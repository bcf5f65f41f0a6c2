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
import sys
from pathlib import Path
from typing import Any

from ..errors import PolicyError

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


def _yaml_loader():
    import yaml

    from ..documents import depth_limited

    class Loader(depth_limited(yaml.SafeLoader)):
        """SafeLoader that leaves unquoted numbers as text: ``0300`` is a class, not octal 192."""

    Loader.yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in v if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")]
        for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return Loader


def parse_document(text: str | bytes, format: str, source: str | None = None) -> Any:
    """A policy document's data; malformed text is a :class:`PolicyError` naming ``source``."""
    fmt = _check_format(format)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PolicyError("", f"not UTF-8 at byte {exc.start}", source=source) from None
    try:
        if fmt == "json":
            return json.loads(text)
        if fmt == "yaml":
            import yaml
            try:
                return yaml.load(text, Loader=_yaml_loader())
            except yaml.YAMLError as exc:
                raise ValueError(" ".join(str(exc).split())) from None
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        return tomllib.loads(text)
    except ValueError as exc:  # JSONDecodeError and TOMLDecodeError are ValueErrors
        raise PolicyError("", f"not valid {fmt.upper()}: {exc}", source=source) from None
    except RecursionError:  # all three parsers recurse per nesting level
        raise PolicyError("", f"not valid {fmt.upper()}: nested too deeply", source=source) from None


def read_document(path: str | os.PathLike, format: str | None = None) -> tuple[bytes, str, str]:
    """``(bytes, format, source name)`` of a policy file; the format follows the suffix unless given."""
    p = Path(path)
    fmt = format or format_for(p)
    try:
        return p.read_bytes(), fmt, str(p)
    except OSError as exc:
        raise PolicyError("", f"cannot read: {exc.strerror or exc}", source=str(p)) from None


def dump_document(data: Any, format: str = "json") -> str:
    """Plain data as a policy document in ``format``."""
    fmt = _check_format(format)
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    if fmt == "yaml":
        import yaml
        return yaml.safe_dump(data, sort_keys=False)
    import tomli_w
    return tomli_w.dumps(data)
