"""Plain NumPy/SciPy Naive Bayes estimators: the test oracle and bench baseline.

This module holds deliberately simple implementations of the count-based
Naive Bayes families. They are written for a reader checking the mathematics,
not for speed: every step is one vectorised NumPy or SciPy expression, and
sparse input stays sparse throughout. The tests compare the compiled
estimators of :mod:`fastnb` against these classes, and the benchmarks use
them as the baseline, so the module imports nothing from the rest of the
package.

The estimators trust their inputs. ``X`` is a dense ndarray or a SciPy sparse
matrix or array (non-negative where the model needs it), ``y`` a 1-D array of
labels and ``sample_weight`` an optional 1-D array of weights. Parameters and
fitted attributes carry the same names, shapes and meaning as in
:mod:`sklearn.naive_bayes`, and the results agree with scikit-learn's to
rounding error.

Classes
-------
MultinomialNB
    Multinomial event model, for counts such as word frequencies.
ComplementNB
    Complement Naive Bayes of Rennie et al. (2003), for imbalanced text data.
BernoulliNB
    Multivariate Bernoulli event model, for binary features.
GaussianNB
    Normal features, with the variance options of fastnb.GaussianNB.
PoissonNB
    Counts as Poisson rates per class.
CategoricalNB
    A probability table per attribute, on category codes.
"""

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln, logsumexp

__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "ComplementNB",
    "GaussianNB",
    "MultinomialNB",
    "PoissonNB",
]

# With force_alpha=False, smoothing below this value is raised to it.
_ALPHA_MIN = 1e-10


def _dense(M):
    """Return a matrix product, sparse or dense, as a dense float64 ndarray."""
    if sp.issparse(M):
        M = M.toarray()
    return np.asarray(M, dtype=np.float64)


class _ReferenceNB:
    """Prediction methods of every reference estimator.

    A subclass supplies ``_joint_log_likelihood(X)`` and may override
    ``_prepare_X(X)`` to transform the input of fit and predict.
    """

    def _prepare_X(self, X):
        """Return ``X`` as the model reads it (unchanged by default)."""
        return X

    def predict_joint_log_proba(self, X):
        """Return the joint log-likelihood ``log P(x, c)`` of each sample.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        jll : ndarray of shape (n_samples, n_classes)
            Unnormalised log-probabilities, float64, with columns in the order
            of ``classes_``.
        """
        return self._joint_log_likelihood(self._prepare_X(X))

    def predict_log_proba(self, X):
        """Return the log of the posterior class probabilities.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            ``log P(c | x)``, float64, with columns in the order of
            ``classes_``.
        """
        jll = self.predict_joint_log_proba(X)
        # Normalising in log space: exp(jll) can underflow to zero everywhere.
        return jll - logsumexp(jll, axis=1)[:, np.newaxis]

    def predict_proba(self, X):
        """Return the posterior class probabilities.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            ``P(c | x)``, float64, each row summing to one, with columns in
            the order of ``classes_``.
        """
        return np.exp(self.predict_log_proba(X))

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
        jll = self.predict_joint_log_proba(X)
        return self.classes_[np.argmax(jll, axis=1)]


class _ReferenceDiscreteNB(_ReferenceNB):
    """Shared fit logic of the count-based reference estimators.

    A subclass supplies ``_update_feature_log_prob(alpha)``, which turns the
    counts into ``feature_log_prob_``, and ``_joint_log_likelihood(X)``.
    """

    def __init__(self, *, alpha, force_alpha, fit_prior, class_prior):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def _alpha(self):
        """Return the smoothing parameter as a float64 scalar or array."""
        alpha = np.asarray(self.alpha, dtype=np.float64)
        if not self.force_alpha:
            alpha = np.maximum(alpha, _ALPHA_MIN)
        return alpha

    def _count(self, X, y, sample_weight):
        """Set ``classes_``, ``class_count_`` and ``feature_count_``."""
        self.classes_, y_index = np.unique(y, return_inverse=True)
        n_classes = len(self.classes_)
        n_samples = X.shape[0]
        if sample_weight is None:
            weights = np.ones(n_samples)
        else:
            weights = np.asarray(sample_weight, dtype=np.float64)

        # Sparse one-hot class indicator, shape (n_classes, n_samples), holding
        # each sample's weight in the row of its class.
        indicator = sp.csr_array(
            (weights, (y_index, np.arange(n_samples))),
            shape=(n_classes, n_samples),
        )
        self.class_count_ = np.bincount(y_index, weights=weights, minlength=n_classes)
        self.feature_count_ = _dense(indicator @ X)

    def _update_class_log_prior(self):
        """Set ``class_log_prior_`` from the prior, the counts or uniformly."""
        n_classes = len(self.classes_)
        if self.class_prior is not None:
            if len(self.class_prior) != n_classes:
                raise ValueError("Number of priors must match number of classes.")
            self.class_log_prior_ = np.log(
                np.asarray(self.class_prior, dtype=np.float64)
            )
        elif self.fit_prior:
            # A class whose samples all have zero weight gets log(0) = -inf.
            with np.errstate(divide="ignore"):
                log_class_count = np.log(self.class_count_)
            self.class_log_prior_ = log_class_count - np.log(self.class_count_.sum())
        else:
            self.class_log_prior_ = np.full(n_classes, -np.log(n_classes))

    def fit(self, X, y, sample_weight=None):
        """Fit the model to training data.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training vectors. Sparse input is never densified.
        y : ndarray of shape (n_samples,)
            Target labels, of any sortable type.
        sample_weight : ndarray of shape (n_samples,), default=None
            Weight of each sample; None weights every sample by one.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X = self._prepare_X(X)
        self._count(X, y, sample_weight)
        self._update_feature_log_prob(self._alpha())
        self._update_class_log_prior()
        return self


class MultinomialNB(_ReferenceDiscreteNB):
    """Reference Naive Bayes classifier for multinomial models.

    Each class has a categorical distribution over features, estimated from
    the smoothed per-class feature totals; a sample's features are counts
    drawn from it.

    Parameters
    ----------
    alpha : float or ndarray of shape (n_features,), default=1.0
        Additive (Laplace/Lidstone) smoothing added to every feature count.
    force_alpha : bool, default=True
        If False, values of ``alpha`` below 1e-10 are raised to 1e-10.
    fit_prior : bool, default=True
        Whether to estimate class priors from the data; if False the prior
        is uniform. Ignored when ``class_prior`` is given.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed prior probabilities of the classes.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
    class_count_ : ndarray of shape (n_classes,)
        Total sample weight of each class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted sum of each feature over the samples of each class.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log P(feature | class)`` after smoothing.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior probability of each class.

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
    """

    def __init__(
        self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None
    ):
        super().__init__(
            alpha=alpha,
            force_alpha=force_alpha,
            fit_prior=fit_prior,
            class_prior=class_prior,
        )

    def _update_feature_log_prob(self, alpha):
        smoothed = self.feature_count_ + alpha
        self.feature_log_prob_ = np.log(smoothed) - np.log(
            smoothed.sum(axis=1, keepdims=True)
        )

    def _joint_log_likelihood(self, X):
        return _dense(X @ self.feature_log_prob_.T) + self.class_log_prior_


class ComplementNB(_ReferenceDiscreteNB):
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

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
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
    ):
        super().__init__(
            alpha=alpha,
            force_alpha=force_alpha,
            fit_prior=fit_prior,
            class_prior=class_prior,
        )
        self.norm = norm

    def _update_feature_log_prob(self, alpha):
        self.feature_all_ = self.feature_count_.sum(axis=0)
        complement = self.feature_all_ + alpha - self.feature_count_
        logged = np.log(complement / complement.sum(axis=1, keepdims=True))
        if self.norm:
            self.feature_log_prob_ = logged / logged.sum(axis=1, keepdims=True)
        else:
            # Negated so that the most likely class has the largest score.
            self.feature_log_prob_ = -logged

    def _joint_log_likelihood(self, X):
        jll = _dense(X @ self.feature_log_prob_.T)
        if len(self.classes_) == 1:
            jll += self.class_log_prior_
        return jll


class BernoulliNB(_ReferenceDiscreteNB):
    """Reference Naive Bayes classifier for multivariate Bernoulli models.

    Each feature is an independent binary event with a per-class
    probability; unlike the multinomial model, the absence of a feature
    counts as evidence too.

    Parameters
    ----------
    alpha : float or ndarray of shape (n_features,), default=1.0
        Additive (Laplace/Lidstone) smoothing added to every feature count.
    force_alpha : bool, default=True
        If False, values of ``alpha`` below 1e-10 are raised to 1e-10.
    binarize : float or None, default=0.0
        Threshold for turning features into 0/1 (values above it become 1),
        applied in fit and predict. If None, ``X`` is taken to be binary
        already. Sparse ``X`` needs a non-negative threshold.
    fit_prior : bool, default=True
        Whether to estimate class priors from the data; if False the prior
        is uniform. Ignored when ``class_prior`` is given.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed prior probabilities of the classes.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
    class_count_ : ndarray of shape (n_classes,)
        Total sample weight of each class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted number of samples of each class in which each feature is on.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log P(feature = 1 | class)`` after smoothing.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior probability of each class.

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

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        binarize=0.0,
        fit_prior=True,
        class_prior=None,
    ):
        super().__init__(
            alpha=alpha,
            force_alpha=force_alpha,
            fit_prior=fit_prior,
            class_prior=class_prior,
        )
        self.binarize = binarize

    def _prepare_X(self, X):
        if self.binarize is None:
            return X
        if sp.issparse(X):
            if self.binarize < 0:
                raise ValueError("binarize must be non-negative for sparse X.")
            # Binarise the stored values only: implicit zeros stay zero.
            X = X.tocsr(copy=True)
            X.sum_duplicates()
            X.data = (X.data > self.binarize).astype(np.float64)
            return X
        return (X > self.binarize).astype(np.float64)

    def _update_feature_log_prob(self, alpha):
        # Each feature is a two-outcome event, so the denominator is smoothed
        # by 2 * alpha; with a per-feature alpha it differs by feature too.
        smoothed_class_count = self.class_count_[:, np.newaxis] + 2 * alpha
        self.feature_log_prob_ = np.log(self.feature_count_ + alpha) - np.log(
            smoothed_class_count
        )

    def _joint_log_likelihood(self, X):
        # sum_j [x_j log p_j + (1 - x_j) log(1 - p_j)]
        #   = x . (log p - log(1 - p)) + sum_j log(1 - p_j),
        # so only the nonzeros of X are touched.
        neg_log_prob = np.log(1 - np.exp(self.feature_log_prob_))
        jll = _dense(X @ (self.feature_log_prob_ - neg_log_prob).T)
        return jll + self.class_log_prior_ + neg_log_prob.sum(axis=1)


class GaussianNB(_ReferenceNB):
    """Reference Gaussian Naive Bayes classifier.

    Each feature is normal within each class. Means and variances are
    weighted averages over the samples of the class, computed class by class
    with two passes (mean, then squared deviations from it).

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
        Fixed class probabilities; by default the weighted class frequencies.
    var_smoothing : float, default=1e-9
        Fraction of the largest variance of any feature (over all samples,
        unweighted) added to every variance; ``var_smoothing`` itself when
        every feature is constant.
    var_estimator : {"mle", "unbiased"}, default="mle"
        Divide the sum of squared deviations by the class weight, or by the
        class weight minus one (variance 0 when that is not positive).
    var_type : {"diag", "tied", "spherical"}, default="diag"
        One variance per class and feature, one per feature pooled over the
        classes, or one per class pooled over the features.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
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
        self, *, priors=None, var_smoothing=1e-9, var_estimator="mle", var_type="diag"
    ):
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.var_estimator = var_estimator
        self.var_type = var_type

    def _prepare_X(self, X):
        # Plain arithmetic below; sparse input is densified in the reference.
        return _dense(X)

    def fit(self, X, y, sample_weight=None):
        """Fit the model to training data.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training vectors.
        y : ndarray of shape (n_samples,)
            Target labels, of any sortable type.
        sample_weight : ndarray of shape (n_samples,), default=None
            Weight of each sample; None weights every sample by one.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X = self._prepare_X(X)
        weights = np.ones(len(X)) if sample_weight is None else sample_weight
        self.classes_ = np.unique(y)
        n_classes, n_features = len(self.classes_), X.shape[1]
        count = np.array([weights[y == c].sum() for c in self.classes_])
        mean = np.zeros((n_classes, n_features))
        ssd = np.zeros((n_classes, n_features))
        for k, c in enumerate(self.classes_):
            in_class = y == c
            if count[k] > 0:
                mean[k] = np.average(X[in_class], axis=0, weights=weights[in_class])
                deviation = X[in_class] - mean[k]
                ssd[k] = weights[in_class] @ deviation**2
        unbiased = 1 if self.var_estimator == "unbiased" else 0
        if self.var_type == "diag":
            ssd_pooled, dof = ssd, count[:, np.newaxis] - unbiased
        elif self.var_type == "tied":
            ssd_pooled = ssd.sum(axis=0)
            dof = count.sum() - unbiased * np.count_nonzero(count)
        else:
            ssd_pooled = ssd.sum(axis=1, keepdims=True)
            dof = n_features * (count[:, np.newaxis] - unbiased)
        with np.errstate(divide="ignore", invalid="ignore"):
            variance = np.where(dof > 0, ssd_pooled / dof, 0.0)
        largest = np.var(X, axis=0).max()
        self.epsilon_ = self.var_smoothing * (largest if largest > 0 else 1.0)
        self.var_ = np.broadcast_to(variance, (n_classes, n_features)) + self.epsilon_
        self.theta_ = mean
        self.class_count_ = count
        if self.priors is not None:
            self.class_prior_ = np.asarray(self.priors, dtype=np.float64)
        else:
            self.class_prior_ = count / count.sum()
        return self

    def _joint_log_likelihood(self, X):
        # log P(c) - 0.5 sum_j [log(2 pi var_cj) + (x_j - theta_cj)^2 / var_cj],
        # class by class.
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.class_prior_)
        normaliser = -0.5 * np.log(2 * np.pi * self.var_).sum(axis=1)
        squared = np.stack(
            [
                ((X - mu) ** 2 / var).sum(axis=1)
                for mu, var in zip(self.theta_, self.var_, strict=True)
            ],
            axis=1,
        )
        return log_prior + normaliser - 0.5 * squared


class PoissonNB(_ReferenceDiscreteNB):
    """Reference Poisson Naive Bayes classifier.

    Each feature is a Poisson count with a rate per class, smoothed towards
    the feature's overall rate ``r_i`` as if ``alpha`` samples at that rate
    were added to every class: ``rate_ci = (S_ci + alpha r_i) / (N_c +
    alpha)``, kept above the smallest positive float.

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

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
    class_count_ : ndarray of shape (n_classes,)
        Total sample weight of each class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted sum of each feature over the samples of each class.
    rate_ : ndarray of shape (n_classes, n_features)
        Smoothed Poisson rate of each feature per class.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior probability of each class.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb.reference import PoissonNB
    >>> X = np.array([[5, 0], [4, 1], [0, 3], [1, 4]])
    >>> model = PoissonNB().fit(X, np.array(["a", "a", "b", "b"]))
    >>> print(model.predict(np.array([[6, 1]]))[0])
    a
    """

    def __init__(
        self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None
    ):
        super().__init__(
            alpha=alpha,
            force_alpha=force_alpha,
            fit_prior=fit_prior,
            class_prior=class_prior,
        )

    def _update_feature_log_prob(self, alpha):
        overall = self.feature_count_.sum(axis=0) / self.class_count_.sum()
        rate = (self.feature_count_ + alpha * overall) / (
            self.class_count_[:, np.newaxis] + alpha
        )
        self.rate_ = np.maximum(rate, np.finfo(np.float64).tiny)

    def _joint_log_likelihood(self, X):
        # sum_i [x_i log rate_ci - rate_ci - log(x_i!)] + log P(c)
        log_factorials = gammaln(_dense(X) + 1).sum(axis=1)
        jll = _dense(X @ np.log(self.rate_).T) - self.rate_.sum(axis=1)
        return jll - log_factorials[:, np.newaxis] + self.class_log_prior_


class CategoricalNB(_ReferenceDiscreteNB):
    """Reference categorical Naive Bayes classifier, on category codes.

    Each feature holds codes ``0 .. n_i - 1``; its probability table per
    class is ``(N_ica + alpha_i) / sum_a (N_ica + alpha_i)``. A code never
    seen in training (``>= n_i``) gets ``alpha_i / sum_a (N_ica + alpha_i)``.

    Parameters
    ----------
    alpha : float or ndarray of shape (n_features,), default=1.0
        Additive smoothing, one value for all features or one per feature.
    force_alpha : bool, default=True
        If False, values of ``alpha`` below 1e-10 are raised to 1e-10.
    fit_prior : bool, default=True
        Whether to estimate class priors from the data; if False the prior
        is uniform. Ignored when ``class_prior`` is given.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed prior probabilities of the classes.
    min_categories : int or ndarray of shape (n_features,), default=None
        Least number of categories of each feature.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted unique class labels.
    class_count_ : ndarray of shape (n_classes,)
        Total sample weight of each class.
    category_count_ : list of ndarray of shape (n_classes, n_categories_[i])
        Weighted count of each category per class, one array per feature.
    feature_log_prob_ : list of ndarray of shape (n_classes, n_categories_[i])
        Smoothed log probabilities, one array per feature.
    n_categories_ : ndarray of shape (n_features,)
        Number of categories of each feature.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior probability of each class.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb.reference import CategoricalNB
    >>> X = np.array([[0, 1], [0, 2], [1, 0], [1, 1]])
    >>> model = CategoricalNB().fit(X, np.array(["x", "x", "y", "y"]))
    >>> print(model.predict(np.array([[0, 2]]))[0])
    x
    """

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        fit_prior=True,
        class_prior=None,
        min_categories=None,
    ):
        super().__init__(
            alpha=alpha,
            force_alpha=force_alpha,
            fit_prior=fit_prior,
            class_prior=class_prior,
        )
        self.min_categories = min_categories

    def _prepare_X(self, X):
        return np.asarray(_dense(X), dtype=np.int64)

    def _count(self, X, y, sample_weight):
        self.classes_, y_index = np.unique(y, return_inverse=True)
        n_classes, n_features = len(self.classes_), X.shape[1]
        weights = np.ones(len(X)) if sample_weight is None else sample_weight
        self.class_count_ = np.bincount(y_index, weights=weights, minlength=n_classes)
        n_categories = X.max(axis=0) + 1
        if self.min_categories is not None:
            n_categories = np.maximum(n_categories, self.min_categories)
        self.n_categories_ = n_categories.astype(np.int64)
        self.category_count_ = []
        for j in range(n_features):
            counts = np.zeros((n_classes, self.n_categories_[j]))
            np.add.at(counts, (y_index, X[:, j]), weights)
            self.category_count_.append(counts)

    def _update_feature_log_prob(self, alpha):
        alphas = np.broadcast_to(alpha, (len(self.category_count_),))
        self.feature_log_prob_ = []
        self._unseen_log_prob = []
        for counts, feature_alpha in zip(self.category_count_, alphas, strict=True):
            smoothed = counts + feature_alpha
            log_total = np.log(smoothed.sum(axis=1, keepdims=True))
            self.feature_log_prob_.append(np.log(smoothed) - log_total)
            with np.errstate(divide="ignore"):
                self._unseen_log_prob.append(np.log(feature_alpha) - log_total[:, 0])

    def _joint_log_likelihood(self, X):
        jll = np.zeros((len(X), len(self.classes_)))
        for j, table in enumerate(self.feature_log_prob_):
            codes = X[:, j]
            seen = codes < table.shape[1]
            jll[seen] += table[:, codes[seen]].T
            jll[~seen] += self._unseen_log_prob[j]
        return jll + self.class_log_prior_
