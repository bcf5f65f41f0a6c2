"""The allowlist policy: what is supported, and the rules the matcher applies.

- :mod:`~gpuclass.policy.default`: the platform's allowlist as plain data;
- :mod:`~gpuclass.policy.model`: the pydantic model that validates custom policies;
- :mod:`~gpuclass.policy.files`: JSON, YAML and TOML documents;
- :mod:`~gpuclass.policy.compile`: a policy compiled into kernel tables, and the one
  ``rule_for`` ("the most specific rule wins").

Names load lazily: compiling the default policy never imports pydantic.

>>> from gpuclass.policy import compile_policy
>>> compile_policy().card_ids[0]
'gtx-1080'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .compile import CompiledPolicy, RuleHit, compile_policy
    from .default import DEFAULT_POLICY
    from .files import FORMATS, format_for, load_policy
    from .model import Card, DenyRule, MatchRule, Policy, RuleMatch

_LAZY = {
    "CompiledPolicy": "compile", "RuleHit": "compile", "compile_policy": "compile",
    "DEFAULT_POLICY": "default",
    "FORMATS": "files", "format_for": "files", "load_policy": "files",
    "Card": "model", "DenyRule": "model", "MatchRule": "model", "Policy": "model",
    "RuleMatch": "model",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'gpuclass.policy' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{mod}"), name)
