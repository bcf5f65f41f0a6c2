"""The shape of the package (ARCHITECTURE.md), read from the source: imports and sizes.

- no import circles between modules, lazy (in-function) imports included;
- the library never imports the CLI;
- nothing outside ``gpuclass._native`` imports the inside of a kernel pair;
- no private name (``_x``) is imported from another package;
- each layer imports only the layers below it (ARCHITECTURE.md);
- no module over 500 lines, and no C header, Cython module or include file either;
- a Cython include file uses another's cdef code only where it includes that file itself.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

# the source tree: beside the tests, or where tools/sanitize.sh copied it (it runs the suite
# from a copy without gpuclass/)
PACKAGE = Path(os.environ.get("GPUCLASS_SOURCE_TREE") or Path(__file__).resolve().parents[1]) / "gpuclass"
MAX_LINES = 500


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for p in PACKAGE.rglob("*.py"):
        parts = list(p.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (p, is_pkg)
    return out


MODULES = _modules()
COMPILED = {"gpuclass._core", "gpuclass._feed"}  # built from .pyx files: modules, though no .py file


def _owner(name: str) -> str:
    """The module (or package) a dotted name lives in."""
    while name and name not in MODULES and name not in COMPILED:
        name = name.rpartition(".")[0]
    return name


def _imports(module: str) -> list[tuple[str, list[str]]]:
    """``(imported module, names taken from it)`` for every gpuclass import in ``module``."""
    path, is_pkg = MODULES[module]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.split(".")[0] == "gpuclass"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: None if is_pkg else -1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "gpuclass":
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((sub, []) if sub in MODULES or sub in COMPILED else (target, [a.name]))
    return out


def _graph() -> dict[str, set[str]]:
    graph = {}
    for m in MODULES:
        deps = {_owner(t) for t, _ in _imports(m)} - {m, ""} - COMPILED
        graph[m] = deps
    return graph


def test_no_import_circles():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles


def test_the_library_never_imports_the_cli():
    offenders = [m for m in MODULES if not m.startswith("gpuclass.cli") and m != "gpuclass.__main__"
                 and any(_owner(t).startswith("gpuclass.cli") for t, _ in _imports(m))]
    assert not offenders


def test_kernel_pairs_are_used_through_the_chooser():
    """Outside gpuclass._native only the package itself is imported (its core and contract names)."""
    offenders = [(m, t) for m in MODULES if not m.startswith("gpuclass._native")
                 for t, _ in _imports(m) if _owner(t).startswith("gpuclass._native.")]
    assert not offenders


def test_no_private_name_crosses_a_package():
    def package(mod: str) -> str:
        return mod if mod in MODULES and MODULES[mod][1] else mod.rpartition(".")[0]

    offenders = []
    for m in MODULES:
        for target, names in _imports(m):
            owner = _owner(target)
            if package(owner) == package(m):
                continue
            # the chooser imports the compiled core by its private name, as it must, and
            # the feed reader the feed scanner
            private = [n for n in names if n.startswith("_")
                       and not (n == "_core" and m == "gpuclass._native")]
            private += [part for part in target.split(".")[1:] if part.startswith("_")
                        and part not in ("_native", "_core", "_feed")]
            if private:
                offenders.append((m, target, private))
    assert not offenders


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_a_room_that_does_too_much(module):
    lines = MODULES[module][0].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{module}: {lines} lines"


NATIVE_SOURCES = sorted(p for ext in ("*.h", "*.pyx", "*.pxi", "*.pxd") for p in PACKAGE.rglob(ext))


def test_the_native_sources_are_found():
    names = {p.name for p in NATIVE_SOURCES}
    assert {"_core.pyx", "_feed.pyx", "audit.pxi", "gpuclass_cell.h", "kernels.pxd"} <= names


@pytest.mark.parametrize("path", NATIVE_SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_native_source_does_too_much(path):
    """C headers, Cython modules and their include files: the same limit as modules."""
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE)}: {lines} lines"


def _cython_code(path: Path) -> str:
    """A Cython file without its comments, docstrings and C verbatim blocks."""
    text = re.sub(r'"""(?:.|\n)*?"""', '""', path.read_text(encoding="utf-8"))
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


_DEFINES = re.compile(r"^(?:cdef|cpdef)\s+(?:(?:inline|public|api|class|struct|enum|union|const)\s+)*"
                      r"(?:[\w.]+[\s*]+)*?(\w+)\s*[(:]|^def\s+(\w+)|^(\w+)\s*=|^cdef\s+[\w.*\s]+?\s\*?(\w+)\s*$",
                      re.M)
_ENUM_ITEMS = re.compile(r"^cdef\s+enum\s*\w*\s*:\s*\n((?:[ \t]+\w+.*\n?)+)", re.M)


def _top_level_names(code: str) -> set[str]:
    """What a Cython file defines at its top (functions, classes, structs, enums and their
    items, globals); not what it imports."""
    names = {n for m in _DEFINES.finditer(code) for n in m.groups() if n}
    for block in _ENUM_ITEMS.finditer(code):
        names |= {line.split()[0] for line in block.group(1).splitlines() if line.strip()}
    return names - {"enum", "struct", "union", "class", "inline"}


def _includes(path: Path) -> list[Path]:
    return [path.parent / m.group(1) for m in re.finditer(r'^include\s+"([^"]+)"', _cython_code(path), re.M)]


CYTHON_PARTS = sorted(PACKAGE.rglob("*.pxi"))


@pytest.mark.parametrize("pxi", CYTHON_PARTS, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_an_include_file_declares_the_kernels_it_needs(pxi):
    """A .pxi may use what it defines, what the files it includes (transitively) define,
    and what its extension module's .pyx defines at its top; what another .pxi beside it
    defines only by including that file (today's order of includes in _core.pyx is no
    declaration)."""
    reach, todo = set(), [pxi]
    while todo:
        p = todo.pop()
        if p not in reach:
            reach.add(p)
            todo += _includes(p)
    others = {p: _top_level_names(_cython_code(p)) for p in CYTHON_PARTS
              if p not in reach and p.parent == pxi.parent}  # the same extension's
    allowed = set().union(*(_top_level_names(_cython_code(p)) for p in reach))
    words = set(re.findall(r"\b\w+\b", _cython_code(pxi)))
    borrowed = {(p.name, n) for p, names in others.items() for n in (names & words) - allowed}
    assert not borrowed, f"{pxi.name} uses what it does not include: {sorted(borrowed)}"


def test_the_audit_kernel_includes_the_matcher():
    """The check above sees real uses: the audit kernel classifies with the matcher's
    context, and says so by including it."""
    audit = PACKAGE / "_native" / "audit.pxi"
    assert PACKAGE / "_native" / "match.pxi" in _includes(audit)
    assert {"fill_ctx", "layout_for"} <= _top_level_names(_cython_code(PACKAGE / "_native" / "match.pxi"))
    assert "fill_ctx" in re.findall(r"\b\w+\b", _cython_code(audit))


# ARCHITECTURE.md's floors, lowest first; a module's floor is that of its longest prefix.
LAYERS = [
    ("gpuclass.errors", "gpuclass.constants", "gpuclass.ids", "gpuclass.documents", "gpuclass.inputs",
     "gpuclass.cachedir", "gpuclass.printable", "gpuclass.lazy", "gpuclass.compression"),
    ("gpuclass._native", "gpuclass._core", "gpuclass._feed"),
    ("gpuclass.devices", "gpuclass.models", "gpuclass.records"),
    ("gpuclass.db", "gpuclass.sources", "gpuclass.policy"),
    ("gpuclass.classify", "gpuclass.verdicts", "gpuclass.pcinames", "gpuclass.textmatch"),
    ("gpuclass.machine", "gpuclass.planning", "gpuclass.provisioner", "gpuclass.k8s", "gpuclass.audit",
     "gpuclass.dask", "gpuclass.report"),
    ("gpuclass.cli", "gpuclass.__main__", "gpuclass"),
]
# The one arrow up, as pandas' DataFrame.to_csv: DeviceTable.to_lspci_text imports the
# writer on call (the writer imports nothing of devices).
ALLOWED_UP = {("gpuclass.devices", "gpuclass.sources.lspci.write")}


def _floor(module: str) -> int:
    best = max((len(prefix), i) for i, floor in enumerate(LAYERS) for prefix in floor
               if module == prefix or module.startswith(prefix + "."))
    return best[1]


def test_layers_import_only_downwards():
    up = []
    for m in MODULES:
        for target, _ in _imports(m):
            owner = _owner(target)
            if owner and _floor(owner) > _floor(m) and (m, owner) not in ALLOWED_UP:
                up.append((m, owner))
    assert not up
