# Allowlist matcher kernels, included into _core.pyx (see gpuclass._match_py for the twin).
