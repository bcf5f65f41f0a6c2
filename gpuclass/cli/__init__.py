"""The ``gpuclass`` command line: :func:`main`, one module per subcommand.

The library never imports this package.
"""

from __future__ import annotations

from .main import main

__all__ = ["main"]
