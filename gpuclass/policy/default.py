"""The platform's allowlist as plain data (no pydantic), the single source of the default policy.

``Policy.default()`` validates exactly this dict, and :func:`compile_policy`
compiles it directly when no policy is given, so a provisioner that classifies
once per boot never imports pydantic.

>>> [c["match"][0]["device"] for c in DEFAULT_POLICY["cards"]]
['1b80', '1b06', '27b0', '26b1', '2bb1', '2bb4', '2bb5']
"""

from __future__ import annotations

from ..constants import COMPANION_CLASSES, GPU_CLASSES, NVIDIA, SLICES_PER_CARD

__all__ = ["DEFAULT_POLICY"]


def _card(card_id: str, name: str, family: str, module: str, device: str, aliases: list[str]) -> dict:
    return {
        "id": card_id,
        "name": name,
        "family": family,
        "kernel_module": module,
        "match": [{"vendor": f"{NVIDIA:04x}", "device": device}],
        "aliases": aliases,
    }


# Pascal predates the open kernel modules (Turing and newer only): proprietary.
DEFAULT_POLICY: dict = {
    "version": 1,
    "slices_per_card": SLICES_PER_CARD,
    "fail_requests_greater_than_one": True,
    "gpu_classes": [f"{c:04x}" for c in GPU_CLASSES],
    "companion_classes": [f"{c:04x}" for c in COMPANION_CLASSES],
    "gpu_vendors": [f"{NVIDIA:04x}"],
    "cards": [
        _card("gtx-1080", "GeForce GTX 1080", "pascal", "proprietary", "1b80",
              ["GeForce GTX 1080", "GTX 1080"]),
        _card("gtx-1080-ti", "GeForce GTX 1080 Ti", "pascal", "proprietary", "1b06",
              ["GeForce GTX 1080 Ti", "GTX 1080 Ti", "GTX 1080Ti"]),
        _card("rtx-4000-sff-ada", "RTX 4000 SFF Ada Generation", "ada-lovelace", "open", "27b0",
              ["RTX 4000 SFF Ada Generation", "RTX 4000 SFF Ada", "RTX 4000 SFF"]),
        _card("rtx-6000-ada", "RTX 6000 Ada Generation", "ada-lovelace", "open", "26b1",
              ["RTX 6000 Ada Generation", "RTX 6000 Ada"]),
        _card("rtx-pro-6000-blackwell-workstation", "RTX PRO 6000 Blackwell Workstation Edition",
              "blackwell", "open", "2bb1",
              ["RTX PRO 6000 Blackwell Workstation Edition", "RTX PRO 6000 Blackwell Workstation"]),
        _card("rtx-pro-6000-blackwell-max-q", "RTX PRO 6000 Blackwell Max-Q Workstation Edition",
              "blackwell", "open", "2bb4",
              ["RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX PRO 6000 Blackwell Max-Q"]),
        _card("rtx-pro-6000-blackwell-server", "RTX PRO 6000 Blackwell Server Edition",
              "blackwell", "open", "2bb5",
              ["RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Blackwell Server"]),
    ],
    "deny": [],
}
