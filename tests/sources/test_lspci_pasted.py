"""Dumps as pasted (markup, line numbers, group headers, elisions, colour escapes) read
to the same records as the clean dump they wrap."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass.sources.lspci import parse_lspci
from gpuclass.sources.lspci.dump import replace

ROWS = [
    "00:00.0 Host bridge [0600]: Intel Corporation Device [8086:09a2] (rev 04)",
    "02:00.0 VGA compatible controller [0300]: ASPEED Technology, Inc. ASPEED Graphics Family [1a03:2000] (rev 52)",
    "0c:00.0 VGA compatible controller [0300]: NVIDIA Corporation GP104 [GeForce GTX 1080] [10de:1b80] (rev a1)",
    "0c:00.1 Audio device [0403]: NVIDIA Corporation GP104 High Definition Audio Controller [10de:10f0] (rev a1)",
    "29:00.0 VGA compatible controller [0300]: NVIDIA Corporation GP102 [GeForce GTX 1080 Ti] [10de:1b06] (rev a1)",
    "41:00.0 VGA compatible controller [0300]: NVIDIA Corporation AD102GL [RTX 6000 Ada Generation] [10de:26b1] "
    "(rev a1)",
    "81:00.0 3D controller [0302]: NVIDIA Corporation GB202GL [RTX PRO 6000 Blackwell Server Edition] [10de:2bb5] "
    "(rev a1)",
    "81:00.4 3D controller [0302]: NVIDIA Corporation GB202GL [RTX PRO 6000 Blackwell Server Edition] [10de:2bb5] "
    "(rev a1)",
    "0000:c1:00.0 0300: 10de:1e30 (rev a1)",
    'c2:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation [10de]" "Device [2bb1]" -ra1 -p00 '
    '"NVIDIA Corporation [10de]" "Device [204b]"',
]


def ansi(line: str) -> str:
    return line.replace("10de", "\x1b[01;31m\x1b[K10de\x1b[m\x1b[K")


# each style: (i, line) -> the lines that stand for it
STYLES = {
    "spaces": lambda i, x: ["    " + x],
    "three": lambda i, x: ["   " + x],
    "tab": lambda i, x: ["\t" + x],
    "quote": lambda i, x: ["> " + x],
    "star": lambda i, x: ["* " + x],
    "dash": lambda i, x: ["- " + x],
    "bold": lambda i, x: ["**" + x + "**"],
    "code": lambda i, x: ["`" + x + "`"],
    "table": lambda i, x: ["| " + x + " |"],
    "cat-n": lambda i, x: [f"{i + 1:6d}\t" + x],
    "gutter": lambda i, x: [f"{i + 1}: " + x],
    "colour": lambda i, x: [ansi(x)],
    "iommu": lambda i, x: [f"IOMMU group {i + 3}", "\t" + x],
    "elided": lambda i, x: [x, ("[...]", "\u2026", "--", "...")[i % 4]],
}


def wrap(lines, styles) -> str:
    out = []
    for i, x in enumerate(lines):
        got = [x]
        for name in styles:
            got = [y for g in got for y in STYLES[name](i, g)]
        out += got
    return "\n".join(out) + "\n"


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(st.sampled_from(ROWS), min_size=1, max_size=8, unique=True),
       styles=st.lists(st.sampled_from(sorted(STYLES)), min_size=1, max_size=3, unique=True))
def test_a_pasted_dump_reads_as_the_clean_one(lines, styles):
    clean = parse_lspci("\n".join(lines) + "\n", source="d")
    pasted = parse_lspci(wrap(lines, styles), source="d")
    assert not pasted.invalid_mask().any(), (styles, pasted.problems)
    if "iommu" in styles:  # the headers give their groups (where no gutter number hides them)
        got = pasted.iommu_group.tolist()
        assert got == [-1] * len(lines) or got == [i + 3 for i in range(len(lines))], (styles, got)
        pasted = replace(pasted, iommu_group=clean.iommu_group)
    assert pasted.equals(clean), (styles, pasted.diff(clean))


def test_each_style_alone_on_every_row():
    clean = parse_lspci("\n".join(ROWS) + "\n", source="d")
    for name in STYLES:
        t = parse_lspci(wrap(ROWS, [name]), source="d")
        if name == "iommu":
            assert t.iommu_group.tolist() == [i + 3 for i in range(len(ROWS))]
            t = replace(t, iommu_group=clean.iommu_group)
        assert t.equals(clean), name


def test_markup_on_text_that_is_no_device_line_is_kept():
    # a quoted prose line stays one flagged row; a line number before no slot stays
    t = parse_lspci("> the card below\n" + ROWS[4] + "\n12 apples\n", source="d")
    assert int(t.invalid_mask().sum()) == 2 and int((~t.invalid_mask()).sum()) == 1
    problems = " ".join(p for p in t.problems if p)
    assert "d:1: not lspci output" in problems and "'> the card below'" in problems and "'12 apples'" in problems


def test_a_group_header_gives_its_group_to_the_lines_under_it():
    text = ("IOMMU group 16\n\t" + ROWS[0] + "\nIOMMU group 17\n\t" + ROWS[2] + "\n\t" + ROWS[3]
            + "\n\n" + ROWS[4] + "\n")
    t = parse_lspci(text, source="d")
    assert not t.invalid_mask().any()
    assert t.iommu_group.tolist() == [16, 17, 17, -1]
