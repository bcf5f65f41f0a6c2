"""Build of the native core.

Compiler directives live here, in one place.  Environment switches:

- ``GPUCLASS_CYTHON_DEBUG=1``: bounds, wraparound and division checks back on, and
  debug info kept (otherwise the extension is built without it and stripped).
- ``GPUCLASS_SANITIZE=1``: also compile with AddressSanitizer and UBSan (debug info kept).

The bundled ``data/pci.ids`` is copied into the package at build time so that
the wheel carries it and an installed gpuclass finds it without the source tree.
"""

import glob
import os
import shutil

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_py import build_py

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
    """Copy the bundled pci.ids into the built package."""

    def run(self):
        super().run()
        src = os.path.join(HERE, "data", "pci.ids")
        dst_dir = os.path.join(self.build_lib, "gpuclass", "data")
        os.makedirs(dst_dir, exist_ok=True)
        shutil.copyfile(src, os.path.join(dst_dir, "pci.ids"))


setup(
    ext_modules=cythonize(extensions, compiler_directives=directives, quiet=True),
    cmdclass={"build_py": BuildPyWithData},
)
