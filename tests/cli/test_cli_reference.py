"""The docs' command pages hold what ``--help`` prints (tools/cli_reference.py writes them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "cli_reference.py"


def _tool():
    spec = importlib.util.spec_from_file_location("cli_reference", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("page", sorted(_tool().pages()))
def test_each_command_page_is_regenerated_from_help(page):
    tool = _tool()
    path = tool.PAGES / page
    assert path.exists(), f"{path} is missing: run python tools/cli_reference.py"
    block = tool.current(path.read_text(encoding="utf-8"))
    assert block is not None, f"{path} lost its CLI reference markers"
    assert block == tool.reference(page), f"{path} is stale: run python tools/cli_reference.py"


def test_the_reference_covers_every_command_and_action():
    from gpuclass.cli.commands import COMMANDS

    tool = _tool()
    shown = [" ".join(argv) for argv in tool.invocations()]
    assert set(COMMANDS) <= set(shown) and {"db info", "db compile", "policy show"} <= set(shown)
    for name in COMMANDS:
        block = tool.reference(f"{name}.md")
        assert f"## `gpuclass {name}`" in block
        assert "Exit codes:" in block
    assert tool.main(["--check"]) == 0


def test_the_readme_links_every_command_page():
    readme = (TOOL.parents[1] / "README.md").read_text(encoding="utf-8")
    for page in _tool().pages():
        assert f"docs/commands/{page}" in readme, page
