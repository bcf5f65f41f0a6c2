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

__all__ = ["FORMATS", "SHARED", "add_option", "add_command", "emit_json", "emit_table",
           "hardware_report", "load_report", "yes"]

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


def emit_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def emit_table(rows: list[tuple[str, ...]]) -> None:
    """Aligned columns, one row per line."""
    if not rows:
        return
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(w) for cell, w in zip(row, widths)] + [row[-1]]
        sys.stdout.write("  ".join(cells).rstrip() + "\n")


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
