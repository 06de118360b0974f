"""Kernel density Naive Bayes: a Gaussian kernel density per class and feature.

The binned algorithm keeps, per class and feature, the samples' weights
linearly binned onto a grid (Wand 1994): each weight is split between the
two grid points about the value, in proportion to its nearness. A
feature's grid is a lattice of a power-of-two step, its points the
multiples of the step, and its range the feature's range over all the data
seen: the least step whose lattice covers that range in at most ``n_grid``
points. A lattice of the same step over a wider range holds the narrower
one; one of twice the step holds every other point, and linear binning
onto it is the same as binning the finer lattice's masses onto it, so two
batches' grids move onto the lattice of their joined range exactly (to
rounding) and add up: partial_fit and merge never refuse new values and
equal one fit. The moments (weighted count, mean, sum of squared
deviations, sum of squared weights) give the bandwidths.

Tables: each class's binned masses convolved with its Gaussian kernel (an
FFT, O(G log G) a class and feature) on a table grid that reaches ``PAD``
bandwidths beyond the data; where the density falls below ``FFT_FLOOR`` of
its peak, the FFT's rounding would swamp it, and it is summed directly in
log space instead. Beyond the table, a value's log density is the table's
end value less the Gaussian fall-off of the class's outermost mass. The
tables are kept in single precision, and the scoring kernel interpolates
them linearly and sums eight features' terms at a time in single precision
(then in double): half the bytes of a table read at random places, and on
CPUs whose vectors of floats are narrower registers, half the arithmetic;
a joint log-likelihood moves by about 1e-6 of its size, far below the
binning's 1e-3.

The exact algorithm keeps the samples themselves (in one canonical order,
so that any split of the data combines to the statistics of one fit) and
scores the exact mixture, a log-sum-exp over them.
"""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral, Real
from typing import TYPE_CHECKING, Literal, NamedTuple

import numpy as np
import scipy.fft
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.utils._param_validation import Interval, StrOptions

from fastnb._base import (
    BaseNB,
    finish_scores,
    fitted_table,
    observed_count,
    observed_weights,
    uniform_priors,
)
from fastnb._explain import binned_values
from fastnb._gaussian import (
    LARGEST_VALUE,
    class_moments,
    merge_moments,
    pooled_moments,
)
from fastnb._labels import (
    SoftLabels,
    class_weights,
    label_arrays,
    positive_rows,
    read_only,
    squared_weights,
)
from fastnb._plans import dense_block_width
from fastnb._simd import kernels as _kernels
from fastnb._statistics import (
    CLASS_COUNT,
    DTYPE,
    FLOAT_DTYPES,
    MISSING_COUNT,
    SUM_RTOL,
    Statistic,
)
from fastnb._threads import (
    data_size,
    effective_n_threads,
    pad_classes,
    padded_class_count,
)
from fastnb._validation import (
    MISSING_CONSTRAINT,
    check_class_prior,
    check_values,
    ignores_missing,
    validate_input,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fastnb._typing import Missing

# Lattice indices stay within this magnitude, so that a value's position
# x / step - origin is exact; and the step is at least 2**MIN_EXPONENT.
MAX_INDEX = 2.0**50
MIN_EXPONENT = -1000
# The table grid reaches PAD of the largest bandwidth beyond the data, and
# is coarsened while the smallest bandwidth still spans RESOLUTION steps.
PAD = 5.0
RESOLUTION = 32
# The FFT's kernel is cut at CUT bandwidths (the rest is below its rounding).
CUT = 9.0
# Densities below FFT_FLOOR of their peak are summed directly, over the
# masses within REACH bandwidths beyond the nearest (farther ones add less
# than exp(-REACH**2 / 2) of its term).
FFT_FLOOR = 1e-3
REACH = 9.0
# A standard deviation below ROUNDING of the size of a feature's values is
# rounding (of a constant feature's merged moments): the bandwidth rules
# take it as zero.
ROUNDING = 2.0**-40
# Values of the exact algorithm's differences scored at a time.
EXACT_CHUNK = 1 << 20


def lattice(low, high, n_grid):
    """The statistics' grid of each feature: ``(step, origin, n_points)``.

    ``step`` (n_features,) is the least power of two 2**e, e >= MIN_EXPONENT,
    such that the points ``(origin + g) * step``, g = 0 .. n_points - 1, with
    ``origin = floor(low / step)`` and the last ``ceil(high / step)``, are
    at most ``n_grid`` and their indices at most MAX_INDEX in magnitude. A
    wider range never gets a finer step, so the lattice of two ranges joined
    holds each one's (the step of one fit on both data sets).
    """
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    magnitude = np.maximum(np.abs(low), np.abs(high))
    with np.errstate(divide="ignore", invalid="ignore"):
        guess = np.maximum(
            np.log2((high - low) / (n_grid - 2)), np.log2(magnitude / MAX_INDEX)
        )
    guess = np.nan_to_num(np.ceil(guess), neginf=MIN_EXPONENT, posinf=MIN_EXPONENT)
    exponent = np.maximum(guess, MIN_EXPONENT).astype(np.int64)

    def fits(e):
        step = np.ldexp(1.0, e)
        first, last = np.floor(low / step), np.ceil(high / step)
        return (last - first + 1 <= n_grid) & (np.maximum(-first, last) <= MAX_INDEX)

    # The guess may be a step off either way.
    while not (ok := fits(exponent)).all():
        exponent = np.where(ok, exponent, exponent + 1)
    while (finer := fits(exponent - 1) & (exponent > MIN_EXPONENT)).any():
        exponent = np.where(finer, exponent - 1, exponent)
    step = np.ldexp(1.0, exponent)
    origin = np.floor(low / step)
    n_points = (np.ceil(high / step) - origin + 1).astype(np.intp)
    return step, origin, n_points


def rebinned(grid, n_columns, source, target, n_target_columns):
    """Masses on each feature's ``source`` lattice moved to its ``target`` one.

    ``grid`` (n_classes, n_features * n_columns) holds feature j's masses in
    columns j * n_columns + g, g below the source's n_points; ``source`` is
    (step, origin, n_points), ``target`` (step, origin): the target's step
    a power-of-two multiple of the source's and its points among the
    source's. Each mass goes to the two target points about it, as linear
    binning of its samples onto the target would put them (exactly: the
    target's hat functions are sums of the source's). Returns (n_classes,
    n_features * n_target_columns).
    """
    step, origin, n_points = source
    target_step, target_origin = target
    n_features = len(step)
    index = np.arange(n_columns)
    ratio = step / target_step
    # Exact: integers times powers of two, less integers.
    u = (origin[:, None] + index) * ratio[:, None] - target_origin[:, None]
    kept = index < n_points[:, None]
    feature, point = np.nonzero(kept)
    u = u[kept]
    lower = np.floor(u)
    share = u - lower
    lower = lower.astype(np.intp)
    rows = feature * n_columns + point
    columns = feature * n_target_columns + lower
    upper = share > 0
    move = sp.csr_array(
        (
            np.concatenate([1.0 - share, share[upper]]),
            (
                np.concatenate([rows, rows[upper]]),
                np.concatenate([columns, columns[upper] + 1]),
            ),
        ),
        shape=(n_features * n_columns, n_features * n_target_columns),
    )
    return np.asarray((move.T @ grid.T).T, dtype=np.float64)


def joined_extents(first, second):
    """low and high of two statistics' data together (of either if the other
    has none; with missing values, feature by feature)."""
    if first.missing_count is not None:
        has = [observed_weights(part).sum(axis=0) > 0 for part in (first, second)]
        both = has[0] & has[1]
        return tuple(
            np.where(both, joined(one, other), np.where(has[0], one, other))
            for one, other, joined in (
                (first.low, second.low, np.minimum),
                (first.high, second.high, np.maximum),
            )
        )
    if first.class_count.sum() == 0:
        return second.low, second.high
    if second.class_count.sum() == 0:
        return first.low, first.high
    return np.minimum(first.low, second.low), np.maximum(first.high, second.high)


def observed_squares(statistics):
    """As observed_weights, for the sums of the squared weights."""
    return observed_count(statistics.weight_squares, statistics.missing_weight_squares)


def canonical_order(points, point_weight):
    """The exact algorithm's samples sorted by class, then values, then weight."""
    if points.shape[0] == 0:
        return points, point_weight
    classes = np.argmax(point_weight > 0, axis=0)
    weights = point_weight.max(axis=0)
    order = np.lexsort((weights, *points.T[::-1], classes))
    return points[order], point_weight[:, order]


def bandwidths(statistics, bandwidth, adjust):
    """The bandwidth of each class and feature (n_classes, n_features).

    A rule ("scott", "silverman") gives ``adjust * factor * sigma`` with the
    definitions of :class:`scipy.stats.gaussian_kde`: the effective sample
    size ``n = W**2 / sum w**2`` (W the class weight), the factor ``n **
    (-1/5)`` (Scott) or ``(3 n / 4) ** (-1/5)`` (Silverman), and sigma**2
    the weighted variance ``ssd / (W - sum w**2 / W)``. Where that is not a
    positive number (one sample, or a feature constant in the class: a
    sigma below ROUNDING of the feature's largest magnitude), sigma is the
    feature's over all classes, or 1 if that too is zero. A number
    (or one per feature) is the bandwidth itself, times ``adjust``. Classes
    without weight get 1 (their tables are flat). With missing values, W and
    sum w**2 are those of each class's observed values of each feature, and
    a class without any gets 1 for that feature.
    """
    count = observed_weights(statistics)
    ssd = statistics.ssd
    if not isinstance(bandwidth, str):
        h = adjust * np.broadcast_to(np.asarray(bandwidth, dtype=np.float64), ssd.shape)
        return np.where(count > 0, h, 1.0)
    # Without missing values, the weights are a column (n_classes, 1).
    squares = observed_squares(statistics)
    with np.errstate(all="ignore"):
        seen = count > 0
        safe = np.where(seen, count, 1.0)
        n_effective = np.where(seen, safe / np.where(seen, squares, 1.0) * safe, 1.0)
        if bandwidth == "silverman":
            n_effective = 0.75 * n_effective
        dof = np.where(seen, count - squares / safe, 0.0)
        variance = np.where(dof > 0, ssd / np.where(dof > 0, dof, 1.0), 0.0)
        total, _, overall_ssd = pooled_moments(count, statistics.mean, ssd)
        total = total[0]
        safe_total = np.where(total > 0, total, 1.0)
        pooled_dof = np.where(total > 0, total - squares.sum(axis=0) / safe_total, 0.0)
        pooled = np.where(
            pooled_dof > 0,
            overall_ssd[0] / np.where(pooled_dof > 0, pooled_dof, 1.0),
            0.0,
        )
        # A constant feature's moments, merged, may keep a variance of
        # rounding: one below ROUNDING of the values' size counts as zero.
        floor = (
            ROUNDING * np.maximum(np.abs(statistics.low), np.abs(statistics.high))
        ) ** 2
        sigma = np.sqrt(
            np.where(variance > floor, variance, np.where(pooled > floor, pooled, 1.0))
        )
        return np.where(seen, adjust * n_effective**-0.2 * sigma, 1.0)


def table_grid(low, high, n_grid, h_min, h_max):
    """The table grid of each feature: ``(step, origin, n_points)``.

    A coarsening of the statistics' lattice (its step times a power of two)
    reaching PAD * h_max beyond it: as coarse as keeps RESOLUTION steps in
    h_min, and coarser if need be to hold at most 2 * n_grid points.
    """
    step, origin, n_points = lattice(low, high, n_grid)
    pad = PAD * h_max
    start, stop = origin * step - pad, (origin + n_points - 1) * step + pad
    with np.errstate(divide="ignore"):
        times = np.floor(np.log2(h_min / (RESOLUTION * step)))
    times = np.clip(np.nan_to_num(times, posinf=0.0, neginf=0.0), 0, None)
    table_step = np.ldexp(step, times.astype(np.int64))

    def size(s):
        return np.ceil(stop / s) - np.floor(start / s) + 1

    while (big := size(table_step) > 2 * n_grid).any():
        table_step = np.where(big, 2 * table_step, table_step)
    table_origin = np.floor(start / table_step)
    return table_step, table_origin, size(table_step).astype(np.intp)


def binned_density_tables(statistics, h, n_grid):
    """Scoring tables of the binned algorithm (see the module's docstring).

    Returns (table (n_features, n_points_max, n_padded) of log densities
    in single precision, classes padded to whole blocks of KDE_CLASS_BLOCK,
    origin, inv_step, n_points of the table grids, tails (n_features, 4,
    n_padded): per class, the centres of its masses as seen from the table's
    first and last points (seen_centre), in grid units, and 0.5 (step /
    bandwidth)**2).
    """
    n_classes, n_features = h.shape
    # Each class's weight of each feature (its observed values').
    weights = np.broadcast_to(observed_weights(statistics), h.shape)
    seen_entries = weights > 0
    h_min = np.min(h, axis=0, where=seen_entries, initial=np.inf)
    h_max = np.max(h, axis=0, where=seen_entries, initial=-np.inf)
    # A feature no class has values of: its bandwidths (all 1).
    h_min = np.where(seen_entries.any(axis=0), h_min, h.min(axis=0))
    h_max = np.where(seen_entries.any(axis=0), h_max, h.max(axis=0))
    source = lattice(statistics.low, statistics.high, n_grid)
    step, origin, n_points = table_grid(
        statistics.low, statistics.high, n_grid, h_min, h_max
    )
    n_max = int(n_points.max())
    masses = rebinned(statistics.grid, n_grid, source, (step, origin), n_max)
    n_padded = padded_class_count(n_classes, _kernels.KDE_CLASS_BLOCK)
    table = zeros_on_cache_lines((n_features, n_max, n_padded), np.float32)
    tails = np.zeros((n_features, 4, n_padded))
    n_threads = effective_n_threads(n_classes * n_max)
    for j in range(n_features):
        n = int(n_points[j])
        seen = seen_entries[:, j]
        count = weights[:, j]
        mass = np.ascontiguousarray(masses[seen, j * n_max : j * n_max + n])
        if not len(mass):
            continue
        # Linear binning spreads a sample over two points, adding t (1 - t)
        # step**2 to its variance, step**2 / 6 on average: the binned
        # mixture is convolved with a kernel narrower by as much.
        narrower = np.sqrt(
            np.maximum(h[seen, j] ** 2 - step[j] ** 2 / 6, h[seen, j] ** 2 / 4)
        )
        log_density = log_binned_density(
            mass, count[seen], narrower, step[j], n_threads
        )
        table[j, :n, :n_classes][:, seen] = log_density.T
        for row, end in enumerate((0, n - 1)):
            tails[j, row, :n_classes][seen] = seen_centre(mass, end, step[j] / narrower)
        tails[j, 2, :n_classes][seen] = 0.5 * (step[j] / narrower) ** 2
    return table, origin, 1.0 / step, n_points, tails


def zeros_on_cache_lines(shape, dtype):
    """A new array of zeros whose data starts on a 64-byte cache line (a
    table's rows of 16 floats then lie on one line each)."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buffer = np.zeros(size + 64, dtype=np.uint8)
    start = -buffer.ctypes.data % 64
    return buffer[start : start + size].view(dtype).reshape(shape)


def seen_centre(mass, end, scale):
    """The centre of each class's masses as seen from the grid point ``end``:
    their mean position (grid units) weighted by their terms there, mass
    times exp(-(scale (end - i))**2 / 2).

    Beyond the table the log density goes on as one Gaussian about this
    centre, which has the mixture's value and slope at the table's end.
    """
    points = np.arange(mass.shape[1])
    with np.errstate(divide="ignore"):
        log_term = np.log(mass) - 0.5 * (scale[:, None] * (points - end)) ** 2
    term = np.exp(log_term - log_term.max(axis=1, keepdims=True))
    return (term @ points) / term.sum(axis=1)


def log_binned_density(mass, weight, h, step, n_threads):
    """log of sum_i mass[k, i] N(g step; i step, h[k]**2) / weight[k] at each
    grid point g: by FFT where at least FFT_FLOOR of the peak, else directly
    (kernel kde_tail_log_density). (n_classes, n_points), classes with weight."""
    n_classes, n = mass.shape
    reach = int(min(n - 1, np.ceil(CUT * h.max() / step)))
    offsets = np.arange(-reach, reach + 1) * step
    kernel = np.exp(-0.5 * (offsets / h[:, None]) ** 2) / (
        np.sqrt(2 * np.pi) * h[:, None]
    )
    size = scipy.fft.next_fast_len(n + 2 * reach, real=True)
    density = (
        scipy.fft.irfft(
            scipy.fft.rfft(mass, size) * scipy.fft.rfft(kernel, size), size
        )[:, reach : reach + n]
        / weight[:, None]
    )
    peak = density.max(axis=1, keepdims=True)
    direct = ~(density >= FFT_FLOOR * peak)
    log_density = np.log(np.where(direct, 1.0, density))
    if direct.any():
        points = np.arange(n)
        left = np.maximum.accumulate(np.where(mass > 0, points, -1), axis=1)
        right = np.minimum.accumulate(np.where(mass > 0, points, n)[:, ::-1], axis=1)[
            :, ::-1
        ]
        _kernels.kde_tail_log_density(
            mass,
            np.ascontiguousarray(left, dtype=np.intp),
            np.ascontiguousarray(right, dtype=np.intp),
            step / h,
            np.ceil(REACH * h / step).astype(np.intp),
            -np.log(weight * np.sqrt(2 * np.pi) * h),
            np.flatnonzero(direct).astype(np.intp),
            log_density,
            n_threads,
        )
    return log_density


# KernelDensityNB's statistics: each class's sums of w and of w**2, the
# moments of its values, the range of the values; binned, each class's
# masses on each feature's lattice; exact, the samples (their missing values
# NaN) and each one's weight in each class; with missing="ignore", the sums
# of w and of w**2 over each class's missing values of each feature.
DENSITY_MOMENTS = (
    CLASS_COUNT,
    Statistic("weight_squares", ("classes",)),
    Statistic("mean", ("classes", "features"), combine="own", signed=True),
    Statistic("ssd", ("classes", "features"), combine="own"),
    Statistic("low", ("features",), combine="own", signed=True),
    Statistic("high", ("features",), combine="own", signed=True),
)
GRID = (Statistic("grid", ("classes", "grid"), combine="own"),)
POINT_WEIGHT = Statistic("point_weight", ("classes", "points"), combine="own")
POINTS = (
    Statistic("points", ("points", "features"), combine="own", signed=True),
    POINT_WEIGHT,
)
POINTS_WITH_MISSING = (replace(POINTS[0], allow_nan=True), POINT_WEIGHT)
MISSING_DENSITY = (
    MISSING_COUNT,
    Statistic("missing_weight_squares", ("classes", "features")),
)


class DensityStatistics(NamedTuple):
    """KernelDensityNB's statistics as it reads them: DENSITY_MOMENTS and
    DTYPE; GRID (binned) or POINTS (exact); MISSING_DENSITY with
    missing="ignore". Those not kept are None."""

    class_count: np.ndarray
    weight_squares: np.ndarray
    mean: np.ndarray
    ssd: np.ndarray
    low: np.ndarray
    high: np.ndarray
    dtype: np.dtype
    grid: np.ndarray | None = None
    points: np.ndarray | None = None
    point_weight: np.ndarray | None = None
    missing_count: np.ndarray | None = None
    missing_weight_squares: np.ndarray | None = None


class DensityScoring(NamedTuple):
    """What KernelDensityNB scores with: the log prior, the bandwidths
    (n_classes, n_features) and whether missing values are ignored; binned,
    the density tables, their grids and tails, and the padded intercept
    (binned_density_tables); exact, the points and their weights (the
    others None)."""

    log_prior: np.ndarray
    bandwidth: np.ndarray
    missing: bool
    table: np.ndarray | None = None
    origin: np.ndarray | None = None
    inv_step: np.ndarray | None = None
    n_points: np.ndarray | None = None
    tails: np.ndarray | None = None
    intercept: np.ndarray | None = None
    points: np.ndarray | None = None
    point_weight: np.ndarray | None = None


class KernelDensityNB(BaseNB):
    """Naive Bayes with a Gaussian kernel density per class and feature.

    Each feature's density within a class is the mixture of Gaussians of
    one bandwidth centred on the class's samples (weighted by their sample
    weights), as :class:`scipy.stats.gaussian_kde` estimates it, or R's
    ``naivebayes`` with ``usekernel = TRUE``: skewed, heavy-tailed or
    multimodal features get their own shape instead of one normal.

    Parameters
    ----------
    bandwidth : {"scott", "silverman"}, float or array-like of shape \
(n_features,), default="scott"
        The bandwidth rule, with the definitions of
        :class:`scipy.stats.gaussian_kde` (the weighted effective sample
        size ``n = W**2 / sum w**2``; ``sigma * n ** (-1/5)`` for Scott,
        ``sigma * (3 n / 4) ** (-1/5)`` for Silverman, sigma the weighted
        standard deviation of the feature in the class); or the bandwidth
        itself, one for every feature or one per feature, in the feature's
        units (as R's ``bw``; not scipy's ``bw_method`` factor). Where a
        rule's sigma is zero (a feature constant in a class, or a class of
        one sample) the feature's sigma over all classes is used.
    adjust : float, default=1.0
        Multiplies the bandwidth, as R's ``adjust``.
    algorithm : {"binned", "exact"}, default="binned"
        "binned" keeps each class's samples linearly binned on a grid per
        feature and scores by interpolating log densities computed by FFT
        convolution: memory O(classes x features x n_grid), fit
        O(n + classes x features x n_grid log n_grid), predict O(features x
        classes) a row. "exact" keeps the samples and scores the mixture
        itself, O(samples) a value: for small data.
    n_grid : int, default=1024
        Points of each feature's grid (binned algorithm).
    priors : array-like of shape (n_classes,), default=None
        Prior probabilities of the classes; by default the weighted class
        frequencies.
    missing : {"error", "ignore"}, default="error"
        What a NaN in X is. "error" refuses it. "ignore" takes it for a
        missing value and marginalises it out: in fit and partial_fit it is
        left out of its feature's density (its grid or points, moments and
        range, and the weights the bandwidth rules take, which become each
        class's weights of the feature's observed values); in scoring, its
        feature's term is left out of the row's joint log-likelihood, so a
        row of NaN scores its log prior. A class without an observed value
        of a feature has a flat log density 0 for it, as a class without
        samples has. Infinity is refused either way.

    Attributes
    ----------
    bandwidth_ : ndarray of shape (n_classes, n_features)
        The bandwidth of each class and feature.
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of samples seen per class.
    class_prior_ : ndarray of shape (n_classes,)
        Probability of each class.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Feature names, when X had string column names.

    Notes
    -----
    The grid. A feature's grid is a lattice whose step is a power of two and
    whose points cover the feature's range over all the data seen (the
    samples of positive weight), in at most ``n_grid`` points: the range is
    not fixed at the first call, nor given by the user. A later
    ``partial_fit`` (or a merge) whose values fall outside moves the masses
    onto the lattice of the joined range, which holds the old one's points,
    or every other one: exactly as if the samples had been binned onto it
    (to rounding). So ``partial_fit`` never refuses a value, and batches
    combine to the model of one fit on all of them.

    Tables. Each density is computed on a table grid reaching 5 bandwidths
    beyond the data, by FFT convolution where it is at least 1e-3 of its
    peak, and by a direct sum in log space below that (so that far tails
    are exact rather than rounding noise, and never -inf). Beyond the table,
    the log density is the value at its end less the Gaussian fall-off of
    the class's outermost mass. A row's score interpolates each feature's
    log density linearly between grid points, in single precision (the
    table's, which halves its bytes and, on many CPUs, the arithmetic:
    joint log-likelihoods move by about 1e-6 of their size). Against
    :class:`scipy.stats.gaussian_kde` with the same weights and bandwidth,
    binned log densities agree within about 1e-3 where the grid step is
    small next to the bandwidth (a few hundred samples a class, or more);
    exact ones within 1e-9.

    Only dense X is accepted. Attributes are float32 when the model was
    fitted on float32 data; the statistics behind them are float64.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import KernelDensityNB
    >>> rng = np.random.default_rng(0)
    >>> # Class "b" is bimodal: one normal fits it badly.
    >>> X = np.concatenate([rng.normal(0, 1, 200), rng.normal(-4, 0.5, 100),
    ...                     rng.normal(4, 0.5, 100)])[:, None]
    >>> y = np.array(["a"] * 200 + ["b"] * 200)
    >>> clf = KernelDensityNB().fit(X, y)
    >>> clf.predict([[0.0], [4.0]])
    array(['a', 'b'], dtype='<U1')
    """

    # How two states combine (merge, fastnb.dask's blocks), for the docs.
    _combining = (
        "Each block bins its values onto the lattice of its own range; "
        "combining moves the grids onto the lattice of the joined range: the "
        "model equals one fit's to rounding."
    )

    _parameter_constraints: dict = {
        "bandwidth": [
            StrOptions({"scott", "silverman"}),
            Interval(Real, 0, None, closed="neither"),
            "array-like",
        ],
        "adjust": [Interval(Real, 0, None, closed="neither")],
        "algorithm": [StrOptions({"binned", "exact"})],
        "n_grid": [Interval(Integral, 16, 1 << 20, closed="both")],
        "priors": ["array-like", None],
        "missing": MISSING_CONSTRAINT,
    }

    _prior_params = ("priors",)
    _uniform_prior = classmethod(uniform_priors)

    bandwidth_ = fitted_table(
        "bandwidth_", "ndarray (n_classes, n_features): the bandwidths."
    )
    class_prior_ = fitted_table("class_prior_", "ndarray (n_classes,): P(c).")

    def __init__(
        self,
        *,
        bandwidth: Literal["scott", "silverman"] | float | ArrayLike = "scott",
        adjust: float = 1.0,
        algorithm: Literal["binned", "exact"] = "binned",
        n_grid: int = 1024,
        priors: ArrayLike | None = None,
        missing: Missing = "error",
    ) -> None:
        self.bandwidth = bandwidth
        self.adjust = adjust
        self.algorithm = algorithm
        self.n_grid = n_grid
        self.priors = priors
        self.missing = missing

    @property
    def class_count_(self):
        """ndarray of shape (n_classes,): weighted number of samples per class."""
        statistics = DensityStatistics(**self._fitted_statistics("class_count_"))
        return read_only(statistics.class_count.astype(statistics.dtype))

    def _output_dtype(self, X):
        # As GaussianNB: float32 only when both the model and X are float32.
        return np.result_type(self._statistics[DTYPE.name], X.dtype)

    # -- the state protocol ------------------------------------------------------

    def _check_batch(self, X, y, reset):
        # NaN (unless missing="ignore") and infinity are refused in
        # _batch_statistics, in one pass.
        return validate_input(
            self, X, y, dtype=FLOAT_DTYPES, ensure_all_finite=False, reset=reset
        )

    def _largest_table(self, X, n_classes):
        n_samples, n_features = X.shape
        if self.algorithm == "binned":
            # The density tables hold at most 2 * n_grid points (table_grid).
            return (
                f"density tables of {n_classes} classes by {n_features} features "
                f"by up to {2 * self.n_grid} grid points",
                2.0 * self.n_grid * n_classes * n_features,
            )
        return (
            f"the samples kept, {n_samples} by {n_features} features and "
            f"{n_classes} classes",
            float(n_samples) * max(n_features, n_classes),
        )

    def _declared_statistics(self, statistics=None):
        binned = self.algorithm == "binned"
        if ignores_missing(self):
            samples = GRID if binned else POINTS_WITH_MISSING
            return (*DENSITY_MOMENTS, *samples, *MISSING_DENSITY, DTYPE)
        return (*DENSITY_MOMENTS, *(GRID if binned else POINTS), DTYPE)

    def _statistic_sizes(self, statistics, n_features):
        if self.algorithm == "binned":
            return {"grid": n_features * self.n_grid}
        if statistics is None:
            return {"points": 0}
        points = DensityStatistics(**statistics).points
        return {"points": points.shape[0] if getattr(points, "ndim", 0) == 2 else -1}

    def _batch_statistics(self, X, y, sample_weight, n_classes):
        check_values(X, self, non_negative=False)
        n_samples, n_features = X.shape
        ignore = ignores_missing(self)
        with np.errstate(over="ignore", invalid="ignore"):
            count, mean, ssd, missing = class_moments(
                X, y, sample_weight, n_classes, ignore
            )
        if not (np.isfinite(mean).all() and np.isfinite(ssd).all()):
            raise ValueError(
                "Input X contains infinity or values so large that their squares "
                "overflow float64."
            )
        # With hard labels of unit weight, the squared weights are the weights.
        unit = sample_weight is None and not isinstance(y, SoftLabels)
        squared = squared_weights(y, sample_weight)
        squares = count if unit else class_weights(*squared, n_classes)
        positive = None if unit else positive_rows(y, sample_weight)
        statistics = self._empty_statistics(n_classes, X)
        statistics.update(class_count=count, weight_squares=squares, mean=mean, ssd=ssd)
        if ignore:
            statistics.update(
                missing_count=missing,
                missing_weight_squares=(
                    missing if unit else class_moments(X, *squared, n_classes, True)[3]
                ),
            )
        if count.sum() > 0:
            where = True if positive is None else positive[:, None]
            low, high = (
                least.reduce(X, axis=0, where=where, initial=start).astype(np.float64)
                for least, start in ((np.fmin, np.inf), (np.fmax, -np.inf))
            )
            if ignore:
                # Over the observed values; 0 for a feature without any.
                low, high = (np.where(np.isfinite(e), e, 0.0) for e in (low, high))
            statistics.update(low=low, high=high)
        density = DensityStatistics(**statistics)
        if self.algorithm == "binned":
            step, origin, _ = lattice(density.low, density.high, self.n_grid)
            if not (X.flags.c_contiguous or X.flags.f_contiguous):
                X = np.ascontiguousarray(X)
            n_threads = effective_n_threads(data_size(X))
            _kernels.kde_bin_dense(
                X,
                *label_arrays(y, sample_weight),
                1.0 / step,
                origin,
                self.n_grid,
                dense_block_width(n_features, n_threads),
                ignore,
                density.grid,
                n_threads,
            )
        else:
            # A point a label of positive weight (a row of soft labels is a
            # point in each of its classes).
            _, label_class, label_weight = label_arrays(y, sample_weight)
            kept = np.flatnonzero(label_weight > 0)
            rows = y.rows()[kept] if isinstance(y, SoftLabels) else kept
            points = np.asarray(X[rows], dtype=np.float64)
            point_weight = np.zeros((n_classes, len(points)))
            point_weight[label_class[kept], np.arange(len(points))] = label_weight[kept]
            points, point_weight = canonical_order(points, point_weight)
            statistics.update(points=points, point_weight=point_weight)
        return statistics

    def _combined_own(self, first, second):
        first, second = DensityStatistics(**first), DensityStatistics(**second)
        _, mean, ssd = merge_moments(
            observed_weights(first),
            first.mean,
            first.ssd,
            observed_weights(second),
            second.mean,
            second.ssd,
        )
        low, high = joined_extents(first, second)
        statistics = {"mean": mean, "ssd": ssd, "low": low.copy(), "high": high.copy()}
        if first.grid is not None:
            n_features = len(low)
            n_grid = first.grid.shape[1] // n_features
            if second.grid.shape[1] != first.grid.shape[1]:
                raise ValueError(
                    "Cannot combine KernelDensityNB statistics on grids of "
                    f"{n_grid} and {second.grid.shape[1] // n_features} points."
                )
            step, origin, _ = lattice(low, high, n_grid)
            grid = sum(
                rebinned(
                    part.grid,
                    n_grid,
                    lattice(part.low, part.high, n_grid),
                    (step, origin),
                    n_grid,
                )
                for part in (first, second)
            )
            statistics.update(grid=grid)
        else:
            points, point_weight = canonical_order(
                np.concatenate([first.points, second.points]),
                np.concatenate([first.point_weight, second.point_weight], axis=1),
            )
            statistics.update(points=points, point_weight=point_weight)
        return statistics

    def _check_statistics_agree(self, statistics):
        statistics = DensityStatistics(**statistics)
        count, squares = statistics.class_count, statistics.weight_squares
        low, high = statistics.low, statistics.high
        if statistics.missing_count is not None:
            # (the slack divides the left side: squares near the largest
            # float times 1 + SUM_RTOL would overflow)
            if (
                statistics.missing_weight_squares / (1 + SUM_RTOL) > squares[:, None]
            ).any():
                raise ValueError(
                    "Statistic 'missing_weight_squares' exceeds weight_squares."
                )
        # 0 < sum w**2 <= (sum w)**2 for a class of weight, compared as
        # sqrt(sum w**2) <= sum w, which no finite statistics overflow (the
        # square of a count, or sum w**2 / sum w for a count below 1, can).
        seen = count > 0
        if (squares[~seen] != 0).any() or not (squares[seen] > 0).all():
            raise ValueError(
                "Statistic 'weight_squares' must be positive exactly for the "
                "classes of positive class_count."
            )
        if (np.sqrt(squares[seen] / (1 + SUM_RTOL)) > count[seen]).any():
            raise ValueError("Statistic 'weight_squares' exceeds class_count squared.")
        if not seen.any():
            if (low != 0).any() or (high != 0).any():
                raise ValueError(
                    "Statistics 'low' and 'high' must be 0 for a model without data."
                )
            return
        if (low > high).any() or (
            np.abs(np.concatenate([low, high])) > LARGEST_VALUE
        ).any():
            raise ValueError(
                "Statistics 'low' and 'high' must be ranges of values fit accepts "
                f"(low <= high, within {LARGEST_VALUE:.3g})."
            )
        slack = SUM_RTOL * np.maximum(np.abs(low), np.abs(high))
        observed = np.broadcast_to(observed_weights(statistics), statistics.mean.shape)
        mean = statistics.mean[observed > 0]
        low, high, slack = (
            np.broadcast_to(part, observed.shape)[observed > 0]
            for part in (low, high, slack)
        )
        if ((mean < low - slack) | (mean > high + slack)).any():
            raise ValueError("Statistic 'mean' lies outside the range low .. high.")
        if self.algorithm == "binned":
            self._check_grid(statistics)
        else:
            self._check_points(statistics)

    def _check_grid(self, statistics):
        grid = statistics.grid
        n_classes, n_features = statistics.mean.shape
        count = np.broadcast_to(observed_weights(statistics), (n_classes, n_features))
        _, _, n_points = lattice(statistics.low, statistics.high, self.n_grid)
        grid = grid.reshape(n_classes, n_features, self.n_grid)
        outside = np.arange(self.n_grid) >= n_points[:, None]
        if (grid[:, outside] != 0).any():
            raise ValueError(
                "Statistic 'grid' holds mass outside the range low .. high."
            )
        if not np.allclose(grid.sum(axis=2), count, rtol=1e-9, atol=0):
            raise ValueError(
                "Statistic 'grid' does not add up to class_count (less "
                "missing_count) for every feature."
            )
        ends = grid.sum(axis=0)
        features = np.arange(n_features)
        # (A feature without observed values has no mass at all.)
        has = count.sum(axis=0) > 0
        if not ((ends[:, 0] > 0) & (ends[features, n_points - 1] > 0) | ~has).all():
            raise ValueError(
                "Statistic 'grid' has no mass at an end of the range low .. high."
            )

    def _check_points(self, statistics):
        points, weight = statistics.points, statistics.point_weight
        if not ((weight > 0).sum(axis=0) == 1).all():
            raise ValueError(
                "Statistic 'point_weight' must give each point a positive weight in "
                "exactly one class."
            )
        for total, key, expected in (
            (weight.sum(axis=1), "class_count", statistics.class_count),
            ((weight**2).sum(axis=1), "weight_squares", statistics.weight_squares),
        ):
            if not np.allclose(total, expected, rtol=1e-9, atol=0):
                raise ValueError(
                    f"Statistic 'point_weight' does not add up to {key!r}."
                )
        # (Over the observed values: 0 for a feature without any.)
        extents = [
            np.where(np.isfinite(extent), extent, 0.0)
            for extent in (
                np.fmin.reduce(points, axis=0, initial=np.inf),
                np.fmax.reduce(points, axis=0, initial=-np.inf),
            )
        ]
        if not (
            np.array_equal(extents[0], statistics.low)
            and np.array_equal(extents[1], statistics.high)
        ):
            raise ValueError("Statistics 'low' and 'high' are not the points' range.")
        ordered, _ = canonical_order(points, weight)
        if not np.array_equal(ordered, points, equal_nan=True):
            raise ValueError("Statistic 'points' is not in the order fitting keeps.")

    def _table_params(self, statistics, n_classes):
        statistics = DensityStatistics(**statistics)
        n_features = statistics.mean.shape[1]
        bandwidth = self.bandwidth
        if not isinstance(bandwidth, str):
            bandwidth = np.asarray(bandwidth, dtype=np.float64)
            if bandwidth.ndim == 1 and bandwidth.shape != (n_features,):
                raise ValueError(
                    f"bandwidth has {len(bandwidth)} values; one per feature is "
                    f"{n_features}."
                )
            if bandwidth.ndim > 1 or not (
                np.isfinite(bandwidth).all() and (bandwidth > 0).all()
            ):
                raise ValueError(
                    "bandwidth must be 'scott', 'silverman', a positive number or "
                    "one positive number per feature."
                )
        h = bandwidths(statistics, bandwidth, self.adjust)
        finest = 1.0
        if self.algorithm == "binned":
            finest = lattice(statistics.low, statistics.high, self.n_grid)[0]
        with np.errstate(all="ignore"):
            usable = np.isfinite(h) & (h > 0) & (finest / h <= MAX_INDEX)
        if not usable.all():
            raise ValueError(
                "The statistics give a bandwidth that is not a positive number, or "
                "one too small for the grid (below 2**-50 of its step): no fit "
                "makes such statistics."
            )
        return {
            "priors": check_class_prior(self.priors, n_classes, name="priors"),
            "bandwidth": bandwidth,
            "adjust": float(self.adjust),
            "algorithm": self.algorithm,
            "n_grid": self.n_grid,
        }

    def _tables(self, statistics, params):
        statistics = DensityStatistics(**statistics)
        count = statistics.class_count
        n_classes = len(count)
        h = bandwidths(statistics, params["bandwidth"], params["adjust"])
        if params["priors"] is not None:
            prior = params["priors"]
        else:
            total = count.sum()
            prior = count / total if total > 0 else np.full(n_classes, 1 / n_classes)
        with np.errstate(divide="ignore"):
            log_prior = np.log(prior)
        dtype = statistics.dtype
        attributes = {
            "bandwidth_": h.astype(dtype),
            "class_prior_": prior.astype(dtype),
        }
        scoring = DensityScoring(log_prior, h, statistics.missing_count is not None)
        if params["algorithm"] == "binned":
            table, origin, inv_step, n_points, tails = binned_density_tables(
                statistics, h, params["n_grid"]
            )
            return attributes, scoring._replace(
                table=table,
                origin=origin,
                inv_step=inv_step,
                n_points=n_points,
                tails=tails,
                intercept=pad_classes(log_prior[None, :], _kernels.KDE_CLASS_BLOCK)[0],
            )
        return attributes, scoring._replace(
            points=statistics.points, point_weight=statistics.point_weight
        )

    def _check_X(self, X, scoring):
        # The scoring kernel checks the values as it reads them; the exact
        # mixtures, scored in NumPy, are checked here.
        X = validate_input(
            self, X, dtype=FLOAT_DTYPES, ensure_all_finite=False, reset=False
        )
        if scoring.table is None:
            check_values(X, self, non_negative=False)
        return X

    def _scorer(self, scoring, sparse):
        if scoring.table is None:
            return score_exactly, (scoring,)
        return _kernels.kde_score_dense, (
            scoring.table,
            scoring.origin,
            scoring.inv_step,
            scoring.n_points,
            scoring.tails,
            scoring.intercept,
            scoring.missing,
        )

    # No measurement means "nothing": a class's terms are against their mean.
    _terms_against_class_mean = True

    def _zero_log_likelihood(self, scoring):
        # Each feature's class densities at 0, from its tables alone.
        statistics = DensityStatistics(**self._statistics)
        n_features = len(statistics.low)
        zero = np.zeros((1, 1), dtype=statistics.dtype)
        return np.concatenate(
            [
                self._joint_log_likelihood(zero, feature_scoring(scoring, j))
                for j in range(n_features)
            ]
        )

    def _terms(self, X, scoring, selection):
        # Each feature's log density at its values less at 0, read by the
        # scoring kernel from that feature's tables alone.
        n_samples, n_features = X.shape
        terms = np.empty((n_samples, n_features, len(selection.plus)))
        zero = np.zeros((1, 1), dtype=X.dtype)
        for j in range(n_features):
            feature = feature_scoring(scoring, j)
            column = np.ascontiguousarray(X[:, j : j + 1])
            terms[:, j] = selection.of(
                self._joint_log_likelihood(column, feature)
                - self._joint_log_likelihood(zero, feature)
            )
        zeros = self._joint_log_likelihood(np.zeros((1, n_features), X.dtype), scoring)
        return terms, selection.of(zeros[0])

    def _informative_values(self):
        low, high = self._density_extent()
        return binned_values(
            self._feature_log_density, low, high, self._statistics[CLASS_COUNT.name]
        )

    def _density_extent(self):
        """``(low, high)``, one value a feature: the range of the data seen,
        widened by four of the feature's widest bandwidths on each side, where
        the densities are read (most_informative_features, plot_feature)."""
        reach = 4.0 * self._final_tables()[1].bandwidth.max(axis=0)
        statistics = DensityStatistics(**self._statistics)
        return statistics.low - reach, statistics.high + reach

    def _feature_log_density(self, j, values):
        """log f_cj(values), (n_values, n_classes): feature j's density in each
        class at ``values``, the prior left out."""
        scoring = self._final_tables()[1]
        column = np.ascontiguousarray(
            np.asarray(values)[:, None], dtype=self._statistics[DTYPE.name]
        )
        return self._joint_log_likelihood(column, feature_scoring(scoring, j))

    def _joint_log_likelihood(self, X, scoring):
        out = np.empty((X.shape[0], len(scoring.log_prior)))
        self._score(
            X,
            scoring,
            _kernels.Output.JOINT_LOG_LIKELIHOOD,
            out,
            np.empty(0, dtype=np.intp),
        )
        return out


def feature_scoring(scoring, j):
    """The scoring tables of feature j alone, without the prior: scoring
    one column with them gives log f_cj, the class densities of feature j."""
    feature = scoring._replace(
        log_prior=np.zeros(len(scoring.log_prior)),
        bandwidth=scoring.bandwidth[:, [j]],
    )
    if scoring.table is not None:
        part = slice(j, j + 1)
        return feature._replace(
            table=scoring.table[part],
            origin=scoring.origin[part],
            inv_step=scoring.inv_step[part],
            n_points=scoring.n_points[part],
            tails=scoring.tails[part],
            intercept=np.zeros_like(scoring.intercept),
        )
    return feature._replace(points=np.ascontiguousarray(scoring.points[:, [j]]))


def score_exactly(X, scoring, output, out, labels, scratch, n_threads):
    """The kernels' form for the exact mixtures: exact_scores, finished as
    the kernels finish theirs; X was checked (_check_X), no row refused."""
    finish_scores(exact_scores(X, scoring), output, out, labels)
    return -1


def exact_scores(X, scoring):
    """Joint log-likelihoods of the exact mixtures, (n_samples, n_classes)."""
    X = np.asarray(X, dtype=np.float64)
    points, point_weight, h = scoring.points, scoring.point_weight, scoring.bandwidth
    n_samples, n_features = X.shape
    jll = np.empty((n_samples, len(h)))
    jll[:] = scoring.log_prior
    for k, weight in enumerate(point_weight):
        for j in range(n_features):
            # The class's points with a value of feature j (missing="ignore"
            # keeps points with NaN; a class without any is flat, 0).
            mine = (weight > 0) & ~np.isnan(points[:, j])
            if not mine.any():
                continue
            share = weight[mine] / weight[mine].sum()
            step = max(1, EXACT_CHUNK // mine.sum())
            centres = points[mine, j]
            # A missing value's feature is left out of its row's score.
            rows = ~np.isnan(X[:, j]) if scoring.missing else slice(None)
            values = X[rows, j]
            column = jll[rows, k]
            for start in range(0, len(values), step):
                z = (values[start : start + step, None] - centres) / h[k, j]
                column[start : start + step] += logsumexp(-0.5 * z**2, b=share, axis=1)
            column -= np.log(np.sqrt(2 * np.pi) * h[k, j])
            jll[rows, k] = column
    return jll
