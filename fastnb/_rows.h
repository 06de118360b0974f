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
 * Each family's row helpers are in a header of its own, included at the end
 * (_rows_counts.h, _rows_gaussian.h, _rows_categorical.h, _rows_kde.h);
 * here, what they share.
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

/* ---- Whole numbers ---------------------------------------------------- */

/* Whether a double is a whole number: below 2^52, adding and taking away
 * 2^52 rounds it to one; from 2^52 on every double is. No branch, so that
 * loops over codes vectorise; exact, since the build never uses
 * -ffast-math. False for NaN. */
static inline int fastnb_whole(double v)
{
    return (v >= 0x1p52) | ((v + 0x1p52) - 0x1p52 == v);
}

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

/* ---- Finishing a row, zeroing a table ---------------------------------- */

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

/* ---- Each family's row helpers ---------------------------------------- */

#include "_rows_counts.h"
#include "_rows_gaussian.h"
#include "_rows_categorical.h"
#include "_rows_kde.h"

#endif /* FASTNB_ROWS_H */
