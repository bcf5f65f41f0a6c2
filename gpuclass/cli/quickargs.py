"""A command line read without argparse, where argparse's answer is plain: the start of a
boot-time command (``scan``, ``plan``, ``labels``, ``lookup``) and of an audit.

Importing argparse imports ``re`` and ``enum``, and building a command's parser and
looking up its messages imports ``gettext`` and ``locale``: together about 20 ms, half of
what ``gpuclass scan`` spends above the interpreter's own start.  :func:`parse` reads the
command line from the same declaration argparse's parser is built from
(:func:`gpuclass.cli.options.add_command`, run on a :class:`Declaration` that records the
calls instead of building a parser), and answers only where argparse's answer is
certain:

- the command's name comes first, every option is spelled out in full (``--output json``,
  ``--output=json``, ``-o json``), takes one value or none, and is given no value that
  starts with ``-`` (``-`` alone, standard input, is a value; argparse reads ``-1`` as a
  value, ``-x`` as an option, and drops ``--`` even from ``--root=--``);
- a value with a ``type`` is converted by it (a text default too, as argparse converts
  one), and any exception it raises declines: argparse calls it again and words the error;
- the values are in their ``choices``; no two options of one mutually exclusive group;
- the positional arguments (one declared list at most) are one run, not split by options.

Everything else returns None, and argparse parses the line: ``--help``, abbreviations
(``--out``), ``-ojson``, ``--``, usage errors and their messages.  A command whose
declaration uses anything the reader does not know (counts, appends, subcommands) always
goes to argparse.  ``tests/cli/test_quickargs.py`` holds the two equal on generated
command lines: the same namespace, key order included, or None.
"""

from __future__ import annotations

from types import SimpleNamespace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

__all__ = ["Declaration", "declare", "parse"]


class Unsupported(Exception):
    """The declaration uses something :func:`parse` does not read: argparse parses."""


class _Option:
    __slots__ = ("dest", "flag", "choices", "group", "type")

    def __init__(self, dest: str, flag: bool, choices: Any, group: int | None, type: Any) -> None:
        self.dest, self.flag, self.choices, self.group, self.type = dest, flag, choices, group, type


_KNOWN = frozenset({"dest", "default", "choices", "metavar", "help", "action", "type"})


class Declaration:
    """What a command's parser would be built from: its options by flag, its positional
    list, its defaults in argparse's order.  Stands in for the parser (and its mutually
    exclusive groups) in :func:`gpuclass.cli.options.add_command`."""

    def __init__(self) -> None:
        self.options: dict[str, _Option] = {}
        self.dests: dict[str, Any] = {}  # dest -> default, in the order declared
        self.types: dict[str, Any] = {}  # dest -> the type its text default is converted by
        self.positional: str | None = None  # the dest of the one positional list
        self.groups = 0

    # -- the parser's calls ---------------------------------------------------------

    def add_parser(self, name: str, **kwargs: Any) -> Declaration:
        return self

    def add_mutually_exclusive_group(self, required: bool = False) -> _Group:
        if required:
            raise Unsupported("a required group")
        self.groups += 1
        return _Group(self, self.groups)

    def add_argument(self, *flags: str, **kwargs: Any) -> None:
        if len(flags) == 1 and not flags[0].startswith("-"):
            self._positional(flags[0], kwargs)
        else:
            self._add(flags, kwargs, None)

    def set_defaults(self, **kwargs: Any) -> None:
        for dest, value in kwargs.items():
            if dest in self.dests:  # argparse: a dest's default, where an option has it
                raise Unsupported("set_defaults of an option")
            self.dests[dest] = value

    def __getattr__(self, name: str) -> Any:  # add_subparsers, add_argument_group, ...
        raise Unsupported(name)

    # -- recording --------------------------------------------------------------------

    def _add(self, flags: tuple[str, ...], kwargs: dict[str, Any], group: int | None) -> None:
        if set(kwargs) - _KNOWN or not flags:
            raise Unsupported(f"{flags}: {sorted(set(kwargs) - _KNOWN)}")
        action = kwargs.get("action", "store")
        if action not in ("store", "store_true") or (action == "store_true" and "type" in kwargs):
            raise Unsupported(f"action {action!r}")
        kind = kwargs.get("type")
        if kind is not None and not callable(kind):  # argparse's registered type names
            raise Unsupported(f"type {kind!r}")
        if any(not f.startswith("-") or f in ("-", "--") or "=" in f for f in flags):
            raise Unsupported(f"flags {flags}")
        dest = kwargs.get("dest") or _dest(flags)
        flag = action == "store_true"
        default = kwargs.get("default", False if flag else None)
        if dest in self.dests or any(f in self.options for f in flags):
            raise Unsupported(f"{dest} declared twice")
        option = _Option(dest, flag, kwargs.get("choices"), group, kind)
        for f in flags:
            self.options[f] = option
        self.dests[dest] = default
        if kind is not None:
            self.types[dest] = kind

    def _positional(self, dest: str, kwargs: dict[str, Any]) -> None:
        """One list of one or more (``nargs="+"``), the only positional argument read."""
        if self.positional is not None or set(kwargs) - {"nargs", "metavar", "help"}:
            raise Unsupported("positional arguments")
        if kwargs.get("nargs") != "+" or dest.startswith("-"):
            raise Unsupported(f"nargs {kwargs.get('nargs')!r}")
        self.positional = dest
        self.dests[dest] = None


class _Group:
    def __init__(self, owner: Declaration, number: int) -> None:
        self.owner, self.number = owner, number

    def add_argument(self, *flags: str, **kwargs: Any) -> None:
        self.owner._add(flags, kwargs, self.number)


def _dest(flags: tuple[str, ...]) -> str:
    """argparse's dest of an option: its first long flag, else its first flag."""
    name = next((f for f in flags if f.startswith("--")), flags[0])
    return name.lstrip("-").replace("-", "_")


def declare(module: ModuleType) -> Declaration | None:
    """The declaration of a command module's parser, or None where it uses what
    :func:`parse` does not read."""
    from .options import add_command

    spec = Declaration()
    try:
        add_command(spec, module)
    except Unsupported:
        return None
    return spec


def parse(argv: list[str], commands: dict[str, str]) -> SimpleNamespace | None:
    """The namespace argparse would give for ``argv`` (``command`` first, then the
    command's options in declared order, then its defaults), or None where argparse must
    parse it (see the module docstring)."""
    if not argv or argv[0] not in commands:
        return None
    import importlib

    spec = declare(importlib.import_module(commands[argv[0]]))
    if spec is None:
        return None
    values: dict[str, Any] = {}
    groups: dict[int, str] = {}
    positional: list[str] = []
    runs = 0
    previous_positional = False
    i, n = 1, len(argv)
    while i < n:
        token = argv[i]
        i += 1
        if not token.startswith("-") or token == "-":
            if spec.positional is None:
                return None
            if not previous_positional:
                runs += 1
            positional.append(token)
            previous_positional = True
            continue
        previous_positional = False
        name, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        option = spec.options.get(name)
        if option is None:
            return None  # -h, an abbreviation, -ojson, --, a negative number, an unknown flag
        if option.flag:
            if equals:
                return None
            value = True
        elif not equals:
            if i >= n:
                return None
            value = argv[i]
            i += 1
        if not option.flag and value.startswith("-") and value != "-":
            return None  # argparse may read it as an option or a number, or drop "--"
        if option.type is not None:
            try:
                value = option.type(value)
            except Exception:  # argparse's error, in its words (or its traceback)
                return None
        if option.choices is not None and value not in option.choices:
            return None
        if option.group is not None:
            if groups.setdefault(option.group, option.dest) != option.dest:
                return None  # two of a group: argparse's error
        values[option.dest] = value
    if spec.positional is not None:
        if runs != 1:
            return None
        values[spec.positional] = positional
    namespace = SimpleNamespace(command=argv[0])
    for dest, default in spec.dests.items():
        if dest not in values and isinstance(default, str) and dest in spec.types:
            try:  # argparse converts a text default not overridden
                values[dest] = spec.types[dest](default)
            except Exception:
                return None
        setattr(namespace, dest, values.get(dest, default))
    return namespace
