"""Gaussian Naive Bayes: one-pass moments, textbook variance options.

The sufficient statistics are, per class, the weighted count, the mean and
the sum of squared deviations (ssd) of every feature, plus the unweighted
moments of all samples (for the variance-smoothing scale); with
missing="ignore", also the weight of each class's missing values of each
feature, and the number of all samples' missing values of each feature.
Batches are merged with the pairwise formula of Chan, Golub and LeVeque,
so fitting in chunks equals one fit. Variances, priors and scoring tables
are derived from the statistics when first needed.
"""

from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING, Literal, NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from fastnb._base import (
    BaseNB,
    fitted_table,
    observed_count,
    observed_weights,
    uniform_priors,
)
from fastnb._explain import binned_values, linear_terms
from fastnb._labels import (
    SoftLabels,
    class_weights,
    label_arrays,
    read_only,
    rows_by_class,
)
from fastnb._plans import dense_row_chunks, feature_blocks
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
    sparse_arrays,
    summed_duplicates,
    validate_input,
    without_duplicates,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fastnb._typing import Missing

# The largest magnitude whose square float64 holds: fit refuses larger values
# (their sums of squared deviations overflow), so no mean is larger.
LARGEST_VALUE = float(np.sqrt(np.finfo(np.float64).max))


def merge_moments(count, mean, ssd, batch_count, batch_mean, batch_ssd):
    """Pairwise merge of two sets of moments (Chan, Golub and LeVeque), by
    the kernel merge_moments.

    The means and ssds are all (n_classes, n_features), or all (n_features,);
    each count is the weight of every entry, of their shape, or of each
    class, a column (n_classes, 1), or () for (n_features,) moments.
    Returns the merged (count, mean, ssd).
    """
    # Rows as the kernel takes them, each count a column unless an entry's.
    rows = (1 if mean.ndim == 1 else len(mean), -1)
    merged_mean, merged_ssd = np.empty(mean.shape), np.empty(mean.shape)
    _kernels.merge_moments(
        np.reshape(count, rows),
        mean.reshape(rows),
        ssd.reshape(rows),
        np.reshape(batch_count, rows),
        batch_mean.reshape(rows),
        batch_ssd.reshape(rows),
        merged_mean.reshape(rows),
        merged_ssd.reshape(rows),
        effective_n_threads(merged_mean.size),
    )
    return count + batch_count, merged_mean, merged_ssd


def class_moments(X, y, sample_weight, n_classes, ignore=False):
    """Weighted count, mean and ssd of every feature in each class of a batch,
    and, with ``ignore`` (missing="ignore"), the (n_classes, n_features)
    weight of each class's missing values (NaN) of each feature, which are
    left out of the moments (None otherwise).

    ``y``: class indices with ``sample_weight`` (None for unit weights), or
    SoftLabels."""
    n_features = X.shape[1]
    n_threads = effective_n_threads(data_size(X))
    if not sp.issparse(X):
        return dense_class_moments(X, y, sample_weight, n_classes, n_threads, ignore)
    # In row order, as the kernels add the stored values' weights: the
    # implicit zeros' weight, count less theirs, is then 0 where every row
    # stores a value, not a rounding error (which, merged as zeros far
    # from the mean, would swamp the variance).
    count = class_weights(y, sample_weight, n_classes, data_size(X), in_row_order=True)
    mean = np.zeros((n_classes, n_features))
    ssd = np.zeros((n_classes, n_features))
    X = summed_duplicates(X)  # a repeated entry is one value, not two samples
    stored = np.zeros((n_classes, n_features))
    missing = np.zeros((n_classes, n_features) if ignore else (0, 0))
    if X.format == "csr":
        _kernels.gaussian_moments_csr(
            *sparse_arrays(X),
            *rows_by_class(y, sample_weight, n_classes, data_size(X)),
            # (Canonical: each row's indices are sorted, as blocks need.)
            feature_blocks(n_classes, n_features, n_threads),
            stored,
            missing,
            mean,
            ssd,
            n_threads,
        )
    else:
        _kernels.gaussian_moments_csc(
            *sparse_arrays(X),
            *label_arrays(y, sample_weight),
            stored,
            missing,
            mean,
            ssd,
            n_threads,
        )
    # Merge in the implicit zeros: weight count - stored (- missing), mean 0,
    # ssd 0.
    missing = missing if ignore else None
    _kernels.merge_zero_moments(
        observed_count(count, missing), stored, mean, ssd, n_threads
    )
    return count, mean, ssd, missing


def dense_class_moments(X, y, sample_weight, n_classes, n_threads, ignore=False):
    """class_moments of dense X: chunks of rows in parallel (dense_row_chunks),
    merged in order."""
    n_samples, n_features = X.shape
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    chunk_rows, n_chunks = dense_row_chunks(n_samples, 2 * n_classes * n_features)
    # (The kernel zeroes the chunks' tables, on its threads.)
    chunk_count = np.empty((n_chunks, n_classes))
    chunk_mean = np.empty((n_chunks, n_classes, n_features))
    chunk_ssd = np.empty((n_chunks, n_classes, n_features))
    # The weight of each entry's values that are not NaN (missing="ignore").
    chunk_observed = np.empty(chunk_mean.shape if ignore else (0, 0, 0))
    _kernels.gaussian_moments_dense(
        X,
        *label_arrays(y, sample_weight),
        chunk_rows,
        chunk_count,
        chunk_observed,
        chunk_mean,
        chunk_ssd,
        n_threads,
    )
    count = chunk_count[0]
    # Observed weights are sums of some of the class weight's terms, in the
    # same order: never above it, and equal where nothing is missing.
    missing = count[:, None] - chunk_observed[0] if ignore else None
    return count, chunk_mean[0], chunk_ssd[0], missing


def score_in_dense_blocks(
    X_data,
    X_indices,
    X_indptr,
    theta,
    inv_var,
    log_var,
    intercept,
    output,
    out,
    labels,
    scratch,
    n_threads,
):
    """gaussian_score_csr's form, for a CSR X whose zeros' terms overflow
    the sparse table: gaussian_score_dense on blocks of about 2**20 values
    made dense in turn; the first refused row, or -1."""
    n_samples, n_features = len(X_indptr) - 1, theta.shape[0]
    X = sp.csr_matrix((X_data, X_indices, X_indptr), shape=(n_samples, n_features))
    step = max(1, 2**20 // max(n_features, 1))
    for start in range(0, n_samples, step):
        rows = slice(start, start + step)
        bad = _kernels.gaussian_score_dense(
            X[rows].toarray(),
            theta,
            inv_var,
            log_var,
            intercept,
            output,
            # (The cost matrix, for MIN_EXPECTED_COST, is read whole.)
            out if output == _kernels.Output.MIN_EXPECTED_COST else out[rows],
            labels[rows],
            scratch,
            n_threads,
        )
        if bad >= 0:
            return start + bad
    return -1


def sparse_gaussian_table(theta, inv_var):
    """The table of gaussian_score_csr, from feature-major theta and 1 / var.

    (n_features + 1, 4, n_padded): for feature j, ``theta[j]``,
    ``inv_var[j]`` and ``theta[j]**2 * inv_var[j]``, the term a zero in
    feature j adds to the sum of squares, split as hi + lo so that the
    zeros' sum, taken as all the terms less the stored columns', is exact
    in hi (kernel gaussian_sparse_table, which says how); in the last row,
    the sums of the parts over the features, in their places, and zeros. A
    feature's rows are read together. None where a term overflows float64.
    """
    table = np.zeros((len(theta) + 1, 4, theta.shape[1]))
    n_threads = effective_n_threads(theta.size)
    if not _kernels.gaussian_sparse_table(theta, inv_var, table, n_threads):
        return None
    return table


def pooled_moments(count, mean, ssd):
    """Moments of all classes together from each class's: (1,), (1, F), (1, F).

    ``count`` is the classes' weights (n_classes,), or each entry's
    (n_classes, n_features) where values are missing; the pooled count is
    then each feature's, (1, F), and a feature of no weight has mean and
    ssd 0.
    """
    total = count.sum(axis=0, keepdims=count.ndim > 1)
    if count.ndim == 1:
        if total == 0:
            return np.zeros(1), np.zeros_like(mean[:1]), np.zeros_like(ssd[:1])
        total = np.array([total])
    overall, spread = np.empty((1, mean.shape[1])), np.empty((1, mean.shape[1]))
    n_threads = effective_n_threads(mean.size)
    counts = count[:, None] if count.ndim == 1 else count
    _kernels.pooled_moments(counts, mean, ssd, overall[0], spread[0], n_threads)
    return total, overall, spread


def sample_observed(moments):
    """The number of all samples' observed values of each feature (F,), or
    the number of samples () where none are missing."""
    if moments.sample_missing_count is None:
        return moments.sample_count
    return np.maximum(moments.sample_count - moments.sample_missing_count, 0.0)


def pooled_variances(count, missing, ssd, var_type, var_estimator):
    """The ssds and degrees of freedom whose ratio is each variance, for
    gaussian_tables: (n_classes, n_features) or broadcasting to it.

    With missing weights (missing="ignore"), each entry's weight is that of
    its observed values; "tied" pools, for each feature, the classes with
    observed values of it; "spherical" pools, for each class, the features
    it has observed values of.
    """
    unbiased = var_estimator == "unbiased"
    if missing is None:
        if var_type == "diag":
            return ssd, count[:, None] - unbiased
        if var_type == "tied":
            seen = np.count_nonzero(count)
            return ssd.sum(axis=0), count.sum() - unbiased * seen
        n_features = ssd.shape[1]
        return ssd.sum(axis=1, keepdims=True), n_features * (count[:, None] - unbiased)
    observed = observed_count(count, missing)
    if var_type == "diag":
        return ssd, observed - unbiased
    if var_type == "tied":
        seen = np.count_nonzero(observed, axis=0)
        return ssd.sum(axis=0), observed.sum(axis=0) - unbiased * seen
    dof = np.where(observed > 0, observed - unbiased, 0.0)
    return ssd.sum(axis=1, keepdims=True), dof.sum(axis=1, keepdims=True)


# GaussianNB's statistics: each class's weight, and the moments of each
# class's values and of all samples' (unweighted: the variance-smoothing
# scale); with missing="ignore", over the observed values, and the weights
# missing.
MOMENTS = (
    CLASS_COUNT,
    Statistic("mean", ("classes", "features"), combine="own", signed=True),
    Statistic("ssd", ("classes", "features"), combine="own"),
    Statistic("sample_count"),
    Statistic("sample_mean", ("features",), combine="own", signed=True),
    Statistic("sample_ssd", ("features",), combine="own"),
    DTYPE,
)
MISSING_MOMENTS = (MISSING_COUNT, Statistic("sample_missing_count", ("features",)))


class Moments(NamedTuple):
    """GaussianNB's statistics as it reads them: MOMENTS, and
    MISSING_MOMENTS with missing="ignore" (else None)."""

    class_count: np.ndarray
    mean: np.ndarray
    ssd: np.ndarray
    sample_count: np.ndarray
    sample_mean: np.ndarray
    sample_ssd: np.ndarray
    dtype: np.dtype
    missing_count: np.ndarray | None = None
    sample_missing_count: np.ndarray | None = None


class GaussianScoring(NamedTuple):
    """What GaussianNB scores with: feature-major tables of the classes'
    means, inverse variances and (missing="ignore" only, else no rows)
    log(2 pi var), the classes padded (n_features, n_padded); the
    intercept (n_padded,); the log prior and the variances (n_classes,
    n_features); and the sparse kernels' table (sparse_gaussian_table), or
    None where a zero's term overflows."""

    theta: np.ndarray
    inv_var: np.ndarray
    log_var: np.ndarray
    intercept: np.ndarray
    log_prior: np.ndarray
    variance: np.ndarray
    sparse_table: np.ndarray | None


class GaussianNB(BaseNB):
    """Gaussian Naive Bayes, with the variance options of the textbooks.

    A drop-in replacement for :class:`sklearn.naive_bayes.GaussianNB`: same
    parameters, attributes and results by default, with moments computed in
    one pass over X (dense C or F order, CSR or CSC, float32 or float64,
    never copied or densified) and scoring without per-class temporaries.

    Each feature i is normal within class c with mean ``theta_[c, i]`` and
    variance ``var_[c, i]``; the joint log-likelihood of x is
    ``log P(c) - 0.5 sum_i [log(2 pi var_ci) + (x_i - theta_ci)^2 / var_ci]``.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
        Prior probabilities of the classes; by default the weighted class
        frequencies.
    var_smoothing : float, default=1e-9
        Added to every variance, as a fraction of the largest variance of
        any feature over all samples: ``epsilon_ = var_smoothing *
        max_i var(X[:, i])`` (or ``var_smoothing`` itself when every feature
        is constant, so a variance is never zero).
    var_estimator : {"mle", "unbiased"}, default="mle"
        "mle" divides the sum of squared deviations by the class weight
        ``N_c`` (maximum likelihood, as scikit-learn); "unbiased" divides by
        ``N_c - 1`` (a class of weight at most 1 then has variance 0 before
        smoothing).
    var_type : {"diag", "tied", "spherical"}, default="diag"
        Which variances are estimated, in the vocabulary of
        :class:`sklearn.mixture.GaussianMixture`:

        - "diag": one per class and feature, ``sigma_ci``.
        - "tied": one per feature shared by all classes (pooled),
          ``sigma_i = sum_c ssd_ci / N`` (unbiased: ``/ (N - C)``, C the
          classes seen). The decision function is then linear in x, given
          by ``coef_`` and ``intercept_``.
        - "spherical": one per class shared by all features,
          ``sigma_c = sum_i ssd_ci / (n_features N_c)`` (unbiased:
          ``N_c - 1``).
    missing : {"error", "ignore"}, default="error"
        What a NaN in X is. "error" refuses it, as scikit-learn does.
        "ignore" takes it for a missing value and marginalises it out, as
        the Naive Bayes assumption allows: in fit and partial_fit it is left
        out of its feature's statistics (``theta_``, ``var_`` and the
        weights ``N_ci`` of class c's observed values of feature i, which
        take the place of ``N_c`` above, and the smoothing scale, computed
        over each feature's observed values as ``np.nanvar`` would); in
        scoring, its feature's term is left out of the row's joint
        log-likelihood, so a row of NaN scores its log prior. A class
        without an observed value of a feature has, for that feature, mean 0
        and variance ``epsilon_`` (var smoothing alone), as a class without
        samples has. Infinity is refused either way; sparse X's NaN must be
        stored explicitly (implicit entries are zeros).

    Attributes
    ----------
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of samples seen per class.
    class_prior_ : ndarray of shape (n_classes,)
        Probability of each class.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    epsilon_ : float
        Absolute amount added to the variances.
    theta_ : ndarray of shape (n_classes, n_features)
        Mean of each feature per class.
    var_ : ndarray of shape (n_classes, n_features)
        Variance of each feature per class, smoothing included.
    coef_ : ndarray of shape (n_classes, n_features)
        Only with ``var_type="tied"``: ``theta_ / var_``, the weights of the
        linear decision function.
    intercept_ : ndarray of shape (n_classes,)
        Only with ``var_type="tied"``: ``log P(c) - 0.5 sum_i theta_ci^2 /
        var_i``. The class scores ``X @ coef_.T + intercept_`` differ from
        the joint log-likelihood by a term that is the same for every class.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Feature names, when X had string column names.

    Notes
    -----
    Differences from scikit-learn: sparse input is accepted; ``epsilon_``
    after several ``partial_fit`` calls is computed from all the data seen
    (scikit-learn uses the last batch only), so chunked fitting equals one
    fit; sample weights must be finite and non-negative; and
    ``missing="ignore"`` (scikit-learn has no such option).

    Attributes are float32 when the model was fitted on float32 data, as in
    scikit-learn; the statistics behind them are kept in float64.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import GaussianNB
    >>> X = np.array([[180, 75], [165, 61], [167, 62], [160, 55.0]])
    >>> clf = GaussianNB().fit(X, ["a", "a", "b", "b"])
    >>> clf.predict([[175, 70]])
    array(['a'], dtype='<U1')
    """

    # How two states combine (merge, fastnb.dask's blocks), for the docs.
    _combining = (
        "The blocks' moments are merged by the pairwise formula: the model "
        "equals one fit's to rounding (about 1e-15 relative)."
    )

    _parameter_constraints: dict = {
        "priors": ["array-like", None],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
        "var_estimator": [StrOptions({"mle", "unbiased"})],
        "var_type": [StrOptions({"diag", "tied", "spherical"})],
        "missing": MISSING_CONSTRAINT,
    }

    _prior_params = ("priors",)
    _uniform_prior = classmethod(uniform_priors)

    var_ = fitted_table("var_", "ndarray (n_classes, n_features): variances.")
    epsilon_ = fitted_table("epsilon_", "float: amount added to every variance.")
    class_prior_ = fitted_table("class_prior_", "ndarray (n_classes,): P(c).")

    def __init__(
        self,
        *,
        priors: ArrayLike | None = None,
        var_smoothing: float = 1e-9,
        var_estimator: Literal["mle", "unbiased"] = "mle",
        var_type: Literal["diag", "tied", "spherical"] = "diag",
        missing: Missing = "error",
    ) -> None:
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.var_estimator = var_estimator
        self.var_type = var_type
        self.missing = missing

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # The statistics: per class the weighted count, mean and sum of squared
    # deviations (ssd) of each feature; the unweighted count, mean and ssd of
    # all samples (the variance-smoothing scale); the dtype of the data. With
    # missing="ignore", also missing_count, the weight of each class's
    # missing values of each feature (the moments are those of the others,
    # of weight class_count[:, None] - missing_count), and
    # sample_missing_count, the number of all samples' missing values of each
    # feature (the unweighted moments are those of the others).

    @property
    def theta_(self):
        """ndarray of shape (n_classes, n_features): mean of each feature per class."""
        return self._fitted_statistic("mean", "theta_")

    @property
    def class_count_(self):
        """ndarray of shape (n_classes,): weighted number of samples per class."""
        return self._fitted_statistic("class_count", "class_count_")

    def _fitted_statistic(self, key, name):
        """Statistic ``key`` in the dtype of the data fitted, as attribute ``name``.

        Read from the statistics alone: no table is rebuilt for it.
        """
        statistics = self._fitted_statistics(name)
        return read_only(statistics[key].astype(statistics[DTYPE.name]))

    def _output_dtype(self, X):
        # As scikit-learn: float32 only when both the model and X are float32.
        return np.result_type(self._statistics[DTYPE.name], X.dtype)

    @property
    def coef_(self):
        """ndarray of shape (n_classes, n_features): linear weights (tied variance)."""
        return self._linear_model()[0]

    @property
    def intercept_(self):
        """ndarray of shape (n_classes,): linear intercepts (tied variance)."""
        return self._linear_model()[1]

    def _linear_model(self):
        check_is_fitted(self)
        if self._params["var_type"] != "tied":
            raise AttributeError(
                "coef_ and intercept_ exist only for var_type='tied', where the "
                f"decision function is linear; this model has "
                f"var_type={self._params['var_type']!r}."
            )
        scoring = self._final_tables()[1]
        moments = Moments(**self._statistics)
        theta = moments.mean
        coef = theta / scoring.variance
        intercept = scoring.log_prior - 0.5 * (theta * coef).sum(axis=1)
        dtype = moments.dtype
        return read_only(coef.astype(dtype)), read_only(intercept.astype(dtype))

    # -- the state protocol ------------------------------------------------------

    def _check_batch(self, X, y, reset):
        # NaN (unless missing="ignore") and infinity are caught in the moments
        # (see _batch_statistics), saving a pass over X.
        return validate_input(
            self,
            X,
            y,
            accept_sparse=("csr", "csc"),
            dtype=FLOAT_DTYPES,
            ensure_all_finite=False,
            reset=reset,
        )

    def _batch_statistics(self, X, y, sample_weight, n_classes):
        """The batch's moments, refusing X with NaN (unless missing="ignore")
        or infinity.

        A refused value makes the moments of its class non-finite, and the
        unweighted moments include every sample. With unit weights those
        follow from the classes' moments (with soft labels too: each row's
        probabilities sum to 1); otherwise they take a second pass.
        """
        n_samples = X.shape[0]
        ignore = ignores_missing(self)
        # Non-finite input overflows on the way: the error below says so.
        with np.errstate(over="ignore", invalid="ignore"):
            count, mean, ssd, missing = class_moments(
                X, y, sample_weight, n_classes, ignore
            )
            unit = not isinstance(y, SoftLabels) or y.unit_weights
            if sample_weight is None and unit:
                everyone = pooled_moments(
                    count if missing is None else observed_count(count, missing),
                    mean,
                    ssd,
                )
                sample_count = count.sum()
                sample_missing = None if missing is None else missing.sum(axis=0)
            else:
                *everyone, sample_missing = class_moments(
                    X, np.zeros(n_samples, dtype=np.intp), None, 1, ignore
                )
                sample_count = everyone[0][0]
        sample_mean, sample_ssd = everyone[1][0], everyone[2][0]
        if not (np.isfinite(sample_mean).all() and np.isfinite(sample_ssd).all()):
            # Names the first refused value, if that is the cause.
            check_values(X, self, non_negative=False)
            raise ValueError(
                "Input X contains NaN or infinity (or values so large that their "
                "squares overflow float64)."
            )
        statistics = {
            "class_count": count,
            "mean": mean,
            "ssd": ssd,
            "sample_count": np.asarray(sample_count, dtype=np.float64),
            "sample_mean": sample_mean,
            "sample_ssd": sample_ssd,
            "dtype": X.dtype,
        }
        if ignore:
            statistics.update(
                missing_count=missing,
                sample_missing_count=np.reshape(sample_missing, -1),
            )
        return statistics

    def _declared_statistics(self, statistics=None):
        return MOMENTS + MISSING_MOMENTS if ignores_missing(self) else MOMENTS

    def _combined_own(self, first, second):
        # Each entry's moments are of its observed values (all of them unless
        # missing="ignore").
        first, second = Moments(**first), Moments(**second)
        _, mean, ssd = merge_moments(
            observed_weights(first),
            first.mean,
            first.ssd,
            observed_weights(second),
            second.mean,
            second.ssd,
        )
        _, sample_mean, sample_ssd = merge_moments(
            sample_observed(first),
            first.sample_mean,
            first.sample_ssd,
            sample_observed(second),
            second.sample_mean,
            second.sample_ssd,
        )
        return {
            "mean": mean,
            "ssd": ssd,
            "sample_mean": sample_mean,
            "sample_ssd": sample_ssd,
        }

    def _check_statistics_agree(self, statistics):
        moments = Moments(**statistics)
        missing = moments.sample_missing_count
        if (
            missing is not None
            and (missing > moments.sample_count * (1 + SUM_RTOL)).any()
        ):
            raise ValueError(
                "Statistic 'sample_missing_count' counts more than sample_count."
            )
        # fit refuses values whose squares overflow: so are their means.
        for key, mean in (("mean", moments.mean), ("sample_mean", moments.sample_mean)):
            if (np.abs(mean) > LARGEST_VALUE).any():
                raise ValueError(
                    f"Statistic {key!r} holds means no data fit accepts "
                    f"could have (beyond {LARGEST_VALUE:.3g})."
                )

    def _table_params(self, statistics, n_classes):
        return {
            "priors": check_class_prior(self.priors, n_classes, name="priors"),
            "var_smoothing": self.var_smoothing,
            "var_estimator": self.var_estimator,
            "var_type": self.var_type,
        }

    def _tables(self, statistics, params):
        moments = Moments(**statistics)
        count, ssd, theta = moments.class_count, moments.ssd, moments.mean
        n_classes, n_features = ssd.shape
        missing = moments.missing_count
        pooled_ssd, dof = pooled_variances(
            count, missing, ssd, params["var_type"], params["var_estimator"]
        )
        # Smoothing scale: the largest (unweighted, maximum-likelihood)
        # variance of any feature over all samples seen (its observed values).
        scale = moments.sample_ssd / np.maximum(sample_observed(moments), 1)
        scale = scale.max()
        epsilon = params["var_smoothing"] * (scale if scale > 0 else 1.0)
        variance = np.empty((n_classes, n_features))
        n_padded = padded_class_count(n_classes)
        theta_table = np.zeros((n_features, n_padded))
        inv_var_table = np.zeros((n_features, n_padded))
        # log(2 pi var), which a missing value's feature adds back to the
        # intercept (missing="ignore" only).
        log_var_table = np.zeros((0 if missing is None else n_features, n_padded))
        log_var_sums = np.empty(n_classes)
        n_not_positive = _kernels.gaussian_tables(
            np.ascontiguousarray(theta),
            np.broadcast_to(np.asarray(pooled_ssd, dtype=np.float64), ssd.shape),
            np.broadcast_to(np.asarray(dof, dtype=np.float64), ssd.shape),
            epsilon,
            variance,
            theta_table,
            inv_var_table,
            log_var_table,
            log_var_sums,
            effective_n_threads(n_classes * n_features),
        )
        if n_not_positive:
            raise ValueError(
                "A feature has zero variance within a class and var_smoothing=0; "
                "set var_smoothing > 0 to score such data."
            )
        if params["priors"] is not None:
            prior = params["priors"]
        else:
            total = count.sum()
            prior = count / total if total > 0 else np.full(n_classes, 1 / n_classes)
        with np.errstate(divide="ignore"):
            log_prior = np.log(prior)
        intercept = log_prior - 0.5 * log_var_sums
        dtype = moments.dtype
        attributes = {
            "var_": variance.astype(dtype, copy=False),
            "epsilon_": dtype.type(epsilon),
            "class_prior_": prior.astype(dtype),
        }
        return attributes, GaussianScoring(
            theta_table,
            inv_var_table,
            log_var_table,
            pad_classes(intercept),
            log_prior,
            variance,
            sparse_gaussian_table(theta_table, inv_var_table),
        )

    def _check_X(self, X, scoring):
        # The scoring kernels check the values as they read them.
        X = validate_input(
            self,
            X,
            accept_sparse="csr",
            dtype=FLOAT_DTYPES,
            ensure_all_finite=False,
            reset=False,
        )
        # (A row's stored values are scored in any order.)
        return without_duplicates(X)

    def _scorer(self, scoring, sparse):
        dense = (scoring.theta, scoring.inv_var, scoring.log_var, scoring.intercept)
        if not sparse:
            return _kernels.gaussian_score_dense, dense
        if scoring.sparse_table is not None:
            return _kernels.gaussian_score_csr, (
                scoring.sparse_table,
                scoring.log_var,
                scoring.intercept,
            )
        # A zero's term overflows (|theta| above about 1e154, or a variance
        # about 0 with var_smoothing=0): blocks of rows made dense.
        return score_in_dense_blocks, dense

    # No measurement means "nothing": a class's terms are against their mean.
    _terms_against_class_mean = True

    def _zero_log_likelihood(self, scoring):
        # log N(0; theta, var) = -0.5 (log(2 pi var) + theta^2 / var).
        variance = scoring.variance
        theta = np.asarray(Moments(**self._statistics).mean, dtype=np.float64)
        return (-0.5 * (np.log(2 * np.pi * variance) + theta * theta / variance)).T

    def _terms(self, X, scoring, selection):
        # -0.5 ((x - theta)^2 - theta^2) / var = x theta / var - 0.5 x^2 / var.
        n_classes = len(scoring.log_prior)
        theta = scoring.theta[:, :n_classes]
        inv_var = scoring.inv_var[:, :n_classes]
        missing_term = None
        if len(scoring.log_var):
            # A missing value's feature is left out of the score: its term
            # is minus that of a 0, 0.5 (log(2 pi var) + theta^2 / var).
            log_var = scoring.log_var[:, :n_classes]
            missing_term = selection.of(0.5 * (log_var + theta * theta * inv_var))
        terms, bad = linear_terms(
            X,
            selection.of(theta * inv_var),
            selection.of(-0.5 * inv_var),
            0.0,
            False,
            False,
            missing_term,
        )
        if bad >= 0:
            raise self._refused_row(X, bad)
        zeros = scoring.intercept[:n_classes] - 0.5 * (theta * theta * inv_var).sum(
            axis=0
        )
        return terms, selection.of(zeros)

    def _informative_values(self):
        # The densities are read over the classes' means less and plus five
        # standard deviations.
        moments = Moments(**self._statistics)
        theta = np.asarray(moments.mean, dtype=np.float64)
        variance = self._final_tables()[1].variance
        spread = 5.0 * np.sqrt(variance)

        def log_density(j, grid):
            squares = (grid[:, None] - theta[:, j]) ** 2 / variance[:, j]
            return -0.5 * (np.log(2 * np.pi * variance[:, j]) + squares)

        return binned_values(
            log_density,
            (theta - spread).min(axis=0),
            (theta + spread).max(axis=0),
            moments.class_count,
        )
