"""The matcher pair's contract: compiled tables, argument checks, range errors.

Both versions (``match.pxi`` compiled into ``gpuclass._core``, and ``match_py.py``)
take the same :class:`MatchTables` and call the same argument preparation, so they
accept and reject exactly the same inputs with exactly the same errors.  Status
codes, flags and rollup columns are gpuclass.constants'.  Nothing here imports
pydantic: a provisioner that classifies with the default policy never pays for it.

>>> t = build_match_tables([(0x10de, 0x27b0, None, None, 0)], card_slices=[4])
>>> int(t.vendor_lut[0x10de]) == VL_GPU_VENDOR | VL_RULES
True
>>> t.dev_keys.tolist() == [0x10de27b0]
True
"""

from typing import Any, NamedTuple, Sequence

import numpy as np

from ...constants import COMPANION_CLASSES, GPU_CLASSES, NVIDIA
from ...errors import InputError
from .args import as_id_array, as_int64, as_unsigned, contiguous, usable_cpus
from .rules import MAX_CARDS, MAX_DEVICES, RuleMaps, compile_rules

__all__ = [
    "VL_GPU_VENDOR", "VL_RULES", "CL_GPU", "CL_COMPANION",
    "MatchTables", "MatchArgs", "build_match_tables", "tables_from_rules", "prepare_match_args",
    "prepare_match_out", "match_threads", "ROWS_PER_THREAD", "MAX_THREADS",
    "class_range_error", "check_tables", "tables_content",
    "MAX_CARDS",
    "MAX_DEVICES",
]

# Bits of the 64 Ki-entry lookup tables indexed by vendor ID and by class >> 8.
VL_GPU_VENDOR = 1     # a GPU of this vendor that no rule allows is "unsupported"
VL_RULES = 2          # some rule names this vendor: worth a device lookup
CL_GPU = 1            # a GPU class (0x0300, 0x0302 by default)
CL_COMPANION = 2      # a companion class (audio, USB, UCSI) used when addresses are unknown



class MatchTables(NamedTuple):
    """A policy compiled for the kernels: flat numpy arrays, no Python objects per rule.

    ``dev_keys`` (``vendor << 16 | device``, sorted) index ``dev_card`` (the
    device-level rule's card, -1 for none or deny) and the CSR ranges
    ``sub_offsets`` into ``sub_keys`` (``subvendor << 16 | subdevice``) and
    ``sub_card`` (-1 for deny).  ``dev_lut[(vendor_block[vendor] & 0x7fff) << 16 | device]``
    holds 1 + the device-level card (0: none) and, in bit 15, whether subsystem
    rules exist: two loads and no branch per device, 128 KiB per vendor with rules.
    """

    vendor_lut: np.ndarray   # uint8[65536]
    class_lut: np.ndarray    # uint8[65536], indexed by class_code >> 8
    dev_keys: np.ndarray     # uint32[n_dev]
    dev_card: np.ndarray     # int16[n_dev]
    sub_offsets: np.ndarray  # int32[n_dev + 1]
    sub_keys: np.ndarray     # uint32[n_sub]
    sub_card: np.ndarray     # int16[n_sub]
    card_slices: np.ndarray  # uint16[n_cards]
    vendor_block: np.ndarray # uint16[65536]: GPU-vendor bit 15 | block of dev_lut (0: no rules)
    dev_lut: np.ndarray      # uint16[n_blocks * 65536]: subsystem-rules bit 15 | 1 + device card

    @property
    def n_cards(self) -> int:
        return int(self.card_slices.shape[0])


def build_match_tables(
    rules: Sequence[tuple],
    card_slices: Sequence[int],
    gpu_classes: Sequence[int] = GPU_CLASSES,
    companion_classes: Sequence[int] = COMPANION_CLASSES,
    gpu_vendors: Sequence[int] = (NVIDIA,),
) -> MatchTables:
    """Compile rules ``(vendor, device, subvendor|None, subdevice|None, card)`` into tables.

    ``card`` is an index into ``card_slices``, or -1 for a deny rule.  A rule
    with a subsystem beats the rule without one for the same device; two rules
    for the same key are an error.  Vendors of allow rules count as GPU vendors.
    The rules are checked, and their precedence decided, by
    :func:`~gpuclass._native.contract.rules.compile_rules` (numpy-free).
    """
    maps = compile_rules(rules, card_slices, gpu_classes, companion_classes, gpu_vendors)
    return tables_from_rules(maps)


def tables_from_rules(maps: RuleMaps) -> MatchTables:
    """:func:`compile_rules`' maps laid out as the kernels' tables (read-only)."""
    slices = np.array(maps.card_slices, dtype=np.uint16)
    vendor_lut = np.zeros(65536, dtype=np.uint8)
    vendor_lut[sorted(maps.gpu_vendors)] |= VL_GPU_VENDOR
    vendor_lut[sorted(maps.rule_vendors)] |= VL_RULES
    class_lut = np.zeros(65536, dtype=np.uint8)
    class_lut[sorted(maps.gpu_classes)] |= CL_GPU
    class_lut[sorted(maps.companion_classes)] |= CL_COMPANION

    keys = sorted(maps.devices)
    n_dev = len(keys)
    dev_keys = np.array(keys, dtype=np.uint32)
    dev_card = np.array([maps.devices[k][0] for k in keys], dtype=np.int16)
    sub_offsets = np.zeros(n_dev + 1, dtype=np.int32)
    skeys: list[int] = []
    scards: list[int] = []
    for i, k in enumerate(keys):
        subs = maps.devices[k][1]
        for sk in sorted(subs):
            skeys.append(sk)
            scards.append(subs[sk])
        sub_offsets[i + 1] = len(skeys)
    sub_keys = np.array(skeys, dtype=np.uint32)
    sub_card = np.array(scards, dtype=np.int16)

    # Vendors with rules get a 64 Ki-entry block of per-device entries; block 0
    # (every other vendor) is all zeros, so the kernel looks up without a branch.
    # vendor_block: bit 15 = GPU vendor, bits 0-14 = block.  dev_lut entry:
    # bits 0-14 = 1 + the device-level rule's card (0: none or deny), bit 15 =
    # subsystem rules exist (the kernel then searches dev_keys, rarely).
    rule_vendors = sorted({k >> 16 for k in keys})
    vendor_block = np.zeros(65536, dtype=np.uint16)
    dev_lut = np.zeros((1 + len(rule_vendors)) * 65536, dtype=np.uint16)
    for b, v in enumerate(rule_vendors, start=1):
        vendor_block[v] = b
    vendor_block |= ((vendor_lut & VL_GPU_VENDOR) != 0).astype(np.uint16) << 15
    for i, k in enumerate(keys):
        has_subs = sub_offsets[i + 1] > sub_offsets[i]
        entry = (int(dev_card[i]) + 1) | (0x8000 if has_subs else 0)
        dev_lut[(int(vendor_block[k >> 16]) & 0x7FFF) << 16 | (k & 0xFFFF)] = entry
    tables = MatchTables(vendor_lut, class_lut, dev_keys, dev_card, sub_offsets, sub_keys,
                         sub_card, slices, vendor_block, dev_lut)
    # Read-only from here on: checked once, the tables can be trusted on every call
    # (see check_tables) and the compiled core may derive its own layout from them.
    for a in tables:
        a.flags.writeable = False
    return tables


# Tables already checked, by identity.  Only tables whose arrays are all
# read-only are remembered (build_match_tables makes them so): their contents
# cannot change behind the cache's back, so a policy applied to many small
# batches is checked once, not once per call.
_CHECKED: dict[int, MatchTables] = {}
_CHECKED_MAX = 16


def is_frozen(t: MatchTables) -> bool:
    """Whether every array of ``t`` is read-only and owns its memory."""
    for a in t:
        if a.flags.writeable or a.base is not None:
            return False
    return True


def tables_content(t: MatchTables) -> bytes:
    """The content of compiled tables as bytes (equal tables, equal bytes; a few hundred KiB)."""
    return b"".join(f"{a.dtype}{a.shape}".encode() + np.ascontiguousarray(a).tobytes() for a in t)


def check_tables(t) -> MatchTables:
    """Tables as the kernels expect them; anything else is an InputError, never a crash."""
    if _CHECKED.get(id(t)) is t:
        return t
    if not isinstance(t, MatchTables):
        raise InputError(f"tables: expected MatchTables, got {type(t).__name__}")
    _check_tables_full(t)
    if is_frozen(t):
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.pop(next(iter(_CHECKED)))
        _CHECKED[id(t)] = t
    return t


def _check_tables_full(t: MatchTables) -> None:
    want = (("vendor_lut", np.uint8), ("class_lut", np.uint8), ("dev_keys", np.uint32),
            ("dev_card", np.int16), ("sub_offsets", np.int32), ("sub_keys", np.uint32),
            ("sub_card", np.int16), ("card_slices", np.uint16), ("vendor_block", np.uint16),
            ("dev_lut", np.uint16))
    for name, dtype in want:
        a = getattr(t, name)
        if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != 1 or not a.flags.c_contiguous:
            raise InputError(f"tables.{name}: expected a contiguous 1-D {np.dtype(dtype)} array")
    n_dev = t.dev_keys.shape[0]
    lut = t.dev_lut.shape[0]
    if (t.vendor_lut.shape[0] != 65536 or t.class_lut.shape[0] != 65536
            or t.vendor_block.shape[0] != 65536
            or t.dev_card.shape[0] != n_dev or t.sub_offsets.shape[0] != n_dev + 1
            or t.sub_card.shape[0] != t.sub_keys.shape[0]
            or lut == 0 or lut % 65536 or int((t.vendor_block & 0x7FFF).max()) >= lut // 65536):
        raise InputError("tables: inconsistent shapes (build them with build_match_tables)")
    if n_dev and (int(t.sub_offsets[0]) != 0 or int(t.sub_offsets[-1]) != t.sub_keys.shape[0]
                  or bool(np.any(np.diff(t.sub_offsets) < 0))):
        raise InputError("tables.sub_offsets: not a valid CSR index")
    n_cards = t.card_slices.shape[0]
    for name in ("dev_card", "sub_card"):
        a = getattr(t, name)
        if a.size and (int(a.min()) < -1 or int(a.max()) >= n_cards):
            raise InputError(f"tables.{name}: card index out of range")
    if int((t.dev_lut & 0x7FFF).max()) > n_cards:
        raise InputError("tables.dev_lut: card out of range")


class MatchArgs(NamedTuple):
    """Inputs of ``match_devices`` after checks: contiguous arrays or None, and the length."""

    n: int
    vendor: np.ndarray
    device: np.ndarray
    subvendor: np.ndarray | None
    subdevice: np.ndarray | None
    class_code: np.ndarray
    has_subsystem: np.ndarray | None   # uint8 view of a bool mask
    flags: np.ndarray | None
    group: np.ndarray | None           # int64
    domain: np.ndarray | None          # uint32
    bus: np.ndarray | None             # uint8
    slot: np.ndarray | None            # uint8, checked <= 31


def _same_length(arr: np.ndarray, n: int, name: str) -> None:
    if arr.shape[0] != n:
        raise InputError(f"{name}: length {arr.shape[0]} does not match vendor's length {n}")


def prepare_match_args(tables, vendor, device, subvendor, subdevice, class_code,
                       has_subsystem, flags, group, domain, bus, slot) -> tuple[MatchTables, MatchArgs]:
    """Check and convert ``match_devices``' arguments (shared by both cores)."""
    t = check_tables(tables)
    v = contiguous(as_id_array(vendor, "vendor"))
    n = v.shape[0]
    d = contiguous(as_id_array(device, "device"))
    _same_length(d, n, "device")
    if class_code is None:
        raise InputError("class_code: required")
    c = np.asarray(class_code)
    # uint32 passes straight to the kernel, which range-checks it in the same loop.
    c = contiguous(c if c.dtype == np.uint32 and c.ndim == 1 else as_id_array(c, "class_code", bits=24))
    _same_length(c, n, "class_code")
    if (subvendor is None) != (subdevice is None):
        raise InputError("subvendor and subdevice: give both or neither")
    sv = sd = hs = None
    if subvendor is not None:
        sv = contiguous(as_id_array(subvendor, "subvendor"))
        sd = contiguous(as_id_array(subdevice, "subdevice"))
        _same_length(sv, n, "subvendor")
        _same_length(sd, n, "subdevice")
        if has_subsystem is not None:
            m = np.asarray(has_subsystem)
            if m.ndim != 1:
                raise InputError(f"has_subsystem: expected a 1-D array, got shape {m.shape}")
            if m.dtype != np.bool_:
                # an empty list is an empty mask (numpy gives it a float dtype)
                if m.size and (m.dtype.kind not in "iu" or not bool(np.all((m == 0) | (m == 1)))):
                    raise InputError(f"has_subsystem: expected a boolean mask, got dtype {m.dtype}")
                m = m.astype(np.bool_)
            _same_length(m, n, "has_subsystem")
            hs = contiguous(m).view(np.uint8)
    elif has_subsystem is not None:
        raise InputError("has_subsystem: given without subvendor and subdevice")
    f = None
    if flags is not None:
        f = contiguous(as_unsigned(flags, "flags", np.uint32, 0xFFFFFFFF))
        _same_length(f, n, "flags")
    g = None
    if group is not None:
        g = contiguous(as_int64(group, "group"))
        _same_length(g, n, "group")
    addr = (domain, bus, slot)
    dm = bs = sl = None
    if any(a is not None for a in addr):
        if any(a is None for a in addr):
            raise InputError("domain, bus and slot: give all three or none")
        dm = contiguous(as_unsigned(domain, "domain", np.uint32, 0xFFFFFFFF))
        bs = contiguous(as_unsigned(bus, "bus", np.uint8, 0xFF))
        sl = contiguous(as_unsigned(slot, "slot", np.uint8, 0x1F))
        if sl.size and int(sl.max()) > 0x1F:
            at = int(np.argmax(sl))
            raise InputError(f"slot: value {int(sl[at]):#x} at index {at} exceeds 0x1f")
        for a, name in ((dm, "domain"), (bs, "bus"), (sl, "slot")):
            _same_length(a, n, name)
    return t, MatchArgs(n, v, d, sv, sd, c, hs, f, g, dm, bs, sl)


#: Rows a thread of one ``match_devices`` call takes at the least: below about a quarter
#: of a million (a fraction of a millisecond) a thread costs more than it saves.
ROWS_PER_THREAD = 1 << 18
#: Threads of one call at the most by default: the kernel is bound by memory beyond that.
MAX_THREADS = 4


def match_threads(threads: Any, n: int) -> int:
    """The threads that share ``match_devices``' ``n`` rows (shared by both cores, which
    give the same answers on any number): ``threads`` is at most that many (None: the
    usable CPUs, at most :data:`MAX_THREADS`), each taking at least
    :data:`ROWS_PER_THREAD` rows.

    >>> match_threads(None, 1000), match_threads(8, 3 * ROWS_PER_THREAD), match_threads(1, 10**8)
    (1, 3, 1)
    >>> match_threads(0, 10)
    Traceback (most recent call last):
    gpuclass.errors.InputError: threads: expected a positive integer or None, got 0
    """
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise InputError(f"threads: expected a positive integer or None, got {threads!r}")
    most = n // ROWS_PER_THREAD
    if most < 2:
        return 1
    want = min(usable_cpus(), MAX_THREADS) if threads is None else int(threads)
    return max(1, min(want, most, 16))


_OUT = (("status", np.uint8), ("card", np.int16), ("slices", np.uint16))
# the outputs' dtypes, in order (also those of the compiled core's kept memory: match.pxi)
OUT_DTYPES = tuple(np.dtype(d) for _, d in _OUT)


def prepare_match_out(out: Any, a: MatchArgs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check ``match_devices``' ``out`` (shared by both cores): three writeable, C-contiguous
    1-D arrays of ``a.n`` items, uint8, int16 and uint16 (status, card, slices), none of
    which may share memory with another or with an input (the kernel reads a row's inputs
    and writes its outputs in one pass); None gives three new arrays.

    >>> args = prepare_match_args(build_match_tables([], [4]), [0x10DE], [0x27B0], None, None, [0x030000],
    ...                           None, None, None, None, None, None)[1]
    >>> [x.dtype.name for x in prepare_match_out(None, args)]
    ['uint8', 'int16', 'uint16']
    >>> prepare_match_out([np.empty(1, np.uint8)] * 3, args)
    Traceback (most recent call last):
    gpuclass.errors.InputError: out[1] (card): expected a writeable, contiguous 1-D int16 array of 1 items
    """
    n = a.n
    if out is None:
        return tuple(np.empty(n, d) for d in OUT_DTYPES)
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        raise InputError("out: expected three arrays (status, card, slices)")
    for k, (arr, (name, dtype)) in enumerate(zip(out, _OUT)):
        if (not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.ndim != 1 or arr.shape[0] != n
                or not arr.flags.c_contiguous or not arr.flags.writeable):
            raise InputError(f"out[{k}] ({name}): expected a writeable, contiguous 1-D "
                             f"{np.dtype(dtype).name} array of {n} items")
    inputs = [x for x in a[1:] if isinstance(x, np.ndarray)]
    for k, arr in enumerate(out):
        if n and any(np.may_share_memory(arr, x) for x in [*out[k + 1:], *inputs]):
            raise InputError(f"out[{k}] ({_OUT[k][0]}): shares memory with another array of the call")
    return out[0], out[1], out[2]


def class_range_error(class_code: np.ndarray, at: int) -> InputError:
    return InputError(f"class_code: value {int(class_code[at]):#x} at index {at} exceeds 0xffffff")
