"""The text matcher's cache: loaded without numpy or the database, keyed by what made it,
read only under the cache's trust rules, never a stale or damaged matcher."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    files = sorted(cache_dir.glob("matcher-*" + C.SUFFIX))
    assert [f.name.rsplit("-", 1)[1] for f in files] == ["all" + C.SUFFIX, "common" + C.SUFFIX]
    assert all((f.stat().st_mode & 0o077) == 0 for f in files)
    loaded = TextMatcher.cached()
    assert loaded is not built and _answers(loaded) == _answers(built) == _answers(TextMatcher())
    assert loaded.n_patterns == built.n_patterns


# Look-alike spellings, the names around them, and texts that only come close to one.
LOOKALIKES = ["RTX 4000 SFF Ada Mobile", "rtx4000sffada mobile", "2x RTX PRO 6000 Blackwell Max-Q Workstation Edition MXM",
              "GTX 1080 Ti Laptop GPU", "GTX1080Ti laptopgpu, 2x GTX 1080", "RTX 6000 Ada Generation Embedded GPU",
              "RTX PRO 6000 Blackwell Server Edition Mining", "rtx pro 6000 blackwellmaxq", "GTX 1080 Mobile",
              "RTX 6000 Ada (mobile workstation)", "GTX 1080 | laptop", "GTX 1080 D", "GTX 1080D",
              "RTX PRO 6000 Blackwell 96GB Max-Q Notebook", "Intel Xeon, RTX 4000 SFF Ada, 128 GB"]


def test_the_whole_automaton_is_read_only_for_a_text_that_needs_it(cache_dir):
    TextMatcher.cached()  # warm
    m = TextMatcher.cached()
    assert m._auto is None
    m.find_many(TEXTS[:2] + ["Intel Xeon E5-1650V3", "2x SSD 480 GB", "RTX 6000 Ada, 128 GB DDR5"])
    assert m._auto is None       # no text could hold a look-alike
    m.find("RTX 4000 SFF Ada Mobile")
    assert m._auto is not None   # read once, kept


@pytest.mark.parametrize("text", LOOKALIKES)
def test_the_gate_never_changes_an_answer(cache_dir, text):
    TextMatcher.cached()
    fresh = TextMatcher.cached()  # gated: the common automaton until a text needs the whole one
    built = TextMatcher()         # always the whole automaton
    assert fresh.find(text) == built.find(text)
    assert fresh.find_many([text, "Intel Xeon", text.upper()]).mentions(2) == built.find_many(
        [text, "Intel Xeon", text.upper()]).mentions(2)


# what a listing audit does without at start (its whole process races a json + regex script)
HEAVY = ("numpy", "pydantic", "pyarrow", "yaml", "dataclasses", "typing", "pathlib", "tempfile", "shutil",
         "pickle", "hashlib", "inspect", "lzma", "bz2", "tarfile", "zipfile", "gpuclass.textmatch.build",
         "gpuclass.audit.ingest.archives", "gpuclass.audit.ingest.csv")


def test_a_warm_listing_audit_loads_nothing_heavy(cache_dir, tmp_path):
    TextMatcher.cached()  # warm
    feed = tmp_path / "feed.json"
    feed.write_text('{"server": [{"id": 1, "description": ["2x RTX 6000 Ada"], "price": 9}]}')
    code = ("import sys; before = set(sys.modules); from gpuclass.cli.main import main;"
            "rc = main(['audit', sys.argv[1], '-o', sys.argv[2]]);"
            f"print(rc, sorted(m for m in {HEAVY!r} if m in sys.modules and m not in before))")
    env = {**os.environ, "GPUCLASS_CACHE_DIR": str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", code, str(feed), str(tmp_path / "out.csv")],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.stdout.split(None, 1) == ["0", "[]\n"], out.stdout + out.stderr
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
    before = C.matcher_key(data, copy)
    st = copy.stat()
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # the same file, rewritten
    assert C.matcher_key(data, copy) != before


_WORDS = ["rtx", "pro", "6000", "blackwell", "max", "q", "maxq", "workstation", "edition", "server", "4000",
          "sff", "ada", "generation", "gtx", "1080", "ti", "mobile", "laptop", "gpu", "notebook", "embedded",
          "mxm", "d", "mining", "miner", "2x", "nvidia", "geforce", "48gb", "96", "gb", ",", "|", "not", "included",
          "quadro", "a6000", "(", ")"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from([" ", "", "-", " "])), min_size=1, max_size=12))
def test_gated_and_whole_matchers_agree_on_any_text(cache_dir, words):
    text = "".join(w + sep for w, sep in words)
    gated = _gated()
    gated._auto = None if gated._gate is not None else gated._common  # start gated every example
    assert gated.find(text) == _built().find(text)


@functools.cache
def _built():
    return TextMatcher()


def _gated():
    m = TextMatcher.cached()
    return m if m._key is not None else TextMatcher.cached()  # the first call builds, the next loads


@pytest.mark.parametrize("part", C.PARTS)
def test_a_damaged_or_foreign_file_is_rebuilt(cache_dir, part):
    TextMatcher.cached()
    full = C.matcher_key(TextMatcher().compiled.data, _db())
    path = cache_dir / os.path.basename(C.cache_path(full, part))
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    assert C.load_state(full, part) is None     # the CRC no longer matches
    m = TextMatcher.cached()
    assert _answers(m) + [m.find(t) for t in LOOKALIKES] == \
        _answers(TextMatcher()) + [TextMatcher().find(t) for t in LOOKALIKES]
    assert C.load_state(full, part) is not None  # rewritten whole
    path.write_bytes(b"not a matcher at all")
    assert C.load_state(full, part) is None


def test_a_file_holding_another_key_is_not_read(cache_dir, monkeypatch):
    TextMatcher.cached()
    key = C.matcher_key(TextMatcher().compiled.data, _db())
    other = key.replace("gpuclass text matcher", "another matcher")
    monkeypatch.setattr(C, "cache_path", lambda k, part="common", real=C.cache_path: real(key, part))
    assert C.load_state(key) is not None
    assert C.load_state(other) is None  # the same file name, another key inside


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="no user ids on this platform")
def test_an_untrusted_cache_is_never_read(cache_dir, monkeypatch):
    TextMatcher.cached()
    key = C.matcher_key(TextMatcher().compiled.data, _db())
    path = cache_dir / os.path.basename(C.cache_path(key))
    assert C.load_state(key) is not None
    decoded = []
    monkeypatch.setattr(C, "_decode", lambda *a, **k: decoded.append(1))
    os.chmod(path, 0o666)                        # a file others may write
    assert C.load_state(key) is None
    os.chmod(path, 0o600)
    os.chmod(cache_dir, 0o777)                   # a directory others may write
    assert C.load_state(key) is None
    os.chmod(cache_dir, 0o700)
    path.unlink()
    os.symlink(cache_dir.parent / "elsewhere.bin", path)  # a link, not a regular file
    assert C.load_state(key) is None
    assert decoded == []


def test_an_unwritable_cache_costs_the_build_only(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("GPUCLASS_CACHE_DIR", str(blocker / "cache"))
    assert _answers(TextMatcher.cached()) == _answers(TextMatcher())


def _db():
    from gpuclass.db.locate import resolve_path

    return resolve_path(None)


def test_old_matchers_are_retired(cache_dir):
    """Every key gets its own files (a reinstall, a changed pci.ids or policy): a new one
    retires all but the newest KEPT of each part, and every pickle of the format before;
    the newest is read back."""
    built = _built()
    common = C.common_state(built)
    old_pickles = [cache_dir / f"matcher-{i:016x}-{part}.pkl" for i in range(3) for part in C.PARTS]
    cache_dir.mkdir(mode=0o700)
    for p in old_pickles:
        p.write_bytes(b"a pickle of format 5")
    for i in range(C.KEPT + 3):
        key = f"a test key {i}"
        for part in C.PARTS:
            state = {"words": [f"word {i}", part]} if part == "all" else dict(common, flags=[1, 1, i])
            assert C.save_state(key, state, part) is not None
            path = C.cache_path(key, part)
            os.utime(path, ns=(i * 10**9, i * 10**9))  # one a second, oldest first
    assert not any(p.exists() for p in old_pickles)
    for part in C.PARTS:
        left = sorted(p.name for p in cache_dir.glob(f"matcher-*-{part}{C.SUFFIX}"))
        newest = [os.path.basename(C.cache_path(f"a test key {i}", part))
                  for i in range(3, C.KEPT + 3)]
        assert left == sorted(newest)
        got = C.load_state(f"a test key {C.KEPT + 2}", part)
        if part == "all":
            assert got == {"words": [f"word {C.KEPT + 2}", part]}
        else:
            assert list(got["flags"]) == [1, 1, C.KEPT + 2]
            assert {k: list(v) if not isinstance(v, (bytes, str)) else v for k, v in got.items() if k != "flags"} \
                == {k: list(v) if not isinstance(v, (bytes, str)) else v for k, v in common.items() if k != "flags"}
        assert C.load_state("a test key 0", part) is None


# -- the entries as the cache keeps them ------------------------------------------------------

def test_a_cached_matchers_entries_are_the_built_ones(cache_dir):
    from gpuclass.textmatch.entries import EntryTable

    TextMatcher.cached()  # warm
    loaded, built = TextMatcher.cached(), _built()
    assert type(loaded.entries) is EntryTable and type(built.entries) is list
    assert loaded.entries == built.entries and list(loaded.entries) == built.entries
    assert loaded._kind == [e.kind for e in built.entries] and loaded._targets == [e.target for e in built.entries]
    assert loaded.entries[-1] == built.entries[-1] and loaded.entries[0] is loaded.entries[0]
    with pytest.raises(IndexError):
        loaded.entries[len(built.entries)]


def test_a_listing_makes_only_the_entries_it_names(cache_dir):
    TextMatcher.cached()  # warm
    m = TextMatcher.cached()
    m.find_many(TEXTS)
    assert 0 < len(m.entries._made) < 50 < len(m.entries)


def test_a_cached_matchers_words_are_the_built_ones_made_as_hits_name_them(cache_dir):
    import pickle

    from gpuclass.textmatch.entries import WordTable

    TextMatcher.cached()  # warm
    loaded, built = TextMatcher.cached(), _built()
    assert type(loaded._word) is WordTable and len(loaded._word) == 0  # no pair made before a hit
    assert loaded._word.lengths == built._word.lengths and loaded._word.entries == built._word.entries
    assert len(built._word.lengths) > 1000
    loaded.find_many(TEXTS)
    assert 0 < len(loaded._word) < 50
    assert all(loaded._word[k] == built._word[k] for k in range(len(built._word.lengths)))
    for k in (-1, len(built._word.lengths), "0"):
        with pytest.raises(KeyError):
            loaded._word[k]
    # pickled as its two arrays: no pair, and no object per word
    again = pickle.loads(pickle.dumps(loaded._word))
    assert type(again) is WordTable and len(again) == 0 and again.lengths == loaded._word.lengths
    with pytest.raises(ValueError):
        WordTable(built._word.lengths, built._word.entries[:-1])


def test_entry_columns_keep_every_field_or_refuse_it():
    from gpuclass.textmatch.entries import ABSENT_MARK, SUPPORTED_TEXT, Entry, EntryTable

    entries = [Entry(SUPPORTED_TEXT, 6, "RTX PRO 6000 Blackwell", "10de:2bb1", "GB202GL"),
               Entry(ABSENT_MARK, -1, "", None, None), Entry(SUPPORTED_TEXT, 0, "x", "", "\u2122"),
               Entry(1, -1, "RTX PRO 6000D", "10de:2bb2", "GB202", "GB202 [RTX PRO 6000D] (10de:2bb2)")]
    table = EntryTable(*EntryTable.of(entries).columns())
    assert list(table) == entries and table == entries and table != entries[:2]
    for bad in (Entry(0, 0, "two\nlines", None), Entry(0, 0, "nul\0", None), Entry(0, 255, "x", None),
                Entry(256, 0, "x", None), Entry(0, -2, "x", None)):
        with pytest.raises(ValueError):
            EntryTable.of([bad])
    with pytest.raises(ValueError):  # columns of different lengths (a damaged state)
        list(EntryTable(b"\0\0", b"\1\1", "a", "\0\n\0", "\0\n\0", "\0\n\0"))


def test_a_database_of_long_names_builds_and_loads_a_matcher(cache_dir, tmp_path):
    """A pci.ids line may be a thousand characters long: such a name is matched, built or
    loaded from the cache, as any other."""
    from gpuclass.db.locate import bundled_path

    words = " ".join(f"Edition{i}" for i in range(90))
    long_name = f"GA102 [GeForce RTX 3099 {words}]"
    ids = tmp_path / "pci.ids"
    ids.write_bytes(bundled_path().read_bytes().replace(b"\n10de  NVIDIA Corporation\n",
                                                        f"\n10de  NVIDIA Corporation\n\t2bff  {long_name}\n".encode()))
    assert len(long_name) > 800 and len(long_name.encode()) < 1000
    text = f"2x NVIDIA RTX 3099 {words}, 64 GB RAM"
    built = TextMatcher.cached(pci_ids=ids)
    loaded = TextMatcher.cached(pci_ids=ids)
    assert loaded._key is not None and loaded is not built
    for m in (built, loaded):
        (hit,) = m.find(text)
        assert (hit.kind, hit.count, hit.device_id) == ("unsupported", 2, "10de:2bff")
        assert m.find("GTX 1080 Ti")[0].card == "gtx-1080-ti"


# -- the cache is data, never code (issue 28) ----------------------------------------------------

class _Payload:
    """What a pickle-reading cache would run: a marker file written by os.system."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def _file(key, payload, fmt=None):
    import struct
    import zlib

    raw = key.encode("utf-8", "surrogatepass")
    head = struct.pack("<8sIIQI", C.MAGIC, C.FORMAT if fmt is None else fmt, len(raw), len(payload),
                       zlib.crc32(payload))
    return head + raw + payload


@pytest.mark.parametrize("part", C.PARTS)
def test_a_pickle_with_a_valid_head_and_crc_never_runs(cache_dir, tmp_path, monkeypatch, part):
    import pickle
    import zlib

    TextMatcher.cached()
    key = C.matcher_key(TextMatcher().compiled.data, _db())
    marker = tmp_path / "ran"
    evil = pickle.dumps(_Payload(marker))
    pickle.loads(pickle.dumps(_Payload(tmp_path / "it-would")))  # the payload does run where unpickled
    assert (tmp_path / "it-would").exists()
    unpickled = []
    for mod in ("pickle", "_pickle"):
        monkeypatch.setattr(f"{mod}.loads", lambda *a, **k: unpickled.append(a))
        monkeypatch.setattr(f"{mod}.load", lambda *a, **k: unpickled.append(a))
    path = cache_dir / os.path.basename(C.cache_path(key, part))
    # the pickle as the whole payload, as a section of the right type, and as the file of the old
    # format (its own head, key and CRC) under the old name
    sections = [evil, C._SECTION.pack(b"y", len(evil)) + evil,
                C._SECTION.pack(b"l", len(evil)) + evil]
    for payload in sections:
        path.write_bytes(_file(key, payload))
        os.chmod(path, 0o600)
        assert C.load_state(key, part) is None
    raw = key.encode()
    old = cache_dir / os.path.basename(C.cache_path(key, part)).replace(C.SUFFIX, ".pkl")
    old.write_bytes(b"GPCLSTM\x04" + len(raw).to_bytes(4, "little") + raw
                    + zlib.crc32(evil).to_bytes(4, "little") + evil)
    os.chmod(old, 0o600)
    path.write_bytes(_file(key, evil))
    m = TextMatcher.cached()  # rebuilt, the files rewritten
    assert _answers(m) + [m.find(t) for t in LOOKALIKES[:3]] == \
        _answers(_built()) + [_built().find(t) for t in LOOKALIKES[:3]]
    assert C.load_state(key, part) is not None
    assert not marker.exists() and unpickled == []


def test_crafted_values_with_a_valid_crc_are_refused(cache_dir):
    """A file of the right shape whose values do not hold (an index past the table, a word
    of another length than its table says, a card that is not the policy's) is rebuilt."""
    TextMatcher.cached()
    key = C.matcher_key(TextMatcher().compiled.data, _db())
    good = C.load_state(key)
    n = len(good["kinds"])
    bad = [dict(good, word_entries=[n] * len(good["word_entries"])),
           dict(good, common_words=["x" + w for w in good["common_words"]]),
           dict(good, targets=bytes([200]) + good["targets"][1:]),
           dict(good, kinds=bytes([9]) + good["kinds"][1:]),
           dict(good, names=good["names"] + "\nextra"),
           dict(good, common_index=list(good["common_index"])[:-1]),
           dict(good, variant_values=[n + 5] * len(good["variant_values"])),
           dict(good, flags=[2, 1, 0])]
    for state in bad:
        assert C.save_state(key, state) is not None
        assert C.load_state(key) is not None  # whole, and of the schema: its values are what fail
        m = TextMatcher.cached()
        assert m._key is None and _answers(m) == _answers(_built())  # built again, not loaded
        assert C.load_state(key)["word_entries"] == good["word_entries"]  # rewritten by the build
    words = C.load_state(key, "all")["words"]
    C.save_state(key, {"words": words[:-1]}, "all")
    m = TextMatcher.cached()
    assert m.find("RTX 4000 SFF Ada Mobile") == _built().find("RTX 4000 SFF Ada Mobile")


@pytest.mark.parametrize("claim", ["real", "consistent"])
def test_a_cache_file_grown_to_gigabytes_is_refused_unread(cache_dir, claim):
    import struct
    import time
    import tracemalloc

    TextMatcher.cached()
    key = C.matcher_key(TextMatcher().compiled.data, _db())
    path = cache_dir / os.path.basename(C.cache_path(key))
    size = 8 << 30
    if claim == "consistent":  # a head that states the size the file has
        raw = bytearray(path.read_bytes())
        n_key = len(key.encode())
        struct.pack_into("<Q", raw, 16, size - C._HEAD.size - n_key)
        path.write_bytes(bytes(raw))
    try:
        os.truncate(path, size)  # sparse: no disk is used
    except OSError as exc:
        pytest.skip(f"no sparse file here: {exc}")
    tracemalloc.start()
    t0 = time.perf_counter()
    assert C.load_state(key) is None
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 1 and peak < 1 << 20
    m = TextMatcher.cached()  # rebuilt, the file replaced
    assert _answers(m) == _answers(_built())
    assert path.stat().st_size < 64 << 20 and C.load_state(key) is not None


def test_the_cache_holds_no_pickle_and_a_warm_load_imports_none(cache_dir, tmp_path):
    TextMatcher.cached()
    for f in cache_dir.glob("matcher-*"):
        assert b"\x80\x04" not in f.read_bytes()[:64] and f.suffix == C.SUFFIX
    code = ("import sys; from gpuclass.textmatch import TextMatcher; m = TextMatcher.cached();"
            "m.find('RTX 4000 SFF Ada Mobile'); print(m._key is not None, 'pickle' in sys.modules,"
            " '_pickle' in sys.modules)")
    env = {**os.environ, "GPUCLASS_CACHE_DIR": str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.stdout.split() == ["True", "False", "False"], out.stdout + out.stderr
