"""The one device record shape: what ``scan``, ``plan`` and ``lookup`` print for a PCI function.

Field names follow ``lspci -vmm``'s vocabulary (``Slot``, ``Class``, ``Vendor``,
``Device``, ``SVendor``, ``SDevice``, ``Rev``, ``ProgIf``, ``Driver``), lower-cased.
IDs are always hex strings of fixed width (``vendor``/``device``/``svendor``/``sdevice``
and ``class`` (class and subclass) 4 digits, ``progif`` and ``rev`` 2), never numbers,
and every name is a separate ``*_name`` field (``None`` where the database has none, or
when names were not asked for).  ``sdevice_name`` is the subsystem's name, as lspci
prints it under ``SDevice``.

>>> from gpuclass.db import default_database
>>> rec = device_record(0x10DE, 0x1E30, 0x030000, subvendor=0x10DE, subdevice=0x12BA,
...                     revision=0xA1, slot="0000:65:00.0", db=default_database())
>>> rec["vendor"], rec["device"], rec["class"], rec["sdevice_name"]
('10de', '1e30', '0300', 'Quadro RTX 6000')
>>> list(rec) == list(DEVICE_FIELDS)
True
>>> id_record([0x10DE, 0x27B0], default_database())
{'vendor': '10de', 'vendor_name': 'NVIDIA Corporation', 'device': '27b0', 'device_name': 'AD104GL [RTX 4000 SFF Ada Generation]'}
"""

from __future__ import annotations

TYPE_CHECKING = False

from .constants import flag_names

if TYPE_CHECKING:
    from typing import Any, Protocol

    class DeviceNames(Protocol):
        """What names devices: a :class:`~gpuclass.PciDatabase`, or :data:`gpuclass.pcinames.NO_NAMES`."""

        def vendor_name(self, vendor: int, /) -> str | None: ...
        def device_name(self, vendor: int, device: int, /) -> str | None: ...
        def subvendor_name(self, subvendor: int, /) -> str | None: ...
        def subsystem_name(self, vendor: int, device: int, subvendor: int, subdevice: int, /) -> str | None: ...
        def class_name(self, base: int, subclass: int | None = None, /) -> str | None: ...


__all__ = ["DEVICE_FIELDS", "ID_FIELDS", "SOURCE_FIELDS", "RECORD_COLUMNS", "device_record", "id_record",
           "table_records", "column_records", "hex4", "hex2"]

# The shared record, in this order.
DEVICE_FIELDS = ("slot", "class", "class_name", "progif", "vendor", "vendor_name", "device",
                 "device_name", "svendor", "svendor_name", "sdevice", "sdevice_name", "rev", "driver")
# What an ID lookup has of it (the parts asked about).
ID_FIELDS = ("vendor", "vendor_name", "device", "device_name", "svendor", "svendor_name",
             "sdevice", "sdevice_name")
# What a hardware source adds per device (DeviceTable.to_records).
SOURCE_FIELDS = ("numa_node", "iommu_group", "sriov_totalvfs", "sriov_numvfs", "flags", "problem")


def hex4(value: int | None) -> str | None:
    """A 16-bit ID as JSON carries it: 4 lowercase hex digits (None stays None)."""
    return None if value is None else f"{value:04x}"


def hex2(value: int | None) -> str | None:
    """An 8-bit value (revision, prog-if) as 2 hex digits; None (or negative: absent) is None."""
    return None if value is None or value < 0 else f"{value:02x}"


def _name(db: DeviceNames | None, method: str, *args: int) -> str | None:
    return None if db is None else getattr(db, method)(*args)


def device_record(vendor: int, device: int, class_code: int, *, subvendor: int | None = None,
                  subdevice: int | None = None, revision: int | None = None,
                  driver: str | None = None, slot: str | None = None, db: DeviceNames | None = None) -> dict:
    """One PCI function as the shared record (``class_code`` is the 24-bit class with prog-if).

    ``db`` (a :class:`~gpuclass.db.PciDatabase`) fills the ``*_name`` fields; without one
    they are ``None``.
    """
    cls, sub, progif = class_code >> 16, (class_code >> 8) & 0xFF, class_code & 0xFF
    has_sub = subvendor is not None and subdevice is not None
    return {
        "slot": slot,
        "class": f"{cls:02x}{sub:02x}",
        "class_name": _name(db, "class_name", cls, sub),
        "progif": hex2(progif),
        "vendor": hex4(vendor),
        "vendor_name": _name(db, "vendor_name", vendor),
        "device": hex4(device),
        "device_name": _name(db, "device_name", vendor, device),
        "svendor": hex4(subvendor) if has_sub else None,
        "svendor_name": _name(db, "vendor_name", subvendor) if has_sub else None,
        "sdevice": hex4(subdevice) if has_sub else None,
        "sdevice_name": _name(db, "subsystem_name", vendor, device, subvendor, subdevice)
        if has_sub else None,
        "rev": hex2(revision),
        "driver": driver,
    }


def id_record(ids: list[int], db: DeviceNames | None = None) -> dict:
    """The record of an ID lookup: ``[vendor]``, ``[vendor, device]`` or all four IDs;
    only the fields of the parts given."""
    vendor = ids[0]
    out: dict[str, Any] = {"vendor": hex4(vendor), "vendor_name": _name(db, "vendor_name", vendor)}
    if len(ids) >= 2:
        out["device"] = hex4(ids[1])
        out["device_name"] = _name(db, "device_name", vendor, ids[1])
    if len(ids) == 4:
        out["svendor"] = hex4(ids[2])
        out["svendor_name"] = _name(db, "vendor_name", ids[2])
        out["sdevice"] = hex4(ids[3])
        out["sdevice_name"] = _name(db, "subsystem_name", *ids)
    return out


# The numeric columns a row's record reads (DeviceTable attributes, or lists of ints).
RECORD_COLUMNS = ("vendor", "device", "subvendor", "subdevice", "has_subsystem", "class_code", "revision",
                  "numa_node", "iommu_group", "sriov_totalvfs", "sriov_numvfs", "flags")


def table_records(table: Any, db: DeviceNames | None = None) -> list[dict]:
    """One record per row of a DeviceTable: the shared fields, then what the source read
    (NUMA node, IOMMU group, SR-IOV counts, flags, problem).  A row the source flagged as
    unreadable keeps its IDs but gets no names."""
    cols = {name: getattr(table, name).tolist() for name in RECORD_COLUMNS}
    return column_records(cols, list(table.driver), list(table.problems), table.addresses(), db)


def column_records(cols: dict[str, list[int]], driver: list[str | None], problems: list[str | None],
                   addrs: list[str], db: DeviceNames | None = None) -> list[dict]:
    """:func:`table_records` of columns given as lists (:data:`RECORD_COLUMNS` as ints, the
    drivers, the problems, the addresses as ``DeviceTable.addresses`` writes them): what a
    scan of a machine's few devices builds without numpy."""
    out = []
    named: dict = {}  # a large machine repeats a few models many times: look names up once each
    for i in range(len(addrs)):
        problem = problems[i]
        has_sub = cols["has_subsystem"][i]
        ids = (cols["vendor"][i], cols["device"][i], cols["class_code"][i] >> 8,
               cols["subvendor"][i] if has_sub else None, cols["subdevice"][i] if has_sub else None)
        rec = device_record(
            ids[0], ids[1], cols["class_code"][i], subvendor=ids[3], subdevice=ids[4],
            revision=cols["revision"][i], driver=driver[i],
            slot=addrs[i] if addrs[i] != "-" else None)
        if db is not None and problem is None:
            names = named.get(ids)
            if names is None:
                names = named[ids] = {k: v for k, v in device_record(
                    ids[0], ids[1], cols["class_code"][i], subvendor=ids[3], subdevice=ids[4],
                    db=db).items() if k.endswith("_name")}
            rec.update(names)
        for name in ("numa_node", "iommu_group", "sriov_totalvfs", "sriov_numvfs"):
            rec[name] = None if cols[name][i] < 0 else cols[name][i]
        rec["flags"] = flag_names(cols["flags"][i])
        rec["problem"] = problem
        out.append(rec)
    return out
