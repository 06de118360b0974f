"""Gaussian Naive Bayes: one-pass moments, textbook variance options.

The sufficient statistics are, per class, the weighted count, the mean and
the sum of squared deviations (ssd) of every feature, plus the unweighted
moments of all samples (for the variance-smoothing scale). Batches are
merged with the pairwise formula of Chan, Golub and LeVeque, so fitting in
chunks equals one fit. Variances, priors and scoring tables are derived
from the statistics when first needed.
"""

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from fastnb._base import (
    FLOAT_DTYPES,
    BaseNB,
    check_class_prior,
    check_sample_weight,
    data_size,
    effective_n_threads,
    fitted_table,
    pad_classes,
    rows_by_class,
    sparse_arrays,
    thread_scratch,
)
from fastnb._simd import kernels as _kernels


def merge_moments(count, mean, ssd, batch_count, batch_mean, batch_ssd):
    """Pairwise merge of two sets of moments (Chan, Golub and LeVeque).

    ``count`` broadcasts against the (..., n_features) means and ssds.
    Returns the merged (count, mean, ssd).
    """
    total = count + batch_count
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(total > 0, batch_count / total, 0.0)
    delta = batch_mean - mean
    merged_mean = mean + delta * share
    merged_ssd = ssd + batch_ssd + delta**2 * count * share
    return total, merged_mean, merged_ssd


def class_moments(X, y, sample_weight, n_classes):
    """Weighted count, mean and ssd of every feature in each class of a batch."""
    n_features = X.shape[1]
    n_threads = effective_n_threads(data_size(X))
    if not sp.issparse(X):
        return dense_class_moments(X, y, sample_weight, n_classes, n_threads)
    count = np.bincount(y, weights=sample_weight, minlength=n_classes)
    mean = np.zeros((n_classes, n_features))
    ssd = np.zeros((n_classes, n_features))
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()  # a repeated entry is one value, not two samples
    stored = np.zeros((n_classes, n_features))
    if X.format == "csr":
        _kernels.gaussian_moments_csr(
            *sparse_arrays(X),
            *rows_by_class(y, n_classes),
            sample_weight,
            stored,
            mean,
            ssd,
            n_threads,
        )
    else:
        _kernels.gaussian_moments_csc(
            *sparse_arrays(X), y, sample_weight, stored, mean, ssd, n_threads
        )
    # Merge in the implicit zeros: weight count - stored, mean 0, ssd 0.
    zeros = np.maximum(count[:, None] - stored, 0.0)
    _, mean, ssd = merge_moments(zeros, 0.0, 0.0, stored, mean, ssd)
    return count, mean, ssd


def dense_class_moments(X, y, sample_weight, n_classes, n_threads):
    """class_moments of dense X: chunks of rows in parallel, merged in order.

    The chunk size depends on the data's shape only (never on the number of
    threads), and the chunks' statistics stay within about 32 MiB.
    """
    n_samples, n_features = X.shape
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    per_chunk = 2 * 8 * n_classes * n_features
    most_chunks = max(1, (32 << 20) // per_chunk)
    chunk_rows = max(1 << 16, -(-n_samples // most_chunks))
    n_chunks = max(1, -(-n_samples // chunk_rows))
    chunk_count = np.zeros((n_chunks, n_classes))
    steps = np.empty(n_samples)
    _kernels.gaussian_steps(y, sample_weight, chunk_rows, chunk_count, steps)
    chunk_mean = np.zeros((n_chunks, n_classes, n_features))
    chunk_ssd = np.zeros((n_chunks, n_classes, n_features))
    _kernels.gaussian_moments_dense(
        X, y, sample_weight, steps, chunk_rows, chunk_mean, chunk_ssd, n_threads
    )
    count, mean, ssd = chunk_count[0, :, None], chunk_mean[0], chunk_ssd[0]
    for b in range(1, n_chunks):
        count, mean, ssd = merge_moments(
            count, mean, ssd, chunk_count[b, :, None], chunk_mean[b], chunk_ssd[b]
        )
    return count[:, 0], mean, ssd


def pooled_moments(count, mean, ssd):
    """Moments of all classes together from each class's: (1,), (1, F), (1, F)."""
    total = count.sum()
    if total == 0:
        return np.zeros(1), np.zeros_like(mean[:1]), np.zeros_like(ssd[:1])
    overall = count @ mean / total
    spread = ssd.sum(axis=0) + count @ (mean - overall) ** 2
    return np.array([total]), overall[np.newaxis], spread[np.newaxis]


def batch_moments(X, y, sample_weight, n_classes, unit_weights):
    """Per-class weighted moments of a batch, plus its unweighted moments.

    Returns (count, mean, ssd) with n_classes + 1 rows: the last row holds
    the unweighted moments of all samples (the variance-smoothing scale).
    With unit weights they follow from the classes' moments; otherwise they
    take a second pass over X.
    """
    count, mean, ssd = class_moments(X, y, sample_weight, n_classes)
    if unit_weights:
        everyone = pooled_moments(count, mean, ssd)
    else:
        n_samples = X.shape[0]
        everyone = class_moments(
            X, np.zeros(n_samples, dtype=np.intp), np.ones(n_samples), 1
        )
    return (
        np.concatenate([count, everyone[0]]),
        np.vstack([mean, everyone[1]]),
        np.vstack([ssd, everyone[2]]),
    )


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
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Feature names, when X had string column names.

    Notes
    -----
    Differences from scikit-learn: sparse input is accepted; ``epsilon_``
    after several ``partial_fit`` calls is computed from all the data seen
    (scikit-learn uses the last batch only), so chunked fitting equals one
    fit; and sample weights must be finite and non-negative.

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

    _parameter_constraints: dict = {
        "priors": ["array-like", None],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
        "var_estimator": [StrOptions({"mle", "unbiased"})],
        "var_type": [StrOptions({"diag", "tied", "spherical"})],
    }

    var_ = fitted_table("var_", "ndarray (n_classes, n_features): variances.")
    epsilon_ = fitted_table("epsilon_", "float: amount added to every variance.")
    class_prior_ = fitted_table("class_prior_", "ndarray (n_classes,): P(c).")

    def __init__(
        self, *, priors=None, var_smoothing=1e-9, var_estimator="mle", var_type="diag"
    ):
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.var_estimator = var_estimator
        self.var_type = var_type

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # The statistics _count, _mean and _ssd have a row per class and one more,
    # the last, for all samples unweighted.

    @property
    def theta_(self):
        """ndarray of shape (n_classes, n_features): mean of each feature per class."""
        return self._mean[:-1].astype(self._dtype)

    @property
    def class_count_(self):
        """ndarray of shape (n_classes,): weighted number of samples per class."""
        return self._count[:-1].astype(self._dtype)

    def _output_dtype(self, X):
        # As scikit-learn: float32 only when both the model and X are float32.
        return np.result_type(self._dtype, X.dtype)

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
        if self._smoothing["var_type"] != "tied":
            raise AttributeError(
                "coef_ and intercept_ exist only for var_type='tied', where the "
                f"decision function is linear; this model has "
                f"var_type={self._smoothing['var_type']!r}."
            )
        tables = self._final_tables()
        theta = self._mean[:-1]
        coef = theta / tables["variance"]
        intercept = tables["log_prior"] - 0.5 * (theta * coef).sum(axis=1)
        return coef.astype(self._dtype), intercept.astype(self._dtype)

    def _check_X(self, X):
        return validate_data(
            self, X, accept_sparse="csr", dtype=FLOAT_DTYPES, reset=False
        )

    def _check_priors(self, n_classes):
        priors = check_class_prior(self.priors, n_classes)
        if priors is None:
            return None
        if not np.isclose(priors.sum(), 1.0):
            raise ValueError("The sum of the priors should be 1.")
        if (priors < 0).any():
            raise ValueError("Priors must be non-negative.")
        return priors

    def _check_batch(self, X, y, sample_weight, reset, partial):
        # NaN and infinity are caught in the moments (see _batch_moments),
        # saving a pass over X.
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse=("csr", "csc"),
            dtype=FLOAT_DTYPES,
            ensure_all_finite=False,
            reset=reset,
        )
        unit_weights = sample_weight is None
        sample_weight = check_sample_weight(
            sample_weight, X.shape[0], allow_all_zero=partial
        )
        smoothing = {
            "var_smoothing": self.var_smoothing,
            "var_estimator": self.var_estimator,
            "var_type": self.var_type,
        }
        return (X, unit_weights), y, sample_weight, smoothing

    def _class_smoothing(self, n_classes):
        return {"priors": self._check_priors(n_classes)}

    def _init_statistics(self, n_classes, batch):
        X, _ = batch
        self._dtype = X.dtype
        self._count = np.zeros(n_classes + 1)
        self._mean = np.zeros((n_classes + 1, X.shape[1]))
        self._ssd = np.zeros((n_classes + 1, X.shape[1]))

    def _add_batch(self, batch, y, sample_weight):
        # Rebinds the statistics only after the batch's moments are known
        # (they raise on non-finite X). Merged into empty statistics, a
        # batch's moments come out unchanged.
        X, unit_weights = batch
        count, mean, ssd = self._batch_moments(
            X, y, sample_weight, len(self.classes_), unit_weights
        )
        count, mean, ssd = merge_moments(
            self._count[:, None], self._mean, self._ssd, count[:, None], mean, ssd
        )
        self._count, self._mean, self._ssd = count[:, 0], mean, ssd

    @staticmethod
    def _batch_moments(X, y, sample_weight, n_classes, unit_weights):
        """batch_moments, refusing X with NaN or infinity.

        A non-finite value makes the moments of its class non-finite, and
        the unweighted moments include every sample.
        """
        # Non-finite input overflows on the way: the error below says so.
        with np.errstate(over="ignore", invalid="ignore"):
            count, mean, ssd = batch_moments(
                X, y, sample_weight, n_classes, unit_weights
            )
        if not (np.isfinite(mean[-1]).all() and np.isfinite(ssd[-1]).all()):
            raise ValueError(
                "Input X contains NaN or infinity (or values so large that their "
                "squares overflow float64)."
            )
        return count, mean, ssd

    def _finalize(self):
        params = self._smoothing
        n_classes = len(self.classes_)
        count, ssd, theta = self._count[:-1], self._ssd[:-1], self._mean[:-1]
        n_features = ssd.shape[1]
        unbiased = params["var_estimator"] == "unbiased"
        if params["var_type"] == "diag":
            pooled_ssd, dof = ssd, count[:, None] - unbiased
        elif params["var_type"] == "tied":
            seen = np.count_nonzero(count)
            pooled_ssd, dof = ssd.sum(axis=0), count.sum() - unbiased * seen
        else:
            pooled_ssd = ssd.sum(axis=1, keepdims=True)
            dof = n_features * (count[:, None] - unbiased)
        with np.errstate(divide="ignore", invalid="ignore"):
            variance = np.where(dof > 0, pooled_ssd / dof, 0.0)
        variance = np.broadcast_to(variance, ssd.shape)
        # Smoothing scale: the largest (unweighted, maximum-likelihood)
        # variance of any feature over all samples seen.
        scale = (self._ssd[-1] / max(self._count[-1], 1)).max()
        epsilon = params["var_smoothing"] * (scale if scale > 0 else 1.0)
        variance = variance + epsilon
        if (variance <= 0).any():
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
        inv_var = 1.0 / variance
        intercept = log_prior - 0.5 * np.log(2.0 * np.pi * variance).sum(axis=1)
        return {
            "var_": variance.astype(self._dtype),
            "epsilon_": self._dtype.type(epsilon),
            "class_prior_": prior.astype(self._dtype),
            "variance": variance,
            "log_prior": log_prior,
            "theta": pad_classes(theta.T),
            "inv_var": pad_classes(inv_var.T),
            "intercept": pad_classes(intercept),
            "zeros_intercept": pad_classes(
                intercept - 0.5 * (theta**2 * inv_var).sum(axis=1)
            ),
        }

    def _score(self, X, output, out, labels):
        tables = self._final_tables()
        n_threads = effective_n_threads(data_size(X) * len(self.classes_))
        scoring = (
            output,
            out,
            labels,
            thread_scratch(n_threads, len(self.classes_)),
            n_threads,
        )
        theta, inv_var = tables["theta"], tables["inv_var"]
        if sp.issparse(X):
            _kernels.gaussian_score_csr(
                *sparse_arrays(X), theta, inv_var, tables["zeros_intercept"], *scoring
            )
        else:
            _kernels.gaussian_score_dense(
                X, theta, inv_var, tables["intercept"], *scoring
            )
