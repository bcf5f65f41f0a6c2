"""The README's CLI reference is what ``--help`` prints (tools/cli_reference.py writes it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "cli_reference.py"


def _tool():
    spec = importlib.util.spec_from_file_location("cli_reference", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_readme_reference_is_regenerated_from_help():
    tool = _tool()
    text = tool.README.read_text(encoding="utf-8")
    block = tool.current(text)
    assert block is not None, "README.md lost its CLI reference markers"
    assert block == tool.reference(), "README.md is stale: run python tools/cli_reference.py"


def test_the_reference_covers_every_command_and_action():
    from gpuclass.cli.commands import COMMANDS

    tool = _tool()
    shown = [" ".join(argv) for argv in tool.invocations()]
    assert set(COMMANDS) <= set(shown) and {"db info", "db compile", "policy show"} <= set(shown)
    block = tool.reference()
    for name in COMMANDS:
        assert f"### `gpuclass {name}`" in block
    assert block.count("Exit codes:") >= len(COMMANDS)
