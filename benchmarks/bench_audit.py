"""Fleet audits at scale: free-text card names and device tables.

Groups (each times gpuclass and its baseline in the same run):

- ``text 1M``: 1 million auction description lines (one in ten names a GPU,
  traps included) through the automaton (``TextMatcher.find_many``) vs a
  compiled regex alternation of the same names with flexible spacing, run over
  each line (goal: at least 5x, and at least 500,000 lines/s on its own).
- ``audit table 1M hex``: 1 million device rows (server, vendor, device, subvendor,
  subdevice, class as hex text in an Arrow table, ~208,000 servers) to one row per
  server with ``audit_table``, vs the pyarrow script an Arrow user writes (class
  prefix ``is_in``, allowlist comparisons, ``group_by`` sums; goal 2x) and the pandas
  one (``merge`` with the allowlist, ``groupby``, ``crosstab``; goal 5x); the same
  answers are asserted.  ``rows_per_s`` is recorded (goal: 10 million rows/s).
- ``audit table 1M integer IDs``: the same with integer ID columns, against the same
  pyarrow script on integers (recorded, no goal).
- ``audit table 1M dictionary IDs``: the same with dictionary-encoded ID columns (Parquet
  read with ``read_dictionary``, pandas categoricals), against the pyarrow script that
  tests each distinct value once (recorded, no goal).
- ``audit table linear 10x``: 10 million rows (the 1M table ten times, each copy with its
  own server names) against ten audits of the 1 million (goal: per-row cost within 1.2x).

Run: ``python -m pytest benchmarks/bench_audit.py`` (GPUCLASS_BENCH_QUICK=1: 100k rows).
"""

from __future__ import annotations

import random
import re

import pytest

pytest.importorskip("ahocorasick")
pytest.importorskip("pyarrow")

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


# -- device tables -----------------------------------------------------------------

ALLOWED = ["1b80", "1b06", "27b0", "26b1", "2bb1", "2bb4", "2bb5"]
CARD_IDS = ["gtx-1080", "gtx-1080-ti", "rtx-4000-sff-ada", "rtx-6000-ada",
            "rtx-pro-6000-blackwell-workstation", "rtx-pro-6000-blackwell-max-q",
            "rtx-pro-6000-blackwell-server"]


def device_rows(n: int, seed: int = 7) -> list[tuple[str, ...]]:
    """A fleet's device table: four host functions per server, a GPU and its audio on
    three servers in ten (sometimes two), allowlisted cards and traps alike."""
    rng = random.Random(seed)
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


FIELDS = ("server", "vendor", "device", "subvendor", "subdevice", "class")


def arrow_table(rows):
    pa = pytest.importorskip("pyarrow")
    return pa.table({f: pa.array([r[i] for r in rows]) for i, f in enumerate(FIELDS)})


def integer_table(table):
    """The same table with integer ID columns (as a table loaded from typed Parquet)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = {"server": table["server"]}
    for f in FIELDS[1:]:
        out[f] = pa.array([int(x, 16) for x in table[f].to_pylist()], pa.int32())
    del pc
    return pa.table(out)


def dictionary_table(table):
    """The same table with dictionary-encoded ID columns (as Parquet read with
    ``read_dictionary``, or pandas categoricals)."""
    return table.__class__.from_arrays(
        [c if f == "server" else c.dictionary_encode() for f, c in zip(table.column_names, table.columns)],
        names=table.column_names)


def _per_value(column, test):
    """``test`` once per distinct value (on each chunk's dictionary), looked up by the indices."""
    import pyarrow as pa

    return pa.chunked_array([test(c.dictionary).take(c.indices) for c in column.chunks], pa.bool_())


def pyarrow_audit(t, ints: bool = False, dictionary: bool = False):
    """What an Arrow user writes: GPU rows by class, allowlisted by comparison, summed per server
    (on dictionary columns: each test once per distinct value, pyarrow's string kernels take
    no dictionaries)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if dictionary:
        gpu = _per_value(t["class"], lambda d: pc.is_in(pc.utf8_slice_codeunits(d, 0, 4),
                                                        value_set=pa.array(["0300", "0302"])))
        nv_gpu = pc.and_(gpu, _per_value(t["vendor"], lambda d: pc.equal(d, "10de")))
        cols = {"server": t["server"]}
        sup = None
        for cid, dev in zip(CARD_IDS, ALLOWED):
            hit = pc.and_(nv_gpu, _per_value(t["device"], lambda d, dev=dev: pc.equal(d, dev)))
            cols[cid] = hit
            sup = hit if sup is None else pc.or_(sup, hit)
        cols["supported"] = sup
        cols["unsupported"] = pc.and_(nv_gpu, pc.invert(sup))
        return pa.table(cols).group_by("server", use_threads=False).aggregate(
            [(c, "sum") for c in (*CARD_IDS, "supported", "unsupported")])
    if ints:
        cls = pc.shift_right(t["class"], 8)
        gpu = pc.or_(pc.equal(cls, 0x0300), pc.equal(cls, 0x0302))
        nvidia = pc.equal(t["vendor"], 0x10DE)
        ids = [int(x, 16) for x in ALLOWED]
    else:
        gpu = pc.is_in(pc.utf8_slice_codeunits(t["class"], 0, 4), value_set=pa.array(["0300", "0302"]))
        nvidia = pc.equal(t["vendor"], "10de")
        ids = ALLOWED
    nv_gpu = pc.and_(gpu, nvidia)
    cols = {"server": t["server"]}
    sup = None
    for cid, dev in zip(CARD_IDS, ids):
        hit = pc.and_(nv_gpu, pc.equal(t["device"], dev))
        cols[cid] = hit
        sup = hit if sup is None else pc.or_(sup, hit)
    cols["supported"] = sup
    cols["unsupported"] = pc.and_(nv_gpu, pc.invert(sup))
    return pa.table(cols).group_by("server", use_threads=False).aggregate(
        [(c, "sum") for c in (*CARD_IDS, "supported", "unsupported")])


def pandas_audit(df):
    """What a pandas user writes: merge with the allowlist, then groupby per server."""
    import pandas as pd

    allow = pd.DataFrame({"vendor": "10de", "device": ALLOWED, "card": CARD_IDS})
    gpu = df["class"].str[:4].isin(["0300", "0302"])
    m = df[gpu].merge(allow, on=["vendor", "device"], how="left")
    m["supported"] = m["card"].notna()
    m["unsupported"] = ~m["supported"] & (m["vendor"] == "10de")
    per = m.groupby("server", sort=False).agg(supported=("supported", "sum"),
                                              unsupported=("unsupported", "sum"))
    cards = pd.crosstab(m["server"], m["card"])
    return per.join(cards).reindex(df["server"].unique(), fill_value=0)


@pytest.fixture(scope="module")
def table_1m(quick):
    return arrow_table(device_rows(100_000 if quick else 1_000_000))


def _same_answers(result, baseline):
    """gpuclass and a pyarrow baseline agree, server by server."""
    got = dict(zip(result.table["server"].to_pylist(), result.table["supported_cards"].to_pylist()))
    want = dict(zip(baseline["server"].to_pylist(), baseline["supported_sum"].to_pylist()))
    assert got == want
    uns = dict(zip(baseline["server"].to_pylist(), baseline["unsupported_sum"].to_pylist()))
    assert uns == dict(zip(result.table["server"].to_pylist(), result.table["unsupported_gpus"].to_pylist()))


@pytest.mark.benchmark(group="audit table 1M hex")
def test_audit_table_arrow(benchmark, table_1m):
    from gpuclass.audit import audit_table

    benchmark.extra_info["role"] = "gpuclass"
    result = benchmark.pedantic(audit_table, args=(table_1m,), rounds=5, iterations=1, warmup_rounds=1)
    benchmark.extra_info["rows_per_s"] = table_1m.num_rows / benchmark.stats.stats.median
    _same_answers(result, pyarrow_audit(table_1m))


@pytest.mark.benchmark(group="audit table 1M hex")
def test_audit_table_pyarrow_baseline(benchmark, table_1m):
    benchmark.extra_info.update(role="baseline", goal=2.0)
    benchmark.pedantic(pyarrow_audit, args=(table_1m,), rounds=5, iterations=1, warmup_rounds=1)


@pytest.mark.benchmark(group="audit table 1M hex")
def test_audit_table_pandas_baseline(benchmark, table_1m):
    benchmark.extra_info.update(role="baseline", goal=5.0)
    df = table_1m.to_pandas()
    out = benchmark.pedantic(pandas_audit, args=(df,), rounds=3, iterations=1)
    assert int(out["supported"].sum()) > 0


@pytest.fixture(scope="module")
def int_table_1m(table_1m):
    return integer_table(table_1m)


@pytest.fixture(scope="module")
def dict_table_1m(table_1m):
    return dictionary_table(table_1m)


# The same 1M rows with their IDs typed as users load them: gpuclass and the pyarrow
# script each on the same columns (``kind``: the script's keyword for them)
def _time_gpuclass(benchmark, table, kind: str) -> None:
    from gpuclass.audit import audit_table

    benchmark.extra_info["role"] = "gpuclass"
    result = benchmark.pedantic(audit_table, args=(table,), rounds=5, iterations=1, warmup_rounds=1)
    _same_answers(result, pyarrow_audit(table, **{kind: True}))


def _time_pyarrow(benchmark, table, kind: str) -> None:
    benchmark.extra_info["role"] = "baseline"
    benchmark.pedantic(pyarrow_audit, args=(table,), kwargs={kind: True}, rounds=5, iterations=1,
                       warmup_rounds=1)


@pytest.mark.benchmark(group="audit table 1M integer IDs")
def test_audit_table_integers(benchmark, int_table_1m):
    _time_gpuclass(benchmark, int_table_1m, "ints")


@pytest.mark.benchmark(group="audit table 1M integer IDs")
def test_audit_table_integers_pyarrow_baseline(benchmark, int_table_1m):
    _time_pyarrow(benchmark, int_table_1m, "ints")


@pytest.mark.benchmark(group="audit table 1M dictionary IDs")
def test_audit_table_dictionaries(benchmark, dict_table_1m):
    _time_gpuclass(benchmark, dict_table_1m, "dictionary")


@pytest.mark.benchmark(group="audit table 1M dictionary IDs")
def test_audit_table_dictionaries_pyarrow_baseline(benchmark, dict_table_1m):
    _time_pyarrow(benchmark, dict_table_1m, "dictionary")


@pytest.fixture(scope="module")
def tables_linear(quick):
    """A table ten times the size, and the tenth of it ten times over: the same rows, each
    copy with its own server names (ten copies of one name would make one server's rows come
    back far apart: a different input, not a larger one)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    small = arrow_table(device_rows(100_000 if quick else 1_000_000, seed=11))
    copies = [small.set_column(0, "server", pc.binary_join_element_wise(f"c{i}-", small["server"], ""))
              for i in range(10)]
    big = pa.concat_tables(copies).combine_chunks()
    return big, small


@pytest.mark.benchmark(group="audit table linear 10x")
def test_audit_table_ten_times_the_rows(benchmark, tables_linear):
    from gpuclass.audit import audit_table

    big, small = tables_linear
    benchmark.extra_info["role"] = "gpuclass"
    result = benchmark.pedantic(audit_table, args=(big,), rounds=3, iterations=1, warmup_rounds=1)
    assert int(result.table["rows"].to_numpy().sum()) == big.num_rows
    assert result.table.num_rows == 10 * audit_table(small).table.num_rows


@pytest.mark.benchmark(group="audit table linear 10x")
def test_audit_table_tenth_ten_times(benchmark, tables_linear):
    """The baseline is gpuclass itself: ten audits of a tenth of the rows (goal: the big table
    costs at most 1.2x as much per row, a ratio >= 0.83)."""
    from gpuclass.audit import audit_table

    _, small = tables_linear
    benchmark.extra_info.update(role="baseline", goal=1 / 1.2)
    benchmark.pedantic(lambda: [audit_table(small) for _ in range(10)], rounds=3, iterations=1,
                       warmup_rounds=1)
