/* Codes shared by the C kernels and Python: device statuses and flags, rollup
   columns, the matcher's table bits, and the pci.ids tokenizer's error, field and
   entry codes.

   The values are those of gpuclass.constants and gpuclass._native.contract;
   tests/native/test_codes.py reads this file and checks every one of them, so a
   change on either side that is not made on the other fails the suite. */
#ifndef GPUCLASS_CODES_H
#define GPUCLASS_CODES_H

/* per-device status (gpuclass.constants) */
enum {
    GPUCLASS_ST_NOT_GPU = 0,
    GPUCLASS_ST_SUPPORTED = 1,
    GPUCLASS_ST_UNSUPPORTED = 2,
    GPUCLASS_ST_COMPANION = 3,
    GPUCLASS_ST_VIRTUAL_FUNCTION = 4,
    GPUCLASS_ST_INVALID = 5
};

/* DeviceTable flag bits (gpuclass.constants) */
enum {
    GPUCLASS_FLAG_VF = 1,
    GPUCLASS_FLAG_PF = 2,
    GPUCLASS_FLAG_BOOT_VGA = 4,
    GPUCLASS_FLAG_INVALID = 8
};

/* rollup matrix columns and mixed-node bits (gpuclass.constants) */
enum {
    GPUCLASS_R_CARDS = 0,
    GPUCLASS_R_SLICES = 1,
    GPUCLASS_R_UNSUPPORTED = 2,
    GPUCLASS_R_COMPANIONS = 3,
    GPUCLASS_R_VFS = 4,
    GPUCLASS_R_INVALID = 5,
    GPUCLASS_R_MODEL = 6,
    GPUCLASS_R_MIXED = 7,
    GPUCLASS_ROLLUP_COLUMNS = 8,
    GPUCLASS_MIXED_UNSUPPORTED = 1,
    GPUCLASS_MIXED_MODELS = 2
};

/* bits of the matcher's vendor and class lookup tables (gpuclass._native.contract.match) */
enum {
    GPUCLASS_VL_GPU_VENDOR = 1,
    GPUCLASS_VL_RULES = 2,
    GPUCLASS_CL_GPU = 1,
    GPUCLASS_CL_COMPANION = 2
};

/* the rollup checks and adds its rows this many at a time; its first bad row is the first
   of the first chunk that has one; and why a row is bad (gpuclass._native.contract.match) */
enum { GPUCLASS_ROLLUP_CHUNK = 4096 };
enum {
    GPUCLASS_RU_STATUS = 0,    /* a status out of range */
    GPUCLASS_RU_GROUP = 1,     /* a group out of range */
    GPUCLASS_RU_OVERFLOW = 2,  /* a group's slices past the int32 range */
    GPUCLASS_RU_CARD = 3       /* a supported row's card outside [0, n_cards) */
};

/* pci.ids tokenizer: error codes, field codes, entry kinds (gpuclass._native.contract.pciids) */
enum {
    GPUCLASS_E_BAD_HEX = 1,
    GPUCLASS_E_WIDTH = 2,
    GPUCLASS_E_NO_NAME = 3,
    GPUCLASS_E_TABS = 4,
    GPUCLASS_E_DEVICE_FIRST = 5,
    GPUCLASS_E_SUBSYS_FIRST = 6,
    GPUCLASS_E_PROGIF_IN_CLASS = 7,
    GPUCLASS_E_DUPLICATE = 8,
    GPUCLASS_E_UTF8 = 9,
    GPUCLASS_E_TOO_LONG = 10,
    GPUCLASS_E_NUL = 11,
    GPUCLASS_E_GENSUB_VENDOR = 12,
    GPUCLASS_E_GENSUB_HEADER = 13,
    GPUCLASS_E_GENSUB_NEST = 14,
    GPUCLASS_E_IN_SKIPPED = 15
};
enum {
    GPUCLASS_F_NONE = 0,
    GPUCLASS_F_VENDOR = 1,
    GPUCLASS_F_DEVICE = 2,
    GPUCLASS_F_SUBVENDOR = 3,
    GPUCLASS_F_SUBDEVICE = 4,
    GPUCLASS_F_GSVENDOR = 5,
    GPUCLASS_F_GSDEVICE = 6,
    GPUCLASS_F_CLASS = 7,
    GPUCLASS_F_SUBCLASS = 8,
    GPUCLASS_F_PROGIF = 9
};
enum {
    GPUCLASS_K_VENDOR = 0,
    GPUCLASS_K_DEVICE = 1,
    GPUCLASS_K_SUBSYS = 2,
    GPUCLASS_K_GENSUB = 3,
    GPUCLASS_K_CLASS = 4,
    GPUCLASS_K_SUBCLASS = 5,
    GPUCLASS_K_PROGIF = 6,
    GPUCLASS_MAX_LINE = 1022
};

/* audit columns: absent, Arrow strings with int32 or int64 offsets, int64 cells, indices
   into a dictionary of such; and audit cells: a parsed ID, a missing one, a malformed one,
   a subsystem half (gpuclass.ids, contract.audit) */
enum {
    GPUCLASS_ABSENT = 0,
    GPUCLASS_STR32 = 1,
    GPUCLASS_STR64 = 2,
    GPUCLASS_INT = 3,
    GPUCLASS_DICT = 4
};
enum {
    GPUCLASS_CELL_OK = 0,
    GPUCLASS_CELL_MISSING = 1,
    GPUCLASS_CELL_BAD = 2,
    GPUCLASS_CELL_PAIR = 3
};
/* the most hex digits of each ID column (contract.audit.WIDTHS, in FIELDS order) */
enum {
    GPUCLASS_WIDTH_VENDOR = 4,
    GPUCLASS_WIDTH_DEVICE = 4,
    GPUCLASS_WIDTH_CLASS = 6,
    GPUCLASS_WIDTH_SUBVENDOR = 4,
    GPUCLASS_WIDTH_SUBDEVICE = 4
};

/* sysfs value matrix: columns of read_devices (gpuclass._native.contract.sysfs) */
enum {
    GPUCLASS_SV_VENDOR = 0,
    GPUCLASS_SV_DEVICE = 1,
    GPUCLASS_SV_SUBVENDOR = 2,
    GPUCLASS_SV_SUBDEVICE = 3,
    GPUCLASS_SV_HAS_SUBSYSTEM = 4,
    GPUCLASS_SV_CLASS_CODE = 5,
    GPUCLASS_SV_REVISION = 6,
    GPUCLASS_SV_FLAGS = 7,
    GPUCLASS_SV_NUMA_NODE = 8,
    GPUCLASS_SV_IOMMU_GROUP = 9,
    GPUCLASS_SV_SRIOV_TOTALVFS = 10,
    GPUCLASS_SV_SRIOV_NUMVFS = 11,
    GPUCLASS_SV_N = 12
};

/* sysfs attribute codes past any errno: what a file that is not a regular file is, and
   a number out of range (gpuclass._native.contract.sysfs) */
enum {
    GPUCLASS_AT_FIFO = 4097,
    GPUCLASS_AT_CHR = 4098,
    GPUCLASS_AT_BLK = 4099,
    GPUCLASS_AT_SOCK = 4100,
    GPUCLASS_AT_OTHER = 4101,
    GPUCLASS_AT_RANGE = 4102
};

/* sysfs optional attributes whose problems are flagged, in contract.sysfs.OPTIONAL order */
enum {
    GPUCLASS_OPT_SUBSYSTEM_VENDOR = 0,
    GPUCLASS_OPT_SUBSYSTEM_DEVICE = 1,
    GPUCLASS_OPT_REVISION = 2,
    GPUCLASS_OPT_NUMA_NODE = 3,
    GPUCLASS_OPT_SRIOV_TOTALVFS = 4,
    GPUCLASS_OPT_SRIOV_NUMVFS = 5,
    GPUCLASS_OPT_BOOT_VGA = 6,
    GPUCLASS_OPT_IOMMU_GROUP = 7,
    GPUCLASS_OPT_N = 8
};

#endif
