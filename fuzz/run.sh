#!/bin/sh
# Run one fuzz target (or "all") for SECONDS: fuzz/run.sh TARGET SECONDS [libFuzzer flags]
# PYTHON picks the interpreter (a venv with gpuclass installed and atheris: pip install -e '.[fuzz]').
exec "${PYTHON:-python3}" "$(dirname "$0")/run.py" "$@"
