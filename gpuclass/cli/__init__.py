"""The ``gpuclass`` command line: :func:`main`, one module per subcommand; :func:`console`
is the installed command (and ``python -m gpuclass``).

The library never imports this package.
"""

from __future__ import annotations

from .main import main

__all__ = ["main", "console"]


def console() -> int:
    """:func:`main` as a process runs it: the exit code, once the command is done.

    The process ends right after: :func:`gc.freeze` first spares the interpreter's final
    collection a walk over every object the command made (a tenth of a small audit's
    time).  Buffered output and exit handlers are unaffected.
    """
    import gc

    code = main()
    gc.freeze()
    return code
