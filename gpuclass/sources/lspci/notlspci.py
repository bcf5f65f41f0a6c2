"""Text that is no lspci output at all, told apart from a dump with bad lines.

A dump whose lines are flagged one by one is still a dump; text in which no line
reads as a device in any form (an empty input, ``lspci -x`` hex dumps of devices
whose header lines carry no IDs, a names-only ``lspci -tv`` tree, JSON, prose) is
one :class:`~gpuclass.errors.NotLspciOutput` that says what the text looks like.

>>> looks_like("{\\"devices\\": []}")
'looks like JSON; collect with lspci -nn'
>>> looks_like("-[0000:00]-+-00.0  Intel Corporation Device\\n           \\\\-1f.0  Intel Corporation\\n")
'looks like an lspci -t tree (no IDs); collect with lspci -nn'
"""

from __future__ import annotations

import json
import re

import numpy as np

from ...devices import DeviceTable
from ...errors import NotLspciOutput

__all__ = ["check_lspci", "looks_like"]

_COLLECT = "collect with lspci -nn"
_HEX = re.compile(r"^[ \t]*[0-9a-fA-F]{2,3}:(?: [0-9a-fA-F]{2}){4,16}[ \t]*$")
_TREE = re.compile(r"\[[0-9a-fA-F]{4}:[0-9a-fA-F]{2}\]-|[+\\`]-[0-9a-fA-F]{2}\.[0-7]")


def looks_like(text: str) -> str:
    """What text with no lspci line in it looks like, and how to collect a dump."""
    lines = [x for x in text.split("\n") if x.strip()]
    if not lines:
        return f"the input is empty; {_COLLECT}"
    head = text.lstrip()
    if head[:1] in "{[":
        try:
            json.loads(text)
            return f"looks like JSON; {_COLLECT}"
        except ValueError:
            pass
    hexed = sum(bool(_HEX.match(x)) for x in lines)
    if hexed and hexed * 2 >= len(lines):
        return f"looks like an lspci -x hex dump; {_COLLECT}"
    if sum(bool(_TREE.search(x)) for x in lines) * 2 >= len(lines):
        return f"looks like an lspci -t tree (no IDs); {_COLLECT}"
    return f"no line reads as a PCI device in an lspci form (-nn, -nnmm, -vmm, -n); {_COLLECT}"


def check_lspci(text: str, table: DeviceTable) -> None:
    """Raise :class:`NotLspciOutput` where no line of ``text`` read as a device: no row,
    no row with an address, or (``lspci -x``) rows without IDs amid hex dump lines."""
    if len(table) and not table.invalid_mask().all():
        return
    has_address = table.has_address_mask() if len(table) else np.zeros(0, bool)
    if has_address.any():
        lines = [x for x in text.split("\n") if x.strip()]
        if sum(bool(_HEX.match(x)) for x in lines) * 2 < len(lines):
            return  # lspci output with flagged device lines: each row says what it lacks
    raise NotLspciOutput(table.source, looks_like(text))
