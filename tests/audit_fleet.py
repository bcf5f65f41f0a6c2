"""A generated fleet of device rows that exercises every cell rule, with what each server holds.

Each server is made from a truth (its supported cards by card, its unsupported GPUs, its
rows that cannot be read) and written as rows whose cells say the same thing in every way
a device table may: hex in either case, ``0x``, lspci's ``[10de]``, whitespace of the whole
``str.isspace`` set around it (no-break space, U+2003, U+3000, U+202F, U+2009, U+0085,
U+2028, ...), a class of four or six digits; rows of one server scattered through the
table; names with non-ASCII letters; rows that name no server (empty, blank, a Unicode
blank); rows with a bad cell, a missing one, half a subsystem.

:func:`text_fleet` writes every cell as text (the CSV, Parquet and string doors);
:func:`numeric_fleet` a fleet whose cells are integers (bad ones out of range), for the
integer and mixed-type doors, with its text rendering for the text doors.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from gpuclass.policy import compile_policy

# whitespace that str.isspace() calls so (ASCII and Unicode)
BLANKS = (" ", "\t", "\u00a0", "\u2003", "\u3000", "\u202f", "\u2009", "\u0085", "\u2028", "\u2029",
          "\u1680", "\u205f", "\u2000", "\u200a", "\x1c", "\x1f", "\x0b", "\x0c")
UNSUPPORTED = ((0x10DE, 0x1E30), (0x10DE, 0x27B2), (0x10DE, 0x2BB2), (0x10DE, 0x1B81), (0x10DE, 0x1B01))
OTHERS = ((0x10DE, 0x22BC, 0x040300), (0x8086, 0x1572, 0x020000), (0x1A03, 0x2000, 0x030000),
          (0x8086, 0x1A1C, 0x060400), (0x10DE, 0x1AD8, 0x0C0330))
GPU_CLASSES = (0x030000, 0x030200)
# cells that are no ID in any column (a class may have six digits: none here has 5 or 6)
HEX_BAD = ("zz", "1.5", "0x", "[]", "g0", "\u00a0z", "-", "0x1234567", "1234567", "[10de", "10 de", "ïd")
INT_BAD = (-1, -70000, 1 << 24, 1 << 40)
NAMELESS = ("", "  ", "\u3000", "\u00a0", None)


@dataclass
class Truth:
    """What one server holds, as the fleet was made."""

    cards: dict[str, int] = field(default_factory=dict)
    unsupported: int = 0
    bad_rows: int = 0
    rows: int = 0


def _hex_text(value: int, digits: int, rng: random.Random) -> str:
    """``value`` as a cell may write it: case, 0x, brackets, blanks around."""
    text = f"{value:0{digits}x}"
    if rng.random() < 0.3:
        text = text.upper()
    roll = rng.random()
    if roll < 0.15:
        text = "0x" + text
    elif roll < 0.25:
        text = "[" + text + "]"
    elif roll < 0.3:
        text = "0X" + text.upper()
    if rng.random() < 0.3:
        text = "".join(rng.choice(BLANKS) for _ in range(rng.randint(1, 2))) + text
    if rng.random() < 0.3:
        text = text + "".join(rng.choice(BLANKS) for _ in range(rng.randint(1, 2)))
    return text


def _class_text(value: int, rng: random.Random) -> str:
    if value & 0xFF == 0 and rng.random() < 0.5:  # four digits: class and subclass
        return _hex_text(value >> 8, 4, rng)
    return _hex_text(value, 6, rng)


def _names(n: int) -> list[str]:
    words = ("gex44", "gex130", "srv", "sérvér", "ноде", "節點", "host")
    return [f"{words[i % len(words)]}-{i:05d}" for i in range(n)]


def _server_rows(rng: random.Random, compiled, name, truth: Truth, numeric: bool) -> list[list]:
    """The rows of one server: ``[vendor, device, subvendor, subdevice, class]`` as values
    (int, or a string for a bad cell, or None), then made into cells by the caller."""
    rows = []
    for _ in range(rng.choice((0, 1, 1, 1, 2, 2, 4))):
        ci = rng.randrange(len(compiled.cards))
        card = compiled.cards[ci]
        v, d = card["match"][0][:2]
        sub = (0x10DE, rng.choice((0x16FA, 0x16A1, 0x204E))) if rng.random() < 0.6 else (None, None)
        rows.append([v, d, *sub, rng.choice(GPU_CLASSES)])
        truth.cards[card["id"]] = truth.cards.get(card["id"], 0) + 1
    for _ in range(rng.choice((0, 0, 0, 1, 2))):
        v, d = rng.choice(UNSUPPORTED)
        rows.append([v, d, None, None, rng.choice(GPU_CLASSES)])
        truth.unsupported += 1
    for _ in range(rng.randint(0, 3)):
        v, d, c = rng.choice(OTHERS)
        rows.append([v, d, None, None, c])
    for _ in range(rng.choice((0, 0, 0, 0, 1))):  # a row that cannot be read
        v, d = rng.choice(UNSUPPORTED)
        row = [v, d, None, None, 0x030000]
        how = rng.randrange(4)
        if how == 0:
            row[rng.randrange(5)] = rng.choice(INT_BAD) if numeric else rng.choice(HEX_BAD)
            if row[2] is None and row[3] is not None or row[3] is None and row[2] is not None:
                row[2] = row[3] = rng.choice(INT_BAD) if numeric else "zz"
        elif how == 1:
            row[rng.choice((0, 1, 4))] = None  # a required cell missing
        else:
            row[2], row[3] = (0x10DE, None) if how == 2 else (None, 0x16FA)  # half a subsystem
        rows.append(row)
        truth.bad_rows += 1
    truth.rows = len(rows)
    return rows


def _fleet(n_servers: int, seed: int, numeric: bool):
    rng = random.Random(seed)
    compiled = compile_policy()
    truths: dict[str, Truth] = {}
    rows = []
    for name in _names(n_servers):
        t = truths[name] = Truth()
        for values in _server_rows(rng, compiled, name, t, numeric):
            rows.append([name, *values])
    for _ in range(max(1, n_servers // 50)):  # rows that name no server: each a server of its own
        rows.append([rng.choice(NAMELESS), 0x10DE, 0x27B0, None, None, 0x030000])
    # most servers' rows stay together; some are scattered through the table
    order = list(range(len(rows)))
    for _ in range(len(rows) // 20):
        i, j = rng.randrange(len(rows)), rng.randrange(len(rows))
        order[i], order[j] = order[j], order[i]
    return [rows[i] for i in order], {k: t for k, t in truths.items() if t.rows}, rng


_FIELDS = ("vendor", "device", "subvendor", "subdevice", "class")


def text_fleet(n_servers: int = 3000, seed: int = 25):
    """``(rows, truths)``: rows of ``(server, vendor, device, subvendor, subdevice, class)``
    text cells (None: an absent cell), and each named server's :class:`Truth`."""
    rows, truths, rng = _fleet(n_servers, seed, numeric=False)
    out = []
    for server, *values in rows:
        cells = []
        for f, v in zip(_FIELDS, values):
            if v is None:
                cells.append(rng.choice(("", "", None, " ", "\u3000")))
            elif isinstance(v, str):
                cells.append(v)
            elif f == "class":
                cells.append(_class_text(v, rng))
            else:
                cells.append(_hex_text(v, 4, rng))
        out.append((server, *cells))
    return out, truths


def numeric_fleet(n_servers: int = 600, seed: int = 26):
    """``(int_rows, text_rows, truths)``: the same fleet as integer cells (None: missing; a
    bad cell an integer out of range) and as the text a table of text would hold (hex for
    an ID, a class up to ``0xffff`` in four digits; a bad one in decimal)."""
    rows, truths, rng = _fleet(n_servers, seed, numeric=True)
    names = [(None if r[0] is not None and not r[0].strip() else r[0]) for r in rows]
    # a class without a prog-if as an integer up to 0xffff (class and subclass) half the time
    ints = [(name, *r[1:5], r[5] >> 8 if isinstance(r[5], int) and 0 <= r[5] < 1 << 24 and not r[5] & 0xFF
             and rng.random() < 0.5 else r[5]) for name, r in zip(names, rows)]
    rows = ints

    def text(v, f):
        if v is None:
            return None
        bits = 24 if f == "class" else 16
        if not 0 <= v < 1 << bits:
            return str(v)
        return (f"{v:04x}" if v <= 0xFFFF else f"{v:06x}") if f == "class" else f"{v:04x}"
    texts = [(r[0], *(text(v, f) for v, f in zip(r[1:], _FIELDS))) for r in rows]
    return ints, texts, truths
