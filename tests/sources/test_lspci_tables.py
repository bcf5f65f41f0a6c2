"""Dumps pasted as tables (markdown, ASCII and box-drawing frames; the lspci line split
across cells at random, padded, numbered, under a header and its rule) read to the same
devices as the clean dump, in every form gpuclass reads (-nn, -nnmm, -D, -vmm, -n, -nmm).

The clean dumps are written by :func:`write_lspci` from real-shaped lines (the samples
of lspci 3.9 in ``tests/lspci_samples.py`` and of the paste tests)."""

from __future__ import annotations

import random
import re

import pytest

from gpuclass.classify import classify_table
from gpuclass.sources.lspci import parse_lspci, write_lspci

from ..lspci_samples import GEX44_NNMM_D, NN, SRIOV_NN
from .test_lspci_pasted import ROWS

HOSTS = {
    "mixed": parse_lspci(GEX44_NNMM_D + NN + "\n".join(ROWS[2:]) + "\n", source="d"),
    "sriov": parse_lspci(SRIOV_NN, source="d"),
}
FORMATS = ("-nn", "-nn -D", "-nnmm", "-nnmm -D", "-vmm -nn", "-vmm -nn -D", "-vmm -nnk", "-n", "-n -D", "-nmm")
_MM_FIELDS = re.compile(r'"[^"]*"|[^ ]+')


def _cells(line: str, rng: random.Random, unquote: bool) -> list[str]:
    """One lspci line cut into cells where a person would: at spaces, the class's ':'
    kept in its cell or dropped, ``-vmm``'s key apart from its value."""
    if ":\t" in line:  # -vmm
        key, value = line.split(":\t", 1)
        return [key + rng.choice(("", ":"))] + _split(value.split(" "), rng)
    if unquote and '"' in line:  # -nnmm fields one to a cell, their quotes lost
        fields = _MM_FIELDS.findall(line)
        return [f.strip('"') for f in fields if rng.random() < 0.5 or f != '""']
    words = line.split(" ")
    for i, w in enumerate(words[1:4], 1):  # the class's ':' in -n / -nn
        if w.endswith(":") and not w.startswith('"'):
            if rng.random() < 0.5:
                words[i] = w[:-1]
                return _split(words[:i + 1], rng, first=1) + _split(words[i + 1:], rng)
            break
    return _split(words, rng, first=1)


def _split(words: list[str], rng: random.Random, first: int = 0) -> list[str]:
    if not words:
        return []
    cuts = sorted({first} | {i for i in range(first + 1, len(words)) if rng.random() < 0.35})
    cuts = [c for c in cuts if 0 < c < len(words)]
    bounds = [0, *cuts, len(words)]
    return [" ".join(words[a:b]) for a, b in zip(bounds, bounds[1:]) if a < b]


def _frame(rows: list[list[str]], style: str, rng: random.Random, header: bool) -> list[str]:
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) if style in ("padded", "box", "ascii") else r for r in rows]
    if header:
        rows = [[("#", "Slot", "Class", "Vendor", "Device", "Rev", "Sub", "")[i % 8] for i in range(width)]] + rows
    cols = [max(len(r[i]) for r in rows if i < len(r)) for i in range(width)]

    def pad(r):
        return [c.ljust(cols[i]) for i, c in enumerate(r)]

    if style == "markdown":
        out = ["| " + " | ".join(r) + " |" for r in rows]
        rule = "|" + "|".join(rng.choice(("---", ":---", "---:", ":-:")) for _ in range(width)) + "|"
    elif style == "bare":  # no outer bars
        out = [" | ".join(r) for r in rows]
        rule = " | ".join("---" for _ in range(width))
    elif style == "padded":
        out = ["|" + "|".join(" " * rng.randint(0, 3) + c + " " * rng.randint(0, 3) for c in pad(r)) + "|"
               for r in rows]
        rule = "|" + "|".join("-" * (w + 2) for w in cols) + "|"
    elif style == "ascii":
        rule = "+" + "+".join("-" * (w + 2) for w in cols) + "+"
        out = [rule] + ["| " + " | ".join(pad(r)) + " |" for r in rows] + [rule]
        return out[:2] + [rule] + out[2:] if header else out
    else:  # box drawing
        top = "\u250c" + "\u252c".join("\u2500" * (w + 2) for w in cols) + "\u2510"
        mid = "\u251c" + "\u253c".join("\u2500" * (w + 2) for w in cols) + "\u2524"
        bottom = "\u2514" + "\u2534".join("\u2500" * (w + 2) for w in cols) + "\u2518"
        body = ["\u2502 " + " \u2502 ".join(pad(r)) + " \u2502" for r in rows]
        return [top] + (body[:1] + [mid] + body[1:] if header else body) + [bottom]
    return out[:1] + [rule] + out[1:] if header else out


STYLES = ("markdown", "bare", "padded", "ascii", "box")


def tabulate(dump: str, style: str, seed: int) -> str:
    rng = random.Random(seed)
    numbered, header, unquote = rng.random() < 0.5, rng.random() < 0.6, rng.random() < 0.5
    if style == "bare" and numbered is False and header:
        header = rng.random() < 0.5
    rows, blanks = [], []
    for n, line in enumerate(dump.rstrip("\n").split("\n"), 1):
        if not line:  # between -vmm blocks: an empty row, or the table closed and opened again
            blanks.append(len(rows))
            rows.append([])
            continue
        rows.append(([str(n)] if numbered else []) + _cells(line, rng, unquote))
    if not blanks:
        return "\n".join(_frame(rows, style, rng, header)) + "\n"
    out, start = [], 0
    for b in [*blanks, len(rows)]:
        out += _frame(rows[start:b], style, rng, header and (start == 0 or rng.random() < 0.3))
        out.append(rng.choice(("", "|  |  |")) if style in ("markdown", "padded") else "")
        start = b + 1
    return "\n".join(out) + "\n"


def counted(table):
    res = classify_table(table)
    return int(res.summary().node_data(0)["supported_cards"]), int(table.vf_mask().sum())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("host", HOSTS)
def test_a_dump_pasted_as_a_table_reads_as_the_clean_one(host, fmt, style, seed):
    dump = write_lspci(HOSTS[host], fmt)
    clean = parse_lspci(dump, source="d")
    text = tabulate(dump, style, seed)
    t = parse_lspci(text, source="d")
    assert not t.invalid_mask().any(), (text, [p for p in t.problems if p])
    assert t.equals(clean, text=True), (text, t.diff(clean))
    assert counted(t) == counted(clean) == {"mixed": (6, 1), "sriov": (1, 8)}[host]


def test_the_shapes_of_the_issue():
    text = ("| 0000:01:00.0 | VGA compatible controller [0300] | NVIDIA Corporation GA102 [10de:2204] | (rev a1) |\n"
            "| 7 | 0000:02:00.0 | 3D controller | [0302]: | NVIDIA Corporation | GB202GL [10de:2bb5] |\n"
            "\u2502 0000:03:00.0 \u2502 0300 \u2502 10de:26b1 \u2502 (rev a1) \u2502\n")
    t = parse_lspci(text, source="d")
    assert not t.invalid_mask().any()
    assert [hex(x) for x in t.device] == ["0x2204", "0x2bb5", "0x26b1"]
    assert t.class_code.tolist() == [0x030000, 0x030200, 0x030000]


def test_a_row_that_holds_no_lspci_line_is_one_flagged_row():
    text = ("| host | slot |\n|---|---|\n| gex44-01 | 01:00.0 0300: 10de:27b0 |\n"
            "| 01:00.0 | 0300 | 10de:27b0 | (rev a1) |\n")
    t = parse_lspci(text, source="d")
    assert int(t.invalid_mask().sum()) == 1 and int((~t.invalid_mask()).sum()) == 1
    assert "d:3: not lspci output" in " ".join(p for p in t.problems if p)


@pytest.mark.parametrize("row", ["| 00:00.0 " + "| a " * 250000 + "|", "| 00:00.0 | 0300 " + "| [ab]" * 200000,
                                 "| Driver " + "| x " * 250000, "|" * 1000000, "| 1 " * 250000 + "| 00:00.0 |"])
def test_a_megabyte_table_row_is_read_in_linear_time(row):
    import time

    t0 = time.perf_counter()
    t = parse_lspci("00:01.0 0600: 8086:0d57\n" + row + "\n", source="d")
    assert time.perf_counter() - t0 < 5 and len(t) >= 1
