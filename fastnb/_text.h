/* Plain-C helpers of fastnb.text's native path (fastnb/_kernels_text.pxi),
 * declared for Cython in fastnb/_text.pxd.
 *
 * Documents come in as UTF-8 (as Python encodes a str; a lone surrogate as
 * the three bytes "surrogatepass" gives it), already decoded, lowercased
 * and stripped of accents in Python as scikit-learn's preprocessor does.
 * Here they are cut into the terms scikit-learn's analyzers make:
 *
 * - "word": the maximal runs of word characters (Python's \w: a code point
 *   str.isalnum() accepts, or "_"), those of at least min_chars code points
 *   (2 for the token pattern (?u)\b\w\w+\b, 1 for (?u)\b\w+\b); stop words
 *   left out; then n-grams of them joined by one space.
 * - "char": the text with each run of two or more whitespace code points
 *   (Python's \s) made one space, then its n-grams of code points.
 * - "char_wb": each word of the text split at whitespace, with a space
 *   before and after it, then its n-grams as scikit-learn's loop takes them
 *   (a word shorter than n given whole, once).
 *
 * Which code points are word characters and whitespace is read from two
 * bitmaps that Python makes from its own re module, so that they are those
 * of the running Python's Unicode database.
 *
 * A term is counted in a vocabulary (a hash table of byte strings, an id
 * each in the order they came), looked up in a fixed one, or hashed by
 * MurmurHash3 (x86, 32 bits) as scikit-learn's HashingVectorizer hashes a
 * term's UTF-8 bytes. Every function returns 0, or -1 when memory ran out.
 * No function reads outside the buffers it is given.
 */
#ifndef FASTNB_TEXT_H
#define FASTNB_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* ---- Code points -------------------------------------------------------- */

#define FASTNB_CODE_POINTS 0x110000

/* The code point at p (before end), and the bytes it takes, in *width. A
 * byte that does not start a whole sequence is read as itself (never
 * happens in what Python encodes; read safely all the same). Surrogates
 * (ED A0 80 .. ED BF BF) decode to themselves. */
static inline uint32_t fastnb_next_code_point(const uint8_t *p, const uint8_t *end,
                                              int *width)
{
    uint8_t b = p[0];
    if (b < 0x80 || end - p < 2) {
        *width = 1;
        return b;
    }
    if ((b & 0xE0) == 0xC0 && (p[1] & 0xC0) == 0x80) {
        *width = 2;
        return ((uint32_t) (b & 0x1F) << 6) | (p[1] & 0x3F);
    }
    if ((b & 0xF0) == 0xE0 && end - p >= 3 && (p[1] & 0xC0) == 0x80
        && (p[2] & 0xC0) == 0x80) {
        *width = 3;
        return ((uint32_t) (b & 0x0F) << 12) | ((uint32_t) (p[1] & 0x3F) << 6)
               | (p[2] & 0x3F);
    }
    if ((b & 0xF8) == 0xF0 && end - p >= 4 && (p[1] & 0xC0) == 0x80
        && (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80) {
        uint32_t c = ((uint32_t) (b & 0x07) << 18) | ((uint32_t) (p[1] & 0x3F) << 12)
                     | ((uint32_t) (p[2] & 0x3F) << 6) | (p[3] & 0x3F);
        if (c < FASTNB_CODE_POINTS) {
            *width = 4;
            return c;
        }
    }
    *width = 1;
    return b;
}

/* Whether code point c is set in a bitmap of FASTNB_CODE_POINTS bits. */
static inline int fastnb_in_bitmap(const uint8_t *bitmap, uint32_t c)
{
    return c < FASTNB_CODE_POINTS && ((bitmap[c >> 3] >> (c & 7)) & 1);
}

/* Give the memory freed by the threads' arenas back to the system (glibc
 * keeps what its threads free below its mmap threshold, which grows with
 * every large block freed: the analysis's scratch and tables otherwise stay
 * in the process's resident memory after the call). */
static inline void fastnb_release_freed(void)
{
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

/* ---- Growing arrays ----------------------------------------------------- */

/* Make room for `need` items of `size` bytes in *items (of *capacity):
 * 0, or -1 if memory ran out (the array then as it was). */
static inline int fastnb_reserve(void **items, int64_t *capacity, int64_t need,
                                 size_t size)
{
    if (need <= *capacity)
        return 0;
    int64_t grown = *capacity ? *capacity : 16;
    while (grown < need)
        grown *= 2;
    void *moved = realloc(*items, (size_t) grown * size);
    if (!moved)
        return -1;
    *items = moved;
    *capacity = grown;
    return 0;
}

/* ---- A vocabulary: byte strings, an id each ----------------------------- */

/* A 64-bit hash of n bytes: 8 at a time, each word mixed by a multiply,
 * then the length, then a finalizer that spreads every bit. */
static inline uint64_t fastnb_term_hash(const uint8_t *p, int64_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t) n;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ (w * 0xBF58476D1CE4E5B9ULL)) * 0x94D049BB133111EBULL;
        h ^= h >> 29;
    }
    uint64_t tail = 0;
    for (int64_t k = 0; i + k < n; k++)
        tail |= (uint64_t) p[i + k] << (8 * k);
    h = (h ^ (tail * 0xBF58476D1CE4E5B9ULL)) * 0x94D049BB133111EBULL;
    h ^= h >> 31;
    h *= 0xD6E8FEB86659FD93ULL;
    h ^= h >> 32;
    return h;
}

typedef struct {
    uint8_t *bytes;     /* the terms, one after another */
    int64_t n_bytes, bytes_capacity;
    int64_t *start;     /* term id -> its first byte; start[n_terms] = n_bytes */
    uint64_t *hash;     /* term id -> its hash */
    int64_t n_terms, terms_capacity;
    uint64_t *slots;    /* open addressing: the hash's high 32 bits and a
                           term id (the low 32 bits), or FASTNB_EMPTY */
    int64_t n_slots;    /* a power of two, at least twice the terms */
} fastnb_vocab;

#define FASTNB_EMPTY UINT64_MAX
/* A slot of term id with hash h: the high bits tell most other terms apart
 * without a read of the term's own arrays. */
#define FASTNB_SLOT(h, id) (((h) & 0xFFFFFFFF00000000ULL) | (uint64_t) (id))

static inline void fastnb_vocab_free(fastnb_vocab *v)
{
    free(v->bytes);
    free(v->start);
    free(v->hash);
    free(v->slots);
    memset(v, 0, sizeof(*v));
}

/* Whether the n bytes at p and q are the same (short terms: a loop, not
 * a call). */
static inline int fastnb_same_bytes(const uint8_t *p, const uint8_t *q, int64_t n)
{
    if (n > 32)
        return memcmp(p, q, (size_t) n) == 0;
    for (int64_t i = 0; i < n; i++)
        if (p[i] != q[i])
            return 0;
    return 1;
}

/* The id of the n bytes at p (hash h), or -1. */
static inline int64_t fastnb_vocab_find(const fastnb_vocab *v, uint64_t h,
                                        const uint8_t *p, int64_t n)
{
    if (!v->n_slots)
        return -1;
    uint64_t mask = (uint64_t) v->n_slots - 1;
    uint64_t tag = h & 0xFFFFFFFF00000000ULL;
    for (uint64_t s = h & mask;; s = (s + 1) & mask) {
        uint64_t slot = v->slots[s];
        if (slot == FASTNB_EMPTY)
            return -1;
        if ((slot & 0xFFFFFFFF00000000ULL) != tag)
            continue;
        int64_t id = (int64_t) (slot & 0xFFFFFFFFULL);
        if (v->start[id + 1] - v->start[id] == n
            && fastnb_same_bytes(v->bytes + v->start[id], p, n))
            return id;
    }
}

static inline int fastnb_vocab_rehash(fastnb_vocab *v, int64_t n_slots)
{
    uint64_t *slots = (uint64_t *) malloc((size_t) n_slots * sizeof(uint64_t));
    if (!slots)
        return -1;
    memset(slots, 0xFF, (size_t) n_slots * sizeof(uint64_t));
    uint64_t mask = (uint64_t) n_slots - 1;
    for (int64_t id = 0; id < v->n_terms; id++) {
        uint64_t s = v->hash[id] & mask;
        while (slots[s] != FASTNB_EMPTY)
            s = (s + 1) & mask;
        slots[s] = FASTNB_SLOT(v->hash[id], id);
    }
    free(v->slots);
    v->slots = slots;
    v->n_slots = n_slots;
    return 0;
}

/* Room for n_terms terms' ids (start has one more entry). */
static inline int fastnb_vocab_reserve(fastnb_vocab *v, int64_t n_terms)
{
    if (n_terms + 1 <= v->terms_capacity)
        return 0;
    int64_t grown = v->terms_capacity ? 2 * v->terms_capacity : 64;
    while (grown < n_terms + 1)
        grown *= 2;
    int64_t *start = (int64_t *) realloc(v->start, (size_t) grown * sizeof(int64_t));
    if (!start)
        return -1;
    v->start = start;
    uint64_t *hash = (uint64_t *) realloc(v->hash, (size_t) grown * sizeof(uint64_t));
    if (!hash)
        return -1;
    v->hash = hash;
    v->terms_capacity = grown;
    return 0;
}

/* The id of the n bytes at p (hash h), added as a new term if absent:
 * the id, or -1 if memory ran out (the vocabulary then as it was). */
static inline int64_t fastnb_vocab_add(fastnb_vocab *v, uint64_t h, const uint8_t *p,
                                       int64_t n)
{
    int64_t id = fastnb_vocab_find(v, h, p, n);
    if (id >= 0)
        return id;
    if (2 * (v->n_terms + 1) > v->n_slots
        && fastnb_vocab_rehash(v, v->n_slots ? 2 * v->n_slots : 64) < 0)
        return -1;
    if (fastnb_reserve((void **) &v->bytes, &v->bytes_capacity, v->n_bytes + n, 1) < 0
        || fastnb_vocab_reserve(v, v->n_terms + 1) < 0)
        return -1;
    id = v->n_terms;
    if (id >= (int64_t) 0xFFFFFFFE)
        return -1; /* an id must fit a slot's 32 bits */
    v->start[id] = v->n_bytes;
    memcpy(v->bytes + v->n_bytes, p, (size_t) n);
    v->n_bytes += n;
    v->start[id + 1] = v->n_bytes;
    v->hash[id] = h;
    v->n_terms = id + 1;
    uint64_t mask = (uint64_t) v->n_slots - 1;
    uint64_t s = h & mask;
    while (v->slots[s] != FASTNB_EMPTY)
        s = (s + 1) & mask;
    v->slots[s] = FASTNB_SLOT(h, id);
    return id;
}

/* ---- MurmurHash3, x86, 32 bits (Austin Appleby's public-domain design) -- */

static inline uint32_t fastnb_rotl32(uint32_t x, int r)
{
    return (x << r) | (x >> (32 - r));
}

/* The hash of n bytes with the given seed, as a signed 32-bit number (as
 * scikit-learn's murmurhash3_bytes_s32). */
static inline int32_t fastnb_murmur3_32(const uint8_t *p, int64_t n, uint32_t seed)
{
    const uint32_t c1 = 0xCC9E2D51u, c2 = 0x1B873593u;
    uint32_t h = seed;
    int64_t blocks = n / 4;
    for (int64_t i = 0; i < blocks; i++) {
        uint32_t k;
        memcpy(&k, p + 4 * i, 4); /* little-endian hosts: x86-64, aarch64 */
        k *= c1;
        k = fastnb_rotl32(k, 15);
        k *= c2;
        h ^= k;
        h = fastnb_rotl32(h, 13);
        h = h * 5 + 0xE6546B64u;
    }
    const uint8_t *tail = p + 4 * blocks;
    uint32_t k = 0;
    switch (n & 3) {
    case 3:
        k ^= (uint32_t) tail[2] << 16; /* fall through */
    case 2:
        k ^= (uint32_t) tail[1] << 8; /* fall through */
    case 1:
        k ^= tail[0];
        k *= c1;
        k = fastnb_rotl32(k, 15);
        k *= c2;
        h ^= k;
    }
    h ^= (uint32_t) n;
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return (int32_t) h;
}

/* ---- Analyzers ---------------------------------------------------------- */

enum { FASTNB_WORD = 0, FASTNB_CHAR = 1, FASTNB_CHAR_WB = 2 };
/* What becomes of a term: counted into a vocabulary that grows, looked up
 * in a fixed one, or hashed. */
enum { FASTNB_COUNT = 0, FASTNB_LOOKUP = 1, FASTNB_HASH = 2 };

typedef struct {
    int analyzer;              /* FASTNB_WORD, _CHAR, _CHAR_WB */
    int action;                /* FASTNB_COUNT, _LOOKUP, _HASH */
    int min_chars;             /* "word": a token's least code points */
    int64_t min_n, max_n;      /* the n-gram range */
    const uint8_t *word;       /* bitmap: Python's \w */
    const uint8_t *space;      /* bitmap: Python's \s */
    const fastnb_vocab *stop;  /* "word": the stop words, or NULL */
    const fastnb_vocab *fixed; /* FASTNB_LOOKUP: the vocabulary */
    const int64_t *fixed_index;/* FASTNB_LOOKUP: a term id's column */
    int64_t n_features;        /* FASTNB_HASH: columns */
    int alternate_sign;        /* FASTNB_HASH */
} fastnb_analyzer;

/* An entry of a document: a key (a term id or a column) in the high 32
 * bits, a value (a count, or a sum of signs, as a 32-bit two's complement
 * number) in the low 32. */
#define FASTNB_ENTRY(key, value) (((uint64_t) (key) << 32) | (uint32_t) (int32_t) (value))
#define FASTNB_ENTRY_KEY(entry) ((int64_t) ((entry) >> 32))
#define FASTNB_ENTRY_VALUE(entry) ((int32_t) (uint32_t) (entry))

/* One thread's state: its vocabulary (FASTNB_COUNT), its scratch, and the
 * entries of the documents it analyzed: a term id and its count, or for
 * FASTNB_HASH a column and +-1 a term (added up a document at a time). */
typedef struct {
    fastnb_vocab vocab;
    uint8_t *lowered;          /* a document lowercased (ASCII) */
    int64_t lowered_capacity;
    uint8_t *text;             /* a document made over (char, char_wb) */
    int64_t text_capacity;
    int64_t *cuts;             /* code point or token boundaries */
    int64_t cuts_capacity;
    uint8_t *gram;             /* a word n-gram, joined */
    int64_t gram_capacity;
    int32_t *seen;             /* term id -> its entry in the document + 1 */
    int64_t seen_capacity;
    uint64_t *entries;
    int64_t n_entries, entries_capacity;
    int64_t doc_first;         /* the document's first entry */
} fastnb_text_state;

/* Free what only the analysis of documents needs (its scratch and the
 * places of a document's terms), keeping the vocabulary and entries. */
static inline void fastnb_text_state_free_scratch(fastnb_text_state *s)
{
    free(s->lowered);
    free(s->text);
    free(s->cuts);
    free(s->gram);
    free(s->seen);
    s->lowered = s->text = s->gram = NULL;
    s->cuts = NULL;
    s->seen = NULL;
    s->lowered_capacity = s->text_capacity = s->cuts_capacity = 0;
    s->gram_capacity = s->seen_capacity = 0;
}

static inline void fastnb_text_state_free(fastnb_text_state *s)
{
    fastnb_vocab_free(&s->vocab);
    free(s->lowered);
    free(s->text);
    free(s->cuts);
    free(s->gram);
    free(s->seen);
    free(s->entries);
    memset(s, 0, sizeof(*s));
}

static inline int fastnb_add_entry(fastnb_text_state *s, int64_t key, int32_t value)
{
    if (fastnb_reserve((void **) &s->entries, &s->entries_capacity, s->n_entries + 1,
                       sizeof(uint64_t))
        < 0)
        return -1;
    s->entries[s->n_entries++] = FASTNB_ENTRY(key, value);
    return 0;
}

/* Count one term of the document being analyzed. */
static inline int fastnb_term(const fastnb_analyzer *a, fastnb_text_state *s,
                              const uint8_t *p, int64_t n)
{
    int64_t id;
    if (a->action == FASTNB_HASH) {
        int32_t h = fastnb_murmur3_32(p, n, 0);
        int64_t column;
        if (h == INT32_MIN)
            column = (2147483647 - (a->n_features - 1)) % a->n_features;
        else
            column = (h < 0 ? -(int64_t) h : (int64_t) h) % a->n_features;
        return fastnb_add_entry(s, column, (a->alternate_sign && h < 0) ? -1 : 1);
    }
    uint64_t h = fastnb_term_hash(p, n);
    if (a->action == FASTNB_LOOKUP) {
        id = fastnb_vocab_find(a->fixed, h, p, n);
        if (id < 0)
            return 0;
        id = a->fixed_index[id];
    } else {
        id = fastnb_vocab_add(&s->vocab, h, p, n);
        if (id < 0)
            return -1;
    }
    /* An entry a term id in each document: seen[id] - 1 is its place in
     * the document that saw the id last (another document's place is told
     * by the key found there, which is then not id). */
    int64_t had = s->seen_capacity;
    if (fastnb_reserve((void **) &s->seen, &s->seen_capacity, id + 1, sizeof(int32_t))
        < 0)
        return -1;
    if (s->seen_capacity > had)
        memset(s->seen + had, 0, (size_t) (s->seen_capacity - had) * sizeof(int32_t));
    int32_t at = s->seen[id];
    if (at > 0 && s->doc_first + at - 1 < s->n_entries
        && FASTNB_ENTRY_KEY(s->entries[s->doc_first + at - 1]) == id) {
        s->entries[s->doc_first + at - 1]++; /* its count, in the low bits */
        return 0;
    }
    if (fastnb_add_entry(s, id, 1) < 0)
        return -1;
    s->seen[id] = (int32_t) (s->n_entries - s->doc_first);
    return 0;
}

static inline int fastnb_reserve_bytes(uint8_t **p, int64_t *capacity, int64_t need)
{
    return fastnb_reserve((void **) p, capacity, need, 1);
}

static inline int fastnb_reserve_cuts(fastnb_text_state *s, int64_t need)
{
    return fastnb_reserve((void **) &s->cuts, &s->cuts_capacity, need, sizeof(int64_t));
}

/* "word": tokens, stop words out, n-grams. */
static inline int fastnb_analyze_words(const fastnb_analyzer *a, fastnb_text_state *s,
                                       const uint8_t *doc, int64_t n)
{
    const uint8_t *end = doc + n;
    int64_t n_tokens = 0;
    /* cuts: each token's first byte and end, two a token */
    const uint8_t *p = doc;
    while (p < end) {
        int width;
        uint32_t c = fastnb_next_code_point(p, end, &width);
        if (!fastnb_in_bitmap(a->word, c)) {
            p += width;
            continue;
        }
        const uint8_t *first = p;
        int64_t chars = 0;
        while (p < end) {
            c = fastnb_next_code_point(p, end, &width);
            if (!fastnb_in_bitmap(a->word, c))
                break;
            p += width;
            chars++;
        }
        if (chars < a->min_chars)
            continue;
        if (a->stop
            && fastnb_vocab_find(a->stop, fastnb_term_hash(first, p - first), first,
                                 p - first)
                   >= 0)
            continue;
        if (fastnb_reserve_cuts(s, 2 * n_tokens + 2) < 0)
            return -1;
        s->cuts[2 * n_tokens] = first - doc;
        s->cuts[2 * n_tokens + 1] = p - doc;
        n_tokens++;
    }
    int64_t min_n = a->min_n;
    if (min_n == 1) {
        for (int64_t t = 0; t < n_tokens; t++)
            if (fastnb_term(a, s, doc + s->cuts[2 * t], s->cuts[2 * t + 1] - s->cuts[2 * t])
                < 0)
                return -1;
        min_n = 2;
    }
    for (int64_t g = min_n; g <= a->max_n && g <= n_tokens; g++) {
        for (int64_t t = 0; t + g <= n_tokens; t++) {
            int64_t length = g - 1;
            for (int64_t k = t; k < t + g; k++)
                length += s->cuts[2 * k + 1] - s->cuts[2 * k];
            if (fastnb_reserve_bytes(&s->gram, &s->gram_capacity, length) < 0)
                return -1;
            int64_t at = 0;
            for (int64_t k = t; k < t + g; k++) {
                if (k > t)
                    s->gram[at++] = ' ';
                int64_t size = s->cuts[2 * k + 1] - s->cuts[2 * k];
                memcpy(s->gram + at, doc + s->cuts[2 * k], (size_t) size);
                at += size;
            }
            if (fastnb_term(a, s, s->gram, length) < 0)
                return -1;
        }
    }
    return 0;
}

/* The document with each run of two or more whitespace code points made one
 * space, into s->text (its length in *length); s->cuts[i] the first byte
 * of its code point i, s->cuts[n_chars] its length (in *n_chars). */
static inline int fastnb_spaces_joined(const fastnb_analyzer *a, fastnb_text_state *s,
                                       const uint8_t *doc, int64_t n, int64_t *length,
                                       int64_t *n_chars)
{
    const uint8_t *end = doc + n;
    if (fastnb_reserve_bytes(&s->text, &s->text_capacity, n) < 0
        || fastnb_reserve_cuts(s, n + 1) < 0)
        return -1;
    int64_t at = 0, chars = 0;
    const uint8_t *p = doc;
    while (p < end) {
        int width;
        uint32_t c = fastnb_next_code_point(p, end, &width);
        if (fastnb_in_bitmap(a->space, c)) {
            const uint8_t *run = p + width;
            int64_t run_chars = 1;
            while (run < end) {
                int w;
                uint32_t d = fastnb_next_code_point(run, end, &w);
                if (!fastnb_in_bitmap(a->space, d))
                    break;
                run += w;
                run_chars++;
            }
            if (run_chars >= 2) {
                s->cuts[chars++] = at;
                s->text[at++] = ' ';
                p = run;
                continue;
            }
        }
        s->cuts[chars++] = at;
        memcpy(s->text + at, p, (size_t) width);
        at += width;
        p += width;
    }
    s->cuts[chars] = at;
    *length = at;
    *n_chars = chars;
    return 0;
}

/* "char": n-grams of code points of the text, spaces joined. */
static inline int fastnb_analyze_chars(const fastnb_analyzer *a, fastnb_text_state *s,
                                       const uint8_t *doc, int64_t n)
{
    int64_t length, n_chars;
    if (fastnb_spaces_joined(a, s, doc, n, &length, &n_chars) < 0)
        return -1;
    int64_t min_n = a->min_n;
    if (min_n == 1) {
        for (int64_t i = 0; i < n_chars; i++)
            if (fastnb_term(a, s, s->text + s->cuts[i], s->cuts[i + 1] - s->cuts[i]) < 0)
                return -1;
        min_n = 2;
    }
    for (int64_t g = min_n; g <= a->max_n && g <= n_chars; g++)
        for (int64_t i = 0; i + g <= n_chars; i++)
            if (fastnb_term(a, s, s->text + s->cuts[i], s->cuts[i + g] - s->cuts[i]) < 0)
                return -1;
    return 0;
}

/* "char_wb": each word of the text (split at whitespace), padded with a
 * space at each end, cut in n-grams as scikit-learn's loop cuts it. */
static inline int fastnb_analyze_word_chars(const fastnb_analyzer *a,
                                            fastnb_text_state *s, const uint8_t *doc,
                                            int64_t n)
{
    const uint8_t *end = doc + n;
    /* A padded word goes to s->text, its code points' first bytes to cuts. */
    if (fastnb_reserve_bytes(&s->text, &s->text_capacity, n + 2) < 0
        || fastnb_reserve_cuts(s, n + 3) < 0)
        return -1;
    const uint8_t *p = doc;
    while (p < end) {
        int width;
        uint32_t c = fastnb_next_code_point(p, end, &width);
        if (fastnb_in_bitmap(a->space, c)) {
            p += width;
            continue;
        }
        int64_t at = 0, chars = 0;
        s->cuts[chars++] = at;
        s->text[at++] = ' ';
        while (p < end) {
            c = fastnb_next_code_point(p, end, &width);
            if (fastnb_in_bitmap(a->space, c))
                break;
            s->cuts[chars++] = at;
            memcpy(s->text + at, p, (size_t) width);
            at += width;
            p += width;
        }
        s->cuts[chars++] = at;
        s->text[at++] = ' ';
        s->cuts[chars] = at;
        /* chars: the padded word's code points (w_len) */
        for (int64_t g = a->min_n; g <= a->max_n; g++) {
            int64_t offset = 0;
            int64_t stop = g < chars ? g : chars;
            if (fastnb_term(a, s, s->text, s->cuts[stop]) < 0)
                return -1;
            while (offset + g < chars) {
                offset++;
                if (fastnb_term(a, s, s->text + s->cuts[offset],
                                s->cuts[offset + g] - s->cuts[offset])
                    < 0)
                    return -1;
            }
            if (offset == 0)
                break;
        }
    }
    return 0;
}

/* Analyze one document (n bytes of UTF-8 at doc) into s's entries; with
 * lower, a document of ASCII that is lowercased first (A-Z to a-z, which is
 * all Python's str.lower() does to ASCII). */
static inline int fastnb_analyze(const fastnb_analyzer *a, fastnb_text_state *s,
                                 const uint8_t *doc, int64_t n, int lower)
{
    s->doc_first = s->n_entries;
    if (lower) {
        if (fastnb_reserve((void **) &s->lowered, &s->lowered_capacity, n, 1) < 0)
            return -1;
        for (int64_t i = 0; i < n; i++)
            s->lowered[i] = doc[i] + 32 * (doc[i] - 'A' < 26u);
        doc = s->lowered;
    }
    if (a->analyzer == FASTNB_CHAR)
        return fastnb_analyze_chars(a, s, doc, n);
    if (a->analyzer == FASTNB_CHAR_WB)
        return fastnb_analyze_word_chars(a, s, doc, n);
    return fastnb_analyze_words(a, s, doc, n);
}

/* ---- Sorting a document's entries --------------------------------------- */

/* Sort n entries by key, keeping the order of equal keys: insertion for a
 * few, else a radix sort of the key's bits (key_bits of them, at most 32)
 * a byte at a time through scratch (room for n). */
static inline void fastnb_sort_entries(uint64_t *entries, int64_t n, int key_bits,
                                       uint64_t *scratch)
{
    if (n <= 48) {
        for (int64_t i = 1; i < n; i++) {
            uint64_t e = entries[i];
            int64_t j = i;
            while (j > 0 && (entries[j - 1] >> 32) > (e >> 32)) {
                entries[j] = entries[j - 1];
                j--;
            }
            entries[j] = e;
        }
        return;
    }
    uint64_t *from = entries, *to = scratch;
    for (int shift = 32; shift < 32 + key_bits; shift += 8) {
        int64_t counts[257] = {0};
        for (int64_t i = 0; i < n; i++)
            counts[((from[i] >> shift) & 0xFF) + 1]++;
        for (int d = 0; d < 256; d++)
            counts[d + 1] += counts[d];
        for (int64_t i = 0; i < n; i++)
            to[counts[(from[i] >> shift) & 0xFF]++] = from[i];
        uint64_t *swap = from;
        from = to;
        to = swap;
    }
    if (from != entries)
        memcpy(entries, from, (size_t) n * sizeof(uint64_t));
}

/* Sort entries by key, and add up the values of one key (kept, even if
 * their sum is 0, as scipy's sum_duplicates keeps it): the entries left. */
static inline int64_t fastnb_sum_entries(uint64_t *entries, int64_t n, int key_bits,
                                         uint64_t *scratch)
{
    fastnb_sort_entries(entries, n, key_bits, scratch);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++) {
        if (kept && (entries[kept - 1] >> 32) == (entries[i] >> 32)) {
            int32_t sum = FASTNB_ENTRY_VALUE(entries[kept - 1])
                          + FASTNB_ENTRY_VALUE(entries[i]);
            entries[kept - 1] = FASTNB_ENTRY(entries[i] >> 32, sum);
        } else {
            entries[kept++] = entries[i];
        }
    }
    return kept;
}

/* The bits a key below n needs (1 at least). */
static inline int fastnb_key_bits(int64_t n)
{
    int bits = 1;
    while (bits < 32 && ((int64_t) 1 << bits) < n)
        bits++;
    return bits;
}

/* ---- The order of terms ------------------------------------------------- */

/* Whether term a comes before term b of v in the order of their bytes (that
 * of Python's str comparison of the terms: UTF-8 keeps code point order). */
static inline int fastnb_term_before(const fastnb_vocab *v, int64_t a, int64_t b)
{
    int64_t na = v->start[a + 1] - v->start[a], nb = v->start[b + 1] - v->start[b];
    int c = memcmp(v->bytes + v->start[a], v->bytes + v->start[b],
                   (size_t) (na < nb ? na : nb));
    return c < 0 || (c == 0 && na < nb);
}

/* out[0 .. na + nb) = the term ids a[0 .. na) and b[0 .. nb), each sorted
 * by their terms, merged (a's first where two are equal). */
static inline void fastnb_merge_terms(const fastnb_vocab *v, const int64_t *a,
                                      int64_t na, const int64_t *b, int64_t nb,
                                      int64_t *out)
{
    int64_t i = 0, j = 0, k = 0;
    while (i < na && j < nb)
        out[k++] = fastnb_term_before(v, b[j], a[i]) ? b[j++] : a[i++];
    while (i < na)
        out[k++] = a[i++];
    while (j < nb)
        out[k++] = b[j++];
}

/* order[0 .. n) (term ids) sorted by their terms: a merge sort through
 * scratch (room for n). */
static inline void fastnb_sort_terms(const fastnb_vocab *v, int64_t *order, int64_t n,
                                     int64_t *scratch)
{
    if (n <= 16) {
        for (int64_t i = 1; i < n; i++) {
            int64_t t = order[i], j = i;
            while (j > 0 && fastnb_term_before(v, t, order[j - 1])) {
                order[j] = order[j - 1];
                j--;
            }
            order[j] = t;
        }
        return;
    }
    int64_t half = n / 2;
    fastnb_sort_terms(v, order, half, scratch);
    fastnb_sort_terms(v, order + half, n - half, scratch);
    fastnb_merge_terms(v, order, half, order + half, n - half, scratch);
    memcpy(order, scratch, (size_t) n * sizeof(int64_t));
}

#endif /* FASTNB_TEXT_H */
