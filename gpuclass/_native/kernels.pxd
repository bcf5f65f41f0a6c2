# Cython declarations of the C in gpuclass/_native/include/*.h, cimported by the
# kernels that gpuclass/_core.pyx includes.  Codes come from gpuclass_codes.h, which
# tests/native/test_codes.py checks against gpuclass.constants and the contracts.

from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t


cdef extern from "gpuclass_common.h":
    void GPUCLASS_PREFETCH(const void* p) noexcept nogil


cdef extern from "gpuclass_hex.h":
    const signed char* gpuclass_hex


cdef extern from "gpuclass_codes.h":
    enum:
        ST_NOT_GPU "GPUCLASS_ST_NOT_GPU"
        ST_SUPPORTED "GPUCLASS_ST_SUPPORTED"
        ST_UNSUPPORTED "GPUCLASS_ST_UNSUPPORTED"
        ST_COMPANION "GPUCLASS_ST_COMPANION"
        ST_VIRTUAL_FUNCTION "GPUCLASS_ST_VIRTUAL_FUNCTION"
        ST_INVALID "GPUCLASS_ST_INVALID"
        FLAG_VF "GPUCLASS_FLAG_VF"
        FLAG_PF "GPUCLASS_FLAG_PF"
        FLAG_BOOT_VGA "GPUCLASS_FLAG_BOOT_VGA"
        FLAG_INVALID "GPUCLASS_FLAG_INVALID"
        ROLLUP_COLUMNS "GPUCLASS_ROLLUP_COLUMNS"
        CL_GPU "GPUCLASS_CL_GPU"
        CL_COMPANION "GPUCLASS_CL_COMPANION"
        E_BAD_HEX "GPUCLASS_E_BAD_HEX"
        E_WIDTH "GPUCLASS_E_WIDTH"
        E_NO_NAME "GPUCLASS_E_NO_NAME"
        E_TABS "GPUCLASS_E_TABS"
        E_DEVICE_FIRST "GPUCLASS_E_DEVICE_FIRST"
        E_SUBSYS_FIRST "GPUCLASS_E_SUBSYS_FIRST"
        E_PROGIF_IN_CLASS "GPUCLASS_E_PROGIF_IN_CLASS"
        E_UTF8 "GPUCLASS_E_UTF8"
        E_TOO_LONG "GPUCLASS_E_TOO_LONG"
        E_NUL "GPUCLASS_E_NUL"
        E_GENSUB_VENDOR "GPUCLASS_E_GENSUB_VENDOR"
        E_GENSUB_HEADER "GPUCLASS_E_GENSUB_HEADER"
        E_GENSUB_NEST "GPUCLASS_E_GENSUB_NEST"
        E_IN_SKIPPED "GPUCLASS_E_IN_SKIPPED"
        F_NONE "GPUCLASS_F_NONE"
        F_VENDOR "GPUCLASS_F_VENDOR"
        F_DEVICE "GPUCLASS_F_DEVICE"
        F_SUBVENDOR "GPUCLASS_F_SUBVENDOR"
        F_SUBDEVICE "GPUCLASS_F_SUBDEVICE"
        F_GSVENDOR "GPUCLASS_F_GSVENDOR"
        F_GSDEVICE "GPUCLASS_F_GSDEVICE"
        F_CLASS "GPUCLASS_F_CLASS"
        F_SUBCLASS "GPUCLASS_F_SUBCLASS"
        F_PROGIF "GPUCLASS_F_PROGIF"
        K_VENDOR "GPUCLASS_K_VENDOR"
        K_DEVICE "GPUCLASS_K_DEVICE"
        K_SUBSYS "GPUCLASS_K_SUBSYS"
        K_GENSUB "GPUCLASS_K_GENSUB"
        K_CLASS "GPUCLASS_K_CLASS"
        K_SUBCLASS "GPUCLASS_K_SUBCLASS"
        K_PROGIF "GPUCLASS_K_PROGIF"
        MAX_LINE "GPUCLASS_MAX_LINE"
        SV_N "GPUCLASS_SV_N"
        OPT_N "GPUCLASS_OPT_N"


cdef extern from "gpuclass_pciids.h":
    Py_ssize_t gpuclass_line_end(const uint8_t* s, Py_ssize_t n, int* high) noexcept nogil


cdef extern from "gpuclass_keyindex.h":
    ctypedef struct Slot32 "gpuclass_slot32":
        uint32_t key
        int32_t pos
    int32_t gpuclass_probe32(const Slot32* t, uint64_t mask, uint64_t h, uint32_t k) noexcept nogil
    uint64_t keyed_hash "gpuclass_keyed_hash"(uint64_t k, uint64_t s0, uint64_t s1) noexcept nogil
    int32_t gpuclass_bsearch(const uint64_t* keys, Py_ssize_t n, uint64_t k) noexcept nogil
    enum:
        MAX_RUN "GPUCLASS_MAX_RUN"


cdef extern from "gpuclass_match.h":
    ctypedef struct MatchCtx "gpuclass_match_ctx":
        const uint8_t* layout
        int n_keys
        uint16_t keys[8]
        int n_vendor_keys
        uint16_t vendor_keys[8]
        const uint32_t* dev_keys
        Py_ssize_t n_dev
        const int32_t* sub_offsets
        const uint32_t* sub_keys
        const int16_t* sub_card
    ctypedef struct MatchIO "gpuclass_match_io":
        Py_ssize_t n
        const uint16_t* vendor
        const uint16_t* device
        const uint16_t* subvendor
        const uint16_t* subdevice
        const uint8_t* has_sub
        const uint32_t* class_code
        const uint32_t* flags
        uint8_t* status
        int16_t* card
        uint16_t* slices
    Py_ssize_t gpuclass_match(const MatchCtx* t, const MatchIO* io, int sub_rules,
                              int slots) noexcept nogil
    Py_ssize_t gpuclass_match_parts(const MatchCtx* t, const MatchIO* io, int sub_rules,
                                    int slots, int parts) noexcept nogil
    void gpuclass_match_init() noexcept nogil
    int64_t gpuclass_layout_pairs(const uint16_t* vendor_block, int64_t* used, int32_t* remap) noexcept nogil
    void gpuclass_layout_fill(const uint16_t* vendor_block, const uint16_t* dev_lut, const int64_t* used,
                              const int32_t* remap, int64_t blocks, uint8_t* L) noexcept nogil
    void* gpuclass_match_out_alloc(size_t n) noexcept nogil
    enum:
        L_VB "GPUCLASS_L_VB"
        L_CLASS "GPUCLASS_L_CLASS"
        L_OUT_G "GPUCLASS_L_OUT_G"
        L_OUT_S "GPUCLASS_L_OUT_S"
        L_FB "GPUCLASS_L_FB"
        L_SL "GPUCLASS_L_SL"
        L_DEV "GPUCLASS_L_DEV"


cdef extern from "gpuclass_sysfs.h":
    ctypedef struct SysDev "gpuclass_sysdev":
        int64_t v[12]
        int dir_code
        int code[3]
        int raw_len[3]
        char raw[3][64]
        int ocode[8]
        int oraw_len[8]
        char oraw[8][32]
        Py_ssize_t driver_len
        char driver[256]
    void gpuclass_read_devices(int dir_fd, const int* chain, int depth, const char** rel,
                               const char** name, SysDev* devs, Py_ssize_t n, int threads) noexcept nogil
    int GPUCLASS_SYSFS_C


cdef extern from "gpuclass_rollup.h":
    Py_ssize_t gpuclass_rollup(Py_ssize_t n, const uint8_t* status, const int16_t* card,
                               const uint16_t* slices, const void* group, int gw, int64_t n_groups,
                               int32_t* out, int32_t* counts, int n_cards, int* what) noexcept nogil
    int64_t gpuclass_merge_runs(int64_t n_runs, const int64_t* group, const int32_t* totals,
                                const int32_t* counts, int n_cards, int64_t n_groups, int32_t* out,
                                int32_t* out_counts) noexcept nogil
    enum:
        RU_STATUS "GPUCLASS_RU_STATUS"
        RU_GROUP "GPUCLASS_RU_GROUP"
        RU_OVERFLOW "GPUCLASS_RU_OVERFLOW"
        RU_CARD "GPUCLASS_RU_CARD"


cdef extern from "gpuclass_column.h":
    enum:
        COL_ABSENT "GPUCLASS_ABSENT"
        COL_STR32 "GPUCLASS_STR32"
        COL_STR64 "GPUCLASS_STR64"
        COL_INT "GPUCLASS_INT"
        COL_DICT "GPUCLASS_DICT"
    ctypedef struct AuditCol "gpuclass_col":
        int kind
        const uint8_t* data
        int64_t data_len
        const void* off32
        const void* off64
        const void* ints
        const uint8_t* valid
        int64_t voff
        const void* index
        int index_size
        const AuditCol* dictionary
        int64_t dictionary_len


cdef extern from "gpuclass_cell.h":
    int gpuclass_parse_cells(const AuditCol* c, int64_t n, int maxdigits, int is_class, uint8_t* st,
                             uint32_t* val) noexcept nogil


cdef extern from "gpuclass_keys.h":
    ctypedef struct KeySetC "gpuclass_keyset":
        uint64_t* hash
        int64_t* pos
        int64_t cap
        int64_t n
    int64_t gpuclass_keyset_add(KeySetC* k, const uint64_t* h, int64_t n, int64_t base, int64_t* found,
                                int64_t* prior) noexcept nogil
    void gpuclass_key_hashes(const AuditCol* c, int64_t n, uint64_t seed, uint64_t* out) noexcept nogil
    int gpuclass_text_rising(const AuditCol* c, int64_t n) noexcept nogil
    int64_t gpuclass_take_bytes(const AuditCol* c, const int64_t* idx, int64_t m) noexcept nogil
    void gpuclass_take_text(const AuditCol* c, const int64_t* idx, int64_t m, int64_t* off,
                            uint8_t* data) noexcept nogil


cdef extern from "gpuclass_vec.h":
    ctypedef struct AuditVec "gpuclass_vec":
        void* p
        int64_t n
        int64_t cap
        size_t item
    void* gpuclass_vec_push(AuditVec* v) noexcept nogil


cdef extern from "gpuclass_audit.h":
    ctypedef struct AuditOut "gpuclass_audit_out":
        AuditVec starts
        AuditVec totals
        AuditVec counts
        AuditVec problems
        AuditVec unsupported
        AuditVec nameless
    int gpuclass_audit(const MatchCtx* t, int sub_rules, const AuditCol* cols, int64_t n,
                       int n_cards, AuditOut* o, int64_t* bad) noexcept nogil


cdef extern from "gpuclass_parquet.h":
    int64_t gpuclass_pq_hybrid_room(int64_t n, int width) noexcept nogil
    int64_t gpuclass_pq_hybrid(const uint8_t* idx, int64_t n, int width, uint8_t* out) noexcept nogil
    void gpuclass_pq_delta_plan(const int64_t* v, int64_t m, int64_t* least, int* width) noexcept nogil
    int64_t gpuclass_pq_delta_room(int64_t m, int width) noexcept nogil
    int64_t gpuclass_pq_delta(const int64_t* v, int64_t m, int64_t least, int width, uint8_t* out) noexcept nogil
    int gpuclass_pq_dictionary64(const int64_t* v, int64_t n, int64_t* distinct, int* n_distinct,
                                 uint8_t* index) noexcept nogil
    int gpuclass_pq_dictionary32(const int32_t* v, int64_t n, int64_t* distinct, int* n_distinct,
                                 uint8_t* index) noexcept nogil
    void gpuclass_pq_text_bounds(const uint8_t* data, const int64_t* starts, int64_t n, int64_t* lo,
                                 int64_t* hi) noexcept nogil


cdef extern from "gpuclass_csv.h":
    int64_t gpuclass_csv_split(const uint8_t* text, int64_t n, int64_t pos, int32_t width,
                               const int32_t* slot, int32_t k, int64_t limit, int64_t room,
                               int32_t* offsets, uint8_t* data, int64_t cap, int64_t* span,
                               int64_t* end) noexcept nogil
