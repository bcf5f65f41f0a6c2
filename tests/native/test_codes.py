"""The C kernels' codes (``_native/include/gpuclass_codes.h``) are Python's, every one of them.

The header is the C side of ``gpuclass.constants`` and the kernel contracts; this is
the one place the two are compared (nothing asserts them at import).
"""

from __future__ import annotations

import os
import re
import typing
from pathlib import Path

from gpuclass import constants as C
from gpuclass._native.contract import audit as A
from gpuclass._native.contract import match as M
from gpuclass._native.contract import pciids as P
from gpuclass._native.contract import rollup as R
from gpuclass._native.contract import sysfs as S
from gpuclass.models import Status

# The source tree's header: beside the tests, or where tools/sanitize.sh copied the sources
# (it runs the suite from a copy without gpuclass/, against the installed sanitized build).
SOURCE = Path(os.environ.get("GPUCLASS_SOURCE_TREE") or Path(__file__).resolve().parents[2])
HEADER = SOURCE / "gpuclass" / "_native" / "include" / "gpuclass_codes.h"


def header_codes() -> dict[str, int]:
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"\bGPUCLASS_(\w+)\s*=\s*(\d+)", text)}


def python_codes() -> dict[str, int]:
    want: dict[str, int] = {}
    for name in ("NOT_GPU", "SUPPORTED", "UNSUPPORTED", "COMPANION", "VIRTUAL_FUNCTION", "INVALID"):
        want[f"ST_{name}"] = getattr(C, name)
    for name in ("FLAG_VF", "FLAG_PF", "FLAG_BOOT_VGA", "FLAG_INVALID", "R_CARDS", "R_SLICES",
                 "R_UNSUPPORTED", "R_COMPANIONS", "R_VFS", "R_INVALID", "R_MODEL", "R_MIXED",
                 "ROLLUP_COLUMNS", "MIXED_UNSUPPORTED", "MIXED_MODELS"):
        want[name] = getattr(C, name)
    for name in ("VL_GPU_VENDOR", "VL_RULES", "CL_GPU", "CL_COMPANION"):
        want[name] = getattr(M, name)
    want["ROLLUP_CHUNK"] = R.ROLLUP_CHUNK
    for name in dir(P):
        if re.fullmatch(r"[EFK]_[A-Z0-9_]+", name):
            want[name] = getattr(P, name)
    want["MAX_LINE"] = P.MAX_LINE
    for name in ("RU_STATUS", "RU_GROUP", "RU_OVERFLOW", "RU_CARD"):
        want[name] = getattr(R, name)
    for name in ("ABSENT", "STR32", "STR64", "INT", "DICT", "CELL_OK", "CELL_MISSING", "CELL_BAD", "CELL_PAIR"):
        want[name] = getattr(A, name)
    for field, width in zip(A.FIELDS, A.WIDTHS):
        want[f"WIDTH_{field.upper()}"] = width
    for i, column in enumerate(S.VALUE_COLUMNS):
        want[f"SV_{column.upper()}"] = i
    want["SV_N"] = S.N_VALUES
    for name in dir(S):
        if re.fullmatch(r"AT_[A-Z]+", name):
            want[name] = getattr(S, name)
    for i, name in enumerate(S.OPTIONAL):
        want[f"OPT_{name.upper()}"] = i
    want["OPT_N"] = len(S.OPTIONAL)
    return want


def test_every_c_code_is_pythons():
    have, want = header_codes(), python_codes()
    assert have, f"no codes read from {HEADER}"
    assert have == want


def test_status_names_and_the_models_literal_agree():
    assert tuple(typing.get_args(Status)) == C.STATUS_NAMES
    assert len(C.STATUS_NAMES) == C.INVALID + 1


def test_sysfs_defaults_fit_their_columns():
    assert len(S.DEFAULTS) == S.N_VALUES
