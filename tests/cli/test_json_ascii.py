"""JSON output is JSON in every locale: under LC_ALL=C (an ASCII standard output) a
character outside ASCII is a \\u escape, never the \\xe9 the stream's error handler writes."""

from __future__ import annotations

import json
import os
import subprocess

import helpers
import pytest

NAMES = ["sérvér-1", "Ünïcodé", "東京-gpu", "emoji-\U0001f680"]


def _c_locale_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIOENCODING",
                                                                    "PYTHONUTF8"))}
    return {**env, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


@pytest.mark.parametrize("fmt", ["json", "ndjson"])
def test_audit_json_is_ascii_and_round_trips_under_the_c_locale(tmp_path, fmt):
    feed = tmp_path / "feed.json"
    feed.write_text(json.dumps({"server": [{"id": n, "description": ["GTX 1080 " + n]} for n in NAMES]}),
                    encoding="utf-8")
    proc = subprocess.run([*helpers.COMMAND, "audit", str(feed), "--format", fmt], capture_output=True,
                          env=_c_locale_env(), cwd=helpers.outside_tree(), check=False, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stdout.isascii()
    text = proc.stdout.decode("ascii")
    docs = [json.loads(text)] if fmt == "json" else [json.loads(line) for line in text.splitlines()]
    servers = [r["server"] for d in docs for r in (d.get("reports") or ([d] if "server" in d else []))]
    assert servers == NAMES


@pytest.mark.parametrize("argv", [
    ["lookup", "15cf", "-o", "json"],                 # a vendor whose name is not ASCII
    ["lookup", "1b4b:2b42", "-o", "json"],            # a device named with (R) signs
    ["scan", "--lspci", "{dump}", "-o", "json"],
])
def test_command_json_is_ascii_and_round_trips_under_the_c_locale(tmp_path, argv):
    dump = tmp_path / "lspci.txt"
    dump.write_text('0000:01:00.0 "Network controller [0280]" "Hilscher Gesellschaft f\u00fcr '
                    'Systemautomation mbH [15cf]" "Device [0000]" -r01 "" ""\n', encoding="utf-8")
    argv = [a.format(dump=dump) for a in argv]
    proc = subprocess.run([*helpers.COMMAND, *argv], capture_output=True, env=_c_locale_env(),
                          cwd=helpers.outside_tree(), check=False, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stdout.isascii(), proc.stdout[:300]
    data = json.loads(proc.stdout.decode("ascii"))
    assert "Hilscher Gesellschaft f\u00fcr" in json.dumps(data, ensure_ascii=False) or \
        "\u00ae" in json.dumps(data, ensure_ascii=False)
