#!/usr/bin/env python3
"""Record the answers of the installed pciutils that the tests compare gpuclass with.

    python tools/record_references.py            # rewrite tests/reference/*.json.xz
    python tools/record_references.py --check    # exit 1 when pciutils now answers otherwise

Run it in the project's virtual environment (gpuclass importable) on a machine
with pciutils and libpci3 (``apt-get install pciutils libpci3``), after changing
``data/pci.ids``, a fake machine tree (``tests/fakesys.py``, ``tests/fakemachine.py``)
or the probes below.  It writes two xz-compressed JSON files:

``libpci.json.xz``
    libpci's name for every entry of the bundled pci.ids (vendors, subsystem
    vendors, devices, each device as its own subsystem, subsystems), every class
    and subclass pair, every prog-if of every known subclass, a seeded sample of
    unknown IDs, and ``probes``: small pci.ids texts (grammar corners, generic
    subsystems, names that are not UTF-8) with libpci's verdict (the error it
    reports, with its line) and its names.  Names are libpci's bytes, kept
    losslessly (bytes that are not UTF-8 as surrogate escapes).
``lspci.json.xz``
    lspci's output (stdout, exit status) for every fake tree and every form in
    ``tests/recorded.py``, with the tree's digest.

Both name the pciutils version and the SHA-256 of the pci.ids they answer for.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import recorded  # noqa: E402
from libpci_ref import PROBES, Names, find_libpci, record_bundled, record_probe  # noqa: E402

from gpuclass.db import PciDatabase  # noqa: E402

BUNDLED = ROOT / "data" / "pci.ids"
def record_libpci(tmp: Path, version: str) -> dict:
    db = PciDatabase.from_bytes(BUNDLED.read_bytes(), source=str(BUNDLED))
    ref = Names(BUNDLED)
    ref.load()
    try:
        bundled = record_bundled(ref, db)
    finally:
        ref.close()
    return {"pciutils": version, "pci_ids_sha256": recorded.bundled_sha256(), "bundled": bundled,
            "probes": {name: record_probe(text, tmp) for name, text in PROBES.items()}}


def record_lspci(lspci: str, tmp: str, version: str) -> dict:
    trees = {}
    for name in sorted(recorded.TREES):
        root = os.path.join(tmp, name)
        digest = recorded.write_tree(name, root)
        forms = {}
        for form in recorded.LSPCI_FORMS:
            proc = subprocess.run(recorded.lspci_command(lspci, form, root, BUNDLED),
                                  capture_output=True, text=True, errors="surrogateescape", check=False)
            forms[form] = {"rc": proc.returncode, "stdout": proc.stdout,
                           "stderr": proc.stderr.replace(str(root), "$ROOT").replace(tmp, "$PARENT")}
        trees[name] = {"digest": digest, "forms": forms}
    return {"pciutils": version, "pci_ids_sha256": recorded.bundled_sha256(), "trees": trees}


def _dump(data: dict) -> bytes:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return lzma.compress(text.encode("utf-8"), preset=9 | lzma.PRESET_EXTREME)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the recorded files instead of writing")
    args = ap.parse_args(argv)
    lspci = recorded.live_lspci()
    if lspci is None or find_libpci() is None:
        print("record_references: needs lspci and libpci.so.3 (apt-get install pciutils libpci3)",
              file=sys.stderr)
        return 2
    version = subprocess.run([lspci, "--version"], capture_output=True, text=True, check=True).stdout.split()[-1]
    with tempfile.TemporaryDirectory() as tmp:
        fresh = {recorded.LIBPCI_FILE: record_libpci(Path(tmp), version),
                 recorded.LSPCI_FILE: record_lspci(lspci, tmp, version)}
    status = 0
    for path, data in fresh.items():
        if args.check:
            if not path.exists() or recorded._load(path) != json.loads(json.dumps(data)):
                print(f"{path.relative_to(ROOT)}: differs from what pciutils {version} answers now",
                      file=sys.stderr)
                status = 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_dump(data))
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size} bytes")
    return status


if __name__ == "__main__":
    sys.exit(main())
