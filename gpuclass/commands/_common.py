"""Helpers shared by the subcommands: output formats and ID parsing."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import InputError

FORMATS = ("table", "json")


def add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="output format (default: table)")


def add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="PCI_IDS", default=None,
                        help="pci.ids to use (default: $GPUCLASS_PCI_IDS, else the bundled copy)")


def parse_hex_id(text: str, what: str, bits: int = 16) -> int:
    """One hexadecimal ID of at most ``bits`` bits.

    >>> parse_hex_id("10DE", "vendor")
    4318
    """
    digits = text[2:] if text.lower().startswith("0x") else text
    width = bits // 4
    if not digits or len(digits) > width or any(c not in "0123456789abcdefABCDEF" for c in digits):
        raise InputError(f"{what}: {text!r} is not a hex ID of at most {width} digits")
    return int(digits, 16)


def emit_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def emit_table(rows: list[tuple[str, ...]]) -> None:
    """Aligned columns, one row per line."""
    if not rows:
        return
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(w) for cell, w in zip(row, widths)] + [row[-1]]
        sys.stdout.write("  ".join(cells).rstrip() + "\n")


def add_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", default=None, metavar="DIR",
                        help="read the machine mounted at DIR (its sys/, proc/ and dev/; default: /)")


def add_policy(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", default=None, metavar="FILE",
                        help="allowlist policy (JSON, YAML or TOML; default: the platform's)")


def add_report(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--report", default=None, metavar="FILE",
                        help="a hardware report ('gpuclass plan --format json') instead of --root")


def hardware_report(args):
    """The HardwareReport of ``--report FILE`` or of the machine at ``--root``."""
    from ..provisioner import inspect

    if getattr(args, "report", None):
        return load_report(args.report)
    return inspect(args.root or "/", policy=getattr(args, "policy", None))


def load_report(path: str):
    """A HardwareReport from JSON: the report itself, or a plan's ``{"report": ...}``."""
    from pydantic import ValidationError

    from ..errors import ManifestError
    from ..provisioner import HardwareReport

    if path == "-":
        text = sys.stdin.read()
    else:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"line {exc.lineno}", f"malformed JSON: {exc.msg}", path) from None
    if isinstance(data, dict) and isinstance(data.get("report"), dict):
        data = data["report"]
    try:
        return HardwareReport.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ManifestError(where, f"not a hardware report: {err['msg']}", path) from None


def yes(flag: bool) -> str:
    return "yes" if flag else "no"
