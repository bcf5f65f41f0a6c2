"""Typed errors shared by the compiled core, its pure-Python twin and the wrappers.

Both cores raise exactly these classes, so callers (and the differential tests)
never need to know which core is loaded.

>>> err = PciIdsError("pci.ids", 12, "bad hex digit in vendor ID")
>>> str(err)
'pci.ids:12: bad hex digit in vendor ID'
>>> isinstance(err, ValueError)
True
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from .lazy import NamedTuple

__all__ = [
    "GpuclassError",
    "PciIdsError",
    "InputError",
    "CacheError",
    "SkippedLine",
    "SourceError",
    "NotAFileError",
    "NotReplaceableError",
    "NotLspciOutput",
    "PolicyError",
    "ManifestError",
    "QuantityError",
    "MissingExtraError",
    "EXTRAS",
    "missing_extra",
]


class GpuclassError(Exception):
    """Base class of every error gpuclass raises on purpose."""


class PciIdsError(GpuclassError, ValueError):
    """A pci.ids file that cannot be read or parsed.

    ``filename`` names the file, ``line`` the 1-based line number (``None`` when
    the problem is not tied to a line, such as a truncated archive) and
    ``reason`` says what is wrong.
    """

    def __init__(self, filename: str, line: int | None, reason: str) -> None:
        self.filename = filename
        self.line = line
        self.reason = reason
        where = filename if line is None else f"{filename}:{line}"
        super().__init__(f"{where}: {reason}")

    def __reduce__(self):  # keep the error picklable across processes
        return (type(self), (self.filename, self.line, self.reason))


class InputError(GpuclassError, ValueError):
    """Arrays or scalars handed to the library that do not fit: dtype, length or range."""


class CacheError(GpuclassError):
    """A compiled database cache that is missing, stale or corrupt (callers rebuild)."""


class SkippedLine(NamedTuple):
    """One line that lenient parsing skipped: where, why, and its text.

    ``kept`` marks a line that was read, but not as written: libpci accepts it
    (a name that is not UTF-8, a prog-if directly under its class line), and so
    does gpuclass, yet lenient mode lists it (``PciDatabase.flagged``) so that
    nothing passes unseen.
    """

    line: int
    reason: str
    text: str
    kept: bool = False


class SourceError(GpuclassError):
    """A hardware source that cannot be read at all: a missing or unreadable root,
    a sysfs tree without ``bus/pci/devices``, a text dump in no known format.

    A single bad device is never a ``SourceError``: it becomes a flagged record.
    ``path`` names the file or directory, ``line`` the 1-based line (or ``None``).

    >>> str(SourceError("/mnt/sys/bus/pci/devices", None, "no such directory"))
    '/mnt/sys/bus/pci/devices: no such directory'
    """

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {reason}")

    def __reduce__(self):  # picklable, like PciIdsError
        return (type(self), (self.path, self.line, self.reason))


class NotAFileError(SourceError):
    """A path that names no regular file: a directory, a FIFO, a device, a socket, or a
    symlink where none is followed.  What reads collections skips such a member; what
    reads one input the user named refuses it.

    >>> isinstance(NotAFileError("/dev/zero", None, "input is a character device"), SourceError)
    True
    """


class NotReplaceableError(GpuclassError, OSError):
    """An output path that holds something other than a regular file (a FIFO, a device, a
    directory, a socket, a symlink): writing there would rename a new file over it (over
    ``/dev/null`` itself, as root), so it is refused and left as it is.  Also an
    :class:`OSError`, so that a writer that takes any OSError as "no cache file" does so here.

    >>> str(NotReplaceableError("/dev/null: refusing to replace a character device"))
    '/dev/null: refusing to replace a character device'
    """


class NotLspciOutput(SourceError, InputError):
    """Text handed in as lspci output that has no line in any form gpuclass reads:
    ``looks`` says what it looks like and how to collect a dump instead.

    Both a :class:`SourceError` (the source, a dump, cannot be read at all) and an
    :class:`InputError` (the value handed to ``parse_lspci`` does not fit).

    >>> str(NotLspciOutput("dump.txt", "looks like JSON; collect with lspci -nn"))
    'dump.txt: not lspci output: looks like JSON; collect with lspci -nn'
    """

    def __init__(self, path: str, looks: str) -> None:
        self.looks = looks
        super().__init__(path, None, f"not lspci output: {looks}")

    def __reduce__(self):
        return (type(self), (self.path, self.looks))


class PolicyError(GpuclassError, ValueError):
    """An allowlist policy that does not validate.

    ``path`` locates the first problem (``cards[2].match[0].device``; empty for
    the document as a whole), ``reason`` says what is wrong, ``errors`` lists
    every ``(path, reason)`` found and ``source`` names the file, if any.
    """

    def __init__(self, path: str, reason: str, errors: list[tuple[str, str]] | None = None,
                 source: str | None = None) -> None:
        self.path = path
        self.reason = reason
        self.errors = list(errors) if errors else [(path, reason)]
        self.source = source
        where = ": ".join(p for p in (source, path) if p)
        more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        super().__init__(f"{where}: {reason}{more}" if where else f"{reason}{more}")

    def __reduce__(self):
        return (type(self), (self.path, self.reason, self.errors, self.source))


class ManifestError(GpuclassError, ValueError):
    """A Kubernetes object that cannot be read: malformed YAML, an unexpected kind,
    a missing field.  ``source`` names the file (or ``None``), ``path`` the field.

    A pod that reads fine but asks for too much is not a ``ManifestError``: it is a
    failed validation with its reasons.

    >>> str(ManifestError("spec.containers", "missing", source="pod.yaml"))
    'pod.yaml: spec.containers: missing'
    """

    def __init__(self, path: str, reason: str, source: str | None = None) -> None:
        self.path = path
        self.reason = reason
        self.source = source
        where = ": ".join(p for p in (source, path) if p)
        super().__init__(f"{where}: {reason}" if where else reason)

    def __reduce__(self):
        return (type(self), (self.path, self.reason, self.source))


class QuantityError(GpuclassError, ValueError):
    """A value that is not a Kubernetes quantity, or one outside what gpuclass computes.

    ``text`` shows the value (shortened; a huge integer is described, never converted
    to its digits) and ``reason`` says what is wrong.

    >>> str(QuantityError("'1K'", "unknown suffix 'K'"))
    "'1K' is not a quantity: unknown suffix 'K'"
    """

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(f"{text} is not a quantity: {reason}")

    def __reduce__(self):
        return (type(self), (self.text, self.reason))


# The optional modules gpuclass imports, each with the extra that installs it (pyproject.toml's
# optional-dependencies) and the distribution's name on PyPI.
EXTRAS: dict[str, tuple[str, str]] = {
    "ahocorasick": ("audit", "pyahocorasick"),
    "tqdm": ("audit", "tqdm"),
    "zstandard": ("audit", "zstandard"),
    "pyarrow": ("dataframes", "pyarrow"),
    "pandas": ("dataframes", "pandas"),
    "matplotlib": ("report", "matplotlib"),
    "dask": ("dask", "dask"),
    "distributed": ("dask", "distributed"),
}


class MissingExtraError(InputError, ImportError):
    """An optional dependency that is not installed: ``module`` is the one missing, ``extra``
    the gpuclass extra that installs it, ``purpose`` what needed it.  An ``InputError`` (the
    command line's exit 2: what was asked for cannot run here as installed) and an
    ``ImportError``.

    >>> str(MissingExtraError("ahocorasick", "audit", "free-text matching"))
    "free-text matching needs pyahocorasick, which is not installed: pip install 'gpuclass[audit]'"
    """

    def __init__(self, module: str, extra: str = "", purpose: str = "") -> None:
        self.module = module
        self.extra = extra = extra or EXTRAS.get(module, ("all", module))[0]
        self.purpose = purpose
        dist = EXTRAS.get(module, (extra, module))[1]
        said = f"{purpose} needs {dist}, which is not installed" if purpose else f"{dist} is not installed"
        super().__init__(f"{said}: pip install 'gpuclass[{extra}]'")
        self.name = module

    def __reduce__(self):
        return (type(self), (self.module, self.extra, self.purpose))


def missing_extra(exc: BaseException) -> MissingExtraError | None:
    """The :class:`MissingExtraError` an import failure stands for, when the module it could
    not import (or one that module needs) is one of gpuclass's optional dependencies."""
    if isinstance(exc, MissingExtraError):
        return exc
    seen = set()
    while isinstance(exc, ImportError) and id(exc) not in seen:
        seen.add(id(exc))
        name = exc.name
        if not name and exc.args and isinstance(exc.args[0], str):  # ImportError("No module named 'x'")
            said = exc.args[0].partition("No module named ")[2].strip("'\"")
            name = said or None
        name = (name or "").partition(".")[0]
        if name in EXTRAS:
            return MissingExtraError(name, EXTRAS[name][0])
        exc = exc.__cause__ or exc.__context__
    return None
