# sysfs attribute reading kernels, included into _core.pyx (twin: gpuclass._sysfs_py).
