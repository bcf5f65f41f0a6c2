"""The recorded pciutils answers belong to this pci.ids and these fake trees (digest checks).

When one fails, the bundled ``data/pci.ids`` or a fake tree changed after the answers were
recorded: run ``python tools/record_references.py`` where pciutils is installed.
"""

from __future__ import annotations

import recorded

HINT = "re-record with: python tools/record_references.py (needs pciutils and libpci3)"


def test_libpci_answers_are_for_the_bundled_pci_ids():
    assert recorded.libpci_answers()["pci_ids_sha256"] == recorded.bundled_sha256(), HINT


def test_lspci_answers_are_for_the_bundled_pci_ids():
    assert recorded.lspci_answers()["pci_ids_sha256"] == recorded.bundled_sha256(), HINT


def test_lspci_answers_are_for_these_trees_and_forms(tmp_path):
    trees = recorded.lspci_answers()["trees"]
    assert sorted(trees) == sorted(recorded.TREES), HINT
    for name, rec in trees.items():
        assert recorded.write_tree(name, tmp_path / name) == rec["digest"], f"tree {name!r} changed: {HINT}"
        assert sorted(rec["forms"]) == sorted(recorded.LSPCI_FORMS), HINT


def test_both_recordings_come_from_one_pciutils():
    assert recorded.libpci_answers()["pciutils"] == recorded.lspci_answers()["pciutils"]


def test_a_changed_tree_changes_its_digest(tmp_path):
    """The digest sees a change to any file of a tree, and to any link."""
    root = tmp_path / "t"
    first = recorded.write_tree("gex44", root)
    devices = root / "sys" / "bus" / "pci" / "devices"
    (devices / "0000:01:00.0" / "revision").write_text("0xa2\n")
    second = recorded.tree_digest(root)
    (devices / "0000:01:00.0" / "driver").unlink()
    assert len({first, second, recorded.tree_digest(root)}) == 3
