"""``python -m gpuclass.cli``: the ``gpuclass`` command (as ``python -m gpuclass``)."""

from gpuclass.cli import console, exit_process

exit_process(console())
