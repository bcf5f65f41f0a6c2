"""Ask the kernel to drop the cached pages of every shared library under the directories
given (``posix_fadvise(POSIX_FADV_DONTNEED)``), before the benchmarks run.

``.ci/run`` runs the suite twice, thousands of processes that import numpy and pyarrow,
then the benchmarks.  The page cache those processes leave makes a later ``import
pyarrow`` map about 20 MiB more of its libraries' pages at each fault (54.8 against 34.6
MiB), which counts in a Parquet audit's peak resident memory and in no other engine's
(DuckDB's and polars' scripts import neither): measured by hand after CI's suite, the
100k-row audit's peak was 95.6 MiB, 77.9 MiB once the libraries' pages were dropped, as on
a machine that had not just run the suite (BENCHMARKS.md, "Memory in CI").  Every
engine's libraries are dropped alike; pages that a running process maps stay (no process
maps them between the suite and the benchmarks).

Usage: ``python drop_library_cache.py DIR...``; prints how many files it advised.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator

_LIBRARY = re.compile(r"\.so(\.[0-9]+)*\Z")


def libraries(roots: list[str]) -> Iterator[str]:
    """The shared libraries (``*.so``, ``*.so.N``, ``*.so.N.M``...) under ``roots``, links
    not followed."""
    for root in roots:
        for here, _, files in os.walk(root):
            for name in files:
                if _LIBRARY.search(name):
                    path = os.path.join(here, name)
                    if not os.path.islink(path):
                        yield path


def drop(paths: Iterator[str]) -> int:
    """Advise the kernel to drop each file's cached pages; the number advised (a file
    that cannot be opened is passed over)."""
    done = 0
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            done += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return done


if __name__ == "__main__":
    if not hasattr(os, "posix_fadvise"):
        print("drop_library_cache: no posix_fadvise here; nothing dropped")
        sys.exit(0)
    print(f"drop_library_cache: {drop(libraries(sys.argv[1:]))} libraries advised")
