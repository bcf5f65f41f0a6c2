"""Fleet audits at scale: free-text card names and device tables.

Groups (each times gpuclass and its baseline in the same run):

- ``text 1M``: 1 million auction description lines (one in ten names a GPU,
  traps included) through the automaton (``TextMatcher.find_many``) vs a
  compiled regex alternation of the same names with flexible spacing, run over
  each line (goal: at least 5x, and at least 500,000 lines/s on its own).
- ``audit table 1M``: 1 million device rows (server, vendor, device, subvendor,
  subdevice, class as hex text) to per-server reports, end to end, vs a plain
  Python loop that looks every row up in a dict of allowed IDs.

Run: ``python -m pytest benchmarks/bench_audit.py`` (GPUCLASS_BENCH_QUICK=1: 100k rows).
"""

from __future__ import annotations

import random
import re

import pytest

pytest.importorskip("ahocorasick")

from gpuclass.audit import audit_device_rows  # noqa: E402
from gpuclass.textmatch import default_matcher  # noqa: E402

COMMON = ["Intel Core i7-6700", "AMD Ryzen 9 5950X", "2x SSD SATA 250 GB", "4x RAM 16384 MB DDR4",
          "2x HDD SATA 2,0 TB Enterprise", "NIC 1 Gbit Intel I219-LM", "2x SSD M.2 NVMe 512 GB",
          "Intel Xeon E5-1650V3", "RAM 64 GB DDR4 ECC", "1x HDD SATA 4,0 TB", "Intel Core i9-13900",
          "8x RAM 32768 MB DDR5 ECC reg.", "NIC 10 Gbit Intel X710", "Intel Xeon Gold 5412U"]
GPU = ["GPU - Nvidia GeForce GTX 1080", "GPU - Nvidia GeForce GTX 1080 Ti",
       "2x NVIDIA RTX 6000 Ada Generation 48 GB", "GPU - Nvidia RTX\u2122 4000 SFF Ada Generation",
       "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition 96GB", "GPU - Nvidia Quadro RTX 6000",
       "RTX A6000 48GB", "GTX 1080 Mobile", "RTX 4000 Ada", "RTX PRO 6000D"]


@pytest.fixture(scope="module")
def descriptions(quick):
    rng = random.Random(2026)
    n = 100_000 if quick else 1_000_000
    return [rng.choice(GPU) if rng.random() < 0.1 else rng.choice(COMMON) for _ in range(n)]


def _regex(matcher):
    """The alternation a regex user would write: the supported names and the traps that
    share their model numbers (1080, 4000, 6000), spacing and hyphens optional, longest first.
    (All ~2,000 pci.ids GPU names in one alternation run at about 14,000 lines/s.)"""
    numbers = {"1080", "4000", "6000"}
    names = sorted({e.name for e in matcher.entries
                    if e.kind == 0 or numbers & set(re.findall(r"[0-9]{4}", e.name))}, key=len, reverse=True)
    parts = []
    for name in names:
        words = re.findall(r"[A-Za-z0-9]+", name)
        if words:
            parts.append(r"[\s\-]*".join(re.escape(w) for w in words))
    return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(parts) + r")(?![A-Za-z0-9])", re.IGNORECASE)


@pytest.mark.benchmark(group="text 1M")
def test_text_automaton(benchmark, descriptions):
    m = default_matcher()
    benchmark.extra_info["role"] = "gpuclass"
    result = benchmark.pedantic(m.find_many, args=(descriptions,), rounds=3, iterations=1, warmup_rounds=1)
    rate = len(descriptions) / benchmark.stats.stats.median
    benchmark.extra_info["descriptions_per_s"] = rate
    assert result.supported_cards().sum() > 0
    assert rate >= 500_000 or len(descriptions) < 1_000_000, f"{rate:.0f} descriptions/s"


@pytest.mark.benchmark(group="text 1M")
def test_text_regex_baseline(benchmark, descriptions):
    rx = _regex(default_matcher())
    benchmark.extra_info["role"] = "baseline"
    benchmark.extra_info["goal"] = 5.0

    def run():
        return [rx.findall(t) for t in descriptions]
    found = benchmark.pedantic(run, rounds=1, iterations=1)
    assert any(found)


@pytest.fixture(scope="module")
def device_rows(quick):
    rng = random.Random(7)
    n = 100_000 if quick else 1_000_000
    host = [("8086", "a703", "8086", "7270", "0600"), ("8086", "7ae0", "8086", "7270", "0c0330"),
            ("8086", "1a1c", "8086", "0000", "0200"), ("144d", "a80a", "144d", "aa0a", "010802")]
    cards = [("27b0", "22bc"), ("26b1", "22ba"), ("2bb4", "22e8"), ("1b80", "10f0"), ("1e30", "10f7"),
             ("27b2", "22bc"), ("2bb2", "22e8")]
    rows = []
    server = 0
    while len(rows) < n:
        server += 1
        name = f"srv{server:07d}"
        for h in host:
            rows.append((name, *h))
        if rng.random() < 0.3:
            dev, audio = rng.choice(cards)
            for _ in range(rng.choice((1, 1, 2))):
                rows.append((name, "10de", dev, "10de", "1234", "030000"))
                rows.append((name, "10de", audio, "10de", "1234", "040300"))
    return rows[:n]


@pytest.mark.benchmark(group="audit table 1M")
def test_audit_table(benchmark, device_rows):
    benchmark.extra_info["role"] = "gpuclass"

    def run():
        return sum(r.slices for r in audit_device_rows(device_rows))
    slices = benchmark.pedantic(run, rounds=1, iterations=1, warmup_rounds=0)
    benchmark.extra_info["rows_per_s"] = len(device_rows) / benchmark.stats.stats.median
    assert slices > 0


@pytest.mark.benchmark(group="audit table 1M")
def test_audit_table_python_baseline(benchmark, device_rows):
    benchmark.extra_info["role"] = "baseline"
    allowed = {(0x10DE, d): 4 for d in (0x1B80, 0x1B06, 0x27B0, 0x26B1, 0x2BB1, 0x2BB4, 0x2BB5)}

    def run():
        out: dict[str, list[int]] = {}
        for server, v, d, sv, sd, cls in device_rows:
            rec = out.setdefault(server, [0, 0, 0])
            code = int(cls, 16)
            if code <= 0xFFFF:
                code <<= 8
            if code >> 8 not in (0x0300, 0x0302):
                continue
            key = (int(v, 16), int(d, 16))
            if key in allowed:
                rec[0] += 1
                rec[1] += allowed[key]
            elif key[0] == 0x10DE:
                rec[2] += 1
        return sum(r[1] for r in out.values())
    assert benchmark.pedantic(run, rounds=1, iterations=1) > 0
