"""Every example of README.md and docs/ runs as written.

Each page's ```python blocks run in order in one namespace (a page reads as one session),
and each ``$ gpuclass ...`` line of its ```console and ```sh blocks runs through the CLI's
``main(argv)`` in process; both from a clean temporary directory holding a copy of
``examples/``, so a snippet can use only what the repository ships. A command's exit code
must be 0, or the one its line states in a trailing ``# exit N`` comment; its output is
not compared (the pages that show output hold real output of the shipped examples, and
the tests of each command hold the output itself).

A block that cannot run here (it needs a cluster) carries the marker line
``<!-- snippet: skip (why) -->`` just above its fence: used sparingly, and the reason is
required.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)\s*$")
SKIP = re.compile(r"^<!-- snippet: skip \((?P<why>[^)]+)\) -->$")
EXIT = re.compile(r"#\s*exit\s+(\d+)\s*$")
SHELL_ONLY = {"|", "||", "&&", ";", ">", ">>", "<", "2>", "&"}


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    skip: str | None


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, each with the skip reason marked above it."""
    out: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and lines[j] != "```":
            j += 1
        before = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        marker = SKIP.match(before.strip())
        out.append(Block(page, start + 1, lang, "\n".join(lines[start + 1:j]) + "\n",
                         marker.group("why") if marker else None))
        i = j + 1
    return out


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _commands() -> list[tuple[Block, int, str]]:
    out = []
    for page in PAGES:
        for b in blocks(page):
            if b.lang not in ("console", "sh", "shell", "bash") or b.skip:
                continue
            for n, line in enumerate(b.text.splitlines()):
                if line.startswith("$ gpuclass"):
                    out.append((b, b.line + 1 + n, line[2:]))
    return out


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A clean directory with a copy of examples/, made the working directory."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples", symlinks=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_pages_have_examples_and_markers_have_reasons():
    found = [b for page in PAGES for b in blocks(page)]
    assert sum(b.lang == "python" for b in found) >= 8
    assert len(_commands()) >= 15
    skipped = [b for b in found if b.skip]
    assert len(skipped) <= 3, [(_name(b.page), b.line, b.skip) for b in skipped]
    for page in PAGES:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if "snippet:" in line:
                assert SKIP.match(line.strip()), f"{_name(page)}:{n}: malformed marker {line!r}"


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.lang == "python" for b in blocks(p))],
                         ids=_name)
def test_the_python_blocks_of_a_page_run_in_order(page, workdir):
    namespace: dict = {"__name__": "__docs__"}
    for b in blocks(page):
        if b.lang != "python" or b.skip:
            continue
        code = compile(b.text, f"{_name(page)}:{b.line}", "exec")
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, namespace)  # noqa: S102 - the page's own snippet


@pytest.mark.parametrize("block,line,command", _commands(),
                         ids=[f"{_name(b.page)}:{n}" for b, n, _ in _commands()])
def test_the_shell_examples_exit_as_shown(block, line, command, workdir, capsys):
    from gpuclass.cli import main

    expected = EXIT.search(command)
    want = int(expected.group(1)) if expected else 0
    argv = shlex.split(command, comments=True)
    assert argv[0] == "gpuclass"
    assert not SHELL_ONLY & set(argv), f"{_name(block.page)}:{line}: not a plain command: {command}"
    try:
        code = main(argv[1:])
    except SystemExit as exc:  # argparse's --help and usage errors
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    out = capsys.readouterr()
    assert code == want, (f"{_name(block.page)}:{line}: {command}\nexit {code}, not {want}\n"
                          f"{out.err[-2000:]}")
    assert os.getcwd() == os.fspath(workdir)


def test_the_readme_shows_what_the_main_command_prints(workdir, capsys):
    """The README's first example is the real output of ``gpuclass scan`` on the shipped
    GPU server, whole."""
    from gpuclass.cli import main

    first = next(b for b in blocks(ROOT / "README.md") if b.lang == "console")
    command, *shown = first.text.splitlines()
    assert command == "$ gpuclass scan --root examples/gpu-server"
    assert main(shlex.split(command)[2:]) == 0
    assert capsys.readouterr().out.splitlines() == shown
