"""``gpuclass policy show [FILE]``: the allowlist policy, the platform's or a file's, as YAML.

The output is a complete policy file (every field, IDs as hex strings) that
``--policy`` reads back; docs/guides/policy.md documents its format.

Exit codes: 0 done, 2 usage error, 3 the policy file cannot be read or does not
validate (the first bad field is named).
"""

from __future__ import annotations

import sys

from .options import EXIT_OK, add_option, exit_codes
from .parser import HelpFormatter

NAME = "policy"
HELP = "show the allowlist policy (default or a file) as YAML"
DESCRIPTION = "Print an allowlist policy: the platform's default, or a policy file validated."
EXAMPLES = """examples:
  gpuclass policy show                       the platform's allowlist
  gpuclass policy show > allowlist.yaml      a starting point for a policy of your own
  gpuclass policy show allowlist.toml -o json
"""
OPTIONS = ()


def arguments(p) -> None:
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", formatter_class=HelpFormatter,
                              epilog=exit_codes(sys.modules[__name__]),
                              help="print the policy (default: the platform's)",
                              description="Print the policy in FILE (JSON, YAML or TOML) after "
                                          "validating it, or the platform's default.")
    show.add_argument("file", nargs="?", metavar="FILE", help="a policy file (default: none)")
    add_option(show, "format", help="output format: yaml (also for table) or json "
                                    "(default: yaml)")


def run(args) -> int:
    from ..policy import load_policy

    policy = load_policy(args.file)
    sys.stdout.write(policy.dumps("json" if args.format == "json" else "yaml"))
    if args.format == "json":
        sys.stdout.write("\n")
    return EXIT_OK
