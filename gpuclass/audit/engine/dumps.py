"""Collected lspci dumps: one report per server (a file of a directory or an archive).

>>> dump = ('0000:01:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation [10de]" '
...         '"AD102GL [RTX 6000 Ada Generation] [26b1]" -ra1 -p00 "NVIDIA Corporation [10de]" "Device [16a1]"\\n')
>>> [(r.server, r.slices) for r in audit_lspci_dumps([("gex130", dump)])]
[('gex130', 4)]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ...classify import classify_table
from ...constants import SUPPORTED, UNSUPPORTED
from ...errors import SourceError
from ...pcinames import UnsupportedLabels
from ...policy import compile_policy
from ...sources.lspci import parse_lspci
from ..render import (EMPTY_DUMP, cannot_read, card_entries, conflicts, finish, not_a_dump, unreadable_line,
                      unsupported_entries)
from ..results.reports import ServerReport

if TYPE_CHECKING:
    from ...policy import PolicyArg

__all__ = ["audit_lspci_dumps"]


def audit_lspci_dumps(dumps: Iterable[tuple[str, str | bytes | Exception]], *, policy: PolicyArg = None,
                      source: str = "lspci") -> Iterator[ServerReport]:
    """One report per ``(server, lspci text)``; an exception in place of the text flags the row."""
    compiled = compile_policy(policy)
    labels = UnsupportedLabels()  # the database is found at the first unsupported GPU
    for row, (server, text) in enumerate(dumps, 1):
        r = ServerReport(row, source, server)
        if isinstance(text, Exception):
            r.problems.append(cannot_read(text))
            yield finish(r)
            continue
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if not text.strip():
            r.problems.append(EMPTY_DUMP)
            yield finish(r)
            continue
        try:
            table = parse_lspci(text, source=f"{source}:{server}")
        except SourceError as exc:  # NotLspciOutput too: one flagged row for the file
            r.problems.append(not_a_dump(getattr(exc, "looks", exc.reason)))
            yield finish(r)
            continue
        res = classify_table(table, compiled)
        addresses = table.addresses()
        supported = np.flatnonzero(res.status == SUPPORTED).tolist()
        evidence = {ci: ", ".join(f"{addresses[i]} {int(table.vendor[i]):04x}:{int(table.device[i]):04x}"
                                  for i in supported if res.card[i] == ci)
                    for ci in {int(res.card[i]) for i in supported}}
        counts = res.summary().card_counts(0)
        r.cards = card_entries(compiled, counts, "id", evidence)
        unsupported: dict[str, int] = {}
        for i in np.flatnonzero(res.status == UNSUPPORTED).tolist():
            label = labels(int(table.vendor[i]) << 16 | int(table.device[i]))
            unsupported[label] = unsupported.get(label, 0) + 1
        unsupported_entries(r, unsupported)
        for i in np.flatnonzero(table.invalid_mask()).tolist():
            r.problems.append(unreadable_line(table.problems[i]))
        r.problems.extend(conflicts(compiled, [c for c, k in counts.items() if k]))
        yield finish(r)
