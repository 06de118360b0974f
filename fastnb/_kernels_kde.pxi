# Included by _kernels.pyx: KernelDensityNB's binning and tails.

# ---------------------------------------------------------------------------
# Kernel density (fastnb._kde): linear binning of the values onto a grid per
# feature, the log densities of the tails of the binned mixture, and
# scoring by linear interpolation of the log densities (kde_dense_row in
# _rows.h).
# ---------------------------------------------------------------------------

def kde_bin_dense(
    const floating[:, :] X,
    const intp_t[::1] label_ptr,
    const intp_t[::1] label_class,
    const double[:] label_weight,
    const double[::1] inv_step,
    const double[::1] origin,
    Py_ssize_t n_grid,
    Py_ssize_t block_width,
    bint skip_nan,
    double[:, ::1] grid,
    int n_threads,
):
    """Linear binning of dense X into grid (n_classes, n_features * n_grid).

    Feature j's value x sits at grid position u = x inv_step[j] - origin[j],
    which the caller made lie in 0 .. n_grid - 1; the sample's weight goes
    to the points floor(u) and floor(u) + 1 of its class (of each of its
    labels: the label arrays), split as 1 - t and t (t = u - floor(u)).
    Labels of weight 0 are skipped, and with
    skip_nan (missing="ignore") NaN values; X holds no NaN otherwise. A
    task is a block of block_width features, which reads the rows in
    order, so no result depends on the number of threads.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t n_blocks = (n_features + block_width - 1) // block_width
    cdef bint soft = label_ptr.shape[0] > 0
    cdef Py_ssize_t b, i, j, g, k, e, stop
    cdef double u, t, w
    for b in prange(n_blocks, nogil=True, schedule="dynamic", num_threads=n_threads):
        stop = min((b + 1) * block_width, n_features)
        for i in range(n_samples):
            for e in range(label_ptr[i] if soft else i,
                           label_ptr[i + 1] if soft else i + 1):
                w = label_weight[e]
                if w == 0.0:
                    continue
                k = label_class[e]
                if not skip_nan:
                    for j in range(b * block_width, stop):
                        u = <double> X[i, j] * inv_step[j] - origin[j]
                        g = <Py_ssize_t> u
                        t = u - <double> g
                        grid[k, j * n_grid + g] += (1.0 - t) * w
                        if t > 0.0:
                            grid[k, j * n_grid + g + 1] += t * w
                    continue
                # The same loop leaving NaN out (kept apart: no test per value
                # where X has no NaN).
                for j in range(b * block_width, stop):
                    u = <double> X[i, j] * inv_step[j] - origin[j]
                    if u != u:
                        continue
                    g = <Py_ssize_t> u
                    t = u - <double> g
                    grid[k, j * n_grid + g] += (1.0 - t) * w
                    if t > 0.0:
                        grid[k, j * n_grid + g + 1] += t * w


def kde_tail_log_density(
    const double[:, ::1] counts,
    const intp_t[:, ::1] left,
    const intp_t[:, ::1] right,
    const double[::1] scale,
    const intp_t[::1] reach,
    const double[::1] log_norm,
    const intp_t[::1] points,
    double[:, ::1] out,
    int n_threads,
):
    """The log density of a binned Gaussian mixture at some grid points,
    summed directly in log space (where an FFT's rounding would swamp it).

    counts (n_classes, n_points): each class's masses on the grid; left and
    right: the nearest point holding mass at or below (-1 if none) and at
    or above (n_points if none) each point. At the point g of class k
    (points holds k * n_points + g), with d the distance to the nearest
    mass and s = scale[k] (grid step / bandwidth), out[k, g] is log_norm[k]
    + log sum_i counts[k, i] exp(-(s (g - i))^2 / 2), over the masses within
    d + reach[k] points of g (farther ones add less than exp(-(s
    reach)^2 / 2) of the nearest's term), each term taken relative to the
    nearest's, so that nothing underflows.
    """
    cdef Py_ssize_t n_points = counts.shape[1]
    cdef Py_ssize_t p, k, g, i, lo, hi, near
    cdef double s, top, total, d
    for p in prange(
        points.shape[0], nogil=True, schedule="dynamic", num_threads=n_threads
    ):
        k = points[p] // n_points
        g = points[p] - k * n_points
        near = n_points
        if left[k, g] >= 0:
            near = g - left[k, g]
        if right[k, g] < n_points and right[k, g] - g < near:
            near = right[k, g] - g
        s = scale[k]
        top = -0.5 * (s * near) * (s * near)
        lo = max(0, g - near - reach[k])
        hi = min(n_points - 1, g + near + reach[k])
        total = 0.0
        for i in range(lo, hi + 1):
            if counts[k, i] > 0.0:
                d = s * (g - i)
                total = total + counts[k, i] * exp(-0.5 * d * d - top)
        out[k, g] = top + log(total) + log_norm[k]
