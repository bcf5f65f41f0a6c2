"""pciutils' answers, recorded in ``tests/reference/`` and live where pciutils is installed.

The tests compare gpuclass with libpci's names and lspci's output twice: always
against the answers recorded here (so a machine without pciutils runs every
comparison), and against the installed pciutils as well when it is there.
``GPUCLASS_REQUIRE_PCIUTILS=1`` (set by CI) turns a missing lspci, libpci or
strace into a failure instead of a skipped live comparison.

The recordings are made by ``tools/record_references.py`` from the installed
pciutils; each one names the pci.ids (SHA-256) and, for lspci, the fake tree
(a digest of its files) that it answers for, so that a change to either makes
the digest tests fail until the recordings are made again.

>>> sorted(TREES)[:3]
['ada_next_to_turing', 'broken', 'gex130']
>>> LSPCI_FORMS[0]
'-nnmm'
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
from functools import lru_cache
from pathlib import Path

import fakemachine
import fakesys
import pytest

HERE = Path(__file__).resolve().parent / "reference"
LIBPCI_FILE = HERE / "libpci.json.xz"
LSPCI_FILE = HERE / "lspci.json.xz"
REQUIRE = "GPUCLASS_REQUIRE_PCIUTILS"

# Every fake machine tree of the tests, by name.
TREES = {
    **fakesys.SERVERS,
    "broken": fakesys.broken,
    "pascal_and_ada": fakemachine.pascal_and_ada,
    "two_ada": fakemachine.two_ada,
    "ada_next_to_turing": fakemachine.ada_next_to_turing,
}

# Every lspci invocation the parsers understand, as recorded for every tree.
LSPCI_FORMS = (
    "-nnmm", "-nnmm -D", "-nmm", "-nmm -D",
    "-vmm -nn", "-vmm -nn -D", "-vmm -nnk", "-vmm -nnk -D", "-vmm -n",
    "-n", "-n -D", "-nn", "-nn -D", "-nk", "-nk -D", "-nnk", "-nv", "-nnv", "-nvk", "-nnvk -D",
)


def require_live() -> bool:
    """Whether a missing pciutils (or strace) must fail the tests."""
    return os.environ.get(REQUIRE, "") not in ("", "0")


def missing(what: str, install: str, instead: str = "the recorded answers were compared instead") -> None:
    """Skip a live check whose tool is missing, or fail when CI requires it."""
    msg = f"{what} is not installed ({install}); {instead}"
    if require_live():
        pytest.fail(f"{msg}, but {REQUIRE}=1 requires the live comparison")
    pytest.skip(msg)


def _load(path: Path) -> dict:
    with lzma.open(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


@lru_cache(maxsize=None)
def libpci_answers() -> dict:
    """The recorded libpci answers (see tools/record_references.py for the layout)."""
    return _load(LIBPCI_FILE)


@lru_cache(maxsize=None)
def lspci_answers() -> dict:
    """The recorded lspci output per tree and form."""
    return _load(LSPCI_FILE)


def as_shown(name: str | None) -> str | None:
    """A recorded libpci name as text: libpci's bytes (kept losslessly) read as UTF-8, any byte
    that is not UTF-8 shown as U+FFFD, as a UTF-8 reader of lspci's output shows it."""
    if name is None:
        return None
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def tree_digest(root: str | os.PathLike) -> str:
    """SHA-256 over a tree's relative paths, file contents and link targets."""
    root = os.fspath(root)
    parent = os.path.dirname(os.path.abspath(root))  # absolute links (out of the root) name it
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                target = os.readlink(path).replace(parent, "$PARENT")
                h.update(b"L" + rel.encode() + b"\0" + target.encode() + b"\0")
            elif os.path.isfile(path):
                with open(path, "rb") as fh:
                    h.update(b"F" + rel.encode() + b"\0" + fh.read() + b"\0")
            else:
                h.update(b"D" + rel.encode() + b"\0")
    return h.hexdigest()


def write_tree(name: str, root: str | os.PathLike) -> str:
    """Write fake tree ``name`` under ``root``; returns its digest."""
    fakesys.write_tree(root, TREES[name]())
    return tree_digest(root)


# lspci names a device from udev's hardware database (hwdb.bin, shipped by udev) when its
# pci.ids lacks it; gpuclass reads pci.ids alone, as libpci does with the hwdb off.  Every
# live lspci run of the tests and benchmarks passes this, so that the comparison holds on a
# machine with udev as on one without it.
LSPCI_NO_HWDB = ("-O", "hwdb.disable=1")


def lspci_command(lspci: str, form: str, root: str | os.PathLike, pci_ids: str | os.PathLike) -> list[str]:
    """lspci reading the fake tree at ``root`` with the given pci.ids (udev's hwdb off)."""
    return [lspci, *form.split(), "-i", os.fspath(pci_ids), "-A", "linux-sysfs",
            "-O", f"sysfs.path={os.fspath(root)}/sys/bus/pci", *LSPCI_NO_HWDB]


def live_lspci() -> str | None:
    return shutil.which("lspci")


def bundled_sha256() -> str:
    from gpuclass.db.locate import bundled_path

    return hashlib.sha256(bundled_path().read_bytes()).hexdigest()
