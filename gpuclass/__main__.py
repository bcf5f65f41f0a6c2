"""``python -m gpuclass``: the ``gpuclass`` command."""

from gpuclass.cli import console, exit_process

exit_process(console())
