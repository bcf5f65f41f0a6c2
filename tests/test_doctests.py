"""Every module's ``>>>`` examples run against the installed package."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import gpuclass

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(gpuclass.__path__, "gpuclass.")
    if not m.name.endswith("__main__")
)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
