"""Semi-supervised Naive Bayes by expectation-maximisation (EM).

Nigam, McCallum, Thrun and Mitchell, "Text Classification from Labeled and
Unlabeled Documents using EM" (Machine Learning 39, 2000): a Naive Bayes
model is fitted to the labelled samples; then, in turn, it gives every
unlabelled sample its probability of each class (E-step), and is fitted
again to all samples, each unlabelled one counting in each class with that
probability times ``unlabeled_weight`` (the paper's lambda; M-step), until
the log-likelihood stops rising. The M-step is a soft-label fit
(``class_proba=``) of the wrapped fastnb estimator, so any family works.

With ``n_components`` above 1 (the paper's "multiple mixture components per
class"), each class is a mixture of that many components, each a class of
the wrapped estimator: a labelled sample's probability is spread over its
class's components (at random at first), an unlabelled one's over all, and
a class's probability is the sum of its components'.

Above the families (it wraps any of them), beside fastnb._state.
"""

from __future__ import annotations

import sys
import warnings
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, Self

import numpy as np
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import assert_all_finite
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_is_fitted,
    check_random_state,
    column_or_1d,
)

from fastnb._base import BaseNB
from fastnb._labels import probability_labels
from fastnb._validation import as_numpy, check_sample_weight, num_samples
from fastnb._wrapping import WrapsNB

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from fastnb._typing import MatrixLike

# The label scikit-learn's semi-supervised estimators give unlabelled samples.
UNLABELED = -1


class SemiSupervisedNB(WrapsNB):
    """Naive Bayes fitted by EM to labelled and unlabelled samples.

    The method of Nigam, McCallum, Thrun and Mitchell (2000): fit the
    wrapped estimator to the labelled samples, then repeat: give each
    unlabelled sample (label -1, as in :mod:`sklearn.semi_supervised`) its
    probability of each class under the model (E-step) and fit the model to
    all samples, the unlabelled ones as soft labels weighted by
    ``unlabeled_weight`` (M-step), until the log-likelihood rises by less
    than ``tol`` a sample, or for ``max_iter`` iterations.

    Parameters
    ----------
    estimator : fastnb estimator, default=None
        The Naive Bayes model (cloned); by default ``MultinomialNB()``, the
        paper's model of word counts. Any fastnb estimator works: each
        M-step fits it with ``class_proba=``.
    unlabeled_weight : float, default=1.0
        The weight of each unlabelled sample against a labelled one (the
        paper's lambda, from 0 to 1): below 1 when the unlabelled data fit
        the model less well than the labels do.
    n_components : int, default=1
        Mixture components a class (the paper's "multiple mixture
        components"): with more than one, each component is a class of
        ``estimator_``, and a class's probability sums its components'.
    max_iter : int, default=100
        The most EM iterations: the first fits the labelled samples, each
        later one is an M-step (1: the labelled samples' fit alone).
    tol : float, default=1e-3
        EM stops when the log-likelihood, divided by the samples' total
        weight, rises by less than this.
    min_proba : float, default=1e-6
        An unlabelled sample's class (or component) probabilities below
        this are taken as 0, the rest scaled to sum to 1, before the M-step
        counts them: each class a sample counts in costs a pass over its
        features, and a text's posterior puts nearly all its mass on one or
        two classes. 0 keeps every probability.
    random_state : int, RandomState instance or None, default=None
        Spreads the labelled samples over their class's components at
        first (``n_components`` above 1 only).
    verbose : int, default=0
        Above 0, print each iteration's log-likelihood.

    Attributes
    ----------
    estimator_ : fastnb estimator
        The fitted model; its classes are the components, 0 ..
        n_classes * n_components - 1 (component c * n_components + m of
        class c).
    classes_ : ndarray of shape (n_classes,)
        The labels of the labelled samples.
    n_features_in_ : int
        Features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the features seen during fit, when X has string column
        names.
    n_iter_ : int
        EM iterations run, the fits of ``estimator_``: 1 and the M-steps.
    converged_ : bool
        Whether EM stopped on ``tol`` (rather than ``max_iter``).
    log_likelihoods_ : ndarray of shape (``n_iter_``,)
        The weighted log-likelihood of the training data (the labelled
        samples' joint log-likelihood with their class, plus
        ``unlabeled_weight`` times each unlabelled sample's log marginal
        likelihood) under each model: the first fitted to the labelled
        samples, then after each M-step. The smoothing's prior is left out.
    log_likelihood_ : float
        The last of them.
    transduction_ : ndarray of shape (n_samples,)
        The label of each training sample: its own if it had one, else the
        most probable class under the final model.

    See Also
    --------
    sklearn.semi_supervised.SelfTrainingClassifier : Self-training, which
        labels the confident unlabelled samples one round at a time.

    References
    ----------
    K. Nigam, A. K. McCallum, S. Thrun and T. Mitchell, "Text Classification
    from Labeled and Unlabeled Documents using EM", Machine Learning 39
    (2000), 103-134.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import MultinomialNB, SemiSupervisedNB
    >>> X = np.array([[3, 0], [0, 3], [2, 1], [1, 2], [4, 0], [0, 4]])
    >>> y = np.array([0, 1, -1, -1, -1, -1])
    >>> model = SemiSupervisedNB(MultinomialNB()).fit(X, y)
    >>> model.transduction_
    array([0, 1, 0, 1, 0, 1])
    >>> bool(model.converged_)
    True
    """

    _parameter_constraints: dict = {
        **WrapsNB._parameter_constraints,
        "unlabeled_weight": [Interval(Real, 0, 1, closed="both")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "min_proba": [Interval(Real, 0, 1, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator: BaseNB | None = None,
        *,
        unlabeled_weight: float = 1.0,
        n_components: int = 1,
        max_iter: int = 100,
        tol: float = 1e-3,
        min_proba: float = 1e-6,
        random_state: Any = None,
        verbose: int = 0,
    ) -> None:
        self.estimator = estimator
        self.unlabeled_weight = unlabeled_weight
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.min_proba = min_proba
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags = self._inner().__sklearn_tags__().classifier_tags
        return tags

    def fit(
        self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> Self:
        """Fit by EM to X and y, whose unlabelled samples have the label -1.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors, labelled and unlabelled.
        y : array-like of shape (n_samples,)
            Labels; -1 for an unlabelled sample. String labels must be
            given in an object array, as in scikit-learn's semi-supervised
            estimators.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each sample (1 when None); an unlabelled
            sample's is multiplied by ``unlabeled_weight``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        target = column_or_1d(as_numpy(y), warn=True)
        # scikit-learn's message for NaN or infinity, before type_of_target
        # casts them to integers (a RuntimeWarning).
        assert_all_finite(target, input_name="y", estimator_name=type(self).__name__)
        if target.dtype.kind in "USV":
            raise ValueError(
                "y has dtype string. If you wish to predict on string targets, use "
                "dtype object, and use -1 as the label for unlabeled samples."
            )
        n_samples = num_samples(X)
        if len(target) != n_samples:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{n_samples}, {len(target)}]"
            )
        unlabeled = np.asarray(target == UNLABELED, dtype=bool).reshape(-1)
        if unlabeled.all():
            raise ValueError(
                "y has no labelled sample (every label is -1): EM needs labelled "
                "samples of each class to start from."
            )
        check_classification_targets(target[~unlabeled])
        classes, codes = np.unique(target[~unlabeled], return_inverse=True)
        weights = check_sample_weight(
            as_numpy(sample_weight), n_samples, allow_all_zero=False
        )
        weights = np.ones(n_samples) if weights is None else weights
        em_weights = weights.copy()
        em_weights[unlabeled] *= self.unlabeled_weight
        n_components = len(classes) * self.n_components
        labeled_proba = self._labeled_proba(codes, len(classes))
        # The first model: the labelled samples alone (the unlabelled ones
        # weigh 0, so their features and categories are still seen).
        proba = np.zeros((n_samples, n_components))
        proba[~unlabeled] = labeled_proba
        proba[unlabeled] = 1.0 / n_components
        first_weights = np.where(unlabeled, 0.0, weights)
        components = np.arange(n_components)
        model = self._inner()
        model._validate_params()
        # X is checked once; each M-step fits the checked batch.
        batch, labels, _, _ = model._checked_batch(
            X,
            None,
            first_weights,
            components,
            reset=True,
            allow_all_zero=False,
            class_proba=proba,
        )
        model._fit_batch(batch, labels, None, components)
        path = []
        n_iter, converged = 1, False
        total_weight = em_weights.sum()
        while True:
            log_likelihood, labeled_proba, unlabeled_proba = self._expect(
                model, X, unlabeled, codes, em_weights
            )
            path.append(log_likelihood)
            if self.verbose:
                print(
                    f"SemiSupervisedNB: iteration {n_iter}, log-likelihood "
                    f"{log_likelihood:.6g}",
                    file=sys.stdout,
                    flush=True,
                )
            rise = path[-1] - path[-2] if n_iter > 1 else np.inf
            if not unlabeled.any() or abs(rise) < self.tol * total_weight:
                converged = True
                break
            if n_iter == self.max_iter:
                break
            proba[unlabeled] = unlabeled_proba
            if self.n_components > 1:
                proba[~unlabeled] = labeled_proba
            model._fit_batch(
                batch, probability_labels(proba, em_weights), None, components
            )
            n_iter += 1
        if not converged:
            warnings.warn(
                f"SemiSupervisedNB did not converge in max_iter={self.max_iter} "
                "iterations: the log-likelihood still rose by more than tol a "
                "sample. Raise max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.estimator_ = model
        self.classes_ = classes
        self.n_features_in_ = model.n_features_in_
        if hasattr(model, "feature_names_in_"):
            self.feature_names_in_ = model.feature_names_in_
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.log_likelihoods_ = np.asarray(path)
        self.log_likelihood_ = float(path[-1])
        transduction = np.empty(n_samples, dtype=classes.dtype)
        transduction[~unlabeled] = target[~unlabeled]
        if unlabeled.any():
            transduction[unlabeled] = classes[
                np.argmax(self._class_scores(unlabeled_proba), axis=1)
            ]
        self.transduction_ = transduction
        return self

    def _labeled_proba(self, codes, n_classes):
        """The labelled samples' component probabilities at first: 1 for their
        class, spread over its components at random (Dirichlet(1, ..., 1))."""
        m = self.n_components
        proba = np.zeros((len(codes), n_classes * m))
        if m == 1:
            proba[np.arange(len(codes)), codes] = 1.0
            return proba
        rng = check_random_state(self.random_state)
        spread = rng.dirichlet(np.ones(m), len(codes))
        columns = codes[:, None] * m + np.arange(m)
        proba[np.arange(len(codes))[:, None], columns] = spread
        return proba

    def _expect(self, model, X, unlabeled, codes, weights):
        """The E-step: ``(log_likelihood, labeled_proba, unlabeled_proba)``,
        the weighted log-likelihood of all samples under ``model``, the
        labelled samples' probabilities of each component (of their class's
        components only) and the unlabelled samples' (those below min_proba
        as 0)."""
        jll = model.predict_joint_log_proba(X)
        m = self.n_components
        labeled = ~unlabeled
        # A labelled sample's likelihood: of its class, the sum of the
        # class's components.
        rows = np.arange(len(codes))
        own = jll[labeled].reshape(-1, jll.shape[1] // m, m)[rows, codes]
        own_marginal = logsumexp(own, axis=1, keepdims=True)
        # A sample of weight 0 counts for nothing, even where its class has
        # no weight at all (and it likelihood 0): its components share it.
        counted = weights[labeled] > 0
        log_likelihood = weights[labeled][counted] @ own_marginal[counted, 0]
        with np.errstate(invalid="ignore"):
            spread = np.exp(own - own_marginal)
        spread[~np.isfinite(own_marginal[:, 0])] = 1.0 / m
        labeled_proba = np.zeros((len(codes), jll.shape[1]))
        labeled_proba[rows[:, None], codes[:, None] * m + np.arange(m)] = spread
        # The unlabelled samples' marginal log-likelihoods and posteriors,
        # in place (a text bench's posteriors are most of a step's time).
        proba = jll[unlabeled] if labeled.any() else jll
        top = proba.max(axis=1, keepdims=True)
        if not np.isfinite(top).all():
            raise ValueError(
                f"Unlabelled sample {np.flatnonzero(unlabeled)[np.argmin(top)]} has "
                "likelihood 0 in every class under the model (a value no class "
                "has seen, with smoothing off): EM cannot weigh it. Smooth the "
                "estimator (alpha > 0) or leave the sample out."
            )
        proba -= top
        np.exp(proba, out=proba)
        total = proba.sum(axis=1, keepdims=True)
        log_likelihood += weights[unlabeled] @ (top[:, 0] + np.log(total[:, 0]))
        if self.min_proba > 0 and len(proba):
            # (A sample's most probable component, 1 before the division,
            # is always kept.)
            proba[proba < np.minimum(self.min_proba * total, 1.0)] = 0.0
            total = proba.sum(axis=1, keepdims=True)
        proba /= total
        return float(log_likelihood), labeled_proba, proba

    def _class_scores(self, component_scores):
        """Components' probabilities summed over each class's components."""
        m = self.n_components
        return component_scores.reshape(len(component_scores), -1, m).sum(axis=2)

    def predict_proba(self, X: MatrixLike) -> NDArray[np.floating]:
        """Probability of each class for each sample.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        proba = self.estimator_.predict_proba(X)
        return proba if self.n_components == 1 else self._class_scores(proba)

    def predict_joint_log_proba(self, X: MatrixLike) -> NDArray[np.floating]:
        """log P(x, c) for each class c: over a class's components, their
        log-sum-exp.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        jll : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        jll = self.estimator_.predict_joint_log_proba(X)
        if self.n_components == 1:
            return jll
        return logsumexp(jll.reshape(len(jll), -1, self.n_components), axis=2)

    def predict_log_proba(self, X: MatrixLike) -> NDArray[np.floating]:
        """Log of predict_proba.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        if self.n_components == 1:
            return self.estimator_.predict_log_proba(X)
        jll = self.predict_joint_log_proba(X)
        return jll - logsumexp(jll, axis=1, keepdims=True)

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """The most probable class of each sample.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        if self.n_components == 1:
            return self.classes_[self.estimator_.predict(X)]
        return self.classes_[np.argmax(self.predict_joint_log_proba(X), axis=1)]
