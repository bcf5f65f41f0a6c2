"""What type checkers see of ``gpuclass``: the public names with their real types.

At run time ``gpuclass/__init__.py`` imports each of them lazily, on first use; this stub
gives checkers the same names (``tests/test_types.py`` holds the two lists equal), so that
``mypy --strict`` sees ``gpuclass.inspect`` as the function it is and rejects a name the
package does not have.
"""

from .audit import AuditSummary as AuditSummary
from .audit import AuditTable as AuditTable
from .audit import ServerReport as ServerReport
from .audit import audit_frame as audit_frame
from .audit import audit_paths as audit_paths
from .audit import audit_records as audit_records
from .audit import audit_table as audit_table
from .audit import write_reports as write_reports
from .classify import classify as classify
from .classify import classify_table as classify_table
from .classify import summarize as summarize
from .db import PciDatabase as PciDatabase
from .db import bundled_path as bundled_path
from .db import default_database as default_database
from .db import system_pci_ids as system_pci_ids
from .devices import DeviceTable as DeviceTable
from .errors import CacheError as CacheError
from .errors import GpuclassError as GpuclassError
from .errors import InputError as InputError
from .errors import ManifestError as ManifestError
from .errors import PciIdsError as PciIdsError
from .errors import PolicyError as PolicyError
from .errors import QuantityError as QuantityError
from .errors import SkippedLine as SkippedLine
from .errors import SourceError as SourceError
from .k8s.admission import admission_policy as admission_policy
from .k8s.admission import admission_review as admission_review
from .k8s.diagnose import Diagnosis as Diagnosis
from .k8s.diagnose import Finding as Finding
from .k8s.diagnose import diagnose as diagnose
from .k8s.diagnose import diagnose_nodes as diagnose_nodes
from .k8s.labels import device_plugin_config as device_plugin_config
from .k8s.labels import device_plugin_configmap as device_plugin_configmap
from .k8s.labels import expected_gpus as expected_gpus
from .k8s.labels import expected_resources as expected_resources
from .k8s.labels import labels_patch as labels_patch
from .k8s.labels import node_decision as node_decision
from .k8s.labels import node_labels as node_labels
from .k8s.plugin_config import ConfigFinding as ConfigFinding
from .k8s.plugin_config import check_device_plugin_config as check_device_plugin_config
from .k8s.pods import ContainerGpu as ContainerGpu
from .k8s.pods import PodValidation as PodValidation
from .k8s.pods import validate_pod as validate_pod
from .k8s.pods import validate_pods as validate_pods
from .k8s.publish import host_labels_patch as host_labels_patch
from .k8s.publish import nfd_feature_file as nfd_feature_file
from .k8s.publish import node_feature as node_feature
from .k8s.quantity import parse_quantity as parse_quantity
from .models import DeviceClassification as DeviceClassification
from .models import GpuCard as GpuCard
from .models import NodeGpuSummary as NodeGpuSummary
from .policy import Policy as Policy
from .policy import compile_policy as compile_policy
from .policy.nodes import NodeDecision as NodeDecision
from .policy.nodes import decide_node as decide_node
from .provisioner import CpuReport as CpuReport
from .provisioner import Decision as Decision
from .provisioner import HardwareReport as HardwareReport
from .provisioner import InstallPlan as InstallPlan
from .provisioner import inspect as inspect
from .provisioner import plan as plan
from .report import FleetSummary as FleetSummary
from .report import fleet_summary as fleet_summary
from .report import write_html_report as write_html_report
from .sources.cpu import cpu_facts as cpu_facts
from .sources.lspci import parse_lspci as parse_lspci
from .sources.modalias import parse_modalias as parse_modalias
from .sources.sysfs import scan_sysfs as scan_sysfs
from .textmatch import TextMatcher as TextMatcher
from .textmatch import default_matcher as default_matcher

__version__: str
__all__: list[str]
