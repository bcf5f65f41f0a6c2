"""The ``gpuclass`` command line: :func:`main`, one module per subcommand; :func:`console`
is the installed command (and ``python -m gpuclass``).

The library never imports this package.
"""

from __future__ import annotations

from .main import main

__all__ = ["main", "console"]


def console() -> int:
    """:func:`main` as a process runs it: the exit code, once the command is done.

    A command makes its objects in bursts that live to its end or die young without
    cycles (records, reports): the collector runs after 50,000 new objects instead of 700,
    and once the command is done :func:`gc.freeze` spares the interpreter's final
    collection a walk over every object left (together a tenth of a small audit's time).
    Buffered output and exit handlers are unaffected.
    """
    import gc

    gc.set_threshold(50_000, 10, 10)
    code = main()
    gc.freeze()
    return code
