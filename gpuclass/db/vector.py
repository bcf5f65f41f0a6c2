"""Array lookups of :class:`~gpuclass.db.PciDatabase`: rows of each table, and names with
libpci's fallbacks, for whole columns at a time.

Two levels.  ``*_index`` methods give the row of each key in one table (int32,
-1 when absent), for callers that keep their own per-row data; ``names(table,
rows)`` turns rows into names.  ``*_names`` methods give what the scalar lookups
give, element by element, fallbacks included (so no caller rebuilds a fallback):

- ``subsystem_names``: the device-specific entry (only where vendor and device
  are both non-zero), else the generic ``S`` entry, else the device's own name
  where the subsystem IDs equal the device IDs;
- ``class_names``: the subclass name, else the class name followed by the
  class number in brackets (``Display controller [037f]``), as libpci answers
  even with numbers turned off;
- ``progif_names``: the exact entry, else the IDE bits description.

Each distinct name is decoded once, however often it repeats.

>>> from gpuclass.db import default_database
>>> db = default_database()
>>> db.class_names([0x030200, 0x037F00, 0x420000])
['3D controller', 'Display controller [037f]', None]
>>> db.subsystem_names([0x10DE], [0x1E30], [0x10DE], [0x12BA])
['Quadro RTX 6000']
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import numpy.typing as npt

from .._native import TABLES, as_id_array
from ..errors import InputError
from .names import class_fallback, ide_progif

__all__ = ["VectorLookups", "ide_progif", "class_fallback"]

def _pair(a, b, na: str, nb: str):
    x, y = as_id_array(a, na), as_id_array(b, nb)
    if len(x) != len(y):
        raise InputError(f"{nb}: length {len(y)} differs from {na} length {len(x)}")
    return x, y


class VectorLookups:
    """The array half of :class:`~gpuclass.db.PciDatabase` (it provides ``_tables`` and ``_name``)."""

    _tables: dict[str, Any]

    def _name(self, i: int) -> str:  # pragma: no cover - provided by PciDatabase
        raise NotImplementedError

    # -- rows of one table -------------------------------------------------------------

    def vendor_index(self, vendor: npt.ArrayLike) -> np.ndarray:
        """Row of each vendor in the vendor table (int32, -1 unknown)."""
        return self._tables["vendor"].index.lookup(as_id_array(vendor, "vendor"))

    def device_index(self, vendor: npt.ArrayLike, device: npt.ArrayLike) -> np.ndarray:
        """Row of each (vendor, device) in the device table (int32, -1 unknown).

        >>> from gpuclass.db import default_database
        >>> db = default_database()
        >>> db.names("device", db.device_index([0x10de, 0x10de], [0x27b0, 0xfffe]))
        ['AD104GL [RTX 4000 SFF Ada Generation]', None]
        """
        v, d = _pair(vendor, device, "vendor", "device")
        keys = (v.astype(np.uint32) << np.uint32(16)) | d
        return self._tables["device"].index.lookup(keys)

    def subsystem_index(self, vendor: npt.ArrayLike, device: npt.ArrayLike, subvendor: npt.ArrayLike,
                        subdevice: npt.ArrayLike) -> np.ndarray:
        """Row of each device-specific subsystem entry (int32, -1 when there is none).

        Like :meth:`subsystem_name` and libpci, a vendor or device ID of 0 has no
        device-specific entries.  The generic entries are :meth:`gensub_index`'s.
        """
        v, d, sv, sd = self._quad(vendor, device, subvendor, subdevice)
        keys = ((v.astype(np.uint64) << np.uint64(48)) | (d.astype(np.uint64) << np.uint64(32))
                | (sv.astype(np.uint64) << np.uint64(16)) | sd.astype(np.uint64))
        out = self._tables["subsys"].index.lookup(keys)
        # as subsystem_name (and libpci): a device-specific entry only where both IDs are non-zero
        out[(v == 0) | (d == 0)] = -1
        return out

    def gensub_index(self, subvendor: npt.ArrayLike, subdevice: npt.ArrayLike) -> np.ndarray:
        """Row of each generic subsystem entry (an ``S`` block of pci.ids; int32, -1 unknown)."""
        sv, sd = _pair(subvendor, subdevice, "subvendor", "subdevice")
        return self._tables["gensub"].index.lookup((sv.astype(np.uint32) << np.uint32(16)) | sd)

    def class_index(self, class_code: npt.ArrayLike) -> np.ndarray:
        """Row of each 24-bit class code's subclass entry (int32, -1 unknown)."""
        codes = as_id_array(class_code, "class_code", bits=24)
        return self._tables["subclass"].index.lookup((codes >> np.uint32(8)).astype(np.uint16))

    def base_class_index(self, class_code: npt.ArrayLike) -> np.ndarray:
        """Row of each 24-bit class code's base class entry (int32, -1 unknown)."""
        codes = as_id_array(class_code, "class_code", bits=24)
        return self._tables["class"].index.lookup((codes >> np.uint32(16)).astype(np.uint8))

    def progif_index(self, class_code: npt.ArrayLike) -> np.ndarray:
        """Row of each 24-bit class code's prog-if entry (int32, -1 unknown)."""
        return self._tables["progif"].index.lookup(as_id_array(class_code, "class_code", bits=24))

    def names(self, table: str, index: npt.ArrayLike | Iterable[int]) -> list[str | None]:
        """Names for rows of ``table`` (from the ``*_index`` methods); None for -1."""
        if table not in self._tables:
            raise InputError(f"unknown table {table!r}; expected one of {', '.join(TABLES)}")
        t = self._tables[table]
        idx = np.asarray(index)
        if idx.ndim != 1 or idx.dtype.kind not in "iu":
            raise InputError("index: expected a 1-D integer array")
        if idx.size and (int(idx.max()) >= len(t) or int(idx.min()) < -1):
            raise InputError(f"index: values must lie in [-1, {len(t) - 1}]")
        return self._decode(self._name_rows(table, idx.astype(np.int64)))

    # -- names with libpci's fallbacks --------------------------------------------------

    def vendor_names(self, vendor: npt.ArrayLike) -> list[str | None]:
        """:meth:`vendor_name` of each vendor (also the subsystem vendors' names)."""
        return self.names("vendor", self.vendor_index(vendor))

    def device_names(self, vendor: npt.ArrayLike, device: npt.ArrayLike) -> list[str | None]:
        """:meth:`device_name` of each (vendor, device)."""
        return self.names("device", self.device_index(vendor, device))

    def subsystem_names(self, vendor: npt.ArrayLike, device: npt.ArrayLike, subvendor: npt.ArrayLike,
                        subdevice: npt.ArrayLike) -> list[str | None]:
        """:meth:`subsystem_name` of each row: device-specific, generic, then the device's own."""
        v, d, sv, sd = self._quad(vendor, device, subvendor, subdevice)
        rows = self._name_rows("subsys", self.subsystem_index(v, d, sv, sd))
        todo = np.flatnonzero(rows < 0)
        if todo.size:
            rows[todo] = self._name_rows("gensub", self.gensub_index(sv[todo], sd[todo]))
            todo = todo[(rows[todo] < 0) & (v[todo] == sv[todo]) & (d[todo] == sd[todo])]
            if todo.size:
                rows[todo] = self._name_rows("device", self.device_index(v[todo], d[todo]))
        return self._decode(rows)

    def class_names(self, class_code: npt.ArrayLike) -> list[str | None]:
        """:meth:`class_name` of each 24-bit class code: the subclass, else ``"<class> [bbss]"``."""
        codes = as_id_array(class_code, "class_code", bits=24)
        out = self._decode(self._name_rows("subclass", self.class_index(codes)))
        todo = [i for i, name in enumerate(out) if name is None]
        if todo:
            at = np.array(todo, dtype=np.int64)
            bases = self._decode(self._name_rows("class", self.base_class_index(codes[at])))
            for i, base_name in zip(todo, bases):
                if base_name is not None:
                    code = int(codes[i])
                    out[i] = class_fallback(base_name, code >> 16, (code >> 8) & 0xFF)
        return out

    def progif_names(self, class_code: npt.ArrayLike) -> list[str | None]:
        """:meth:`progif_name` of each 24-bit class code (class, subclass, prog-if)."""
        codes = as_id_array(class_code, "class_code", bits=24)
        out = self._decode(self._name_rows("progif", self.progif_index(codes)))
        for i in np.flatnonzero((codes >> np.uint32(8)) == 0x0101).tolist():
            if out[i] is None:
                out[i] = ide_progif(0x01, 0x01, int(codes[i]) & 0xFF)
        return out

    # -- helpers -----------------------------------------------------------------------

    def _quad(self, vendor, device, subvendor, subdevice):
        v, d = _pair(vendor, device, "vendor", "device")
        sv, sd = _pair(subvendor, subdevice, "subvendor", "subdevice")
        if len(sv) != len(v):
            raise InputError(f"subvendor: length {len(sv)} differs from vendor length {len(v)}")
        return v, d, sv, sd

    def _name_rows(self, table: str, idx: np.ndarray) -> np.ndarray:
        """Rows of the name arrays for table rows ``idx`` (int64, -1 stays -1)."""
        idx = np.asarray(idx, dtype=np.int64)
        rows = np.full(idx.shape[0], -1, dtype=np.int64)
        hit = idx >= 0
        if hit.any():
            rows[hit] = self._tables[table].names[idx[hit]]
        return rows

    def _decode(self, rows: np.ndarray) -> list[str | None]:
        """Names of name rows, each distinct one decoded once; None for -1."""
        if rows.size == 0:
            return []
        uniq, inverse = np.unique(rows, return_inverse=True)
        decoded = [None if r < 0 else self._name(int(r)) for r in uniq.tolist()]
        return [decoded[i] for i in inverse.ravel().tolist()]
