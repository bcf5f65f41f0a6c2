"""The column-wise lspci parsers give exactly what the line-by-line reference gives.

``parse_lspci_mm`` first decodes each distinct line once (``_mm_dedup``) and
``parse_lspci_vmm`` first decodes whole columns (``_vmm_columns``); both hand
anything unusual to the exact paths.  These tests switch the fast paths off and
compare, on dumps written by the writer and on dumps with odd lines mixed in.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpuclass.sources.lspci as L
from gpuclass.sources.lspci import mm as LM
from gpuclass.sources.lspci import vmm as LV
from lspci_samples import GEX44_NNMM_D, VMM, tables


def _reference_mm(text):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(LM, "_mm_dedup", lambda text, source: None)
        return L.parse_lspci_mm(text)


def _references_vmm(text):
    """The exact path, and the plain line-by-line one (every block through _vmm_record)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(LV, "_vmm_columns", lambda text, source: None)
        exact = L.parse_lspci_vmm(text)
        m.setattr(LV, "_vmm_fast_rows", lambda chunks, source, first_line=1: None)
        plain = L.parse_lspci_vmm(text)
    return exact, plain


def _same(a, b):
    assert a.equals(b, text=True), a.diff(b)
    assert list(a.problems) == list(b.problems)
    assert a.source == b.source


ODD_VMM_LINES = [
    "", "", " ", "\t", "Slot:\t0000:07:00.0", "Slot:\tbogus", "Class:\tVGA compatible controller",
    "Class:\tX [0302]", "Vendor:\tV [10de]", "Device:\tD [2bb5]", "Device:\t2bb5", "SVendor:\tS [1028]",
    "SVendor:\t", "SDevice:\tjunk", "Rev:\tzz", "Rev:\ta1", "ProgIf:\t01", "Driver:\t", "Driver:\t nvidia ",
    "NUMANode:\t-1", "NUMANode:\tnone", "IOMMUGroup:\t007", "Module:\tnvidia", "Module:\tnouveau",
    "no colon here", "Vendor:\tDr\u00e4ger [1234]", "Class:VGA [0300]", "Slot:  01:00.0  ",
    "NUMANode:\t4294967296", "IOMMUGroup:\t" + "9" * 40, "NUMANode:\t2147483647",
]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(with_details=True), fmt=st.sampled_from(["-vmm -nn", "-vmm -nn -D"]),
       reps=st.integers(1, 3), odd=st.lists(st.tuples(st.integers(0, 400), st.sampled_from(ODD_VMM_LINES)),
                                             max_size=4),
       crlf=st.booleans())
def test_vmm_fast_equals_reference(data, fmt, reps, odd, crlf):
    t, _ = data
    lines = (t.to_lspci_text(fmt) * reps).split("\n")
    for at, line in odd:
        lines.insert(at % (len(lines) + 1), line)
    text = "\n".join(lines)
    if crlf:
        text = text.replace("\n", "\r\n")
    got = L.parse_lspci_vmm(text)
    exact, plain = _references_vmm(text)
    _same(got, exact)
    _same(got, plain)


@pytest.mark.parametrize("text", [
    VMM, VMM * 3, "\n\n" + VMM + "\n\n\n\n" + VMM, VMM.replace("\n\n", "\n \n"), "", "\n\n\n",
    VMM + "Slot:\t02:00.0\n", VMM.replace("Rev:", "Rev:\t0x", 1),
    VMM.replace("NUMANode:\t1", "NUMANode:\t-2147483649") * 2, VMM + "IOMMUGroup:\t" + "9" * 5000 + "\n",
])
def test_vmm_fast_equals_reference_on_examples(text):
    got = L.parse_lspci_vmm(text)
    for ref in _references_vmm(text):
        _same(got, ref)


ODD_MM_LINES = [
    "", " ", "01:00.0 junk", '00:1f.6 "Ethernet controller [0200]" "Intel Corporation [8086]" '
    '"Ethernet Connection (17) I219-LM [1a1c]" -r11 "Intel Corporation [8086]" "Device [7270]"',
    '10000:01:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation [10de]" "Device [2bb5]" '
    '-ra1 -p00 "NVIDIA Corporation [10de]" "Device [204e]"',
    '01:00.0 "0300" "10de" "2bb5" -ra1 "" ""',
]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(with_details=False), fmt=st.sampled_from(["-nnmm", "-nnmm -D"]),
       reps=st.integers(1, 4), odd=st.lists(st.tuples(st.integers(0, 400), st.sampled_from(ODD_MM_LINES)),
                                             max_size=3),
       final_newline=st.booleans())
def test_mm_dedup_equals_reference(data, fmt, reps, odd, final_newline):
    t, _ = data
    lines = (t.to_lspci_text(fmt) * reps).splitlines()
    for at, line in odd:
        lines.insert(at % (len(lines) + 1), line)
    text = "\n".join(lines) + ("\n" if final_newline else "")
    _same(L.parse_lspci_mm(text), _reference_mm(text))


def test_mm_dedup_takes_repeated_dumps(monkeypatch):
    text = GEX44_NNMM_D * 4
    calls = []
    real = LM._mm_dedup
    monkeypatch.setattr(LM, "_mm_dedup", lambda *a: calls.append(1) or real(*a))
    got = L.parse_lspci_mm(text)
    assert calls and real(text, "lspci -nnmm") is not None
    _same(got, _reference_mm(text))


@pytest.mark.parametrize("fmt", ["-nnmm", "-nnmm -D", "-vmm -nn", "-vmm -nn -D"])
def test_fast_paths_on_a_generated_fleet(tmp_path, fmt):
    """What the benchmark parses: a generated fleet's dump, repeated."""
    import fakesys

    from gpuclass.db import default_database
    from gpuclass.sources.sysfs import scan_sysfs

    fakesys.write_tree(tmp_path, fakesys.generated(300))
    text = scan_sysfs(tmp_path).to_lspci_text(fmt, db=default_database())
    if "vmm" in fmt:
        text = "\n".join([text] * 3)  # a blank line between the copies: blocks stay blocks
        assert LV._vmm_columns(text, "x") is not None
        got = L.parse_lspci_vmm(text)
        for ref in _references_vmm(text):
            _same(got, ref)
    else:
        text *= 3
        assert LM._mm_dedup(text, "x") is not None
        _same(L.parse_lspci_mm(text), _reference_mm(text))
