"""The ``gpuclass`` command's argparse parser: ``--help``, and every command line
:mod:`gpuclass.cli.quickargs` leaves to it (usage errors and their messages included).

Only imported when it is needed: argparse with ``re``, ``enum``, ``gettext`` and
``locale`` is about 20 ms of a command's start.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

import gpuclass

from .options import EXIT_USAGE, printable

EPILOG = """examples:
  gpuclass scan                          classify this machine's GPUs: cards, slices
  gpuclass plan                          what the provisioner installs here, and why
  gpuclass labels --patch --node NAME    the node's GPU label as a merge patch
  gpuclass labels --configmap            the device plugin's time-slicing ConfigMap
  gpuclass validate-pod pod.yaml         one nvidia.com/gpu per container at most
  gpuclass diagnose node.yaml            why GPU pods do not schedule on a node
  gpuclass lookup 10de:27b0              names of a vendor:device
  gpuclass lookup 10de:1e30:10de:12ba    ... and of a subsystem
  gpuclass db info -o json               which pci.ids is in use
  gpuclass policy show                   the allowlist policy in use, as YAML

Every command prints a table by default and JSON or YAML with -o json|yaml
(--format is an alias). Exit codes: 0 success, 1 a problem found, 2 usage error,
3 unreadable input; each command's --help says what they mean for it.
"""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help text that reads the same on every Python: ``-o, --output FORMAT`` (the metavar
    once), examples as written, one-line paragraphs (descriptions, exit codes) wrapped to
    the terminal, only when help is printed."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:  # argparse asks shutil, whose import costs a parse more than it does
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        return "\n\n".join(
            textwrap.fill(par, width, initial_indent=indent, subsequent_indent=indent)
            if "\n" not in par.strip("\n") and not par.startswith(" ") else par
            for par in text.split("\n\n"))

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if not action.option_strings or action.nargs == 0:
            return ", ".join(action.option_strings) or super()._format_action_invocation(action)
        metavar = self._format_args(action, self._get_default_metavar_for_optional(action))
        return f"{', '.join(action.option_strings)} {metavar}"


def _terminal_columns() -> int:
    """``$COLUMNS``, else the width of the terminal on standard output, else 80 (the
    rule of :func:`shutil.get_terminal_size`)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Version(argparse.Action):
    """``--version``: the version and the core in use (a checkout whose core is not built,
    or a failed load, runs the pure-Python twin: many times slower, same answers)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from .. import _native

        core = ("compiled core" if _native.core.IS_COMPILED
                else f"pure-Python core: {_native.COMPILED_IMPORT_ERROR}")
        sys.stdout.write(printable(f"gpuclass {gpuclass.__version__} ({core})") + "\n")
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2, with
    :class:`HelpFormatter`'s help."""

    def __init__(self, *args, formatter_class=HelpFormatter, **kwargs) -> None:
        super().__init__(*args, formatter_class=formatter_class, **kwargs)

    def error(self, message):  # noqa: D401 - argparse API
        self.exit(EXIT_USAGE, f"gpuclass: error: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``gpuclass`` parser: with ``only``, that command alone with its options (the
    others cannot be reached from its command line); without, every command by name and
    summary, for ``gpuclass --help``.  Neither imports anything heavy."""
    from .commands import COMMANDS
    from .options import add_command

    parser = _Parser(
        prog="gpuclass",
        description="Classify server hardware for a bare-metal Kubernetes GPU platform.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action=_Version, help="show program's version number and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, modname in COMMANDS.items():
        if only is not None and name != only:
            continue  # parsing one command needs no other: each parser costs a few ms
        module = importlib.import_module(modname)
        if name == only:
            add_command(sub, module)
        else:
            sub.add_parser(name, help=module.HELP)
    return parser
