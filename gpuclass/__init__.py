"""gpuclass: which GPUs does this hardware have, is each supported, how many slices?

The public API is imported lazily so that ``import gpuclass`` stays cheap for a
provisioner that runs once per boot: heavy modules (pydantic, the matcher,
sources) load on first attribute access.

>>> import gpuclass
>>> gpuclass.default_database().device_name(0x10DE, 0x2BB5)
'GB202GL [RTX PRO 6000 Blackwell Server Edition]'
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "PciDatabase": "gpuclass.db",
    "default_database": "gpuclass.db",
    "GpuclassError": "gpuclass.errors",
    "PciIdsError": "gpuclass.errors",
    "InputError": "gpuclass.errors",
    "CacheError": "gpuclass.errors",
    "SkippedLine": "gpuclass.errors",
    "bundled_path": "gpuclass.locate",
    "system_pci_ids": "gpuclass.locate",
    "SourceError": "gpuclass.errors",
    "PolicyError": "gpuclass.errors",
    "DeviceTable": "gpuclass.devices",
    "scan_sysfs": "gpuclass.sysfs",
    "parse_lspci": "gpuclass.lspci",
    "parse_modalias": "gpuclass.modalias",
    "cpu_facts": "gpuclass.cpu",
    "Policy": "gpuclass.policy",
    "classify": "gpuclass.classify",
    "classify_table": "gpuclass.classify",
    "compile_policy": "gpuclass.classify",
    "summarize": "gpuclass.classify",
    "ManifestError": "gpuclass.errors",
    # the provisioner's wrapper
    "inspect": "gpuclass.provisioner",
    "plan": "gpuclass.provisioner",
    "HardwareReport": "gpuclass.provisioner",
    "InstallPlan": "gpuclass.provisioner",
    "Decision": "gpuclass.provisioner",
    "CpuReport": "gpuclass.provisioner",
    # the controller's wrapper
    "node_labels": "gpuclass.controller",
    "labels_patch": "gpuclass.controller",
    "expected_gpus": "gpuclass.controller",
    "expected_resources": "gpuclass.controller",
    "device_plugin_config": "gpuclass.controller",
    "device_plugin_configmap": "gpuclass.controller",
    "validate_pod": "gpuclass.controller",
    "PodValidation": "gpuclass.controller",
    "diagnose": "gpuclass.controller",
    "Diagnosis": "gpuclass.controller",
    # fleet audits
    "TextMatcher": "gpuclass.text",
    "default_matcher": "gpuclass.text",
    "audit_paths": "gpuclass.audit",
    "audit_records": "gpuclass.audit",
    "audit_frame": "gpuclass.audit",
    "write_reports": "gpuclass.audit",
    "ServerReport": "gpuclass.audit",
    "AuditSummary": "gpuclass.audit",
}

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name: str):
    modname = _LAZY.get(name)
    if modname is None:
        raise AttributeError(f"module 'gpuclass' has no attribute {name!r}")
    value = getattr(importlib.import_module(modname), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
