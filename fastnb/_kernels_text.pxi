# Included by _kernels.pyx: fastnb.text's native path. Documents are read
# as UTF-8 under the GIL (each str's own, kept by Python), then analyzed
# without it (fastnb/_text.h), a run of documents of about equal bytes a
# thread, each thread into its own vocabulary and entries; the
# vocabularies are then added to the call's, thread after thread, so that
# a term's id is where it first came in the documents' order, whatever the
# number of threads. A vocabulary lives in a capsule, which frees it.

cdef const char* VOCABULARY = b"fastnb.text.vocabulary"

cdef enum:
    # Documents of more bytes than this give the memory their analysis
    # freed back to the system (fastnb_release_freed); fewer are not worth
    # the time.
    RELEASE_BYTES = 1 << 22


cdef void _free_vocabulary(object capsule) noexcept:
    cdef fastnb_vocab* v = <fastnb_vocab*> PyCapsule_GetPointer(capsule, VOCABULARY)
    if v != NULL:
        fastnb_vocab_free(v)
        free(v)


cdef fastnb_vocab* _vocabulary(object capsule) except NULL:
    """The vocabulary a capsule of text_vocabulary holds."""
    return <fastnb_vocab*> PyCapsule_GetPointer(capsule, VOCABULARY)


def text_vocabulary(const uint8_t[::1] terms, const int64_t[::1] starts):
    """A vocabulary (a capsule) of the terms terms[starts[i]:starts[i + 1]],
    ids in their order (a term given twice keeps its first id); empty for
    starts of one entry. starts must not decrease, from 0 to at most
    len(terms)."""
    cdef Py_ssize_t n = starts.shape[0] - 1
    cdef Py_ssize_t i
    if n < 0 or starts[0] != 0 or starts[n] > terms.shape[0]:
        raise ValueError("starts must run from 0 to at most len(terms)")
    for i in range(n):
        if starts[i + 1] < starts[i]:
            raise ValueError("starts must not decrease")
    cdef fastnb_vocab* v = <fastnb_vocab*> calloc(1, sizeof(fastnb_vocab))
    if v == NULL:
        raise MemoryError()
    capsule = PyCapsule_New(v, VOCABULARY, _free_vocabulary)
    cdef const uint8_t* base = &terms[0] if terms.shape[0] else NULL
    cdef const uint8_t* p
    for i in range(n):
        p = base + starts[i] if base != NULL else <const uint8_t*> b""
        if fastnb_vocab_add(
            v, fastnb_term_hash(p, starts[i + 1] - starts[i]), p,
            starts[i + 1] - starts[i],
        ) < 0:
            raise MemoryError()
    return capsule


def text_term_strs(capsule, const int64_t[::1] order):
    """The terms order names (ids of the vocabulary) as str, each decoded
    from its UTF-8 as Python's "surrogatepass" decodes it."""
    cdef fastnb_vocab* v = _vocabulary(capsule)
    cdef Py_ssize_t i, term
    cdef list strs = [None] * order.shape[0]
    for i in range(order.shape[0]):
        term = order[i]
        if not 0 <= term < v.n_terms:
            raise IndexError(f"order holds {term}, not an id of the vocabulary")
        strs[i] = PyUnicode_DecodeUTF8(
            <const char*> v.bytes + v.start[term], v.start[term + 1] - v.start[term],
            b"surrogatepass",
        )
    return strs


def text_order(capsule, int n_threads):
    """The ids of a vocabulary's terms in the order of their bytes (Python's
    order of the terms as str): a run of ids a thread sorted, then the runs
    merged two at a time, each pair on a thread (terms are distinct, so
    the order is the same whatever the number of threads)."""
    cdef fastnb_vocab* v = _vocabulary(capsule)
    cdef Py_ssize_t n = v.n_terms
    order = np.arange(n, dtype=np.int64)
    cdef int64_t[::1] ids = order
    cdef int64_t[::1] other = np.empty(max(n, 1), dtype=np.int64)
    cdef int64_t* source = &ids[0] if n else NULL
    cdef int64_t* target = &other[0]
    cdef int64_t* swap
    cdef Py_ssize_t runs = max(1, min(n_threads, n // 1024))
    cdef intp_t[::1] bounds = np.array(
        [n * r // runs for r in range(runs + 1)], dtype=np.intp
    )
    cdef Py_ssize_t r, width, left, middle, right
    if n < 2:
        return order
    for r in prange(runs, nogil=True, schedule="static", num_threads=n_threads):
        fastnb_sort_terms(v, source + bounds[r], bounds[r + 1] - bounds[r],
                          target + bounds[r])
    width = 1
    while width < runs:
        for r in prange(
            (runs + 2 * width - 1) // (2 * width), nogil=True, schedule="static",
            num_threads=n_threads,
        ):
            left = bounds[2 * width * r]
            middle = bounds[min(2 * width * r + width, runs)]
            right = bounds[min(2 * width * r + 2 * width, runs)]
            fastnb_merge_terms(
                v, source + left, middle - left, source + middle, right - middle,
                target + left,
            )
        swap = source
        source = target
        target = swap
        width = 2 * width
    if source != &ids[0]:
        memcpy(&ids[0], source, n * sizeof(int64_t))
    return order


cdef inline Py_ssize_t _first_document(
    const int64_t[::1] ends, Py_ssize_t n, int64_t share
) noexcept nogil:
    """The first document i whose bytes before it (ends[i - 1]) reach share
    (ends: each document's end in the documents' bytes one after another)."""
    cdef Py_ssize_t low = 0, high = n, middle
    while low < high:
        middle = (low + high) // 2
        if (ends[middle - 1] if middle > 0 else 0) < share:
            low = middle + 1
        else:
            high = middle
    return low


cdef int _analyze_run(
    const fastnb_analyzer* a,
    fastnb_text_state* state,
    const intp_t[::1] address,
    const int64_t[::1] size,
    const uint8_t[::1] lower,
    Py_ssize_t first,
    Py_ssize_t stop,
    int key_bits,
    int64_t[::1] doc_entries,
) noexcept nogil:
    """Analyze documents first .. stop - 1 into state: 0, or -1 if memory ran
    out. Looked-up and hashed terms are finished a document at a time:
    their entries sorted by column (of key_bits bits; hashed ones added
    up)."""
    cdef Py_ssize_t d
    cdef int64_t before, n
    cdef uint64_t* scratch = NULL
    cdef int64_t scratch_room = 0
    for d in range(first, stop):
        before = state.n_entries
        if fastnb_analyze(
            a, state, <const uint8_t*> address[d], size[d],
            lower[d] if lower.shape[0] else 0,
        ) < 0:
            free(scratch)
            return -1
        n = state.n_entries - before
        if a.action != FASTNB_COUNT and n > 0:
            if n > scratch_room:
                free(scratch)
                scratch_room = 2 * n
                scratch = <uint64_t*> malloc(scratch_room * sizeof(uint64_t))
                if scratch == NULL:
                    return -1
            if a.action == FASTNB_HASH:
                n = fastnb_sum_entries(state.entries + before, n, key_bits, scratch)
                state.n_entries = before + n
            else:
                fastnb_sort_entries(state.entries + before, n, key_bits, scratch)
        doc_entries[d] = n
    free(scratch)
    return 0


def text_analyze(
    documents,
    const uint8_t[::1] lower,
    int analyzer,
    int action,
    int min_chars,
    int64_t min_n,
    int64_t max_n,
    const uint8_t[::1] word,
    const uint8_t[::1] space,
    stop_words,
    fixed,
    const int64_t[::1] fixed_index,
    int64_t n_features,
    bint alternate_sign,
    vocabulary,
    int n_threads,
):
    """Analyze documents into entries: (doc_ptr, entries, surrogates), the
    entries of document i at doc_ptr[i] .. doc_ptr[i + 1] - 1 (uint64, a key
    in the high 32 bits and a value, int32, in the low 32), and the
    documents that had no UTF-8 form (a list of their places).

    documents: a list of str; or a tuple (data, offsets, replaced) of
    documents of UTF-8 one after another (as an Arrow string column holds
    them: document i is data[offsets[i]:offsets[i + 1]]), but for those
    replaced names (a dict of their places and str).

    action FASTNB_COUNT: each term's id in `vocabulary` (a capsule of
    text_vocabulary, which gains the new terms) and its count, in the order
    the document brings them. FASTNB_LOOKUP: each term of `fixed` (a
    vocabulary; others are left out) as fixed_index[its id] and its count,
    sorted. FASTNB_HASH: each term's column of n_features by MurmurHash3 and
    the sum of its signs (+1, or -1 for a negative hash with
    alternate_sign), sorted, as scikit-learn's FeatureHasher adds them
    (a sum of 0 kept). stop_words: a vocabulary, or None. word and space:
    bitmaps of FASTNB_CODE_POINTS bits, Python's \\w and \\s. A str with no
    UTF-8 form (a lone surrogate) is read as "surrogatepass" encodes it.
    lower: empty, or a flag a document: lowercase it (ASCII only) first.
    """
    cdef Py_ssize_t n, i
    cdef const uint8_t[::1] data
    cdef const int64_t[::1] offsets
    cdef dict replaced = {}
    if isinstance(documents, list):
        n = len(documents)
    else:
        data, offsets, replaced = documents
        n = offsets.shape[0] - 1
        if n < 0 or offsets[0] < 0 or offsets[n] > data.shape[0]:
            raise ValueError("offsets must lie within the data")
        for i in range(n):
            if offsets[i + 1] < offsets[i]:
                raise ValueError("offsets must not decrease")
    cdef Py_ssize_t bitmap_bytes = FASTNB_CODE_POINTS // 8
    if word.shape[0] < bitmap_bytes or space.shape[0] < bitmap_bytes:
        raise ValueError(f"word and space must have {bitmap_bytes} bytes")
    if not 1 <= min_n <= max_n:
        raise ValueError("the n-gram range must have 1 <= min_n <= max_n")
    if lower.shape[0] not in (0, n):
        raise ValueError("lower must be empty or have a flag a document")
    if action == FASTNB_HASH and n_features < 1:
        raise ValueError("n_features must be at least 1")
    cdef fastnb_analyzer a
    a.analyzer = analyzer
    a.action = action
    a.min_chars = min_chars
    a.min_n = min_n
    a.max_n = max_n
    a.word = &word[0]
    a.space = &space[0]
    a.stop = _vocabulary(stop_words) if stop_words is not None else NULL
    a.fixed = _vocabulary(fixed) if fixed is not None else NULL
    a.fixed_index = &fixed_index[0] if fixed_index.shape[0] else NULL
    a.n_features = n_features
    a.alternate_sign = alternate_sign
    if action == FASTNB_LOOKUP and (
        a.fixed == NULL or fixed_index.shape[0] < a.fixed.n_terms
    ):
        raise ValueError("a lookup needs a vocabulary and a column for each term")
    cdef fastnb_vocab* counted = (
        _vocabulary(vocabulary) if action == FASTNB_COUNT else NULL
    )
    cdef int key_bits = fastnb_key_bits(
        n_features if action == FASTNB_HASH
        else (np.max(fixed_index) + 1 if fixed_index.shape[0] else 1)
    )
    # Each document's UTF-8, kept alive by `documents` (or `encoded`).
    cdef intp_t[::1] address = np.empty(n, dtype=np.intp)
    cdef int64_t[::1] size = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] ends = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] doc_entries = np.empty(n, dtype=np.int64)
    cdef Py_ssize_t length
    cdef int64_t total = 0
    cdef const char* utf8
    cdef char* raw
    encoded = []
    surrogates = []
    for i in range(n):
        if isinstance(documents, list) or i in replaced:
            document = documents[i] if isinstance(documents, list) else replaced[i]
            if not isinstance(document, str):
                raise TypeError(f"document {i} is {type(document).__name__}, not str")
            try:
                utf8 = PyUnicode_AsUTF8AndSize(document, &length)
            except UnicodeEncodeError:
                document = document.encode("utf-8", "surrogatepass")
                encoded.append(document)
                surrogates.append(i)
                PyBytes_AsStringAndSize(document, &raw, &length)
                utf8 = raw
        else:
            length = offsets[i + 1] - offsets[i]
            utf8 = b""
            if length:
                utf8 = <const char*> &data[offsets[i]]
        address[i] = <intp_t> utf8
        size[i] = length
        total += length
        ends[i] = total
    cdef intp_t[::1] first = np.empty(n_threads + 1, dtype=np.intp)
    cdef Py_ssize_t t
    first[0] = 0
    for t in range(1, n_threads):
        first[t] = max(first[t - 1], _first_document(ends, n, total * t // n_threads))
    first[n_threads] = n
    cdef fastnb_text_state* states = <fastnb_text_state*> calloc(
        n_threads, sizeof(fastnb_text_state)
    )
    if states == NULL:
        raise MemoryError()
    cdef int64_t** maps = <int64_t**> calloc(n_threads, sizeof(int64_t*))
    cdef uint8_t[::1] failed = np.zeros(n_threads, dtype=np.uint8)
    cdef Py_ssize_t k
    cdef bint taken
    cdef int64_t gid
    cdef fastnb_vocab* local
    try:
        if maps == NULL:
            raise MemoryError()
        for t in prange(
            n_threads, nogil=True, schedule="static", num_threads=n_threads
        ):
            failed[t] = _analyze_run(
                &a, &states[t], address, size, lower, first[t], first[t + 1],
                key_bits, doc_entries,
            ) < 0
        if np.any(failed):
            raise MemoryError()
        for t in range(n_threads):
            fastnb_text_state_free_scratch(&states[t])
        if action == FASTNB_COUNT:
            # Each thread's terms into the call's vocabulary, in thread order:
            # the first thread's are the vocabulary itself if it was empty.
            taken = counted.n_terms == 0
            if taken:
                fastnb_vocab_free(counted)
                counted[0] = states[0].vocab
                memset(&states[0].vocab, 0, sizeof(fastnb_vocab))
            for t in range(n_threads):
                if t == 0 and taken:
                    continue  # (maps[0] left NULL: its ids are the vocabulary's)
                local = &states[t].vocab
                maps[t] = <int64_t*> malloc(max(local.n_terms, 1) * sizeof(int64_t))
                if maps[t] == NULL:
                    raise MemoryError()
                for k in range(local.n_terms):
                    gid = fastnb_vocab_add(
                        counted, local.hash[k], local.bytes + local.start[k],
                        local.start[k + 1] - local.start[k],
                    )
                    if gid < 0:
                        raise MemoryError()
                    maps[t][k] = gid
                fastnb_vocab_free(local)
        doc_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(doc_entries, out=doc_ptr[1:])
        entries = np.empty(doc_ptr[n], dtype=np.uint64)
        _gather_entries(states, maps, first, doc_ptr, entries, n_threads)
        return doc_ptr, entries, surrogates
    finally:
        for t in range(n_threads):
            fastnb_text_state_free(&states[t])
            if maps != NULL:
                free(maps[t])
        free(states)
        free(maps)
        if total > RELEASE_BYTES:
            fastnb_release_freed()


cdef int _gather_entries(
    fastnb_text_state* states,
    int64_t** maps,
    const intp_t[::1] first,
    const int64_t[::1] doc_ptr,
    uint64_t[::1] entries,
    int n_threads,
) except -1:
    """Each thread's entries into entries, where its documents' are (their
    keys through maps[t], local id -> the call's, where maps[t] is set)."""
    cdef Py_ssize_t t, e, at
    cdef uint64_t entry
    for t in prange(n_threads, nogil=True, schedule="static", num_threads=n_threads):
        at = doc_ptr[first[t]]
        for e in range(states[t].n_entries):
            entry = states[t].entries[e]
            if maps[t] != NULL:
                entry = (
                    (<uint64_t> maps[t][entry >> 32] << 32) | (entry & 0xFFFFFFFFU)
                )
            entries[at + e] = entry
        # (Freed as soon as copied: the entries are not held twice longer.)
        free(states[t].entries)
        states[t].entries = NULL
        states[t].n_entries = 0
    return 0


def entries_to_columns(
    uint64_t[::1] entries,
    const int32_t[::1] column,
    int32_t[::1] indices,
    int n_threads,
):
    """indices[e] = column[the key of entry e], and entry e made its value,
    in place, as an int64 (so that the entries are the matrix's int64 data
    without another copy); a chunk of VALUE_CHUNK a task. Every key must be
    below len(column)."""
    cdef Py_ssize_t n = entries.shape[0]
    cdef Py_ssize_t n_columns = column.shape[0]
    cdef Py_ssize_t b, e
    cdef int64_t key
    if indices.shape[0] != n:
        raise ValueError("indices must have an index an entry")
    for b in prange(
        (n + VALUE_CHUNK - 1) // VALUE_CHUNK, nogil=True, schedule="static",
        num_threads=n_threads,
    ):
        for e in range(b * VALUE_CHUNK, min((b + 1) * VALUE_CHUNK, n)):
            key = entries[e] >> 32
            if key >= n_columns:  # (never, for the entries of a vocabulary)
                key = 0
            indices[e] = column[key]
            entries[e] = <uint64_t> (<int64_t> <int32_t> (entries[e] & 0xFFFFFFFFU))
    return 0


def sort_row_entries(
    const int64_t[::1] indptr,
    uint64_t[::1] entries,
    int64_t n_keys,
    int n_threads,
):
    """Sort each row's entries (entries[indptr[i]:indptr[i + 1]], keys below
    n_keys in their high 32 bits) by key, in place, keeping the order of
    equal keys; a run of rows of about equal entries a thread. Each row's
    offsets must lie within the entries."""
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t t, i, start, stop, longest = 0
    cdef int key_bits = fastnb_key_bits(n_keys)
    cdef uint64_t* scratch
    for i in range(n):
        if not 0 <= indptr[i] <= indptr[i + 1] <= entries.shape[0]:
            raise ValueError(f"row {i} has offsets outside the entries")
        longest = max(longest, indptr[i + 1] - indptr[i])
    cdef intp_t[::1] first = np.empty(n_threads + 1, dtype=np.intp)
    cdef uint8_t[::1] failed = np.zeros(n_threads, dtype=np.uint8)
    for t in range(n_threads):
        first[t] = _first_document(indptr[1:], n, indptr[n] * t // n_threads)
    first[n_threads] = n
    for t in prange(n_threads, nogil=True, schedule="static", num_threads=n_threads):
        scratch = <uint64_t*> malloc(max(longest, 1) * sizeof(uint64_t))
        if scratch == NULL:
            failed[t] = 1
            continue
        for i in range(first[t], first[t + 1]):
            start = indptr[i]
            stop = indptr[i + 1]
            if stop - start > 1:
                fastnb_sort_entries(&entries[start], stop - start, key_bits, scratch)
        free(scratch)
    if np.any(failed):
        raise MemoryError()
