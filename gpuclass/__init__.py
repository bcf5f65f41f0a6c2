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
import sys
import types

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "PciDatabase": "gpuclass.db",
    "default_database": "gpuclass.db",
    "bundled_path": "gpuclass.db",
    "system_pci_ids": "gpuclass.db",
    "GpuclassError": "gpuclass.errors",
    "PciIdsError": "gpuclass.errors",
    "InputError": "gpuclass.errors",
    "CacheError": "gpuclass.errors",
    "SkippedLine": "gpuclass.errors",
    "SourceError": "gpuclass.errors",
    "PolicyError": "gpuclass.errors",
    "ManifestError": "gpuclass.errors",
    "QuantityError": "gpuclass.errors",
    # hardware sources, all into one DeviceTable
    "DeviceTable": "gpuclass.devices",
    "scan_sysfs": "gpuclass.sources.sysfs",
    "parse_lspci": "gpuclass.sources.lspci",
    "parse_modalias": "gpuclass.sources.modalias",
    "cpu_facts": "gpuclass.sources.cpu",
    # policy and classification
    "Policy": "gpuclass.policy",
    "compile_policy": "gpuclass.policy",
    "classify": "gpuclass.classify",
    "classify_table": "gpuclass.classify",
    "summarize": "gpuclass.classify",
    # the provisioner's wrapper
    "inspect": "gpuclass.provisioner",
    "plan": "gpuclass.provisioner",
    "HardwareReport": "gpuclass.provisioner",
    "InstallPlan": "gpuclass.provisioner",
    "Decision": "gpuclass.provisioner",
    "CpuReport": "gpuclass.provisioner",
    # the result models
    "NodeGpuSummary": "gpuclass.models",
    "GpuCard": "gpuclass.models",
    "DeviceClassification": "gpuclass.models",
    # the one node decision
    "NodeDecision": "gpuclass.policy.nodes",
    "decide_node": "gpuclass.policy.nodes",
    # the controller's wrapper
    "node_decision": "gpuclass.k8s.labels",
    "node_labels": "gpuclass.k8s.labels",
    "labels_patch": "gpuclass.k8s.labels",
    "expected_gpus": "gpuclass.k8s.labels",
    "expected_resources": "gpuclass.k8s.labels",
    "device_plugin_config": "gpuclass.k8s.labels",
    "device_plugin_configmap": "gpuclass.k8s.labels",
    "check_device_plugin_config": "gpuclass.k8s.plugin_config",
    "ConfigFinding": "gpuclass.k8s.plugin_config",
    "nfd_feature_file": "gpuclass.k8s.publish",
    "node_feature": "gpuclass.k8s.publish",
    "host_labels_patch": "gpuclass.k8s.publish",
    "validate_pod": "gpuclass.k8s.pods",
    "validate_pods": "gpuclass.k8s.pods",
    "PodValidation": "gpuclass.k8s.pods",
    "ContainerGpu": "gpuclass.k8s.pods",
    "admission_policy": "gpuclass.k8s.admission",
    "admission_review": "gpuclass.k8s.admission",
    "diagnose": "gpuclass.k8s.diagnose",
    "diagnose_nodes": "gpuclass.k8s.diagnose",
    "Diagnosis": "gpuclass.k8s.diagnose",
    "Finding": "gpuclass.k8s.diagnose",
    "parse_quantity": "gpuclass.k8s.quantity",
    # fleet audits
    "TextMatcher": "gpuclass.textmatch",
    "default_matcher": "gpuclass.textmatch",
    "audit_paths": "gpuclass.audit",
    "audit_records": "gpuclass.audit",
    "audit_frame": "gpuclass.audit",
    "audit_table": "gpuclass.audit",
    "AuditTable": "gpuclass.audit",
    "write_reports": "gpuclass.audit",
    "ServerReport": "gpuclass.audit",
    "AuditSummary": "gpuclass.audit",
    # fleet reports: figures and one HTML page
    "fleet_summary": "gpuclass.report",
    "FleetSummary": "gpuclass.report",
    "write_html_report": "gpuclass.report",
}

__all__ = sorted(_LAZY) + ["__version__"]


class _Package(types.ModuleType):
    """The package's module type: a public name that is also the name of a submodule
    (``classify``, the function, and ``gpuclass/classify.py``) stays the public object.

    Importing a submodule binds it as an attribute of its package; here that binding
    is dropped for such a name, so ``gpuclass.classify`` is the function whatever was
    imported before (``import gpuclass.classify``, ``from gpuclass.classify import
    ...``).  The module itself stays ``sys.modules["gpuclass.classify"]``
    (``importlib.import_module`` gives it).
    """

    def __setattr__(self, name: str, value) -> None:
        if (name in _LAZY and isinstance(value, types.ModuleType)
                and value.__name__ == f"{__name__}.{name}"):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


# submodules reached as attributes: gpuclass.dask.audit(...)
_SUBMODULES = ("dask",)


def __getattr__(name: str):
    if name in _SUBMODULES:
        value = importlib.import_module(f"gpuclass.{name}")
        globals()[name] = value
        return value
    modname = _LAZY.get(name)
    if modname is None:
        raise AttributeError(f"module 'gpuclass' has no attribute {name!r}")
    value = getattr(importlib.import_module(modname), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
