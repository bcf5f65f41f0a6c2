"""The matcher's rules as plain Python data, and the per-device rule over lists: no numpy.

:func:`compile_rules` checks a policy's rules and is where their precedence is decided (a
rule with a subsystem beats the device's rule without one; two rules for one key are an
error): :func:`~gpuclass._native.contract.match.build_match_tables` lays its result out as
the kernels' tables, so the two can never disagree on what a policy means.
:func:`match_rows` is the per-device rule of ``match_devices`` over Python lists: the twin
(``match_py``) runs it on maps read back from the tables, and a process that classifies a
machine's few devices can run it on :func:`compile_rules`' maps without loading numpy.
``tests/native/test_match_rules.py`` holds it equal to the compiled kernel.

>>> maps = compile_rules([(0x10de, 0x27b0, None, None, 0)], card_slices=[4])
>>> match_rows(maps, [0x10de, 0x10de], [0x27b0, 0x27b2], None, None, [0x030000, 0x030000])
([1, 2], [0, -1], [4, 0])
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple, Sequence
else:  # no typing at run time: a scan's start imports this
    from ...lazy import NamedTuple

from ... import constants as C
from ...constants import COMPANION_CLASSES, GPU_CLASSES, NVIDIA
from ...errors import InputError

__all__ = ["RuleMaps", "compile_rules", "match_rows", "MAX_CARDS", "MAX_DEVICES", "MAX_RULE_VENDORS"]

MAX_CARDS = 32766      # card indices are int16 (-1: none); 1 + card fits 15 bits of dev_lut
MAX_DEVICES = 65535    # dev_lut holds 1 + position in uint16
MAX_RULE_VENDORS = 0x7FFE  # vendor_block holds a dev_lut block in 15 bits


class RuleMaps(NamedTuple):
    """A policy's rules, checked: ``devices`` maps ``vendor << 16 | device`` to the
    device-level rule's card (-1: none or deny) and the ``subvendor << 16 | subdevice``
    rules of that device (card, -1 deny)."""

    devices: dict[int, tuple[int, dict[int, int]]]
    card_slices: tuple[int, ...]
    gpu_vendors: frozenset[int]      # the given GPU vendors and the vendors of allow rules
    rule_vendors: frozenset[int]     # vendors some rule names
    gpu_classes: frozenset[int]      # class >> 8
    companion_classes: frozenset[int]


def _id(value, what: str, bits: int = 16) -> int:
    value = int(value)
    if not 0 <= value < (1 << bits):
        raise InputError(f"{what}: {value:#x} is not a {bits}-bit ID")
    return value


def compile_rules(
    rules: Sequence[tuple],
    card_slices: Sequence[int],
    gpu_classes: Sequence[int] = GPU_CLASSES,
    companion_classes: Sequence[int] = COMPANION_CLASSES,
    gpu_vendors: Sequence[int] = (NVIDIA,),
) -> RuleMaps:
    """Check rules ``(vendor, device, subvendor|None, subdevice|None, card)`` (``card`` an
    index into ``card_slices``, or -1 for a deny rule) into :class:`RuleMaps`."""
    n_cards = len(card_slices)
    if n_cards > MAX_CARDS:
        raise InputError(f"card_slices: at most {MAX_CARDS} cards, got {n_cards}")
    slices = []
    for i, s in enumerate(card_slices):
        s = int(s)
        if not 0 <= s <= 0xFFFF:
            raise InputError(f"card_slices: value {s} at index {i} is not in [0, 65535]")
        slices.append(s)
    vendors = {_id(v, "gpu_vendors") for v in gpu_vendors}
    gpu = {_id(c, "gpu_classes") for c in gpu_classes}
    companions = {_id(c, "companion_classes") for c in companion_classes}

    device_rule: dict[int, int] = {}
    sub_rules: dict[int, dict[int, int]] = {}
    rule_vendors = set()
    for n, rule in enumerate(rules):
        if len(rule) != 5:
            raise InputError(f"rules[{n}]: expected (vendor, device, subvendor, subdevice, card)")
        v, d, sv, sd, card = rule
        v, d, card = _id(v, f"rules[{n}].vendor"), _id(d, f"rules[{n}].device"), int(card)
        if not -1 <= card < n_cards:
            raise InputError(f"rules[{n}].card: {card} is not -1 or a card index below {n_cards}")
        key = v << 16 | d
        rule_vendors.add(v)
        if card >= 0:
            vendors.add(v)
        if (sv is None) != (sd is None):
            raise InputError(f"rules[{n}]: subvendor and subdevice go together")
        if sv is None:
            if key in device_rule:
                raise InputError(f"rules[{n}]: a second rule for {v:04x}:{d:04x}")
            device_rule[key] = card
        else:
            skey = _id(sv, f"rules[{n}].subvendor") << 16 | _id(sd, f"rules[{n}].subdevice")
            subs = sub_rules.setdefault(key, {})
            if skey in subs:
                raise InputError(
                    f"rules[{n}]: a second rule for {v:04x}:{d:04x} subsystem {sv:04x}:{sd:04x}")
            subs[skey] = card
    keys = sorted(set(device_rule) | set(sub_rules))
    if len(keys) > MAX_DEVICES:
        raise InputError(f"rules: at most {MAX_DEVICES} distinct vendor:device pairs, got {len(keys)}")
    if len(rule_vendors) > MAX_RULE_VENDORS:
        raise InputError("rules: too many vendors")
    devices = {k: (device_rule.get(k, -1), dict(sorted(sub_rules.get(k, {}).items()))) for k in keys}
    return RuleMaps(devices, tuple(slices), frozenset(vendors), frozenset(rule_vendors),
                    frozenset(gpu), frozenset(companions))


def match_rows(maps: RuleMaps, vendor: list[int], device: list[int], subvendor: list[int] | None,
               subdevice: list[int] | None, class_code: list[int], has_subsystem: list | None = None,
               flags: list[int] | None = None, group: list[int] | None = None,
               domain: list[int] | None = None, bus: list[int] | None = None,
               slot: list[int] | None = None) -> tuple[list[int], list[int], list[int]]:
    """Status, card index and slices of each device, as lists (the rule of
    ``match_devices``).  The inputs are lists of ints already checked as
    ``match_devices`` checks its arguments (``prepare_match_args``): 16-bit IDs, classes
    of 24 bits, ``domain``/``bus``/``slot`` all or none."""
    n = len(vendor)
    devices, gpu_vendors, rule_vendors = maps.devices, maps.gpu_vendors, maps.rule_vendors
    gpu_classes, companion_classes, card_slices = maps.gpu_classes, maps.companion_classes, maps.card_slices
    flag_list = flags if flags is not None else [0] * n
    have_slots = domain is not None

    status = [C.NOT_GPU] * n
    card = [-1] * n
    slices = [0] * n
    for i in range(n):
        f = flag_list[i]
        if f & C.FLAG_INVALID:
            status[i] = C.INVALID
            continue
        v, base = vendor[i], class_code[i] >> 8
        if base in gpu_classes:
            c = -1
            if v in rule_vendors and (v << 16 | device[i]) in devices:
                c, subs = devices[v << 16 | device[i]]
                if subvendor is not None and (has_subsystem is None or has_subsystem[i]):
                    c = subs.get(subvendor[i] << 16 | subdevice[i], c)
            card[i] = c
            if f & C.FLAG_VF:
                status[i] = C.VIRTUAL_FUNCTION
            elif c >= 0:
                status[i] = C.SUPPORTED
                slices[i] = card_slices[c]
            elif v in gpu_vendors:
                status[i] = C.UNSUPPORTED
        elif (not have_slots and base in companion_classes and v in gpu_vendors
              and not f & C.FLAG_VF):
            status[i] = C.COMPANION

    if have_slots:
        groups = group if group is not None else [0] * n
        keys = list(zip(groups, domain, bus, slot))
        gpu_slots: dict[tuple, int] = {}
        for i in range(n):
            if status[i] in (C.SUPPORTED, C.UNSUPPORTED):
                gpu_slots.setdefault(keys[i], card[i])  # the first GPU function names the card
        for i in range(n):
            if status[i] == C.NOT_GPU and not flag_list[i] & C.FLAG_VF and keys[i] in gpu_slots:
                status[i] = C.COMPANION
                card[i] = gpu_slots[keys[i]]
    return status, card, slices
