"""Subcommands of the ``gpuclass`` command, one module each.

Every module exposes ``register(subparsers)`` which adds its parser and sets
``func`` (``args -> exit code``).  ``gpuclass.cli`` imports only the module of
the command that runs, so ``gpuclass lookup`` never pays for pydantic.
"""

# name -> module, in the order ``--help`` lists them
COMMANDS = {
    "lookup": "gpuclass.commands.lookup",
    "db": "gpuclass.commands.db",
    "scan": "gpuclass.commands.scan",
    "plan": "gpuclass.commands.plan",
    "labels": "gpuclass.commands.labels",
    "validate-pod": "gpuclass.commands.validate_pod",
    "diagnose": "gpuclass.commands.diagnose",
    "audit": "gpuclass.commands.audit",
}
