"""The PCI ID database: full parse, cache load, 10 million vectorized lookups.

Baselines in the same run: the pure-Python twin, libpci's own C parser
(``pci_load_name_list`` through ctypes, Debian's libpci3), the ``hwdata`` PyPI
package, and ``numpy.searchsorted`` on the same sorted keys.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpuclass._native import twin
from gpuclass._native import core
from gpuclass.db import PciDatabase
from gpuclass.db.locate import bundled_path

pytestmark = pytest.mark.skipif(not core.IS_COMPILED, reason="benchmarks measure the compiled core")


@pytest.fixture(scope="module")
def ids_bytes():
    return bundled_path().read_bytes()


# -- full parse of the bundled file ------------------------------------------------


@pytest.mark.benchmark(group="parse pci.ids")
def test_parse_compiled(benchmark, ids_bytes):
    benchmark.extra_info["role"] = "gpuclass"
    tables, _ = benchmark(core.parse_pci_ids, ids_bytes)
    assert len(tables["device_keys"]) > 20000


@pytest.mark.benchmark(group="parse pci.ids")
def test_parse_libpci(benchmark):
    import recorded
    from libpci_ref import LibPci, find_libpci

    if find_libpci() is None:  # a failure where GPUCLASS_REQUIRE_PCIUTILS=1 (CI)
        recorded.missing("libpci3, the C parser baseline,", "apt-get install libpci3")
    ref = LibPci(bundled_path())
    benchmark.extra_info.update(role="baseline", goal=2.0)
    benchmark(ref.load)  # pci_load_name_list frees and re-reads the file each time
    assert ref.device(0x10DE, 0x27B0) is not None
    ref.close()


@pytest.mark.benchmark(group="parse pci.ids")
@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_parse_hwdata_package(benchmark):  # hwdata leaves its file open: not ours to fix
    hwdata = pytest.importorskip("hwdata")
    path = str(bundled_path())

    def parse():
        hwdata.PCI.devices = None  # the package caches at class level
        return hwdata.PCI(path)

    benchmark.extra_info["role"] = "baseline"
    pci = benchmark(parse)
    assert pci.get_device("10de", "27b0")


@pytest.mark.benchmark(group="parse pci.ids")
def test_parse_python_twin(benchmark, ids_bytes):
    benchmark.extra_info["role"] = "baseline"
    tables, _ = benchmark.pedantic(twin.parse_pci_ids, args=(ids_bytes,), rounds=3, iterations=1)
    assert len(tables["device_keys"]) > 20000


# -- compiled cache ----------------------------------------------------------------


@pytest.fixture(scope="module")
def compiled_file(tmp_path_factory, ids_bytes):
    db = PciDatabase.from_bytes(ids_bytes, source=str(bundled_path()))
    return db.save_compiled(tmp_path_factory.mktemp("cache") / "pci.gpcdb")


@pytest.mark.benchmark(group="load database")
def test_load_compiled_cache(benchmark, compiled_file):
    """Cache file to a queryable database (each table is checksummed on its first use)."""
    benchmark.extra_info["role"] = "gpuclass"
    db = benchmark(PciDatabase.load_compiled, compiled_file)
    assert db.device_name(0x10DE, 0x26B1) is not None


@pytest.mark.benchmark(group="load database end to end")
def test_load_through_cache_end_to_end(benchmark, tmp_path_factory, monkeypatch):
    """PciDatabase.load(): stat the source, find its cache, verify every checksum."""
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(tmp_path_factory.mktemp("e2e")))
    PciDatabase.load()
    benchmark.extra_info["role"] = "gpuclass"
    db = benchmark(PciDatabase.load)
    assert db.cache_path is not None


@pytest.mark.benchmark(group="load database")
def test_load_by_parsing(benchmark, ids_bytes):
    benchmark.extra_info.update(role="baseline", goal=20.0)
    db = benchmark(PciDatabase.from_bytes, ids_bytes)
    assert db.device_name(0x10DE, 0x26B1) is not None


@pytest.mark.benchmark(group="load database end to end")
def test_load_compiled_then_first_name(benchmark, compiled_file):
    """Cache file to the first answered name: the device table and the name blob
    are checksummed, the device index built, one name decoded."""
    benchmark.extra_info["role"] = "gpuclass"

    def load_and_ask():
        return PciDatabase.load_compiled(compiled_file).device_name(0x10DE, 0x26B1)

    assert benchmark(load_and_ask) is not None


@pytest.mark.benchmark(group="load database end to end")
def test_load_by_reading_and_parsing(benchmark):
    """The same end to end without a cache: read the file and parse it."""
    benchmark.extra_info["role"] = "baseline"
    db = benchmark(PciDatabase.load, cache=False)
    assert db.cache_path is None


# -- 10 million vectorized lookups -------------------------------------------------


@pytest.fixture(scope="module")
def device_queries(quick):
    keys = PciDatabase.from_bytes(bundled_path().read_bytes()).arrays()["device_keys"]
    n = 1_000_000 if quick else 10_000_000
    rng = np.random.default_rng(20260822)
    return keys, keys[rng.integers(0, len(keys), n)]


@pytest.mark.benchmark(group="10M device lookups")
def test_lookup_key_index(benchmark, device_queries):
    keys, queries = device_queries
    index = core.KeyIndex(keys)
    benchmark.extra_info.update(role="gpuclass", queries=len(queries))
    out = benchmark.pedantic(index.lookup, args=(queries,), rounds=7, iterations=1, warmup_rounds=1)
    assert np.array_equal(keys[out], queries)


@pytest.mark.benchmark(group="10M device lookups")
def test_lookup_numpy_searchsorted(benchmark, device_queries):
    keys, queries = device_queries

    def searchsorted():
        pos = np.searchsorted(keys, queries)
        pos[pos == len(keys)] = 0
        return np.where(keys[pos] == queries, pos, -1)

    benchmark.extra_info.update(role="baseline", goal=20.0, queries=len(queries))
    out = benchmark.pedantic(searchsorted, rounds=3, iterations=1)
    assert np.array_equal(keys[out], queries)


# -- adversarial keys vs random keys ---------------------------------------------------


def _pci_ids_of(device_keys: np.ndarray) -> bytes:
    """A valid pci.ids whose device table holds exactly ``device_keys`` (vendor << 16 | device)."""
    lines, last = [], None
    for key in np.sort(device_keys).tolist():
        vendor, device = key >> 16, key & 0xFFFF
        if vendor != last:
            lines.append(f"{vendor:04x}  Vendor {vendor:04x}")
            last = vendor
        lines.append(f"\t{device:04x}  Device {device:04x}")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(scope="module")
def key_sets(quick):
    """Device keys an attacker chose to collide under a fixed multiplicative hash (the
    index's before it was keyed: 200k of them took 13 s), and as many random ones."""
    n = 50_000 if quick else 200_000
    inv = pow(0x9E3779B1, -1, 2**32)
    chosen = np.unique((np.arange(n, dtype=np.uint64) + (1 << 30)) * inv % 2**32).astype(np.uint32)
    rng = np.random.default_rng(20261129)
    random = np.unique(rng.integers(0, 2**32, len(chosen) + len(chosen) // 8, dtype=np.uint32))[: len(chosen)]
    return {"chosen": (_pci_ids_of(chosen), chosen), "random": (_pci_ids_of(random), random)}


def _load_and_answer(text: bytes, keys: np.ndarray):
    db = PciDatabase.from_bytes(text)
    rows = db.device_index(keys >> 16, keys & 0xFFFF)
    assert (rows >= 0).all()
    return rows


@pytest.mark.benchmark(group="adversarial keys vs random keys")
def test_load_and_answer_chosen_keys(benchmark, key_sets):
    """A pci.ids whose device keys were chosen to collide: parse, index, answer every key."""
    text, keys = key_sets["chosen"]
    benchmark.extra_info.update(role="gpuclass", keys=len(keys))
    benchmark.pedantic(_load_and_answer, args=(text, keys), rounds=5, iterations=1, warmup_rounds=1)


@pytest.mark.benchmark(group="adversarial keys vs random keys")
def test_load_and_answer_random_keys(benchmark, key_sets):
    """The same with random keys: chosen keys may cost at most twice this (goal 0.5x)."""
    text, keys = key_sets["random"]
    benchmark.extra_info.update(role="baseline", goal=0.5, keys=len(keys))
    benchmark.pedantic(_load_and_answer, args=(text, keys), rounds=5, iterations=1, warmup_rounds=1)
