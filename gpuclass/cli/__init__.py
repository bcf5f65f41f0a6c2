"""The ``gpuclass`` command line: :func:`main`, one module per subcommand; :func:`console`
is the installed command (and ``python -m gpuclass``), whose process ends through
:func:`exit_process`.

The library never imports this package.
"""

from __future__ import annotations

from .main import main

__all__ = ["main", "console", "exit_process"]


def console() -> int:
    """:func:`main` as a process runs it: the exit code, once the command is done.

    A command makes its objects in bursts that live to its end or die young without
    cycles (records, reports): the collector runs after 50,000 new objects instead of 700,
    and once the command is done :func:`gc.freeze` spares the interpreter's final
    collection a walk over every object left (together a tenth of a small audit's time).
    Buffered output and exit handlers are unaffected.

    pyarrow imports pandas the first time it asks whether an object is a pandas one
    (about 0.2 s, a third of a small Parquet audit's process), though no command hands it
    one, and imports cloudpickle where it is installed (as Dask installs it: 7 ms, with
    logging), for pickling, which no command does: in the command's own process pyarrow
    finds neither (:data:`UNUSED_MODULES`) and works without them.

    Two start costs no command needs are turned off where the user has not set them
    (:data:`PROCESS_DEFAULTS`, before anything imports numpy or pydantic): numpy's OpenBLAS
    starts a thread per core when it loads (about a third of numpy's import, itself most of
    a ``gpuclass scan``), though no command does linear algebra; and pydantic, at the first
    model class (``plan``, ``labels``), reads the entry points of every installed
    distribution to find plugins.  ``OMP_NUM_THREADS`` is left alone: pyarrow sizes its
    thread pool from it.  Arrow's memory pool is the system allocator (glibc's malloc)
    where the user has not chosen one: a Parquet audit's process keeps 45-60 MiB less
    resident at its peak than with Arrow's default mimalloc (161 against 209 MiB at 1M
    rows, 239 against 301 MiB at 10M; the same time, interleaved runs).
    """
    import gc
    import os
    import sys

    for name, value in PROCESS_DEFAULTS.items():
        os.environ.setdefault(name, value)  # before anything imports numpy or pydantic

    if not any(m in sys.modules for m in UNUSED_MODULES):
        sys.meta_path.insert(0, _Unused)
    gc.set_threshold(50_000, 10, 10)
    from .main import terminate_as_interrupt

    terminate_as_interrupt()
    code = main()
    gc.freeze()
    return code


def exit_process(code: int | None) -> None:
    """End the command's process with exit code ``code`` (None: 0), as ``sys.exit`` would,
    without the interpreter's teardown: once standard output and error are flushed and the
    exit handlers (:mod:`atexit`, :mod:`logging`'s, ``weakref.finalize``'s) have run, the
    process exits at once (:func:`os._exit`).  The teardown would free, one by one, every
    object and module the command loaded (numpy's and pyarrow's among them) and their
    memory, which the process's end hands back anyway: 5-7 ms of a 100k-row Parquet
    audit's 140 ms process, interleaved runs.

    Where that could lose what a normal exit would finish, the process exits as
    ``sys.exit`` does instead (and this raises :class:`SystemExit`): another thread still
    runs (a normal exit waits for it), or flushing standard output or error fails (Python
    reports that itself, exit code 120).  Every file a command writes is closed when
    :func:`main` returns (a ``with`` block or the sink's own ``close``): nothing is left
    for the teardown to flush.  Called by ``bin/gpuclass`` and ``python -m gpuclass``;
    :func:`console` returns, for callers that go on (tests run it in a process of theirs)."""
    import os
    import sys
    import threading

    code = 0 if code is None else code
    if threading.active_count() != 1 or not _flushed():
        sys.exit(code)  # (a stream that cannot be flushed: the interpreter's exit reports it)
    import atexit

    atexit._run_exitfuncs()  # as the interpreter's exit runs them (an exception is printed)
    if not _flushed():  # what a handler wrote
        sys.exit(code)
    os._exit(code)


def _flushed() -> bool:
    """Whether standard output and error could be flushed."""
    import sys

    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


# What the command's process sets where the user has not (see console), before numpy,
# pydantic or pyarrow loads: one OpenBLAS thread, no pydantic plugin discovery, Arrow's
# memory from the system allocator.
PROCESS_DEFAULTS = {"OPENBLAS_NUM_THREADS": "1", "PYDANTIC_DISABLE_PLUGINS": "__all__",
                    "ARROW_DEFAULT_MEMORY_POOL": "system"}


# What pyarrow imports where it can, and no command uses (see console): not there to
# import in the command's process, unless something had loaded one of them before.
UNUSED_MODULES = ("pandas", "cloudpickle")


class _Unused:
    """A meta path finder for the command's process: :data:`UNUSED_MODULES` are not there
    to import."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in UNUSED_MODULES:
            raise ModuleNotFoundError(f"the gpuclass command does without {name.partition('.')[0]}",
                                      name=name)
        return None


# glibc's mallopt parameter for the most arenas (malloc.h's M_ARENA_MAX)
_M_ARENA_MAX = -8


def fewer_malloc_arenas(arenas: int = 2) -> bool:
    """At most ``arenas`` glibc malloc arenas in this process, where the user has not set
    ``MALLOC_ARENA_MAX``: called by a command whose threads allocate (an audit's reader,
    writer and worker), before it starts them.  Each thread that meets a busy arena gets
    one of its own, whose freed blocks stay there: two arenas hold a 100k-row Parquet
    audit's peak 2.3 MiB lower (and a 1M-row one's 2.5 MiB), in the same time.  True where
    the limit was set (not on another C library, where this does nothing)."""
    import os
    import sys

    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    import ctypes  # (numpy imports it too: nothing an audit would not load)

    try:
        return bool(ctypes.CDLL(None).mallopt(_M_ARENA_MAX, arenas))
    except (OSError, AttributeError):  # no mallopt (musl)
        return False
