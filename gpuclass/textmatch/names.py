"""Which pci.ids names are GPU products, and their marketing names.

>>> marketing_names("TU102GL [Quadro RTX 6000/8000]")
['Quadro RTX 6000', 'Quadro RTX 8000']
>>> gpu_like(["quadro", "rtx", "6000"]), gpu_like(["mcp51", "ethernet", "controller"])
(True, False)
>>> series_forms(["gtx", "1080", "ti"])
[['geforce', '1080', 'ti'], ['nvidia', '1080', 'ti'], ['1080', 'ti']]
"""

from __future__ import annotations

import re

from ..pcinames import marketing_name
from .normalize import drop_memory, name_words, split_tokens

__all__ = ["MODEL", "OPTIONAL_SERIES", "marketing_names", "product_like", "gpu_like", "series_forms"]

MODEL = re.compile(r"[0-9]{3,}")


def marketing_names(pci_name: str) -> list[str]:
    """The product names in a pci.ids device name: ``TU102GL [Quadro RTX 6000/8000]``
    -> ``Quadro RTX 6000``, ``Quadro RTX 8000``."""
    text = marketing_name(pci_name)
    out: list[str] = []
    for part in text.split(" / "):
        part = part.strip()
        pieces = part.split("/")
        first = pieces[0].strip()
        if out and not MODEL.search(first):
            continue  # "Mobile / Max-Q 8GB": a qualifier, not another product
        if out and not product_like(name_words(first)):
            continue
        out.append(first)
        words = first.split()
        for alt in pieces[1:]:
            alt = alt.strip()
            if alt.isdigit() and words and words[-1].isdigit():
                out.append(" ".join(words[:-1] + [alt]))  # "6000/8000"
    return out


def product_like(words: list[str]) -> bool:
    """At least two tokens besides memory sizes, one of them a model number (``1080``, ``a100``)."""
    bare = drop_memory(split_tokens(words))
    if len(bare) < 2:
        return False
    kept = [w for w in words if not _MEMORY_WORD.match(w)]
    return any(MODEL.search(w) or (not w.isdigit() and not w.isalpha()) for w in kept)


_MEMORY_WORD = re.compile(r"^[0-9]+(?:gb|g|mb|tb)$")
# Series words of NVIDIA GPUs, and data-center model numbers (a100, h100, l40s, t4, gb200).
_GPU_SERIES = frozenset({"geforce", "quadro", "tesla", "titan", "rtx", "gtx", "gts", "gt", "nvs", "grid"})
_DC_MODEL = re.compile(r"^(?:[abhklmptv]|gh|gb)[0-9]{1,3}[a-z]?$")
_NOT_GPU = frozenset({"controller", "bridge", "ethernet", "smbus", "usb", "audio", "memory", "ide",
                      "sata", "lpc", "switch", "nvswitch", "network", "host", "modem", "coprocessor",
                      "pcie", "isa", "serial", "dma", "hdmi", "ufs", "mac"})


def gpu_like(words: list[str]) -> bool:
    """A product name that names a GPU: a series word or a data-center model, nothing
    that names a chipset function (``nForce``'s USB and SMBus also carry NVIDIA IDs)."""
    if any(w in _NOT_GPU for w in words) and not any(w in _GPU_SERIES for w in words):
        return False
    return any(w in _GPU_SERIES or _DC_MODEL.match(w) for w in words)




# Series words a listing may leave out before the model number, writing a brand word in
# their place ("GeForce 1080 Ti", "NVIDIA 1080Ti" for the GeForce GTX 1080 Ti).  Only GTX:
# "RTX 6000" without its series word is "6000", also the Quadro 6000's.
OPTIONAL_SERIES = frozenset({"gtx"})
_BRAND_WORDS = ("geforce", "nvidia")


def series_forms(words: list[str], bare: bool = True) -> list[list[str]]:
    """Spellings of a name (:func:`~.normalize.name_words`) without its optional series word:
    a brand word in its place, and (``bare``) no word at all where what is left still reads
    as a product (a model number and a word that is not a memory size: ``1080 ti``, never a
    bare ``1080``, which a resolution such as ``1920 x 1080`` holds too)."""
    tokens = split_tokens(words)
    if len(tokens) < 2 or tokens[0] not in OPTIONAL_SERIES or not MODEL.fullmatch(tokens[1]):
        return []
    rest = tokens[1:]
    out = [[brand, *rest] for brand in _BRAND_WORDS]
    kept = drop_memory(rest)
    if bare and len(kept) >= 2 and any(not t.isdigit() for t in kept):
        out.append(rest)
    return out
