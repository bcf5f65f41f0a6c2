"""Pure-Python twin of the matcher kernels in ``_match.pxi``."""

__all__: list[str] = []
