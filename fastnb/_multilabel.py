"""Multilabel Naive Bayes: one binary model a label, fitted in one pass over X.

``OneVsRestClassifier(MultinomialNB())`` fits a model a label, reading X
once for each. Their statistics come from one pass instead: the batch's
statistics are summed under label arrays (fastnb._labels) that give each
row an entry a label it has, plus one for the total (the count families:
a label's negative class is the total less its positive one), or an entry
for each label, in its positive or negative class (GaussianNB: moments
are not differences). Each label's binary
model is then made from its two classes' statistics.

Above the families (it wraps them), beside fastnb._semi_supervised.
"""

from __future__ import annotations

import copy
import warnings
from typing import TYPE_CHECKING, Any, Self

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.utils import assert_all_finite
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d

from fastnb._base import BaseNB, state_guard
from fastnb._discrete import BaseDiscreteNB, BernoulliNB, MultinomialNB, PoissonNB
from fastnb._gaussian import GaussianNB
from fastnb._labels import SoftLabels
from fastnb._statistics import CLASS_COUNT
from fastnb._validation import as_numpy, encode_labels, num_samples
from fastnb._wrapping import WrapsNB

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from fastnb._typing import MatrixLike

BINARY = np.array([0, 1])


class OneVsRestNB(WrapsNB):
    """Multilabel Naive Bayes: a binary model a label, fitted in one pass over X.

    The model of ``OneVsRestClassifier(estimator)`` on a multilabel
    indicator Y (samples x labels, 0 or 1, dense or sparse): for each label,
    the estimator fitted to tell the samples that have it (class 1) from
    those that do not (class 0). Their statistics are summed in one pass
    over X, where OneVsRestClassifier reads X once a label; predictions and
    probabilities equal OneVsRestClassifier's to rounding. Given one label a
    sample (1-D y), it is OneVsRestClassifier's one-vs-rest model of the
    classes too: a binary model a class (one for two classes), the class of
    the most probable one predicted.

    Parameters
    ----------
    estimator : fastnb estimator, default=None
        The binary model of each label (cloned): MultinomialNB (the
        default), ComplementNB, BernoulliNB, PoissonNB or GaussianNB. The
        count families sum each row once for its labels and once for the
        total; GaussianNB sums each row once a label.

    Attributes
    ----------
    estimators_ : list of fastnb estimators
        The fitted binary model of each label, its classes ``[0, 1]``.
    classes_ : ndarray of shape (n_labels,)
        The labels: 0 .. n_labels - 1, Y's columns (1-D y: its classes).
    n_classes_ : int
        The number of labels (classes).
    multilabel_ : bool
        Whether Y was a multilabel indicator (rather than 1-D y).
    n_features_in_ : int
        Features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the features seen during fit, when X has string column
        names.

    See Also
    --------
    sklearn.multiclass.OneVsRestClassifier : The same models, fitted one a
        label.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import MultinomialNB, OneVsRestNB
    >>> X = np.array([[3, 0, 1], [0, 2, 2], [3, 2, 0], [0, 0, 3]])
    >>> Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
    >>> OneVsRestNB(MultinomialNB()).fit(X, Y).predict(X)
    array([[1, 0],
           [0, 1],
           [1, 1],
           [0, 0]])
    """

    def __init__(self, estimator: BaseNB | None = None) -> None:
        self.estimator = estimator

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags

    def _family(self):
        """An unfitted copy of the wrapped estimator, of a family it takes."""
        model = self._inner()
        if not isinstance(model, BaseDiscreteNB | GaussianNB):
            raise TypeError(
                "OneVsRestNB fits the count families (MultinomialNB, ComplementNB, "
                f"BernoulliNB, PoissonNB) and GaussianNB; got {type(model).__name__}: "
                "use sklearn.multiclass.OneVsRestClassifier for it."
            )
        model._validate_params()
        return model

    def _label_pass(self, model, X, y, sample_weight, classes, reset, fitting):
        """One pass over a batch: ``(statistics, classes, multilabel,
        label_counts)``, the statistics of every label's two classes (2 l:
        the samples without label l, 2 l + 1: those with it), the labels
        (Y's columns, or y's classes: ``classes``, if given), whether y is
        a multilabel indicator, and each label's number of samples.

        X and the weights are checked as ``model`` checks them (``reset``: a
        first batch; else against the fitted ``model``; ``fitting``: fit,
        which the weights may not all be 0 for), then y."""
        n_samples = num_samples(X)
        batch, _, weights, _ = model._checked_batch(
            X,
            np.zeros(n_samples, dtype=np.intp),
            sample_weight,
            np.zeros(1, dtype=np.intp),
            reset=reset,
            allow_all_zero=not fitting,
        )
        Y = as_numpy(y)
        if Y is not None and not sp.issparse(Y):
            Y = np.asarray(Y)
        multilabel = np.ndim(Y) == 2 and np.shape(Y)[1] > 1
        if multilabel:
            n_labels, rows, labels = indicator_entries(Y, n_samples)
            if classes is not None and not np.array_equal(classes, np.arange(n_labels)):
                raise ValueError(
                    f"A multilabel indicator's classes are its columns, 0 .. "
                    f"{n_labels - 1}; got classes={classes!r}."
                )
            classes = np.arange(n_labels)
        else:
            classes, rows, labels = class_entries(Y, n_samples, classes)
            n_labels = len(classes) if len(classes) > 2 else 1
        weights = np.ones(n_samples) if weights is None else weights
        by_total = isinstance(model, BaseDiscreteNB)
        entries, n_classes = label_entries(
            rows, labels, n_samples, n_labels, weights, by_total
        )
        statistics = model._fit_statistics(batch, entries, None, n_classes)
        if by_total:
            statistics = paired_statistics(statistics, model, n_labels)
        counts = np.bincount(labels, minlength=n_labels)
        return statistics, classes, multilabel, counts

    def _adopt_labels(self, model, paired, classes, multilabel):
        """Make the fitted model of each label from the statistics of all
        labels' classes (_label_pass), and the model of all labels, which
        share their arrays."""
        axes = model._class_axes_of(paired)
        estimators = []
        for label in range(len(paired[CLASS_COUNT.name]) // 2):
            binary = self._inner()
            binary._adopt(
                BINARY,
                model.n_features_in_,
                getattr(model, "feature_names_in_", None),
                label_pair(paired, axes, label),
                copy_statistics=False,
                check_values=False,
            )
            estimators.append(binary)
        self.estimators_ = estimators
        self.classes_ = classes
        self.n_classes_ = len(classes)
        self.multilabel_ = multilabel
        self.n_features_in_ = model.n_features_in_
        self.__dict__.pop("feature_names_in_", None)
        if hasattr(model, "feature_names_in_"):
            self.feature_names_in_ = model.feature_names_in_
        self._stacked = self._stack(paired)

    def fit(
        self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> Self:
        """Fit a binary model to each label of Y, in one pass over X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors.
        y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            A multilabel indicator Y: 1 where a sample has a label, else 0;
            or 1-D, one label a sample.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each sample (1 when None).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        model = self._family()
        paired, classes, multilabel, counts = self._label_pass(
            model, X, y, sample_weight, None, reset=True, fitting=True
        )
        # The tables are built when first needed, as after a partial_fit:
        # by the model of all labels for predictions (measured, a fit that
        # built them took twice as long, their allocation beside the pass's
        # own arrays; fit and prediction together, a third longer), by a
        # label's model if it is used alone.
        self._adopt_labels(model, paired, classes, multilabel)
        self._sparse_output = multilabel and sp.issparse(y)
        # A label that every sample has, or none, is predicted as that, as
        # OneVsRestClassifier predicts it (with its warning).
        n_samples = num_samples(X)
        self._constant = {}
        for constant in np.flatnonzero((counts == 0) | (counts == n_samples)):
            has = bool(counts[constant])
            self._constant[int(constant)] = int(has)
            warnings.warn(
                f"Label {'' if has else 'not '}{constant} is present in all training "
                "examples.",
                UserWarning,
                stacklevel=2,
            )
        return self

    def partial_fit(
        self,
        X: MatrixLike,
        y: ArrayLike,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> Self:
        """Add a batch to every label's model, in one pass over X.

        As OneVsRestClassifier's partial_fit: each label's model learns the
        batch (its tables rebuilt before the next prediction); a label
        every sample of the batches has, or none, is not made constant.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors.
        y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            A multilabel indicator Y, or 1-D labels, as in ``fit``.
        classes : array-like of shape (n_classes,), default=None
            For 1-D y: every class of all the batches, required on the first
            call. For an indicator: its columns, 0 .. n_labels - 1.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each sample (1 when None).

        Returns
        -------
        self : object
            The updated estimator.
        """
        self._validate_params()
        if not hasattr(self, "estimators_"):
            model = self._family()
            if classes is None and np.ndim(y) == 1:
                raise ValueError(
                    "classes must be passed on the first call to partial_fit."
                )
            known = None if classes is None else np.unique(np.asarray(classes))
            paired, known, multilabel, _ = self._label_pass(
                model, X, y, sample_weight, known, reset=True, fitting=False
            )
            self._adopt_labels(model, paired, known, multilabel)
            self._sparse_output = multilabel and sp.issparse(y)
            self._constant = {}
            return self
        check_is_fitted(self)
        if classes is not None and not np.array_equal(
            np.unique(np.asarray(classes)), self.classes_
        ):
            raise ValueError(
                f"`classes={classes!r}` is not the same as on last call to "
                f"partial_fit, was: {self.classes_!r}"
            )
        first = self.estimators_[0]
        paired, _, multilabel, _ = self._label_pass(
            first, X, y, sample_weight, self.classes_, reset=False, fitting=False
        )
        if multilabel != self.multilabel_:
            raise ValueError(
                "y is a multilabel indicator in one partial_fit call and not in "
                "another: pass the same kind of target to every call."
            )
        # All checked: each label's model adds its statistics.
        axes = first._class_axes_of(paired)
        for label, estimator in enumerate(self.estimators_):
            statistics = label_pair(paired, axes, label)
            with state_guard(estimator).lock:
                estimator._set_state(
                    BINARY,
                    estimator._combine_statistics(estimator._statistics, statistics),
                )
        self._stacked = self._stack()
        self._constant = {}
        return self

    def predict_proba(self, X: MatrixLike) -> NDArray[np.floating]:
        """Each label's probability for each sample (of its class 1); for 1-D
        y, the classes' one-vs-rest probabilities, scaled to sum to 1.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_labels)
        """
        negative, positive = self._label_scores(X)
        proba = self._with_constants(expit(positive - negative))
        if self.multilabel_:
            return proba
        if len(self.estimators_) == 1:
            return np.column_stack([1 - proba[:, 0], proba[:, 0]])
        return proba / proba.sum(axis=1, keepdims=True)

    def predict(self, X: MatrixLike) -> Any:
        """The labels each sample has: each label's model's prediction.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        Y : ndarray or sparse matrix of shape (n_samples, n_labels)
            A multilabel indicator, sparse (CSR) if Y was; for 1-D y, the
            labels (n_samples,).
        """
        negative, positive = self._label_scores(X)
        if not self.multilabel_ and len(self.estimators_) > 1:
            proba = self._with_constants(expit(positive - negative))
            return self.classes_[np.argmax(proba, axis=1)]
        # Each model's argmax, ties to class 0.
        indicator = self._with_constants((positive > negative).astype(np.int64))
        if not self.multilabel_:
            return self.classes_[indicator[:, 0]]
        return sp.csr_matrix(indicator) if self._sparse_output else indicator

    def _label_scores(self, X):
        """``(negative, positive)``: each label's model's joint log-likelihood
        of its classes 0 and 1 for each sample (n_samples, n_labels); from
        the model of all labels' classes in one pass over X where there is
        one (a label's two scores then both less log n_labels, its prior's
        share)."""
        check_is_fitted(self)
        if self._stacked is not None:
            jll = self._stacked.predict_joint_log_proba(X)
            return jll[:, 0::2], jll[:, 1::2]
        scores = [
            estimator.predict_joint_log_proba(X) for estimator in self.estimators_
        ]
        return (
            np.column_stack([score[:, 0] for score in scores]),
            np.column_stack([score[:, 1] for score in scores]),
        )

    def _with_constants(self, columns):
        """``columns`` (a column a label), a constant label's set to its value."""
        for label, value in self._constant.items():
            columns[:, label] = value
        return columns

    def _stack(self, paired=None):
        """One model of every label's classes (2 l and 2 l + 1 for label l),
        which scores all labels in one pass over X, of the statistics
        ``paired`` (by default the labels' models', joined); None where a
        model's tables of a class depend on its other class (ComplementNB,
        tied variances) or the priors are given."""
        first = self.estimators_[0]
        params = first.get_params()
        stackable = isinstance(first, MultinomialNB | BernoulliNB | PoissonNB) or (
            isinstance(first, GaussianNB) and params["var_type"] != "tied"
        )
        if not stackable or params.get("class_prior", params.get("priors")) is not None:
            return None
        if paired is None:
            states = [estimator._statistics for estimator in self.estimators_]
            axes = first._class_axes_of(states[0])
            paired = {
                key: np.concatenate([state[key] for state in states], axis=axes[key])
                if key in axes
                else copy.deepcopy(value)
                for key, value in states[0].items()
            }
        stacked = self._inner()
        stacked._adopt(
            np.arange(2 * len(self.estimators_)),
            first.n_features_in_,
            getattr(first, "feature_names_in_", None),
            paired,
            copy_statistics=False,
        )
        return stacked


def indicator_entries(Y, n_samples):
    """``(n_labels, rows, labels)``: where Y, checked to be a multilabel
    indicator of n_samples rows, holds a 1 (row-major order); ValueError
    otherwise."""
    # (type_of_target finds Y's distinct values by sorting: a plain array of
    # 0 and 1 is checked in one pass instead.)
    plain = isinstance(Y, np.ndarray) and Y.ndim == 2 and Y.dtype.kind in "biu"
    if not (plain and Y.shape[1] > 1 and ((Y >= 0) & (Y <= 1)).all()):
        kind = type_of_target(Y)
        if kind != "multilabel-indicator":
            raise ValueError(
                "OneVsRestNB fits a multilabel indicator Y (samples x labels, 0 "
                f"or 1); got a target of type {kind!r}. For one label a sample, "
                "fit the estimator itself."
            )
    if sp.issparse(Y):
        indicator = sp.csr_array(Y)
        indicator.sum_duplicates()
        indicator.eliminate_zeros()
        rows = np.repeat(np.arange(Y.shape[0]), np.diff(indicator.indptr))
        labels = indicator.indices
    elif plain:
        # The places of the 1s in a flat boolean view: about a seventh of
        # the time of nonzero's two index arrays of an integer Y (200,000 x
        # 20 int8: 2.7 ms against 18).
        flat = np.flatnonzero(Y != 0)
        rows = flat // Y.shape[1]
        labels = flat - rows * Y.shape[1]
    else:
        rows, labels = np.nonzero(np.asarray(Y))
    if Y.shape[0] != n_samples:
        raise ValueError(
            "Found input variables with inconsistent numbers of samples: "
            f"[{n_samples}, {Y.shape[0]}]"
        )
    return Y.shape[1], rows.astype(np.intp), labels.astype(np.intp)


def class_entries(y, n_samples, classes=None):
    """``(classes, rows, labels)`` of 1-D y as OneVsRestClassifier binarises
    it: its sorted classes (or ``classes``, sorted, which y's labels must be
    among) and an indicator's entries, a column a class (one column, of the
    second class, for two classes)."""
    if y is None:
        raise ValueError(
            "OneVsRestNB requires y to be passed, but the target y is None."
        )
    y = column_or_1d(y, warn=True)
    # scikit-learn's message for NaN or infinity, before type_of_target casts
    # them to integers (a RuntimeWarning).
    assert_all_finite(y, input_name="y", estimator_name="OneVsRestNB")
    check_classification_targets(y)
    if len(y) != n_samples:
        raise ValueError(
            "Found input variables with inconsistent numbers of samples: "
            f"[{n_samples}, {len(y)}]"
        )
    if classes is None:
        classes, codes = np.unique(y, return_inverse=True)
    else:
        codes = encode_labels(y, classes)
    if len(classes) < 2:
        raise ValueError(
            f"OneVsRestNB needs samples of at least 2 classes; got one class, "
            f"{classes[0]!r}."
        )
    if len(classes) == 2:
        rows = np.flatnonzero(codes == 1)
        return classes, rows, np.zeros(len(rows), dtype=np.intp)
    return classes, np.arange(len(y)), codes.astype(np.intp)


def label_entries(rows, labels, n_samples, n_labels, weights, by_total):
    """``(labels, n_classes)``: the label arrays (SoftLabels) of one pass
    over the samples, whose labels are Y's entries (``rows``, ``labels``).

    ``by_total``: each row is an entry of class 2 l + 1 for each label l it
    has and one of class 2 n_labels, the total, classes 2 l left empty for
    paired_statistics to fill; otherwise it is an entry of each label, of
    class 2 l + 1 if it has label l, else 2 l (GaussianNB, whose moments
    are not differences). Each entry weighs the row's weight.
    """
    if by_total:
        ptr = np.zeros(n_samples + 1, dtype=np.intp)
        np.cumsum(np.bincount(rows, minlength=n_samples) + 1, out=ptr[1:])
        # Each row's labels, then the total: the k-th label of Y comes after
        # the totals of the rows before it.
        label_class = np.full(ptr[-1], 2 * n_labels, dtype=np.intp)
        label_class[np.arange(len(rows)) + rows] = 2 * labels + 1
        n_classes = 2 * n_labels + 1
    else:
        ptr = np.arange(0, n_samples * n_labels + 1, n_labels, dtype=np.intp)
        label_class = np.tile(2 * np.arange(n_labels, dtype=np.intp), n_samples)
        label_class[rows * n_labels + labels] += 1
        n_classes = 2 * n_labels
    label_weight = np.repeat(weights, np.diff(ptr))
    return SoftLabels(ptr, label_class, label_weight, unit_weights=False), n_classes


def label_pair(paired, axes, label):
    """Label ``label``'s binary statistics: views of its two classes (2 l and
    2 l + 1) in the statistics of all labels' classes, ``paired``, whose
    class axes are ``axes``; the others as they are."""
    return {
        key: value[2 * label : 2 * label + 2] if key in axes else value
        for key, value in paired.items()
    }


def paired_statistics(statistics, model, n_labels):
    """The count families' statistics of label_entries' pass (each label's
    samples in class 2 l + 1, all samples in class 2 n_labels, classes 2 l
    empty) as every label's two classes: 2 l, the samples without label l
    (all less those with it), written in place, and 2 l + 1, those with it;
    the total's class left out (a view). Both sums run in row order, the
    total's over more rows: the difference is never negative."""
    axes = model._class_axes_of(statistics)
    paired = {}
    for key, value in statistics.items():
        if key not in axes:
            paired[key] = value
            continue
        # (The count families' statistics are all class-major.)
        pairs = value[: 2 * n_labels]
        np.subtract(value[2 * n_labels], pairs[1::2], out=pairs[0::2])
        paired[key] = pairs
    return paired
