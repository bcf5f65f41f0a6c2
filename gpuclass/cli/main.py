"""The ``gpuclass`` command.

Each subcommand lives in ``gpuclass.cli.<name>`` and is imported only when
it runs.  Errors reach the user as one line on stderr and a non-zero exit code,
never a traceback:

- 0: success
- 1: the command ran and found a problem (unknown ID, failed validation, ...)
- 2: usage error (bad arguments, a malformed ID)
- 3: input or environment error (unreadable file, missing or malformed database, bad root)

Each command's ``--help`` ends with what its codes mean for it.  ``gpuclass --help``
and every ``gpuclass COMMAND --help`` answer without importing numpy or pydantic.

>>> main(["lookup", "10de:27b0", "-o", "json"])  # doctest: +ELLIPSIS
[...
0
"""

from __future__ import annotations

import errno
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

from ..errors import GpuclassError, InputError, missing_extra
from ..printable import ESCAPE_ERRORS
from .options import EXIT_INPUT, EXIT_OK, EXIT_USAGE, UsageError, printable


class _ClosedStdout:
    """Standard output as Python leaves it when the process started with descriptor 1
    closed (``sys.stdout`` is None): every write fails as a closed descriptor does."""

    closed = True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        self.write("")

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


def _stdout_failed(exc: BaseException) -> bool:
    """Whether ``exc`` is standard output refusing a write: a closed or read-only
    descriptor (EBADF) or a stream object already closed (ValueError)."""
    if isinstance(exc, OSError):
        return exc.errno == errno.EBADF
    return isinstance(exc, ValueError) and bool(getattr(sys.stdout, "closed", False))


def _stdout_closed() -> int:
    """The one line and exit code of a command whose standard output is closed; standard
    output then points at the null device, so that what is still buffered in it is dropped
    when the interpreter flushes at exit instead of failing a second time."""
    try:
        fd = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass
    try:
        sys.stdout = open(os.devnull, "w")
    except OSError:
        pass
    print("gpuclass: error: cannot write to standard output: it is closed", file=sys.stderr)
    return EXIT_INPUT


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is: what it was writing is cleaned up as for
    Ctrl-C (a half-written -o file's temporary is removed), and the exit is 143."""


def terminate_as_interrupt() -> None:
    """For the command's own process (``console``): SIGTERM raises :class:`Terminated`."""
    try:  # the C module: ``signal`` wraps it in enums, whose import is a few ms of a start
        import _signal as signal
    except ImportError:  # an interpreter without it
        import signal  # type: ignore[no-redef]

    def terminated(signum, frame):
        raise Terminated()

    try:
        if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, terminated)
    except (ValueError, OSError, AttributeError):  # no SIGTERM here
        pass


# options whose '-' is standard output, not input
_OUTPUT_DESTS = frozenset({"output", "write", "format"})


def _stdin_twice(args: argparse.Namespace) -> str:
    """Where '-' (standard input) is given more than once, among every option and argument
    of the command that reads a file: their names (``FILE and --policy``); else ''.  The
    second read would see an empty stream: a silent wrong answer (a policy of no cards)."""
    where = []
    for dest, value in vars(args).items():
        if dest in _OUTPUT_DESTS or dest.startswith("_"):
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        n = sum(1 for v in values if isinstance(v, str) and v == "-")
        if n:
            name = "FILE" if dest in ("files", "file", "manifests", "paths") else "--" + dest.replace("_", "-")
            where += [name] * n
    if len(where) < 2:
        return ""
    return " and ".join(dict.fromkeys(where)) if len(set(where)) > 1 else f"{where[0]} {len(where)} times"


def _argparse(argv: list[str]) -> object:
    """``argv`` parsed by argparse (:mod:`gpuclass.cli.parser`): the namespace, or the exit
    code where argparse ended the command (``--help`` 0, a usage error 2)."""
    from .commands import COMMANDS
    from .parser import build_parser

    # Build only the command that runs; the others are names and summaries.
    only = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(only if only in COMMANDS else None)
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or usage error (2)
        if exc.code:
            return int(exc.code)
        if isinstance(sys.stdout, _ClosedStdout):
            return _stdout_closed()  # --help had nowhere to go (argparse ignores that)
        try:
            sys.stdout.flush()
        except (OSError, ValueError) as err:
            if not _stdout_failed(err):
                raise
            return _stdout_closed()
        return 0
    except (OSError, ValueError) as exc:
        if not _stdout_failed(exc):
            raise
        return _stdout_closed()


def main(argv: list[str] | None = None) -> int:
    from .commands import COMMANDS
    from .quickargs import parse as quick_parse

    argv = list(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None:  # started with descriptor 1 closed: fail at the first write
        sys.stdout = _ClosedStdout()
    # Under any locale: what the terminal cannot show is escaped, never a crash.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors=ESCAPE_ERRORS)
            except (ValueError, OSError):  # a stream that cannot be reconfigured
                pass
    args = quick_parse(argv, COMMANDS)  # None: argparse must parse this line
    if args is None:
        parsed = _argparse(argv)
        if isinstance(parsed, int):
            return parsed
        args = parsed
    twice = _stdin_twice(args)
    if twice:
        print(printable(f"gpuclass: error: standard input can be read once: '-' is given to {twice}"),
              file=sys.stderr)
        return EXIT_USAGE
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # here, not at exit: a closed stdout is one line, not a traceback
        return code
    except (InputError, UsageError) as exc:  # a malformed argument (an ID, a value)
        print(f"gpuclass: error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except GpuclassError as exc:  # one line, whatever a path or a name in it holds
        print(f"gpuclass: error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:  # `gpuclass scan | head`: the reader left, not an error
        try:
            sys.stdout = open(os.devnull, "w")  # no second error when Python flushes at exit
        except OSError:
            pass
        return EXIT_OK
    except (OSError, ValueError) as exc:
        if _stdout_failed(exc):
            return _stdout_closed()
        if isinstance(exc, ValueError):
            raise
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        print(printable(f"gpuclass: error:{where}: {exc.strerror or exc}"), file=sys.stderr)
        return EXIT_INPUT
    except Terminated:
        print("gpuclass: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("gpuclass: interrupted", file=sys.stderr)
        return 130
    except ImportError as exc:  # an optional dependency a deeper import needed: name its extra
        extra = missing_extra(exc)
        if extra is None:
            raise
        print(printable(f"gpuclass: error: {args.command}: {extra}"), file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
