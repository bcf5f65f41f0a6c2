"""Write a device table as lspci text: the other direction of :mod:`gpuclass.sources.lspci`.

Reached as :func:`write_lspci` or :meth:`DeviceTable.to_lspci_text`.  It reads
the table's columns and imports nothing of ``gpuclass.devices``.  Each form is
written byte for byte as lspci 3.9 prints it (the tests hold it to recorded and
live lspci output of the fake machine trees): names formatted and cut to
lspci's 128-byte buffers as libpci does, ``\\"`` and ``\\\\`` escaped in the
``-mm`` forms, ``"" ""`` for a device without a subsystem (or with subsystem
vendor 0000 or ffff, which lspci does not show), and only the lines lspci
prints in each form.

>>> from gpuclass.devices import DeviceTable
>>> t = DeviceTable.from_columns(domain=[0x10000], bus=[1], slot=[0], function=[0],
...     vendor=[0x10DE], device=[0x2BB4], class_code=[0x030000], revision=[0xA1])
>>> print(write_lspci(t, "-nnmm"), end="")
10000:01:00.0 "Class [0300]" "Vendor [10de]" "Device [2bb4]" -ra1 -p00 "" ""
>>> print(write_lspci(t, "-n"), end="")
10000:01:00.0 0300: 10de:2bb4 (rev a1)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ...constants import FLAG_INVALID, NO_ADDRESS
from ...errors import InputError

if TYPE_CHECKING:
    from ...records import DeviceNames

__all__ = ["write_lspci", "LSPCI_FORMATS"]


class _Form(NamedTuple):
    style: str  # "mm" (one quoted line), "vmm" (Key: value blocks) or "n" (terse lines)
    names: bool  # -nn: names with numbers; -n: numbers only
    domains: bool  # -D: every slot with its domain
    kernel: bool  # -k: the driver in use (and, for terse lines, the subsystem)


_FORMS = {
    "-nnmm": _Form("mm", True, False, False),
    "-nnmm -D": _Form("mm", True, True, False),
    "-vmm -nn": _Form("vmm", True, False, False),
    "-vmm -nn -D": _Form("vmm", True, True, False),
    "-n": _Form("n", False, False, False),
    "-n -D": _Form("n", False, True, False),
    "-nmm": _Form("mm", False, False, False),
    "-nmm -D": _Form("mm", False, True, False),
    "-vmm -nnk": _Form("vmm", True, False, True),
    "-vmm -nnk -D": _Form("vmm", True, True, True),
    "-nn": _Form("n", True, False, False),
    "-nn -D": _Form("n", True, True, False),
    "-nk": _Form("n", False, False, True),
    "-nk -D": _Form("n", False, True, True),
    "-nnk": _Form("n", True, False, True),
}
LSPCI_FORMATS = tuple(_FORMS)

# lspci's name buffers: 128 bytes for every field, 256 for the subsystem of a terse line
_BUF, _SUBSYS_BUF = 128, 256


def _fit(text: str, size: int = _BUF) -> str:
    """``text`` as libpci's snprintf leaves it in a ``size``-byte buffer: cut, the last
    three bytes kept turned into dots (a cut through a UTF-8 character reads as U+FFFD)."""
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) < size:
        return text
    return (raw[: size - 4] + b"...").decode("utf-8", "replace")


def _escaped(text: str) -> str:
    """A ``-mm`` field: quoted, with ``"`` and ``\\`` escaped as lspci escapes them."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Names:
    """Names per row as libpci formats them: the table's own text, else the database, else
    libpci's placeholder for an unknown name."""

    def __init__(self, table: Any, db: Any) -> None:
        self.t = table
        self.db = db

    def _raw(self, col: str, i: int, lookup) -> str | None:
        arr = getattr(self.t, col)
        name = None if arr is None else arr[i]
        if name is None and self.db is not None:
            name = lookup()
        return name

    def _class(self, i: int, code: int) -> str | None:
        base, sub = code >> 16, (code >> 8) & 0xFF
        # the subclass, else the class: lspci then shows the class number all the same
        return self._raw("class_text", i, lambda: self.db.subclass_name(base, sub) or self.db.class_name(base))

    def _vendor(self, i: int, v: int) -> str | None:
        return self._raw("vendor_text", i, lambda: self.db.vendor_name(v))

    def _device(self, i: int, v: int, d: int) -> str | None:
        return self._raw("device_text", i, lambda: self.db.device_name(v, d))

    def _subvendor(self, i: int, sv: int) -> str | None:
        return self._raw("subvendor_text", i, lambda: self.db.vendor_name(sv))

    def _subdevice(self, i: int, v: int, d: int, sv: int, sd: int) -> str | None:
        return self._raw("subdevice_text", i, lambda: self.db.subsystem_name(v, d, sv, sd))

    @staticmethod
    def _one(name: str | None, num: str, unknown: str, numbers_only: bool) -> str:
        if numbers_only:
            return num
        return _fit(f"{unknown if name is None else name} [{num}]")

    def cls(self, i: int, code: int, numbers_only: bool) -> str:
        return self._one(None if numbers_only else self._class(i, code), f"{code >> 8:04x}", "Class",
                         numbers_only)

    def vendor(self, i: int, v: int, numbers_only: bool) -> str:
        return self._one(None if numbers_only else self._vendor(i, v), f"{v:04x}", "Vendor", numbers_only)

    def device(self, i: int, v: int, d: int, numbers_only: bool) -> str:
        return self._one(None if numbers_only else self._device(i, v, d), f"{d:04x}", "Device", numbers_only)

    def subvendor(self, i: int, sv: int, numbers_only: bool) -> str:
        return self._one(None if numbers_only else self._subvendor(i, sv), f"{sv:04x}", "Unknown vendor",
                         numbers_only)

    def subdevice(self, i: int, v: int, d: int, sv: int, sd: int, numbers_only: bool) -> str:
        return self._one(None if numbers_only else self._subdevice(i, v, d, sv, sd), f"{sd:04x}", "Device",
                         numbers_only)

    @staticmethod
    def _pair(vname: str | None, dname: str | None, num: str, size: int) -> str:
        """libpci's vendor-and-device name with numbers (``format_name_pair``)."""
        if vname is not None and dname is not None:
            return _fit(f"{vname} {dname} [{num}]", size)
        if vname is None:
            return _fit(f"Device [{num}]", size)
        return _fit(f"{vname} Device [{num}]", size)

    def vendor_device(self, i: int, v: int, d: int) -> str:
        return self._pair(self._vendor(i, v), self._device(i, v, d), f"{v:04x}:{d:04x}", _BUF)

    def subsystem(self, i: int, v: int, d: int, sv: int, sd: int) -> str:
        return self._pair(self._subvendor(i, sv), self._subdevice(i, v, d, sv, sd), f"{sv:04x}:{sd:04x}",
                          _SUBSYS_BUF)


def write_lspci(table: Any, fmt: str = "-nnmm -D", *, db: DeviceNames | None = None, invalid: str = "raise") -> str:
    """The DeviceTable ``table`` as ``lspci`` would print it in ``fmt`` (one of ``LSPCI_FORMATS``).

    Names come from the text columns, else from ``db`` (a ``PciDatabase``),
    else libpci's placeholders.  Only what lspci prints in ``fmt`` survives:
    IDs, class (with prog-if in ``-mm`` and ``-vmm``), revision (omitted when
    0, so -1 reads back as 0), subsystem (not in plain ``-n``/``-nn``; never
    for a subsystem vendor of 0000 or ffff), NUMA node and IOMMU group in
    ``-vmm``, the driver with ``k``.  lspci's ``Module:`` / ``Kernel modules:``
    lines (from the running kernel's module aliases) are not written.  Rows
    that are flagged or have no address cannot be written: ``invalid="raise"``
    (InputError) or ``"skip"``.
    """
    form = _FORMS.get(fmt)
    if form is None:
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
    # lspci's terse lines show every domain as soon as one is non-zero; its -mm forms,
    # each non-zero one
    any_domain = bool(len(table)) and int(table.domain.max()) != 0
    numbers = not form.names
    lines: list[str] = []
    for i in range(len(table)):
        dom = c["domain"][i]
        slot = f"{c['bus'][i]:02x}:{c['slot'][i]:02x}.{c['function'][i]:x}"
        if form.domains or (any_domain if form.style == "n" else dom):
            slot = f"{dom:04x}:{slot}"
        v, d, code, rev = c["vendor"][i], c["device"][i], c["class_code"][i], c["revision"][i]
        sv, sd = c["subvendor"][i], c["subdevice"][i]
        has_sub = c["has_subsystem"][i] and sv not in (0, 0xFFFF)
        if form.style == "n":
            if form.names:
                line = f"{slot} {names.cls(i, code, False)}: {names.vendor_device(i, v, d)}"
            else:
                line = f"{slot} {code >> 8:04x}: {v:04x}:{d:04x}"
            if rev > 0:
                line += f" (rev {rev:02x})"
            lines.append(line)
            if form.kernel:
                if has_sub:
                    sub = names.subsystem(i, v, d, sv, sd) if form.names else f"{sv:04x}:{sd:04x}"
                    lines.append(f"\tSubsystem: {sub}")
                if driver[i] is not None:
                    lines.append(f"\tKernel driver in use: {driver[i]}")
        elif form.style == "mm":
            fields = [names.cls(i, code, numbers), names.vendor(i, v, numbers), names.device(i, v, d, numbers)]
            line = slot + "".join(" " + _escaped(f) for f in fields)
            if rev > 0:
                line += f" -r{rev:02x}"
            line += f" -p{code & 0xFF:02x}"
            if has_sub:
                line += (" " + _escaped(names.subvendor(i, sv, numbers))
                         + " " + _escaped(names.subdevice(i, v, d, sv, sd, numbers)))
            else:
                line += ' "" ""'
            lines.append(line)
        else:  # -vmm -nn[k]
            lines.append(f"Slot:\t{slot}")
            lines.append(f"Class:\t{names.cls(i, code, numbers)}")
            lines.append(f"Vendor:\t{names.vendor(i, v, numbers)}")
            lines.append(f"Device:\t{names.device(i, v, d, numbers)}")
            if has_sub:
                lines.append(f"SVendor:\t{names.subvendor(i, sv, numbers)}")
                lines.append(f"SDevice:\t{names.subdevice(i, v, d, sv, sd, numbers)}")
            if rev > 0:
                lines.append(f"Rev:\t{rev:02x}")
            lines.append(f"ProgIf:\t{code & 0xFF:02x}")
            if form.kernel and driver[i] is not None:
                lines.append(f"Driver:\t{driver[i]}")
            if c["numa_node"][i] >= 0:
                lines.append(f"NUMANode:\t{c['numa_node'][i]}")
            if c["iommu_group"][i] >= 0:
                lines.append(f"IOMMUGroup:\t{c['iommu_group'][i]}")
            lines.append("")
    return "".join(line + "\n" for line in lines)
