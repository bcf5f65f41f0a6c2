"""Text that is no lspci output: one typed error naming what it looks like (the library),
exit 3 (``scan --lspci``), one flagged row for the file (``audit`` of a directory)."""

from __future__ import annotations

import json

import pytest

from gpuclass.audit import audit_paths
from gpuclass.cli.main import main
from gpuclass.errors import InputError, NotLspciOutput, SourceError
from gpuclass.sources.lspci import parse_lspci


def hex_dump(with_ids: bool) -> str:
    out = []
    for addr, name, cls, ids in (("00:00.0", "Host bridge", "0600", "8086:09a2"),
                                 ("17:00.0", "3D controller", "0302", "10de:2bb5")):
        if with_ids:  # lspci -nnx
            out.append(f"{addr} {name} [{cls}]: Vendor Device [{ids}]")
        else:
            out.append(f"{addr} {name}: Vendor Device")
        v, d = ids.split(":")
        first = [v[2:], v[:2], d[2:], d[:2]] + ["00"] * 12
        for row in range(4):
            cells = first if row == 0 else [f"{(row * 16 + k) % 256:02x}" for k in range(16)]
            out.append(f"{row * 16:02x}: " + " ".join(cells))
        out.append("")
    return "\n".join(out)


TREE = ("-[0000:00]-+-00.0  Intel Corporation Device\n"
        "           +-01.0-[17]----00.0  NVIDIA Corporation Device\n"
        "           +-02.0-[3a]--+-00.0  NVIDIA Corporation Device\n"
        "           |            \\-00.1  NVIDIA Corporation Device\n"
        "           \\-1f.0  Intel Corporation Device\n")
NOT_LSPCI = {
    "empty": ("", "the input is empty"),
    "blank": ("\n \n\t\n", "the input is empty"),
    "hex": (hex_dump(False), "looks like an lspci -x hex dump"),
    "tree": (TREE, "looks like an lspci -t tree"),
    "json": (json.dumps({"devices": [{"slot": "17:00.0", "vendor": "10de", "device": "2bb5"}]}, indent=2),
             "looks like JSON"),
    "json-list": ('[{"bus": "17:00.0"}]\n', "looks like JSON"),
    "prose": ("The server has four GPUs in slots 1 to 4.\nPlease advise on pricing.\n",
              "no line reads as a PCI device"),
}


@pytest.mark.parametrize("name", NOT_LSPCI)
def test_text_that_is_no_lspci_output_is_one_typed_error(name):
    text, says = NOT_LSPCI[name]
    with pytest.raises(NotLspciOutput, match=says) as info:
        parse_lspci(text, source="dump.txt")
    err = info.value
    assert isinstance(err, InputError) and isinstance(err, SourceError)
    assert str(err).startswith("dump.txt: not lspci output: ") and "collect with lspci -nn" in str(err)
    assert "\n" not in str(err)


def test_lspci_output_with_bad_lines_is_still_read():
    # hex lines under device lines that carry IDs: the devices are read, the hex lines flagged
    t = parse_lspci(hex_dump(True))
    assert sorted(f"{v:04x}:{d:04x}" for v, d in zip(t.vendor[~t.invalid_mask()], t.device[~t.invalid_mask()])) \
        == ["10de:2bb5", "8086:09a2"]
    # plain lspci (names only): each line a flagged row saying it has no IDs
    t = parse_lspci("17:00.0 3D controller: NVIDIA Corporation Device\n3a:00.0 3D controller: NVIDIA Corporation\n")
    assert t.invalid_mask().all() and len(t) == 2 and all("no numeric" in p for p in t.problems)


@pytest.mark.parametrize("name", NOT_LSPCI)
def test_scan_lspci_exits_3_with_one_line(tmp_path, capsys, name):
    text, says = NOT_LSPCI[name]
    p = tmp_path / "dump.txt"
    p.write_text(text)
    assert main(["scan", "--lspci", str(p)]) == 3
    out = capsys.readouterr()
    assert out.out == ""
    [line] = out.err.splitlines()
    assert str(p) in line and says in line


def test_audit_of_a_directory_flags_each_such_file_once(tmp_path):
    d = tmp_path / "dumps"
    d.mkdir()
    for name in ("hex", "tree", "prose"):
        (d / f"{name}.txt").write_text(NOT_LSPCI[name][0])
    (d / "good.txt").write_text("17:00.0 3D controller [0302]: NVIDIA Corporation Device [10de:2bb5] (rev a1)\n")
    got = {r.server: r for r in audit_paths([d])}
    assert got["good"].slices == 4 and not got["good"].problems
    for name in ("hex", "tree", "prose"):
        r = got[name]
        assert r.slices == 0 and len(r.problems) == 1, r.problems
        assert NOT_LSPCI[name][1] in r.problems[0]
