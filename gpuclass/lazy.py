"""What keeps imports cheap: names a package exports but imports on first use (a module
``__getattr__``), named tuples declared as :class:`typing.NamedTuple` declares them
without importing :mod:`typing` (a listing audit starts in the time a script takes), and
regular expressions compiled when first used (:mod:`re` imports :mod:`enum`: a few ms of
every ``gpuclass scan`` that never matched one).

>>> import sys, types
>>> pkg = types.ModuleType("demo"); sys.modules["demo"] = pkg
>>> sys.modules["demo.sub"] = types.SimpleNamespace(VALUE=42)
>>> pkg.__getattr__ = lazy_exports("demo", {"VALUE": "sub"}, vars(pkg))
>>> pkg.VALUE, "VALUE" in vars(pkg)
(42, True)
"""

from __future__ import annotations

import collections
import importlib
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

__all__ = ["lazy_exports", "compiled_function", "NamedTuple", "Pattern"]


def compiled_function(module: str, name: str) -> Any:
    """``name`` of the optional compiled module ``module`` (a fast path beside Python code
    that gives the same answers), or None: not built, built without it, or
    ``GPUCLASS_NO_EXTENSIONS=1`` (the Python code runs then)."""
    if os.environ.get("GPUCLASS_NO_EXTENSIONS", "") not in ("", "0"):
        return None
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def lazy_exports(package: str, names: dict[str, Any], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A ``__getattr__`` for ``package``: each name of ``names`` is taken from its submodule
    (``names[name]``, relative to the package; or ``(submodule, its name there)``) when
    first asked for, and kept in ``namespace`` (the package's globals) so that the next
    lookup finds it directly."""

    def __getattr__(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = (where, name) if isinstance(where, str) else where
        value = getattr(importlib.import_module(f"{package}.{module}"), attr)
        namespace[name] = value
        return value

    return __getattr__


class _NamedTupleMeta(type):
    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> type:
        if not bases:  # NamedTuple itself
            return super().__new__(mcls, name, bases, ns)
        fields = tuple(ns.get("__annotations__", {}))
        defaults = [ns[f] for f in fields if f in ns]
        base = collections.namedtuple(name, fields, defaults=defaults, module=ns.get("__module__"))
        body = {k: v for k, v in ns.items() if k not in fields}
        body["__slots__"] = ()
        return type(name, (base,), body)


class NamedTuple(metaclass=_NamedTupleMeta):
    """A base for named tuples, as :class:`typing.NamedTuple` (fields from the class's
    annotations, defaults from its values, methods and docstring kept), made by
    :func:`collections.namedtuple`.  Modules declare ``from typing import NamedTuple``
    for type checkers and take this one at run time.

    >>> class Point(NamedTuple):
    ...     x: int
    ...     y: int = 0
    ...     def norm1(self) -> int:
    ...         return abs(self.x) + abs(self.y)
    >>> p = Point(3, y=-4)
    >>> p, p.norm1(), p._asdict(), Point(1) == (1, 0)
    (Point(x=3, y=-4), 7, {'x': 3, 'y': -4}, True)
    """


class Pattern:
    """A regular expression (no flags) that :func:`re.compile` compiles when one of its
    methods is first asked for; from then on the compiled pattern's methods are this
    object's own.

    >>> word = Pattern(r"[a-z]+")
    >>> word.findall("pci ids 10de"), word.fullmatch("gpu") is not None, word.pattern
    (['pci', 'ids', 'de'], True, '[a-z]+')
    """

    _METHODS = ("match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def __getattr__(self, name: str) -> Any:
        if name not in self._METHODS:
            raise AttributeError(name)
        import re

        compiled = re.compile(self.pattern)
        for method in self._METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)
