#!/bin/sh
# Run the native core's workloads (tools/core_workload.py) under valgrind memcheck.
#
#   tools/valgrind.sh [--full]       (--full: the whole bundled pci.ids and 200k devices)
#
# PYTHON picks the interpreter (default python3; gpuclass must be built and
# installed for it).  PYTHONMALLOC=malloc makes CPython allocate through malloc so
# memcheck sees every object.  CPython and numpy report a few known false positives
# (tools/valgrind-python.supp suppresses the usual ones); the verdict counts only
# errors with a frame in gpuclass's compiled core, and fails on any of those or
# on a definite leak from the core.  Exit 0: clean.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
SIZE=--small
[ "${1:-}" = "--full" ] && SIZE=
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT INT TERM
set +e
PYTHONMALLOC=malloc valgrind --tool=memcheck --error-exitcode=0 --leak-check=full \
    --show-leak-kinds=definite --errors-for-leak-kinds=definite --track-origins=yes \
    --suppressions="$ROOT/tools/valgrind-python.supp" --num-callers=40 \
    --xml=yes --xml-file="$OUT/memcheck.xml" \
    "$PY" "$ROOT/tools/core_workload.py" $SIZE
rc=$?
set -e
[ $rc -eq 0 ] || { echo "valgrind.sh: the workload failed (rc=$rc)" >&2; exit $rc; }
"$PY" - "$OUT/memcheck.xml" <<'PYEOF'
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
errors = root.findall("error")
core = []
for e in errors:
    objs = [f.findtext("obj") or "" for f in e.iter("frame")]
    fns = [f.findtext("fn") or "" for f in e.iter("frame")]
    if any("gpuclass/_core" in o for o in objs) or any("__pyx_" in f for f in fns):
        core.append(e)
kinds = {}
for e in errors:
    kinds[e.findtext("kind")] = kinds.get(e.findtext("kind"), 0) + 1
print(f"memcheck: {len(errors)} error(s) after suppressions {kinds or ''}; "
      f"{len(core)} with a frame in gpuclass._core")
noise = {}
for e in errors:
    top = next((f"{f.findtext('fn')} ({(f.findtext('obj') or '').rsplit('/', 1)[-1]})" for f in e.iter("frame")
                if f.findtext("fn") and not f.findtext("fn").startswith(("malloc", "realloc", "calloc", "mem", "str"))), "?")
    noise[top] = noise.get(top, 0) + 1
print("  by first non-libc frame: " + "; ".join(f"{k} x{v}" for k, v in sorted(noise.items(), key=lambda kv: -kv[1])[:12]))
for e in core[:10]:
    what = e.findtext("what") or e.findtext("xwhat/text")
    frames = [f"{f.findtext('fn')} ({(f.findtext('obj') or '').rsplit('/', 1)[-1]})" for f in e.iter("frame")][:8]
    print(f"  {e.findtext('kind')}: {what}\n    " + "\n    ".join(frames))
sys.exit(1 if core else 0)
PYEOF
