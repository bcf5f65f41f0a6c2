"""Pure-Python twin of the sysfs kernels in ``_sysfs.pxi``."""

__all__: list[str] = []
