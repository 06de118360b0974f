/* Included by _rows.h: CategoricalNB's code readers and row helpers (scores,
 * the checks and counts of a fit). */
#ifndef FASTNB_ROWS_CATEGORICAL_H
#define FASTNB_ROWS_CATEGORICAL_H

/* A category code as scoring reads it: 0, with *code set, for a whole
 * number >= 0 (a float at or past 2^63 gives INT64_MAX, past every table);
 * 1 for a code that is negative, fractional, NaN or infinite. */
static inline int fastnb_code_i32(int32_t x, int64_t* code)
{
    *code = x;
    return x < 0;
}
static inline int fastnb_code_i64(int64_t x, int64_t* code)
{
    *code = x;
    return x < 0;
}
static inline int fastnb_code_f64(double x, int64_t* code)
{
    if (!(x >= 0.0) || x == (double) INFINITY)
        return 1;
    if (x >= 0x1p63) {
        *code = INT64_MAX;
        return 0;
    }
    *code = (int64_t) x;
    return (double) *code != x;
}
static inline int fastnb_code_f32(float x, int64_t* code)
{
    return fastnb_code_f64((double) x, code);
}

/* Whether a code is one a fit takes: a whole number from 0 to limit - 1
 * (limit at most 2^53, so that a double holds it exactly). */
#define FASTNB_FIT_INT_CODE(v, limit) (((v) >= 0) & ((int64_t) (v) < (limit)))
#define FASTNB_FIT_FLOAT_CODE(v, limit)                                       \
    (((double) (v) >= 0.0) & ((double) (v) < (double) (limit))                \
     & fastnb_whole((double) (v)))
/* The same, or NaN (a missing value, for a model with missing="ignore"). */
#define FASTNB_FIT_FLOAT_CODE_OR_NAN(v, limit)                                \
    (FASTNB_FIT_FLOAT_CODE(v, limit) | ((v) != (v)))


/* scores[k] += sum_j table[offsets[j] + code_j, k] for a dense row of
 * category codes x (elements x_stride apart), read by CODE: feature j owns
 * the table rows offsets[j] .. offsets[j + 1] - 1 (of n_rows), the last of
 * them for codes never seen in training, which every larger code is
 * clamped to. offsets has n_offsets entries. Returns 1, leaving scores
 * half done, at the first code that is not a whole number >= 0 (NaN and
 * infinities are not). With MISSING (a compile-time 1, the variants of a
 * model with missing="ignore"), a NaN is a missing value: its feature adds
 * no term. */
#define FASTNB_CATEGORICAL_DENSE_ROW(NAME, T, CODE, MISSING)                  \
    static inline int NAME(                                                   \
        const T* x, Py_ssize_t x_stride, Py_ssize_t n_features,               \
        const Py_ssize_t* offsets, Py_ssize_t n_offsets, const double* table, \
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores)               \
    {                                                                         \
        FASTNB_CHECK(n_features < n_offsets);                                 \
        for (Py_ssize_t k0 = 0; k0 < n_padded; k0 += FASTNB_BLOCK) {          \
            FASTNB_ZERO8(acc);                                                \
            for (Py_ssize_t j = 0; j < n_features; j++) {                     \
                const Py_ssize_t unseen = offsets[j + 1] - offsets[j] - 1;    \
                int64_t code;                                                 \
                if (CODE(x[j * x_stride], &code) != 0) {                      \
                    if (MISSING && x[j * x_stride] != x[j * x_stride])        \
                        continue;                                             \
                    return 1;                                                 \
                }                                                             \
                FASTNB_CHECK(unseen >= 0);                                    \
                const Py_ssize_t row =                                        \
                    offsets[j]                                                \
                    + (code > unseen ? unseen : (Py_ssize_t) code);           \
                FASTNB_CHECK(offsets[j] >= 0 && row < n_rows);                \
                FASTNB_AXPY8(acc, 1.0, table + row * n_padded + k0);          \
            }                                                                 \
            for (int k = 0; k < FASTNB_BLOCK; k++)                            \
                scores[k0 + k] += FASTNB_LANE(acc, k);                        \
        }                                                                     \
        return 0;                                                             \
    }

/* The same for a sparse row of category codes, stored at data[start:stop]
 * with their features at indices[start:stop] (nnz stored values in all),
 * each of n_features features not stored having code 0. With every_feature
 * 0, scores hold the all-zeros row's already, and each stored code adds its
 * term less code 0's (table row offsets[j] + code less row offsets[j]; an
 * explicit 0 adds nothing): the caller's choice where every code-0 term is
 * finite. With every_feature 1, every feature's term is added in feature
 * order, the row's indices being strictly increasing (canonical format).
 * Returns 1, leaving scores half done, at the first stored code that is not
 * a whole number >= 0. With MISSING, a stored NaN is a missing value, whose
 * feature has no term: with every_feature 0 it takes away the code-0 term
 * that the all-zeros row's scores hold. */
#define FASTNB_CATEGORICAL_CSR_ROW(NAME, T, I, CODE, MISSING)                 \
    static inline int NAME(                                                   \
        const T* data, const I* indices, Py_ssize_t start, Py_ssize_t stop,   \
        Py_ssize_t nnz, Py_ssize_t n_features, const Py_ssize_t* offsets,     \
        Py_ssize_t n_offsets, const double* table, Py_ssize_t n_rows,         \
        Py_ssize_t n_padded, int every_feature, double* scores)               \
    {                                                                         \
        FASTNB_CHECK(0 <= start && start <= stop && stop <= nnz);             \
        FASTNB_CHECK(n_features < n_offsets);                                 \
        for (Py_ssize_t k0 = 0; k0 < n_padded; k0 += FASTNB_BLOCK) {          \
            FASTNB_ZERO8(acc);                                                \
            Py_ssize_t p = start;                                             \
            const Py_ssize_t n_terms = every_feature ? n_features : stop - p; \
            for (Py_ssize_t q = 0; q < n_terms; q++) {                        \
                const Py_ssize_t j =                                          \
                    every_feature ? q : (Py_ssize_t) indices[p];              \
                int64_t code = 0;                                             \
                int absent = 0;                                               \
                if (p < stop && (Py_ssize_t) indices[p] == j) {               \
                    if (CODE(data[p], &code) != 0) {                          \
                        if (!(MISSING && data[p] != data[p]))                 \
                            return 1;                                         \
                        absent = 1;                                           \
                    }                                                         \
                    p++;                                                      \
                }                                                             \
                FASTNB_CHECK(0 <= j && j < n_features);                       \
                const Py_ssize_t unseen = offsets[j + 1] - offsets[j] - 1;    \
                FASTNB_CHECK(unseen >= 0);                                    \
                if (MISSING && absent) {                                      \
                    FASTNB_CHECK(offsets[j] >= 0 && offsets[j] < n_rows);     \
                    if (!every_feature)                                       \
                        FASTNB_AXPY8(acc, -1.0, table + offsets[j] * n_padded \
                                                    + k0);                    \
                    continue;                                                 \
                }                                                             \
                const Py_ssize_t row =                                        \
                    offsets[j]                                                \
                    + (code > unseen ? unseen : (Py_ssize_t) code);           \
                FASTNB_CHECK(offsets[j] >= 0 && row < n_rows);                \
                if (every_feature)                                            \
                    FASTNB_AXPY8(acc, 1.0, table + row * n_padded + k0);      \
                else if (code != 0)                                           \
                    FASTNB_DIFF8(acc, table + row * n_padded + k0,            \
                                 table + offsets[j] * n_padded + k0);         \
            }                                                                 \
            FASTNB_CHECK(p == stop);                                          \
            for (int k = 0; k < FASTNB_BLOCK; k++)                            \
                scores[k0 + k] += FASTNB_LANE(acc, k);                        \
        }                                                                     \
        return 0;                                                             \
    }

#if defined(_MSC_VER)
#define FASTNB_RESTRICT __restrict
#else
#define FASTNB_RESTRICT restrict
#endif

/* Checks the codes of n_rows rows of n_features for a fit (rows row_stride
 * elements apart from x, a row's codes x_stride apart), each with VALID
 * against limit, and raises highest[j] to the largest code of feature j.
 * Returns -1 if every code is valid, else the flat position, row *
 * n_features + j, of the first that is not (highest then means nothing).
 * One pass that vectorises (for contiguous rows), and a second, in order,
 * only when a code is bad. */
#define FASTNB_CATEGORICAL_CHECK_ROWS(NAME, T, VALID)                         \
    static inline Py_ssize_t NAME(                                            \
        const T* FASTNB_RESTRICT x, Py_ssize_t row_stride,                    \
        Py_ssize_t x_stride, Py_ssize_t n_rows, Py_ssize_t n_features,        \
        int64_t limit, T* FASTNB_RESTRICT highest)                            \
    {                                                                         \
        int bad = 0;                                                          \
        for (Py_ssize_t i = 0; i < n_rows; i++) {                             \
            const T* FASTNB_RESTRICT row = x + i * row_stride;                \
            if (x_stride == 1) {                                              \
                for (Py_ssize_t j = 0; j < n_features; j++) {                 \
                    bad |= !VALID(row[j], limit);                             \
                    highest[j] = row[j] > highest[j] ? row[j] : highest[j];   \
                }                                                             \
            } else {                                                          \
                for (Py_ssize_t j = 0; j < n_features; j++) {                 \
                    const T v = row[j * x_stride];                            \
                    bad |= !VALID(v, limit);                                  \
                    highest[j] = v > highest[j] ? v : highest[j];             \
                }                                                             \
            }                                                                 \
        }                                                                     \
        if (!bad)                                                             \
            return -1;                                                        \
        for (Py_ssize_t i = 0; i < n_rows; i++)                               \
            for (Py_ssize_t j = 0; j < n_features; j++)                       \
                if (!VALID(x[i * row_stride + j * x_stride], limit))          \
                    return i * n_features + j;                                \
        return -1;                                                            \
    }


/* Counts rows of a fit into a table, in row order: table[layout[j] + x_ij *
 * n_classes + y_i] += w_i (w NULL: unit weights) for the n_rows rows from
 * x (rows row_stride elements apart, a row's codes x_stride apart), the
 * first from column j0 on, while every code x_ij is a whole number from 0
 * to highest[j] (each highest[j] >= 0). Returns -1 when all are counted,
 * else the flat position (row * n_features + j) of the first that is not:
 * the codes before it are counted, it is not. In a FASTNB_DEBUG build it
 * returns -2 - i instead, before counting, at row i if its class is
 * outside 0 .. n_classes - 1 or an index outside the table's n_table
 * entries. With MISSING (the variants of a model with missing="ignore"),
 * a NaN is a missing value, skipped. */
#ifdef FASTNB_DEBUG
#define FASTNB_COUNT_CHECK(condition)                                         \
    do {                                                                      \
        if (!(condition))                                                     \
            return -2 - i;                                                    \
    } while (0)
#else
#define FASTNB_COUNT_CHECK(condition) ((void) 0)
#endif
/* (For a top >= 0: a negative v is past it as an unsigned number.) */
#define FASTNB_WITHIN_INT(v, top) ((uint64_t) (int64_t) (v) <= (uint64_t) (top))
#define FASTNB_WITHIN_FLOAT(v, top)                                           \
    (((v) >= 0) & ((v) <= (top)) & fastnb_whole((double) (v)))
#define FASTNB_CATEGORICAL_COUNT_ROWS(NAME, T, WITHIN, MISSING)               \
    static inline Py_ssize_t NAME(                                            \
        const T* FASTNB_RESTRICT x, Py_ssize_t row_stride,                    \
        Py_ssize_t x_stride, Py_ssize_t n_rows, Py_ssize_t n_features,        \
        Py_ssize_t j0, const Py_ssize_t* FASTNB_RESTRICT y,                   \
        const double* FASTNB_RESTRICT w, const T* FASTNB_RESTRICT highest,    \
        const Py_ssize_t* FASTNB_RESTRICT layout, Py_ssize_t n_classes,       \
        double* FASTNB_RESTRICT table, Py_ssize_t n_table)                    \
    {                                                                         \
        for (Py_ssize_t i = 0; i < n_rows; i++) {                             \
            const T* FASTNB_RESTRICT row = x + i * row_stride;                \
            const Py_ssize_t c = y[i];                                        \
            const double weight = w ? w[i] : 1.0;                             \
            FASTNB_COUNT_CHECK(0 <= c && c < n_classes);                      \
            for (Py_ssize_t j = i ? 0 : j0; j < n_features; j++) {            \
                const T v = row[j * x_stride];                                \
                if (!WITHIN(v, highest[j])) {                                 \
                    if (MISSING && v != v)                                    \
                        continue;                                             \
                    return i * n_features + j;                                \
                }                                                             \
                const Py_ssize_t at =                                         \
                    layout[j] + (Py_ssize_t) v * n_classes + c;               \
                FASTNB_COUNT_CHECK(0 <= at && at < n_table);                  \
                table[at] += weight;                                          \
            }                                                                 \
        }                                                                     \
        return -1;                                                            \
    }

#endif /* FASTNB_ROWS_CATEGORICAL_H */
