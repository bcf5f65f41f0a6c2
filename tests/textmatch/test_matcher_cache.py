"""The text matcher's cache: loaded without numpy or the database, keyed by what made it,
read only under the cache's trust rules, never a stale or damaged matcher."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("ahocorasick")

from gpuclass.textmatch import TextMatcher  # noqa: E402
from gpuclass.textmatch import cache as C  # noqa: E402

TEXTS = ["2x RTX 6000 Ada", "GPU - Nvidia GeForce GTX 1080 Ti", "Quadro RTX 6000", "RTX PRO 6000 Blackwell",
         "RTX 4000 SFF Ada Generation, not included", "Intel Xeon E5-1650V3", "P104-100 (GTX 1080 mining)"]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(d))
    return d


def _answers(m):
    return [m.find(t) for t in TEXTS]


def test_a_cached_matcher_answers_as_the_built_one(cache_dir):
    built = TextMatcher.cached()
    files = list(cache_dir.glob("matcher-*.pkl"))
    assert len(files) == 1 and (files[0].stat().st_mode & 0o077) == 0
    loaded = TextMatcher.cached()
    assert loaded is not built and _answers(loaded) == _answers(built) == _answers(TextMatcher())
    assert loaded.n_patterns == built.n_patterns


def test_a_warm_listing_audit_loads_neither_numpy_nor_pydantic(cache_dir, tmp_path):
    TextMatcher.cached()  # warm
    feed = tmp_path / "feed.json"
    feed.write_text('{"server": [{"id": 1, "description": ["2x RTX 6000 Ada"], "price": 9}]}')
    code = ("import sys; from gpuclass.cli.main import main; rc = main(['audit', sys.argv[1], '-o', sys.argv[2]]);"
            "print(rc, sorted(m for m in ('numpy', 'pydantic', 'pyarrow', 'yaml') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(feed), str(tmp_path / "out.csv")],
                         capture_output=True, text=True, env={**os.environ, "GPUCLASS_CACHE_DIR": str(cache_dir)})
    assert out.stdout.split(None, 1) == ["0", "[]\n"], out.stderr
    assert "rtx-6000-ada x2" in (tmp_path / "out.csv").read_text()


def test_the_key_follows_policy_database_and_code(cache_dir, tmp_path):
    from gpuclass.db.locate import bundled_path
    from gpuclass.policy import compile_policy

    data = compile_policy().data
    key = C.matcher_key(data, bundled_path())
    assert key == C.matcher_key(data, bundled_path())
    other = dict(data, slices_per_card=2)
    assert C.matcher_key(other, bundled_path()) != key
    copy = tmp_path / "pci.ids"
    copy.write_bytes(bundled_path().read_bytes() + b"\n# one more line\n")
    assert C.matcher_key(data, copy) != key


def test_a_damaged_or_foreign_file_is_rebuilt(cache_dir):
    TextMatcher.cached()
    path = next(cache_dir.glob("matcher-*.pkl"))
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    full = C.matcher_key(TextMatcher().compiled.data, _db())
    assert C.cache_path(full) == path
    assert C.load_state(full) is None           # the digest no longer matches
    assert _answers(TextMatcher.cached()) == _answers(TextMatcher())
    assert C.load_state(full) is not None       # rewritten whole
    path.write_bytes(b"not a matcher at all")
    assert C.load_state(full) is None


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="no user ids on this platform")
def test_an_untrusted_cache_is_never_unpickled(cache_dir, monkeypatch):
    TextMatcher.cached()
    path = next(cache_dir.glob("matcher-*.pkl"))
    key = C.matcher_key(TextMatcher().compiled.data, _db())
    assert C.load_state(key) is not None
    loads = []
    monkeypatch.setattr(C.pickle, "loads", lambda *a, **k: loads.append(1))
    os.chmod(path, 0o666)                        # a file others may write
    assert C.load_state(key) is None
    os.chmod(path, 0o600)
    os.chmod(cache_dir, 0o777)                   # a directory others may write
    assert C.load_state(key) is None
    os.chmod(cache_dir, 0o700)
    path.unlink()
    os.symlink(cache_dir.parent / "elsewhere.pkl", path)  # a link, not a regular file
    assert C.load_state(key) is None
    assert loads == []


def test_an_unwritable_cache_costs_the_build_only(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(blocker / "cache"))
    assert _answers(TextMatcher.cached()) == _answers(TextMatcher())


def _db():
    from gpuclass.db.locate import resolve_path

    return resolve_path(None)
