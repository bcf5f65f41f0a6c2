"""Run the atheris (libFuzzer) fuzz targets of ``fuzz_targets.py`` for a given time.

    python fuzz/run.py TARGET SECONDS [libFuzzer flags...]   one target
    python fuzz/run.py all SECONDS                            every available target in turn
    python fuzz/run.py list                                   the targets and what they feed

gpuclass's Python modules are instrumented for coverage; the compiled core is
exercised (and compared with its twin) but not instrumented.  New inputs grow
the working corpus ``fuzz/work/TARGET/`` (ignored by git), seeded from
``fuzz/corpus/TARGET/``; a crash, a hang (``-timeout``, 10 s per input) or an
input over the memory limit is written to ``fuzz/work/artifacts/`` and ends the
run with a non-zero status.  ``all`` prints one line per target (executions,
coverage, corpus) and writes them to ``fuzz/work/results.json``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, "work")
DEFAULT_FLAGS = ["-timeout=10", "-rss_limit_mb=3072", "-print_final_stats=1", "-max_len=16384"]


def _child(name: str, seconds: int, extra: list[str]) -> None:
    import importlib
    import pkgutil

    import atheris

    with atheris.instrument_imports(include=["gpuclass"]):
        import gpuclass

        for mod in pkgutil.walk_packages(gpuclass.__path__, "gpuclass."):
            if mod.name.endswith(("_core", "__main__")):
                continue  # the extension module: nothing to instrument; the command
            try:
                importlib.import_module(mod.name)
            except ImportError:
                pass
        import yaml  # noqa: F401  (lazy imports of the library, loaded before fuzzing)
    sys.path.insert(0, HERE)
    import fuzz_targets

    # libFuzzer ends the process with exit(), past Python's atexit: one fixed scratch
    # directory per target, reused by every run, instead of a fresh one each time
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else WORK
    fuzz_targets._SCRATCH = os.path.join(base, f"gpuclass-fuzz-{name}")
    os.makedirs(fuzz_targets._SCRATCH, exist_ok=True)
    t = fuzz_targets.TARGETS[name]
    if not t.available():
        print(f"{name}: not available ({t.requires} is missing)")
        sys.exit(0)
    fn, accepted = t.fn, fuzz_targets.ACCEPTED

    def one(data: bytes) -> None:
        try:
            fn(data)
        except accepted:
            pass

    work = os.path.join(WORK, name)
    arts = os.path.join(WORK, "artifacts")
    os.makedirs(work, exist_ok=True)
    os.makedirs(arts, exist_ok=True)
    seeds = os.path.join(HERE, "corpus", name)
    argv = [sys.argv[0], *DEFAULT_FLAGS, f"-max_total_time={seconds}",
            f"-artifact_prefix={arts}/{name}-", *extra, work, seeds]
    atheris.Setup(argv, one)
    atheris.Fuzz()


_LINE = re.compile(r"^#(\d+)\s+(\w+)\s+cov: (\d+) ft: (\d+) corp: (\d+)/(\S+)", re.MULTILINE)


def run_one(name: str, seconds: int, extra: list[str]) -> dict:
    """Run one target in a subprocess; its figures from libFuzzer's status lines."""
    t0 = time.time()
    proc = subprocess.run([sys.executable, __file__, "--child", name, str(seconds), *extra],
                          capture_output=True, text=True, timeout=seconds + 120)
    out = proc.stdout + proc.stderr
    lines = _LINE.findall(out)
    execs = re.findall(r"stat::number_of_executed_units: (\d+)", out)
    res = {"target": name, "seconds": round(time.time() - t0, 1), "rc": proc.returncode,
           "execs": int(execs[-1]) if execs else (int(lines[-1][0]) if lines else 0),
           "cov": int(lines[-1][2]) if lines else None, "ft": int(lines[-1][3]) if lines else None,
           "corpus": int(lines[-1][4]) if lines else None,
           "last_new_cov_exec": next((int(x[0]) for x in reversed(lines) if x[1] in ("NEW", "REDUCE")), None)}
    if proc.returncode != 0:
        res["tail"] = out[-3000:]
    return res


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        _child(argv[1], int(argv[2]), argv[3:])
        return 0
    sys.path.insert(0, HERE)
    import fuzz_targets

    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    if argv[0] == "list":
        for n, t in sorted(fuzz_targets.TARGETS.items()):
            print(f"{n:18s} {'' if t.available() else '(unavailable) '}{t.doc}")
        return 0
    names = fuzz_targets.available() if argv[0] == "all" else [argv[0]]
    seconds = int(argv[1]) if len(argv) > 1 else 60
    results = []
    for name in names:
        res = run_one(name, seconds, argv[2:])
        results.append(res)
        print(f"{name:18s} rc={res['rc']} execs={res['execs']} cov={res['cov']} ft={res['ft']} "
              f"corpus={res['corpus']} last-new-at={res['last_new_cov_exec']} ({res['seconds']}s)", flush=True)
        if res["rc"] != 0:
            print(res.get("tail", ""), flush=True)
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "results.json")
    old = {}
    if os.path.exists(path):
        with open(path) as fh:
            old = {r["target"]: r for r in json.load(fh)}
    old.update({r["target"]: r for r in results})
    with open(path, "w") as fh:
        json.dump(sorted(old.values(), key=lambda r: r["target"]), fh, indent=1)
    return 1 if any(r["rc"] != 0 for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
