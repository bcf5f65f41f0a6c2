"""The compiled cache a wheel ships beside its bundled pci.ids (``setup.py`` builds it with
:func:`gpuclass.db.database.write_shipped_cache`): a fresh machine's first command maps it
(:func:`gpuclass.db.mapped.cached_names`) instead of importing numpy to parse the text,
only while the bundled file is the one it was compiled from, only where the user's own
cache would be trusted, and with the same names as a parse of the file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import outside_tree

import gpuclass
from gpuclass.db import PciDatabase, locate, mapped
from gpuclass.db.database import write_shipped_cache
from gpuclass.db.layout import ARRAYS, map_file, parse_head

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def bundle(tmp_path, monkeypatch):
    """A package data directory of its own: the bundled pci.ids and its shipped cache,
    and a user cache directory with nothing in it yet."""
    data = tmp_path / "package" / "data"
    data.mkdir(parents=True)
    src = data / "pci.ids"
    shutil.copyfile(locate.bundled_name(), src)
    monkeypatch.setattr(locate, "bundled_name", lambda: str(src))
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.delenv("GPUCLASS_PCI_IDS", raising=False)
    return src, write_shipped_cache(src, data)


def test_a_fresh_machine_maps_the_shipped_cache(bundle):
    src, shipped = bundle
    assert shipped.name == locate.shipped_cache_name(src.read_bytes())
    assert locate.shipped_cache(str(src)) == str(shipped)
    names = mapped.cached_names()
    assert isinstance(names, mapped.MappedNames) and names.source == str(shipped)
    user_cache = Path(os.environ["GPUCLASS_CACHE_DIR"])
    assert not user_cache.exists() or not any(user_cache.iterdir())  # nothing written
    db = PciDatabase.load(src, cache=False)
    for vendor, device in ((0x10DE, 0x27B0), (0x10DE, 0x2BB1), (0x8086, 0x0D57), (0x1AF4, 0x1041)):
        assert names.device_name(vendor, device) == db.device_name(vendor, device)
    assert names.subsystem_name(0x10DE, 0x1E30, 0x10DE, 0x12BA) == "Quadro RTX 6000"


def test_the_shipped_cache_is_what_a_parse_writes(bundle, tmp_path):
    """Array for array and byte for byte what the compiled core's parse saves (the build
    compiles it with whichever core it has)."""
    src, shipped = bundle
    own = PciDatabase.load(src, cache=False).save_compiled(tmp_path / "own.gpcdb")
    layouts = []
    for path in (shipped, own):
        raw = map_file(str(path), trusted=False)
        head = parse_head(raw, str(path))
        layouts.append(([head.arrays[a] for a in ARRAYS], bytes(raw[head.payload_at:])))
    assert layouts[0] == layouts[1]
    assert PciDatabase.load_compiled(shipped, verify=True).sha256 == PciDatabase.load(src, cache=False).sha256


@pytest.mark.parametrize("change", ["a byte", "appended", "truncated"])
def test_a_changed_bundled_file_is_not_mapped_to_the_old_cache(bundle, change):
    src, _ = bundle
    text = src.read_bytes()
    changed = {"a byte": text.replace(b"NVIDIA Corporation", b"NVIDIA Corporatiom", 1),
               "appended": text + b"\n", "truncated": text[:-1]}[change]
    src.write_bytes(changed)
    assert locate.shipped_cache(str(src)) is None and mapped.cached_names() is None


def test_only_the_bundled_file_has_one(bundle, tmp_path, monkeypatch):
    src, _ = bundle
    other = tmp_path / "elsewhere" / "pci.ids"
    other.parent.mkdir()
    shutil.copyfile(src, other)
    write_shipped_cache(other, other.parent)  # a cache beside another file is not shipped
    assert locate.shipped_cache(str(other)) is None and mapped.cached_names(other) is None
    monkeypatch.setenv("GPUCLASS_PCI_IDS", str(other))
    assert mapped.cached_names() is None
    assert mapped.cached_names("-") is None


def test_an_untrusted_or_damaged_shipped_cache_is_refused(bundle):
    src, shipped = bundle
    os.chmod(shipped, 0o666)  # others could have written it
    assert mapped.cached_names() is None
    os.chmod(shipped, 0o644)
    raw = bytearray(shipped.read_bytes())
    raw[-100] ^= 0xFF  # a flipped bit in the payload: a CRC-32 fails
    shipped.write_bytes(bytes(raw))
    assert locate.shipped_cache(str(src)) == str(shipped) and mapped.cached_names() is None


def test_the_users_cache_comes_first(bundle):
    src, shipped = bundle
    db = PciDatabase.load()  # writes the user's cache and its alias
    names = mapped.cached_names()
    assert names.source == db.cache_path != str(shipped)


def test_an_installed_wheel_ships_it():
    """Installed from a wheel (the bundled file inside the package), the package carries
    the cache of that file; a source checkout (editable) has none unless one was built."""
    bundled = locate.bundled_name()
    pkg_data = Path(gpuclass.__file__).resolve().parent / "data"
    if Path(bundled).parent == pkg_data:
        assert locate.shipped_cache(bundled) is not None
    else:
        assert Path(bundled).parent == REPO / "data"


def test_a_fresh_process_imports_no_numpy_where_one_is_shipped(bundle, tmp_path):
    """The command's first run on a fresh machine, as a process: names without numpy."""
    src, _ = bundle
    code = ("import sys; from gpuclass.db import locate; locate.bundled_name = lambda: sys.argv[1]; "
            "from gpuclass.db.mapped import names_for; n = names_for(); "
            "print(n.device_name(0x10de, 0x27b0), 'numpy' in sys.modules)")
    env = {**os.environ, "GPUCLASS_CACHE_DIR": str(tmp_path / "fresh")}
    env.pop("GPUCLASS_PCI_IDS", None)
    out = subprocess.run([sys.executable, "-c", code, str(src)], env=env, capture_output=True, text=True,
                         check=True, cwd=outside_tree()).stdout.strip()
    assert out == "AD104GL [RTX 4000 SFF Ada Generation] False"
