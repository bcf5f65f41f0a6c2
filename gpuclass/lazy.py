"""Names a package exports but imports on first use (a module ``__getattr__``).

>>> import sys, types
>>> pkg = types.ModuleType("demo"); sys.modules["demo"] = pkg
>>> sys.modules["demo.sub"] = types.SimpleNamespace(VALUE=42)
>>> pkg.__getattr__ = lazy_exports("demo", {"VALUE": "sub"}, vars(pkg))
>>> pkg.VALUE, "VALUE" in vars(pkg)
(42, True)
"""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_exports(package: str, names: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A ``__getattr__`` for ``package``: each name of ``names`` is taken from its submodule
    (``names[name]``, relative to the package) when first asked for, and kept in
    ``namespace`` (the package's globals) so that the next lookup finds it directly."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
