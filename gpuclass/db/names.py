"""libpci's scalar name rules, written once, over any table lookup: no numpy.

:class:`NameRules` holds ``pci_lookup_name``'s rules (with numbers turned off) on top of
one primitive, ``_find(table, key)``: a table's name for a key, or None.
:class:`~gpuclass.db.PciDatabase` finds keys through the core's index over its arrays;
:class:`~gpuclass.db.mapped.MappedNames` by bisection over a trusted cache file mapped
without numpy (what ``gpuclass scan`` starts with).  The rules:

- subsystem: the device-specific entry (only when vendor and device are both
  non-zero), then the generic ``S`` block entry, then the device's own name
  when the subsystem IDs equal the device IDs;
- class: the subclass name, else the class name followed by the class number
  (``Display controller [037f]``: libpci adds the number even with numbers off);
- prog-if: the exact entry, else for IDE controllers (class 0x0101, prog-if
  without bits 0x70) the synthetic "Master SecP SecO PriP PriO" description.

>>> class _Tiny(NameRules):
...     def _find(self, table, key):
...         return {("vendor", 0x10DE): "NVIDIA Corporation", ("class", 0x03): "Display controller"}.get((table, key))
>>> _Tiny().vendor_name(0x10DE), _Tiny().class_name(0x03, 0x7F)
('NVIDIA Corporation', 'Display controller [037f]')
"""

from __future__ import annotations

from ..errors import InputError

__all__ = ["NameRules", "ide_progif", "class_fallback", "id16", "id8"]

_IDE_BITS = ((0x80, "Master"), (0x08, "SecP"), (0x04, "SecO"), (0x02, "PriP"), (0x01, "PriO"))


def ide_progif(base: int, subclass: int, progif: int) -> str | None:
    """libpci's description of an IDE controller's prog-if by its bits, where it gives one.

    >>> ide_progif(0x01, 0x01, 0x8A), ide_progif(0x03, 0x00, 0x8A)
    ('Master SecP PriP', None)
    """
    if base != 0x01 or subclass != 0x01 or progif & 0x70:
        return None
    return " ".join(word for bit, word in _IDE_BITS if progif & bit)


def class_fallback(class_name: str, base: int, subclass: int) -> str:
    """What libpci answers for a known class with an unknown subclass.

    >>> class_fallback("Display controller", 0x03, 0x7F)
    'Display controller [037f]'
    """
    return f"{class_name} [{base:02x}{subclass:02x}]"


def _int_id(value: int, name: str, bits: int) -> int:
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected an integer ID, got {value!r}") from None
    if not 0 <= v < (1 << bits):
        raise InputError(f"{name}: {v:#x} is outside 0..{(1 << bits) - 1:#x}")
    return v


def id16(value: int, name: str) -> int:
    """``value`` as a 16-bit ID (:class:`InputError` naming ``name`` otherwise)."""
    return _int_id(value, name, 16)


def id8(value: int, name: str) -> int:
    """``value`` as an 8-bit ID (class, subclass, prog-if)."""
    return _int_id(value, name, 8)


class NameRules:
    """The scalar lookups (libpci's rules) over ``_find(table, key)``; tables and keys are
    those of :data:`gpuclass._native.TABLES` (``vendor``: the vendor; ``device``: vendor
    << 16 | device; ``subsys``: vendor, device, subvendor, subdevice in 16 bits each;
    ``gensub``: subvendor << 16 | subdevice; ``class``, ``subclass``, ``progif``: the
    class bytes)."""

    __slots__ = ()

    def _find(self, table: str, key: int) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def vendor_name(self, vendor: int) -> str | None:
        """The vendor's name, or None.

        >>> from gpuclass.db import default_database
        >>> default_database().vendor_name(0x10DE)
        'NVIDIA Corporation'
        """
        return self._find("vendor", id16(vendor, "vendor"))

    def device_name(self, vendor: int, device: int) -> str | None:
        """The device's name, or None."""
        return self._find("device", (id16(vendor, "vendor") << 16) | id16(device, "device"))

    def subvendor_name(self, subvendor: int) -> str | None:
        """The subsystem vendor's name: a vendor lookup, as in libpci."""
        return self.vendor_name(subvendor)

    def subsystem_name(self, vendor: int, device: int, subvendor: int, subdevice: int) -> str | None:
        """The subsystem's name with libpci's fallbacks (see the module docstring)."""
        v, d = id16(vendor, "vendor"), id16(device, "device")
        sv, sd = id16(subvendor, "subvendor"), id16(subdevice, "subdevice")
        name = None
        if v > 0 and d > 0:
            name = self._find("subsys", (v << 48) | (d << 32) | (sv << 16) | sd)
        if name is None:
            name = self._find("gensub", (sv << 16) | sd)
        if name is None and v == sv and d == sd:
            name = self._find("device", (v << 16) | d)
        return name

    def class_name(self, base: int, subclass: int | None = None) -> str | None:
        """The subclass name, else (as libpci) the class name with the class number; or None.

        With ``subclass`` None, the base class name alone.

        >>> from gpuclass.db import default_database
        >>> db = default_database()
        >>> db.class_name(0x03, 0x02), db.class_name(0x03, 0x7F), db.class_name(0x03)
        ('3D controller', 'Display controller [037f]', 'Display controller')
        """
        b = id8(base, "class")
        if subclass is None:
            return self._find("class", b)
        s = id8(subclass, "subclass")
        name = self._find("subclass", (b << 8) | s)
        if name is not None:
            return name
        # libpci answers a known class with an unknown subclass by the class and its
        # number, even with numbers turned off: "Display controller [037f]"
        name = self._find("class", b)
        return None if name is None else class_fallback(name, b, s)

    def subclass_name(self, base: int, subclass: int) -> str | None:
        """The subclass name only (no fallback), or None."""
        return self._find("subclass", (id8(base, "class") << 8) | id8(subclass, "subclass"))

    def progif_name(self, base: int, subclass: int, progif: int) -> str | None:
        """The programming interface's name, or None (IDE prog-ifs are described by bits)."""
        b, s, p = id8(base, "class"), id8(subclass, "subclass"), id8(progif, "prog-if")
        name = self._find("progif", (b << 16) | (s << 8) | p)
        return ide_progif(b, s, p) if name is None else name
