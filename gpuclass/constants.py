"""The platform's shared facts, written once: status codes, device flags, GPU classes,
rollup columns, label and resource names.

Every other module imports these names from here; the C kernels carry the same
numbers in ``_native/include/gpuclass_codes.h``, which ``tests/native/test_codes.py``
checks against this module.  Nothing here imports numpy or pydantic.

>>> GPU_LABEL, GPU_RESOURCE, STATUS_NAMES[SUPPORTED]
('autopilot.syself.com/gpu', 'nvidia.com/gpu', 'supported')
>>> flag_names(FLAG_PF | FLAG_BOOT_VGA)
['pf', 'boot_vga']
"""

from __future__ import annotations

__all__ = [
    "NOT_GPU", "SUPPORTED", "UNSUPPORTED", "COMPANION", "VIRTUAL_FUNCTION", "INVALID",
    "STATUS_NAMES", "FLAG_VF", "FLAG_PF", "FLAG_BOOT_VGA", "FLAG_INVALID", "FLAG_NAMES",
    "flag_names", "NO_ADDRESS", "R_CARDS", "R_SLICES", "R_UNSUPPORTED", "R_COMPANIONS",
    "R_VFS", "R_INVALID", "R_MODEL", "R_MIXED", "ROLLUP_COLUMNS", "MIXED_UNSUPPORTED",
    "MIXED_MODELS", "NVIDIA", "GPU_CLASSES", "COMPANION_CLASSES", "SLICES_PER_CARD",
    "GPU_LABEL", "GPU_RESOURCE", "GPU_RESOURCE_SHARED", "HOST_LABELS", "RUNTIME_CLASS",
    "GFD_PRODUCT", "GFD_COUNT", "GFD_REPLICAS", "GFD_SHARED_SUFFIX", "GPU_PRESENCE_LABELS",
    "LABEL_TRUE", "DEVICE_PLUGIN_CONFIG_LABEL", "DEVICE_PLUGIN_DEFAULT_CONFIG", "GPU_POOL_LABEL",
    "NFD_NODE_NAME_LABEL", "NFD_PCI_GPU_LABELS", "NFD_PCI_VENDOR_LABEL", "KERNEL_MODULES", "PROPRIETARY_ONLY_FAMILIES",
    "OPEN_ONLY_FAMILIES", "EITHER_MODULE_FAMILIES", "GPU_FAMILIES", "accepted_kernel_modules",
]

# -- per-device status (uint8 in every result array; part of the array API) ----------
NOT_GPU = 0           # not a GPU function (NIC, disk, the BMC's VGA, ...)
SUPPORTED = 1         # a GPU function of an allowlisted card: gets slices
UNSUPPORTED = 2       # a GPU function of a GPU vendor that no rule allows: a plain display adapter
COMPANION = 3         # another function (HDMI audio, USB, UCSI) of a GPU card
VIRTUAL_FUNCTION = 4  # an SR-IOV virtual function with a GPU class: never counted as a card
INVALID = 5           # a record the hardware source flagged as unreadable: kept, never counted
STATUS_NAMES = ("not-gpu", "supported", "unsupported", "companion", "virtual-function", "invalid")

# -- DeviceTable flag bits (uint32) ---------------------------------------------------
FLAG_VF = 1           # an SR-IOV virtual function (sysfs: a physfn link)
FLAG_PF = 2           # a physical function that offers virtual functions
FLAG_BOOT_VGA = 4     # the firmware's boot display
FLAG_INVALID = 8      # the source could not read this device: see DeviceTable.problems
FLAG_NAMES = ((FLAG_VF, "vf"), (FLAG_PF, "pf"), (FLAG_BOOT_VGA, "boot_vga"), (FLAG_INVALID, "invalid"))

# ``function`` of a row without a PCI address (a bare modalias, an unparsable entry).
NO_ADDRESS = 0xFF

# -- rollup: columns of the (groups, ROLLUP_COLUMNS) int64 matrix ---------------------
R_CARDS, R_SLICES, R_UNSUPPORTED, R_COMPANIONS, R_VFS, R_INVALID, R_MODEL, R_MIXED = range(8)
ROLLUP_COLUMNS = 8
MIXED_UNSUPPORTED = 1  # supported cards next to unsupported GPUs of a GPU vendor
MIXED_MODELS = 2       # more than one supported card model on the node

# -- the hardware the default policy is about -----------------------------------------
NVIDIA = 0x10DE
GPU_CLASSES = (0x0300, 0x0302)                 # VGA compatible, 3D controller
COMPANION_CLASSES = (0x0403, 0x0C03, 0x0C80)   # HDMI audio, USB, UCSI of a GPU card
SLICES_PER_CARD = 4                            # time-slicing replicas per physical card

# -- Kubernetes names -------------------------------------------------------------------
# The node label that marks a node with an allowlisted card (and attracts GPU pods).
GPU_LABEL = "autopilot.syself.com/gpu"
# The device plugin's extended resource; one slice per unit.
GPU_RESOURCE = "nvidia.com/gpu"
# The same resource as the plugin advertises it with renameByDefault: true.
GPU_RESOURCE_SHARED = "nvidia.com/gpu.shared"
# The label that puts a bare-metal host object into the GPU machine pool.
HOST_LABELS = {"hardware": "gpu"}
# The RuntimeClass of the Kata (VM-isolated) runtime that pods opt into.
RUNTIME_CLASS = "secure"
# The one value of GPU_LABEL that selects a node: label selectors compare values exactly,
# so "True" or "TRUE" is a different value that no nodeSelector for "true" matches.
LABEL_TRUE = "true"
# GPU Feature Discovery's labels, read when present to name the card and count it.  GFD
# sanitises the NVML product name (characters outside [A-Za-z0-9-_. ] dropped, runs of
# blanks joined by "-") and appends "-SHARED" while the resource is time-sliced under its
# own name (replicas > 1 without a rename).
GFD_PRODUCT = "nvidia.com/gpu.product"
GFD_COUNT = "nvidia.com/gpu.count"
GFD_REPLICAS = "nvidia.com/gpu.replicas"
GFD_SHARED_SUFFIX = "-SHARED"
# Labels of GFD and the GPU operator that say a node has an NVIDIA GPU at all (NFD's PCI
# labels below say so too, without naming the card).
GPU_PRESENCE_LABELS = (GFD_PRODUCT, GFD_COUNT, "nvidia.com/gpu.present")
# The node label that picks one of several configs in the device plugin's ConfigMap.
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
# The ConfigMap key of the default config: the name the device plugin's config-manager
# falls back to ("named" fallback, the Helm chart's default with "single") on a node
# without DEVICE_PLUGIN_CONFIG_LABEL, and the value the chart's config.default is given.
DEVICE_PLUGIN_DEFAULT_CONFIG = "default"
# The label that puts a Node into the GPU machine pool.  node-feature-discovery refuses
# kubernetes.io namespaces and a kubelet may not set node-role labels on itself: Cluster API
# copies it from the GPU MachineDeployment's machine template labels onto the Node.
GPU_POOL_LABEL = "node-role.kubernetes.io/gpu"
# The label NFD reads to tie a NodeFeature object to its node.
NFD_NODE_NAME_LABEL = "nfd.node.kubernetes.io/node-name"
# node-feature-discovery's PCI labels (defaults: deviceClassWhitelist 03, 0b40, 12;
# deviceLabelFields class, vendor) for an NVIDIA VGA and 3D controller, and the
# vendor-wide one of deviceLabelFields [vendor].
NFD_PCI_GPU_LABELS = ("feature.node.kubernetes.io/pci-0300_10de.present",
                      "feature.node.kubernetes.io/pci-0302_10de.present")
NFD_PCI_VENDOR_LABEL = "feature.node.kubernetes.io/pci-10de.present"

# -- NVIDIA's kernel-module support matrix, by the policy's family names -------------
KERNEL_MODULES = ("proprietary", "open")
# Families the open kernel modules do not drive (they start with Turing).
PROPRIETARY_ONLY_FAMILIES = frozenset({"kepler", "maxwell", "pascal", "volta"})
# Families only the open kernel modules drive (NVIDIA: Blackwell and every later one).
OPEN_ONLY_FAMILIES = frozenset({"blackwell", "rubin"})
# Turing and later until Blackwell: either flavour.
EITHER_MODULE_FAMILIES = frozenset({"turing", "ampere", "ada-lovelace", "hopper"})
# every NVIDIA GPU architecture a policy may name (its cards' ``family``): a name outside
# these is a typo, refused (``blackwel`` would otherwise pick no kernel-module rule)
GPU_FAMILIES = PROPRIETARY_ONLY_FAMILIES | OPEN_ONLY_FAMILIES | EITHER_MODULE_FAMILIES


def flag_names(flags: int) -> list[str]:
    """The names of the bits set in ``flags``."""
    return [name for bit, name in FLAG_NAMES if flags & bit]


def accepted_kernel_modules(family: str, preferred: str) -> tuple[str, ...]:
    """The kernel-module flavours that drive a card of ``family``, ``preferred`` first.

    A family the matrix does not name accepts only what its policy says.

    >>> accepted_kernel_modules("ada-lovelace", "open"), accepted_kernel_modules("pascal", "proprietary")
    (('open', 'proprietary'), ('proprietary',))
    """
    if family in PROPRIETARY_ONLY_FAMILIES:
        return ("proprietary",)
    if family in OPEN_ONLY_FAMILIES:
        return ("open",)
    if family in EITHER_MODULE_FAMILIES:
        return (preferred, *(m for m in KERNEL_MODULES if m != preferred))
    return (preferred,)
