"""What a :class:`~gpuclass.textmatch.matcher.TextMatcher` finds in a batch of texts: the
accepted mentions, as Python lists and (on first use) numpy arrays, and each one as a
:class:`Mention`."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ..lazy import NamedTuple

from .entries import EDITIONS_TEXT, KIND_NAMES, SUPPORTED_TEXT, UNSUPPORTED_TEXT

__all__ = ["Mention", "TextMatches"]


class Mention(NamedTuple):
    """One card named in a text.

    ``kind`` is ``supported``, ``unsupported``, ``ambiguous`` or ``editions``;
    ``card`` the policy's card id (supported; for editions the card it is counted
    as); ``name`` what the text names;
    ``device_id`` the ``vendor:device`` of that product where pci.ids knows it;
    ``count`` the quantity; ``text`` the matched words (normalized).
    """

    kind: str
    card: str | None
    name: str
    count: int
    text: str
    device_id: str | None = None


class TextMatches:
    """Matches of a batch, over the accepted mentions (text order).

    As Python lists (what the listing audit reads, without numpy): ``records`` the index
    of each mention's text, ``kinds``, ``cards`` (-1 unless supported), ``counts``,
    ``entries`` (indices into the matcher's name table); as numpy arrays, made on first
    use: ``record`` (int64), ``kind`` (uint8), ``card`` (int16), ``count`` (int32),
    ``entry`` (int32).
    """

    __slots__ = ("matcher", "n_texts", "records", "kinds", "cards", "counts", "entries", "text", "_arrays")

    def __init__(self, matcher: Any, n_texts: int, record, kind, card, count, entry,
                 text: list[str]) -> None:
        self.matcher = matcher
        self.n_texts = n_texts
        self.records, self.kinds, self.cards = list(record), list(kind), list(card)
        self.counts, self.entries = list(count), list(entry)
        self.text = text
        self._arrays: dict[str, Any] = {}

    def _array(self, name: str, values: list, dtype: str):
        out = self._arrays.get(name)
        if out is None:
            import numpy as np

            out = self._arrays[name] = np.asarray(values, dtype=dtype)
        return out

    record = property(lambda self: self._array("record", self.records, "int64"))
    kind = property(lambda self: self._array("kind", self.kinds, "uint8"))
    card = property(lambda self: self._array("card", self.cards, "int16"))
    count = property(lambda self: self._array("count", self.counts, "int32"))
    entry = property(lambda self: self._array("entry", self.entries, "int32"))

    def __len__(self) -> int:
        return len(self.records)

    def _per_text(self, keep) -> list[int]:
        out = [0] * self.n_texts
        for r, k, c, n in zip(self.records, self.kinds, self.cards, self.counts):
            if keep(k, c):
                out[r] += n
        return out

    def supported_cards(self):
        """Supported cards named per text (numpy int64, length ``n_texts``)."""
        import numpy as np

        return np.asarray(self._per_text(lambda k, c: c >= 0), dtype=np.int64)

    def unsupported_gpus(self):
        """Unsupported GPUs named per text (numpy int64, length ``n_texts``)."""
        import numpy as np

        return np.asarray(self._per_text(lambda k, c: k == UNSUPPORTED_TEXT), dtype=np.int64)

    def mentions(self, i: int) -> list[Mention]:
        """The mentions of text ``i`` as :class:`Mention` tuples."""
        import bisect

        lo, hi = bisect.bisect_left(self.records, i), bisect.bisect_left(self.records, i + 1)
        return [self.mention(j) for j in range(lo, hi)]

    def mention(self, j: int) -> Mention:
        """Match ``j`` as a :class:`Mention`."""
        e = self.matcher.entries[self.entries[j]]
        card = self.matcher.card_ids[e.target] if e.kind in (SUPPORTED_TEXT, EDITIONS_TEXT) else None
        return Mention(KIND_NAMES[e.kind], card, e.name, self.counts[j], self.text[j], e.device_id)
