/* Included by _rows.h: GaussianNB's row helpers. */
#ifndef FASTNB_ROWS_GAUSSIAN_H
#define FASTNB_ROWS_GAUSSIAN_H

/* scores[k] -= 0.5 sum_j (x[j] - theta[j, k])^2 inv_var[j, k] for a dense
 * row x (elements x_stride apart); theta and inv_var are (n_rows, n_padded)
 * with a row per feature. The values are checked: finite. MISSING, a
 * constant, makes the helper of a model with missing="ignore": a NaN in
 * feature j is a missing value, whose feature's term is left out, so it
 * adds, in the term's place, log_var[j, k] = log(2 pi var[j, k]) (a table
 * as theta) back to the sum, which the caller's intercept had taken out
 * for every feature; only infinity is refused then. Without MISSING,
 * log_var is not read. */
#define FASTNB_GAUSSIAN_DENSE_ROW(NAME, T, MISSING)                           \
    static inline int NAME(                                                   \
        const T* x, Py_ssize_t x_stride, Py_ssize_t n_features,               \
        const double* theta, const double* inv_var, const double* log_var,    \
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores)               \
    {                                                                         \
        FASTNB_CHECK(n_features <= n_rows);                                   \
        for (Py_ssize_t k0 = 0; k0 < n_padded; k0 += FASTNB_BLOCK) {          \
            FASTNB_ZERO8(acc);                                                \
            for (Py_ssize_t j = 0; j < n_features; j++) {                     \
                const double xj = (double) x[j * x_stride];                   \
                if (MISSING && xj != xj) {                                    \
                    FASTNB_AXPY8(acc, -1.0, log_var + j * n_padded + k0);     \
                    continue;                                                 \
                }                                                             \
                FASTNB_SQDIFF8(acc, xj, theta + j * n_padded + k0,            \
                               inv_var + j * n_padded + k0);                  \
            }                                                                 \
            for (int k = 0; k < FASTNB_BLOCK; k++)                            \
                scores[k0 + k] -= 0.5 * FASTNB_LANE(acc, k);                  \
        }                                                                     \
        if (!(scores[0] - scores[0] == 0.0)                                   \
            && fastnb_row_refused_##T(x, x_stride, n_features, 0, MISSING))   \
            return 1;                                                         \
        return 0;                                                             \
    }

/* scores[k] -= 0.5 sum_j (x_j - theta[j, k])^2 inv_var[j, k] for a sparse
 * row. A zero in column j adds T[j, k] = theta^2 inv_var, so the sum is the
 * all-zeros row's, sum_j T[j, k], less T[j, k] and plus the term of x for
 * each value x stored in column j. Where theta^2 >> var, the all-zeros sum
 * less the stored T cancels; it is taken exactly. table is (n_rows + 1, 4,
 * n_padded): for feature j, theta, inv_var and T split as hi + lo
 * (the kernel gaussian_sparse_table), a class's hi being multiples of one
 * power of two such that any sum of them is an exact double; its last row
 * holds the sums of all hi and of all lo in the places of hi and lo. The
 * zeros' hi, (sum of all hi) - (stored hi), are then exact; the lo, each
 * within 2^-52 of the class's sum of T, join the terms of the stored
 * values, which are >= 0 and cannot cancel. A feature's four rows are
 * together, fetched ahead of use. Other arguments, and the check of the
 * values (finite), as for the sparse discrete row. With MISSING (see the
 * dense row), a stored NaN in column j takes T[j, k] out of the zeros'
 * sum, as any stored value does, and adds log_var[j, k] back instead of
 * its term. */
#define FASTNB_GAUSSIAN_CSR_ROW(NAME, T, I, MISSING)                          \
    static inline int NAME(                                                   \
        const T* data, const I* indices, Py_ssize_t start, Py_ssize_t stop,   \
        Py_ssize_t nnz, const double* table, const double* log_var,           \
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores)               \
    {                                                                         \
        FASTNB_CHECK(0 <= start && start <= stop && stop <= nnz);             \
        const Py_ssize_t step = 4 * n_padded; /* from a feature to the next */ \
        const double* sums = table + n_rows * step + 2 * n_padded;            \
        for (Py_ssize_t k0 = 0; k0 < n_padded; k0 += FASTNB_BLOCK) {          \
            FASTNB_ZERO8(hi); /* less the stored hi: exact */                 \
            FASTNB_ZERO8(acc);                                                \
            for (Py_ssize_t p = start; p < stop; p++) {                       \
                if (k0 == 0 && p + FASTNB_AHEAD < nnz)                        \
                    fastnb_prefetch(                                          \
                        table + indices[p + FASTNB_AHEAD] * step,             \
                        step * sizeof(double));                               \
                const Py_ssize_t j = indices[p];                              \
                FASTNB_CHECK(0 <= j && j < n_rows);                           \
                const double x = (double) data[p];                            \
                const double* theta = table + j * step + k0;                  \
                if (MISSING && x != x) {                                      \
                    FASTNB_AXPY8(hi, -1.0, theta + 2 * n_padded);             \
                    FASTNB_AXPY8(acc, -1.0, theta + 3 * n_padded);            \
                    FASTNB_AXPY8(acc, -1.0, log_var + j * n_padded + k0);     \
                    continue;                                                 \
                }                                                             \
                FASTNB_GAUSS8(hi, acc, x, theta, theta + n_padded,            \
                              theta + 2 * n_padded, theta + 3 * n_padded);    \
            }                                                                 \
            for (int k = 0; k < FASTNB_BLOCK; k++) {                          \
                const double zeros = sums[k0 + k] + FASTNB_LANE(hi, k);       \
                const double rest =                                           \
                    sums[n_padded + k0 + k] + FASTNB_LANE(acc, k);            \
                scores[k0 + k] -= 0.5 * (zeros + rest);                       \
            }                                                                 \
        }                                                                     \
        if (!(scores[0] - scores[0] == 0.0)                                   \
            && fastnb_row_refused_##T(                                        \
                data + start, 1, stop - start, 0, MISSING))                   \
            return 1;                                                         \
        return 0;                                                             \
    }

#endif /* FASTNB_ROWS_GAUSSIAN_H */
