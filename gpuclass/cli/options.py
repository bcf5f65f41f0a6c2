"""What the subcommands share: their options (declared once), output, and the hardware report.

A command module declares ``NAME``, ``HELP``, ``DESCRIPTION``, ``EXAMPLES``,
``OPTIONS`` (shared options by name; ``"root|report"`` makes a mutually
exclusive group), optionally ``OPTION_HELP`` (its own wording for a shared
option) and ``arguments(parser)`` for options of its own, and ``run(args)``
returning the exit code.  :func:`add_command` builds its parser from that.

>>> import argparse
>>> p = argparse.ArgumentParser()
>>> add_option(p, "format").dest
'format'
"""

from __future__ import annotations

import argparse
import json
import sys
from types import ModuleType
from typing import Any

__all__ = ["FORMATS", "SHARED", "add_option", "add_command", "emit_json", "emit_table", "emit_lines",
           "printable", "hardware_report", "load_report", "yes"]

FORMATS = ("table", "json")

# name -> (flags, argparse keywords)
SHARED: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "format": (("--format",), dict(choices=FORMATS, default="table",
                                   help="output format (default: table)")),
    "db": (("--db",), dict(metavar="PCI_IDS", default=None,
                           help="pci.ids to use (default: $GPUCLASS_PCI_IDS, else the bundled copy)")),
    "root": (("--root",), dict(default=None, metavar="DIR",
                               help="read the machine mounted at DIR (its sys/, proc/ and dev/; "
                                    "default: /)")),
    "report": (("--report",), dict(default=None, metavar="FILE",
                                   help="a hardware report ('gpuclass plan --format json') instead "
                                        "of --root")),
    "policy": (("--policy",), dict(default=None, metavar="FILE",
                                   help="allowlist policy (JSON, YAML or TOML; default: the "
                                        "platform's)")),
    "lspci": (("--lspci",), dict(default=None, metavar="FILE",
                                 help="read a collected lspci -nnmm / -vmm -nn / -n dump instead")),
}


def add_option(parser: Any, name: str, help: str | None = None) -> argparse.Action:
    """Add the shared option ``name`` to a parser or group (``help`` rewords it)."""
    flags, kwargs = SHARED[name]
    if help is not None:
        kwargs = {**kwargs, "help": help}
    return parser.add_argument(*flags, **kwargs)


def add_command(sub: Any, module: ModuleType) -> argparse.ArgumentParser:
    """The subparser of a command module (see the module docstring)."""
    p = sub.add_parser(module.NAME, help=module.HELP, description=module.DESCRIPTION,
                       epilog=module.EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    own_help = getattr(module, "OPTION_HELP", {})
    arguments = getattr(module, "arguments", None)
    if arguments is not None:
        arguments(p)
    for spec in module.OPTIONS:
        names = spec.split("|")
        target = p.add_mutually_exclusive_group() if len(names) > 1 else p
        for name in names:
            add_option(target, name, own_help.get(name))
    p.set_defaults(func=module.run)
    return p


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


def emit_json(obj: Any) -> None:
    """JSON on stdout, terminal-safe: every character that is not printable (controls,
    separators, bidi overrides, bytes that were not UTF-8) written as a ``\\u`` escape,
    which every JSON reader turns back into the same string."""
    text = json.dumps(obj, indent=2, ensure_ascii=False)
    if not text.replace("\n", "").isprintable():  # only inside strings: the structure is ASCII
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if not line.isprintable():
                lines[i] = "".join(c if c.isprintable() else _json_escape(c) for c in line)
        text = "\n".join(lines)
    sys.stdout.write(text + "\n")


def emit_table(rows: list[tuple[str, ...]]) -> None:
    """Aligned columns, one row per line; every cell :func:`printable`."""
    if not rows:
        return
    rows = [tuple(printable(str(cell)) for cell in row) for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(w) for cell, w in zip(row, widths)] + [row[-1]]
        sys.stdout.write("  ".join(cells).rstrip() + "\n")


def emit_lines(lines: list[str]) -> None:
    """Lines of text output, each :func:`printable`."""
    sys.stdout.write("".join(printable(line) + "\n" for line in lines))


def hardware_report(args: argparse.Namespace):
    """The HardwareReport of ``--report FILE`` or of the machine at ``--root``."""
    from ..provisioner import inspect

    if getattr(args, "report", None):
        return load_report(args.report)
    return inspect(args.root or "/", policy=getattr(args, "policy", None))


def load_report(path: str):
    """A HardwareReport from JSON: the report itself, or a plan's ``{"report": ...}``."""
    from pydantic import ValidationError

    from ..documents import DocumentError, load_json
    from ..errors import ManifestError, SourceError
    from ..inputs import input_name, read_input
    from ..provisioner import HardwareReport

    name = input_name(path)
    try:
        data = load_json(read_input(path, "report"))
    except SourceError as exc:
        raise ManifestError("", exc.reason, name) from None
    except DocumentError as exc:
        raise ManifestError(exc.where, exc.reason, name) from None
    if isinstance(data, dict) and isinstance(data.get("report"), dict):
        data = data["report"]
    try:
        return HardwareReport.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ManifestError(where, f"not a hardware report: {err['msg']}", name) from None


def yes(flag: bool) -> str:
    return "yes" if flag else "no"
