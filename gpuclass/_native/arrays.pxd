# Helpers every kernel of gpuclass/_core.pyx may cimport (inline: no module of their own).

cimport numpy as cnp


cdef inline const void* data_or_null(object arr):
    """The data of a contiguous array (the contracts check that), NULL for None or an empty one."""
    if arr is None or cnp.PyArray_SIZE(<cnp.ndarray> arr) == 0:
        return NULL
    return <const void*> cnp.PyArray_DATA(<cnp.ndarray> arr)
