"""What a matcher's names are: the kinds of name, and one entry per name it reports.

Apart from :mod:`.build` (which collects the names, reading pci.ids), so that a matcher
loaded from the cache needs none of the building code.

>>> Entry(SUPPORTED_TEXT, 0, "GeForce GTX 1080", "10de:1b80").chip is None
True
"""

from __future__ import annotations

from array import array

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import NamedTuple
else:
    from ..lazy import NamedTuple

__all__ = ["SUPPORTED_TEXT", "UNSUPPORTED_TEXT", "AMBIGUOUS_TEXT", "EDITIONS_TEXT", "ABSENT_MARK",
           "VARIANT_MARK", "KIND_NAMES", "Entry", "EntryTable", "WordTable"]

SUPPORTED_TEXT, UNSUPPORTED_TEXT, AMBIGUOUS_TEXT, EDITIONS_TEXT = 0, 1, 2, 3
ABSENT_MARK, VARIANT_MARK = 4, 5   # markers: never reported as mentions themselves
KIND_NAMES = ("supported", "unsupported", "ambiguous", "editions")


class Entry(NamedTuple):
    kind: int
    target: int          # card index (supported, editions) or -1
    name: str
    device_id: str | None
    chip: str | None = None   # the pci.ids chip ("GP104"), for look-alikes of one chip
    # how reports name an unsupported GPU this entry names: pcinames.unsupported_label's
    # text, made as the matcher is built (a listing audit reads no pci.ids)
    label: str | None = None


class EntryTable:
    """A cached matcher's entries as the cache keeps them: columns (kinds, targets, and the
    names, device IDs, chips and labels each one text), each :class:`Entry` made the first time it
    is asked for (a listing reads a few dozen of the thousands of names).  Reads as the
    list of entries it stands for.

    >>> t = EntryTable.of([Entry(SUPPORTED_TEXT, 0, "GeForce GTX 1080", "10de:1b80", "GP104"),
    ...                    Entry(VARIANT_MARK, -1, "mining", None)])
    >>> t[1], len(t), t.kinds, t.targets
    (Entry(kind=5, target=-1, name='mining', device_id=None, chip=None, label=None), 2, [0, 5], [0, -1])
    >>> EntryTable(*t.columns()) == list(t) == [t[0], t[-1]]
    True
    """

    __slots__ = ("kinds", "targets", "_texts", "_split", "_made")

    _SEP = "\n"     # never inside a name, a device ID or a chip (each from one line of pci.ids)
    _NONE = "\0"    # a device ID or a chip that is None

    def __init__(self, kinds: bytes, targets: bytes, names: str, device_ids: str, chips: str,
                 labels: str) -> None:
        self.kinds = list(kinds)                  # each entry's kind
        self.targets = [t - 1 for t in targets]   # each entry's card index, or -1
        self._texts = (names, device_ids, chips, labels)
        self._split: tuple[list[str], ...] | None = None
        self._made: dict[int, Entry] = {}

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> "EntryTable":
        return cls(*cls.columns_of(list(entries)))

    @classmethod
    def columns_of(cls, entries: list[Entry]) -> tuple[bytes, bytes, str, str, str, str]:
        """What the cache keeps of ``entries``: the constructor's arguments (ValueError where
        a text holds a line break or a NUL, or a kind or target is out of range)."""
        cols = ([e.name for e in entries], [e.device_id for e in entries], [e.chip for e in entries],
                [e.label for e in entries])
        if any(t is not None and (cls._SEP in t or cls._NONE in t) for col in cols for t in col):
            raise ValueError("an entry's text holds a line break or a NUL")
        kinds, targets = bytes(e.kind for e in entries), bytes(e.target + 1 for e in entries)  # ValueError out of range
        names, device_ids, chips, labels = (cls._SEP.join(cls._NONE if t is None else t for t in col)
                                            for col in cols)
        return kinds, targets, names, device_ids, chips, labels

    def columns(self) -> tuple[bytes, bytes, str, str, str, str]:
        """What the cache keeps: the constructor's arguments."""
        return self.columns_of(list(self))

    def _columns_split(self) -> tuple[list[str], ...]:
        if self._split is None:
            split = tuple(t.split(self._SEP) for t in self._texts)
            if any(len(col) != len(self.kinds) for col in split):
                raise ValueError("entry columns of different lengths")
            self._split = split
        return self._split

    def __len__(self) -> int:
        return len(self.kinds)

    def __getitem__(self, i: int) -> Entry:
        e = self._made.get(i)
        if e is None:
            if not -len(self.kinds) <= i < len(self.kinds):
                raise IndexError("entry index out of range")
            i %= len(self.kinds)
            names, device_ids, chips, labels = self._columns_split()
            d, c, lb = device_ids[i], chips[i], labels[i]
            e = self._made[i] = Entry(self.kinds[i], self.targets[i], names[i], None if d == self._NONE else d,
                                      None if c == self._NONE else c, None if lb == self._NONE else lb)
        return e

    def __iter__(self) -> Iterator[Entry]:
        return map(self.__getitem__, range(len(self.kinds)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (EntryTable, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class WordTable(dict):
    """What an automaton hit's value (its word's index) stands for: ``(length less one,
    entry)``, each pair made the first time a hit names it.  Kept as two integer arrays,
    which the cache writes and reads back as they are (raw, no pickle; a pickle of the
    table, as Dask makes, holds the two arrays too): a matcher loads without an object
    per word, and a listing names a few dozen of its thousands of words.

    >>> t = WordTable.of([(" gtx 1080 ", 0), ("mining", 1)])
    >>> t[0], t[1], len(t.lengths)
    ((9, 0), (5, 1), 2)
    """

    __slots__ = ("lengths", "entries")

    def __init__(self, lengths: array, entries: array) -> None:
        super().__init__()
        if len(lengths) != len(entries):
            raise ValueError("word columns of different lengths")
        self.lengths, self.entries = lengths, entries

    @classmethod
    def of(cls, words: Iterable[tuple[str, int]]) -> "WordTable":
        """The table of ``words`` ``(word, entry)``, a word's index its place here."""
        words = list(words)
        return cls(_narrow([len(w) - 1 for w, _ in words]), _narrow([e for _, e in words]))

    def __missing__(self, k: int) -> tuple[int, int]:
        if type(k) is not int or not 0 <= k < len(self.lengths):
            raise KeyError(k)
        v = self[k] = (self.lengths[k], self.entries[k])
        return v

    def __reduce__(self) -> tuple:
        return type(self), (self.lengths, self.entries)


def _narrow(values: list[int]) -> array:
    """``values`` (none negative) in the narrowest unsigned array that holds them."""
    top = max(values, default=0)
    return array("B" if top < 1 << 8 else "H" if top < 1 << 16 else "L", values)
