"""The only place an audit's sentences and labels are made: reasons, card cells, unsupported-GPU
entries, problems.

Every engine and every sink renders through these functions, so a server reads the same
whichever door it came through: a report's ``reason`` (:func:`reason`), its ``cards`` cell
(:func:`cards_cell`), each unsupported GPU (:func:`unsupported_entry` of the label that
:func:`gpuclass.pcinames.unsupported_label` makes), each problem (:func:`problem` and the
named sentences below).  A device audit's text columns (:func:`device_texts`) call the
same functions once per distinct outcome and place the texts a column at a time.

>>> reason([(2, "GeForce GTX 1080")], 8, [], 0, [])
'2x GeForce GTX 1080: 8 slices'
>>> reason([], 0, ["1x TU102GL [Quadro RTX 6000/8000] (10de:1e30)"], 1, [])
'unsupported GPU only: 1x TU102GL [Quadro RTX 6000/8000] (10de:1e30)'
>>> problem(3, "vendor 'zz' is not a hex ID")
"row 4: vendor 'zz' is not a hex ID"
"""

from __future__ import annotations


TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

from .results.columns import PASSTHROUGH

__all__ = ["reason", "cards_cell", "finish", "conflicts", "device_conflicts", "card_entries", "rule_evidence", "unsupported_entry",
           "unsupported_entries", "problem", "flat_row", "cell_value", "device_texts", "NO_SERVER",
           "NO_DESCRIPTION", "NO_ID", "GPU_SPECIAL", "EMPTY_DUMP", "duplicate_id", "ambiguous",
           "editions", "look_alike_letters", "not_a_dump", "unreadable_line", "cannot_read"]

NO_SERVER = "row has no server name"
NO_DESCRIPTION = "record has no description"
NO_ID = "record has no id"
GPU_SPECIAL = "specials list GPU but no card name is recognisable"
EMPTY_DUMP = "empty lspci dump"


def duplicate_id(server: str, first: int) -> str:
    return f"duplicate server id {server!r} (first at row {first})"


def ambiguous(words: str, name: str) -> str:
    return f"{words!r} does not say which card: {name}"


def editions(words: str, names: str, counted_as: str) -> str:
    return f"{words!r} does not say which edition: {names}; counted as {counted_as}"


def look_alike_letters(words: str, name: str | None, letters: str) -> str:
    """A name a listing writes with letters of another script that only look Latin (``name``
    None: a name the letters change, say in an aside, rather than make)."""
    says = f"names {name}" if name is not None else "reads otherwise"
    return f"{words!r} {says} only with {letters} read as Latin letters: look-alike letters, not counted"


def not_a_dump(reason_text: str) -> str:
    return f"not an lspci dump: {reason_text}"


def unreadable_line(text: str) -> str:
    return f"unreadable line: {text}"


def cannot_read(exc: object) -> str:
    return f"cannot read: {exc}"


def conflicts(compiled: Any, cards: Any) -> list[str]:
    """The problems of a server holding the card models ``cards`` (indices into the
    policy's cards) that cannot be provisioned together: the one node decision's
    conflicts (:func:`gpuclass.policy.nodes.decide_node`), as every door reports them."""
    from ..policy.nodes import decide_node

    present = sorted(set(cards))
    if len(present) < 2:
        return []
    decided = decide_node([compiled.cards[i] for i in present], compiled.slices_per_card)
    return [f"cards conflict, no GPU label: {text}" for text in decided.conflicts]


def device_conflicts(compiled: Any, counts: Any) -> dict[int, list[str]]:
    """:func:`conflicts` of each server of a device audit that holds two card models or more
    (``counts``: servers x cards), decided once per distinct set of models."""
    import numpy as np

    from .pool import pooled_empty

    out: dict[int, list[str]] = {}
    if not counts.size:
        return out
    # the models each server holds, counted a card column at a time (``counts`` may be a
    # cards x servers block seen transposed: each column is then one contiguous row); a
    # count saturates at 2, all the test below needs.  Two arrays in all, from the pool: a
    # temporary per card column was a fresh mapping each (a Dask worker's glibc maps and
    # unmaps every large block)
    several = pooled_empty(counts.shape[0], np.uint8)
    several.fill(0)
    held = pooled_empty(counts.shape[0], np.bool_)
    for c in range(counts.shape[1]):
        np.greater(counts[:, c], 0, out=held)
        np.add(several, held, out=several)
        np.minimum(several, 2, out=several)
    decided: dict[tuple[int, ...], list[str]] = {}
    for g in np.flatnonzero(np.greater(several, 1, out=held)).tolist():
        models = tuple(np.flatnonzero(counts[g] > 0).tolist())
        found = decided.get(models)
        if found is None:
            found = decided[models] = conflicts(compiled, models)
        if found:
            out[g] = found
    return out


def problem(row: int | None, text: str, offset: int = 0) -> str:
    """A problem of one input row (``row`` 0-based within its source, less ``offset``: a
    partition's own numbering), or of the server as a whole (``row`` None)."""
    return text if row is None else f"row {row + offset + 1}: {text}"


def unsupported_entry(label: str, count: int) -> str:
    """One unsupported GPU model of a server: ``"2x label"``."""
    return f"{count}x {label}"


def cards_cell(cards: Sequence[tuple[str, int]]) -> str:
    """The flat ``cards`` cell: ``"gtx-1080 x2; rtx-6000-ada x1"`` (card id, count)."""
    return "; ".join(f"{card} x{count}" for card, count in cards)


def reason(cards: Sequence[tuple[int, str]], slices: int, unsupported: Sequence[str], unsupported_gpus: int,
           problems: Sequence[str]) -> str:
    """Why a server is (not) GPU-capable, in one line: its cards ``(count, name)`` and their
    slices (and how many unsupported GPUs sit beside them); else its unsupported GPUs
    (:func:`unsupported_entry` texts); else its first problem; else no GPU."""
    if cards:
        text = ", ".join(f"{k}x {name}" for k, name in cards) + f": {slices} slices"
        if unsupported_gpus:
            text += f"; mixed with {unsupported_gpus} unsupported GPU(s)"
        return text
    if unsupported_gpus:
        return "unsupported GPU only: " + ", ".join(unsupported)
    if problems:
        return "flagged: " + problems[0]
    return "no GPU"


def finish(r: Any) -> Any:
    """Fill in ``supported_cards``, ``slices``, ``gpu_capable`` and the reason from the
    cards, unsupported GPUs and problems found."""
    r.supported_cards = sum(c["count"] for c in r.cards)
    r.slices = sum(c["slices"] for c in r.cards)
    r.gpu_capable = r.supported_cards > 0
    r.reason = reason([(c["count"], c["name"]) for c in r.cards], r.slices, r.unsupported, r.unsupported_gpus,
                      r.problems)
    return r


def card_entries(compiled: Any, counts: dict[int, int], source: str,
                 evidence: dict[int, str]) -> list[dict[str, Any]]:
    """A report's ``cards``: one entry per supported model (in the policy's order), from a
    rollup's card counts."""
    out = []
    for ci, k in sorted(counts.items()):
        if not k:
            continue
        card = compiled.cards[ci]
        out.append({"card": card["id"], "name": card["name"], "count": k,
                    "slices": k * card["slices"], "source": source, "evidence": evidence.get(ci, "")})
    return out


def rule_evidence(compiled: Any) -> dict[int, str]:
    """What a device audit shows as the evidence of a card found by ID: its rules' IDs."""
    return {i: ", ".join(f"{m[0]:04x}:{m[1]:04x}" for m in c["match"]) for i, c in enumerate(compiled.cards)}


def unsupported_entries(r: Any, labels: dict[str, int]) -> None:
    """Set a report's unsupported GPUs from ``{label: count}`` (in order of first appearance)."""
    r.unsupported = [unsupported_entry(label, n) for label, n in labels.items()]
    r.unsupported_gpus = sum(labels.values())


def cell_value(value: Any) -> Any:
    """A passthrough value as a flat cell: scalars as they are, anything else as JSON."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    import json

    return json.dumps(value, ensure_ascii=False)


def flat_row(r: Any, card_ids: Sequence[str]) -> list[Any]:
    """A report as a flat row, in :func:`~gpuclass.audit.results.columns.flat_columns` order."""
    extra = r.extra
    return [r.row, r.source, r.server, r.gpu_capable,
            cards_cell([(c["card"], c["count"]) for c in r.cards]), r.supported_cards, r.slices,
            "; ".join(r.unsupported), r.unsupported_gpus, r.reason, "; ".join(r.problems), r.rows,
            *(r.card_count(c) for c in card_ids),
            *(cell_value(extra.get(k)) for k in PASSTHROUGH)]


# -- a device audit's text columns, a column at a time ----------------------------------------


def _distinct_rows(matrix: Any) -> tuple[Any, Any]:
    """The first row of each distinct row of an int32 matrix, and each row's distinct one
    (``np.unique(axis=0)``'s answer, by a hash of each row confirmed exactly)."""
    import numpy as np

    m = np.ascontiguousarray(matrix, dtype=np.int64)
    h = np.zeros(m.shape[0], np.uint64)
    with np.errstate(over="ignore"):
        for j in range(m.shape[1]):
            h = h * np.uint64(0x9E3779B97F4A7C15) + m[:, j].astype(np.uint64)
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    if not (m[first[inverse]] == m).all():  # two rows that hash alike: the exact way
        _, first, inverse = np.unique(m, axis=0, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _scatter(n: int, default: str, rows: Any, pool: list[str], which: Any) -> Any:
    """A string column of ``n`` rows: ``pool[which[i]]`` at ``rows[i]``, ``default`` elsewhere."""
    import numpy as np
    import pyarrow as pa

    index = np.zeros(n, np.int64)
    index[rows] = np.asarray(which, np.int64) + 1
    from .arrowfn import from_numpy

    return pa.array([default, *pool], pa.string()).take(from_numpy(index))


def device_texts(compiled: Any, counts: Any, slices: Any, unsupported_gpus: Any,
                 unsupported: dict[int, list[str]], problems: dict[int, list[str]],
                 sentences: bool = True) -> dict[str, Any]:
    """The ``cards``, ``unsupported`` and ``reason`` columns (pyarrow strings) of a device
    audit's servers: ``counts`` (servers, cards) int32, ``slices`` and ``unsupported_gpus``
    per server, ``unsupported`` each server's :func:`unsupported_entry` texts and
    ``problems`` each flagged server's problems (only the servers that have some).  Without
    ``sentences``, only ``unsupported``."""
    import numpy as np

    n = len(slices)
    uns_rows = sorted(unsupported)
    uns_pool = ["; ".join(unsupported[g]) for g in uns_rows]
    out = {"unsupported": _scatter(n, "", np.array(uns_rows, np.int64), uns_pool, np.arange(len(uns_rows)))}
    if not sentences:
        return out
    ids = [c["id"] for c in compiled.cards]
    names = [c["name"] for c in compiled.cards]
    supported = counts.sum(axis=1) if counts.size else np.zeros(n, np.int64)
    cap = np.flatnonzero(supported > 0)
    key = np.column_stack([counts[cap], slices[cap], unsupported_gpus[cap]]) if len(cap) else \
        np.zeros((0, len(ids) + 2), np.int64)
    first, which = _distinct_rows(key) if len(cap) else (np.empty(0, np.int64), np.empty(0, np.int64))
    card_pool, reason_pool = [], []
    for rep in first.tolist():
        row = key[rep].tolist()
        held = [(j, k) for j, k in enumerate(row[:len(ids)]) if k]
        card_pool.append(cards_cell([(ids[j], k) for j, k in held]))
        reason_pool.append(reason([(k, names[j]) for j, k in held], row[-2], [], row[-1], []))
    out["cards"] = _scatter(n, "", cap, card_pool, which)
    # the few servers with unsupported GPUs or problems and no card: one at a time
    other = sorted(g for g in {*unsupported, *problems} if not supported[g])
    other_pool = [reason([], 0, unsupported.get(g, []), int(unsupported_gpus[g]), problems.get(g, []))
                  for g in other]
    rows = np.concatenate([cap, np.array(other, np.int64)])
    pool = reason_pool + other_pool
    out["reason"] = _scatter(n, reason([], 0, [], 0, []), rows, pool,
                             np.concatenate([which, len(reason_pool) + np.arange(len(other))]).astype(np.int64))
    return out
