"""A dump as it is collected and pasted: its form decided line by line, what is not
lspci output flagged, the same address counted once, virtual functions told apart.

Collected dumps are rarely clean.  A tool's warning (``lspci: Unable to load libkmod
resources: error -2``), a shell prompt, a banner or an error may stand at the top, in
the middle or at the end; loops print ``IOMMU Group 29`` before each line; pasting
loses the indentation of ``-nnk`` detail lines; dumps of one host are concatenated;
a paste adds markup (:mod:`.pasted`, stripped from each line first).
:func:`parse_dump` reads such text: each line is ``-mm``, ``-n``, a ``-v``/``-k``
detail of the ``-n`` line before it, a ``-vmm`` line, blank, or noise; runs of one
form go to that form's parser (:mod:`.mm`, :mod:`.n`, :mod:`.vmm`) with their line
numbers, and every noise line becomes a flagged row without an address (it never
discards the lines after it).

:func:`finish` then flags a PCI address seen twice (the first stands, counted once)
and the virtual functions a dump shows without sysfs's ``physfn`` links, with or
without their physical function (:mod:`.vfs`).

>>> t = parse_dump("lspci: Unable to load libkmod resources: error -2\\n"
...                "IOMMU Group 29 41:00.0 VGA compatible controller [0300]: NVIDIA Corporation "
...                "GP104 [GeForce GTX 1080] [10de:1b80](rev a1)\\n", "x")
>>> t.addresses(), t.iommu_group.tolist(), t.problems[0]
(['-', '0000:41:00.0'], [-1, 29], "x:1: not lspci output (skipped): 'lspci: Unable to load libkmod resources: error -2'")
"""

from __future__ import annotations

import re

import numpy as np

from ...constants import FLAG_INVALID, FLAG_PF, FLAG_VF
from ...devices import NUMERIC_COLUMNS, OBJECT_COLUMNS, TEXT_COLUMNS, DeviceTable
from .columns import ADDR, flagged
from .mm import parse_lspci_mm
from .n import parse_lspci_n
from .pasted import group_header, unpaste
from .vfs import virtual_functions
from .vmm import parse_lspci_vmm

__all__ = ["parse_dump", "finish", "replace", "line_form", "DETAIL_KEYS", "VMM_KEYS"]

_IOMMU = re.compile(r"^IOMMU [Gg]roup ([0-9]{1,6}):?[ \t]+(?=(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:)")
_MM_LINE = re.compile(rf"^[ \t]*{ADDR}[ \t]+\"")
_N_LINE = re.compile(rf"^{ADDR}[ \t]")
_KEY = re.compile(r"^([A-Z][A-Za-z/]*(?: [A-Za-z/]+){0,5}):(?:[ \t]|$)")
# Keys of the detail lines of -v / -k / -vvv (the first words, before the ':').
DETAIL_KEYS = frozenset({
    "Subsystem", "Physical Slot", "Flags", "Memory at", "I/O ports at", "Expansion ROM at", "Capabilities",
    "Kernel driver in use", "Kernel modules", "Control", "Status", "Latency", "Interrupt", "Region", "Bus",
    "Secondary status", "BridgeCtl", "IOMMU group", "NUMA node", "DeviceName", "Prefetchable memory behind bridge",
    "Memory behind bridge", "I/O behind bridge", "Device Serial Number", "Product Name", "Read-only fields",
    "End"})
VMM_KEYS = frozenset({"Slot", "Class", "Vendor", "Device", "SVendor", "SDevice", "Rev", "ProgIf", "Driver",
                      "Module", "NUMANode", "IOMMUGroup", "PhySlot", "DeviceName"})
_PARSERS = {"mm": parse_lspci_mm, "n": parse_lspci_n, "vmm": parse_lspci_vmm}


def line_form(line: str, after_n: bool) -> str:
    """``mm``, ``n``, ``detail``, ``vmm``, ``blank`` or ``noise`` (prefixes already stripped).

    ``after_n``: the line follows an ``-n`` device line (or its details), where a key
    line is a detail whose indentation was lost.
    """
    if not line.strip():
        return "blank"
    if _MM_LINE.match(line):
        return "mm"
    if _N_LINE.match(line):
        return "n"
    if line[0] in " \t":
        return "detail" if after_n else "noise"
    m = _KEY.match(line)
    if m:
        key = m.group(1)
        if after_n and (key in DETAIL_KEYS or key.split(" ")[0] in ("Capabilities", "Kernel", "Memory")):
            return "lost"
        if key in VMM_KEYS and (line[len(key) + 1:len(key) + 2] == "\t" or key == "Slot"):
            return "vmm"
    return "noise"


def parse_dump(text: str, source: str) -> DeviceTable:
    """Any mix of lspci forms and noise, line by line (see the module docstring)."""
    lines = text.split("\n")
    parts: list[DeviceTable] = []
    run: list[str] = []
    run_form = None
    run_start = 1
    groups: list[int] = []   # IOMMU group per device line of the run (-1: none printed)
    noise: list[tuple[int, str, str]] = []
    after_n = False

    def flush() -> None:
        nonlocal run, run_form, groups
        if run_form is not None and any(x.strip() for x in run):
            # the run's own lines, at their own line numbers (noise inside it is blanked)
            table = _PARSERS[run_form]("\n".join(run), source, run_start)
            if any(g >= 0 for g in groups) and len(table) == len(groups):
                table = replace(table, iommu_group=np.where(np.array(groups) >= 0, groups, table.iommu_group))
            parts.append(table)
        run, run_form, groups = [], None, []

    def flush_noise() -> None:
        nonlocal noise
        if noise:
            parts.append(flagged(noise, source))
            noise = []

    held = -1  # the group of the last header alone on its line, for the lines under it
    for lineno, raw in enumerate(lines, 1):
        header = group_header(raw)
        held = header if header >= 0 else held
        line = unpaste(raw.rstrip("\r"))
        group = held
        m = _IOMMU.match(line)
        if m:
            group, line = int(m.group(1)), line[m.end():]
        form = line_form(line, after_n)
        if form == "blank":
            held = held if header >= 0 else -1
            after_n = after_n and run_form == "n"
            if run_form is not None:
                run.append(line)
            continue
        if form in ("detail", "lost"):
            form, line = "n", (line if form == "detail" else "\t" + line)
            device = False
        else:
            device = form in ("mm", "n")
        if form == "noise":
            # flagged after the run it interrupts, which goes on past it (a warning
            # between a device line and its details, or inside a -vmm block)
            noise.append((lineno, line, "not lspci output (skipped)"))
            if run_form in ("mm", "n"):
                run.append("")  # keeps the line numbers of the run's later lines
            continue
        if form != run_form:
            flush()
            flush_noise()
            run_form, run_start = form, lineno
        run.append(line)
        if device:
            groups.append(group)
        after_n = form == "n"
    flush()
    flush_noise()
    if not parts:
        return DeviceTable.empty(source)
    return parts[0] if len(parts) == 1 else DeviceTable.concat(parts, source=source)


def replace(table: DeviceTable, **columns) -> DeviceTable:
    """The table with some columns replaced (it is read-only: a new one)."""
    cols = {name: getattr(table, name) for name in (*NUMERIC_COLUMNS, *OBJECT_COLUMNS)}
    for name in TEXT_COLUMNS:
        if getattr(table, name) is not None:
            cols[name] = getattr(table, name)
    cols.update(columns)
    return DeviceTable.from_columns(table.source, **cols)


def finish(table: DeviceTable) -> DeviceTable:
    """Flag repeated addresses (counted once) and the virtual functions a dump shows."""
    n = len(table)
    if n == 0:
        return table
    ok = table.has_address_mask() & ~table.invalid_mask()
    key = ((table.domain.astype(np.uint64) << np.uint64(16)) | (table.bus.astype(np.uint64) << np.uint64(8))
           | (table.slot.astype(np.uint64) << np.uint64(3)) | table.function.astype(np.uint64))
    problems = table.problems
    flags = table.flags
    idx = np.flatnonzero(ok)
    _, first = np.unique(key[idx], return_index=True)
    again = np.setdiff1d(idx, idx[first])
    if again.size:
        problems = problems.copy()
        addrs = table.addresses()
        for i in again.tolist():
            problems[i] = f"{table.source}: {addrs[i]} is listed again (counted once)"
        ok[again] = False
    ids = (table.vendor.astype(np.uint64) << np.uint64(16)) | table.device.astype(np.uint64)
    candidates = table.gpu_mask() & ok & ((flags & FLAG_PF) == 0)
    companions = ok & ~table.gpu_mask()
    vf = virtual_functions(key >> np.uint64(8), table.slot, table.function, ids, candidates, companions)
    if again.size or (vf & ((flags & FLAG_VF) == 0)).any():
        flags = flags | np.where(vf, FLAG_VF, 0).astype(np.uint32)
        flags = flags | np.where(problems != None, FLAG_INVALID, 0).astype(np.uint32)  # noqa: E711
        return replace(table, flags=flags, problems=problems)
    return table
