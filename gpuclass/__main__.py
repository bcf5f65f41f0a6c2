"""``python -m gpuclass``: the ``gpuclass`` command."""

import sys

from gpuclass.cli import console

sys.exit(console())
