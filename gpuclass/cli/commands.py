"""The subcommands of ``gpuclass``, one module each (see :mod:`gpuclass.cli.options` for
what a command module declares).  Only the module of the command that runs is
imported, so ``gpuclass lookup`` never pays for pydantic.
"""

# name -> module, in the order ``--help`` lists them
COMMANDS = {
    "lookup": "gpuclass.cli.lookup",
    "db": "gpuclass.cli.db",
    "scan": "gpuclass.cli.scan",
    "plan": "gpuclass.cli.plan",
    "labels": "gpuclass.cli.labels",
    "validate-pod": "gpuclass.cli.validate_pod",
    "diagnose": "gpuclass.cli.diagnose",
    "policy": "gpuclass.cli.policy",
    "audit": "gpuclass.cli.audit",
}
