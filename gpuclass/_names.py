"""The platform's Kubernetes names, importable without pydantic.

>>> GPU_LABEL, GPU_RESOURCE
('autopilot.syself.com/gpu', 'nvidia.com/gpu')
"""

from __future__ import annotations

__all__ = ["GPU_LABEL", "GPU_RESOURCE", "HOST_LABELS", "RUNTIME_CLASS"]

# The node label that marks a node with an allowlisted card (and attracts GPU pods).
GPU_LABEL = "autopilot.syself.com/gpu"
# The device plugin's extended resource; one slice per unit.
GPU_RESOURCE = "nvidia.com/gpu"
# The label that puts a bare-metal host object into the GPU machine pool.
HOST_LABELS = {"hardware": "gpu"}
# The RuntimeClass of the Kata (VM-isolated) runtime that pods opt into.
RUNTIME_CLASS = "secure"
