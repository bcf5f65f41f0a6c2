"""``python -m gpuclass``: the ``gpuclass`` command."""

import sys

from gpuclass.cli import main

sys.exit(main())
