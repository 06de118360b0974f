"""What every fastnb estimator shares.

Labels and priors, input checks, the thread count, the all-or-nothing rule
for ``fit`` and ``partial_fit``, the lazily rebuilt log-probability tables,
and the four prediction methods, which all come from one scoring call.
"""

import functools
import os
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_is_fitted

from fastnb._simd import kernels as _kernels

FLOAT_DTYPES = (np.float64, np.float32)

# Values a kernel must touch to be worth each extra thread: waking a thread
# costs more than small inputs save, and on a busy machine far more.
WORK_PER_THREAD = 1 << 16


def effective_n_threads(work=None):
    """Number of threads the kernels use: OpenMP's limit, capped by usable CPUs.

    OpenMP's limit follows ``OMP_NUM_THREADS`` and ``threadpoolctl``. With
    ``work`` (how many values the kernel touches: nonzeros, or rows x
    columns), small inputs get fewer threads, one per WORK_PER_THREAD values.
    """
    if hasattr(os, "sched_getaffinity"):
        n_cpus = len(os.sched_getaffinity(0))
    else:
        n_cpus = os.cpu_count() or 1
    n_threads = max(1, min(_kernels.openmp_max_threads(), n_cpus))
    if work is not None:
        n_threads = max(1, min(n_threads, work // WORK_PER_THREAD))
    return n_threads


def data_size(X):
    """How many values of X a kernel reads: nonzeros if sparse, else all."""
    return X.nnz if hasattr(X, "nnz") else X.size


def sparse_arrays(X):
    """data, indices, indptr of a CSR/CSC matrix, with one index dtype for both."""
    index_dtype = np.result_type(X.indices.dtype, X.indptr.dtype)
    return (
        X.data,
        X.indices.astype(index_dtype, copy=False),
        X.indptr.astype(index_dtype, copy=False),
    )


def rows_by_class(y, n_classes):
    """Row indices grouped by class (each group in row order) and group offsets.

    For the kernels that make each class one task over CSR rows.
    """
    order = np.argsort(y, kind="stable")
    class_ptr = np.zeros(n_classes + 1, dtype=np.intp)
    np.cumsum(np.bincount(y, minlength=n_classes), out=class_ptr[1:])
    return order, class_ptr


def dense_block_width(n_features, n_threads):
    """Columns per task for the dense kernels that split the work by columns.

    Every task reads all rows, so a task gets at least 64 columns (narrower
    slices of a row cost a whole memory read each); at most 256, so that its
    slice of the statistics stays in cache; otherwise about two tasks a
    thread. The width does not change any result.
    """
    return int(min(max(-(-n_features // (2 * n_threads)), 64), 256))


def pad_classes(table):
    """table (rows, n_classes) with zero columns up to whole class blocks.

    For kernels that score classes in full register blocks (CLASS_BLOCK).
    """
    n_classes = table.shape[-1]
    padding = -n_classes % _kernels.CLASS_BLOCK
    widths = [(0, 0)] * (table.ndim - 1) + [(0, padding)]
    return np.ascontiguousarray(np.pad(table, widths))


def thread_scratch(n_threads, n_classes):
    """Per-thread score rows for the scoring kernels, (n_threads, n_classes).

    Each row has room past n_classes for the classes padded to whole blocks
    (see pad_classes), and rows are at least a cache line (8 doubles) apart
    so that threads never write to the same line.
    """
    block = _kernels.CLASS_BLOCK
    row_length = -(-n_classes // block) * block + 8
    return np.empty((n_threads, row_length), dtype=np.float64)[:, :n_classes]


def unchanged_on_error(method):
    """Make a fitting method all-or-nothing.

    The estimator's attributes are restored if the method raises. Methods
    wrapped with this must rebind attributes rather than change arrays in
    place until nothing can fail any more (the kernels never fail: their
    inputs are checked before the call).
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        saved = dict(self.__dict__)
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    return wrapper


def check_sample_weight(sample_weight, n_samples, allow_all_zero):
    """Return sample weights as a float64 array of shape (n_samples,).

    ``None`` means unit weights. Weights must be finite and non-negative;
    all zero is refused unless ``allow_all_zero`` (a partial_fit batch may
    carry no weight, a fit must).
    """
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    if isinstance(sample_weight, Real):
        sample_weight = np.full(n_samples, sample_weight, dtype=np.float64)
    try:
        weights = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"sample_weight must be an array of numbers, got {sample_weight!r}."
        ) from exc
    if weights.shape != (n_samples,):
        raise ValueError(
            f"sample_weight.shape == {weights.shape}, expected ({n_samples},)."
        )
    if not np.isfinite(weights).all():
        raise ValueError("sample_weight contains NaN or infinity.")
    if (weights < 0).any():
        raise ValueError("sample_weight contains negative values.")
    if not allow_all_zero and n_samples and not weights.any():
        raise ValueError("sample_weight is zero for every sample: nothing to fit.")
    return np.ascontiguousarray(weights)


def encode_fit_labels(y):
    """Sorted classes and each label's index in them, for ``fit``."""
    y = np.asarray(y)
    if y.ndim == 1 and y.dtype.kind in "iu" and y.size:
        # Integer labels over a modest range are valid classes by their type:
        # a table lookup, no sort (check_classification_targets would sort).
        lowest, span = y.min(), int(y.max()) - int(y.min()) + 1
        if span <= 4 * y.size:
            present = np.bincount(y - lowest, minlength=span) > 0
            classes = (np.flatnonzero(present) + lowest).astype(y.dtype)
            index = np.cumsum(present) - 1
            return classes, index[y - lowest].astype(np.intp)
    check_classification_targets(y)
    classes, y_encoded = np.unique(y, return_inverse=True)
    return classes, y_encoded.astype(np.intp, copy=False).reshape(-1)


def partial_fit_classes(estimator, classes):
    """The classes a ``partial_fit`` call works with, checked against earlier calls."""
    if not hasattr(estimator, "classes_"):
        if classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        return unique_labels(classes)
    if classes is not None and not np.array_equal(
        estimator.classes_, np.unique(np.asarray(classes))
    ):
        raise ValueError(
            f"`classes={classes!r}` is not the same as on the first call to "
            f"partial_fit, was: {estimator.classes_!r}"
        )
    return estimator.classes_


def encode_labels(y, classes):
    """Index of each label of y in the sorted ``classes``; unknown labels raise."""
    y = np.asarray(y)
    if y.dtype.kind not in "iu":  # integer labels are valid classes by type
        check_classification_targets(y)
    y_encoded = np.searchsorted(classes, y)
    known = y_encoded < len(classes)
    known[known] = classes[y_encoded[known]] == y[known]
    if not known.all():
        unknown = np.unique(y[~known])
        raise ValueError(
            f"y contains labels {unknown.tolist()} that are not in classes_ "
            f"{classes.tolist()}; pass every class to the first partial_fit call."
        )
    return y_encoded.astype(np.intp, copy=False)


def check_class_prior(class_prior, n_classes):
    """Return ``class_prior`` as a float64 array of n_classes probabilities, or None."""
    if class_prior is None:
        return None
    prior = np.asarray(class_prior, dtype=np.float64).reshape(-1)
    if len(prior) != n_classes:
        raise ValueError("Number of priors must match number of classes.")
    return prior


def log_class_prior(class_count, class_prior, fit_prior):
    """Log class priors: given, fitted from weighted class counts, or uniform.

    Uniform also when fitting the prior but no sample has carried any weight yet.
    """
    n_classes = len(class_count)
    if class_prior is not None:
        return np.log(class_prior)
    if fit_prior and class_count.sum() > 0:
        # A class not seen yet has count 0: its log prior is -inf, silently.
        with np.errstate(divide="ignore"):
            return np.log(class_count) - np.log(class_count.sum())
    return np.full(n_classes, -np.log(n_classes))


def fitted_table(name, doc):
    """A read-only attribute served from the lazily rebuilt tables."""

    def get(self):
        if not hasattr(self, "_tables"):
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r} (not fitted)"
            )
        tables = self._final_tables()
        if name not in tables:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
            )
        return tables[name]

    return property(get, doc=doc)


class BaseNB(ClassifierMixin, BaseEstimator):
    """Fitting and prediction shared by every fastnb estimator.

    Fitting, for subclasses that keep additive statistics, goes through:

    - ``_check_batch(X, y, sample_weight, reset, partial)``: everything a
      batch needs checked, returning ``(batch, y, sample_weight, smoothing)``
      with ``smoothing`` the parameters the tables depend on;
    - ``_class_smoothing(n_classes)``: the checked class prior parameters;
    - ``_init_statistics(n_classes, batch)``: empty statistics;
    - ``_add_batch(batch, y, sample_weight)``: add a batch; it may raise
      only before it changes an array in place (see unchanged_on_error).

    Prediction needs ``_check_X(X)``, ``_finalize()`` (the log tables from
    the statistics, as a dict) and ``_score(X, output, out, labels)``, which
    fills ``out`` or ``labels`` as the kernels' ``output`` constant asks.
    """

    @unchanged_on_error
    def fit(self, X, y, sample_weight=None):
        """Fit the model to X, y.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors.
        y : array-like of shape (n_samples,)
            Target labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each sample (1 when None).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        batch, y, sample_weight, smoothing = self._check_batch(
            X, y, sample_weight, reset=True, partial=False
        )
        classes, y = encode_fit_labels(y)
        smoothing.update(self._class_smoothing(len(classes)))
        self.classes_ = classes
        self._smoothing = smoothing
        self._init_statistics(len(classes), batch)
        self._add_batch(batch, y, sample_weight)
        self._tables = None
        self._final_tables()
        return self

    @unchanged_on_error
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Add a batch of samples to the model.

        Only the sufficient statistics are updated; the tables are rebuilt
        once, before the next prediction.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors.
        y : array-like of shape (n_samples,)
            Target labels, each one of ``classes``.
        classes : array-like of shape (n_classes,), default=None
            Every class that can appear in y. Required on the first call, and
            must be the same if passed again.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each sample (1 when None).

        Returns
        -------
        self : object
            The updated estimator.
        """
        self._validate_params()
        first_call = not hasattr(self, "classes_")
        classes = partial_fit_classes(self, classes)
        batch, y, sample_weight, smoothing = self._check_batch(
            X, y, sample_weight, reset=first_call, partial=True
        )
        smoothing.update(self._class_smoothing(len(classes)))
        y = encode_labels(y, classes)
        if first_call:
            self.classes_ = classes
            self._init_statistics(len(classes), batch)
        self._smoothing = smoothing
        self._tables = None
        self._add_batch(batch, y, sample_weight)
        return self

    def _final_tables(self):
        """The log tables, rebuilt once after ``partial_fit`` changed the statistics."""
        if self._tables is None:
            self._tables = self._finalize()
        return self._tables

    def _predict_output(self, X, output):
        check_is_fitted(self)
        X = self._check_X(X)
        n_samples, n_classes = X.shape[0], len(self.classes_)
        if output == _kernels.Output.ARGMAX:
            out = np.empty((0, n_classes), dtype=np.float64)
            labels = np.empty(n_samples, dtype=np.intp)
        else:
            out = np.empty((n_samples, n_classes), dtype=np.float64)
            labels = np.empty(0, dtype=np.intp)
        self._score(X, output, out, labels)
        if output == _kernels.Output.ARGMAX:
            return labels
        return out.astype(self._output_dtype(X), copy=False)

    def _output_dtype(self, X):
        """Floating dtype of the probability outputs (float64 unless overridden)."""
        return np.float64

    def predict_joint_log_proba(self, X):
        """Return the joint log probability of each sample and class.

        For a row x and class c this is ``log P(c) + log P(x | c)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        C : ndarray of shape (n_samples, n_classes)
            Joint log probabilities, columns in the order of ``classes_``.
        """
        return self._predict_output(X, _kernels.Output.JOINT_LOG_LIKELIHOOD)

    def predict_log_proba(self, X):
        """Return the log posterior probability of each sample and class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        C : ndarray of shape (n_samples, n_classes)
            Log probabilities, columns in the order of ``classes_``.
        """
        return self._predict_output(X, _kernels.Output.LOG_PROBA)

    def predict_proba(self, X):
        """Return the posterior probability of each sample and class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        C : ndarray of shape (n_samples, n_classes)
            Probabilities, columns in the order of ``classes_``; rows sum to 1.
        """
        return self._predict_output(X, _kernels.Output.PROBA)

    def predict(self, X):
        """Return the most probable class of each sample.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.

        Returns
        -------
        C : ndarray of shape (n_samples,)
            Predicted labels, taken from ``classes_``.
        """
        labels = self._predict_output(X, _kernels.Output.ARGMAX)
        return self.classes_[labels]
