/* Included by _rows.h: the count families' row helpers (scores, and a dense
 * row counted). */
#ifndef FASTNB_ROWS_COUNTS_H
#define FASTNB_ROWS_COUNTS_H

/* The count families' row helpers take the classes in blocks of a width
 * that is a parameter of their block macros: NARROW, the 2 or 4 classes
 * of a table that narrow (the whole table, from k0 = 0), or 8, a block of
 * FASTNB_BLOCK from class k0. FASTNB_BLOCK_ZERO_##WIDTH(acc) declares the
 * block's sums, FASTNB_BLOCK_AXPY_##WIDTH(acc, v, p) adds v times the
 * block's entries at p, FASTNB_BLOCK_ADD_##WIDTH(scores, acc) adds the sums
 * to the row's scores; the narrow ones read n_padded (2 or 4). */
#define FASTNB_BLOCK_ZERO_NARROW(acc) double acc[FASTNB_NARROW] = {0, 0, 0, 0}
#define FASTNB_BLOCK_AXPY_NARROW(acc, v, p)                                   \
    FASTNB_AXPY_NARROW(acc, v, p, n_padded)
#define FASTNB_BLOCK_ADD_NARROW(scores, acc, k0)                              \
    for (int k = 0; k < n_padded; k++)                                        \
        scores[k] += acc[k]
#define FASTNB_BLOCK_ZERO_8(acc) FASTNB_ZERO8(acc)
#define FASTNB_BLOCK_AXPY_8(acc, v, p) FASTNB_AXPY8(acc, v, p)
#define FASTNB_BLOCK_ADD_8(scores, acc, k0)                                   \
    for (int k = 0; k < FASTNB_BLOCK; k++)                                    \
        scores[(k0) + k] += FASTNB_LANE(acc, k)

/* One block of a sparse row's terms (FASTNB_DISCRETE_CSR_ROW's names in
 * scope): the classes from k0, WIDTH wide; FETCH, whether this block
 * fetches the table rows ahead (the first block does, for the others). */
#define FASTNB_DISCRETE_CSR_BLOCK(WIDTH, k0, FETCH)                           \
    do {                                                                      \
        FASTNB_BLOCK_ZERO_##WIDTH(acc);                                       \
        for (Py_ssize_t p = start; p < stop; p++) {                           \
            if ((FETCH) && p + FASTNB_AHEAD < nnz)                            \
                fastnb_prefetch(table + indices[p + FASTNB_AHEAD] * n_padded, \
                                n_padded * sizeof(double));                   \
            const Py_ssize_t j = indices[p];                                  \
            FASTNB_CHECK(0 <= j && j < n_rows);                               \
            if (allow_nan && data[p] != data[p]) {                            \
                if (missing)                                                  \
                    FASTNB_BLOCK_AXPY_##WIDTH(acc, 1.0,                       \
                                              missing + j * n_padded + (k0)); \
                continue;                                                     \
            }                                                                 \
            const double v = fastnb_counted(data[p], threshold, binarize);    \
            if (v == 0.0)                                                     \
                continue;                                                     \
            FASTNB_BLOCK_AXPY_##WIDTH(acc, v, table + j * n_padded + (k0));   \
        }                                                                     \
        FASTNB_BLOCK_ADD_##WIDTH(scores, acc, k0);                            \
    } while (0)

/* One block of a dense row's terms (FASTNB_DISCRETE_DENSE_ROW's names in
 * scope): the classes from k0, WIDTH wide, of values of type T. */
#define FASTNB_DISCRETE_DENSE_BLOCK(T, WIDTH, k0)                             \
    do {                                                                      \
        FASTNB_BLOCK_ZERO_##WIDTH(acc);                                       \
        for (Py_ssize_t j = 0; j < n_features; j++) {                         \
            const T value = x[j * x_stride];                                  \
            if (allow_nan && value != value) {                                \
                if (missing)                                                  \
                    FASTNB_BLOCK_AXPY_##WIDTH(acc, 1.0,                       \
                                              missing + j * n_padded + (k0)); \
                continue;                                                     \
            }                                                                 \
            const double v =                                                  \
                skip_zeros ? fastnb_counted(value, threshold, binarize)       \
                           : fastnb_counted_unknown(value, threshold,         \
                                                    binarize);                \
            if (skip_zeros && v == 0.0)                                       \
                continue;                                                     \
            FASTNB_BLOCK_AXPY_##WIDTH(acc, v, table + j * n_padded + (k0));   \
        }                                                                     \
        FASTNB_BLOCK_ADD_##WIDTH(scores, acc, k0);                            \
    } while (0)

/* scores[k] += sum of v * table[j, k] over the values v of a sparse row,
 * stored at data[start:stop] with their columns j at indices[start:stop]
 * (nnz stored values in all); table is (n_rows, n_padded). A value of zero
 * (or one binarized to zero) adds nothing, even where the table holds -inf:
 * x log p is 0 for x = 0. The values are checked (fastnb_row_refused).
 * With MISSING (a compile-time 1, the helper of a model with
 * missing="ignore"), a NaN is a missing value: it adds row j of missing
 * (n_rows, n_padded), minus the term of a 0 that the intercept holds, or
 * nothing if missing is NULL (a term of 0 is 0). */
#define FASTNB_DISCRETE_CSR_ROW(NAME, T, I, MISSING)                          \
    FASTNB_ALWAYS_INLINE int NAME(                                            \
        const T* data, const I* indices, Py_ssize_t start, Py_ssize_t stop,   \
        Py_ssize_t nnz, const double* table, Py_ssize_t n_rows,               \
        Py_ssize_t n_padded, double threshold, int binarize,                  \
        int non_negative, const double* missing, double* scores)              \
    {                                                                         \
        const int allow_nan = (MISSING);                                      \
        FASTNB_CHECK(0 <= start && start <= stop && stop <= nnz);             \
        if (start == stop)                                                    \
            return 0;                                                         \
        const int check_first = non_negative || binarize;                     \
        if (check_first                                                       \
            && fastnb_row_refused_##T(data + start, 1, stop - start,          \
                                      non_negative, allow_nan))               \
            return 1;                                                         \
        if (n_padded < FASTNB_BLOCK) /* 2 or 4 classes (fastnb._discrete) */  \
            FASTNB_DISCRETE_CSR_BLOCK(NARROW, 0, 1);                          \
        for (Py_ssize_t k0 = 0; k0 < n_padded && n_padded >= FASTNB_BLOCK;    \
             k0 += FASTNB_BLOCK)                                              \
            FASTNB_DISCRETE_CSR_BLOCK(8, k0, k0 == 0);                        \
        if (!check_first && !(scores[0] - scores[0] == 0.0)                   \
            && fastnb_row_refused_##T(data + start, 1, stop - start, 0,       \
                                      allow_nan))                             \
            return 1;                                                         \
        return 0;                                                             \
    }

/* sums[j] += w * (x[j * stride] as counted) for the n values of a dense
 * row's block of columns; with MISSING, a NaN adds nothing to sums and w
 * to missed[j] (if missed is not NULL). Compiled without fused
 * multiply-adds: GCC fused w * x into the sum for some element types and
 * not for others (as it vectorised the loop, or not), so that the counts
 * of the same values, as integers or as float64, differed in the last bit
 * in the AVX2 and AVX-512 variants; each product is now rounded on its own
 * in every variant and type, as the baseline rounds it. */
#if defined(__clang__)
#define FASTNB_UNFUSED
#define FASTNB_NO_CONTRACT _Pragma("clang fp contract(off)")
#elif defined(__GNUC__)
#define FASTNB_UNFUSED __attribute__((optimize("fp-contract=off")))
#define FASTNB_NO_CONTRACT
#else
#define FASTNB_UNFUSED
#define FASTNB_NO_CONTRACT
#endif
#define FASTNB_COUNT_DENSE_ROW(NAME, T, MISSING)                              \
    static FASTNB_UNFUSED int NAME(const T* x, Py_ssize_t stride,             \
                                   Py_ssize_t n, double w,                    \
                                   double threshold, int binarize,            \
                                   double* sums, double* missed)              \
    {                                                                         \
        FASTNB_NO_CONTRACT                                                    \
        const int allow_nan = (MISSING);                                      \
        if (!allow_nan && stride == 1) { /* (a loop the compiler vectorises) */ \
            for (Py_ssize_t j = 0; j < n; j++)                                \
                sums[j] += w * fastnb_counted(x[j], threshold, binarize);     \
            return 0;                                                         \
        }                                                                     \
        if (!allow_nan) {                                                     \
            for (Py_ssize_t j = 0; j < n; j++)                                \
                sums[j] += w * fastnb_counted(x[j * stride], threshold,       \
                                              binarize);                      \
            return 0;                                                         \
        }                                                                     \
        for (Py_ssize_t j = 0; j < n; j++) {                                  \
            const T value = x[j * stride];                                    \
            if (value != value) {                                             \
                if (missed)                                                   \
                    missed[j] += w;                                           \
                continue;                                                     \
            }                                                                 \
            sums[j] += w * fastnb_counted(value, threshold, binarize);        \
        }                                                                     \
        return 0;                                                             \
    }

/* fastnb_counted without a branch on the value: the comparison of a
 * binarized value goes through an empty asm statement, after which the
 * compiler no longer knows it is 0 or 1. Knowing, GCC replaced v * row by
 * a branch between adding the row and adding nothing, mispredicted
 * wherever zeros and ones mix (four times the time of the loop without
 * it). */
static inline double fastnb_counted_unknown(double v, double threshold, int binarize)
{
    if (!binarize)
        return v;
    long above = v > threshold;
#if defined(__GNUC__) || defined(__clang__)
    __asm__("" : "+r"(above));
#endif
    return (double) above;
}

/* scores[k] += sum_j v_j * table[j, k] for a dense row x (elements x_stride
 * apart), v_j its values as counted; table is (n_rows, n_padded) with a row
 * per feature. As in sparse rows, a zero adds nothing, the values are
 * checked, and with MISSING a NaN adds its row of missing (if any). As
 * in sparse rows, skip_zeros skips a zero, where the table may hold
 * infinity (a zero times -inf would be NaN) or the rows have few nonzeros
 * (the caller's choice: see _discrete_dense_rows); otherwise a zero is
 * added, times the table, as any value (the same sums, bit for bit). The
 * branch that skips was mispredicted wherever zeros and nonzeros mix: on
 * Poisson counts with 37% zeros, four times the time of a row of no
 * zeros. */
#define FASTNB_DISCRETE_DENSE_ROW(NAME, T, MISSING)                           \
    FASTNB_ALWAYS_INLINE int NAME##_body(                                     \
        const T* x, Py_ssize_t x_stride, Py_ssize_t n_features,               \
        const double* table, Py_ssize_t n_rows, Py_ssize_t n_padded,          \
        double threshold, int binarize, int non_negative,                     \
        const double* missing, const int skip_zeros, double* scores)          \
    {                                                                         \
        const int allow_nan = (MISSING);                                      \
        FASTNB_CHECK(n_features <= n_rows);                                   \
        const int check_first = non_negative || binarize;                     \
        if (check_first                                                       \
            && fastnb_row_refused_##T(x, x_stride, n_features, non_negative,  \
                                      allow_nan))                             \
            return 1;                                                         \
        if (n_padded < FASTNB_BLOCK) /* 2 or 4 classes (fastnb._discrete) */  \
            FASTNB_DISCRETE_DENSE_BLOCK(T, NARROW, 0);                        \
        for (Py_ssize_t k0 = 0; k0 < n_padded && n_padded >= FASTNB_BLOCK;    \
             k0 += FASTNB_BLOCK)                                              \
            FASTNB_DISCRETE_DENSE_BLOCK(T, 8, k0);                            \
        if (!check_first && !(scores[0] - scores[0] == 0.0)                   \
            && fastnb_row_refused_##T(x, x_stride, n_features, 0, allow_nan)) \
            return 1;                                                         \
        return 0;                                                             \
    }                                                                         \
    static inline int NAME(                                                   \
        const T* x, Py_ssize_t x_stride, Py_ssize_t n_features,               \
        const double* table, Py_ssize_t n_rows, Py_ssize_t n_padded,          \
        double threshold, int binarize, int non_negative,                     \
        const double* missing, int skip_zeros, double* scores)                \
    {                                                                         \
        /* (The helper of missing values skips zeros.) */                     \
        if ((MISSING) || skip_zeros)                                          \
            return NAME##_body(x, x_stride, n_features, table, n_rows,        \
                               n_padded, threshold, binarize, non_negative,   \
                               missing, 1, scores);                           \
        return NAME##_body(x, x_stride, n_features, table, n_rows, n_padded,  \
                           threshold, binarize, non_negative, missing, 0,     \
                           scores);                                           \
    }

#endif /* FASTNB_ROWS_COUNTS_H */
