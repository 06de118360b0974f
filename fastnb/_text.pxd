# The plain-C helpers of fastnb.text's native path (fastnb/_text.h), for the
# kernels of fastnb/_kernels_text.pxi.

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t


cdef extern from "_text.h":
    enum: FASTNB_CODE_POINTS
    enum: FASTNB_WORD
    enum: FASTNB_CHAR
    enum: FASTNB_CHAR_WB
    enum: FASTNB_COUNT
    enum: FASTNB_LOOKUP
    enum: FASTNB_HASH

    ctypedef struct fastnb_vocab:
        uint8_t* bytes
        int64_t n_bytes
        int64_t* start
        uint64_t* hash
        int64_t n_terms

    ctypedef struct fastnb_analyzer:
        int analyzer
        int action
        int min_chars
        int64_t min_n
        int64_t max_n
        const uint8_t* word
        const uint8_t* space
        const fastnb_vocab* stop
        const fastnb_vocab* fixed
        const int64_t* fixed_index
        int64_t n_features
        int alternate_sign

    ctypedef struct fastnb_text_state:
        fastnb_vocab vocab
        uint64_t* entries
        int64_t n_entries

    void fastnb_release_freed() noexcept nogil
    void fastnb_vocab_free(fastnb_vocab* v) noexcept nogil
    uint64_t fastnb_term_hash(const uint8_t* p, int64_t n) noexcept nogil
    int64_t fastnb_vocab_find(
        const fastnb_vocab* v, uint64_t h, const uint8_t* p, int64_t n
    ) noexcept nogil
    int64_t fastnb_vocab_add(
        fastnb_vocab* v, uint64_t h, const uint8_t* p, int64_t n
    ) noexcept nogil
    int32_t fastnb_murmur3_32(const uint8_t* p, int64_t n, uint32_t seed) noexcept nogil
    void fastnb_text_state_free(fastnb_text_state* s) noexcept nogil
    void fastnb_text_state_free_scratch(fastnb_text_state* s) noexcept nogil
    int fastnb_analyze(
        const fastnb_analyzer* a, fastnb_text_state* s, const uint8_t* doc, int64_t n,
        int lower,
    ) noexcept nogil
    void fastnb_sort_entries(
        uint64_t* entries, int64_t n, int key_bits, uint64_t* scratch
    ) noexcept nogil
    int64_t fastnb_sum_entries(
        uint64_t* entries, int64_t n, int key_bits, uint64_t* scratch
    ) noexcept nogil
    int fastnb_key_bits(int64_t n) noexcept nogil
    void fastnb_merge_terms(
        const fastnb_vocab* v, const int64_t* a, int64_t na, const int64_t* b,
        int64_t nb, int64_t* out,
    ) noexcept nogil
    void fastnb_sort_terms(
        const fastnb_vocab* v, int64_t* order, int64_t n, int64_t* scratch
    ) noexcept nogil
