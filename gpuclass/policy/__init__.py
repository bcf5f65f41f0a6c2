"""The allowlist policy: what is supported, and the rules the matcher applies.

- :mod:`~gpuclass.policy.default`: the platform's allowlist as plain data;
- :mod:`~gpuclass.policy.model`: the pydantic model that validates custom policies;
- :mod:`~gpuclass.policy.files`: JSON, YAML and TOML documents;
- :mod:`~gpuclass.policy.compile`: a policy compiled into kernel tables, and the one
  ``rule_for`` ("the most specific rule wins").

:func:`compile_policy` takes any of them.  The model loads lazily: compiling the
default policy never imports pydantic.

>>> from gpuclass.policy import compile_policy
>>> compile_policy().card_ids[0]
'gtx-1080'
"""

from __future__ import annotations

import os

TYPE_CHECKING = False

from ..errors import InputError
from ..lazy import lazy_exports
from .compile import CompiledPolicy, RuleHit, compile_default
from .default import DEFAULT_POLICY

if TYPE_CHECKING:
    from typing import Any, TypeAlias, Union

    from .files import FORMATS, format_for
    from .model import Card, DenyRule, MatchRule, Policy, RuleMatch, load_policy

    #: What every ``policy=`` parameter takes: None (the platform's allowlist), a
    #: :class:`Policy`, its data as a dict, a policy file's path, or a compiled policy.
    PolicyArg: TypeAlias = Union[Policy, CompiledPolicy, "dict[str, Any]", str, "os.PathLike[str]", None]

__all__ = ["CompiledPolicy", "RuleHit", "compile_policy", "DEFAULT_POLICY", "FORMATS", "format_for",
           "load_policy", "Card", "DenyRule", "MatchRule", "Policy", "RuleMatch"]

_LAZY = {"FORMATS": "files", "format_for": "files", "load_policy": "model", "Card": "model",
         "DenyRule": "model", "MatchRule": "model", "Policy": "model", "RuleMatch": "model"}


__getattr__ = lazy_exports(__name__, _LAZY, globals())


def compile_policy(policy: Any = None) -> CompiledPolicy:
    """Compile a policy: None (the default allowlist), a Policy, a dict, a file path or a
    CompiledPolicy (returned as it is)."""
    if policy is None:
        return compile_default()
    if isinstance(policy, CompiledPolicy):
        return policy
    from .model import Policy  # pydantic only when a custom policy is given

    if isinstance(policy, (str, os.PathLike)):
        policy = Policy.load(policy)
    elif isinstance(policy, dict):
        policy = Policy.from_data(policy)
    if not isinstance(policy, Policy):
        raise InputError(f"policy: expected a Policy, dict, path or None, got {type(policy).__name__}")
    return policy.compiled()
