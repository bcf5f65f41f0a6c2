"""The command line read without argparse (:mod:`gpuclass.cli.quickargs`) is argparse's
reading: on command lines generated from every command's own options (spelled out,
abbreviated, glued, repeated, conflicting, with values that look like options, empty,
Unicode), the quick reader gives argparse's namespace, key order included, or declines
(None), and it declines whenever argparse would stop (``--help``, a usage error).  And it
does answer the plain command lines a machine runs at boot, and an audit's, which is what
it is for."""

from __future__ import annotations

import contextlib
import importlib
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuclass.cli import quickargs
from gpuclass.cli.commands import COMMANDS
from gpuclass.cli.parser import build_parser

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BOOT_COMMANDS = ("scan", "plan", "labels", "lookup")
QUICK_COMMANDS = (*BOOT_COMMANDS, "audit")  # an audit's options convert values (type=)


def _argparse(argv: list[str]) -> dict | None:
    """argparse's namespace as ordered items, or None where it exits (help, usage error)."""
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return list(vars(parser.parse_args(argv)).items())
        except SystemExit:
            return None


def _quick(argv: list[str]) -> list | None:
    ns = quickargs.parse(argv, COMMANDS)
    return None if ns is None else list(vars(ns).items())


def _declared(name: str) -> quickargs.Declaration | None:
    return quickargs.declare(importlib.import_module(COMMANDS[name]))


def _flags(name: str) -> list[str]:
    """Every option string of the command's argparse parser."""
    sub = build_parser(name)._subparsers._group_actions[0].choices[name]
    return [s for action in sub._actions for s in action.option_strings]


def test_the_boot_commands_are_read_quickly_and_the_others_by_argparse():
    declared = {name for name in COMMANDS if _declared(name) is not None}
    assert set(QUICK_COMMANDS) <= declared
    for name in set(COMMANDS) - declared:  # subcommands of their own, counts, ...
        assert quickargs.parse([name], COMMANDS) is None


VALUES = ["json", "table", "yaml", "-", "", "x", "dir/with space", "-x", "-1", "--", "a=b", "é", "\u0660",
          "10de:27b0", "10de", "--root", "-o", "=", "none",
          # values an option's type converts, or refuses (audit's --max-expanded, --max-ratio)
          "512M", " 2 GiB ", "8g", "0", "2.5", "1e3", "0.5", "nan", "inf", "7 KB", "\u0661\u0662"]


@st.composite
def command_line(draw, name: str):
    """Tokens from the command's flags, their prefixes and glued forms, and values."""
    flags = _flags(name)
    token = st.one_of(
        st.sampled_from(flags),
        st.sampled_from(flags).map(lambda f: f[: max(2, len(f) - 2)]),  # an abbreviation
        st.tuples(st.sampled_from(flags), st.sampled_from(VALUES)).map("=".join),
        st.tuples(st.sampled_from([f for f in flags if len(f) == 2]), st.sampled_from(VALUES)).map("".join),
        st.sampled_from(VALUES + ["-h", "--help", "--version"]),
        st.text(max_size=4),
    )
    return [name, *draw(st.lists(token, max_size=7))]


@pytest.mark.parametrize("name", sorted(COMMANDS))
@SETTINGS
@given(data=st.data())
def test_generated_command_lines_read_as_argparse_reads_them(name, data):
    argv = data.draw(command_line(name))
    quick = _quick(argv)
    if quick is not None:
        assert quick == _argparse(argv), argv


@st.composite
def plain_command_line(draw, name: str):
    """What a machine runs: options spelled out with plain values, at most one of a group."""
    spec = _declared(name)
    by_dest: dict[str, list[str]] = {}
    for flag, option in spec.options.items():
        by_dest.setdefault(option.dest, []).append(flag)
    argv, groups = [name], set()
    for dest in draw(st.permutations(sorted(by_dest)))[: draw(st.integers(0, len(by_dest)))]:
        option = spec.options[by_dest[dest][0]]
        if option.group is not None:
            if option.group in groups:
                continue
            groups.add(option.group)
        flag = draw(st.sampled_from(by_dest[dest]))
        if option.flag:
            argv.append(flag)
            continue
        plain = ["-", "x", "dir/a b", "é", "", "10de:27b0", "512M", "8G", "100", "2.5"]
        value = draw(st.sampled_from(sorted(option.choices)) if option.choices
                     else st.sampled_from([v for v in plain if _converts(option.type, v)]))
        argv += [f"{flag}={value}"] if flag.startswith("--") and draw(st.booleans()) else [flag, value]
    if spec.positional is not None:
        ids = draw(st.lists(st.sampled_from(["10de:27b0", "10de", "8086:0d57:1af4:1045", "zz"]), min_size=1,
                            max_size=3))
        argv = argv[:1] + ids + argv[1:] if draw(st.booleans()) else argv + ids
    return argv


def _converts(kind, value: str) -> bool:
    """Whether an option's ``type`` (None: text) takes ``value``."""
    try:
        kind is None or kind(value)
    except Exception:
        return False
    return True


@pytest.mark.parametrize("name", QUICK_COMMANDS)
@SETTINGS
@given(data=st.data())
def test_plain_command_lines_are_read_quickly(name, data):
    argv = data.draw(plain_command_line(name))
    quick = _quick(argv)
    assert quick is not None, argv
    assert quick == _argparse(argv)


@pytest.mark.parametrize("argv", [
    ["scan", "-h"], ["scan", "--out", "json"], ["scan", "-ojson"], ["scan", "-o", "xml"],
    ["scan", "--root", "a", "--lspci", "b"], ["scan", "extra"], ["scan", "--no-names=1"],
    ["scan", "--root"], ["scan", "--root", "-x"], ["scan", "--"], ["labels", "--patch", "--nfd"],
    ["lookup"], ["lookup", "10de", "-o", "json", "8086"], ["--version"], ["-h"], [], ["nosuch"],
    ["lookup", "-1"], ["audit", "f", "--max-ratio", "0.5"], ["audit", "f", "--max-expanded", "lots"],
    ["audit", "f", "--max-expanded=", "x"], ["audit"], ["audit", "-o", "x", "f", "--latest", "g"],
])
def test_what_only_argparse_answers(argv):
    """Help, abbreviations, glued short options, errors: argparse's, never the quick reader's."""
    assert quickargs.parse(argv, COMMANDS) is None


def test_the_namespace_is_argparses_in_the_commands_hands():
    argv = ["labels", "--patch", "--node", "n1", "-o", "yaml", "--root=/mnt/x"]
    quick = quickargs.parse(argv, COMMANDS)
    assert list(vars(quick).items()) == _argparse(argv)
    assert quick.command == "labels" and quick.patch and quick.node == "n1" and quick.root == "/mnt/x"
    assert quick.func is importlib.import_module(COMMANDS["labels"]).run


def test_an_options_type_converts_its_value_as_argparse_does():
    argv = ["audit", "devices.parquet", "--max-expanded", "2G", "--max-ratio=12.5", "-o", "out.parquet"]
    quick = quickargs.parse(argv, COMMANDS)
    assert list(vars(quick).items()) == _argparse(argv)
    assert quick.max_expanded == 2 << 30 and quick.max_ratio == 12.5 and quick.files == ["devices.parquet"]


def test_a_text_default_goes_through_the_type_and_a_refused_one_declines(monkeypatch):
    """argparse converts a text default that no value overrides; where the type refuses it,
    argparse reports the error: the quick reader declines."""
    import argparse
    import sys
    import types

    from gpuclass.cli.options import add_command

    module = types.ModuleType("gpuclass_test_typed_command")
    module.NAME, module.HELP, module.DESCRIPTION, module.EXAMPLES, module.OPTIONS = "m", "", "", "", ()
    module.run = print
    monkeypatch.setitem(sys.modules, module.__name__, module)
    commands = {"m": module.__name__}

    def argparse_reads(argv):
        parser = argparse.ArgumentParser(prog="m")
        parser.add_argument("--version", action="version", version="1")
        sub = parser.add_subparsers(dest="command", required=True)
        add_command(sub, module)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                return list(vars(parser.parse_args(argv)).items())
            except SystemExit:
                return None

    for default in ("21", "x", 21):
        module.arguments = lambda p, d=default: p.add_argument("--size", type=lambda t: int(t) * 2, default=d)
        for argv in (["m"], ["m", "--size", "5"], ["m", "--size=x"], ["m", "--size", "4"]):
            quick = quickargs.parse(argv, commands)
            expected = argparse_reads(argv)
            assert (None if quick is None else list(vars(quick).items())) in (expected, None), (default, argv)
            assert (quick is None) == (expected is None), (default, argv)
    module.arguments = lambda p: p.add_argument("--size", type=lambda t: int(t) * 2, default="21")
    assert quickargs.parse(["m"], commands).size == 42
