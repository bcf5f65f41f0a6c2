#!/bin/sh
# Build the native core with AddressSanitizer + UndefinedBehaviorSanitizer (and the
# Cython bounds/wraparound/initialized checks on: GPUCLASS_SANITIZE=1 in setup.py),
# install it into its own virtual environment, and run the whole test suite under it.
#
#   tools/sanitize.sh [pytest args...]        e.g. tools/sanitize.sh -x tests/test_parse.py
#
# Environment: PYTHON (interpreter for the venv, default python3), SANITIZE_VENV
# (default .venv-sanitize in the repository; reused between runs).
#
# How: the working tree is copied (tracked and untracked, not ignored) into a
# temporary directory and installed from there, so no sanitized object file lands
# in ./build or next to the in-tree extension.  The suite then runs from a copy
# without gpuclass/ (so only the installed, sanitized package can be imported,
# in subprocesses too), with libasan and libubsan preloaded into the plain CPython
# (the interpreter itself is not instrumented).  Leak checking is off: CPython
# keeps interned objects alive at exit on purpose.  ASan's quarantine of freed memory
# is 16 MB, not 256: what it holds back counts into the resident memory that the
# memory-ceiling tests bound.  Any ASan or UBSan report aborts the process, which fails
# the test (or the run) that triggered it.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${SANITIZE_VENV:-$ROOT/.venv-sanitize}
PY=${PYTHON:-python3}

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
# the build requirements, then the package's own and its [test] extra's, read from
# pyproject.toml (the same set CI installs; the package itself comes sanitized below)
"$VENV/bin/pip" install -q cython 'setuptools>=77' 'numpy>=2.0' "tomli; python_version < '3.11'"
"$VENV/bin/python" - "$ROOT/pyproject.toml" > "$VENV/requirements-test.txt" <<'PY'
import sys
try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
print("\n".join(project["dependencies"] + project["optional-dependencies"]["test"]))
PY
"$VENV/bin/pip" install -q -r "$VENV/requirements-test.txt"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT INT TERM
mkdir "$WORK/src" "$WORK/run"
(cd "$ROOT" && git ls-files -z -co --exclude-standard | xargs -0 tar -cf - 2>/dev/null) | tar -xf - -C "$WORK/src"
(cd "$WORK/src" && GPUCLASS_SANITIZE=1 "$VENV/bin/pip" install -q --no-build-isolation --no-deps --force-reinstall .)

ASAN=$(gcc -print-file-name=libasan.so)
UBSAN=$(gcc -print-file-name=libubsan.so)
for MOD in gpuclass._core gpuclass._feed; do
    SO=$(cd "$WORK" && env LD_PRELOAD="$ASAN:$UBSAN" ASAN_OPTIONS=detect_leaks=0 \
         "$VENV/bin/python" -I -c "import $MOD as c; print(c.__file__)")
    if ! grep -q __asan_report "$SO"; then
        echo "sanitize.sh: $SO is not built with AddressSanitizer" >&2
        exit 1
    fi
done

# the tests, fuzz corpora and configuration, without the package sources; pytest captures
# sys.stdout and sys.stderr only (--capture=sys), so that a sanitizer's report, written to
# descriptor 2 as the process aborts, reaches the terminal rather than a capture file that
# the aborted process never shows
(cd "$WORK/src" && tar -cf - --exclude=./gpuclass --exclude=./build .) | tar -xf - -C "$WORK/run"

cd "$WORK/run"
echo "sanitize.sh: gpuclass._core and gpuclass._feed built with ASan+UBSan, running the suite" >&2
env LD_PRELOAD="$ASAN:$UBSAN" GPUCLASS_SOURCE_TREE="$WORK/src" \
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:quarantine_size_mb=16 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    PATH="$VENV/bin:$PATH" \
    "$VENV/bin/pytest" -q -p no:cacheprovider --capture=sys "$@"
