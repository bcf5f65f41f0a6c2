"""The column names of audit inputs, once: text columns, server columns, device-table fields.

Every door (CSV and Parquet files, pandas and Arrow frames, Dask) finds its columns
here, so a column that one door reads is read by all.

>>> is_device_header(["server", "vendor_id", "device_id", "class"]), is_device_header(["id", "text"])
(True, False)
>>> device_columns(["Host", "vendor", "device", "class_code"], None)
{'server': 0, 'vendor': 1, 'device': 2, 'subvendor': None, 'subdevice': None, 'class': 3}
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

from ...errors import InputError

__all__ = ["TEXT_COLUMNS", "SERVER_COLUMNS", "DEVICE_FIELDS", "ID_FIELDS", "DEVICE_ALIASES",
           "REQUIRED_FIELDS", "BATCH_ROWS", "is_device_header", "pick_column", "device_columns", "field_names"]

TEXT_COLUMNS = ("description", "text", "name", "gpu")
SERVER_COLUMNS = ("server", "id", "host", "hostname", "node")
# a device table's fields, in the order a row of audit_device_rows gives them
DEVICE_FIELDS = ("server", "vendor", "device", "subvendor", "subdevice", "class")
# the ID fields in the order the core parses them (and reports a row's first problem)
ID_FIELDS = ("vendor", "device", "class", "subvendor", "subdevice")
REQUIRED_FIELDS = ("server", "vendor", "device", "class")
BATCH_ROWS = 65536  # device-table rows a reader hands the engine at a time
DEVICE_ALIASES = {"server": SERVER_COLUMNS, "vendor": ("vendor", "vendor_id"),
                  "device": ("device", "device_id"), "subvendor": ("subvendor", "subsystem_vendor"),
                  "subdevice": ("subdevice", "subsystem_device", "subsystem_id"),
                  "class": ("class", "class_code", "class_id")}


def _low(header: Sequence[object]) -> list[str]:
    return [str(h).strip().lower() for h in header]


def is_device_header(header: Sequence[object]) -> bool:
    """A header with vendor and device columns: a device table."""
    low = set(_low(header))
    return bool(low & set(DEVICE_ALIASES["vendor"])) and bool(low & set(DEVICE_ALIASES["device"]))


def pick_column(header: Sequence[object], wanted: Sequence[str], given: str | None, what: str) -> int | None:
    """The index of the column ``given`` names (an :class:`InputError` where the header
    lacks it), else of the first of ``wanted`` the header has, else None."""
    low = _low(header)
    if given is not None:
        if given.strip().lower() not in low:
            raise InputError(f"{what} column {given!r} not in the header {list(header)}")
        return low.index(given.strip().lower())
    return next((low.index(w) for w in wanted if w in low), None)


def device_columns(header: Sequence[object], server_column: str | None,
                   where: str | None = None) -> dict[str, int | None]:
    """The index of each of ``DEVICE_FIELDS`` among ``header`` (None: absent); an
    :class:`InputError` (naming ``where``, the file or "table", where given) where a
    required one is missing, the server column named by ``server_column`` is not there,
    or a column the table is read by is named twice (which of the two would be read is
    a guess, and Arrow refuses to select it).

    >>> device_columns(["server", "vendor", "device", "Device", "class"], None, "t.csv")
    Traceback (most recent call last):
    ...
    gpuclass.errors.InputError: t.csv: column 'device' is named 2 times (header: ['server', 'vendor', 'device', 'Device', 'class'])
    """
    at = f"{where}: " if where else ""
    out: dict[str, int | None] = {}
    for f in DEVICE_FIELDS:
        if f == "server" and server_column is not None:
            try:
                out[f] = pick_column(header, (), server_column, "server")
            except InputError as exc:
                raise InputError(f"{at}{exc}") from None
        else:
            out[f] = pick_column(header, DEVICE_ALIASES[f], None, f)
    missing = [f for f in REQUIRED_FIELDS if out[f] is None]
    if missing:
        raise InputError(f"{at}device table lacks columns {missing} (header: {list(header)})")
    low = _low(header)
    for j in dict.fromkeys(j for j in out.values() if j is not None):
        if low.count(low[j]) > 1:
            raise InputError(f"{at}column {str(header[j]).strip()!r} is named {low.count(low[j])} times "
                             f"(header: {list(header)})")
    return out


def field_names(names: Sequence[str], server_column: str | None,
                where: str | None = None) -> dict[str, str | None]:
    """The column name of each device field among ``names`` (None: absent); refusals as
    :func:`device_columns`'."""
    idx = device_columns(names, server_column, where)
    return {f: (None if idx[f] is None else names[idx[f]]) for f in DEVICE_FIELDS}
