"""Hostile input, second round: where and what an audit writes (issue 28).

Five classes, each generated over the output formats it concerns: a lone surrogate in what
is written (one rule in every format: :func:`gpuclass.printable.utf8_text`), an ``-o``
inside what is audited (a usage error before anything is read), an ``-o`` that is no
regular file (refused, as ``db compile --write`` refuses it: one helper), a cache
directory whose parents are missing (nothing created above its own levels), and the HTML
report's stderr (no matplotlib warning).  RELIABILITY.md names these tests."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from helpers import COMMAND, NON_REGULAR, non_regular_target, outside_tree, run_in_process  # noqa: E402

from gpuclass.cachedir import make_cache_dir, replace_refusal, replacing  # noqa: E402
from gpuclass.cli import main  # noqa: E402
from gpuclass.errors import NotReplaceableError  # noqa: E402
from gpuclass.printable import printable, utf8_text  # noqa: E402

FILE_FORMATS = ("csv", "parquet", "json", "ndjson", "txt", "html")
STDOUT_FORMATS = ("table", "csv", "json", "ndjson", "html")

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:  # the report extra is not installed
    HAVE_MPL = False


def _formats(formats):
    return [pytest.param(f, marks=pytest.mark.skipif(not HAVE_MPL, reason="needs gpuclass[report]"))
            if f == "html" else f for f in formats]


def _records(ids, price=40):
    return [{"id": i, "description": ["GTX 1080"], "price": price} for i in ids]


def _write_ndjson(path, ids):
    # json.dumps writes a lone surrogate as its \u escape: the reader gets it back
    path.write_text("".join(json.dumps(r) + "\n" for r in _records(ids)), encoding="ascii")
    return path


def _servers(path, fmt):
    """The server column of an audit's output file."""
    if fmt == "csv":
        import csv

        with open(path, encoding="utf-8", newline="") as fh:
            return [row["server"] for row in csv.DictReader(fh)]
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).column("server").to_pylist()
    text = path.read_text(encoding="utf-8")
    if fmt == "json":
        return [r["server"] for r in json.loads(text)["reports"]]
    return [json.loads(line)["server"] for line in text.splitlines()]


def _run(*args, env=None, cwd=None, timeout=120):
    return subprocess.run([*COMMAND, *map(str, args)], capture_output=True, text=True, env=env,
                          cwd=cwd or outside_tree(), timeout=timeout)


def _one_line(err, *needles):
    assert "Traceback" not in err and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err, err


# -- 1. a lone surrogate is written by one rule in every format ---------------------------

_SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=["Cs"])
_LETTER = st.characters(categories=["L", "N"])
# lone surrogates only: a high one followed by a low one is a pair, which JSON (the feed the
# test writes) reads as the one character it encodes
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_IDS = st.lists(st.builds(lambda a, s, b: a + s + b, st.text(_LETTER, max_size=2), _SURROGATE,
                          st.text(st.one_of(_SURROGATE, _LETTER), max_size=2)).filter(lambda t: not _PAIR.search(t)),
                min_size=1, max_size=4, unique=True)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=_IDS)
def test_lone_surrogates_are_written_by_one_rule_in_every_format(tmp_path_factory, ids):
    d = tmp_path_factory.mktemp("sur")
    ids = ["s" + i for i in ids]
    feed = _write_ndjson(d / "feed.ndjson", ids)
    expected = [utf8_text(i) for i in ids]
    assert all("\\" in e for e in expected)
    for fmt in FILE_FORMATS:
        if fmt == "html" and not HAVE_MPL:
            continue
        out = d / f"out.{fmt}"
        assert main(["audit", str(feed), "-o", str(out)]) == 0, fmt
        data = out.read_bytes()
        if fmt != "parquet":
            data.decode("utf-8")  # UTF-8 throughout, nothing unencodable left
        if fmt in ("csv", "parquet", "json", "ndjson"):
            assert _servers(out, fmt) == expected, fmt
        elif fmt == "txt":  # the table: printable(), which writes surrogates the same way
            text = data.decode("utf-8")
            assert all(printable(i)[:19] in text and printable(i)[:19] == e[:19] for i, e in zip(ids, expected))
        else:
            assert b"\\ud" not in data or all(e.encode() in data for e in expected if "\\ud" in e)


@pytest.mark.parametrize("fmt", _formats(STDOUT_FORMATS))
def test_lone_surrogates_on_standard_output_follow_the_same_rule(tmp_path, fmt):
    feed = _write_ndjson(tmp_path / "feed.ndjson", ["srv\udcff", "a\ud800b", "日本\udc80"])
    proc = subprocess.run([*COMMAND, "audit", str(feed), "--format", fmt], capture_output=True,
                          cwd=outside_tree(), timeout=120)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    out = proc.stdout.decode("utf-8")
    if fmt in ("csv", "json", "ndjson"):
        (tmp_path / f"o.{fmt}").write_text(out, encoding="utf-8")
        assert _servers(tmp_path / f"o.{fmt}", fmt) == ["srv\\xff", "a\\ud800b", "日本\\x80"]
    elif fmt == "table":
        assert "srv\\xff" in out and "a\\ud800b" in out and "日本\\x80" in out


def test_a_byte_that_is_not_utf8_in_a_file_name_is_written_as_in_every_format(tmp_path):
    """A source file name decoded by surrogateescape (a directory walk) reaches the source
    column: the same ``\\xNN`` text in CSV, Parquet and JSON."""
    d = tmp_path / "in"
    d.mkdir()
    name = os.fsdecode(b"feed\xff.ndjson")
    _write_ndjson(d / name, ["a1"])
    got = {}
    for fmt in ("csv", "parquet", "json"):
        out = tmp_path / f"out.{fmt}"
        assert main(["audit", str(d), "-o", str(out)]) == 0
        if fmt == "csv":
            import csv

            with open(out, encoding="utf-8", newline="") as fh:
                got[fmt] = [r["source"] for r in csv.DictReader(fh)]
        elif fmt == "parquet":
            import pyarrow.parquet as pq

            got[fmt] = pq.read_table(out).column("source").to_pylist()
        else:
            got[fmt] = [r["source"] for r in json.loads(out.read_text())["reports"]]
    assert len({tuple(v) for v in got.values()}) == 1 and "\\xff" in got["csv"][0], got


# -- 2. -o inside what is audited --------------------------------------------------------

def _inside_cases(tmp_path):
    d = tmp_path / "d"
    (d / "sub").mkdir(parents=True)
    feed = _write_ndjson(d / "feed.ndjson", ["a1", "a2"])
    (tmp_path / "dl").symlink_to(d)
    (tmp_path / "fl.ndjson").symlink_to(feed)
    return d, feed, {
        "in-dir": ([d], d / "out.csv"),
        "in-subdir": ([d], d / "sub" / "out.json"),
        "in-missing-subdir": ([d], d / "zz" / "out.ndjson"),
        "through-link-to-dir": ([d], tmp_path / "dl" / "out.csv"),
        "input-named-by-link": ([tmp_path / "dl"], d / "out.parquet"),
        "the-input-itself": ([feed], feed),
        "link-to-the-input": ([feed], tmp_path / "fl.ndjson"),
        "second-input": ([tmp_path / "other.ndjson", d], d / "sub" / "out.txt"),
        "dot-dot": ([d], d / "sub" / ".." / "out.csv"),
    }


CASES = ["in-dir", "in-subdir", "in-missing-subdir", "through-link-to-dir", "input-named-by-link",
         "the-input-itself", "link-to-the-input", "second-input", "dot-dot"]


@pytest.mark.parametrize("case", CASES)
def test_an_output_inside_the_inputs_is_a_usage_error(tmp_path, capsys, case):
    d, feed, cases = _inside_cases(tmp_path)
    _write_ndjson(tmp_path / "other.ndjson", ["b1"])
    inputs, out = cases[case]
    before = sorted(os.listdir(d)), feed.read_bytes()
    code = main(["audit", *map(str, inputs), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    _one_line(err, f"-o {out}", "its own output")
    assert (sorted(os.listdir(d)), feed.read_bytes()) == before  # nothing written, nothing read
    assert not (d / "zz").exists()


def test_an_output_over_the_policy_is_a_usage_error(tmp_path, capsys):
    feed = _write_ndjson(tmp_path / "feed.ndjson", ["a1"])
    policy = tmp_path / "policy.json"
    policy.write_text('{"cards": []}')
    assert main(["audit", str(feed), "--policy", str(policy), "-o", str(policy)]) == 2
    _one_line(capsys.readouterr().err, "is the input")
    assert policy.read_text() == '{"cards": []}'


def test_an_output_beside_the_inputs_is_written(tmp_path, capsys):
    d, feed, _ = _inside_cases(tmp_path)
    out = tmp_path / "dd" / "out.csv"  # a name that starts like the input's is not inside it
    out.parent.mkdir()
    assert main(["audit", str(d), "-o", str(out)]) == 0, capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 3


def test_an_output_in_a_growing_tree_never_loops(tmp_path):
    """The case that read its own output forever: refused at once, in a subprocess with a
    timeout (it used to write 680 MB a minute)."""
    d, _, _ = _inside_cases(tmp_path)
    proc = _run("audit", d, "-o", d / "zz" / "out.ndjson", timeout=60)
    assert proc.returncode == 2
    _one_line(proc.stderr, "its own output")


# -- 3. -o that is no regular file --------------------------------------------------------

def _target(tmp_path, kind):
    return non_regular_target(tmp_path, kind)


KINDS = NON_REGULAR
WORDS = {"fifo": "a FIFO", "symlink": "a symlink", "dangling-symlink": "a symlink", "dir": "a directory",
         "socket": "a socket", "chardev": "a character device"}


@pytest.mark.parametrize("fmt", _formats(("csv", "parquet", "json", "ndjson", "table", "html")))
@pytest.mark.parametrize("kind", KINDS)
def test_an_output_that_is_no_regular_file_is_refused(tmp_path, capsys, kind, fmt):
    out, victim = _target(tmp_path, kind)
    feed = _write_ndjson(tmp_path / "feed.ndjson", ["a1"])
    before = os.lstat(out)
    code = main(["audit", str(feed), "--format", fmt, "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 3, err
    _one_line(err, str(out), f"refusing to replace {WORDS[kind]}")
    after = os.lstat(out)
    assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode, before.st_rdev)
    assert victim.read_text() == "keep me"
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".gpuclass-")]


@pytest.mark.parametrize("kind", ["fifo", "symlink", "dir", "socket"])
def test_audit_and_db_compile_refuse_by_one_rule(tmp_path, kind):
    """The same helper (:func:`gpuclass.cachedir.replace_refusal`) and the same line."""
    out, _ = _target(tmp_path, kind)
    feed = _write_ndjson(tmp_path / "feed.ndjson", ["a1"])
    a = run_in_process("audit", feed, "--format", "csv", "-o", out)
    b = run_in_process("db", "compile", "--write", out)
    assert a.returncode == b.returncode == 3
    refusal = replace_refusal(out)
    assert a.stderr == b.stderr == f"gpuclass: error: {refusal}\n"


def test_replacing_refuses_a_target_swapped_in_while_writing(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(NotReplaceableError) as info:
        with replacing(out) as fh:
            fh.write(b"x")
            os.mkfifo(out)
    assert isinstance(info.value, OSError) and "refusing to replace a FIFO" in str(info.value)
    assert stat.S_ISFIFO(os.lstat(out).st_mode) and os.listdir(tmp_path) == ["out"]


def test_a_regular_file_is_still_replaced_and_standard_output_still_written(tmp_path, capsys):
    feed = _write_ndjson(tmp_path / "feed.ndjson", ["a1"])
    out = tmp_path / "out.csv"
    out.write_text("old")
    assert main(["audit", str(feed), "-o", str(out)]) == 0
    assert out.read_text().startswith("row,")
    assert main(["audit", str(feed), "--format", "csv", "-o", "-"]) == 0
    assert capsys.readouterr().out.startswith("row,")


# -- 4. a cache directory creates no parents above its own levels --------------------------

@pytest.fixture
def clean_env(monkeypatch):
    for name in ("GPUCLASS_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_a_missing_home_gets_no_cache_and_no_directories(tmp_path, clean_env, depth):
    home = tmp_path.joinpath(*["gone"] * depth)
    clean_env.setenv("HOME", str(home))
    with pytest.raises(FileNotFoundError):
        make_cache_dir(os.path.join(home, ".cache", "gpuclass"))
    assert os.listdir(tmp_path) == []


def test_an_existing_home_gets_its_two_levels(tmp_path, clean_env):
    clean_env.setenv("HOME", str(tmp_path))
    make_cache_dir(os.path.join(tmp_path, ".cache", "gpuclass"))
    assert stat.S_IMODE(os.stat(tmp_path / ".cache" / "gpuclass").st_mode) == 0o700


@pytest.mark.parametrize("exists", [True, False])
def test_xdg_cache_home_gets_only_gpuclass(tmp_path, clean_env, exists):
    xdg = tmp_path / "xdg"
    if exists:
        xdg.mkdir()
    clean_env.setenv("XDG_CACHE_HOME", str(xdg))
    if exists:
        make_cache_dir(os.path.join(xdg, "gpuclass"))
        assert (xdg / "gpuclass").is_dir()
    else:
        with pytest.raises(FileNotFoundError):
            make_cache_dir(os.path.join(xdg, "gpuclass"))
        assert not xdg.exists()


@pytest.mark.parametrize("exists", [True, False])
def test_gpuclass_cache_dir_is_made_only_in_an_existing_folder(tmp_path, clean_env, exists):
    parent = tmp_path / "p"
    if exists:
        parent.mkdir()
    clean_env.setenv("GPUCLASS_CACHE_DIR", str(parent / "cache"))
    if exists:
        make_cache_dir(parent / "cache")
        assert (parent / "cache").is_dir()
    else:
        with pytest.raises(FileNotFoundError):
            make_cache_dir(parent / "cache")
        assert not parent.exists()


@pytest.mark.parametrize("how", ["HOME", "XDG_CACHE_HOME", "GPUCLASS_CACHE_DIR"])
def test_commands_run_without_a_cache_where_its_parents_are_missing(tmp_path, how):
    env = {k: v for k, v in os.environ.items() if k not in ("GPUCLASS_CACHE_DIR", "XDG_CACHE_HOME")}
    env["HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir()
    env[how] = str(tmp_path / "nonexistent" / "x")
    feed = _write_ndjson(tmp_path / "feed.ndjson", ["a1"])
    for args in (["lookup", "10de:27b0"], ["audit", feed]):
        proc = _run(*args, env=env)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert not (tmp_path / "nonexistent").exists()
    assert not (tmp_path / "home" / ".cache").exists() or how == "HOME"


# -- 5. the HTML report says nothing on stderr --------------------------------------------

@pytest.mark.skipif(not HAVE_MPL, reason="needs gpuclass[report]")
@pytest.mark.parametrize("case", ["huge-price", "home-not-a-folder", "home-missing"])
def test_the_html_report_prints_no_warning(tmp_path, case):
    env = {k: v for k, v in os.environ.items()
           if k not in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "GPUCLASS_CACHE_DIR")}
    env["PYTHONWARNINGS"] = "default"  # every warning shown, none filtered away
    prices = [40, 55]
    if case == "huge-price":
        prices = [1e300, 1]  # the median's 300-digit bar label collapsed the chart's layout
        env["HOME"] = str(tmp_path)
    elif case == "home-not-a-folder":  # matplotlib's own folders cannot be made
        (tmp_path / "file").write_text("")
        env["HOME"] = str(tmp_path / "file")
    else:
        env["HOME"] = str(tmp_path / "gone" / "home")
    feed = tmp_path / "feed_EUR.json"
    feed.write_text(json.dumps({"server": [dict(r, price=p) for r, p in zip(_records(range(len(prices))), prices)]}))
    for dest in (["-o", tmp_path / "r.html"], ["--format", "html"]):
        proc = _run("audit", feed, *dest, env=env)
        assert proc.returncode == 0, proc.stderr
        # no matplotlib warning: only the one line an -o audit prints
        said = proc.stderr.startswith(f"gpuclass audit: wrote {dest[1]}: ") if dest[0] == "-o" else not proc.stderr
        assert said and proc.stderr.count("\n") == (dest[0] == "-o"), proc.stderr
    assert "<svg" in (tmp_path / "r.html").read_text() or "data:image/svg" in (tmp_path / "r.html").read_text()
    if case == "home-missing":
        assert not (tmp_path / "gone").exists()
