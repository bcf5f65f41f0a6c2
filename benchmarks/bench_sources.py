"""Hardware sources: a 2,000-device sysfs scan and 100,000 lines of lspci text.

Baselines in the same run: a straightforward Python scanner (``os.scandir`` and
``open()`` per attribute), the ``lspci -nnmm -D`` process on the same tree, and
a line-by-line regex parser of lspci text.  Goals (``extra_info["goal"]``):
the in-process scan at least 2x the naive scanner and no slower than lspci.

Run: ``python -m pytest benchmarks/bench_sources.py --benchmark-only``
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import fakesys
import numpy as np
import pytest
import recorded

from gpuclass.sources.lspci import parse_lspci_mm, parse_lspci_vmm
from gpuclass.sources.sysfs import scan_sysfs

N_DEVICES = 2000
N_LINES = 100_000


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("sysfs2000")
    fakesys.write_tree(root, fakesys.generated(N_DEVICES))
    return str(root)


# -- baselines -----------------------------------------------------------------


def naive_scan(root: str) -> dict[str, np.ndarray]:
    """What a competent Python scanner does: scandir, then one raw read of each attribute."""
    base = os.path.join(root, "sys", "bus", "pci", "devices")
    cols: dict[str, list] = {k: [] for k in ("vendor", "device", "class", "subvendor", "subdevice",
                                            "revision", "numa", "totalvfs", "numvfs", "boot_vga",
                                            "driver", "iommu_group", "vf")}
    for entry in sorted(os.scandir(base), key=lambda e: e.name):
        path = entry.path

        def read(name):  # raw reads: no text wrapper per file (the tuned way)
            try:
                fd = os.open(os.path.join(path, name), os.O_RDONLY)
            except OSError:
                return None
            try:
                return os.read(fd, 4096).strip().decode()
            except OSError:
                return None
            finally:
                os.close(fd)

        def link(name):
            try:
                return os.path.basename(os.readlink(os.path.join(path, name)))
            except OSError:
                return None

        cls = read("class")
        total = read("sriov_totalvfs")
        sv, sd, rev, numa = read("subsystem_vendor"), read("subsystem_device"), read("revision"), read("numa_node")
        cols["vendor"].append(int(read("vendor"), 16))
        cols["device"].append(int(read("device"), 16))
        cols["class"].append(int(cls, 16))
        cols["subvendor"].append(int(sv, 16) if sv else -1)
        cols["subdevice"].append(int(sd, 16) if sd else -1)
        cols["revision"].append(int(rev, 16) if rev else -1)
        cols["numa"].append(int(numa) if numa else -1)
        cols["totalvfs"].append(int(total) if total else -1)
        numvfs = read("sriov_numvfs") if total is not None else None
        cols["numvfs"].append(int(numvfs) if numvfs else -1)
        cols["boot_vga"].append(cls.startswith("0x03") and read("boot_vga") == "1")
        cols["driver"].append(link("driver"))
        cols["iommu_group"].append(link("iommu_group"))
        cols["vf"].append(os.path.islink(os.path.join(path, "physfn")))
    return {k: np.array(v) for k, v in cols.items()}


_LINE = re.compile(
    r'^(?:([0-9a-f]+):)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-7]) "[^"]*\[([0-9a-f]{4})\]" '
    r'"[^"]*\[([0-9a-f]{4})\]" "[^"]*\[([0-9a-f]{4})\]"(?: -r([0-9a-f]{2}))?(?: -p([0-9a-f]{2}))?'
    r' "(?:[^"]*\[([0-9a-f]{4})\])?" "(?:[^"]*\[([0-9a-f]{4})\])?"$')


def regex_parse(text: str) -> dict[str, np.ndarray]:
    """A line-by-line regex parser of lspci -nnmm, the usual script."""
    cols: dict[str, list] = {k: [] for k in ("domain", "bus", "slot", "function", "class", "vendor",
                                            "device", "revision", "subvendor", "subdevice")}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m is None:
            continue
        d, b, s, f, c, v, dv, r, p, sv, sd = m.groups()
        cols["domain"].append(int(d, 16) if d else 0)
        cols["bus"].append(int(b, 16))
        cols["slot"].append(int(s, 16))
        cols["function"].append(int(f))
        cols["class"].append((int(c, 16) << 8) | (int(p, 16) if p else 0))
        cols["vendor"].append(int(v, 16))
        cols["device"].append(int(dv, 16))
        cols["revision"].append(int(r, 16) if r else 0)
        cols["subvendor"].append(int(sv, 16) if sv else -1)
        cols["subdevice"].append(int(sd, 16) if sd else -1)
    return {k: np.array(v) for k, v in cols.items()}


# -- sysfs scan ----------------------------------------------------------------


@pytest.mark.benchmark(group="scan sysfs 2000")
def test_scan_gpuclass(benchmark, tree):
    benchmark.extra_info["role"] = "gpuclass"
    table = benchmark(scan_sysfs, tree)
    assert len(table) == N_DEVICES and not table.invalid_mask().any()


@pytest.mark.benchmark(group="scan sysfs 2000")
def test_scan_naive_python(benchmark, tree):
    benchmark.extra_info.update(role="baseline", goal=2.0)
    cols = benchmark(naive_scan, tree)
    ours = scan_sysfs(tree)
    # the baseline reads the same facts, so the comparison is fair
    assert cols["device"].tolist() == ours.device.tolist()
    assert cols["vf"].tolist() == ours.vf_mask().tolist()


@pytest.mark.benchmark(group="scan sysfs 2000")
def test_scan_lspci_process(benchmark, tree):
    lspci = shutil.which("lspci")
    if lspci is None:
        recorded.missing("lspci", "apt-get install pciutils")  # a failure in CI
    benchmark.extra_info.update(role="baseline", goal=1.0)
    cmd = [lspci, "-nnmm", "-D", "-A", "linux-sysfs", "-O", f"sysfs.path={tree}/sys/bus/pci",
           *recorded.LSPCI_NO_HWDB]
    out = benchmark(lambda: subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    assert parse_lspci_mm(out).device.tolist() == scan_sysfs(tree).device.tolist()


# -- lspci text ----------------------------------------------------------------


@pytest.fixture(scope="module")
def nnmm_text(tree):
    table = scan_sysfs(tree)
    from gpuclass.db import default_database

    block = table.to_lspci_text("-nnmm -D", db=default_database())
    reps = -(-N_LINES // len(table))
    lines = (block * reps).splitlines(True)[:N_LINES]
    return "".join(lines)


@pytest.fixture(scope="module")
def vmm_text(tree):
    from gpuclass.db import default_database

    text = scan_sysfs(tree).to_lspci_text("-vmm -nn -D", db=default_database())
    lines = text.splitlines(True)
    reps = -(-N_LINES // len(lines))
    return "".join((lines * reps)[:N_LINES])


@pytest.mark.benchmark(group="parse lspci -nnmm 100k")
def test_parse_nnmm_gpuclass(benchmark, nnmm_text):
    benchmark.extra_info["role"] = "gpuclass"
    table = benchmark(parse_lspci_mm, nnmm_text)
    assert len(table) == N_LINES and not table.invalid_mask().any()


@pytest.mark.benchmark(group="parse lspci -nnmm 100k")
def test_parse_nnmm_regex(benchmark, nnmm_text):
    benchmark.extra_info.update(role="baseline", goal=1.0)
    cols = benchmark(regex_parse, nnmm_text)
    ours = parse_lspci_mm(nnmm_text)
    assert cols["device"].tolist() == ours.device.tolist()
    assert cols["class"].tolist() == ours.class_code.tolist()


@pytest.mark.benchmark(group="parse lspci -vmm 100k")
def test_parse_vmm_gpuclass(benchmark, vmm_text):
    benchmark.extra_info["role"] = "gpuclass"
    table = benchmark(parse_lspci_vmm, vmm_text)
    assert len(table) > N_LINES // 12 and not table.invalid_mask().any()


def _vmm_baseline(text: str) -> list[dict]:
    """The usual -vmm script: split blocks, split lines, regex the bracketed IDs."""
    out = []
    ident = re.compile(r"\[([0-9a-f]{4})\]$")
    for block in text.split("\n\n"):
        rec = {}
        for line in block.splitlines():
            key, _, value = line.partition(":\t")
            m = ident.search(value)
            rec[key] = int(m.group(1), 16) if m else value
        if rec:
            out.append(rec)
    return out


@pytest.mark.benchmark(group="parse lspci -vmm 100k")
def test_parse_vmm_baseline(benchmark, vmm_text):
    benchmark.extra_info.update(role="baseline", goal=1.0)
    recs = benchmark(_vmm_baseline, vmm_text)
    assert len(recs) == len(parse_lspci_vmm(vmm_text))


# -- the whole command against the scan alone ----------------------------------------


@pytest.fixture(scope="module")
def large_trees(tmp_path_factory, quick):
    """Two generated machines, n and n/4 devices (n: $GPUCLASS_BENCH_SCAN_DEVICES, default
    10,000; 2,000 in quick rounds), for the whole command's cost against the scan alone
    and its growth with the number of devices."""
    n = int(os.environ.get("GPUCLASS_BENCH_SCAN_DEVICES", 2000 if quick else 10_000))
    roots = {}
    for size in (n, n // 4):
        root = tmp_path_factory.mktemp(f"sysfs{size}")
        fakesys.write_tree(root, fakesys.generated(size, seed=size))
        roots[size] = str(root)
    return roots


def _whole_scan(root: str, fmt: str = "table") -> int:
    """``gpuclass scan --root ROOT`` in this process (output to /dev/null)."""
    import contextlib

    from gpuclass.cli.main import main

    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        return main(["scan", "--root", root, "--format", fmt])


@pytest.mark.benchmark(group="whole scan vs scan_sysfs")
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_whole_scan_command(benchmark, large_trees, fmt):
    """Scan, names, classification, rollup and output: at most 3x the scan alone (goal 1/3)."""
    root = large_trees[max(large_trees)]
    benchmark.extra_info.update(role="gpuclass", devices=max(large_trees), format=fmt)
    rc = benchmark.pedantic(_whole_scan, args=(root, fmt), rounds=3, iterations=1, warmup_rounds=1)
    assert rc in (0, 1)


@pytest.mark.benchmark(group="whole scan vs scan_sysfs")
def test_scan_sysfs_alone(benchmark, large_trees):
    root = large_trees[max(large_trees)]
    benchmark.extra_info.update(role="baseline", goal=1 / 3, devices=max(large_trees))
    table = benchmark.pedantic(scan_sysfs, args=(root,), rounds=3, iterations=1, warmup_rounds=1)
    assert len(table) == max(large_trees)


@pytest.mark.benchmark(group="whole scan: n vs n/4 devices")
def test_whole_scan_n(benchmark, large_trees):
    """Linear cost: n devices take at most 4 x 1.25 the time of n/4 (goal 1/5)."""
    benchmark.extra_info.update(role="gpuclass", devices=max(large_trees))
    benchmark.pedantic(_whole_scan, args=(large_trees[max(large_trees)],), rounds=3, iterations=1,
                       warmup_rounds=1)


@pytest.mark.benchmark(group="whole scan: n vs n/4 devices")
def test_whole_scan_quarter(benchmark, large_trees):
    benchmark.extra_info.update(role="baseline", goal=1 / 5, devices=min(large_trees))
    benchmark.pedantic(_whole_scan, args=(large_trees[min(large_trees)],), rounds=3, iterations=1,
                       warmup_rounds=1)
