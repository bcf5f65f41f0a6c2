"""Build of the native core.

Compiler directives live here, in one place.  Environment switches:

- ``GPUCLASS_CYTHON_DEBUG=1``: bounds, wraparound and division checks back on, and
  debug info kept (otherwise the extension is built without it and stripped).
- ``GPUCLASS_SANITIZE=1``: also compile with AddressSanitizer and UBSan (debug info kept).
- ``GPUCLASS_REQUIRE_COMPILED=1``: a core that does not compile fails the build.  Without it,
  a machine that cannot compile the core (no C compiler, no Python headers) gets a warning
  and the package without its extensions: the pure-Python twin runs, with the same answers,
  many times slower (``gpuclass --version`` says which core runs).

The bundled ``data/pci.ids`` is copied into the package at build time so that
the wheel carries it and an installed gpuclass finds it without the source tree.
"""

import glob
import os
import shutil
import subprocess
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.errors import CCompilerError, ExecError, PlatformError

HERE = os.path.dirname(os.path.abspath(__file__))
DEBUG = os.environ.get("GPUCLASS_CYTHON_DEBUG") == "1"
SANITIZE = os.environ.get("GPUCLASS_SANITIZE") == "1"

directives = {
    "language_level": 3,
    "boundscheck": DEBUG or SANITIZE,
    "wraparound": DEBUG or SANITIZE,
    "cdivision": not (DEBUG or SANITIZE),
    "initializedcheck": DEBUG or SANITIZE,
    "embedsignature": True,
}

if DEBUG or SANITIZE:
    compile_args = ["-O1", "-g", "-fno-omit-frame-pointer"]
    link_args = []
else:
    # Python's own CFLAGS carry -g (about 2.9 MB of DWARF in the core): -g0, placed after
    # them, drops it, and the linker strips whatever debug info is left.
    compile_args = ["-O3", "-g0"]
    link_args = ["-Wl,--strip-debug"]
if SANITIZE:
    compile_args += ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
    link_args += ["-fsanitize=address,undefined"]

NATIVE = os.path.join("gpuclass", "_native")
extensions = [
    Extension(
        "gpuclass._core",
        ["gpuclass/_core.pyx"],
        include_dirs=[numpy.get_include(), os.path.join(NATIVE, "include")],
        # a change to a kernel's header or include file rebuilds the core
        depends=sorted(glob.glob(os.path.join(NATIVE, "include", "*.h"))
                       + glob.glob(os.path.join(NATIVE, "*.pxi"))
                       + glob.glob(os.path.join(NATIVE, "*.pxd"))),
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    ),
    # the auction feed's record scanner: no numpy (the listing path starts without it); of
    # the core's C only the hex digit table
    Extension(
        "gpuclass._feed",
        ["gpuclass/_feed.pyx"],
        include_dirs=[os.path.join(NATIVE, "include")],
        depends=["gpuclass/_feed_syntax.pxi", "gpuclass/_feed_csv.pxi",
                 os.path.join(NATIVE, "include", "gpuclass_hex.h")],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    ),
]


class BuildPyWithData(build_py):
    """Copy the bundled pci.ids into the built package, with its compiled cache: a fresh
    machine's first command (a rescue system's at every boot) maps it instead of importing
    numpy to parse the text (``gpuclass.db.locate.shipped_cache``).  The cache is compiled
    by the pure-Python core of these sources, before any extension is built."""

    def run(self):
        super().run()
        src = os.path.join(HERE, "data", "pci.ids")
        dst_dir = os.path.join(self.build_lib, "gpuclass", "data")
        os.makedirs(dst_dir, exist_ok=True)
        shutil.copyfile(src, os.path.join(dst_dir, "pci.ids"))
        for old in glob.glob(os.path.join(dst_dir, "pci.ids-*.gpcdb")):  # a previous build's
            os.unlink(old)
        env = {**os.environ, "GPUCLASS_NO_EXTENSIONS": "1",
               "PYTHONPATH": os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")]))}
        subprocess.run([sys.executable, "-c", "import sys; from gpuclass.db.database import write_shipped_cache; "
                        "write_shipped_cache(sys.argv[1], sys.argv[2])", src, dst_dir], env=env, check=True)


REQUIRE_COMPILED = os.environ.get("GPUCLASS_REQUIRE_COMPILED") == "1"
_CANNOT_COMPILE = (CCompilerError, ExecError, PlatformError, OSError)


class OptionalBuildExt(build_ext):
    """Build the native core; where this machine cannot compile it, warn and go on without
    it (the pure-Python twin then runs), unless GPUCLASS_REQUIRE_COMPILED=1."""

    def run(self):
        self._failed = set()
        try:
            super().run()
        except _CANNOT_COMPILE as exc:
            self._without(None, exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except _CANNOT_COMPILE as exc:
            self._without(ext, exc)

    def _built(self):
        failed = getattr(self, "_failed", set())
        return [e for e in self.extensions if e.name not in failed and "*" not in failed]

    def copy_extensions_to_source(self):  # --inplace: only what was built
        every = self.extensions
        self.extensions = self._built()
        try:
            super().copy_extensions_to_source()
        finally:
            self.extensions = every

    def get_outputs(self):
        every = self.extensions
        self.extensions = self._built()
        try:
            return super().get_outputs()
        finally:
            self.extensions = every

    def _without(self, ext, exc):
        if REQUIRE_COMPILED:
            raise exc
        self._failed.add(ext.name if ext is not None else "*")
        what = f"the native core ({ext.name})" if ext is not None else "the native core"
        bar = "*" * 78
        sys.stderr.write(
            f"\n{bar}\nWARNING: gpuclass: {what} could not be compiled: {exc}\n"
            "gpuclass installs without it and runs its pure-Python twin: the same answers, many\n"
            "times slower ('gpuclass --version' says which core runs). Install a C compiler and\n"
            "the Python headers (Debian: apt-get install gcc python3-dev) and reinstall for the\n"
            f"compiled core.\n{bar}\n\n")


# The ``gpuclass`` command.  pip's launcher for an entry point imports ``re`` (with ``enum``,
# 8-10 ms of a ``gpuclass scan`` that needs neither, a sixth of its process): where ``#!``
# scripts run, the command is ``bin/gpuclass``, the same call without that import (pip
# points its first line at the environment's interpreter).  Windows, where they do not
# run, gets the entry point.
if sys.platform == "win32":
    COMMAND = {"entry_points": {"console_scripts": ["gpuclass = gpuclass.cli:console"]}}
else:
    COMMAND = {"scripts": ["bin/gpuclass"]}

setup(
    ext_modules=cythonize(extensions, compiler_directives=directives, quiet=True),
    cmdclass={"build_py": BuildPyWithData, "build_ext": OptionalBuildExt},
    **COMMAND,
)
