"""Names for reports: a device's pci.ids label, the unsupported-GPU label, near misses.

Results and audits name what they show through these, so an unsupported GPU is
labelled the same way everywhere and a look-alike of an allowlisted card says so.

>>> from gpuclass.db import default_database
>>> unsupported_label(default_database(), 0x10DE, 0x1E30)
'TU102GL [Quadro RTX 6000/8000] (10de:1e30)'
>>> from gpuclass.policy import compile_policy
>>> near_miss(compile_policy(), 0x10DE, 0x27B2, "AD104GL [RTX 4000 Ada Generation]").card
'rtx-4000-sff-ada'
"""

from __future__ import annotations

from .lazy import Pattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    from .records import DeviceNames as DeviceNames
else:
    from .lazy import NamedTuple

__all__ = ["NearMissInfo", "near_miss", "device_label", "unsupported_label", "UnsupportedLabels", "marketing_name",
           "default_names", "NO_NAMES"]


class _NoNames:
    """A database that knows no names: what a caller passes to proceed without pci.ids."""

    def vendor_name(self, *ids: int) -> None:
        return None

    device_name = subvendor_name = subsystem_name = class_name = vendor_name

    def __repr__(self) -> str:
        return "NO_NAMES"


NO_NAMES = _NoNames()


class NearMissInfo(NamedTuple):
    card: str
    card_name: str
    reason: str


# the first innermost bracket ("[" excluded inside: otherwise "[[[[..." is quadratic)
_BRACKET = Pattern(r"\[([^\[\]]+)\]")
_MODEL_NUMBER = Pattern(r"(?<![0-9])([0-9]{3,5})")


def marketing_name(name: str) -> str:
    """The marketing part of a pci.ids name: ``GP102 [GeForce GTX 1080 Ti]`` -> the bracket."""
    m = _BRACKET.search(name)
    return m.group(1) if m else name


def _numbers(name: str) -> set[str]:
    return set(_MODEL_NUMBER.findall(name))


def near_miss(compiled: Any, vendor: int | None, device: int | None,
              name: str | None) -> NearMissInfo | None:
    """The allowlisted card an unsupported device is easily mistaken for, if any.

    Two names are close when they share a model number (1080, 4000, 6000): the
    GTX 1080 Ti 10GB (``1b01``), RTX 4000 Ada (``27b2``), RTX PRO 6000D
    (``2bb2``) and Quadro RTX 6000 all come out as near misses, a GTX 1070 does not.
    ``vendor`` and ``device`` may be None for a product known only by name (a
    listing's ``RTX 6000 Ada Laptop GPU``).

    >>> from gpuclass.policy import compile_policy
    >>> near_miss(compile_policy(), None, None, "RTX 6000 Ada Laptop GPU").reason
    'RTX 6000 Ada Laptop GPU is not the RTX 6000 Ada Generation (10de:26b1); only the listed IDs are supported'
    """
    if not name:
        return None
    from difflib import SequenceMatcher  # only for the few unsupported GPUs that have a name

    # pci.ids names fit in a 1024-byte line; a longer (hostile) text would make the
    # SequenceMatcher below quadratic
    text = marketing_name(name[:1024])
    numbers = _numbers(text)
    best = None
    for c in compiled.cards:
        if any((v, d) == (vendor, device) and sv is None for v, d, sv, sd in c["match"]):
            continue
        names = [c["name"], *c["aliases"]]
        if not numbers & set().union(*(_numbers(n) for n in names)):
            continue
        score = max(SequenceMatcher(None, text.casefold(), n.casefold()).ratio() for n in names)
        if best is None or score > best[0]:
            best = (score, c)
    if best is None:
        return None
    c = best[1]
    ids = ", ".join(f"{v:04x}:{d:04x}" for v, d, sv, sd in c["match"])
    own = f" ({vendor:04x}:{device:04x})" if vendor is not None and device is not None else ""
    return NearMissInfo(c["id"], c["name"],
                        f"{text}{own} is not the {c['name']} ({ids}); only the listed IDs are supported")


def device_label(db, v, d, sv=None, sd=None) -> str | None:
    """The pci.ids name of a device (its subsystem's where pci.ids has one), or None."""
    if db is None or v is None or d is None:
        return None
    try:
        if sv is not None:
            sub = db.subsystem_name(v, d, sv, sd)
            if sub:
                return sub
        return db.device_name(v, d)
    except Exception:  # a broken database must not break classification
        return None


def default_names():
    """The default database, or None where it cannot be loaded (names are a nicety here)."""
    try:
        from .db import default_database

        return default_database()
    except Exception:
        return None


def unsupported_label(db: Any, vendor: int | None, device: int | None, name: str | None = None) -> str:
    """How every report names an unsupported GPU: its pci.ids name and IDs, else ``name``
    (what a listing calls it) and the IDs, else the IDs alone; a product known only by name
    (a listing's look-alike with no ID) is its name.

    >>> unsupported_label(None, 0x10DE, 0x2BB2, "RTX PRO 6000D"), unsupported_label(None, None, None, "GTX 1080 Mining")
    ('RTX PRO 6000D (10de:2bb2)', 'GTX 1080 Mining')
    """
    if vendor is None or device is None:
        return name or "unknown GPU"
    ids = f"{vendor:04x}:{device:04x}"
    known = device_label(db, vendor, device) or name
    return f"{known} ({ids})" if known else ids


class UnsupportedLabels:
    """:func:`unsupported_label` of GPUs by ID (keys ``vendor << 16 | device``), each named
    once: one is shared by the tables a device-table audit gives out batch by batch, and by
    the reports of a run of lspci dumps (a fleet has a few dozen such models).  The
    database is found and loaded when a first label is asked for (``db``: the one to use
    instead).

    >>> UnsupportedLabels()(0x10DE_1E30)
    'TU102GL [Quadro RTX 6000/8000] (10de:1e30)'
    """

    __slots__ = ("_db", "_labels")

    def __init__(self, db: DeviceNames | None = None) -> None:
        self._db = db
        self._labels: dict[int, str] = {}

    def __call__(self, key: int) -> str:
        label = self._labels.get(key)
        if label is None:
            if self._db is None:
                from .db.mapped import names_for
                self._db = names_for()
            label = self._labels[key] = unsupported_label(self._db, key >> 16, key & 0xFFFF)
        return label
