"""Benchmark conventions: every group times gpuclass and at least one baseline.

Each benchmark sets ``extra_info["role"]`` to ``"gpuclass"`` or ``"baseline"``
(and may set ``extra_info["goal"]``, the speed-up the project aims for).  At the
end of the run the speed-up of gpuclass over every baseline of its group is
printed and written into the ``--benchmark-json`` output under ``"ratios"``.
A gpuclass benchmark may also time baselines itself, one round of each before each
of its own rounds (interleaved), and keep their medians, speed-ups and goals in
``extra_info["interleaved"]``; those are printed too, marked ``(interleaved)``.
Speed is judged by these ratios, measured in one run, never by absolute times.
"""

from __future__ import annotations

import os
import statistics

import pytest


def _ratios(benchmarks):
    groups: dict[str, dict[str, list]] = {}
    for bench in benchmarks:
        info = bench.extra_info if hasattr(bench, "extra_info") else bench["extra_info"]
        stats = bench.stats if hasattr(bench, "stats") else None
        median = stats.median if stats is not None else bench["stats"]["median"]
        group = bench.group if hasattr(bench, "group") else bench["group"]
        name = bench.name if hasattr(bench, "name") else bench["name"]
        role = info.get("role")
        if role is None:
            continue
        groups.setdefault(group, {"gpuclass": [], "baseline": []})[role].append((name, median, info))
    out = []
    for group, roles in sorted(groups.items(), key=lambda kv: str(kv[0])):
        for g_name, g_med, g_info in roles["gpuclass"]:
            for b_name, b_med, b_info in roles["baseline"]:
                out.append({
                    "group": group,
                    "gpuclass": g_name,
                    "baseline": b_name,
                    "speedup": b_med / g_med if g_med else float("inf"),
                    "goal": b_info.get("goal"),
                })
    return out


def pytest_benchmark_update_json(config, benchmarks, output_json):
    output_json["ratios"] = _ratios(output_json["benchmarks"])


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, config):
    session = getattr(config, "_benchmarksession", None)
    if session is None or not session.benchmarks:
        return
    rows = _ratios(session.benchmarks)
    if not rows and not any(b.extra_info.get("interleaved") for b in session.benchmarks):
        return
    tr = terminalreporter
    tr.section("gpuclass speed-ups (baseline median / gpuclass median, same run)")
    for r in rows:
        goal = r["goal"]
        verdict = "" if goal is None else ("  goal >= %gx: %s" % (goal, "met" if r["speedup"] >= goal else "NOT met"))
        tr.write_line(f"{r['group']:<22} {r['gpuclass']:<38} vs {r['baseline']:<40} {r['speedup']:8.2f}x{verdict}")
    for bench in session.benchmarks:  # rounds taken in turn with their baselines (bench_cli)
        inter = bench.extra_info.get("interleaved")
        if not inter:
            continue
        for name, speedup in inter["speedup"].items():
            goal = inter["goal"].get(name)
            verdict = "" if goal is None else ("  goal >= %gx: %s" % (goal, "met" if speedup >= goal else "NOT met"))
            tr.write_line(f"{bench.group:<22} {bench.name + ' (interleaved)':<38} vs {name:<40} {speedup:8.2f}x{verdict}")
    for bench in session.benchmarks:  # whole processes' peak resident memory (bench_whole, bench_engines)
        peak = bench.extra_info.get("peak_rss_mib")
        if peak is not None:
            tr.write_line(f"{bench.group:<22} {bench.name:<38} peak RSS {peak:8.1f} MiB")


def _record_interleaved(benchmark, times: dict[str, list[float]], goals: dict[str, float], *,
                        ours: str = "gpuclass", warmup: int = 0) -> None:
    """Keep the medians of ``times`` (seconds per round, by name; ``ours`` is gpuclass's,
    the others baselines timed in turn with it), leaving out the first ``warmup`` rounds of
    each, the speed-up over each baseline, and ``goals`` (by baseline name), in
    ``extra_info["interleaved"]``, which the summary above prints."""
    medians = {name: statistics.median(v[warmup:]) for name, v in times.items()}
    benchmark.extra_info["interleaved"] = {
        "medians_s": medians,
        "speedup": {name: medians[name] / medians[ours] for name in medians if name != ours},
        "goal": goals,
    }


@pytest.fixture(scope="session")
def record_interleaved():
    """``record_interleaved(benchmark, times, goals, ours="gpuclass", warmup=0)``: a
    benchmark's rounds timed in turn with its baselines, kept as the summary prints them."""
    return _record_interleaved


@pytest.fixture(scope="module", autouse=True)
def kept_environment():
    """Each benchmark module leaves the process environment as it found it, so that the
    processes a later module starts (gpuclass, DuckDB, polars and the scripts, timed whole)
    inherit the run's environment and nothing a module left behind.  Dask's LocalCluster
    writes its workers' settings into this process's ``os.environ`` and leaves them there
    (``MALLOC_TRIM_THRESHOLD_=65536``, ``OPENBLAS_NUM_THREADS=1`` and others): with glibc's
    trim threshold fixed, every block of 128 KiB or more is mapped and unmapped afresh, which
    made a 1M-row ``gpuclass audit`` about 11% slower and left DuckDB and polars, on their own
    allocators, as they were; ``bench_dask`` runs before ``bench_engines`` and
    ``bench_whole``."""
    before = dict(os.environ)
    yield before
    if dict(os.environ) != before:
        os.environ.clear()
        os.environ.update(before)


@pytest.fixture(scope="session")
def quick() -> bool:
    """CI runs short rounds: GPUCLASS_BENCH_QUICK=1 shrinks the largest inputs."""
    return os.environ.get("GPUCLASS_BENCH_QUICK") == "1"
