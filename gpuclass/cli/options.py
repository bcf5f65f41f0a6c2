"""What the subcommands share: their options (declared once), output, and the hardware report.

A command module declares ``NAME``, ``HELP``, ``DESCRIPTION``, ``EXAMPLES``,
``OPTIONS`` (shared options by name; ``"root|report"`` makes a mutually
exclusive group), optionally ``OPTION_HELP`` (its own wording for a shared
option) and ``arguments(parser)`` for options of its own, and ``run(args)``
returning the exit code.  The "Exit codes:" paragraph of its docstring closes its
``--help``.  :func:`add_command` builds its parser from that, and the same calls on a
recorder are what :mod:`gpuclass.cli.quickargs` reads a plain command line with.

Every command that prints data takes ``-o``/``--output`` (``--format`` is an alias)
with ``table``, ``json`` or ``yaml``, as kubectl does.  An option that does not
apply to what a command was asked is a usage error (:class:`UsageError`, exit 2),
never silently ignored.

>>> import argparse
>>> p = argparse.ArgumentParser()
>>> add_option(p, "format").option_strings
['-o', '--output', '--format']
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from types import ModuleType
    from typing import Any

from ..printable import printable

__all__ = ["FORMATS", "EXIT_OK", "EXIT_PROBLEM", "EXIT_USAGE", "EXIT_INPUT", "outcome", "SHARED", "UsageError", "add_option", "add_command",
           "emit", "emit_json", "emit_yaml", "emit_table", "emit_lines", "printable", "given", "reject",
           "require", "hardware_report", "report_data", "load_report", "yes", "exit_codes"]

FORMATS = ("table", "json", "yaml")

# Every command's exit codes: done; done, and something found is wrong (a flagged row or
# device, a conflict, an invalid pod); the arguments do not fit; an input cannot be read.
EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_INPUT = 0, 1, 2, 3


def outcome(problem: bool) -> int:
    """The exit code of a command that ran: :data:`EXIT_PROBLEM` where it found a problem."""
    return EXIT_PROBLEM if problem else EXIT_OK

# name -> (flags, argparse keywords)
SHARED: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "format": (("-o", "--output", "--format"), dict(
        dest="format", choices=FORMATS, default="table", metavar="FORMAT",
        help="output format: table, json or yaml (default: table)")),
    "db": (("--db",), dict(metavar="PCI_IDS", default=None,
                           help="pci.ids to use (default: $GPUCLASS_PCI_IDS, else the bundled copy)")),
    "no-names": (("--no-names",), dict(
        action="store_true", dest="no_names",
        help="proceed without the PCI ID database: no names (a missing or broken database is "
             "otherwise an error, exit 3)")),
    "root": (("--root",), dict(default=None, metavar="DIR",
                               help="read the machine mounted at DIR (its sys/, proc/ and dev/; "
                                    "default: /)")),
    "report": (("--report",), dict(default=None, metavar="FILE",
                                   help="a hardware report ('gpuclass plan -o json') instead of "
                                        "reading a machine")),
    "policy": (("--policy",), dict(default=None, metavar="FILE",
                                   help="allowlist policy (JSON, YAML or TOML; default: the "
                                        "platform's; see 'gpuclass policy show')")),
    "lspci": (("--lspci",), dict(default=None, metavar="FILE",
                                 help="read a collected lspci -nnmm / -vmm -nn / -n dump instead")),
}


class UsageError(Exception):
    """Options that do not fit together: reported as one line, exit code 2."""


def add_option(parser: Any, name: str, help: str | None = None) -> argparse.Action:
    """Add the shared option ``name`` to a parser or group (``help`` rewords it)."""
    flags, kwargs = SHARED[name]
    if help is not None:
        kwargs = {**kwargs, "help": help}
    return parser.add_argument(*flags, **kwargs)


def add_options(parser: Any, specs: tuple[str, ...], own_help: dict[str, str] | None = None) -> None:
    """Add shared options by spec (``"root|report"``: a mutually exclusive group)."""
    for spec in specs:
        names = spec.split("|")
        target = parser.add_mutually_exclusive_group() if len(names) > 1 else parser
        for name in names:
            add_option(target, name, (own_help or {}).get(name))


def exit_codes(module: ModuleType) -> str:
    """The "Exit codes:" paragraph of a command module's docstring, as one line of help text."""
    doc = module.__doc__ or ""
    start = doc.find("Exit codes:")
    if start < 0:
        return ""
    return " ".join(doc[start:].split("\n\n")[0].replace("``", "").split())


def add_command(sub: Any, module: ModuleType) -> argparse.ArgumentParser:
    """The subparser of a command module (see the module docstring)."""
    codes = exit_codes(module)
    epilog = module.EXAMPLES + (f"\n{codes}\n" if codes else "")
    p = sub.add_parser(module.NAME, help=module.HELP, description=module.DESCRIPTION, epilog=epilog)
    arguments = getattr(module, "arguments", None)
    if arguments is not None:
        arguments(p)
    add_options(p, module.OPTIONS, getattr(module, "OPTION_HELP", {}))
    p.set_defaults(func=module.run)
    return p


# -- options that do not apply ----------------------------------------------------------


def _flag(dest: str) -> str:
    for flags, kwargs in SHARED.values():
        if kwargs.get("dest", flags[-1].lstrip("-").replace("-", "_")) == dest:
            return next(f for f in flags if f.startswith("--"))
    return "--" + dest.replace("_", "-")


def given(args: argparse.Namespace, dest: str) -> bool:
    """Whether the option of ``dest`` was given (options default to None or False)."""
    return getattr(args, dest, None) not in (None, False)


def reject(args: argparse.Namespace, dests: tuple[str, ...], when: str) -> None:
    """A UsageError naming the first of ``dests`` given: it does not apply ``when``."""
    for dest in dests:
        if given(args, dest):
            raise UsageError(f"{_flag(dest)} does not apply {when}")


def require(args: argparse.Namespace, dests: tuple[str, ...], needs: str) -> None:
    """A UsageError when one of ``dests`` is given without the option ``needs``."""
    if not given(args, needs.lstrip("-").replace("-", "_")):
        for dest in dests:
            if given(args, dest):
                raise UsageError(f"{_flag(dest)} applies only with {needs}")


# -- output -------------------------------------------------------------------------


def emit_json(obj: Any, compact: bool = False) -> None:
    """JSON on stdout (``compact``: one line), ASCII whatever the locale: every character
    outside ASCII is a ``\\u`` escape (a stream that cannot encode ``é`` would otherwise
    write ``\\xe9``, which is not JSON), so the text is terminal-safe too."""
    import json

    text = (json.dumps(obj, separators=(",", ":"), ensure_ascii=True) if compact
            else json.dumps(obj, indent=2, ensure_ascii=True))
    sys.stdout.write(text + "\n")


def emit_yaml(obj: Any) -> None:
    from ..k8s.objects import dump_yaml

    sys.stdout.write(dump_yaml(obj))


def emit(obj: Any, fmt: str) -> None:
    """``obj`` as JSON or YAML, by ``-o``."""
    (emit_yaml if fmt == "yaml" else emit_json)(obj)


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


# -- the machine --------------------------------------------------------------------


def hardware_report(args: argparse.Namespace):
    """The HardwareReport of ``--report FILE`` or of the machine at ``--root`` (named from
    ``--db`` unless ``--no-names``)."""
    if getattr(args, "report", None):
        return load_report(args.report)
    from ..provisioner import HardwareReport

    return HardwareReport.model_validate(report_data(args))


def report_data(args: argparse.Namespace) -> dict:
    """:func:`hardware_report` as plain data (:mod:`gpuclass.planning`): a machine's report
    without pydantic; a saved ``--report`` is validated through its model first."""
    from ..planning import inspect_data

    if getattr(args, "report", None):
        return load_report(args.report).model_dump(mode="json")
    if getattr(args, "db", None) is not None and getattr(args, "no_names", False):
        raise UsageError("--db and --no-names contradict each other")
    return inspect_data(args.root or "/", policy=getattr(args, "policy", None),
                        db=getattr(args, "db", None), names=not getattr(args, "no_names", False))


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
