"""The allowlist policy as a pydantic model: cards, match and deny rules, GPU classes.

A policy lists the supported cards, each with its match rules (``vendor:device``
with an optional subsystem ``subvendor:subdevice``), and deny rules.  The most
specific rule wins: a subsystem rule beats a device rule, so a policy can tell
the Quadro RTX 6000 from the RTX 8000 (both ``10de:1e30``).  Invalid policies
raise :class:`~gpuclass.errors.PolicyError` naming the field.

IDs are hex strings in files (``"1b80"``); a bare number in a file is refused
rather than guessed (YAML reads ``0300`` as octal and TOML ``2684`` as decimal).

>>> p = Policy.default()
>>> [c.id for c in p.cards][:2]
['gtx-1080', 'gtx-1080-ti']
>>> p.match(0x10de, 0x27b2) is None          # RTX 4000 Ada: not the SFF card
True
>>> p.match(0x10de, 0x27b0).card.id
'rtx-4000-sff-ada'
>>> Policy.loads('{"slices_per_card": 1}', "json")
Traceback (most recent call last):
...
gpuclass.errors.PolicyError: slices_per_card: Input should be greater than or equal to 2
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..constants import (COMPANION_CLASSES, GPU_CLASSES, GPU_FAMILIES, NVIDIA, SLICES_PER_CARD,
                         accepted_kernel_modules)
from ..errors import PolicyError
from ..ids import id_value
from .compile import CompiledPolicy, compile_data
from .default import DEFAULT_POLICY
from .files import BareNumber, dump_document, format_for, parse_document, read_document

__all__ = ["MatchRule", "DenyRule", "Card", "Policy", "RuleMatch", "load_policy"]


def _hex16(value: Any, info: ValidationInfo) -> int:
    if isinstance(value, bool):
        raise PydanticCustomError("hex_id", "expected a 4-digit hex ID such as \"10de\"")
    if isinstance(value, int):
        if info.context and info.context.get("ids_as_text"):
            raise PydanticCustomError(
                "hex_id", "write IDs as quoted hex strings such as \"1b80\", not the number {value}",
                {"value": value})
        if 0 <= value <= 0xFFFF:
            return value
        raise PydanticCustomError("hex_id", "{value} does not fit in 16 bits", {"value": value})
    if isinstance(value, BareNumber) and info.context and info.context.get("ids_as_text"):
        raise PydanticCustomError(
            "hex_id", "write IDs as quoted hex strings such as \"1b80\", not the bare number {value}",
            {"value": str(value)})
    if isinstance(value, str):
        parsed = id_value(value)
        if parsed is not None:
            return parsed
        raise PydanticCustomError("hex_id", "bad hex ID {value}: expected up to 4 hex digits such as \"10de\"",
                                  {"value": repr(value)})
    raise PydanticCustomError("hex_id", "expected a 4-digit hex ID such as \"10de\"")


# An ID: "10de" or "0x10de" (or an int from Python); always written as 4 hex digits.
HexId = Annotated[
    int,
    BeforeValidator(_hex16),
    PlainSerializer(lambda v: f"{v:04x}", return_type=str, when_used="json-unless-none"),
    WithJsonSchema({"type": "string", "pattern": "^(0[xX])?[0-9a-fA-F]{1,4}$"}),
]
_STRICT = ConfigDict(extra="forbid", frozen=True)


class MatchRule(BaseModel):
    """``vendor:device``, optionally narrowed to one subsystem ``subvendor:subdevice``."""

    model_config = _STRICT
    vendor: HexId
    device: HexId
    subvendor: HexId | None = None
    subdevice: HexId | None = None

    @model_validator(mode="after")
    def _subsystem_pair(self):
        if (self.subvendor is None) != (self.subdevice is None):
            raise PydanticCustomError("subsystem_pair", "subvendor and subdevice go together")
        return self

    @property
    def key(self) -> tuple[int, int, int | None, int | None]:
        return (self.vendor, self.device, self.subvendor, self.subdevice)

    def __str__(self) -> str:
        s = f"{self.vendor:04x}:{self.device:04x}"
        return s if self.subvendor is None else f"{s} subsystem {self.subvendor:04x}:{self.subdevice:04x}"


class DenyRule(MatchRule):
    """A rule that makes matching devices unsupported, whatever less specific rule allows them."""

    reason: str = ""


class Card(BaseModel):
    """One supported card model."""

    model_config = _STRICT
    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)]
    name: Annotated[str, Field(min_length=1)]
    family: Annotated[str, WithJsonSchema({"enum": sorted(GPU_FAMILIES)})]
    kernel_module: Literal["proprietary", "open"]
    match: Annotated[list[MatchRule], Field(min_length=1)]
    aliases: list[Annotated[str, Field(min_length=1)]] = []
    slices: Annotated[int, Field(ge=2, le=0xFFFF)] | None = None

    @field_validator("family")
    @classmethod
    def _known_family(cls, family: str) -> str:
        if family not in GPU_FAMILIES:  # a typo would pick the wrong kernel modules
            raise PydanticCustomError("family", "unknown family '{family}'{hint}; known: {known}", {
                "family": family, "hint": _did_you_mean(family, GPU_FAMILIES),
                "known": ", ".join(sorted(GPU_FAMILIES))})
        return family

    @model_validator(mode="after")
    def _module_fits_family(self):
        if self.kernel_module not in accepted_kernel_modules(self.family, self.kernel_module):
            raise PydanticCustomError(
                "kernel_module", "the {module} kernel modules do not support {family} GPUs",
                {"module": self.kernel_module, "family": self.family, "path": "kernel_module"})
        return self


class RuleMatch(NamedTuple):
    """The rule that decides a device: the card (None when denied) and the rule's path."""

    card: Card | None
    card_index: int
    path: str
    rule: MatchRule


def _dup(path: str, reason: str) -> PydanticCustomError:
    return PydanticCustomError("policy_conflict", "{reason}", {"path": path, "reason": reason})


class Policy(BaseModel):
    """The allowlist: cards, slices per card, GPU classes and vendors, deny rules."""

    model_config = _STRICT
    version: Annotated[int, Field(ge=1, le=1, description="policy format version")] = 1
    slices_per_card: Annotated[int, Field(ge=2, le=0xFFFF)] = SLICES_PER_CARD
    fail_requests_greater_than_one: bool = True
    gpu_classes: list[HexId] = list(GPU_CLASSES)
    companion_classes: list[HexId] = list(COMPANION_CLASSES)
    gpu_vendors: list[HexId] = [NVIDIA]
    cards: list[Card] = []
    deny: list[DenyRule] = []

    @model_validator(mode="after")
    def _no_duplicates(self):
        seen_ids: dict[str, int] = {}
        seen_aliases: dict[str, str] = {}
        seen_rules: dict[tuple, str] = {}
        for i, card in enumerate(self.cards):
            if card.id in seen_ids:
                raise _dup(f"cards[{i}].id", f"duplicate card id {card.id!r} (also cards[{seen_ids[card.id]}])")
            seen_ids[card.id] = i
            for j, alias in enumerate(card.aliases):
                folded = " ".join(alias.casefold().split())
                if folded in seen_aliases:
                    raise _dup(f"cards[{i}].aliases[{j}]",
                               f"alias {alias!r} already names {seen_aliases[folded]}")
                seen_aliases[folded] = card.id
            for j, rule in enumerate(card.match):
                here = f"cards[{i}].match[{j}]"
                if rule.key in seen_rules:
                    raise _dup(here, f"rule {rule} duplicates {seen_rules[rule.key]}")
                seen_rules[rule.key] = here
        for j, rule in enumerate(self.deny):
            here = f"deny[{j}]"
            if rule.key in seen_rules:
                raise _dup(here, f"rule {rule} duplicates {seen_rules[rule.key]}")
            seen_rules[rule.key] = here
        for name in ("gpu_classes", "companion_classes", "gpu_vendors"):
            seen: set[int] = set()  # one pass: a list.index per value made long lists quadratic
            for j, v in enumerate(getattr(self, name)):
                if v in seen:
                    raise _dup(f"{name}[{j}]", f"duplicate {v:04x}")
                seen.add(v)
        return self

    # -- construction -------------------------------------------------------------

    @classmethod
    def default(cls) -> "Policy":
        """The platform allowlist, exactly."""
        return cls.model_validate(copy.deepcopy(DEFAULT_POLICY))

    @classmethod
    def from_data(cls, data: Any, *, source: str | None = None, ids_as_text: bool = False) -> "Policy":
        """Validate a parsed document; errors become a PolicyError with the field path."""
        if not isinstance(data, dict):
            raise PolicyError("", f"a policy is a mapping, not {type(data).__name__}", source=source)
        try:
            return cls.model_validate(data, context={"ids_as_text": ids_as_text})
        except ValidationError as exc:
            raise _policy_error(exc, source) from None

    @classmethod
    def loads(cls, text: str | bytes, format: str, *, source: str | None = None) -> "Policy":
        """Parse and validate a policy document in ``format`` (json, yaml or toml)."""
        return cls.from_data(parse_document(text, format, source), source=source, ids_as_text=True)

    @classmethod
    def load(cls, path: str | os.PathLike, format: str | None = None) -> "Policy":
        """Read a policy file; the format follows the suffix unless given."""
        text, fmt, source = read_document(path, format)
        return cls.loads(text, fmt, source=source)

    def dumps(self, format: str = "json") -> str:
        """The policy as a document; IDs as hex strings, absent fields left out."""
        return dump_document(self.model_dump(mode="json", exclude_none=True), format)

    def save(self, path: str | os.PathLike, format: str | None = None) -> Path:
        """Write the policy; the format follows the suffix unless given."""
        p = Path(path)
        p.write_text(self.dumps(format or format_for(p)), encoding="utf-8")
        return p

    def compiled(self) -> CompiledPolicy:
        """This policy compiled for the kernels (one cached copy per distinct policy)."""
        return compile_data(self.model_dump(mode="python"))

    # -- queries ------------------------------------------------------------------

    def card_slices(self, card: Card) -> int:
        """Slices one physical card of this model exposes."""
        return card.slices if card.slices is not None else self.slices_per_card

    def card_by_id(self, card_id: str) -> Card | None:
        return next((c for c in self.cards if c.id == card_id), None)

    def match(self, vendor: int, device: int, subvendor: int | None = None,
              subdevice: int | None = None) -> RuleMatch | None:
        """The most specific rule for one device, or None (the kernels do this in bulk)."""
        hit = self.compiled().rule_for(vendor, device, subvendor, subdevice)
        if hit is None:
            return None
        if hit.card < 0:
            return RuleMatch(None, -1, f"deny[{hit.rule}]", self.deny[hit.rule])
        card = self.cards[hit.card]
        return RuleMatch(card, hit.card, f"cards[{hit.card}].match[{hit.rule}]", card.match[hit.rule])


def _loc_path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _did_you_mean(word: str, choices) -> str:
    import difflib

    choices = sorted(choices)
    close = [c for c in choices if word and c.startswith(word)][:1] or \
        difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _policy_error(exc: ValidationError, source: str | None) -> PolicyError:
    raw = []
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        raw.append((loc, err))
    # a misspelled key is an unknown field beside a missing one: name both in one problem
    # ("unknown field 'kernel_modul' (did you mean 'kernel_module'?)"), and put it first, not
    # among "and 3 more" behind the missing field it stands for
    unknown = {loc[:-1]: [] for loc, err in raw if err["type"] == "extra_forbidden"}
    for loc, err in raw:
        if err["type"] == "extra_forbidden":
            unknown[loc[:-1]].append(str(loc[-1]))
    missing = {loc for loc, err in raw if err["type"] == "missing"}
    first, rest = [], []
    for loc, err in raw:
        path = _loc_path(loc)
        ctx = err.get("ctx") or {}
        if "path" in ctx:  # a model-level check that knows which field it is about
            path = f"{path}.{ctx['path']}" if path else ctx["path"]
        reason = ctx.get("reason", err["msg"])
        if err["type"] == "extra_forbidden":
            siblings = [str(m[-1]) for m in missing if m[:-1] == loc[:-1]]
            fields = _fields_at(loc[:-1])
            reason = f"unknown field {loc[-1]!r}{_did_you_mean(str(loc[-1]), siblings or fields)}"
            first.append((path, reason))
            continue
        if err["type"] == "missing" and any(
                _did_you_mean(str(loc[-1]), [u]) for u in unknown.get(loc[:-1], ())):
            continue  # said by the unknown field that misspells it
        rest.append((path, reason))
    errors = first + rest
    path, reason = errors[0]
    return PolicyError(path, reason, errors, source)


def _fields_at(loc: tuple) -> list[str]:
    """The field names of the model at ``loc`` of a policy document."""
    model: Any = Policy
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        if field is None:
            return []
        inner = {"cards": Card, "match": MatchRule, "deny": DenyRule}.get(part)
        if inner is None:
            return []
        model = inner
    return list(model.model_fields)


def load_policy(path: str | os.PathLike | None = None) -> Policy:
    """The policy in ``path``, or the default allowlist when None."""
    return Policy.default() if path is None else Policy.load(path)
