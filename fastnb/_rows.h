/* Plain-C helpers of fastnb's compiled kernels (fastnb/_kernels.pyx),
 * declared for Cython in fastnb/_rows.pxd.
 *
 * - Facts about the build and the CPU: OpenMP, bounds checks, instruction
 *   sets.
 * - The hottest row loops of the scoring kernels. With the classes taken in
 *   blocks of FASTNB_BLOCK, accumulated in a local array of constant size,
 *   compilers vectorise these loops for each instruction-set variant
 *   (Cython's generated indexing defeats that). This header is compiled
 *   once per variant (baseline, AVX2, AVX-512), so the vector width below
 *   is the variant's own.
 *
 * The row helpers are generated for each element type by the macros at the
 * end (one function per type, suffixed _f64, _f32, _i32, _i64) and chosen
 * for a kernel's fused types in one place, _rows.pxd.
 */
#ifndef FASTNB_ROWS_H
#define FASTNB_ROWS_H

#include <Python.h>
#include <numpy/npy_common.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

/* ---- The build and the CPU ---------------------------------------------- */

#ifdef _OPENMP
#include <omp.h>
static inline int fastnb_openmp_enabled(void) { return 1; }
static inline int fastnb_omp_max_threads(void)
{
    return omp_get_max_threads();
}
#else
static inline int fastnb_openmp_enabled(void) { return 0; }
static inline int fastnb_omp_max_threads(void) { return 1; }
#endif

#ifdef FASTNB_DEBUG
static inline int fastnb_debug_build(void) { return 1; }
#else
static inline int fastnb_debug_build(void) { return 0; }
#endif

/* Whether this CPU runs the variants built for -march=haswell (AVX2 with
 * FMA and BMI2) and -march=skylake-avx512. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
static inline int fastnb_cpu_runs_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
        && __builtin_cpu_supports("bmi2");
}
static inline int fastnb_cpu_runs_avx512(void)
{
    __builtin_cpu_init();
    return fastnb_cpu_runs_avx2() && __builtin_cpu_supports("avx512f")
        && __builtin_cpu_supports("avx512cd")
        && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512dq")
        && __builtin_cpu_supports("avx512vl");
}
#else
static inline int fastnb_cpu_runs_avx2(void) { return 0; }
static inline int fastnb_cpu_runs_avx512(void) { return 0; }
#endif

/* ---- Blocks of classes -------------------------------------------------- */

/* Classes scored together, their sums held in vector registers. */
#define FASTNB_BLOCK 8

/* Nonzeros ahead whose table rows are fetched early: rows of a large
 * vocabulary are mostly not in cache, and the loop would wait on memory
 * (8 measured best of 0, 8, 16 and 32). */
#define FASTNB_AHEAD 8

#if defined(__GNUC__) || defined(__clang__)
#define FASTNB_PREFETCH(address) __builtin_prefetch(address)
#else
#define FASTNB_PREFETCH(address) ((void) 0)
#endif

/* Fetches the n doubles at p (a table row) into cache. */
static inline void fastnb_prefetch(const double* p, Py_ssize_t n)
{
    for (Py_ssize_t k = 0; k < n; k += 8)
        FASTNB_PREFETCH(p + k);
    FASTNB_PREFETCH(p + n - 1);
}

/* A block of eight doubles is one vector of AVX-512, two of AVX2 or four of
 * SSE2: vectors of the target's own width (a wider generic vector type is
 * split badly by compilers). Other compilers get plain loops over eight.
 *
 * FASTNB_ZERO8(acc)              declares the block acc, all zeros
 * FASTNB_AXPY8(acc, v, p)        acc[k] += v * p[k]
 * FASTNB_SQDIFF8(acc, x, mu, iv) acc[k] += (x - mu[k])^2 * iv[k]
 * FASTNB_GAUSS8(hi, acc, x, mu, iv, t_hi, t_lo)
 *                                hi[k] -= t_hi[k],
 *                                acc[k] += (x - mu[k])^2 * iv[k] - t_lo[k]
 * FASTNB_LANE(acc, k)            acc[k], as a double
 *
 * Every lane is the same sum, in the same order, as a plain loop would
 * compute for that class: the vectors change the speed, not the result. */
#if defined(__GNUC__) || defined(__clang__)
#if defined(__AVX512F__)
typedef double fastnb_vec __attribute__((vector_size(64)));
#elif defined(__AVX__)
typedef double fastnb_vec __attribute__((vector_size(32)));
#else
typedef double fastnb_vec __attribute__((vector_size(16)));
#endif
#define FASTNB_LANES ((int) (sizeof(fastnb_vec) / sizeof(double)))
#define FASTNB_PARTS (FASTNB_BLOCK / FASTNB_LANES)

/* p need not be aligned: memcpy is the portable unaligned load. */
static inline fastnb_vec fastnb_load(const double* p)
{
    fastnb_vec v;
    memcpy(&v, p, sizeof v);
    return v;
}

#define FASTNB_ZERO8(acc)                                                     \
    fastnb_vec acc[FASTNB_PARTS];                                             \
    for (int q_ = 0; q_ < FASTNB_PARTS; q_++)                                 \
        acc[q_] = (fastnb_vec) {0}
#define FASTNB_AXPY8(acc, v, p)                                               \
    for (int q_ = 0; q_ < FASTNB_PARTS; q_++)                                 \
        acc[q_] += (v) * fastnb_load((p) + q_ * FASTNB_LANES)
#define FASTNB_SQDIFF8(acc, x, mu, iv)                                        \
    for (int q_ = 0; q_ < FASTNB_PARTS; q_++) {                               \
        fastnb_vec d_ = (x) - fastnb_load((mu) + q_ * FASTNB_LANES);          \
        acc[q_] += d_ * d_ * fastnb_load((iv) + q_ * FASTNB_LANES);           \
    }
#define FASTNB_GAUSS8(hi, acc, x, mu, iv, t_hi, t_lo)                         \
    for (int q_ = 0; q_ < FASTNB_PARTS; q_++) {                               \
        fastnb_vec d_ = (x) - fastnb_load((mu) + q_ * FASTNB_LANES);          \
        hi[q_] -= fastnb_load((t_hi) + q_ * FASTNB_LANES);                    \
        acc[q_] += d_ * d_ * fastnb_load((iv) + q_ * FASTNB_LANES)            \
            - fastnb_load((t_lo) + q_ * FASTNB_LANES);                        \
    }
#define FASTNB_LANE(acc, k) acc[(k) / FASTNB_LANES][(k) % FASTNB_LANES]
#else
#define FASTNB_ZERO8(acc) double acc[FASTNB_BLOCK] = {0, 0, 0, 0, 0, 0, 0, 0}
#define FASTNB_AXPY8(acc, v, p)                                               \
    for (int k_ = 0; k_ < FASTNB_BLOCK; k_++)                                 \
        acc[k_] += (v) * (p)[k_]
#define FASTNB_SQDIFF8(acc, x, mu, iv)                                        \
    for (int k_ = 0; k_ < FASTNB_BLOCK; k_++) {                               \
        double d_ = (x) - (mu)[k_];                                           \
        acc[k_] += d_ * d_ * (iv)[k_];                                        \
    }
#define FASTNB_GAUSS8(hi, acc, x, mu, iv, t_hi, t_lo)                         \
    for (int k_ = 0; k_ < FASTNB_BLOCK; k_++) {                               \
        double d_ = (x) - (mu)[k_];                                           \
        hi[k_] -= (t_hi)[k_];                                                 \
        acc[k_] += d_ * d_ * (iv)[k_] - (t_lo)[k_];                           \
    }
#define FASTNB_LANE(acc, k) acc[k]
#endif

/* ---- Row helpers -------------------------------------------------------- */

/* Every row helper adds one row's terms to scores[0:n_padded] from tables
 * whose classes are padded with zeros to n_padded, a multiple of
 * FASTNB_BLOCK (fastnb._base.pad_classes); the caller's scores row has room
 * for the padded classes. A helper returns 0, or 1 when the row holds a
 * value the model refuses (fastnb_refused: the kernel reports the row, and
 * its scores are not used); in a FASTNB_DEBUG build it returns -1 instead,
 * before reading anything, when an offset into X or an index into a table
 * is out of range. Otherwise those index checks compile to nothing: the
 * kernels trust what Python checked. */
#ifdef FASTNB_DEBUG
#define FASTNB_CHECK(condition)                                               \
    do {                                                                      \
        if (!(condition))                                                     \
            return -1;                                                        \
    } while (0)
#else
#define FASTNB_CHECK(condition) ((void) 0)
#endif

/* A feature value as the discrete families count it: as it is, or 1/0
 * against the threshold when binarizing. */
static inline double fastnb_counted(double v, double threshold, int binarize)
{
    return binarize ? (v > threshold ? 1.0 : 0.0) : v;
}

/* Whether a value of X is refused: NaN or infinite, or, when non_negative
 * (the count families), below zero. x - x is 0 for every finite x, NaN
 * otherwise (the build has no -ffast-math, which would fold it to 0). */
static inline int fastnb_refused(double x, int non_negative)
{
    return non_negative ? !(x >= 0.0 && x < HUGE_VAL) : !(x - x == 0.0);
}

/* Whether any of the n values x[0], x[stride], ... is refused: a pass of
 * its own before a row is scored, which compilers vectorise (a test inside
 * the scoring loops would cost more). */
#define FASTNB_ROW_REFUSED(T)                                                 \
    static inline int fastnb_row_refused_##T(                                 \
        const T* x, Py_ssize_t stride, Py_ssize_t n, int non_negative)        \
    {                                                                         \
        int refused = 0;                                                      \
        for (Py_ssize_t j = 0; j < n; j++)                                    \
            refused |= fastnb_refused((double) x[j * stride], non_negative);  \
        return refused;                                                       \
    }
FASTNB_ROW_REFUSED(double)
FASTNB_ROW_REFUSED(float)

/* scores[k] += sum of v * table[j, k] over the values v of a sparse row,
 * stored at data[start:stop] with their columns j at indices[start:stop]
 * (nnz stored values in all); table is (n_rows, n_padded). A value of zero
 * (or one binarized to zero) adds nothing, even where the table holds -inf:
 * x log p is 0 for x = 0. The values are checked first (fastnb_refused). */
#define FASTNB_DISCRETE_CSR_ROW(NAME, T, I)                                   \
    static inline int NAME(                                                   \
        const T* data, const I* indices, Py_ssize_t start, Py_ssize_t stop,   \
        Py_ssize_t nnz, const double* table, Py_ssize_t n_rows,               \
        Py_ssize_t n_padded, double threshold, int binarize,                  \
        int non_negative, double* scores)                                     \
    {                                                                         \
        FASTNB_CHECK(0 <= start && start <= stop && stop <= nnz);             \
        if (start == stop)                                                    \
            return 0;                                                         \
        if (fastnb_row_refused_##T(data + start, 1, stop - start,             \
                                   non_negative))                             \
            return 1;                                                         \
        for (Py_ssize_t k0 = 0; k0 < n_padded; k0 += FASTNB_BLOCK) {          \
            FASTNB_ZERO8(acc);                                                \
            for (Py_ssize_t p = start; p < stop; p++) {                       \
                if (k0 == 0 && p + FASTNB_AHEAD < nnz)                        \
                    fastnb_prefetch(                                          \
                        table + indices[p + FASTNB_AHEAD] * n_padded,         \
                        n_padded);                                            \
                const Py_ssize_t j = indices[p];                              \
                FASTNB_CHECK(0 <= j && j < n_rows);                           \
                const double v =                                              \
                    fastnb_counted(data[p], threshold, binarize);             \
                if (v == 0.0)                                                 \
                    continue;                                                 \
                FASTNB_AXPY8(acc, v, table + j * n_padded + k0);              \
            }                                                                 \
            for (int k = 0; k < FASTNB_BLOCK; k++)                            \
                scores[k0 + k] += FASTNB_LANE(acc, k);                        \
        }                                                                     \
        return 0;                                                             \
    }

/* scores[k] += sum_j v_j * table[j, k] for a dense row x (elements x_stride
 * apart), v_j its values as counted; table is (n_rows, n_padded) with a row
 * per feature. As in sparse rows, a zero adds nothing, and the values are
 * checked first. */
#define FASTNB_DISCRETE_DENSE_ROW(NAME, T)                                    \
    static inline int NAME(                                                   \
        const T* x, Py_ssize_t x_stride, Py_ssize_t n_features,               \
        const double* table, Py_ssize_t n_rows, Py_ssize_t n_padded,          \
        double threshold, int binarize, int non_negative, double* scores)     \
    {                                                                         \
        FASTNB_CHECK(n_features <= n_rows);                                   \
        if (fastnb_row_refused_##T(x, x_stride, n_features, non_negative))    \
            return 1;                                                         \
        for (Py_ssize_t k0 = 0; k0 < n_padded; k0 += FASTNB_BLOCK) {          \
            FASTNB_ZERO8(acc);                                                \
            for (Py_ssize_t j = 0; j < n_features; j++) {                     \
                const double v =                                              \
                    fastnb_counted(x[j * x_stride], threshold, binarize);     \
                if (v == 0.0)                                                 \
                    continue;                                                 \
                FASTNB_AXPY8(acc, v, table + j * n_padded + k0);              \
            }                                                                 \
            for (int k = 0; k < FASTNB_BLOCK; k++)                            \
                scores[k0 + k] += FASTNB_LANE(acc, k);                        \
        }                                                                     \
        return 0;                                                             \
    }

/* scores[k] -= 0.5 sum_j (x[j] - theta[j, k])^2 inv_var[j, k] for a dense
 * row x (elements x_stride apart); theta and inv_var are (n_rows, n_padded)
 * with a row per feature. The values are checked first: finite. */
#define FASTNB_GAUSSIAN_DENSE_ROW(NAME, T)                                    \
    static inline int NAME(                                                   \
        const T* x, Py_ssize_t x_stride, Py_ssize_t n_features,               \
        const double* theta, const double* inv_var, Py_ssize_t n_rows,        \
        Py_ssize_t n_padded, double* scores)                                  \
    {                                                                         \
        FASTNB_CHECK(n_features <= n_rows);                                   \
        if (fastnb_row_refused_##T(x, x_stride, n_features, 0))               \
            return 1;                                                         \
        for (Py_ssize_t k0 = 0; k0 < n_padded; k0 += FASTNB_BLOCK) {          \
            FASTNB_ZERO8(acc);                                                \
            for (Py_ssize_t j = 0; j < n_features; j++) {                     \
                const double xj = (double) x[j * x_stride];                   \
                FASTNB_SQDIFF8(acc, xj, theta + j * n_padded + k0,            \
                               inv_var + j * n_padded + k0);                  \
            }                                                                 \
            for (int k = 0; k < FASTNB_BLOCK; k++)                            \
                scores[k0 + k] -= 0.5 * FASTNB_LANE(acc, k);                  \
        }                                                                     \
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
 * values (finite), as for the sparse discrete row. */
#define FASTNB_GAUSSIAN_CSR_ROW(NAME, T, I)                                   \
    static inline int NAME(                                                   \
        const T* data, const I* indices, Py_ssize_t start, Py_ssize_t stop,   \
        Py_ssize_t nnz, const double* table, Py_ssize_t n_rows,               \
        Py_ssize_t n_padded, double* scores)                                  \
    {                                                                         \
        FASTNB_CHECK(0 <= start && start <= stop && stop <= nnz);             \
        if (fastnb_row_refused_##T(data + start, 1, stop - start, 0))         \
            return 1;                                                         \
        const Py_ssize_t step = 4 * n_padded; /* from a feature to the next */ \
        const double* sums = table + n_rows * step + 2 * n_padded;            \
        for (Py_ssize_t k0 = 0; k0 < n_padded; k0 += FASTNB_BLOCK) {          \
            FASTNB_ZERO8(hi); /* less the stored hi: exact */                 \
            FASTNB_ZERO8(acc);                                                \
            for (Py_ssize_t p = start; p < stop; p++) {                       \
                if (k0 == 0 && p + FASTNB_AHEAD < nnz)                        \
                    fastnb_prefetch(                                          \
                        table + indices[p + FASTNB_AHEAD] * step, step);      \
                const Py_ssize_t j = indices[p];                              \
                FASTNB_CHECK(0 <= j && j < n_rows);                           \
                const double x = (double) data[p];                            \
                const double* theta = table + j * step + k0;                  \
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
        return 0;                                                             \
    }

/* scores[k] += sum_j table[offsets[j] + code_j, k] for a dense row of
 * category codes x (elements x_stride apart): feature j owns the table rows
 * offsets[j] .. offsets[j + 1] - 1 (of n_rows), the last of them for codes
 * never seen in training, which every larger code is clamped to. offsets
 * has n_offsets entries; codes are non-negative. */
#define FASTNB_CATEGORICAL_DENSE_ROW(NAME, T)                                 \
    static inline int NAME(                                                   \
        const T* x, Py_ssize_t x_stride, Py_ssize_t n_features,               \
        const npy_intp* offsets, Py_ssize_t n_offsets, const double* table,   \
        Py_ssize_t n_rows, Py_ssize_t n_padded, double* scores)               \
    {                                                                         \
        FASTNB_CHECK(n_features < n_offsets);                                 \
        for (Py_ssize_t k0 = 0; k0 < n_padded; k0 += FASTNB_BLOCK) {          \
            FASTNB_ZERO8(acc);                                                \
            for (Py_ssize_t j = 0; j < n_features; j++) {                     \
                const Py_ssize_t unseen = offsets[j + 1] - offsets[j] - 1;    \
                const double value = (double) x[j * x_stride];                \
                /* (NaN fails value >= 0 too.) */                             \
                FASTNB_CHECK(value >= 0.0 && unseen >= 0);                    \
                const Py_ssize_t code =                                       \
                    value > (double) unseen ? unseen : (Py_ssize_t) value;    \
                const Py_ssize_t row = offsets[j] + code;                     \
                FASTNB_CHECK(offsets[j] >= 0 && row < n_rows);                \
                FASTNB_AXPY8(acc, 1.0, table + row * n_padded + k0);          \
            }                                                                 \
            for (int k = 0; k < FASTNB_BLOCK; k++)                            \
                scores[k0 + k] += FASTNB_LANE(acc, k);                        \
        }                                                                     \
        return 0;                                                             \
    }

FASTNB_DISCRETE_CSR_ROW(fastnb_discrete_csr_row_f64_i32, double, int32_t)
FASTNB_DISCRETE_CSR_ROW(fastnb_discrete_csr_row_f64_i64, double, int64_t)
FASTNB_DISCRETE_CSR_ROW(fastnb_discrete_csr_row_f32_i32, float, int32_t)
FASTNB_DISCRETE_CSR_ROW(fastnb_discrete_csr_row_f32_i64, float, int64_t)
FASTNB_DISCRETE_DENSE_ROW(fastnb_discrete_dense_row_f64, double)
FASTNB_DISCRETE_DENSE_ROW(fastnb_discrete_dense_row_f32, float)
FASTNB_GAUSSIAN_DENSE_ROW(fastnb_gaussian_dense_row_f64, double)
FASTNB_GAUSSIAN_DENSE_ROW(fastnb_gaussian_dense_row_f32, float)
FASTNB_GAUSSIAN_CSR_ROW(fastnb_gaussian_csr_row_f64_i32, double, int32_t)
FASTNB_GAUSSIAN_CSR_ROW(fastnb_gaussian_csr_row_f64_i64, double, int64_t)
FASTNB_GAUSSIAN_CSR_ROW(fastnb_gaussian_csr_row_f32_i32, float, int32_t)
FASTNB_GAUSSIAN_CSR_ROW(fastnb_gaussian_csr_row_f32_i64, float, int64_t)
FASTNB_CATEGORICAL_DENSE_ROW(fastnb_categorical_dense_row_i32, int32_t)
FASTNB_CATEGORICAL_DENSE_ROW(fastnb_categorical_dense_row_i64, int64_t)
FASTNB_CATEGORICAL_DENSE_ROW(fastnb_categorical_dense_row_f32, float)
FASTNB_CATEGORICAL_DENSE_ROW(fastnb_categorical_dense_row_f64, double)

#endif /* FASTNB_ROWS_H */
