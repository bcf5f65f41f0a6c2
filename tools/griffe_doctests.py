"""A griffe extension for the docs site: the ``>>>`` examples of the docstrings are shown as
code (``pycon`` blocks), not read as Markdown, where ``>>>`` is a quote and ``x["k"]`` a link.

mkdocs.yml names it under the python handler's ``extensions``; only the rendered text changes,
never a docstring (the doctests run from the source as written).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

PROMPT = re.compile(r"^(\s*)>>> ")


def fence_doctests(text: str) -> str:
    """Wrap each run of a ``>>>`` example (prompt, ``...`` lines, output up to a blank line)
    in a fenced ``pycon`` block at the example's indentation.

    >>> print(fence_doctests("Add:\\n\\n>>> 1 + 1\\n2\\n\\nDone."))
    Add:
    <BLANKLINE>
    ```pycon
    >>> 1 + 1
    2
    ```
    <BLANKLINE>
    Done.
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = PROMPT.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent = m.group(1)
        out.append(f"{indent}```pycon")
        while i < len(lines) and lines[i].strip():
            out.append(lines[i])
            i += 1
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fence the ``>>>`` examples of every docstring griffe loads."""

    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>> " in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
