"""``python -m gpuclass.cli``: the ``gpuclass`` command (as ``python -m gpuclass``)."""

import sys

from gpuclass.cli import console

sys.exit(console())
