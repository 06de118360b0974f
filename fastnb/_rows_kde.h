/* Included by _rows.h: KernelDensityNB's row helper. */
#ifndef FASTNB_ROWS_KDE_H
#define FASTNB_ROWS_KDE_H

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

#endif /* FASTNB_ROWS_KDE_H */
