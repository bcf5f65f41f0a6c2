"""The pci.ids grammar, strict and lenient, against both cores (the ``core`` fixture)."""

from __future__ import annotations

import numpy as np
import pytest

from gpuclass.errors import PciIdsError, SkippedLine
from helpers import names_of


SAMPLE = (
    "# header comment\n"
    "#\tVersion: 2026.08.22\n"
    "\n"
    "10de  NVIDIA Corporation\n"
    "\t1b80  GP104 [GeForce GTX 1080]\n"
    "\t\t10de 119e  GeForce GTX 1080 Founders Edition\n"
    "\t# an indented comment inside a block\n"
    "\t\t1043 8591  ROG Strix GTX 1080\n"
    "\t27b0  AD104GL [RTX 4000 SFF Ada Generation]\n"
    "8086  Intel Corporation\n"
    "\t1234  Some device\n"
    "C 03  Display controller\n"
    "\t00  VGA compatible controller\n"
    "\t\t00  VGA controller\n"
    "\t\t01  8514 controller\n"
    "\t02  3D controller\n"
    "C 0c  Serial bus controller\n"
    "\t03  USB controller\n"
    "\t\t30  XHCI\n"
)


def test_full_grammar(core):
    tables, skipped = core.parse_pci_ids(SAMPLE.encode())
    assert skipped == []
    assert names_of(tables, "vendor") == {0x10DE: "NVIDIA Corporation", 0x8086: "Intel Corporation"}
    assert names_of(tables, "device") == {
        0x10DE1B80: "GP104 [GeForce GTX 1080]",
        0x10DE27B0: "AD104GL [RTX 4000 SFF Ada Generation]",
        0x80861234: "Some device",
    }
    assert names_of(tables, "subsys") == {
        0x10DE1B80_10DE119E: "GeForce GTX 1080 Founders Edition",
        0x10DE1B80_10438591: "ROG Strix GTX 1080",
    }
    assert names_of(tables, "class") == {0x03: "Display controller", 0x0C: "Serial bus controller"}
    assert names_of(tables, "subclass") == {
        0x0300: "VGA compatible controller",
        0x0302: "3D controller",
        0x0C03: "USB controller",
    }
    assert names_of(tables, "progif") == {0x030000: "VGA controller", 0x030001: "8514 controller", 0x0C0330: "XHCI"}
    # keys sorted, dtypes as documented
    assert tables["subsys_keys"].dtype == np.uint64
    assert tables["device_keys"].dtype == np.uint32
    assert tables["vendor_keys"].dtype == np.uint16
    for t in ("vendor", "device", "subsys", "class", "subclass", "progif"):
        k = tables[f"{t}_keys"]
        assert np.all(k[1:] > k[:-1])


def test_unsorted_input_is_sorted(core):
    text = b"8086  Intel\n\t0002  b\n\t0001  a\n10de  NVIDIA\n"
    tables, _ = core.parse_pci_ids(text)
    assert tables["vendor_keys"].tolist() == [0x10DE, 0x8086]
    assert names_of(tables, "device") == {0x80860001: "a", 0x80860002: "b"}


def test_generic_subsystem_block(core):
    text = b"1af4  Red Hat, Inc.\nS 1af4\n\t1100  QEMU Virtual Machine\n\t0001  Other\n"
    tables, _ = core.parse_pci_ids(text)
    assert names_of(tables, "gensub") == {0x1AF41100: "QEMU Virtual Machine", 0x1AF40001: "Other"}


def test_unknown_reserved_blocks_are_skipped(core):
    text = b"10de  NVIDIA\nX 12  reserved block\n\t34  nested\n\t\t\t\t56  deep\nC 02  Network\n"
    tables, skipped = core.parse_pci_ids(text)
    assert skipped == []
    assert names_of(tables, "class") == {0x02: "Network"}
    assert len(tables["device_keys"]) == 0


@pytest.mark.parametrize(
    "text, table, expected",
    [
        (b"10de  NVIDIA\r\n\t1b80  GTX 1080\r\n", "device", {0x10DE1B80: "GTX 1080"}),
        (b"10de  NVIDIA\n\t1b80  no newline at end", "device", {0x10DE1B80: "no newline at end"}),
        (b"10DE  NVIDIA\n\t1B80  Upper\n", "device", {0x10DE1B80: "Upper"}),
        (b"10de\tNVIDIA\n\t1b80\tTabbed\n", "device", {0x10DE1B80: "Tabbed"}),
        (b"10de NVIDIA\n\t1b80 One space\n", "device", {0x10DE1B80: "One space"}),
        (b"10de  NVIDIA\n\t1b80  Trailing two  \n", "device", {0x10DE1B80: "Trailing two "}),
        (b"10de  NVIDIA\n\t1b80  Inner  spaces\tkept\n", "device", {0x10DE1B80: "Inner  spaces\tkept"}),
        (b"   \n\t\t \n10de  NVIDIA\n\n  # indented\n\t1b80  X\n", "device", {0x10DE1B80: "X"}),
        ("1234  Ågård & Søn – ™ 日本\n".encode(), "vendor", {0x1234: "Ågård & Søn – ™ 日本"}),
        (b"10de  NVIDIA\n\t1b80  A\rignored after CR\n", "device", {0x10DE1B80: "A"}),
        (b"0000  Zero vendor\nffff  Illegal vendor ID\n", "vendor", {0: "Zero vendor", 0xFFFF: "Illegal vendor ID"}),
    ],
    ids=["crlf", "last-line", "uppercase", "tabs", "single-space", "trailing-ws", "inner-ws",
         "blank-lines", "utf8", "cr-mid-line", "zero-and-ffff"],
)
def test_lexical_cases(core, text, table, expected):
    tables, skipped = core.parse_pci_ids(text)
    assert skipped == []
    assert names_of(tables, table) == expected


def test_empty_and_comment_only(core):
    for text in (b"", b"\n", b"# only a comment", b"#\n#\n"):
        tables, skipped = core.parse_pci_ids(text)
        assert skipped == [] and len(tables["vendor_keys"]) == 0 and len(tables["name_start"]) == 0


BAD = [
    (b"10dX  NVIDIA\n", 1, "vendor ID: bad hex digit"),
    (b"10d  NVIDIA\n", 1, "vendor ID: wrong ID width"),
    (b"10de5  NVIDIA\n", 1, "vendor ID: wrong ID width"),
    (b"10de\n", 1, "vendor name: missing"),
    (b"10de   \n", 1, "vendor name: missing"),
    (b"10de  NVIDIA\n\t1b8  short\n", 2, "device ID: wrong ID width"),
    (b"10de  NVIDIA\n\t1b80\n", 2, "device name: missing"),
    (b"10de  NVIDIA\n\t1b80  X\n\t\t\t0001  deep\n", 3, "too many leading tabs (at most 2)"),
    (b"\t1b80  orphan device\n", 1, "device line before any vendor or class"),
    (b"\t\t10de 0001  orphan subsystem\n", 1, "subsystem line before any device"),
    (b"10de  NVIDIA\n\t\t10de 0001  no device yet\n", 2, "subsystem line before any device"),
    (b"10de  NVIDIA\n\t1b80  X\n\t\t10de0001  glued\n", 3, "subsystem vendor ID: wrong ID width"),
    (b"10de  NVIDIA\n\t1b80  X\n\t\t10de 001  short\n", 3, "subsystem device ID: wrong ID width"),
    (b"10de  NVIDIA\n\t1b80  X\n\t\t10de 0001\n", 3, "subsystem name: missing"),
    (b"10de  NVIDIA\n\t1b80  X\n\t\t10de\n", 3, "subsystem device ID: missing"),
    (b"C 03\n", 1, "class name: missing"),
    (b"C 03  Display\n\t00  VGA\n\t\t01\n", 3, "prog-if name: missing"),
    (b"C 3  Display\n", 1, "class ID: wrong ID width"),
    (b"C 0g  Display\n", 1, "class ID: bad hex digit"),
    (b"C 03  Display\n\t0  x\n", 2, "subclass ID: wrong ID width"),
    (b"C 03  Display\n\t00  VGA\n\t\tzz  x\n", 3, "prog-if ID: bad hex digit"),
    (b"10de  NVIDIA\n\t1b80  x" + b"y" * 1100 + b"\n", 2, "line too long (over 1022 bytes)"),
    (b"10de  NV\x00IDIA\n", 1, "NUL byte in line"),
    (b"S 1af4\n", 1, "generic subsystem vendor ID: generic subsystem block for a vendor not defined above"),
    (b"1af4  Red Hat\nS 1af4  named\n", 2, "malformed generic subsystem header (expected 'S vvvv')"),
    (b"1af4  Red Hat\nS 1af\n", 2, "generic subsystem vendor ID: wrong ID width"),
    (b"1af4  Red Hat\nS 1af4\n\t1100  X\n\t\t0001 0002  too deep\n", 4,
     "a generic subsystem block takes one level of entries only"),
    (b"10de  NVIDIA\n10de  NVIDIA again\n", 2, "duplicate vendor 10de (first defined at line 1)"),
    (b"10de  N\n\t1b80  a\n\t1b80  b\n", 3, "duplicate device 10de:1b80 (first defined at line 2)"),
    (b"10de  N\n\t1b80  a\n\t\t10de 0001  x\n\t\t10de 0001  y\n", 4,
     "duplicate subsystem 10de:1b80 10de:0001 (first defined at line 3)"),
    (b"C 03  D\n\t00  V\nC 03  again\n", 3, "duplicate class 03 (first defined at line 1)"),
]


@pytest.mark.parametrize("text, line, reason", BAD, ids=[r for _, _, r in BAD])
def test_strict_errors_name_file_line_reason(core, text, line, reason):
    with pytest.raises(PciIdsError) as info:
        core.parse_pci_ids(text, True, "my.ids")
    err = info.value
    assert (err.filename, err.line, err.reason) == ("my.ids", line, reason)
    assert str(err) == f"my.ids:{line}: {reason}"


@pytest.mark.parametrize("text, line, reason", BAD, ids=[r for _, _, r in BAD])
def test_lenient_skips_the_same_line(core, text, line, reason):
    tables, skipped = core.parse_pci_ids(text, False, "my.ids")
    assert skipped, "lenient mode must report what it skipped"
    assert isinstance(skipped[0], SkippedLine)
    assert (skipped[0].line, skipped[0].reason) == (line, reason)


KEPT = [
    # libpci takes any byte in a name; lenient mode lists the line, the name reads with U+FFFD
    (b"10de  NVIDIA\n\t1b80  \xff\xfe bad\n", 2, "device name: not UTF-8", "device", 0x10DE1B80,
     "\ufffd\ufffd bad"),
    (b"10de  NVIDIA\n\t1b80  \xed\xa0\x80 surrogate\n", 2, "device name: not UTF-8", "device", 0x10DE1B80,
     "\ufffd\ufffd\ufffd surrogate"),
    (b"10de  Dr\xe4ger\n", 1, "vendor name: not UTF-8", "vendor", 0x10DE, "Dr\ufffdger"),
    # libpci reads a prog-if line straight under its class line as one of subclass 00
    (b"C 03  Display\n\t\t00  progif without subclass\n", 2, "prog-if line directly under its class line",
     "progif", 0x030000, "progif without subclass"),
    (b"C 01  M\n\t06  SATA\nC 03  D\n\t\t01  p\n", 4, "prog-if line directly under its class line",
     "progif", 0x030001, "p"),
]


@pytest.mark.parametrize("text, line, reason, table, key, name", KEPT, ids=[r for _, _, r, *_ in KEPT])
def test_lines_libpci_accepts_are_kept_and_flagged_in_lenient_mode(core, text, line, reason, table, key, name):
    tables, skipped = core.parse_pci_ids(text, True, "my.ids")
    assert skipped == [] and tables[f"{table}_keys"].tolist() == [key]
    assert names_of(tables, table)[key] == name
    tables, skipped = core.parse_pci_ids(text, False, "my.ids")
    assert names_of(tables, table)[key] == name
    assert [(s.line, s.kept) for s in skipped] == [(line, True)]
    assert skipped[0].reason.startswith(reason)


def test_duplicate_reported_before_a_later_error(core):
    text = b"10de  N\n10de  again\nzzzz  bad\n"
    with pytest.raises(PciIdsError) as info:
        core.parse_pci_ids(text)
    assert info.value.line == 2


def test_lenient_keeps_good_lines_and_skips_bad_blocks(core):
    text = (
        b"10de  NVIDIA\n"
        b"\t1b80  GTX 1080\n"
        b"\t1bXX  bad device\n"
        b"\t\t10de 0001  under the bad device: skipped\n"
        b"\t1b06  GTX 1080 Ti\n"
        b"zzzz  bad vendor\n"
        b"\t0001  in the bad vendor: skipped\n"
        b"8086  Intel\n"
        b"\t0001  kept\n"
        b"\t0001  duplicate\n"
    )
    tables, skipped = core.parse_pci_ids(text, False, "x")
    assert names_of(tables, "device") == {0x10DE1B80: "GTX 1080", 0x10DE1B06: "GTX 1080 Ti", 0x80860001: "kept"}
    assert [(s.line, s.reason) for s in skipped] == [
        (3, "device ID: bad hex digit"),
        (4, "inside a block whose header was skipped"),
        (6, "vendor ID: bad hex digit"),
        (7, "inside a block whose header was skipped"),
        (10, "duplicate device 8086:0001 (first defined at line 9)"),
    ]
    assert skipped[0].text == "\t1bXX  bad device"


def test_lenient_duplicate_keeps_first_definition(core):
    tables, skipped = core.parse_pci_ids(b"10de  first\n10de  second\n", False)
    assert names_of(tables, "vendor") == {0x10DE: "first"}
    assert skipped[0].text == "10de  second"


def test_line_limit_is_exact(core):
    ok = b"10de  " + b"n" * (1022 - 6) + b"\n"
    assert len(ok) - 1 == 1022
    tables, _ = core.parse_pci_ids(ok)
    assert len(names_of(tables, "vendor")[0x10DE]) == 1016
    with pytest.raises(PciIdsError, match="line too long"):
        core.parse_pci_ids(b"10de  " + b"n" * 1017 + b"\n")


def test_accepts_bytes_like(core):
    text = b"10de  NVIDIA\n"
    for data in (text, bytearray(text), memoryview(text)):
        tables, _ = core.parse_pci_ids(data)
        assert names_of(tables, "vendor") == {0x10DE: "NVIDIA"}


def test_bundled_file_parses_strictly_and_cores_agree(bundled_bytes, compiled_core):
    from gpuclass._native import twin

    t_py, s_py = twin.parse_pci_ids(bundled_bytes)
    assert s_py == []
    assert len(t_py["vendor_keys"]) > 2000 and len(t_py["device_keys"]) > 20000
    t_c, s_c = compiled_core.parse_pci_ids(bundled_bytes)
    assert s_c == []
    for key in t_py:
        assert t_py[key].dtype == t_c[key].dtype, key
        assert np.array_equal(t_py[key], t_c[key]), key


@pytest.mark.parametrize("text, strict, line", [
    (SAMPLE.encode(), True, 8),     # one entry less of each kind: the second subsystem's line
    (b"\t1bXX  orphan\n\t1b80  orphan\n10de  NVIDIA\n\t1b80  GTX\n", False, 2),  # an error less
    (b"zzzz  bad\n", False, 1),     # an error and no entry at all
])
def test_the_tokenizers_fill_pass_must_find_what_its_count_pass_counted(compiled_core, monkeypatch,
                                                                         text, strict, line):
    """The compiled tokenizer counts, then fills buffers of exactly that size: given less
    room than it counted (the contract's test hook), its second pass stops before writing
    past it and raises a typed error naming the line, instead of overrunning."""
    from gpuclass._native.contract import pciids as P

    want = compiled_core.scan_pci_ids(text, strict)
    monkeypatch.setattr(P, "FILL_ROOM_CUT", 1)
    with pytest.raises(PciIdsError, match="passes disagree") as info:
        compiled_core.scan_pci_ids(text, strict)
    assert info.value.line == line
    monkeypatch.setattr(P, "FILL_ROOM_CUT", 0)
    again = compiled_core.scan_pci_ids(text, strict)
    assert again[5] == want[5] and all(np.array_equal(a, b) for a, b in zip(again[2:5], want[2:5]))
