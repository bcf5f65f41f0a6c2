"""The DeviceTable: every hardware source's devices as one struct of numpy arrays.

sysfs scans, ``lspci`` dumps and modalias strings all end up here, so the
matcher never cares where a device came from.  One row per device; a device a
source could not read properly is a *flagged* row (``FLAG_INVALID`` and a
``problems`` text), never a dropped one.

Absent values are never 0 (``0000`` and ``ffff`` are real IDs): the subsystem
has ``has_subsystem``, the small integers use -1, and a row without a PCI
address (a bare modalias, an unparsable sysfs entry) has
``function == NO_ADDRESS``.

>>> t = DeviceTable.from_columns(
...     domain=[0, 0], bus=[1, 1], slot=[0, 0], function=[0, 1],
...     vendor=[0x10DE, 0x10DE], device=[0x27B0, 0x22BC], class_code=[0x030000, 0x040300])
>>> t.addresses()
['0000:01:00.0', '0000:01:00.1']
>>> t.gpu_mask().tolist(), t.companion_mask().tolist()
([True, False], [False, True])
>>> print(t.to_lspci_text("-n"), end="")
01:00.0 0300: 10de:27b0
01:00.1 0403: 10de:22bc
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .constants import FLAG_BOOT_VGA, FLAG_INVALID, FLAG_PF, FLAG_VF, GPU_CLASSES, NO_ADDRESS, flag_names
from .errors import InputError
from .ids import address_text

if TYPE_CHECKING:
    from .records import DeviceNames

__all__ = [
    "DeviceTable",
    "FLAG_VF",
    "FLAG_PF",
    "FLAG_BOOT_VGA",
    "FLAG_INVALID",
    "NO_ADDRESS",
    "NUMERIC_COLUMNS",
    "OBJECT_COLUMNS",
    "TEXT_COLUMNS",
    "flag_names",
]

# NO_ADDRESS (constants): a PCI function number is 0..7, so 0xFF can never be a real
# one: it marks rows that carry no address at all rather than inventing 0000:00:00.0.

# column -> (dtype, default for rows a source does not describe)
NUMERIC_COLUMNS: dict[str, tuple[np.dtype, int | bool]] = {
    "domain": (np.dtype(np.uint32), 0),
    "bus": (np.dtype(np.uint8), 0),
    "slot": (np.dtype(np.uint8), 0),
    "function": (np.dtype(np.uint8), NO_ADDRESS),
    "vendor": (np.dtype(np.uint16), 0),
    "device": (np.dtype(np.uint16), 0),
    "subvendor": (np.dtype(np.uint16), 0),
    "subdevice": (np.dtype(np.uint16), 0),
    "has_subsystem": (np.dtype(np.bool_), False),
    "class_code": (np.dtype(np.uint32), 0),
    "revision": (np.dtype(np.int16), -1),
    "flags": (np.dtype(np.uint32), 0),
    "numa_node": (np.dtype(np.int32), -1),
    "iommu_group": (np.dtype(np.int32), -1),
    "sriov_totalvfs": (np.dtype(np.int32), -1),
    "sriov_numvfs": (np.dtype(np.int32), -1),
}
# columns a source must give (everything else has a default)
_REQUIRED = ("vendor", "device", "class_code")
# the ranges a value must fit, beyond what the dtype allows
_RANGES = {"class_code": (0, 0xFFFFFF), "revision": (-1, 0xFF)}
OBJECT_COLUMNS = ("driver", "problems")
# names as a text source printed them: kept for display, never used to classify
TEXT_COLUMNS = ("class_text", "vendor_text", "device_text", "subvendor_text", "subdevice_text")

def _as_column(name: str, values: Any, n: int | None) -> np.ndarray:
    dtype = NUMERIC_COLUMNS[name][0]
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(f"column {name!r} must be one-dimensional, got shape {arr.shape}")
    if n is not None and len(arr) != n:
        raise InputError(f"column {name!r} has length {len(arr)}, expected {n}")
    if arr.dtype == dtype:
        out = arr
    elif dtype == np.bool_:
        if arr.dtype.kind not in "biu" and len(arr):
            raise InputError(f"column {name!r} must be boolean, got {arr.dtype}")
        out = arr.astype(np.bool_)
    else:
        if arr.dtype.kind not in "biu" and len(arr):
            raise InputError(f"column {name!r} must be integer, got {arr.dtype}")
        info = np.iinfo(dtype)
        lo, hi = _RANGES.get(name, (info.min, info.max))
        if len(arr) and (int(arr.min()) < lo or int(arr.max()) > hi):
            raise InputError(f"column {name!r} has values outside {lo}..{hi}")
        out = arr.astype(dtype)
    if name in _RANGES and out is arr and len(arr):
        lo, hi = _RANGES[name]
        if int(arr.min()) < lo or int(arr.max()) > hi:
            raise InputError(f"column {name!r} has values outside {lo}..{hi}")
    return out


def _as_objects(name: str, values: Any, n: int) -> np.ndarray:
    if isinstance(values, np.ndarray) and values.dtype == object and values.ndim == 1:
        out = values
    else:
        out = np.empty(n, dtype=object)
        seq = list(values)
        if len(seq) == n:
            out[:] = seq
        else:
            out = seq  # fall through to the length error below
    if len(out) != n:
        raise InputError(f"column {name!r} has length {len(out)}, expected {n}")
    # one C-level pass over the types instead of a Python loop over the values
    odd = set(map(type, out)) - {str, type(None)}
    if odd:
        raise InputError(f"column {name!r} holds {sorted(t.__name__ for t in odd)[0]}, expected str or None")
    return out


class DeviceTable:
    """Devices as parallel numpy arrays (see the module docstring for the columns).

    Build one with :meth:`from_columns`, :meth:`empty` or :meth:`concat`; the
    sources (``gpuclass.sysfs``, ``gpuclass.lspci``, ``gpuclass.modalias``)
    return them.  Treat the arrays as read-only.

    >>> DeviceTable.empty("nothing").addresses()
    []
    """

    __slots__ = (*NUMERIC_COLUMNS, *OBJECT_COLUMNS, *TEXT_COLUMNS, "source")

    domain: np.ndarray
    bus: np.ndarray
    slot: np.ndarray
    function: np.ndarray
    vendor: np.ndarray
    device: np.ndarray
    subvendor: np.ndarray
    subdevice: np.ndarray
    has_subsystem: np.ndarray
    class_code: np.ndarray
    revision: np.ndarray
    flags: np.ndarray
    numa_node: np.ndarray
    iommu_group: np.ndarray
    sriov_totalvfs: np.ndarray
    sriov_numvfs: np.ndarray
    driver: np.ndarray
    problems: np.ndarray
    class_text: np.ndarray | None
    vendor_text: np.ndarray | None
    device_text: np.ndarray | None
    subvendor_text: np.ndarray | None
    subdevice_text: np.ndarray | None
    source: str

    # -- construction -------------------------------------------------------

    @classmethod
    def from_columns(cls, source: str = "columns", **columns: Any) -> DeviceTable:
        """A table from column sequences; unnamed columns take their defaults.

        ``vendor``, ``device`` and ``class_code`` are required; values are
        range-checked into the column dtypes (:class:`InputError` otherwise).
        A row with ``problems`` set is flagged ``FLAG_INVALID`` automatically.

        >>> t = DeviceTable.from_columns(vendor=[0x10DE], device=[0x1B80], class_code=[0x030000])
        >>> t.addresses(), t.revision.tolist()
        (['-'], [-1])
        """
        unknown = set(columns) - set(NUMERIC_COLUMNS) - set(OBJECT_COLUMNS) - set(TEXT_COLUMNS)
        if unknown:
            raise InputError(f"unknown DeviceTable columns: {sorted(unknown)}")
        missing = [c for c in _REQUIRED if c not in columns]
        if missing:
            raise InputError(f"missing DeviceTable columns: {missing}")
        n = len(np.asarray(columns["vendor"]))
        self = object.__new__(cls)
        self.source = str(source)
        for name, (dtype, default) in NUMERIC_COLUMNS.items():
            if name in columns and columns[name] is not None:
                arr = _as_column(name, columns[name], n)
            else:
                arr = np.full(n, default, dtype=dtype)
            object.__setattr__(self, name, arr)
        for name in OBJECT_COLUMNS:
            value = columns.get(name)
            arr = np.full(n, None, dtype=object) if value is None else _as_objects(name, value, n)
            object.__setattr__(self, name, arr)
        for name in TEXT_COLUMNS:
            value = columns.get(name)
            object.__setattr__(self, name, None if value is None else _as_objects(name, value, n))
        flagged = np.asarray(self.problems != None, dtype=bool)  # noqa: E711 - elementwise
        if flagged.any():
            self.flags = self.flags | np.where(flagged, FLAG_INVALID, 0).astype(np.uint32)
        return self

    @classmethod
    def empty(cls, source: str = "empty") -> DeviceTable:
        """A table with no rows."""
        return cls.from_columns(source, vendor=np.empty(0, np.uint16),
                                device=np.empty(0, np.uint16), class_code=np.empty(0, np.uint32))

    @classmethod
    def concat(cls, tables: Sequence[DeviceTable], source: str | None = None) -> DeviceTable:
        """Rows of several tables, in order; text columns stay where any table has them.

        >>> a = DeviceTable.from_columns(vendor=[1], device=[2], class_code=[3])
        >>> len(DeviceTable.concat([a, a, DeviceTable.empty()]))
        2
        """
        tables = list(tables)
        if not tables:
            return cls.empty(source or "empty")
        if source is None:
            source = "+".join(dict.fromkeys(t.source for t in tables))
        cols: dict[str, Any] = {}
        for name in (*NUMERIC_COLUMNS, *OBJECT_COLUMNS):
            cols[name] = np.concatenate([getattr(t, name) for t in tables])
        for name in TEXT_COLUMNS:
            if any(getattr(t, name) is not None for t in tables):
                parts = [getattr(t, name) if getattr(t, name) is not None
                         else np.full(len(t), None, dtype=object) for t in tables]
                cols[name] = np.concatenate(parts)
        return cls.from_columns(source, **cols)

    def take(self, index: Any) -> DeviceTable:
        """The rows at ``index`` (integer positions or a boolean mask).

        >>> t = DeviceTable.from_columns(vendor=[1, 2], device=[3, 4], class_code=[0, 0])
        >>> t.take([1]).vendor.tolist()
        [2]
        """
        idx = index if isinstance(index, slice) else np.asarray(index)
        if isinstance(idx, np.ndarray) and idx.dtype == bool and len(idx) != len(self):
            raise InputError(f"mask has length {len(idx)}, table has {len(self)} rows")
        cols = {name: getattr(self, name)[idx] for name in (*NUMERIC_COLUMNS, *OBJECT_COLUMNS)}
        for name in TEXT_COLUMNS:
            col = getattr(self, name)
            if col is not None:
                cols[name] = col[idx]
        return type(self).from_columns(self.source, **cols)

    def sorted(self) -> DeviceTable:
        """Rows sorted by PCI address (rows without an address last, in their order)."""
        return self.take(self.address_order())

    def address_order(self) -> np.ndarray:
        """The permutation that sorts rows by (domain, bus, slot, function), stably."""
        no_addr = self.function == NO_ADDRESS
        return np.lexsort((self.function, self.slot, self.bus, self.domain, no_addr))

    # -- queries ------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.vendor)

    def __repr__(self) -> str:
        return (f"<DeviceTable {self.source!r}: {len(self)} devices, "
                f"{int(self.gpu_mask().sum())} GPU functions, {int(self.invalid_mask().sum())} flagged>")

    def has_address_mask(self) -> np.ndarray:
        """Rows that carry a PCI address."""
        return self.function != NO_ADDRESS

    def invalid_mask(self) -> np.ndarray:
        """Flagged rows: a mandatory attribute was missing or malformed (see ``problems``)."""
        return (self.flags & FLAG_INVALID) != 0

    def vf_mask(self) -> np.ndarray:
        """SR-IOV virtual functions."""
        return (self.flags & FLAG_VF) != 0

    def gpu_mask(self, classes: Any = None) -> np.ndarray:
        """GPU functions: of one of ``classes`` (class and subclass; default the platform's,
        0x0300 VGA and 0x0302 3D; a policy's are ``compile_policy(p).gpu_classes``), and
        not flagged."""
        base = self.class_code >> 8
        return np.isin(base, GPU_CLASSES if classes is None else list(classes)) & ~self.invalid_mask()

    def companion_mask(self, classes: Any = None) -> np.ndarray:
        """The other functions of a GPU card: non-GPU, non-flagged functions sharing
        domain, bus and slot with a GPU function (HDMI audio, USB, UCSI, ...); ``classes``
        as for :meth:`gpu_mask`."""
        gpu = self.gpu_mask(classes)
        addressed = self.has_address_mask()
        key = self._slot_keys()
        gpu_keys = np.unique(key[gpu & addressed])
        return ~gpu & addressed & ~self.invalid_mask() & np.isin(key, gpu_keys)

    def _slot_keys(self) -> np.ndarray:
        return ((self.domain.astype(np.uint64) << np.uint64(16))
                | (self.bus.astype(np.uint64) << np.uint64(8)) | self.slot.astype(np.uint64))

    def addresses(self) -> list[str]:
        """``DDDD:BB:SS.F`` per row (domain at least 4 hex digits); ``-`` without one."""
        return [address_text(d, b, s, f) for d, b, s, f in zip(self.domain.tolist(), self.bus.tolist(),
                                                                self.slot.tolist(), self.function.tolist())]

    def equals(self, other: DeviceTable, *, text: bool = False) -> bool:
        """Same rows in the same order (text names too when ``text``); ``source`` is ignored."""
        if not isinstance(other, DeviceTable) or len(self) != len(other):
            return False
        for name in NUMERIC_COLUMNS:
            if not np.array_equal(getattr(self, name), getattr(other, name)):
                return False
        names: Iterable[str] = (*OBJECT_COLUMNS, *TEXT_COLUMNS) if text else OBJECT_COLUMNS
        for name in names:
            a, b = getattr(self, name), getattr(other, name)
            if a is None or b is None:
                if (a is None) != (b is None):
                    return False
                continue
            if list(a) != list(b):
                return False
        return True

    def diff(self, other: DeviceTable) -> list[str]:
        """Human-readable differences (numeric and object columns), for test messages."""
        out = []
        if len(self) != len(other):
            return [f"length {len(self)} != {len(other)}"]
        for name in (*NUMERIC_COLUMNS, *OBJECT_COLUMNS):
            a, b = getattr(self, name), getattr(other, name)
            for i in np.flatnonzero(np.asarray(a != b)):
                out.append(f"row {i} {name}: {a[i]!r} != {b[i]!r}")
        return out

    def to_records(self, db: DeviceNames | None = None) -> list[dict[str, Any]]:
        """One plain dict per row (for JSON), in the shared record shape of
        :mod:`gpuclass.records` (names from ``db`` when given); absent values are ``None``."""
        from .records import table_records

        return table_records(self, db)

    # -- lspci text -----------------------------------------------------------

    def to_lspci_text(self, fmt: str = "-nnmm -D", *, db: DeviceNames | None = None, invalid: str = "raise") -> str:
        """The table as ``lspci`` would print it: see :func:`gpuclass.sources.lspci.write_lspci`."""
        from .sources.lspci.write import write_lspci

        return write_lspci(self, fmt, db=db, invalid=invalid)
