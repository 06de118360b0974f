"""Plain NumPy/SciPy Naive Bayes estimators: the test oracle and bench baseline.

This module holds deliberately simple implementations of every Naive Bayes
family of :mod:`fastnb`. They are written for a reader checking the
mathematics, not for speed: every step is a few vectorised NumPy or SciPy
expressions (loops run over classes, features or families, never over
samples), and sparse input is never densified whole (GaussianNB, whose sums
run over every value, zeros included, reads it a block of rows at a time).
The tests compare the compiled estimators of :mod:`fastnb` against these
classes, and the benchmarks use them as the baseline, so the module imports
nothing from the rest of the package.

Every estimator follows fastnb's state protocol step for step, under the
same names. A fitted model is its sufficient statistics, kept in
``statistics_`` (a dict with the keys and shapes of the protocol), plus its
constructor parameters; everything else is derived from them:

``_batch_statistics(X, y_encoded, sample_weight, n_classes)``
    The statistics of one batch, as a dict of fresh arrays.
``_combine_statistics(a, b)``
    The statistics of two batches together: sums, Chan's pairwise formula
    for moments, the union of categories.
``_tables(statistics)``
    The public fitted attributes (``feature_log_prob_``, ``var_`` ...).
``_score(X)``
    The joint log-likelihood ``log P(c) + log P(x | c)``, float64.

``fit`` is one batch; ``partial_fit`` combines the model's statistics with
each new batch's.

The estimators trust their inputs. ``X`` is a dense array (or a pandas
DataFrame where a model reads columns of different kinds) or a SciPy sparse
matrix or array, ``y`` a 1-D array of labels and ``sample_weight`` an
optional 1-D array of non-negative weights. Parameters and fitted attributes
carry the same names, shapes, dtypes and meaning as in :mod:`fastnb`, and
those fastnb shares with :mod:`sklearn.naive_bayes` as there.

Classes
-------
MultinomialNB
    Multinomial event model, for counts such as word frequencies.
ComplementNB
    Complement Naive Bayes of Rennie et al. (2003), for imbalanced text data.
BernoulliNB
    Multivariate Bernoulli event model, for binary features.
PoissonNB
    Counts as Poisson rates per class.
GaussianNB
    Normal features, with the variance options of fastnb.GaussianNB.
KernelDensityNB
    A Gaussian kernel density per class and feature, binned or exact.
CategoricalNB
    A probability table per attribute, on category codes or raw values.
MixedNB
    One model over families of columns of different kinds.
"""

import sys
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "ComplementNB",
    "GaussianNB",
    "KernelDensityNB",
    "MixedNB",
    "MultinomialNB",
    "PoissonNB",
]

# With force_alpha=False, additive smoothing below this value is raised to it.
_ALPHA_MIN = 1e-10
_FLOAT_DTYPES = (np.float32, np.float64)
# The statistic every family keeps, and the one MixedNB's generic code reads.
_CLASS_COUNT = "class_count"


# Each family's statistics, read by name (``statistics_`` itself is a dict,
# as fastnb.get_state gives them); those a model may not keep are None.
class _Counts(NamedTuple):
    class_count: np.ndarray
    feature_count: np.ndarray
    missing_count: np.ndarray | None = None


class _Moments(NamedTuple):
    class_count: np.ndarray
    mean: np.ndarray
    ssd: np.ndarray
    sample_count: np.ndarray
    sample_mean: np.ndarray
    sample_ssd: np.ndarray
    dtype: np.dtype
    missing_count: np.ndarray | None = None
    sample_missing_count: np.ndarray | None = None


class _Density(NamedTuple):
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


class _Categories(NamedTuple):
    class_count: np.ndarray
    category_count: np.ndarray
    categories: list


def _or_zero(value):
    """A statistic a model may not keep (None): 0 where it does not."""
    return 0.0 if value is None else value


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _dense(M):
    """Return a matrix product, sparse or dense, as a dense float64 ndarray."""
    if sp.issparse(M):
        M = M.toarray()
    return np.asarray(M, dtype=np.float64)


def _numeric(X):
    """X as a model of numbers reads it: float32 or float64, sparse or dense.

    Other dtypes (integers, objects holding numbers) become float64.
    """
    if sp.issparse(X):
        return X if X.dtype in _FLOAT_DTYPES else X.astype(np.float64)
    X = np.asarray(X)
    return X if X.dtype in _FLOAT_DTYPES else X.astype(np.float64)


def _weights(sample_weight, n_samples):
    """The sample weights as float64, ones when None."""
    if sample_weight is None:
        return np.ones(n_samples)
    return np.asarray(sample_weight, dtype=np.float64)


def _class_indicator(y_encoded, sample_weight, n_classes):
    """Sparse (n_classes, n_samples) matrix: each sample's weight in its class's row.

    ``indicator @ X`` is the weighted sum of X's rows in each class.
    """
    n_samples = len(y_encoded)
    return sp.csr_array(
        (sample_weight, (y_encoded, np.arange(n_samples))),
        shape=(n_classes, n_samples),
    )


def _class_count(y_encoded, sample_weight, n_classes):
    """Total sample weight of each class."""
    return np.bincount(y_encoded, weights=sample_weight, minlength=n_classes)


def _linear_scores(X, weights):
    """``X @ weights`` as a dense float64 array, summed over the nonzeros of X.

    A zero in X adds nothing even against an infinite weight: a feature absent
    from a sample carries no evidence (0 * -inf counts as 0, not NaN).
    """
    if not np.isfinite(weights).all():
        # Only the nonzeros of X are multiplied by a sparse product.
        X = sp.csr_array(X, copy=True)
        X.eliminate_zeros()
    return _dense(X @ weights)


def _missing(X):
    """1.0 where X holds NaN (a missing value), else 0: sparse as X is."""
    X = _numeric(X)
    if sp.issparse(X):
        X = sp.csr_array(X, copy=True)
        X.data = np.isnan(X.data).astype(np.float64)
        return X
    return np.isnan(X).astype(np.float64)


def _without_missing(X):
    """X with its missing values (NaN) as 0, which adds to no sum."""
    X = _numeric(X)
    if sp.issparse(X):
        X = sp.csr_array(X, copy=True)
        X.data = np.nan_to_num(X.data, nan=0.0, posinf=np.inf, neginf=-np.inf)
        return X
    return np.where(np.isnan(X), 0.0, X)


def _is_m_estimate(alpha):
    """Whether ``alpha`` is an m-estimate (an object with ``m`` and ``prior``)."""
    return hasattr(alpha, "m") and hasattr(alpha, "prior")


def _smoothing(alpha, force_alpha):
    """The smoothing as the tables use it: an m-estimate, or float64 pseudo-counts."""
    if _is_m_estimate(alpha):
        return alpha
    alpha = np.asarray(alpha, dtype=np.float64)
    return alpha if force_alpha else np.maximum(alpha, _ALPHA_MIN)


def _class_log_prior(class_count, class_prior, fit_prior):
    """Log class priors: given, fitted from the class weights, or uniform.

    Uniform also when fitting the prior but no sample has carried weight yet.
    """
    n_classes = len(class_count)
    if class_prior is not None:
        return np.log(np.asarray(class_prior, dtype=np.float64))
    if fit_prior and class_count.sum() > 0:
        # A class without weight gets log(0) = -inf, silently.
        with np.errstate(divide="ignore"):
            return np.log(class_count) - np.log(class_count.sum())
    return np.full(n_classes, -np.log(n_classes))


def _moments(X, y_encoded, sample_weight, n_classes):
    """Weighted count, mean and ssd of every feature in each class.

    ssd is the sum of squared deviations from the class mean; a class
    without weight has mean 0 and ssd 0. Dense X takes two passes (mean,
    then squared deviations from it) over the data shifted by the first row
    of each class, so that a feature constant in a class has exactly that
    mean and an ssd of exactly 0 (on which epsilon_ depends when every
    feature is constant). Sparse X is read a block of rows at a time made
    dense, never all of it, and the blocks' moments are merged.
    """
    if sp.issparse(X):
        blocks = [
            _moments(block, y_encoded[rows], sample_weight[rows], n_classes)
            for rows, block in _dense_row_blocks(X)
        ]
        count, mean, ssd = blocks[0]
        for block_count, block_mean, block_ssd in blocks[1:]:
            count, mean, ssd = _merge_moments(
                count[:, np.newaxis],
                mean,
                ssd,
                block_count[:, np.newaxis],
                block_mean,
                block_ssd,
            )
            count = count[:, 0]
        return count, mean, ssd
    indicator = _class_indicator(y_encoded, sample_weight, n_classes)
    count = _class_count(y_encoded, sample_weight, n_classes)[:, np.newaxis]
    present, first_row = np.unique(y_encoded, return_index=True)
    shift = np.zeros((n_classes, X.shape[1]))
    shift[present] = X[first_row]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(
            count > 0, shift + _dense(indicator @ (X - shift[y_encoded])) / count, 0.0
        )
    ssd = _dense(indicator @ (X - mean[y_encoded]) ** 2)
    return count[:, 0], mean, ssd


def _observed_moments(X, y_encoded, sample_weight, n_classes):
    """_moments leaving out NaN (missing values): the weighted count, the
    weight of each class's missing values of each feature (n_classes,
    n_features), and the mean and ssd of each class's observed values of
    each feature (0 and 0 where there are none)."""
    if sp.issparse(X):
        blocks = [
            _observed_moments(block, y_encoded[rows], sample_weight[rows], n_classes)
            for rows, block in _dense_row_blocks(X)
        ]
        count, missing, mean, ssd = blocks[0]
        for block_count, block_missing, block_mean, block_ssd in blocks[1:]:
            _, mean, ssd = _merge_moments(
                count[:, np.newaxis] - missing,
                mean,
                ssd,
                block_count[:, np.newaxis] - block_missing,
                block_mean,
                block_ssd,
            )
            count, missing = count + block_count, missing + block_missing
        return count, missing, mean, ssd
    indicator = _class_indicator(y_encoded, sample_weight, n_classes)
    count = _class_count(y_encoded, sample_weight, n_classes)
    absent = np.isnan(X)
    missing = _dense(indicator @ absent.astype(np.float64))
    observed = count[:, np.newaxis] - missing
    # Shifted as in _moments, by the first row of each class (its missing
    # values by 0).
    present, first_row = np.unique(y_encoded, return_index=True)
    shift = np.zeros((n_classes, X.shape[1]))
    shift[present] = np.nan_to_num(X[first_row], nan=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        sums = _dense(indicator @ np.where(absent, 0.0, X - shift[y_encoded]))
        mean = np.where(observed > 0, shift + sums / observed, 0.0)
    ssd = _dense(indicator @ np.where(absent, 0.0, X - mean[y_encoded]) ** 2)
    return count, missing, mean, ssd


def _dense_row_blocks(X):
    """Blocks of rows of sparse X, as (slice of rows, the rows as a dense array).

    A block holds about 2**20 values (8 MiB of float64), never all of X.
    """
    X = sp.csr_array(X)
    step = max(1, 2**20 // X.shape[1])
    for start in range(0, X.shape[0], step):
        rows = slice(start, start + step)
        yield rows, X[rows].toarray()


def _merge_moments(count_a, mean_a, ssd_a, count_b, mean_b, ssd_b):
    """Pairwise merge of two sets of moments (Chan, Golub and LeVeque).

    The counts broadcast against the means and ssds. Returns the merged
    (count, mean, ssd).
    """
    count = count_a + count_b
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(count > 0, count_b / count, 0.0)
    delta = mean_b - mean_a
    mean = mean_a + delta * share
    ssd = ssd_a + ssd_b + delta**2 * count_a * share
    return count, mean, ssd


def _columns(X):
    """The columns of a 2-D array or a DataFrame, each with its own dtype.

    A sparse matrix's columns are made dense one at a time (0 where nothing
    is stored, repeated entries summed).
    """
    if hasattr(X, "iloc"):
        return [X.iloc[:, j].to_numpy() for j in range(X.shape[1])]
    if sp.issparse(X):
        X = sp.csc_matrix(X)
        return [X[:, [j]].toarray().ravel() for j in range(X.shape[1])]
    X = np.asarray(X)
    return [X[:, j] for j in range(X.shape[1])]


def _select(X, positions):
    """The columns of X at ``positions``, a DataFrame's keeping their dtypes."""
    if hasattr(X, "iloc"):
        return X.iloc[:, positions]
    return np.asarray(X)[:, positions]


# ---------------------------------------------------------------------------
# What every estimator shares
# ---------------------------------------------------------------------------


class _ReferenceNB:
    """fit, partial_fit and the prediction methods, from the protocol's steps.

    A subclass supplies ``_batch_statistics``, ``_combine_statistics``,
    ``_tables`` and ``_score``, and may override ``_log_prior`` (the log
    prior its ``_score`` adds) and ``_output_dtype``.
    """

    def fit(self, X, y, sample_weight=None):
        """Fit the model to training data: the statistics of one batch.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training vectors. Sparse input is never densified whole.
        y : ndarray of shape (n_samples,)
            Target labels, of any sortable type.
        sample_weight : ndarray of shape (n_samples,), default=None
            Weight of each sample; None weights every sample by one.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self.classes_, y_encoded = np.unique(y, return_inverse=True)
        self.n_features_in_ = X.shape[1]
        statistics = self._batch_statistics(
            X,
            y_encoded.reshape(-1),
            _weights(sample_weight, len(y_encoded)),
            len(self.classes_),
        )
        return self._fitted(statistics)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Add a batch of samples: combine its statistics with the model's.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training vectors. Sparse input is never densified whole.
        y : ndarray of shape (n_samples,)
            Target labels, each one of ``classes``.
        classes : array-like of shape (n_classes,), default=None
            Every class that can appear in y; required on the first call
            (unless the model was fitted), ignored afterwards.
        sample_weight : ndarray of shape (n_samples,), default=None
            Weight of each sample; None weights every sample by one.

        Returns
        -------
        self : object
            The updated estimator.
        """
        first_call = not hasattr(self, "statistics_")
        if first_call:
            self.classes_ = np.unique(classes)
            self.n_features_in_ = X.shape[1]
        y_encoded = np.searchsorted(self.classes_, np.asarray(y))
        batch = self._batch_statistics(
            X,
            y_encoded,
            _weights(sample_weight, len(y_encoded)),
            len(self.classes_),
        )
        if first_call:
            return self._fitted(batch)
        return self._fitted(self._combine_statistics(self.statistics_, batch))

    def _fitted(self, statistics):
        """Keep ``statistics`` and set the public attributes derived from them."""
        tables = self._tables(statistics)
        # An attribute of earlier tables that these lack (coef_ of a GaussianNB
        # whose var_type changed) must not outlive them.
        for name in getattr(self, "_table_names", ()):
            if name not in tables:
                delattr(self, name)
        for name, value in tables.items():
            setattr(self, name, value)
        self._table_names = list(tables)
        self.statistics_ = statistics
        return self

    def _output_dtype(self, X):
        """Floating dtype of the probability outputs (float64 unless overridden)."""
        return np.float64

    def _log_prior(self, statistics=None):
        """The log prior the joint log-likelihood adds (of ``statistics_`` if None).

        From ``class_prior`` and ``fit_prior``; GaussianNB overrides it.
        """
        if statistics is None:
            statistics = self.statistics_
        return _class_log_prior(
            statistics[_CLASS_COUNT], self.class_prior, self.fit_prior
        )

    def predict_joint_log_proba(self, X):
        """Return the joint log-likelihood ``log P(x, c)`` of each sample.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        jll : ndarray of shape (n_samples, n_classes)
            Unnormalised log-probabilities, with columns in the order of
            ``classes_``.
        """
        return self._score(X).astype(self._output_dtype(X), copy=False)

    def _log_proba(self, X):
        """``log P(c | x)`` in float64."""
        jll = self._score(X)
        # Shifted by the row maximum, so exp() cannot overflow and the leading
        # class is exact however large the scores are. A sample impossible in
        # every class (-inf throughout) has no posterior: NaN.
        with np.errstate(invalid="ignore"):
            shifted = jll - jll.max(axis=1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))

    def predict_log_proba(self, X):
        """Return the log of the posterior class probabilities.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            ``log P(c | x)``, with columns in the order of ``classes_``.
        """
        return self._log_proba(X).astype(self._output_dtype(X), copy=False)

    def predict_proba(self, X):
        """Return the posterior class probabilities.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            ``P(c | x)``, each row summing to one, with columns in the order
            of ``classes_``.
        """
        return np.exp(self._log_proba(X)).astype(self._output_dtype(X), copy=False)

    def predict(self, X):
        """Return the most probable class of each sample.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to classify.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels, taken from ``classes_``.
        """
        return self.classes_[np.argmax(self._score(X), axis=1)]


# ---------------------------------------------------------------------------
# Count-based families: class weights and per-class feature sums
# ---------------------------------------------------------------------------


class _ReferenceCountNB(_ReferenceNB):
    """The steps shared by the families whose statistics are feature sums.

    Statistics: ``class_count`` (n_classes,) and ``feature_count``
    (n_classes, n_features), the weighted sum of each feature (as
    ``_counted`` reads it) over the samples of each class; with
    ``missing="ignore"`` a NaN is a missing value, which adds nothing to
    them, and the families whose parameters are per sample
    (``_keeps_missing``) also keep ``missing_count``, the weight of each
    class's samples missing each feature. A subclass supplies
    ``_feature_tables(statistics, alpha)``, the tables other than the counts
    and the class log prior, and ``_score``.
    """

    _keeps_missing = False

    def __init__(self, *, alpha, force_alpha, fit_prior, class_prior, missing):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.missing = missing

    def _counted(self, X):
        """X as the model counts and scores it (its numbers, by default)."""
        return _numeric(X)

    def _batch_statistics(self, X, y_encoded, sample_weight, n_classes):
        indicator = _class_indicator(y_encoded, sample_weight, n_classes)
        statistics = {
            "class_count": _class_count(y_encoded, sample_weight, n_classes),
            "feature_count": _dense(indicator @ self._counted(_without_missing(X))),
        }
        if self._keeps_missing and self.missing == "ignore":
            statistics.update(missing_count=_dense(indicator @ _missing(X)))
        return statistics

    def _combine_statistics(self, a, b):
        return {key: a[key] + b[key] for key in a}

    def _seen(self, statistics):
        """The weight of each class's samples in which each feature was seen."""
        counts = _Counts(**statistics)
        return counts.class_count[:, np.newaxis] - _or_zero(counts.missing_count)

    def _tables(self, statistics):
        counts = _Counts(**statistics)
        return {
            "class_count_": counts.class_count,
            "feature_count_": counts.feature_count,
            "class_log_prior_": self._log_prior(statistics),
            **self._feature_tables(
                statistics, _smoothing(self.alpha, self.force_alpha)
            ),
        }


class MultinomialNB(_ReferenceCountNB):
    """Reference Naive Bayes classifier for multinomial models.

    Each class has a categorical distribution over features, estimated from
    the smoothed per-class feature totals; a sample's features are counts
    drawn from it.

    Parameters
    ----------
    alpha : float, ndarray of shape (n_features,) or MEstimate, default=1.0
        Additive (Laplace/Lidstone) smoothing added to every feature count;
        or an m-estimate (an object with ``m`` and ``prior``): ``m`` virtual
        words spread over the features by ``prior`` (uniform when None).
    force_alpha : bool, default=True
        If False, additive smoothing below 1e-10 is raised to 1e-10.
    fit_prior : bool, default=True
        Whether to estimate class priors from the data; if False the prior
        is uniform. Ignored when ``class_prior`` is given.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed prior probabilities of the classes.
    missing : {"error", "ignore"}, default="error"
        What a NaN in X is: refused ("error", what the estimator's input
        validation does), or a missing value ("ignore"), left out of its
        feature's statistics and of its feature's term in the score.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
    statistics_ : dict
        ``class_count`` and ``feature_count``, the sufficient statistics.
    class_count_ : ndarray of shape (n_classes,)
        Total sample weight of each class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted sum of each feature over the samples of each class.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log P(feature | class)`` after smoothing.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior probability of each class.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    ComplementNB : Complement variant, often better on imbalanced text.
    BernoulliNB : Model of binary feature occurrence.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb.reference import MultinomialNB
    >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 0, 4]])
    >>> y = np.array(["sport", "sport", "politics", "politics"])
    >>> model = MultinomialNB().fit(X, y)
    >>> print(model.predict(np.array([[4, 1, 0]]))[0])
    sport
    >>> chunked = MultinomialNB().partial_fit(X[:2], y[:2], classes=np.unique(y))
    >>> chunked = chunked.partial_fit(X[2:], y[2:])
    >>> bool(np.allclose(chunked.feature_log_prob_, model.feature_log_prob_))
    True
    """

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        fit_prior=True,
        class_prior=None,
        missing="error",
    ):
        super().__init__(
            alpha=alpha,
            force_alpha=force_alpha,
            fit_prior=fit_prior,
            class_prior=class_prior,
            missing=missing,
        )

    def _feature_tables(self, statistics, alpha):
        feature_count = _Counts(**statistics).feature_count
        if _is_m_estimate(alpha):
            n_features = feature_count.shape[1]
            prior = 1.0 / n_features if alpha.prior is None else alpha.prior
            pseudo = np.asarray(alpha.m, dtype=np.float64) * np.asarray(prior)
        else:
            pseudo = alpha
        smoothed = feature_count + pseudo
        # Without smoothing a feature never seen in a class has log(0) = -inf.
        with np.errstate(divide="ignore"):
            log_smoothed = np.log(smoothed)
        return {
            "feature_log_prob_": log_smoothed
            - np.log(smoothed.sum(axis=1, keepdims=True))
        }

    def _score(self, X):
        # sum_j x_j log P(j | c) + log P(c); a missing x_j adds nothing.
        return (
            _linear_scores(_without_missing(X), self.feature_log_prob_.T)
            + self.class_log_prior_
        )


class ComplementNB(_ReferenceCountNB):
    """Reference Complement Naive Bayes classifier (Rennie et al., 2003).

    Feature weights are estimated from the complement of each class (the
    samples of all other classes), which makes the estimates steadier when
    classes are imbalanced. A sample is scored by the negated (or
    normalised) complement log-probabilities of its features.

    Parameters
    ----------
    alpha : float or ndarray of shape (n_features,), default=1.0
        Additive (Laplace/Lidstone) smoothing added to every feature count.
    force_alpha : bool, default=True
        If False, values of ``alpha`` below 1e-10 are raised to 1e-10.
    fit_prior : bool, default=True
        Only used when the training data holds a single class; the scores
        of several classes do not include the prior.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed prior probabilities of the classes (single-class case only).
    norm : bool, default=False
        Whether to divide each class's weights by their sum (the second
        normalisation of Rennie et al.).
    missing : {"error", "ignore"}, default="error"
        What a NaN in X is: refused ("error", what the estimator's input
        validation does), or a missing value ("ignore"), left out of its
        feature's statistics and of its feature's term in the score.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
    statistics_ : dict
        ``class_count`` and ``feature_count``, the sufficient statistics.
    class_count_ : ndarray of shape (n_classes,)
        Total sample weight of each class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted sum of each feature over the samples of each class.
    feature_all_ : ndarray of shape (n_features,)
        Weighted sum of each feature over all samples.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        Feature weights of each class used for scoring.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior probability of each class.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    MultinomialNB : The multinomial model this one complements.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from fastnb.reference import ComplementNB
    >>> X = sp.csr_array(np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 0, 4]]))
    >>> y = np.array([0, 0, 1, 1])
    >>> model = ComplementNB().fit(X, y)
    >>> print(model.predict(sp.csr_array(np.array([[0, 1, 5]])))[0])
    1
    """

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        fit_prior=True,
        class_prior=None,
        norm=False,
        missing="error",
    ):
        super().__init__(
            alpha=alpha,
            force_alpha=force_alpha,
            fit_prior=fit_prior,
            class_prior=class_prior,
            missing=missing,
        )
        self.norm = norm

    def _feature_tables(self, statistics, alpha):
        feature_count = _Counts(**statistics).feature_count
        feature_all = feature_count.sum(axis=0)
        complement = feature_all + alpha - feature_count
        logged = np.log(complement / complement.sum(axis=1, keepdims=True))
        if self.norm:
            weights = logged / logged.sum(axis=1, keepdims=True)
        else:
            # Negated so that the most likely class has the largest score.
            weights = -logged
        return {"feature_all_": feature_all, "feature_log_prob_": weights}

    def _score(self, X):
        jll = _linear_scores(_without_missing(X), self.feature_log_prob_.T)
        # The prior only matters when there is nothing to compare against.
        if len(self.classes_) == 1:
            jll += self.class_log_prior_
        return jll


class BernoulliNB(_ReferenceCountNB):
    """Reference Naive Bayes classifier for multivariate Bernoulli models.

    Each feature is an independent binary event with a per-class
    probability ``p``; unlike the multinomial model, the absence of a
    feature counts as evidence too:
    ``log P(x | c) = sum_j x_j log p_cj + (1 - x_j) log(1 - p_cj)``.

    Parameters
    ----------
    alpha : float, ndarray of shape (n_features,) or MEstimate, default=1.0
        Additive smoothing: ``p = (N_cj + alpha_j) / (N_c + 2 alpha_j)``; or
        an m-estimate (an object with ``m`` and ``prior``):
        ``p = (N_cj + m prior_j) / (N_c + m)``, ``prior`` 1/2 when None.
    force_alpha : bool, default=True
        If False, additive smoothing below 1e-10 is raised to 1e-10.
    binarize : float or None, default=0.0
        Threshold for turning features into 0/1 (values above it become 1),
        applied in fit and predict. If None, ``X`` is taken to be binary
        already.
    fit_prior : bool, default=True
        Whether to estimate class priors from the data; if False the prior
        is uniform. Ignored when ``class_prior`` is given.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed prior probabilities of the classes.
    missing : {"error", "ignore"}, default="error"
        What a NaN in X is: refused ("error", what the estimator's input
        validation does), or a missing value ("ignore"), left out of its
        feature's statistics and of its feature's term in the score.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
    statistics_ : dict
        ``class_count`` and ``feature_count``, the sufficient statistics.
    class_count_ : ndarray of shape (n_classes,)
        Total sample weight of each class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted number of samples of each class in which each feature is on.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log P(feature = 1 | class)`` after smoothing.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior probability of each class.
    n_features_in_ : int
        Number of features seen during fit.

    Notes
    -----
    Without smoothing a feature can be certain in a class (``p = 1``): a
    sample lacking it then has probability 0 in that class (a joint
    log-likelihood of -inf), and a sample having it loses nothing.

    See Also
    --------
    MultinomialNB : Model of feature counts rather than occurrence.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb.reference import BernoulliNB
    >>> X = np.array([[1, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 1], [0, 1, 1, 1]])
    >>> y = np.array(["ham", "ham", "spam", "spam"])
    >>> model = BernoulliNB().fit(X, y)
    >>> print(model.predict(np.array([[0, 0, 1, 0]]))[0])
    spam
    """

    _keeps_missing = True

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        binarize=0.0,
        fit_prior=True,
        class_prior=None,
        missing="error",
    ):
        super().__init__(
            alpha=alpha,
            force_alpha=force_alpha,
            fit_prior=fit_prior,
            class_prior=class_prior,
            missing=missing,
        )
        self.binarize = binarize

    def _counted(self, X):
        """X as 1/0 against the threshold (a copy), or X itself without one."""
        X = _numeric(X)
        if self.binarize is None:
            return X
        if sp.issparse(X):
            # Binarise the stored values only: implicit zeros stay zero.
            X = X.tocsr(copy=True)
            X.sum_duplicates()
            X.data = (X.data > self.binarize).astype(np.float64)
            return X
        return (X > self.binarize).astype(np.float64)

    def _feature_tables(self, statistics, alpha):
        if _is_m_estimate(alpha):
            prior = 0.5 if alpha.prior is None else np.asarray(alpha.prior)
            m = np.asarray(alpha.m, dtype=np.float64)
            pseudo_on, pseudo_total = m * prior, m
        else:
            # A two-outcome event: the denominator is smoothed by 2 alpha.
            pseudo_on, pseudo_total = alpha, 2 * alpha
        with np.errstate(divide="ignore", invalid="ignore"):
            feature_count = _Counts(**statistics).feature_count
            feature_log_prob = np.log(feature_count + pseudo_on) - np.log(
                self._seen(statistics) + pseudo_total
            )
        return {"feature_log_prob_": feature_log_prob}

    def _score(self, X):
        missing = _missing(X)
        X = self._counted(_without_missing(X))
        log_present = self.feature_log_prob_
        with np.errstate(divide="ignore"):
            log_absent = np.log(1 - np.exp(log_present))
        # A certain feature (p = 1) has log(1 - p) = -inf: it is left out of
        # the sums below, and a class is impossible for a sample lacking it.
        certain = np.isneginf(log_absent)
        log_absent[certain] = 0.0
        # sum_j [x_j log p_j + (1 - x_j) log(1 - p_j)]
        #   = sum_j log(1 - p_j) + sum_j x_j (log p_j - log(1 - p_j)),
        # so only the nonzeros of X are touched.
        jll = _linear_scores(X, (log_present - log_absent).T)
        jll += self.class_log_prior_ + log_absent.sum(axis=1)
        # A missing feature's term, log(1 - p_j) as a 0, is taken back out.
        jll -= _linear_scores(missing, log_absent.T)
        if certain.any():
            present = _linear_scores(X, certain.T.astype(np.float64))
            needed = certain.sum(axis=1) - _linear_scores(
                missing, certain.T.astype(np.float64)
            )
            jll[present < needed - 0.5] = -np.inf
        return jll


class PoissonNB(_ReferenceCountNB):
    """Reference Poisson Naive Bayes classifier.

    Each feature is a Poisson count with a rate per class, smoothed towards
    the feature's overall rate ``r_j`` (its weighted mean over all samples)
    as if ``alpha`` samples at that rate were added to every class:
    ``rate_cj = (S_cj + alpha_j r_j) / (N_c + alpha_j)``, kept above the
    smallest positive float.

    Parameters
    ----------
    alpha : float or ndarray of shape (n_features,), default=1.0
        Weight, in samples, of the overall rate in each class's rate.
    force_alpha : bool, default=True
        If False, values of ``alpha`` below 1e-10 are raised to 1e-10.
    fit_prior : bool, default=True
        Whether to estimate class priors from the data; if False the prior
        is uniform. Ignored when ``class_prior`` is given.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed prior probabilities of the classes.
    missing : {"error", "ignore"}, default="error"
        What a NaN in X is: refused ("error", what the estimator's input
        validation does), or a missing value ("ignore"), left out of its
        feature's statistics and of its feature's term in the score.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
    statistics_ : dict
        ``class_count`` and ``feature_count``, the sufficient statistics.
    class_count_ : ndarray of shape (n_classes,)
        Total sample weight of each class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted sum of each feature over the samples of each class.
    rate_ : ndarray of shape (n_classes, n_features)
        Smoothed Poisson rate of each feature per class.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior probability of each class.
    n_features_in_ : int
        Number of features seen during fit.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb.reference import PoissonNB
    >>> X = np.array([[5, 0], [4, 1], [0, 3], [1, 4]])
    >>> model = PoissonNB().fit(X, np.array(["a", "a", "b", "b"]))
    >>> print(model.predict(np.array([[6, 1]]))[0])
    a
    """

    _keeps_missing = True

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        fit_prior=True,
        class_prior=None,
        missing="error",
    ):
        super().__init__(
            alpha=alpha,
            force_alpha=force_alpha,
            fit_prior=fit_prior,
            class_prior=class_prior,
            missing=missing,
        )

    def _feature_tables(self, statistics, alpha):
        feature_count = _Counts(**statistics).feature_count
        seen = self._seen(statistics) + np.zeros_like(feature_count)
        total = seen.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            overall = np.where(total > 0, feature_count.sum(axis=0) / total, 0.0)
        weight = seen + alpha
        # A class with no weight (and alpha 0) takes the overall rate.
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where(
                weight > 0, (feature_count + alpha * overall) / weight, overall
            )
        return {"rate_": np.maximum(rate, np.finfo(np.float64).tiny)}

    def _score(self, X):
        # sum_j [x_j log rate_cj - rate_cj - log(x_j!)] + log P(c), over the
        # features seen: a missing one's -rate_cj is taken back out.
        missing = _missing(X)
        X = _without_missing(X)
        if sp.issparse(X):
            factorials = sp.csr_array(X, copy=True)
            factorials.sum_duplicates()
            factorials.data = gammaln(factorials.data.astype(np.float64) + 1)
            log_factorials = _dense(factorials.sum(axis=1)).reshape(-1)
        else:
            log_factorials = gammaln(X.astype(np.float64) + 1).sum(axis=1)
        jll = _linear_scores(X, np.log(self.rate_).T) - self.rate_.sum(axis=1)
        jll += _linear_scores(missing, self.rate_.T)
        return jll - log_factorials[:, np.newaxis] + self.class_log_prior_


# ---------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------


class _ReferencePriorsNB(_ReferenceNB):
    """The prior of the continuous families: ``priors`` given, else the
    weighted class frequencies (uniform before any weight)."""

    def _prior(self, statistics):
        """The class probabilities, float64."""
        if self.priors is not None:
            return np.asarray(self.priors, dtype=np.float64)
        count = statistics[_CLASS_COUNT]
        if count.sum() > 0:
            return count / count.sum()
        return np.full(len(count), 1.0 / len(count))

    def _log_prior(self, statistics=None):
        """The log prior the joint log-likelihood adds (of ``statistics_`` if None)."""
        if statistics is None:
            statistics = self.statistics_
        with np.errstate(divide="ignore"):
            return np.log(self._prior(statistics))


class GaussianNB(_ReferencePriorsNB):
    """Reference Gaussian Naive Bayes classifier.

    Each feature is normal within each class. Means and sums of squared
    deviations are weighted, computed in two passes (mean, then squared
    deviations from it); batches are merged with Chan's pairwise formula.
    Sparse input is read and scored a block of rows at a time made dense.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
        Fixed class probabilities; by default the weighted class frequencies.
    var_smoothing : float, default=1e-9
        Fraction of the largest variance of any feature (over all samples
        seen, unweighted) added to every variance; ``var_smoothing`` itself
        when every feature is constant.
    var_estimator : {"mle", "unbiased"}, default="mle"
        Divide the sum of squared deviations by the class weight, or by the
        class weight minus one (variance 0 when that is not positive).
    var_type : {"diag", "tied", "spherical"}, default="diag"
        One variance per class and feature, one per feature pooled over the
        classes (divided by the total weight, less the number of classes
        with weight if unbiased), or one per class pooled over the features.
    missing : {"error", "ignore"}, default="error"
        "ignore": NaN in X is a missing value, left out of its feature's
        moments (the class weights then being each feature's observed
        weights) and out of the row's score (its feature's term left out).
        "error": the reference trusts its input and does nothing about NaN.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
    statistics_ : dict
        The sufficient statistics: per class ``class_count``, ``mean`` and
        ``ssd`` (weighted); ``sample_count``, ``sample_mean`` and
        ``sample_ssd`` (all samples, unweighted); ``dtype`` of the data.
        With ``missing="ignore"``, also ``missing_count`` (the weight of
        each class's missing values of each feature) and
        ``sample_missing_count`` (all samples' missing values of each
        feature); the moments are then of the observed values.
    class_count_ : ndarray of shape (n_classes,)
        Total sample weight of each class.
    class_prior_ : ndarray of shape (n_classes,)
        Probability of each class.
    theta_ : ndarray of shape (n_classes, n_features)
        Mean of each feature per class.
    var_ : ndarray of shape (n_classes, n_features)
        Variance of each feature per class, smoothing included.
    epsilon_ : float
        Amount added to every variance.
    coef_ : ndarray of shape (n_classes, n_features)
        Only with ``var_type="tied"``: ``theta_ / var_``.
    intercept_ : ndarray of shape (n_classes,)
        Only with ``var_type="tied"``: ``log P(c) - 0.5 sum_j theta_cj^2 /
        var_j``.
    n_features_in_ : int
        Number of features seen during fit.

    Notes
    -----
    The attributes (and the outputs, for input of the same dtype) are
    float32 when the model was first fitted on float32 data; the statistics
    and the scores are float64.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb.reference import GaussianNB
    >>> X = np.array([[180, 75], [165, 61], [167, 62], [160, 55.0]])
    >>> model = GaussianNB().fit(X, np.array(["a", "a", "b", "b"]))
    >>> print(model.predict(np.array([[175.0, 70.0]]))[0])
    a
    """

    def __init__(
        self,
        *,
        priors=None,
        var_smoothing=1e-9,
        var_estimator="mle",
        var_type="diag",
        missing="error",
    ):
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.var_estimator = var_estimator
        self.var_type = var_type
        self.missing = missing

    def _batch_statistics(self, X, y_encoded, sample_weight, n_classes):
        X = _numeric(X)
        n_samples = X.shape[0]
        if self.missing == "ignore":
            return self._observed_statistics(X, y_encoded, sample_weight, n_classes)
        count, mean, ssd = _moments(X, y_encoded, sample_weight, n_classes)
        everyone = _moments(X, np.zeros(n_samples, np.intp), np.ones(n_samples), 1)
        return {
            "class_count": count,
            "mean": mean,
            "ssd": ssd,
            "sample_count": np.asarray(everyone[0][0], dtype=np.float64),
            "sample_mean": everyone[1][0],
            "sample_ssd": everyone[2][0],
            "dtype": X.dtype,
        }

    def _observed_statistics(self, X, y_encoded, sample_weight, n_classes):
        """_batch_statistics with missing="ignore": the moments of the
        observed values, and the missing counts."""
        n_samples = X.shape[0]
        count, missing, mean, ssd = _observed_moments(
            X, y_encoded, sample_weight, n_classes
        )
        everyone = _observed_moments(
            X, np.zeros(n_samples, np.intp), np.ones(n_samples), 1
        )
        return {
            "class_count": count,
            "mean": mean,
            "ssd": ssd,
            "sample_count": np.asarray(everyone[0][0], dtype=np.float64),
            "sample_mean": everyone[2][0],
            "sample_ssd": everyone[3][0],
            "dtype": X.dtype,
            "missing_count": missing,
            "sample_missing_count": everyone[1][0],
        }

    def _combine_statistics(self, a, b):
        a, b = _Moments(**a), _Moments(**b)
        count, mean, ssd = _merge_moments(
            a.class_count[:, np.newaxis] - _or_zero(a.missing_count),
            a.mean,
            a.ssd,
            b.class_count[:, np.newaxis] - _or_zero(b.missing_count),
            b.mean,
            b.ssd,
        )
        sample_count, sample_mean, sample_ssd = _merge_moments(
            a.sample_count - _or_zero(a.sample_missing_count),
            a.sample_mean,
            a.sample_ssd,
            b.sample_count - _or_zero(b.sample_missing_count),
            b.sample_mean,
            b.sample_ssd,
        )
        combined = {
            "class_count": a.class_count + b.class_count,
            "mean": mean,
            "ssd": ssd,
            "sample_count": np.asarray(a.sample_count + b.sample_count, np.float64),
            "sample_mean": sample_mean,
            "sample_ssd": sample_ssd,
            # The model keeps the dtype of the data it was first fitted on.
            "dtype": a.dtype,
        }
        if a.missing_count is not None:
            combined.update(
                missing_count=a.missing_count + b.missing_count,
                sample_missing_count=a.sample_missing_count + b.sample_missing_count,
            )
        return combined

    def _variance(self, statistics):
        """The smoothed variances (n_classes, n_features), float64, and epsilon."""
        moments = _Moments(**statistics)
        count, ssd = moments.class_count, moments.ssd
        unbiased = 1 if self.var_estimator == "unbiased" else 0
        # Each class's weight of each feature's observed values.
        observed = np.broadcast_to(
            count[:, np.newaxis] - _or_zero(moments.missing_count), ssd.shape
        )
        if self.var_type == "diag":
            pooled_ssd, dof = ssd, observed - unbiased
        elif self.var_type == "tied":
            pooled_ssd = ssd.sum(axis=0)
            dof = observed.sum(axis=0) - unbiased * np.count_nonzero(observed, axis=0)
        else:
            pooled_ssd = ssd.sum(axis=1, keepdims=True)
            dof = np.where(observed > 0, observed - unbiased, 0.0).sum(
                axis=1, keepdims=True
            )
        with np.errstate(divide="ignore", invalid="ignore"):
            variance = np.where(dof > 0, pooled_ssd / dof, 0.0)
        # The scale of the smoothing: the largest (unweighted, maximum
        # likelihood) variance of any feature over all samples seen (over
        # its observed values).
        sample_observed = moments.sample_count - _or_zero(moments.sample_missing_count)
        largest = (moments.sample_ssd / np.maximum(sample_observed, 1.0)).max()
        epsilon = self.var_smoothing * (largest if largest > 0 else 1.0)
        return np.broadcast_to(variance, ssd.shape) + epsilon, epsilon

    def _tables(self, statistics):
        moments = _Moments(**statistics)
        dtype = moments.dtype
        variance, epsilon = self._variance(statistics)
        theta = moments.mean
        tables = {
            "class_count_": moments.class_count.astype(dtype),
            "class_prior_": self._prior(statistics).astype(dtype),
            "theta_": theta.astype(dtype),
            "var_": variance.astype(dtype),
            "epsilon_": dtype.type(epsilon),
        }
        if self.var_type == "tied":
            # With one variance per feature the class scores are linear in x:
            # the terms in x_j^2 and log(var_j) are the same for every class.
            coef = theta / variance
            intercept = self._log_prior(statistics) - 0.5 * (theta * coef).sum(axis=1)
            tables.update(coef_=coef.astype(dtype), intercept_=intercept.astype(dtype))
        return tables

    def _output_dtype(self, X):
        # float32 only when both the model and X are float32.
        return np.result_type(_Moments(**self.statistics_).dtype, _numeric(X).dtype)

    def _score(self, X):
        # log P(c) - 0.5 sum_j [log(2 pi var_cj) + (x_j - theta_cj)^2 / var_cj],
        # from the float64 statistics.
        X = _numeric(X)
        theta = _Moments(**self.statistics_).mean
        variance, _ = self._variance(self.statistics_)
        if sp.issparse(X):
            # A block of rows at a time made dense, never all of X: each zero
            # adds theta^2 / var, and adding the zeros apart from the stored
            # values (all zeros, then less the stored ones) would cancel
            # catastrophically where theta^2 / var is large (a feature nearly
            # constant in a class).
            squared = np.vstack(
                [
                    _squared_distances(block, theta, variance)
                    for _, block in _dense_row_blocks(X)
                ]
            )
        else:
            squared = _squared_distances(X, theta, variance)
        log_var = np.log(2 * np.pi * variance)
        normaliser = -0.5 * log_var.sum(axis=1)
        if self.missing == "ignore":
            # Each row's normaliser over its observed features only.
            normaliser = normaliser + 0.5 * _dense(_missing(X) @ log_var.T)
        return self._log_prior() + normaliser - 0.5 * squared


def _squared_distances(X, theta, variance):
    """sum_j (x_j - theta_cj)^2 / var_cj for each row of dense X and class c,
    over the features x_j that are not NaN (missing values)."""
    return np.column_stack(
        [
            np.nansum((X - mu) ** 2 / var, axis=1)
            for mu, var in zip(theta, variance, strict=True)
        ]
    )


# ---------------------------------------------------------------------------
# Kernel densities
# ---------------------------------------------------------------------------

# The constants of fastnb's binned kernel densities (see fastnb._kde).
_MAX_INDEX = 2.0**50
_MIN_EXPONENT = -1000
_PAD = 5.0
_RESOLUTION = 32


def _lattice(low, high, n_grid):
    """(step, origin, n_points): per feature the least power-of-two step
    (at least 2**_MIN_EXPONENT) whose multiples from floor(low / step) to
    ceil(high / step) are at most n_grid, with indices of magnitude at most
    _MAX_INDEX. Found by trying every exponent upwards from the least."""
    step, origin, n_points = [], [], []
    for lo, hi in zip(low, high, strict=True):
        exponent = _MIN_EXPONENT
        magnitude = max(abs(lo), abs(hi))
        if hi > lo or magnitude > 0:
            # Below this neither condition can hold: a start, not a shortcut.
            exponent = max(
                exponent,
                int(np.floor(np.log2(max(hi - lo, magnitude * 2.0**-60)))) - 60,
            )
        while True:
            s = np.ldexp(1.0, exponent)
            first, last = np.floor(lo / s), np.ceil(hi / s)
            if last - first + 1 <= n_grid and max(-first, last) <= _MAX_INDEX:
                break
            exponent += 1
        step.append(s)
        origin.append(first)
        n_points.append(int(last - first) + 1)
    return np.array(step), np.array(origin), np.array(n_points)


def _linear_binning(values, weights, step, origin, n_columns):
    """Each value's weight split between the grid points about it (points at
    (origin + g) * step): weights (n,), values (n,) -> masses (n_columns,)."""
    position = values / step - origin
    lower = np.floor(position)
    share = position - lower
    lower = lower.astype(np.intp)
    masses = np.zeros(n_columns + 1)
    np.add.at(masses, lower, (1.0 - share) * weights)
    np.add.at(masses, lower + 1, share * weights)
    return masses[:n_columns]


def _rebinned(grid, n_columns, source, target, n_target_columns):
    """Each feature's masses (grid: n_classes x n_features * n_columns) on the
    source lattice binned linearly onto the target's (n_target_columns a
    feature), as values of those weights at the source points."""
    step, origin, n_points = source
    target_step, target_origin = target
    n_classes, n_features = grid.shape[0], len(step)
    moved = np.zeros((n_classes, n_features * n_target_columns))
    for j in range(n_features):
        points = (origin[j] + np.arange(n_points[j])) * step[j]
        for k in range(n_classes):
            masses = grid[k, j * n_columns : j * n_columns + n_points[j]]
            moved[k, j * n_target_columns : (j + 1) * n_target_columns] = (
                _linear_binning(
                    points, masses, target_step[j], target_origin[j], n_target_columns
                )
            )
    return moved


def _kde_bandwidths(statistics, bandwidth, adjust):
    """The bandwidths (n_classes, n_features): a rule's with scipy's
    gaussian_kde definitions (effective size W**2 / sum w**2, weighted
    variance ssd / (W - sum w**2 / W), sigma over all classes where that is
    0 (below 2**-40 of its size), else 1), or the given one; times adjust;
    1 for classes of no weight."""
    # Each class's sums of w and of w**2 over each feature's observed values
    # (all of them unless missing="ignore"): a feature at a time.
    count = KernelDensityNB._observed(statistics)
    squares = KernelDensityNB._observed(statistics, squares=True)
    density = _Density(**statistics)
    mean, ssd = density.mean, density.ssd
    h = np.ones(ssd.shape)
    if not isinstance(bandwidth, str):
        given = adjust * np.broadcast_to(np.asarray(bandwidth, float), ssd.shape)
        return np.where(count > 0, given, 1.0)
    # A standard deviation below 2**-40 of the feature's size is rounding.
    size = np.maximum(np.abs(density.low), np.abs(density.high))
    floor = (2.0**-40 * size) ** 2
    for j in range(ssd.shape[1]):
        n, s = count[:, j], squares[:, j]
        total = n.sum()
        if total == 0:
            continue
        overall = (n * mean[:, j]).sum() / total
        overall_ssd = (ssd[:, j] + n * (mean[:, j] - overall) ** 2).sum()
        overall_dof = total - s.sum() / total
        pooled = overall_ssd / overall_dof if overall_dof > 0 else 0.0
        for k in np.flatnonzero(n > 0):
            n_effective = n[k] ** 2 / s[k]
            if bandwidth == "silverman":
                n_effective *= 0.75
            dof = n[k] - s[k] / n[k]
            variance = ssd[k, j] / dof if dof > 0 else 0.0
            if not variance > floor[j]:
                variance = pooled if pooled > floor[j] else 1.0
            h[k, j] = adjust * n_effective**-0.2 * np.sqrt(variance)
    return h


class KernelDensityNB(_ReferencePriorsNB):
    """Reference kernel density Naive Bayes.

    Each feature's density in a class is a mixture of Gaussians of one
    bandwidth centred on the class's samples, weighted by their weights.
    "binned": the samples are binned linearly onto a lattice of a
    power-of-two step over each feature's range; the tables are the binned
    mixture's log densities on a grid reaching 5 bandwidths beyond the data
    (with the kernel narrowed by the binning's added variance, step**2 /
    6), summed directly in log space (fastnb takes an FFT where the density
    is large); beyond them the log density goes on as one Gaussian about
    the masses' centre as seen from the grid's end; a value scores the log
    density interpolated linearly. "exact": the mixture itself.

    Parameters
    ----------
    bandwidth : {"scott", "silverman"}, float or array-like, default="scott"
        The rule, with scipy.stats.gaussian_kde's definitions, or the
        bandwidth itself (one, or one per feature).
    adjust : float, default=1.0
        Multiplies the bandwidth.
    algorithm : {"binned", "exact"}, default="binned"
        Binned densities, or the exact mixture.
    n_grid : int, default=1024
        Most points of each feature's lattice.
    priors : array-like of shape (n_classes,), default=None
        Fixed class probabilities; by default the weighted class frequencies.
    missing : {"error", "ignore"}, default="error"
        "ignore": NaN in X is a missing value, left out of its feature's
        density (grid or points, moments, range, and the weights of the
        bandwidth rules) and of the row's score; a class without a value of
        a feature has a flat log density 0 for it. "error": the reference
        trusts its input.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
    statistics_ : dict
        ``class_count``, ``weight_squares``, ``mean``, ``ssd``, ``low``,
        ``high``; "binned": ``grid`` (n_classes, n_features * n_grid);
        "exact": ``points`` and ``point_weight``; ``dtype``. With
        ``missing="ignore"``, also ``missing_count`` and
        ``missing_weight_squares``: the sums of w and w**2 over each class's
        missing values of each feature.
    bandwidth_ : ndarray of shape (n_classes, n_features)
        The bandwidths.
    class_count_ : ndarray of shape (n_classes,)
        Total sample weight of each class.
    class_prior_ : ndarray of shape (n_classes,)
        Probability of each class.
    n_features_in_ : int
        Number of features seen during fit.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb.reference import KernelDensityNB
    >>> X = np.array([[0.0], [0.5], [1.0], [5.0], [5.5], [9.0]])
    >>> model = KernelDensityNB().fit(X, np.array(["a", "a", "a", "b", "b", "b"]))
    >>> print(model.predict(np.array([[0.7], [6.0]])))
    ['a' 'b']
    """

    def __init__(
        self,
        *,
        bandwidth="scott",
        adjust=1.0,
        algorithm="binned",
        n_grid=1024,
        priors=None,
        missing="error",
    ):
        self.bandwidth = bandwidth
        self.adjust = adjust
        self.algorithm = algorithm
        self.n_grid = n_grid
        self.priors = priors
        self.missing = missing

    def _batch_statistics(self, X, y_encoded, sample_weight, n_classes):
        X = _numeric(X)
        ignore = self.missing == "ignore"
        if ignore:
            count, missing, mean, ssd = _observed_moments(
                X, y_encoded, sample_weight, n_classes
            )
        else:
            count, mean, ssd = _moments(X, y_encoded, sample_weight, n_classes)
        kept = sample_weight > 0
        n_features = X.shape[1]
        # Over the observed values (NaN left out): 0 for a feature without any.
        low = np.zeros(n_features)
        high = np.zeros(n_features)
        for j in range(n_features):
            values = X[kept, j]
            values = values[~np.isnan(values)] if ignore else values
            if len(values):
                low[j], high[j] = values.min(), values.max()
        statistics = {
            "class_count": count,
            "weight_squares": _class_count(y_encoded, sample_weight**2, n_classes),
            "mean": mean,
            "ssd": ssd,
            "low": low,
            "high": high,
        }
        if ignore:
            squares = _class_indicator(y_encoded, sample_weight**2, n_classes)
            statistics.update(
                missing_count=missing,
                missing_weight_squares=_dense(squares @ np.isnan(X).astype(np.float64)),
            )
        if self.algorithm == "binned":
            step, origin, _ = _lattice(low, high, self.n_grid)
            grid = np.zeros((n_classes, n_features * self.n_grid))
            for k in range(n_classes):
                for j in range(n_features):
                    mine = kept & (y_encoded == k) & ~np.isnan(X[:, j])
                    grid[k, j * self.n_grid : (j + 1) * self.n_grid] = _linear_binning(
                        X[mine, j].astype(np.float64),
                        sample_weight[mine],
                        step[j],
                        origin[j],
                        self.n_grid,
                    )
            statistics.update(grid=grid)
        else:
            points = X[kept].astype(np.float64)
            weight = np.zeros((n_classes, len(points)))
            weight[y_encoded[kept], np.arange(len(points))] = sample_weight[kept]
            statistics.update(self._sorted(points, weight))
        statistics.update(dtype=X.dtype)
        return statistics

    @staticmethod
    def _sorted(points, weight):
        """points and point_weight by class, then values, then weight."""
        if not len(points):
            return {"points": points, "point_weight": weight}
        order = np.lexsort(
            (weight.max(axis=0), *points.T[::-1], np.argmax(weight > 0, axis=0))
        )
        return {"points": points[order], "point_weight": weight[:, order]}

    def _combine_statistics(self, a, b):
        observed_a, observed_b = self._observed(a), self._observed(b)
        a, b = _Density(**a), _Density(**b)
        _, mean, ssd = _merge_moments(
            observed_a, a.mean, a.ssd, observed_b, b.mean, b.ssd
        )
        # Each feature's range over the parts with values of it.
        has_a = observed_a.sum(axis=0) > 0
        has_b = observed_b.sum(axis=0) > 0
        low = np.where(
            has_a & has_b, np.minimum(a.low, b.low), np.where(has_a, a.low, b.low)
        )
        high = np.where(
            has_a & has_b, np.maximum(a.high, b.high), np.where(has_a, a.high, b.high)
        )
        combined = {
            "class_count": a.class_count + b.class_count,
            "weight_squares": a.weight_squares + b.weight_squares,
            "mean": mean,
            "ssd": ssd,
            "low": low,
            "high": high,
        }
        if a.missing_count is not None:
            combined.update(
                missing_count=a.missing_count + b.missing_count,
                missing_weight_squares=a.missing_weight_squares
                + b.missing_weight_squares,
            )
        if self.algorithm == "binned":
            step, origin, _ = _lattice(low, high, self.n_grid)
            grid = sum(
                _rebinned(
                    part.grid,
                    self.n_grid,
                    _lattice(part.low, part.high, self.n_grid),
                    (step, origin),
                    self.n_grid,
                )
                for part in (a, b)
            )
            combined.update(grid=grid)
        else:
            combined.update(
                self._sorted(
                    np.concatenate([a.points, b.points]),
                    np.hstack([a.point_weight, b.point_weight]),
                )
            )
        combined.update(dtype=a.dtype)
        return combined

    @staticmethod
    def _observed(statistics, squares=False):
        """Each class's sum of w (or, with ``squares``, of w**2) over each
        feature's observed values, (n_classes, n_features)."""
        density = _Density(**statistics)
        total, missing = (
            (density.weight_squares, density.missing_weight_squares)
            if squares
            else (density.class_count, density.missing_count)
        )
        return np.broadcast_to(
            total[:, np.newaxis] - _or_zero(missing), density.mean.shape
        )

    def _tables(self, statistics):
        density = _Density(**statistics)
        dtype = density.dtype
        h = _kde_bandwidths(statistics, self.bandwidth, self.adjust)
        tables = {
            "class_count_": density.class_count.astype(dtype),
            "class_prior_": self._prior(statistics).astype(dtype),
            "bandwidth_": h.astype(dtype),
        }
        self._h = h
        if self.algorithm == "binned":
            self._grids = self._density_grids(statistics, h)
        return tables

    def _density_grids(self, statistics, h):
        """Per feature: the table grid (step, origin, n), and per class the
        log densities on it, the narrowed bandwidths and the masses' centres
        as seen from its two ends (grid units), or None for no weight."""
        count = self._observed(statistics)
        density = _Density(**statistics)
        low, high = density.low, density.high
        step, origin, n_points = _lattice(low, high, self.n_grid)
        grids = []
        for j in range(len(low)):
            seen = count[:, j] > 0
            h_seen = h[seen] if seen.any() else h
            pad = _PAD * h_seen[:, j].max()
            start = origin[j] * step[j] - pad
            stop = (origin[j] + n_points[j] - 1) * step[j] + pad
            times = 0
            while np.ldexp(step[j], times + 1) <= h_seen[:, j].min() / _RESOLUTION:
                times += 1
            table_step = np.ldexp(step[j], times)
            while (
                np.ceil(stop / table_step) - np.floor(start / table_step) + 1
                > 2 * self.n_grid
            ):
                table_step *= 2
            table_origin = np.floor(start / table_step)
            n = int(np.ceil(stop / table_step) - table_origin) + 1
            masses = _rebinned(
                density.grid[:, j * self.n_grid : (j + 1) * self.n_grid],
                self.n_grid,
                (step[j : j + 1], origin[j : j + 1], n_points[j : j + 1]),
                (np.array([table_step]), np.array([table_origin])),
                n,
            )
            classes = []
            for k in range(len(count)):
                if not seen[k]:
                    classes.append(None)  # a flat density: log 0
                    continue
                width = np.sqrt(max(h[k, j] ** 2 - table_step**2 / 6, h[k, j] ** 2 / 4))
                where = np.flatnonzero(masses[k] > 0)
                distance = (np.arange(n)[:, np.newaxis] - where) * table_step / width
                log_terms = np.log(masses[k, where]) - 0.5 * distance**2
                # In single precision, as fastnb keeps its tables.
                log_density = (
                    np.logaddexp.reduce(log_terms, axis=1)
                    - np.log(count[k, j] * np.sqrt(2 * np.pi) * width)
                ).astype(np.float32)
                centres = []
                for end in (0, n - 1):
                    terms = np.exp(log_terms[end] - log_terms[end].max())
                    centres.append((terms * where).sum() / terms.sum())
                classes.append((log_density, table_step / width, centres))
            grids.append(((table_step, table_origin, n), classes))
        return grids

    def _output_dtype(self, X):
        return np.result_type(_Density(**self.statistics_).dtype, _numeric(X).dtype)

    def _score(self, X):
        X = np.asarray(_numeric(X), dtype=np.float64)
        statistics = self.statistics_
        jll = np.zeros((X.shape[0], len(self.classes_))) + self._log_prior()
        count = self._observed(statistics)
        for k in range(len(self.classes_)):
            for j in np.flatnonzero(count[k] > 0):
                # A missing value (missing="ignore") adds nothing.
                observed = ~np.isnan(X[:, j])
                jll[observed, k] += self._log_density(X[observed, j], k, j, statistics)
        return jll

    def _log_density(self, x, k, j, statistics):
        """log f_kj at the values x of feature j."""
        if self.algorithm == "exact":
            density = _Density(**statistics)
            weight = density.point_weight[k]
            mine = (weight > 0) & ~np.isnan(density.points[:, j])
            h = self._h[k, j]
            z = (x[:, np.newaxis] - density.points[mine, j]) / h
            log_terms = np.log(weight[mine] / weight[mine].sum()) - 0.5 * z**2
            return np.logaddexp.reduce(log_terms, axis=1) - np.log(
                np.sqrt(2 * np.pi) * h
            )
        (step, origin, n), classes = self._grids[j]
        log_density, scale, (first, last) = classes[k]
        u = x / step - origin
        inside = (u >= 0) & (u < n - 1)
        g = np.clip(np.floor(u), 0, n - 2).astype(np.intp)
        t = u - g
        values = log_density[g] + t * (log_density[g + 1] - log_density[g])
        a = 0.5 * scale**2
        below = log_density[0] - a * u * (u - 2 * first)
        above = log_density[-1] - a * (u - (n - 1)) * (u + (n - 1) - 2 * last)
        return np.where(inside, values, np.where(u < 0, below, above))


# ---------------------------------------------------------------------------
# Categorical
# ---------------------------------------------------------------------------


def _missing_in_column(column):
    """Where a column holds a missing value: NaN among numbers; None, NaN or
    pandas' NA among other values."""
    if column.dtype.kind == "f":
        return np.isnan(column)
    if column.dtype != object:
        return np.zeros(len(column), dtype=bool)
    na = getattr(sys.modules.get("pandas"), "NA", None)
    return np.array(
        [
            value is None
            or value is na
            or (isinstance(value, float) and value != value)
            for value in column.tolist()
        ],
        dtype=bool,
    )


def _encode(column, categories, unseen):
    """The code of each value of ``column`` among ``categories``; ``unseen`` if none."""
    values, inverse = np.unique(column, return_inverse=True)
    code_of = {value: code for code, value in enumerate(categories.tolist())}
    codes = np.array([code_of.get(value, unseen) for value in values.tolist()])
    return codes.astype(np.intp)[inverse.reshape(-1)]


class CategoricalNB(_ReferenceNB):
    """Reference categorical Naive Bayes classifier.

    Each feature takes one of ``n_i`` categories; its probability table per
    class is ``(N_ica + alpha_i) / (N_c + alpha_i n_i)``, or with an
    m-estimate ``(N_ica + m_i p_ia) / (N_c + m_i)``. A category never seen
    in training gets the probability of a zero count, ``alpha_i / (N_c +
    alpha_i n_i)`` (an m-estimate smooths it as if its prior were uniform,
    ``m_i / n_i``).

    A column of integers or floats holds category codes ``0, 1, ...``; any
    other column (strings, booleans, objects) holds raw values, which the
    model encodes: the first batch's values sorted, then each later batch's
    new values sorted after them.

    Parameters
    ----------
    alpha : float, ndarray of shape (n_features,) or MEstimate, default=1.0
        Additive smoothing, one value for all features or one per feature;
        or an m-estimate (an object with ``m``, a float or one per feature,
        and ``prior``, None for uniform or a list with each feature's
        category probabilities).
    force_alpha : bool, default=True
        If False, additive smoothing below 1e-10 is raised to 1e-10.
    fit_prior : bool, default=True
        Whether to estimate class priors from the data; if False the prior
        is uniform. Ignored when ``class_prior`` is given.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed prior probabilities of the classes.
    min_categories : int or ndarray of shape (n_features,), default=None
        Least number of categories of each feature.
    missing : {"error", "ignore"}, default="error"
        With "ignore", NaN codes and None, NaN or pandas' NA among raw values
        are missing: left out of their feature's counts and of its term in
        the joint log-likelihood. A class that never saw a feature has
        uniform probabilities for it (also without smoothing); a feature
        never seen has no categories and a term of 0. With "error" the
        reference does not look for them (it trusts its input).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
    statistics_ : dict
        The sufficient statistics: ``class_count``; ``category_count`` of
        shape (sum of the features' categories seen, n_classes), feature by
        feature, a row per category; ``categories``, per feature the codes
        seen (``arange``, int64) or the raw values (object), in code order.
        ``min_categories`` is applied in the tables.
    class_count_ : ndarray of shape (n_classes,)
        Total sample weight of each class.
    category_count_ : list of ndarray of shape (n_classes, n_categories_[i])
        Weighted count of each category per class, one array per feature.
    feature_log_prob_ : list of ndarray of shape (n_classes, n_categories_[i])
        Smoothed log probabilities, one array per feature.
    n_categories_ : ndarray of shape (n_features,)
        Number of categories of each feature.
    categories_ : list of ndarray
        For each feature, the category of each code: ``arange(n)`` for code
        columns, the values for encoded ones.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior probability of each class.
    n_features_in_ : int
        Number of features seen during fit.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb.reference import CategoricalNB
    >>> X = np.array([[0, 1], [0, 2], [1, 0], [1, 1]])
    >>> model = CategoricalNB().fit(X, np.array(["x", "x", "y", "y"]))
    >>> print(model.predict(np.array([[0, 2]]))[0])
    x
    >>> weather = np.array([["sunny"], ["rain"], ["sunny"], ["rain"]])
    >>> model = CategoricalNB().fit(weather, np.array([0, 1, 0, 1]))
    >>> model.categories_[0]
    array(['rain', 'sunny'], dtype=object)
    """

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        fit_prior=True,
        class_prior=None,
        min_categories=None,
        missing="error",
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.min_categories = min_categories
        self.missing = missing

    def _observed(self, column):
        """Where a column's values are observed (all of them unless missing
        values are ignored)."""
        if self.missing == "ignore":
            return ~_missing_in_column(column)
        return np.ones(len(column), dtype=bool)

    def _batch_statistics(self, X, y_encoded, sample_weight, n_classes):
        categories, counts = [], []
        for column in _columns(X):
            # Missing values are left out of the counts.
            observed = self._observed(column)
            column, classes = column[observed], y_encoded[observed]
            weights = None if sample_weight is None else sample_weight[observed]
            if column.dtype.kind in "iuf":
                codes = column.astype(np.int64)
                values = np.arange(codes.max(initial=-1) + 1, dtype=np.int64)
            else:
                values, codes = np.unique(column, return_inverse=True)
                values, codes = values.astype(object), codes.reshape(-1)
            # Row a, column c: the weight of category a in class c.
            count = np.bincount(
                codes * n_classes + classes,
                weights=weights,
                minlength=len(values) * n_classes,
            )
            categories.append(values)
            counts.append(count.reshape(len(values), n_classes))
        return {
            "class_count": _class_count(y_encoded, sample_weight, n_classes),
            "category_count": np.concatenate(counts),
            "categories": categories,
        }

    @staticmethod
    def _per_feature(statistics):
        """The category counts split by feature: (n_categories seen, n_classes) each."""
        counts = _Categories(**statistics)
        sizes = [len(values) for values in counts.categories]
        return np.split(counts.category_count, np.cumsum(sizes)[:-1])

    def _combine_statistics(self, a, b):
        per_feature_a, per_feature_b = self._per_feature(a), self._per_feature(b)
        a, b = _Categories(**a), _Categories(**b)
        n_classes = len(a.class_count)
        categories, counts = [], []
        for values_a, count_a, values_b, count_b in zip(
            a.categories, per_feature_a, b.categories, per_feature_b, strict=True
        ):
            # a's categories keep their codes; b's new ones follow, in b's order.
            known = set(values_a.tolist())
            new = [value for value in values_b.tolist() if value not in known]
            values = np.concatenate([values_a, np.array(new, dtype=values_a.dtype)])
            count = np.zeros((len(values), n_classes))
            count[: len(values_a)] = count_a
            count[_encode(values_b, values, len(values))] += count_b
            categories.append(values)
            counts.append(count)
        return {
            "class_count": a.class_count + b.class_count,
            "category_count": np.concatenate(counts),
            "categories": categories,
        }

    def _n_categories(self, statistics):
        """Number of categories of each feature: seen, or min_categories if more."""
        categories = _Categories(**statistics).categories
        seen = np.array([len(v) for v in categories], dtype=np.int64)
        if self.min_categories is None:
            return seen
        return np.maximum(seen, self.min_categories).astype(np.int64)

    def _pseudo_counts(self, n_categories):
        """Per feature, the pseudo-count of each category and of an unseen one."""
        alpha = _smoothing(self.alpha, self.force_alpha)
        n_features = len(n_categories)
        if not _is_m_estimate(alpha):
            alphas = np.broadcast_to(alpha, (n_features,))
            return [
                (np.full(n, a), a) for n, a in zip(n_categories, alphas, strict=True)
            ]
        ms = np.broadcast_to(np.asarray(alpha.m, dtype=np.float64), (n_features,))
        pseudo = []
        for j, (n, m) in enumerate(zip(n_categories, ms, strict=True)):
            # An unseen category is smoothed as if the prior were uniform.
            if alpha.prior is None:
                share = np.full(n, 1.0 / max(n, 1))
            else:
                share = np.asarray(alpha.prior[j], dtype=np.float64)
            pseudo.append((m * share, m / max(n, 1)))
        return pseudo

    def _log_tables(self, statistics):
        """Per feature, (n_classes, n_categories + 1) log probabilities.

        The last column is the log probability of a category never seen.
        """
        n_categories = self._n_categories(statistics)
        tables = []
        for count, n, (pseudo, pseudo_unseen) in zip(
            self._per_feature(statistics),
            n_categories,
            self._pseudo_counts(n_categories),
            strict=True,
        ):
            # Categories known from min_categories alone have zero counts.
            count = np.pad(count, ((0, n - len(count)), (0, 0)))
            unseen = np.full((1, count.shape[1]), pseudo_unseen)
            smoothed = np.vstack([count + pseudo[:, np.newaxis], unseen])
            # Without smoothing an unseen category has log(0) = -inf.
            with np.errstate(divide="ignore", invalid="ignore"):
                # The unseen row is not one of the n categories of the total.
                total = smoothed[:-1].sum(axis=0)
                table = np.log(smoothed) - np.log(total)
            if self.missing == "ignore":
                # A class that saw none of the feature's values (and has no
                # smoothing) is uniform over its n categories; with none,
                # the feature's term is 0.
                table[:, total == 0] = -np.log(n) if n else 0.0
            tables.append(table.T)
        return tables

    def _tables(self, statistics):
        n_categories = self._n_categories(statistics)
        counts = [
            np.pad(count, ((0, n - len(count)), (0, 0))).T
            for count, n in zip(
                self._per_feature(statistics), n_categories, strict=True
            )
        ]
        categories = _Categories(**statistics)
        return {
            "class_count_": categories.class_count,
            "class_log_prior_": self._log_prior(statistics),
            "category_count_": counts,
            "feature_log_prob_": [
                table[:, :-1] for table in self._log_tables(statistics)
            ],
            "n_categories_": n_categories,
            "categories_": [
                values if values.dtype == object else np.arange(n, dtype=np.int64)
                for values, n in zip(categories.categories, n_categories, strict=True)
            ],
        }

    def _score(self, X):
        jll = np.zeros((X.shape[0], len(self.classes_))) + self.class_log_prior_
        for column, values, table in zip(
            _columns(X),
            _Categories(**self.statistics_).categories,
            self._log_tables(self.statistics_),
            strict=True,
        ):
            # A missing value's feature adds nothing to its row.
            observed = self._observed(column)
            column = column[observed]
            unseen = table.shape[1] - 1
            if values.dtype == object:
                codes = _encode(column, values, unseen)
            else:
                codes = np.minimum(column.astype(np.int64), unseen)
            jll[observed] += table[:, codes].T
        return jll


# ---------------------------------------------------------------------------
# Mixed
# ---------------------------------------------------------------------------

_FAMILIES = {
    "gaussian": GaussianNB,
    "categorical": CategoricalNB,
    "bernoulli": BernoulliNB,
    "multinomial": MultinomialNB,
    "poisson": PoissonNB,
    "kde": KernelDensityNB,
}


class MixedNB(_ReferenceNB):
    """Reference Naive Bayes over families of columns of different kinds.

    Each family of columns is modelled by the reference estimator of that
    family, over the same classes and with a uniform prior; the features
    being independent given the class, the joint log-likelihood is the
    model's own log prior plus each family's log-likelihood::

        log P(c, x) = log P(c) + sum_f [jll_f(x_f, c) - log P_f(c)]

    with ``jll_f`` the joint log-likelihood of family f's estimator and
    ``log P_f(c)`` the (uniform) log prior that estimator adds.

    Parameters
    ----------
    families : dict
        Family name ("gaussian", "categorical", "bernoulli", "multinomial",
        "poisson", "kde") -> the positions of its columns. Every column belongs to
        one family.
    fit_prior : bool, default=True
        Whether to estimate class priors from the data; if False the prior
        is uniform. Ignored when ``class_prior`` is given.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed prior probabilities of the classes.
    gaussian_params, categorical_params, bernoulli_params, multinomial_params, \
poisson_params, kde_params : dict, default=None
        Constructor parameters of that family's estimator, its prior aside.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
    statistics_ : dict
        ``class_count``, and for each family f ``f/columns`` (the positions
        of its columns) and ``f/<key>`` for each of its estimator's
        statistics.
    class_count_ : ndarray of shape (n_classes,)
        Total sample weight of each class.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior probability of each class.
    families_ : dict
        Family name -> ndarray of the positions of its columns.
    estimators_ : dict
        Family name -> the fitted reference estimator of its columns.
    n_features_in_ : int
        Number of features seen during fit.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb.reference import MixedNB
    >>> X = np.array([[180.0, 0], [176.0, 0], [162.0, 1], [158.0, 0]])
    >>> model = MixedNB(families={"gaussian": [0], "categorical": [1]})
    >>> model = model.fit(X, np.array(["a", "a", "b", "b"]))
    >>> print(model.predict(np.array([[165.0, 1]]))[0])
    b
    >>> sorted(key for key in model.statistics_ if key.startswith("categorical/"))
    ['categorical/categories', 'categorical/category_count', \
'categorical/class_count', 'categorical/columns']
    """

    def __init__(
        self,
        *,
        families,
        fit_prior=True,
        class_prior=None,
        gaussian_params=None,
        categorical_params=None,
        bernoulli_params=None,
        multinomial_params=None,
        poisson_params=None,
        kde_params=None,
    ):
        self.families = families
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.gaussian_params = gaussian_params
        self.categorical_params = categorical_params
        self.bernoulli_params = bernoulli_params
        self.multinomial_params = multinomial_params
        self.poisson_params = poisson_params
        self.kde_params = kde_params

    def _estimator(self, family, n_classes):
        """A new estimator of the family: the user's parameters, a uniform prior."""
        params = dict(getattr(self, f"{family}_params") or {})
        if family in ("gaussian", "kde"):
            params["priors"] = np.full(n_classes, 1.0 / n_classes)
        else:
            params.update(fit_prior=False, class_prior=None)
        return _FAMILIES[family](**params)

    @staticmethod
    def _family_statistics(statistics, family):
        """A family's statistics, without the family's prefix."""
        prefix = f"{family}/"
        return {
            key.removeprefix(prefix): value
            for key, value in statistics.items()
            if key.startswith(prefix) and key != f"{family}/columns"
        }

    @staticmethod
    def _families(statistics):
        """Family name -> column positions, in the order of the statistics."""
        return {
            key.removesuffix("/columns"): value
            for key, value in statistics.items()
            if key.endswith("/columns")
        }

    def _batch_statistics(self, X, y_encoded, sample_weight, n_classes):
        statistics = {"class_count": _class_count(y_encoded, sample_weight, n_classes)}
        for family, columns in self.families.items():
            if not len(columns):
                continue
            columns = np.asarray(columns, dtype=np.intp)
            statistics[f"{family}/columns"] = columns
            part = self._estimator(family, n_classes)._batch_statistics(
                _select(X, columns), y_encoded, sample_weight, n_classes
            )
            statistics.update({f"{family}/{k}": v for k, v in part.items()})
        return statistics

    def _combine_statistics(self, a, b):
        n_classes = len(a[_CLASS_COUNT])
        combined = {_CLASS_COUNT: a[_CLASS_COUNT] + b[_CLASS_COUNT]}
        for family, columns in self._families(a).items():
            combined[f"{family}/columns"] = columns
            part = self._estimator(family, n_classes)._combine_statistics(
                self._family_statistics(a, family), self._family_statistics(b, family)
            )
            combined.update({f"{family}/{k}": v for k, v in part.items()})
        return combined

    def _tables(self, statistics):
        class_count = statistics[_CLASS_COUNT]
        families = self._families(statistics)
        estimators = {}
        for family, columns in families.items():
            estimator = self._estimator(family, len(class_count))
            estimator.classes_ = self.classes_
            estimator.n_features_in_ = len(columns)
            estimators[family] = estimator._fitted(
                self._family_statistics(statistics, family)
            )
        return {
            "class_count_": class_count,
            "class_log_prior_": self._log_prior(statistics),
            "families_": families,
            "estimators_": estimators,
        }

    def _score(self, X):
        jll = np.zeros((X.shape[0], len(self.classes_))) + self.class_log_prior_
        for family, estimator in self.estimators_.items():
            columns = _select(X, self.families_[family])
            jll += estimator._score(columns) - estimator._log_prior()
        return jll
