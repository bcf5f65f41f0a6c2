"""Free-text card names (server-auction listings): which cards a text names, and how many.

- :mod:`~gpuclass.textmatch.matcher`: :class:`TextMatcher`, Aho-Corasick automata
  over the policy's card names, the pci.ids names of other GPUs (traps) and
  shortened names that do not say which card (ambiguous);
- :mod:`~gpuclass.textmatch.normalize`: text into tokens, names into spellings;
- :mod:`~gpuclass.textmatch.names`: which pci.ids names are GPU products;
- :mod:`~gpuclass.textmatch.quantity`: the count next to a name.

>>> [(m.card, m.count) for m in default_matcher().find("2x RTX 4000 SFF Ada")]
[('rtx-4000-sff-ada', 2)]
"""

from __future__ import annotations

from .matcher import (
                      AMBIGUOUS_TEXT,
                      KIND_NAMES,
                      SUPPORTED_TEXT,
                      UNSUPPORTED_TEXT,
                      Mention,
                      TextMatcher,
                      TextMatches,
                      default_matcher,
)
from .normalize import normalize

__all__ = ["Mention", "TextMatcher", "TextMatches", "default_matcher", "normalize",
           "SUPPORTED_TEXT", "UNSUPPORTED_TEXT", "AMBIGUOUS_TEXT", "KIND_NAMES"]
