# The native core: an include list over the kernels of gpuclass/_native/, one
# stem per kernel pair (X.pxi here, X_py.py the twin, contract/X.py shared).  A kernel
# that needs another's cdef code includes it itself (tests/test_layout.py checks).
# The C they call lives in gpuclass/_native/include/*.h, declared in
# gpuclass/_native/kernels.pxd.  Compiler directives are set in one place,
# setup.py (GPUCLASS_CYTHON_DEBUG=1 turns bounds and wraparound checks back on).
"""The native core: pci.ids tokenizer, hashed key lookups, the matcher and rollup, sysfs reading,
and device tables audited from their columns (and their hex cells parsed).

Its pure-Python twin is ``gpuclass._native.twin``; both expose the same names
with the same signatures, results and exception types.

>>> import numpy as np
>>> idx = KeyIndex(np.array([3, 7, 9], dtype=np.uint32))
>>> idx.lookup(np.array([7, 8, 3], dtype=np.uint32)).tolist()
[1, -1, 0]
"""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int16_t, int32_t, int64_t
from libc.string cimport memchr, memcpy, memset
from libc.stdlib cimport calloc, free

from gpuclass._native.kernels cimport *
from gpuclass._native.contract.args import as_key_array, check_sorted_keys, contiguous

cnp.import_array()

IS_COMPILED = True

include "_native/pciids.pxi"
include "_native/keyindex.pxi"
include "_native/rollup.pxi"
include "_native/sysfs.pxi"
include "_native/parquet.pxi"
include "_native/csv.pxi"
include "_native/audit.pxi"  # and the matcher (match.pxi), which audit.pxi includes: it classifies with it
