/* Plain-C helpers of fastnb's compiled kernels (fastnb/_kernels.pyx and
 * fastnb/_vectorised.pyx), declared for Cython in fastnb/_rows.pxd, which
 * setup.py renders from the template fastnb/_rows.pxd.tp.
 *
 * - Facts about the build and the CPU: OpenMP, bounds checks, instruction
 *   sets.
 * - The hottest row loops of the scoring kernels. With the classes taken in
 *   blocks of FASTNB_BLOCK, accumulated in a local array of constant size,
 *   compilers vectorise these loops for each instruction-set variant
 *   (Cython's generated indexing defeats that). fastnb._vectorised is
 *   compiled once per variant (baseline, AVX2, AVX-512; SVE), so the vector
 *   width below is the variant's own.
 *
 * The row helpers are macros, made into one function per element type
 * (suffixed _f64, _f32, _i32, _i64), and per variant for missing values
 * (_missing), by _rows.pxd.tp: the list of specialisations there is the
 * only one, and the same template declares them and picks one for a
 * kernel's fused types.
 */
#ifndef FASTNB_ROWS_H
#define FASTNB_ROWS_H

#include <Python.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

/* ---- The build and the CPU ---------------------------------------------- */

#ifdef _OPENMP
#include <omp.h>
#include <link.h>
static inline int fastnb_openmp_enabled(void) { return 1; }
static inline int fastnb_omp_max_threads(void)
{
    return omp_get_max_threads();
}

struct fastnb_found_object {
    uintptr_t address; /* in: an address of the object sought */
    const char *name;  /* out: its file */
};

/* dl_iterate_phdr's callback: stop at the object whose loaded segments hold
 * found->address. */
static int fastnb_find_object(struct dl_phdr_info *info, size_t size,
                              void *data)
{
    struct fastnb_found_object *found = data;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + segment->p_vaddr;
        if (segment->p_type == PT_LOAD && found->address >= start &&
            found->address < start + segment->p_memsz) {
            found->name = info->dlpi_name;
            return 1;
        }
    }
    return 0;
}

/* The file of the OpenMP runtime the kernels call (the loaded object that
 * holds their omp_get_max_threads), or "" if none is found. Through
 * dl_iterate_phdr, not dladdr, which glibc 2.34 moved to a newer symbol
 * version than the wheels' baseline. */
static inline const char *fastnb_openmp_runtime(void)
{
    struct fastnb_found_object found = {(uintptr_t)&omp_get_max_threads, ""};
    dl_iterate_phdr(fastnb_find_object, &found);
    return found.name ? found.name : "";
}
#else
static inline int fastnb_openmp_enabled(void) { return 0; }
static inline int fastnb_omp_max_threads(void) { return 1; }
static inline const char *fastnb_openmp_runtime(void) { return ""; }
#endif

#ifdef FASTNB_DEBUG
static inline int fastnb_debug_build(void) { return 1; }
#else
static inline int fastnb_debug_build(void) { return 0; }
#endif

/* Whether this CPU runs the x86-64 variants built for -march=haswell (AVX2
 * with FMA and BMI2) and -march=skylake-avx512. */
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

/* Whether this CPU runs the aarch64 variant built for -march=armv8.2-a+sve
 * (the Linux kernel reports SVE in the auxiliary vector). */
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_SVE
#define HWCAP_SVE (1UL << 22)
#endif
static inline int fastnb_cpu_runs_sve(void)
{
    return (getauxval(AT_HWCAP) & HWCAP_SVE) != 0;
}
#else
static inline int fastnb_cpu_runs_sve(void) { return 0; }
#endif

/* ---- Blocks of classes -------------------------------------------------- */

/* Classes scored together, their sums held in vector registers. */
#define FASTNB_BLOCK 8
/* KernelDensityNB's: 16 floats, a cache line of its tables. */
#define FASTNB_KDE_BLOCK 16

/* Nonzeros ahead whose table rows are fetched early: rows of a large
 * vocabulary are mostly not in cache, and the loop would wait on memory
 * (8 measured best of 0, 8, 16 and 32). */
#define FASTNB_AHEAD 8

#if defined(__GNUC__) || defined(__clang__)
#define FASTNB_PREFETCH(address) __builtin_prefetch(address)
#else
#define FASTNB_PREFETCH(address) ((void) 0)
#endif

/* Fetches the cache lines (64 bytes) of the n_bytes at p (a table row). */
static inline void fastnb_prefetch(const void* p, Py_ssize_t n_bytes)
{
    const char* end = (const char*) p + n_bytes;
    for (const char* line = (const char*) ((uintptr_t) p & ~(uintptr_t) 63);
         line < end; line += 64)
        FASTNB_PREFETCH(line);
}

/* A block of eight doubles is one vector of AVX-512, two of AVX2 or four of
 * SSE2: vectors of the target's own width (a wider generic vector type is
 * split badly by compilers). Other compilers get plain loops over eight.
 *
 * FASTNB_ZERO8(acc)              declares the block acc, all zeros
 * FASTNB_AXPY8(acc, v, p)        acc[k] += v * p[k]
 * FASTNB_DIFF8(acc, p, q)        acc[k] += p[k] - q[k]
 * FASTNB_SQDIFF8(acc, x, mu, iv) acc[k] += (x - mu[k])^2 * iv[k]
 * FASTNB_GAUSS8(hi, acc, x, mu, iv, t_hi, t_lo)
 *                                hi[k] -= t_hi[k],
 *                                acc[k] += (x - mu[k])^2 * iv[k] - t_lo[k]
 * FASTNB_LANE(acc, k)            acc[k], as a double
 *
 * KernelDensityNB's tables hold floats, and its blocks are of
 * FASTNB_KDE_BLOCK (16) classes, a 64-byte table row:
 * FASTNB_ZERO16(acc)             declares the block acc of doubles, zeros
 * FASTNB_ZERO16F(acc)            declares the block acc of floats, zeros
 * FASTNB_LERP16F(acc, p, q, t)   acc[k] += p[k] + t * (q[k] - p[k]), floats
 * FASTNB_WIDEN16F(acc, sums)     acc[k] += sums[k], sums floats
 * FASTNB_TAIL16(acc, p, a, g, d, s)
 *                                acc[k] += p[k] - a[k] * d * (s - 2 g[k]),
 *                                p floats, the rest doubles
 *
 * Every lane is the same sum, in the same order, as a plain loop would
 * compute for that class: the vectors change the speed, not the result.
 * (__builtin_convertvector came with GCC 9.) */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 9)
#if defined(__AVX512F__)
typedef double fastnb_vec __attribute__((vector_size(64)));
#elif defined(__AVX__)
typedef double fastnb_vec __attribute__((vector_size(32)));
#else
typedef double fastnb_vec __attribute__((vector_size(16)));
#endif
#define FASTNB_LANES ((int) (sizeof(fastnb_vec) / sizeof(double)))
/* A register of floats (twice a fastnb_vec's lanes), and half of one (as
 * many floats as a fastnb_vec has doubles, so it widens to one). */
typedef float fastnb_vecf __attribute__((vector_size(sizeof(fastnb_vec))));
typedef float fastnb_half_vecf
    __attribute__((vector_size(sizeof(fastnb_vec) / 2)));
#define FASTNB_PARTS (FASTNB_BLOCK / FASTNB_LANES)

/* p need not be aligned: memcpy is the portable unaligned load. */
static inline fastnb_vec fastnb_load(const double* p)
{
    fastnb_vec v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline fastnb_vecf fastnb_loadf(const float* p)
{
    fastnb_vecf v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline fastnb_vec fastnb_load_widened(const float* p)
{
    fastnb_half_vecf v;
    memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, fastnb_vec);
}

#define FASTNB_ZERO8(acc)                                                     \
    fastnb_vec acc[FASTNB_PARTS];                                             \
    for (int q_ = 0; q_ < FASTNB_PARTS; q_++)                                 \
        acc[q_] = (fastnb_vec) {0}
#define FASTNB_AXPY8(acc, v, p)                                               \
    for (int q_ = 0; q_ < FASTNB_PARTS; q_++)                                 \
        acc[q_] += (v) * fastnb_load((p) + q_ * FASTNB_LANES)
#define FASTNB_DIFF8(acc, p, q)                                               \
    for (int q_ = 0; q_ < FASTNB_PARTS; q_++)                                 \
        acc[q_] += fastnb_load((p) + q_ * FASTNB_LANES)                       \
                   - fastnb_load((q) + q_ * FASTNB_LANES)
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
#define FASTNB_KDE_PARTS (FASTNB_KDE_BLOCK / FASTNB_LANES)
#define FASTNB_KDE_FLOAT_PARTS (FASTNB_KDE_BLOCK / (2 * FASTNB_LANES))
#define FASTNB_ZERO16(acc)                                                    \
    fastnb_vec acc[FASTNB_KDE_PARTS];                                         \
    for (int q_ = 0; q_ < FASTNB_KDE_PARTS; q_++)                             \
        acc[q_] = (fastnb_vec) {0}
#define FASTNB_ZERO16F(acc)                                                   \
    fastnb_vecf acc[FASTNB_KDE_FLOAT_PARTS];                                  \
    for (int q_ = 0; q_ < FASTNB_KDE_FLOAT_PARTS; q_++)                       \
        acc[q_] = (fastnb_vecf) {0}
#define FASTNB_LERP16F(acc, p, q, t)                                          \
    for (int q_ = 0; q_ < FASTNB_KDE_FLOAT_PARTS; q_++) {                     \
        fastnb_vecf p_ = fastnb_loadf((p) + q_ * 2 * FASTNB_LANES);           \
        fastnb_vecf r_ = fastnb_loadf((q) + q_ * 2 * FASTNB_LANES);           \
        acc[q_] += p_ + (t) * (r_ - p_);                                      \
    }
/* A vector of floats in halves, each widened to doubles: by a shuffle
 * where the compiler has one (GCC 12, clang), else through memory. */
#if defined(__clang__) || __GNUC__ >= 12
#if defined(__AVX512F__)
#define FASTNB_LOW_HALF 0, 1, 2, 3, 4, 5, 6, 7
#define FASTNB_HIGH_HALF 8, 9, 10, 11, 12, 13, 14, 15
#elif defined(__AVX__)
#define FASTNB_LOW_HALF 0, 1, 2, 3
#define FASTNB_HIGH_HALF 4, 5, 6, 7
#else
#define FASTNB_LOW_HALF 0, 1
#define FASTNB_HIGH_HALF 2, 3
#endif
#define FASTNB_WIDEN16F(acc, sums)                                            \
    for (int q_ = 0; q_ < FASTNB_KDE_FLOAT_PARTS; q_++) {                     \
        acc[2 * q_] += __builtin_convertvector(                               \
            __builtin_shufflevector(sums[q_], sums[q_], FASTNB_LOW_HALF),     \
            fastnb_vec);                                                      \
        acc[2 * q_ + 1] += __builtin_convertvector(                           \
            __builtin_shufflevector(sums[q_], sums[q_], FASTNB_HIGH_HALF),    \
            fastnb_vec);                                                      \
    }
#else
#define FASTNB_WIDEN16F(acc, sums)                                            \
    do {                                                                      \
        float f_[FASTNB_KDE_BLOCK];                                           \
        memcpy(f_, sums, sizeof f_);                                          \
        for (int q_ = 0; q_ < FASTNB_KDE_PARTS; q_++)                         \
            acc[q_] += fastnb_load_widened(f_ + q_ * FASTNB_LANES);           \
    } while (0)
#endif
#define FASTNB_TAIL16(acc, p, a, g, d, s)                                     \
    for (int q_ = 0; q_ < FASTNB_KDE_PARTS; q_++)                             \
        acc[q_] += fastnb_load_widened((p) + q_ * FASTNB_LANES)               \
            - fastnb_load((a) + q_ * FASTNB_LANES) * (d)                      \
                  * ((s) - 2.0 * fastnb_load((g) + q_ * FASTNB_LANES))
#else
#define FASTNB_ZERO8(acc) double acc[FASTNB_BLOCK] = {0, 0, 0, 0, 0, 0, 0, 0}
#define FASTNB_AXPY8(acc, v, p)                                               \
    for (int k_ = 0; k_ < FASTNB_BLOCK; k_++)                                 \
        acc[k_] += (v) * (p)[k_]
#define FASTNB_DIFF8(acc, p, q)                                               \
    for (int k_ = 0; k_ < FASTNB_BLOCK; k_++)                                 \
        acc[k_] += (p)[k_] - (q)[k_]
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
#define FASTNB_ZERO16(acc) double acc[FASTNB_KDE_BLOCK] = {0}
#define FASTNB_ZERO16F(acc) float acc[FASTNB_KDE_BLOCK] = {0}
#define FASTNB_LERP16F(acc, p, q, t)                                          \
    for (int k_ = 0; k_ < FASTNB_KDE_BLOCK; k_++)                             \
        acc[k_] += (p)[k_] + (t) * ((q)[k_] - (p)[k_])
#define FASTNB_WIDEN16F(acc, sums)                                            \
    for (int k_ = 0; k_ < FASTNB_KDE_BLOCK; k_++)                             \
        acc[k_] += (double) sums[k_]
#define FASTNB_TAIL16(acc, p, a, g, d, s)                                     \
    for (int k_ = 0; k_ < FASTNB_KDE_BLOCK; k_++)                             \
        acc[k_] += (double) (p)[k_] - (a)[k_] * (d) * ((s) - 2.0 * (g)[k_])
#endif

/* The count families score 2 or 4 classes in a narrow block of their own
 * (their tables are 2 or 4 wide: fastnb._discrete.count_table_width), in
 * plain loops the compiler unrolls; the sums are those of the 8-wide block,
 * class by class in the same order. */
#define FASTNB_NARROW 4
#define FASTNB_AXPY_NARROW(acc, v, p, n)                                      \
    do {                                                                      \
        if ((n) == 2) {                                                       \
            acc[0] += (v) * (p)[0];                                           \
            acc[1] += (v) * (p)[1];                                           \
        } else {                                                              \
            for (int k_ = 0; k_ < FASTNB_NARROW; k_++)                        \
                acc[k_] += (v) * (p)[k_];                                     \
        }                                                                     \
    } while (0)

/* ---- Row helpers -------------------------------------------------------- */

/* Every row helper adds one row's terms to scores[0:n_padded] from tables
 * whose classes are padded with zeros to n_padded, a multiple of
 * FASTNB_BLOCK (fastnb._base.pad_classes), or for the count families 2 or
 * 4 (FASTNB_NARROW); the caller's scores row has room
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

/* w * x rounded on its own, never fused into the sum it is added to: the
 * product passes through an empty asm statement, which the compiler cannot
 * see through. The CSR and CSC counting kernels add each stored value's
 * product to a sum by different paths (a task a class, pieces of rows, a
 * task a column), which GCC fused or not as it optimised each (at -O2 but
 * not -O3, in the AVX2 and AVX-512 variants), so that the counts of the
 * same matrix differed in the last bit with the number of threads. */
static inline double fastnb_product(double w, double x)
{
    double p = w * x;
#if defined(__GNUC__) || defined(__clang__)
#if defined(__x86_64__) || defined(__i386__)
    __asm__("" : "+x"(p));
#elif defined(__aarch64__)
    __asm__("" : "+w"(p));
#else
    __asm__("" : "+m"(p));
#endif
#endif
    return p;
}

/* Whether a value of X is refused: infinite, NaN unless allow_nan (a
 * model with missing="ignore", to which NaN is a missing value), or, when
 * non_negative (the count families), below zero. x - x is 0 for every
 * finite x, NaN otherwise (the build has no -ffast-math, which would fold
 * it to 0). */
static inline int fastnb_refused(double x, int non_negative, int allow_nan)
{
    if (allow_nan && x != x)
        return 0;
    return non_negative ? !(x >= 0.0 && x < HUGE_VAL) : !(x - x == 0.0);
}

/* Whether any of the n values x[0], x[stride], ... is refused: a pass of
 * its own, which compilers vectorise (a test inside the scoring loops would
 * cost more). A row helper makes it before scoring when a refused value
 * could go unseen (a negative count, a NaN binarized to 0); otherwise only
 * when the row's first score comes out NaN or infinite, since a NaN or an
 * infinity in the row makes every score so (a score can also be -inf
 * without one: log 0, a class given prior 0). first_refused_value makes it
 * on each chunk of the values a fit checks.
 *
 * The tests of fastnb_refused, a loop for each case with no branch in it,
 * OR-ed into an integer as wide as a value (U): so the loops vectorise
 * (where the target's vectors take them: not SSE2's) into compares and ORs. */
#define FASTNB_ROW_REFUSED(T, U)                                              \
    static inline int fastnb_row_refused_##T(                                 \
        const T* x, Py_ssize_t stride, Py_ssize_t n, int non_negative,        \
        int allow_nan)                                                        \
    {                                                                         \
        const T inf = (T) HUGE_VAL;                                           \
        U refused = 0;                                                        \
        if (non_negative && !allow_nan)                                       \
            for (Py_ssize_t j = 0; j < n; j++) {                              \
                const T v = x[j * stride];                                    \
                refused |= (U) (!(v >= 0) | !(v < inf));                      \
            }                                                                 \
        else if (non_negative)                                                \
            for (Py_ssize_t j = 0; j < n; j++) {                              \
                const T v = x[j * stride];                                    \
                refused |= (U) ((v < 0) | (v == inf));                        \
            }                                                                 \
        else if (!allow_nan)                                                  \
            for (Py_ssize_t j = 0; j < n; j++) {                              \
                const T v = x[j * stride];                                    \
                refused |= (U) !(v - v == 0);                                 \
            }                                                                 \
        else                                                                  \
            for (Py_ssize_t j = 0; j < n; j++) {                              \
                const T v = x[j * stride];                                    \
                refused |= (U) ((v == inf) | (v == -inf));                    \
            }                                                                 \
        return refused != 0;                                                  \
    }
FASTNB_ROW_REFUSED(double, uint64_t)
FASTNB_ROW_REFUSED(float, uint32_t)

/* The same for integer values (counts as CountVectorizer makes them, and
 * booleans as uint8), which are always finite: refused only when
 * non_negative and below zero. */
#define FASTNB_ROW_REFUSED_INT(T, U)                                          \
    static inline int fastnb_row_refused_##T(                                 \
        const T* x, Py_ssize_t stride, Py_ssize_t n, int non_negative,        \
        int allow_nan)                                                        \
    {                                                                         \
        (void) allow_nan;                                                     \
        U refused = 0;                                                        \
        if (non_negative)                                                     \
            for (Py_ssize_t j = 0; j < n; j++)                                \
                refused |= (U) (x[j * stride] < 0);                           \
        return refused != 0;                                                  \
    }
FASTNB_ROW_REFUSED_INT(int64_t, uint64_t)
FASTNB_ROW_REFUSED_INT(int32_t, uint32_t)
FASTNB_ROW_REFUSED_INT(uint8_t, uint8_t)

/* A row helper's body is written once, as an always-inline function with
 * an allow_nan argument, and called with it constant: a model that refuses
 * NaN gets a copy of the loop without the test for it. */
#define FASTNB_ALWAYS_INLINE static inline __attribute__((always_inline))

/* scores[k] += sum of v * table[j, k] over the values v of a sparse row,
 * stored at data[start:stop] with their columns j at indices[start:stop]
 * (nnz stored values in all); table is (n_rows, n_padded). A value of zero
 * (or one binarized to zero) adds nothing, even where the table holds -inf:
 * x log p is 0 for x = 0. The values are checked (fastnb_row_refused).
 * With allow_nan (missing="ignore"), a NaN is a missing value: it adds
 * row j of missing (n_rows, n_padded), minus the term of a 0 that the
 * intercept holds, or nothing if missing is NULL (a term of 0 is 0). */
#define FASTNB_DISCRETE_CSR_ROW(NAME, T, I)                                   \
    FASTNB_ALWAYS_INLINE int NAME##_body(                                     \
        const T* data, const I* indices, Py_ssize_t start, Py_ssize_t stop,   \
        Py_ssize_t nnz, const double* table, Py_ssize_t n_rows,               \
        Py_ssize_t n_padded, double threshold, int binarize,                  \
        int non_negative, const int allow_nan, const double* missing,         \
        double* scores)                                                       \
    {                                                                         \
        FASTNB_CHECK(0 <= start && start <= stop && stop <= nnz);             \
        if (start == stop)                                                    \
            return 0;                                                         \
        const int check_first = non_negative || binarize;                     \
        if (check_first                                                       \
            && fastnb_row_refused_##T(data + start, 1, stop - start,          \
                                      non_negative, allow_nan))               \
            return 1;                                                         \
        if (n_padded < FASTNB_BLOCK) {                                        \
            /* 2 or 4 classes, in a narrow block (fastnb._discrete). */       \
            double acc[FASTNB_NARROW] = {0, 0, 0, 0};                         \
            for (Py_ssize_t p = start; p < stop; p++) {                       \
                if (p + FASTNB_AHEAD < nnz)                                   \
                    fastnb_prefetch(                                          \
                        table + indices[p + FASTNB_AHEAD] * n_padded,         \
                        n_padded * sizeof(double));                           \
                const Py_ssize_t j = indices[p];                              \
                FASTNB_CHECK(0 <= j && j < n_rows);                           \
                if (allow_nan && data[p] != data[p]) {                        \
                    if (missing)                                              \
                        FASTNB_AXPY_NARROW(acc, 1.0, missing + j * n_padded,  \
                                           n_padded);                         \
                    continue;                                                 \
                }                                                             \
                const double v =                                              \
                    fastnb_counted(data[p], threshold, binarize);             \
                if (v == 0.0)                                                 \
                    continue;                                                 \
                FASTNB_AXPY_NARROW(acc, v, table + j * n_padded, n_padded);   \
            }                                                                 \
            for (int k = 0; k < n_padded; k++)                                \
                scores[k] += acc[k];                                          \
        }                                                                     \
        for (Py_ssize_t k0 = 0; k0 < n_padded && n_padded >= FASTNB_BLOCK;   \
             k0 += FASTNB_BLOCK) {                                            \
            FASTNB_ZERO8(acc);                                                \
            for (Py_ssize_t p = start; p < stop; p++) {                       \
                if (k0 == 0 && p + FASTNB_AHEAD < nnz)                        \
                    fastnb_prefetch(                                          \
                        table + indices[p + FASTNB_AHEAD] * n_padded,         \
                        n_padded * sizeof(double));                           \
                const Py_ssize_t j = indices[p];                              \
                FASTNB_CHECK(0 <= j && j < n_rows);                           \
                if (allow_nan && data[p] != data[p]) {                        \
                    if (missing)                                              \
                        FASTNB_AXPY8(acc, 1.0, missing + j * n_padded + k0);  \
                    continue;                                                 \
                }                                                             \
                const double v =                                              \
                    fastnb_counted(data[p], threshold, binarize);             \
                if (v == 0.0)                                                 \
                    continue;                                                 \
                FASTNB_AXPY8(acc, v, table + j * n_padded + k0);              \
            }                                                                 \
            for (int k = 0; k < FASTNB_BLOCK; k++)                            \
                scores[k0 + k] += FASTNB_LANE(acc, k);                        \
        }                                                                     \
        if (!check_first && !(scores[0] - scores[0] == 0.0)                   \
            && fastnb_row_refused_##T(data + start, 1, stop - start, 0,       \
                                      allow_nan))                             \
            return 1;                                                         \
        return 0;                                                             \
    }                                                                         \
    static inline int NAME(                                                   \
        const T* data, const I* indices, Py_ssize_t start, Py_ssize_t stop,   \
        Py_ssize_t nnz, const double* table, Py_ssize_t n_rows,               \
        Py_ssize_t n_padded, double threshold, int binarize,                  \
        int non_negative, int allow_nan, const double* missing,               \
        double* scores)                                                       \
    {                                                                         \
        if (allow_nan)                                                        \
            return NAME##_body(data, indices, start, stop, nnz, table,        \
                               n_rows, n_padded, threshold, binarize,         \
                               non_negative, 1, missing, scores);             \
        return NAME##_body(data, indices, start, stop, nnz, table, n_rows,    \
                           n_padded, threshold, binarize, non_negative, 0,    \
                           NULL, scores);                                     \
    }

/* sums[j] += w * (x[j * stride] as counted) for the n values of a dense
 * row's block of columns; with allow_nan, a NaN adds nothing to sums and w
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
#define FASTNB_COUNT_DENSE_ROW(NAME, T)                                       \
    static FASTNB_UNFUSED int NAME(const T* x, Py_ssize_t stride,             \
                                   Py_ssize_t n, double w,                    \
                    double threshold, int binarize, int allow_nan,             \
                    double* sums, double* missed)                              \
    {                                                                         \
        FASTNB_NO_CONTRACT                                                    \
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
 * checked, and with allow_nan a NaN adds its row of missing (if any). As
 * in sparse rows, skip_zeros skips a zero, where the table may hold
 * infinity (a zero times -inf would be NaN) or the rows have few nonzeros
 * (the caller's choice: see _discrete_dense_rows); otherwise a zero is
 * added, times the table, as any value (the same sums, bit for bit). The
 * branch that skips was mispredicted wherever zeros and nonzeros mix: on
 * Poisson counts with 37% zeros, four times the time of a row of no
 * zeros. */
#define FASTNB_DISCRETE_DENSE_ROW(NAME, T)                                    \
    FASTNB_ALWAYS_INLINE int NAME##_body(                                     \
        const T* x, Py_ssize_t x_stride, Py_ssize_t n_features,               \
        const double* table, Py_ssize_t n_rows, Py_ssize_t n_padded,          \
        double threshold, int binarize, int non_negative,                     \
        const int allow_nan, const double* missing, const int skip_zeros,     \
        double* scores)                                                       \
    {                                                                         \
        FASTNB_CHECK(n_features <= n_rows);                                   \
        const int check_first = non_negative || binarize;                     \
        if (check_first                                                       \
            && fastnb_row_refused_##T(x, x_stride, n_features, non_negative,  \
                                      allow_nan))                             \
            return 1;                                                         \
        if (n_padded < FASTNB_BLOCK) {                                        \
            /* 2 or 4 classes, in a narrow block (fastnb._discrete). */       \
            double acc[FASTNB_NARROW] = {0, 0, 0, 0};                         \
            for (Py_ssize_t j = 0; j < n_features; j++) {                     \
                const T value = x[j * x_stride];                              \
                if (allow_nan && value != value) {                            \
                    if (missing)                                              \
                        FASTNB_AXPY_NARROW(acc, 1.0, missing + j * n_padded,  \
                                           n_padded);                         \
                    continue;                                                 \
                }                                                             \
                const double v =                                              \
                    skip_zeros                                                \
                        ? fastnb_counted(value, threshold, binarize)          \
                        : fastnb_counted_unknown(value, threshold, binarize); \
                if (skip_zeros && v == 0.0)                                   \
                    continue;                                                 \
                FASTNB_AXPY_NARROW(acc, v, table + j * n_padded, n_padded);   \
            }                                                                 \
            for (int k = 0; k < n_padded; k++)                                \
                scores[k] += acc[k];                                          \
        }                                                                     \
        for (Py_ssize_t k0 = 0; k0 < n_padded && n_padded >= FASTNB_BLOCK;   \
             k0 += FASTNB_BLOCK) {                                            \
            FASTNB_ZERO8(acc);                                                \
            for (Py_ssize_t j = 0; j < n_features; j++) {                     \
                const T value = x[j * x_stride];                              \
                if (allow_nan && value != value) {                            \
                    if (missing)                                              \
                        FASTNB_AXPY8(acc, 1.0, missing + j * n_padded + k0);  \
                    continue;                                                 \
                }                                                             \
                const double v =                                              \
                    skip_zeros                                                \
                        ? fastnb_counted(value, threshold, binarize)          \
                        : fastnb_counted_unknown(value, threshold, binarize); \
                if (skip_zeros && v == 0.0)                                   \
                    continue;                                                 \
                FASTNB_AXPY8(acc, v, table + j * n_padded + k0);              \
            }                                                                 \
            for (int k = 0; k < FASTNB_BLOCK; k++)                            \
                scores[k0 + k] += FASTNB_LANE(acc, k);                        \
        }                                                                     \
        if (!check_first && !(scores[0] - scores[0] == 0.0)                   \
            && fastnb_row_refused_##T(x, x_stride, n_features, 0, allow_nan)) \
            return 1;                                                         \
        return 0;                                                             \
    }                                                                         \
    static inline int NAME(                                                   \
        const T* x, Py_ssize_t x_stride, Py_ssize_t n_features,               \
        const double* table, Py_ssize_t n_rows, Py_ssize_t n_padded,          \
        double threshold, int binarize, int non_negative, int allow_nan,      \
        const double* missing, int skip_zeros, double* scores)                \
    {                                                                         \
        if (allow_nan)                                                        \
            return NAME##_body(x, x_stride, n_features, table, n_rows,        \
                               n_padded, threshold, binarize, non_negative,   \
                               1, missing, 1, scores);                        \
        if (skip_zeros)                                                       \
            return NAME##_body(x, x_stride, n_features, table, n_rows,        \
                               n_padded, threshold, binarize, non_negative,   \
                               0, NULL, 1, scores);                           \
        return NAME##_body(x, x_stride, n_features, table, n_rows, n_padded,  \
                           threshold, binarize, non_negative, 0, NULL, 0,     \
                           scores);                                           \
    }

/* scores[k] += log f_jk(x[j]) summed over the features of a dense row x
 * (elements x_stride apart), f_jk the kernel density of feature j in class
 * k, from its log on a grid (KernelDensityNB): feature j's grid has
 * n_points[j] points, at (origin[j] + g) / inv_step[j], and its log
 * densities are the rows table[j, g, :] of a (n_rows, n_points_max,
 * n_padded) table of floats, its classes padded to whole blocks of
 * FASTNB_KDE_BLOCK (scores has room for them). x_j at grid position u =
 * x_j inv_step[j] - origin[j] takes the value interpolated linearly
 * between the points about it; beyond the grid, the value at its end less
 * the Gaussian fall-off of the class's outermost mass: with e the end (0
 * or the last point), g_k that mass's position and a_k = 0.5 (grid step /
 * bandwidth)^2, all in grid units, log f = table[j, e, k] - a_k (u - e)
 * (u + e - 2 g_k), which is (u - g_k)^2 less (e - g_k)^2. tails is
 * (n_rows, 4, n_padded): per feature, the rows g (lower end), g (upper
 * end) and a. The features are taken FASTNB_KDE_FEATURES at a time: first
 * each one's place on its grid (its table rows, at random places, fetched
 * then), then their terms for each block of classes, summed in registers:
 * interpolated and summed in single precision, FASTNB_KDE_GROUP features
 * at a time, then in double (a vector holds twice as many floats as
 * doubles, and a block of 16 floats is a table row of one cache line; the
 * sums of a group keep a joint log-likelihood within about 1e-6 of its
 * size). A NaN falls to the upper end and makes the scores NaN; the
 * values are then checked, as in the Gaussian row. With MISSING, a
 * constant (the helper of a model with missing="ignore"), a NaN's feature
 * is left out (edge -2) and only infinity is refused. */
#define FASTNB_KDE_FEATURES 64
#define FASTNB_KDE_GROUP 8
#define FASTNB_KDE_DENSE_ROW(NAME, T, MISSING)                                \
    static inline int NAME(                                                   \
        const T* x, Py_ssize_t x_stride, Py_ssize_t n_features,               \
        const float* table, Py_ssize_t n_points_max, const double* origin,    \
        const double* inv_step, const Py_ssize_t* n_points,                   \
        const double* tails, Py_ssize_t n_rows, Py_ssize_t n_padded,          \
        double* scores)                                                       \
    {                                                                         \
        FASTNB_CHECK(n_features <= n_rows);                                   \
        FASTNB_CHECK(n_padded % FASTNB_KDE_BLOCK == 0);                       \
        const Py_ssize_t step = n_points_max * n_padded;                      \
        Py_ssize_t row[FASTNB_KDE_FEATURES], edge[FASTNB_KDE_FEATURES];        \
        float t[FASTNB_KDE_FEATURES];                                         \
        double d[FASTNB_KDE_FEATURES], s[FASTNB_KDE_FEATURES];                \
        for (Py_ssize_t j0 = 0; j0 < n_features; j0 += FASTNB_KDE_FEATURES) { \
            const Py_ssize_t m = n_features - j0 < FASTNB_KDE_FEATURES        \
                                     ? n_features - j0                        \
                                     : FASTNB_KDE_FEATURES;                   \
            for (Py_ssize_t i = 0; i < m; i++) {                              \
                const Py_ssize_t j = j0 + i;                                  \
                const double u = (double) x[j * x_stride] * inv_step[j]       \
                                 - origin[j];                                 \
                const Py_ssize_t last = n_points[j] - 1;                      \
                FASTNB_CHECK(1 <= last && last < n_points_max);               \
                if (MISSING && u != u) {                                      \
                    row[i] = 0;                                               \
                    edge[i] = -2;                                             \
                } else if (u >= 0.0 && u < (double) last) {                   \
                    const Py_ssize_t g = (Py_ssize_t) u;                      \
                    row[i] = j * step + g * n_padded;                         \
                    t[i] = (float) (u - (double) g);                          \
                    edge[i] = -1;                                             \
                    fastnb_prefetch(table + row[i],                           \
                                    2 * n_padded * sizeof(float));            \
                } else if (u < 0.0) {                                         \
                    row[i] = j * step;                                        \
                    edge[i] = j * 4 * n_padded;                               \
                    d[i] = u;                                                 \
                    s[i] = u;                                                 \
                } else {                                                      \
                    row[i] = j * step + last * n_padded;                      \
                    edge[i] = j * 4 * n_padded + n_padded;                    \
                    d[i] = u - (double) last;                                 \
                    s[i] = u + (double) last;                                 \
                }                                                             \
            }                                                                 \
            for (Py_ssize_t k0 = 0; k0 < n_padded; k0 += FASTNB_KDE_BLOCK) {  \
                FASTNB_ZERO16(acc);                                           \
                for (Py_ssize_t i0 = 0; i0 < m; i0 += FASTNB_KDE_GROUP) {     \
                    const Py_ssize_t i1 = i0 + FASTNB_KDE_GROUP < m           \
                                              ? i0 + FASTNB_KDE_GROUP         \
                                              : m;                            \
                    FASTNB_ZERO16F(group);                                    \
                    for (Py_ssize_t i = i0; i < i1; i++) {                    \
                        const float* p = table + row[i] + k0;                 \
                        if (MISSING && edge[i] == -2)                         \
                            continue;                                         \
                        if (edge[i] < 0) {                                    \
                            FASTNB_LERP16F(group, p, p + n_padded, t[i]);     \
                        } else {                                              \
                            const double* a_ = tails + (j0 + i) * 4 * n_padded \
                                               + 2 * n_padded + k0;           \
                            FASTNB_TAIL16(acc, p, a_, tails + edge[i] + k0,   \
                                          d[i], s[i]);                        \
                        }                                                     \
                    }                                                         \
                    FASTNB_WIDEN16F(acc, group);                              \
                }                                                             \
                for (int k = 0; k < FASTNB_KDE_BLOCK; k++)                    \
                    scores[k0 + k] += FASTNB_LANE(acc, k);                    \
            }                                                                 \
        }                                                                     \
        if (!(scores[0] - scores[0] == 0.0)                                   \
            && fastnb_row_refused_##T(x, x_stride, n_features, 0, MISSING))   \
            return 1;                                                         \
        return 0;                                                             \
    }

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

/* ---- Category codes --------------------------------------------------- */

/* Whether a double is a whole number: below 2^52, adding and taking away
 * 2^52 rounds it to one; from 2^52 on every double is. No branch, so that
 * loops over codes vectorise; exact, since the build never uses
 * -ffast-math. False for NaN. */
static inline int fastnb_whole(double v)
{
    return (v >= 0x1p52) | ((v + 0x1p52) - 0x1p52 == v);
}

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

/* Whether each of the n values at x is a whole number, not negative, or
 * NaN: the count kernels cut a class's sums in parts only where they are
 * exact. Below BIG (2^52 for a double, 2^23 for a float), adding BIG rounds
 * a value to a whole number, and taking it away again gives it back only
 * if it was one; from BIG on every value is whole (and the test refuses
 * some: it need not take every one). A pass OR-ed into an integer as wide
 * as a value, as fastnb_row_refused's, so that it vectorises. */
#define FASTNB_ROW_WHOLE(T, U, BIG)                                           \
    static inline int fastnb_row_whole_##T(const T* x, Py_ssize_t n)          \
    {                                                                         \
        U refused = 0;                                                        \
        for (Py_ssize_t j = 0; j < n; j++) {                                  \
            const T v = x[j];                                                 \
            refused |= (U) ((v == v) & ((v < 0) | ((v + BIG) - BIG != v)));   \
        }                                                                     \
        return refused == 0;                                                  \
    }
FASTNB_ROW_WHOLE(double, uint64_t, 0x1p52)
FASTNB_ROW_WHOLE(float, uint32_t, 0x1p23f)
/* Integers are whole numbers: only a negative one is refused (an unsigned
 * one never is). */
#define FASTNB_ROW_WHOLE_INT(T, U)                                            \
    static inline int fastnb_row_whole_##T(const T* x, Py_ssize_t n)          \
    {                                                                         \
        U refused = 0;                                                        \
        for (Py_ssize_t j = 0; j < n; j++)                                    \
            refused |= (U) (x[j] < 0);                                        \
        return refused == 0;                                                  \
    }
FASTNB_ROW_WHOLE_INT(int64_t, uint64_t)
FASTNB_ROW_WHOLE_INT(int32_t, uint32_t)
FASTNB_ROW_WHOLE_INT(uint8_t, uint8_t)

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

/* exp(x) for x <= 0, a score less its row's largest, on each lane of a
 * vector of the target's width, with no call and no branch: for the x86-64
 * variants with AVX2 or AVX-512. As a scalar loop the compiler vectorised,
 * 10 million took 41 and 15 ms there against libm's 53, and 74 with SSE2
 * alone, so other builds call libm's exp. It is written on vectors
 * because the compiler's were AVX2's width even in the AVX-512 variant
 * (the finishing of CategoricalNB's rows is a fifth faster so). -inf
 * gives 0, NaN gives NaN. Cody and Waite's reduction x = n ln 2 + r, |r|
 * <= ln(2) / 2, with ln 2 split in two so that n ln2_hi is exact; exp(r) by
 * its Taylor polynomial of degree 13 (the rest is below 2^-56 of it), in
 * Horner's form; then times 2^n, applied as two halves so that results
 * below 2^-1022 come out subnormal, rounded once, as libm's do. Within an
 * ulp of glibc's exp from -760 to 0 (20 million points, measured). n is
 * found by adding 1.5 * 2^52, which rounds x / ln 2 to an integer and
 * leaves it in the low bits. */
#if defined(__AVX2__) && defined(FASTNB_LANES)
typedef int64_t fastnb_veci __attribute__((vector_size(sizeof(fastnb_vec))));
typedef uint64_t fastnb_vecu __attribute__((vector_size(sizeof(fastnb_vec))));

static inline fastnb_vec fastnb_exp_negative(fastnb_vec x)
{
    const double shift = 0x1.8p52;
    uint64_t shift_bits;
    memcpy(&shift_bits, &shift, sizeof shift_bits);
    /* Far below exp's least subnormal: -1400 (NaN compares false). */
    const fastnb_veci low = x < -1400.0;
    const fastnb_vec least = (fastnb_vec) {0} - 1400.0;
    x = (fastnb_vec) (((fastnb_veci) x & ~low) | ((fastnb_veci) least & low));
    fastnb_vec t = x * 0x1.71547652b82fep0 + shift;
    fastnb_vec n = t - shift;
    fastnb_vec r = (x - n * 0x1.62e42fee00000p-1) - n * 0x1.a39ef35793c76p-33;
    fastnb_vec p = (fastnb_vec) {0} + 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    /* n as an integer, from -2020 to 0 (any value for NaN, whose product
     * stays NaN); its halves are exponents of normal doubles. */
    fastnb_veci k = (fastnb_veci) ((fastnb_vecu) t - shift_bits);
    fastnb_veci half = k / 2;
    fastnb_vecu a_bits = (fastnb_vecu) (half + 1023) << 52;
    fastnb_vecu b_bits = (fastnb_vecu) (k - half + 1023) << 52;
    return p * (fastnb_vec) a_bits * (fastnb_vec) b_bits;
}

/* scores[k] = exp(scores[k] - top) for k < n, top at least every score
 * (fastnb_exp_negative). The first `room` entries are taken, a multiple
 * of FASTNB_BLOCK (so of the lanes), the ones past n computed and never
 * read, so that the exps are whole vectors (5 classes then cost as little
 * as 8). */
static inline void fastnb_exp_less(double* scores, Py_ssize_t n,
                                   Py_ssize_t room, double top)
{
    (void) n;
    for (Py_ssize_t k = 0; k < room; k += FASTNB_LANES) {
        const fastnb_vec v = fastnb_exp_negative(fastnb_load(scores + k) - top);
        memcpy(scores + k, &v, sizeof v);
    }
}
#else
/* scores[k] = exp(scores[k] - top) for k < n, by libm's exp. */
static inline void fastnb_exp_less(double* scores, Py_ssize_t n,
                                   Py_ssize_t room, double top)
{
    (void) room;
    for (Py_ssize_t k = 0; k < n; k++)
        scores[k] = exp(scores[k] - top);
}
#endif

/* Sets the n doubles at p to zero, their lines fetched for writing first,
 * all at once: a chunk's new table is not in cache, and zeroing it line by
 * line waits on each miss in turn (which made the one-pass count slower,
 * and erratic on a busy machine; measured). */
static inline void fastnb_zero(double* p, Py_ssize_t n)
{
#if defined(__GNUC__) || defined(__clang__)
    for (Py_ssize_t k = 0; k < n; k += 8)
        __builtin_prefetch(p + k, 1);
#endif
    for (Py_ssize_t k = 0; k < n; k++)
        p[k] = 0.0;
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

#endif /* FASTNB_ROWS_H */
