"""Write a device table as lspci text: the other direction of :mod:`gpuclass.sources.lspci`.

Reached as :func:`write_lspci` or :meth:`DeviceTable.to_lspci_text`.  It reads
the table's columns and imports nothing of ``gpuclass.devices``.

>>> from gpuclass.devices import DeviceTable
>>> t = DeviceTable.from_columns(domain=[0x10000], bus=[1], slot=[0], function=[0],
...     vendor=[0x10DE], device=[0x2BB4], class_code=[0x030000], revision=[0xA1])
>>> print(write_lspci(t, "-nnmm"), end="")
10000:01:00.0 "Class [0300]" "Vendor [10de]" "Device [2bb4]" -ra1 -p00 "" ""
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...constants import FLAG_INVALID, NO_ADDRESS
from ...errors import InputError

__all__ = ["write_lspci", "LSPCI_FORMATS"]

LSPCI_FORMATS = ("-nnmm", "-nnmm -D", "-vmm -nn", "-vmm -nn -D", "-n")


class _Names:
    """Names per row: the table's own text, else the database, else lspci's placeholders."""

    def __init__(self, table: Any, db: Any) -> None:
        self.t = table
        self.db = db

    def _name(self, col: str, i: int, method: str, ids: tuple, placeholder: str) -> str:
        arr = getattr(self.t, col)
        name = None if arr is None else arr[i]
        if name is None and self.db is not None:
            name = getattr(self.db, method)(*ids)
        return name if name is not None else placeholder

    def cls(self, i: int, code: int) -> str:
        return self._name("class_text", i, "class_name", (code >> 16, (code >> 8) & 0xFF), "Class")

    def vendor(self, i: int, v: int) -> str:
        return self._name("vendor_text", i, "vendor_name", (v,), "Vendor")

    def device(self, i: int, v: int, d: int) -> str:
        return self._name("device_text", i, "device_name", (v, d), "Device")

    def subvendor(self, i: int, sv: int) -> str:
        return self._name("subvendor_text", i, "vendor_name", (sv,), "Vendor")

    def subdevice(self, i: int, v: int, d: int, sv: int, sd: int) -> str:
        return self._name("subdevice_text", i, "subsystem_name", (v, d, sv, sd), "Device")


def write_lspci(table: Any, fmt: str = "-nnmm -D", *, db: Any = None, invalid: str = "raise") -> str:
    """The DeviceTable ``table`` as ``lspci`` would print it in ``fmt`` (one of ``LSPCI_FORMATS``).

    Names come from the text columns, else from ``db`` (a ``PciDatabase``),
    else lspci's placeholders.  Only what lspci prints survives: IDs, class
    with prog-if, revision (lspci omits it when 0, and so does this, so -1
    reads back as 0), subsystem, and in ``-vmm`` / ``-n`` the driver, NUMA node
    and IOMMU group.  Rows that are flagged or have no address cannot be
    written: ``invalid="raise"`` (InputError) or ``"skip"``.
    """
    if fmt not in LSPCI_FORMATS:
        raise InputError(f"unknown lspci format {fmt!r}; expected one of {', '.join(LSPCI_FORMATS)}")
    if invalid not in ("raise", "skip"):
        raise InputError(f"invalid must be 'raise' or 'skip', not {invalid!r}")
    bad = ((table.flags & FLAG_INVALID) != 0) | (table.function == NO_ADDRESS)
    if bad.any():
        if invalid == "raise":
            i = int(np.flatnonzero(bad)[0])
            why = table.problems[i] or "no PCI address"
            raise InputError(f"row {i} cannot be written as lspci text: {why}")
        table = table.take(~bad)
    names = _Names(table, db)
    c = {name: getattr(table, name).tolist() for name in (
        "domain", "bus", "slot", "function", "vendor", "device", "subvendor", "subdevice",
        "has_subsystem", "class_code", "revision", "numa_node", "iommu_group")}
    driver = table.driver
    always_domain = fmt.endswith("-D")
    # lspci's plain mode shows every domain as soon as one is non-zero
    any_domain = bool(len(table)) and int(table.domain.max()) != 0
    lines: list[str] = []
    for i in range(len(table)):
        dom = c["domain"][i]
        slot = f"{c['bus'][i]:02x}:{c['slot'][i]:02x}.{c['function'][i]:x}"
        if always_domain or dom or (fmt == "-n" and any_domain):
            slot = f"{dom:04x}:{slot}"
        v, d, code, rev = c["vendor"][i], c["device"][i], c["class_code"][i], c["revision"][i]
        sv, sd, has_sub = c["subvendor"][i], c["subdevice"][i], c["has_subsystem"][i]
        if fmt == "-n":
            line = f"{slot} {code >> 8:04x}: {v:04x}:{d:04x}"
            if rev > 0:
                line += f" (rev {rev:02x})"
            if code & 0xFF:  # what ``lspci -nv`` adds; lspci -n alone loses the prog-if
                line += f" (prog-if {code & 0xFF:02x})"
            lines.append(line)
            if has_sub:
                lines.append(f"\tSubsystem: {sv:04x}:{sd:04x}")
            if driver[i] is not None:
                lines.append(f"\tKernel driver in use: {driver[i]}")
            if c["numa_node"][i] >= 0:
                lines.append(f"\tNUMA node: {c['numa_node'][i]}")
            if c["iommu_group"][i] >= 0:
                lines.append(f"\tIOMMU group: {c['iommu_group'][i]}")
        elif fmt.startswith("-nnmm"):
            line = (f'{slot} "{names.cls(i, code)} [{code >> 8:04x}]" "{names.vendor(i, v)} [{v:04x}]"'
                    f' "{names.device(i, v, d)} [{d:04x}]"')
            if rev > 0:
                line += f" -r{rev:02x}"
            line += f" -p{code & 0xFF:02x}"
            if has_sub:
                line += (f' "{names.subvendor(i, sv)} [{sv:04x}]"'
                         f' "{names.subdevice(i, v, d, sv, sd)} [{sd:04x}]"')
            else:
                line += ' "" ""'
            lines.append(line)
        else:  # -vmm -nn [-D]
            lines.append(f"Slot:\t{slot}")
            lines.append(f"Class:\t{names.cls(i, code)} [{code >> 8:04x}]")
            lines.append(f"Vendor:\t{names.vendor(i, v)} [{v:04x}]")
            lines.append(f"Device:\t{names.device(i, v, d)} [{d:04x}]")
            if has_sub:
                lines.append(f"SVendor:\t{names.subvendor(i, sv)} [{sv:04x}]")
                lines.append(f"SDevice:\t{names.subdevice(i, v, d, sv, sd)} [{sd:04x}]")
            if rev > 0:
                lines.append(f"Rev:\t{rev:02x}")
            lines.append(f"ProgIf:\t{code & 0xFF:02x}")
            if driver[i] is not None:
                lines.append(f"Driver:\t{driver[i]}")
            if c["numa_node"][i] >= 0:
                lines.append(f"NUMANode:\t{c['numa_node'][i]}")
            if c["iommu_group"][i] >= 0:
                lines.append(f"IOMMUGroup:\t{c['iommu_group'][i]}")
            lines.append("")
    return "".join(line + "\n" for line in lines)
