"""What every fastnb estimator shares.

The state protocol's hooks (declared abstract in BaseNB), the one fit and
partial_fit flow over them, priors and class weights, the all-or-nothing
rule for fitting, the lock a state changes under, the lazily rebuilt tables,
and the four prediction methods, which all come from one scoring call. The
checks of input are fastnb._validation's, the threads fastnb._threads'.
"""

from __future__ import annotations

import copy
import functools
import threading
import weakref
from abc import ABCMeta, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics import accuracy_score
from sklearn.utils.validation import (
    check_is_fitted,
)

from fastnb._config import check_table_bytes
from fastnb._explain import ReadingMixin, check_cost
from fastnb._labels import column_classes, read_only, soft_labels, sorted_classes
from fastnb._simd import kernels as _kernels
from fastnb._statistics import (
    CLASS_COUNT,
    check_classes,
    check_declared,
    combined_by_rule,
    empty_statistics,
)
from fastnb._threads import effective_n_threads, thread_scratch, zeroed
from fastnb._validation import (
    as_numpy,
    check_fit_namespace,
    check_sample_weight,
    encode_fit_labels,
    encode_labels,
    first_refused_in_row,
    ignores_missing,
    in_namespace,
    input_namespace,
    keep_fit_namespace,
    label_words,
    num_samples,
    partial_fit_classes,
    refused_value_error,
    sparse_arrays,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from fastnb._typing import MatrixLike


def observed_count(count, missing):
    """The weight of each entry's observed values: the class weights less
    the missing weights, never below 0 by rounding, (n_classes, n_features);
    the class weights as a column (n_classes, 1) where missing is None."""
    if missing is None:
        return count[:, None]
    return np.maximum(count[:, None] - missing, 0.0)


def observed_weights(statistics):
    """Each class's weight of each feature's observed values (n_classes,
    n_features), from a family's statistics record: its ``class_count`` and
    ``missing_count`` (None where none are kept: the class weights as a
    column)."""
    return observed_count(statistics.class_count, statistics.missing_count)


def finish_scores(jll, output, out, labels):
    """Finish the joint log-likelihoods jll (n_samples, n_classes), scored
    in NumPy, as the scoring kernels finish theirs (``output``: into out,
    which may be jll, or labels), by the kernel finish_scores."""
    n_threads = effective_n_threads(jll.size)
    _kernels.finish_scores(
        jll, output, out, labels, thread_scratch(n_threads, jll.shape[1]), n_threads
    )


Method = TypeVar("Method", bound=Callable[..., Any])


def unchanged_on_error(method: Method) -> Method:
    """Make a fitting method all-or-nothing.

    The estimator's attributes are restored if the method raises. Methods
    wrapped with this must rebind attributes, and change the model's arrays
    in place only once nothing can fail (see BaseNB._add_batch): fitting
    computes a batch's statistics in new arrays and combines them into new
    arrays.
    """

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        saved = dict(self.__dict__)
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            # Put back, never cleared: a prediction in another thread reads
            # the attributes meanwhile.
            for name in self.__dict__.keys() - saved.keys():
                self.__dict__.pop(name, None)
            self.__dict__.update(saved)
            raise

    return cast("Method", wrapper)


def uniform_priors(cls, n_classes):
    """``_uniform_prior`` of the families whose class prior is their
    ``priors`` parameter (GaussianNB, KernelDensityNB)."""
    return {"priors": np.full(n_classes, 1.0 / n_classes)}


class StateGuard:
    """A model's lock over its fitted state, and the tables last built.

    ``partial_fit`` (and every other fitting) holds ``lock`` while it
    changes the statistics and swaps the state; a prediction takes it only
    to build the tables of a state that has none, and where it is held,
    scores with ``last``, the tables last built, of a state the model
    passed through (BaseNB._final_tables), rather than wait.
    """

    def __init__(self):
        self.lock = threading.RLock()
        self.last = None
        # The statistics (and the feature count) whose shapes were last
        # checked before a prediction or partial_fit: checked again only
        # when either changes.
        self.shapes_checked = None


# Each model's guard, kept outside the model so that pickling, copying,
# cloning and comparing models never see it.
_STATE_GUARDS: weakref.WeakKeyDictionary[Any, StateGuard] = weakref.WeakKeyDictionary()


def state_guard(model):
    """The model's StateGuard, made on first use."""
    guard = _STATE_GUARDS.get(model)
    if guard is None:
        guard = _STATE_GUARDS.setdefault(model, StateGuard())
    return guard


def log_class_prior(class_count, class_prior, fit_prior):
    """Log class priors: given, fitted from weighted class counts, or uniform.

    Uniform also when fitting the prior but no sample has carried any weight yet.
    """
    n_classes = len(class_count)
    if class_prior is not None:
        # A class given prior 0 is impossible: log 0 = -inf, silently.
        with np.errstate(divide="ignore"):
            return np.log(class_prior)
    if fit_prior and class_count.sum() > 0:
        # A class not seen yet has count 0: its log prior is -inf, silently.
        with np.errstate(divide="ignore"):
            return np.log(class_count) - np.log(class_count.sum())
    return np.full(n_classes, -np.log(n_classes))


class Deferred:
    """A fitted attribute that ``_tables`` leaves to be built when first read:
    ``function(*arguments)``, for one costly to build and seldom read (as
    CategoricalNB's lists of an array a feature, a view each). Its arguments
    are kept, not a closure, so that a copy's are the copy's own arrays."""

    def __init__(self, function, *arguments):
        self.function = function
        self.arguments = arguments


def sealed(value):
    """A fitted attribute's ``value`` with its arrays made read-only (an array,
    or a list of them)."""
    for array in value if isinstance(value, list) else [value]:
        if isinstance(array, np.ndarray):
            read_only(array)
    return value


def fitted_table(name, doc):
    """A read-only fitted attribute served from the lazily rebuilt tables."""

    def get(self):
        attributes = self._fitted_attributes(name)
        if name not in attributes:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
            )
        value = attributes[name]
        if isinstance(value, Deferred):
            value = attributes[name] = sealed(value.function(*value.arguments))
        return value

    return property(get, doc=doc)


def fitted_statistic(key, doc):
    """A read-only fitted attribute that is one of the sufficient statistics.

    A read-only view: the model's own array, which only fitting changes.
    """

    def get(self):
        statistics = self._fitted_statistics(key + "_")
        if key not in statistics:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {key + '_'!r}"
            )
        return read_only(statistics[key].view())

    return property(get, doc=doc)


# Parameter values that cannot change in place, and the values of each live
# model's last parameter check that were all such (BaseNB._validate_params).
IMMUTABLE_PARAMS = (type(None), bool, int, float, str, np.generic)
# The parameter settings that passed scikit-learn's checks, by class: each
# value with its type (True and 1 are different settings). At most
# CHECKED_PARAMS_KEPT are kept; then the record starts again.
_CHECKED_PARAMS: set[tuple[type, tuple[tuple[type, Any], ...]]] = set()
CHECKED_PARAMS_KEPT = 1024


@functools.cache
def _constructor_parameters(cls):
    """scikit-learn's sorted names of the class's constructor parameters."""
    return BaseEstimator._get_param_names.__func__(cls)


class BaseNB(ReadingMixin, ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Fitting and prediction shared by every fastnb estimator.

    A fitted model is its constructor parameters, ``classes_``,
    ``n_features_in_`` (and ``feature_names_in_``) and a dict of named
    sufficient statistics, ``_statistics`` (see :mod:`fastnb._state`); its
    tables are a cache, rebuilt from the statistics once after they change.
    ``fit``, ``partial_fit``, ``fastnb.get_state`` and ``fastnb.from_state``
    all go through the hooks below, which each family implements; none of
    them changes the estimator (but ``_add_batch``, once nothing can fail),
    so a fit that raises leaves it as it was.

    Fitting: ``_checked_batch`` (``_check_batch``, the weights, the labels'
    codes; the same for fit, partial_fit and a batch's state) ->
    ``_fit_statistics`` (``_largest_table``
    checked against fastnb's max_table_bytes, then ``_batch_statistics``;
    ``partial_fit``: ``_add_batch``, which combines them with the model's)
    -> ``_table_params`` -> (lazily) ``_tables``.
    Predicting: ``_check_X`` -> ``_score`` (by the kernel ``_scorer``
    gives). Before every prediction and partial_fit, ``classes_`` and
    ``n_features_in_`` are checked against the statistics' shapes.
    """

    # The constructor parameters that set the class prior (MixedNB sets them
    # on its families, see _uniform_prior, and refuses them from users).
    _prior_params: tuple[str, ...] = ()

    @classmethod
    def _uniform_prior(cls, n_classes):
        """The values of ``_prior_params`` that make the prior uniform over
        ``n_classes`` classes (MixedNB's families: their joint
        log-likelihoods, less that prior, are added to MixedNB's)."""
        raise NotImplementedError(f"{cls.__name__} has no uniform prior.")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = ignores_missing(self)
        # Arrays of other array-API libraries are taken in NumPy, and the
        # predictions given back in X's namespace (fastnb._validation).
        tags.array_api_support = True
        return tags

    def __sklearn_is_fitted__(self):
        """Whether the model has fitted statistics (scikit-learn's
        check_is_fitted asks this, instead of looking for attributes whose
        names end in an underscore)."""
        return "_statistics" in vars(self)

    def set_params(self, **params: Any) -> Self:
        """Set the parameters of this estimator, as scikit-learn's does.

        The fitted statistics' shapes are checked again before the next
        prediction or partial_fit: some parameters (KernelDensityNB's
        ``n_grid``, ``missing``) decide the shapes a model keeps.

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : object
            The estimator.
        """
        super().set_params(**params)
        state_guard(self).shapes_checked = None
        return self

    def _validate_params(self):
        # scikit-learn checks the parameters at every fit and partial_fit
        # (80 us: more than the fit of a small table). A setting of values
        # that cannot change in place is checked once per class: a loop of
        # partial_fit calls, or a grid search's fits, check each setting once.
        values = tuple(getattr(self, name) for name in self._get_param_names())
        if not all(isinstance(value, IMMUTABLE_PARAMS) for value in values):
            super()._validate_params()
            return
        setting = (type(self), tuple((type(value), value) for value in values))
        try:
            if setting in _CHECKED_PARAMS:
                return
        except TypeError:  # an unhashable NumPy scalar (a structured one)
            super()._validate_params()
            return
        super()._validate_params()
        if len(_CHECKED_PARAMS) >= CHECKED_PARAMS_KEPT:
            _CHECKED_PARAMS.clear()
        _CHECKED_PARAMS.add(setting)

    @classmethod
    def _get_param_names(cls):
        # scikit-learn reads the constructor's signature on every call (most
        # of get_params', so of every fit's parameter validation); a class's
        # is read once.
        return _constructor_parameters(cls)

    # -- the state protocol: what each family implements ----------------------

    @abstractmethod
    def _check_batch(self, X, y, reset):
        """Check a batch of training data; return ``(batch, y)``.

        ``batch`` is whatever ``_batch_statistics`` reads (the checked X, or a
        dict); ``reset`` is True on the first fit or partial_fit, when the
        feature count and names are learnt. Everything about the data that can
        be wrong must raise here or in ``_batch_statistics``.
        """

    @abstractmethod
    def _batch_statistics(self, batch, y, sample_weight, n_classes):
        """Sufficient statistics of a checked batch, in new arrays.

        ``y`` holds class indices 0..n_classes-1, or is
        fastnb._labels.SoftLabels (soft labels, the sample weights in);
        ``sample_weight`` is a checked float64 array, or None for unit
        weights (always None with SoftLabels).
        """

    def _checked_batch(
        self, X, y, sample_weight, classes, reset, allow_all_zero, class_proba=None
    ):
        """``(batch, codes, weights, classes)``: X, y and sample_weight checked
        as every fit checks them (``_check_batch``, then the weights), and y's
        labels coded by ``classes``, or, if None, by y's own sorted labels
        (returned). Arrays of other array-API libraries are read in NumPy.

        With ``class_proba`` (soft labels) instead of y, its columns are the
        classes (sorted, or 0 .. n - 1 if None), and codes are SoftLabels,
        the sample weights folded in (weights None).

        fit, partial_fit and the state of a batch (fastnb._state.batch_state:
        merge, fastnb.dask) differ only in ``classes``, ``reset`` (whether
        the features are learnt) and ``allow_all_zero`` (a batch may weigh
        nothing, a fit may not)."""
        if class_proba is not None:
            return self._checked_soft_batch(
                X, y, sample_weight, classes, reset, allow_all_zero, class_proba
            )
        batch, labels = self._check_batch(as_numpy(X), as_numpy(y), reset=reset)
        weights = check_sample_weight(
            as_numpy(sample_weight), len(labels), allow_all_zero=allow_all_zero
        )
        # The labels' coding takes the threads the kernels over X wake anyway.
        # (n_features_in_: set by the check; the batch may be a family's dict.)
        work = len(labels) * self.n_features_in_
        if classes is None:
            classes, codes = encode_fit_labels(labels, work)
        else:
            codes = encode_labels(labels, classes, work)
        return batch, codes, weights, classes

    def _checked_soft_batch(
        self, X, y, sample_weight, classes, reset, allow_all_zero, class_proba
    ):
        """_checked_batch of soft labels."""
        if y is not None:
            raise ValueError(
                "Pass either y or class_proba, not both: class_proba gives each "
                "sample's probability of each class, in place of a label."
            )
        X = as_numpy(X)
        n_samples = num_samples(X)
        # X is checked as with labels; the labels' check has nothing to find.
        batch, _ = self._check_batch(X, np.zeros(n_samples, dtype=np.intp), reset=reset)
        weights = check_sample_weight(
            as_numpy(sample_weight), n_samples, allow_all_zero=allow_all_zero
        )
        class_proba = as_numpy(class_proba)
        if classes is None:
            classes = column_classes(class_proba)
        # (Each row's probabilities sum to 1: the labels weigh nothing only
        # where the weights, checked above, do.)
        codes = soft_labels(class_proba, n_samples, len(classes), weights)
        return batch, codes, None, classes

    def _largest_table(self, batch, n_classes):
        """``(what, n_values)``: the largest table, of float64 values, that
        ``_batch_statistics`` or the tables built from its statistics will
        allocate for a checked ``batch`` over n_classes: by default one of
        classes x features. A table whose size only the kernels find
        (CategoricalNB's categories) is checked where it is allocated."""
        n_features = batch.shape[1]
        return (
            f"a table of {n_classes} classes by {n_features} features",
            float(n_classes) * n_features,
        )

    def _fit_statistics(self, batch, y, sample_weight, n_classes):
        """``_batch_statistics``, refused with MemoryError before anything is
        allocated if its largest table would pass max_table_bytes."""
        check_table_bytes(type(self).__name__, *self._largest_table(batch, n_classes))
        return self._batch_statistics(batch, y, sample_weight, n_classes)

    @abstractmethod
    def _declared_statistics(self, statistics=None):
        """The statistics a model of these parameters keeps, as
        fastnb._statistics.Statistic declarations, in the order they are
        checked (MixedNB's depend on the families ``statistics`` holds; the
        other families' on the parameters alone, missing="ignore" adding
        some). From them come the names, the checks of shapes and values,
        the empty state, the class axes and the sums of two states."""

    def _statistic_sizes(self, statistics, n_features):
        """The sizes of the axes the declarations name besides "classes"
        and "features", read from ``statistics`` (None: for an empty state
        over n_features); ValueError if the statistics they are read from
        are malformed."""
        return {}

    def _check_statistics_agree(self, statistics):
        """The family's rules for its statistics together, past what the
        declarations say (checked only with values, once the shapes have
        passed): for example GaussianNB's means within what fit accepts."""

    def _combined_own(self, first, second):
        """The statistics declared with combine="own" (moments merged,
        categories united, grids moved onto one lattice), of the union of
        the two batches behind ``first`` and ``second``."""
        return {}

    def _statistic_names(self, statistics):
        """The names of the statistics a model of these parameters keeps."""
        return [statistic.name for statistic in self._declared_statistics(statistics)]

    def _combine_statistics(self, first, second):
        """The statistics of the union of the two batches behind ``first`` and
        ``second`` (over the same classes), in new arrays; neither is changed."""
        declared = self._declared_statistics(first)
        combined = combined_by_rule(first, second, declared)
        combined.update(self._combined_own(first, second))
        return {statistic.name: combined[statistic.name] for statistic in declared}

    def _empty_statistics(self, n_classes, X):
        """Zeroed statistics over X's features, which ``_batch_statistics``
        fills (those declared of kind "own" left out)."""
        sizes = self._axis_sizes(None, n_classes, X.shape[1])
        return empty_statistics(
            self._declared_statistics(), sizes, X.dtype, zeros=zeroed
        )

    def _axis_sizes(self, statistics, n_classes, n_features):
        """Each axis name the declarations use -> its size."""
        sizes = {"classes": n_classes, "features": n_features}
        sizes.update(self._statistic_sizes(statistics, n_features))
        return sizes

    def _check_statistics(self, statistics, n_classes, n_features, values=True):
        """Raise ValueError unless ``statistics`` is a consistent set for a
        model of n_classes and n_features: its names are the ones this model
        keeps (_statistic_names), then its dtypes and shapes, in at most
        O(n_features), and, if ``values``, its values (finite, non-negative
        counts), in O(n_classes x n_features) (_check_statistic_values)."""
        expected, given = set(self._statistic_names(statistics)), set(statistics)
        if given != expected:
            unknown, lacking = sorted(given - expected), sorted(expected - given)
            problems = [f"{unknown[0]!r} is not one of them."] if unknown else []
            problems += [f"{lacking[0]!r} is lacking."] if lacking else []
            raise ValueError(
                f"{self!r} keeps the statistics {sorted(expected)}; "
                + " ".join(problems)
            )
        self._check_statistic_values(statistics, n_classes, n_features, values)

    def _check_statistic_values(self, statistics, n_classes, n_features, values):
        """_check_statistics for statistics of the right names: the
        declarations' checks, then the family's rules."""
        sizes = self._axis_sizes(statistics, n_classes, n_features)
        check_declared(statistics, self._declared_statistics(statistics), sizes, values)
        if values:
            self._check_statistics_agree(statistics)

    @abstractmethod
    def _table_params(self, statistics, n_classes):
        """The constructor parameters the tables depend on, checked against
        the statistics (for example alpha against the number of features)."""

    @abstractmethod
    def _tables(self, statistics, params):
        """``(attributes, scoring)``: the public fitted attributes computed
        from the statistics (``feature_log_prob_``, ``var_``, ...) and the
        arrays ``_score`` reads, which include ``log_prior``, the log class
        prior the family adds to its joint log-likelihood."""

    @abstractmethod
    def _check_X(self, X, scoring):
        """Check X for prediction; return what ``_score`` reads.

        ``scoring``: the tables X will be scored with (a family whose
        checks read the fitted state reads it there, of the same state)."""

    def _scorer(self, scoring, sparse):
        """``(kernel, tables)``: the kernel that scores checked X, dense or
        sparse (CSR), with the ``scoring`` tables, and its arguments between
        X's (X, or its CSR arrays) and the outputs. ``kernel(*X, *tables,
        output, out, labels, scratch, n_threads)`` returns the first row it
        refused, or -1. Every family gives one, but a family whose scores
        are other families' (MixedNB), which overrides ``_score``."""
        raise NotImplementedError(f"{type(self).__name__} has no scoring kernel.")

    def _score(self, X, scoring, output, out, labels):
        """Score checked X with the ``scoring`` tables, by the family's kernel
        (``_scorer``); BaseNB alone chooses dense or sparse, the threads and
        their scratch, and raises a refused row's error (``_refused_row``).

        Fills ``out`` (n_samples, n_classes) with joint log-likelihoods, log
        probabilities or probabilities, or ``labels`` with the best class
        index, as the kernels' ``output`` constant asks.
        """
        sparse = sp.issparse(X)
        kernel, tables = self._scorer(scoring, sparse)
        n_classes = len(scoring.log_prior)
        if sparse:
            n_threads = effective_n_threads(X.nnz * n_classes)
            inputs = sparse_arrays(X)
        else:
            n_threads = effective_n_threads(X.size * n_classes)
            inputs = (X,)
        scratch = thread_scratch(n_threads, n_classes)
        bad = kernel(*inputs, *tables, output, out, labels, scratch, n_threads)
        if bad >= 0:
            raise self._refused_row(X, bad)

    # Whether the scoring kernels refuse negative values (the count families
    # that need them: scikit-learn's families check them when fitting only).
    _scores_non_negative = False

    def _refused_row(self, X, row):
        """The ValueError for the first value of row ``row`` of checked X that
        the scoring kernel refused: infinite, NaN (unless missing="ignore"),
        or negative where ``_scores_non_negative``."""
        column, value = first_refused_in_row(
            X, row, self._scores_non_negative, ignores_missing(self)
        )
        return refused_value_error(value, row, column, type(self).__name__)

    # How two of this family's states combine, where the docs say more than
    # that their statistics add (fastnb.dask's classes' docstrings).
    _combining = ""

    def _add_batch(self, statistics, batch, y, sample_weight, n_classes):
        """The model's ``statistics`` with a checked batch's added, for
        ``partial_fit``: by default its statistics, combined.

        A family may add the batch into the model's own arrays instead (as
        scikit-learn does) when nothing can fail once the first is written.
        """
        return self._combine_statistics(
            statistics, self._fit_statistics(batch, y, sample_weight, n_classes)
        )

    def _class_axes_of(self, statistics):
        """Statistic name -> its class axis, for those of ``statistics`` that
        have one (aligning two models' classes, fastnb._state.combine_states)."""
        return {
            statistic.name: statistic.class_axis
            for statistic in self._declared_statistics(statistics)
            if statistic.class_axis is not None and statistic.name in statistics
        }

    def _in_fit_order(self, statistics):
        """``statistics`` combined from several batches, laid out as one fit on
        all of their data lays them out.

        Only CategoricalNB's raw categories have an order that depends on how
        the data was split: by default the statistics are returned as they
        are. (Combined into a model's statistics, as a partial_fit in parts
        does, a batch's ordered categories that are new to the model come
        after the model's, in order, as one partial_fit appends them.)
        """
        return statistics

    # -- fitting ---------------------------------------------------------------

    @unchanged_on_error
    def fit(
        self,
        X: MatrixLike,
        y: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        *,
        class_proba: MatrixLike | None = None,
        classes: ArrayLike | None = None,
    ) -> Self:
        """Fit the model to X, y, or to X and each sample's class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors.
        y : array-like of shape (n_samples,), default=None
            Target labels. Required unless ``class_proba`` is given.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each sample (1 when None).
        class_proba : {array-like, sparse matrix} of shape (n_samples, \
                n_classes), default=None
            Soft labels, in place of y: each sample's probability of each
            class (each row sums to 1). A sample counts in each class with
            its weight times its probability of the class; probabilities
            that are 0 or 1 give the fit of the labels they make.
        classes : array-like of shape (n_classes,), default=None
            With ``class_proba``: the class of each of its columns (by
            default 0 .. n_classes - 1), which becomes ``classes_``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        namespace = input_namespace(X)
        if class_proba is not None and classes is not None:
            classes, class_proba = sorted_classes(classes, class_proba)
        elif classes is not None:
            raise ValueError(
                "classes is the class of each column of class_proba; with y, the "
                "classes are y's labels."
            )
        batch, codes, weights, fit_classes = self._checked_batch(
            X,
            y,
            sample_weight,
            classes,
            reset=True,
            allow_all_zero=False,
            class_proba=class_proba,
        )
        self._fit_batch(batch, codes, weights, fit_classes)
        keep_fit_namespace(self, namespace)
        return self

    def _fit_batch(self, batch, codes, weights, classes):
        """Make the model the fit of a checked batch (``_checked_batch``'s
        parts) and build its tables: fit's last steps, which EM
        (fastnb.SemiSupervisedNB) repeats on one checked X."""
        statistics = self._fit_statistics(batch, codes, weights, len(classes))
        self._set_state(classes, statistics, made_here=True)
        self._final_tables()

    @unchanged_on_error
    def partial_fit(
        self,
        X: MatrixLike,
        y: ArrayLike | None = None,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        *,
        class_proba: MatrixLike | None = None,
    ) -> Self:
        """Add a batch of samples to the model.

        Only the sufficient statistics are updated; the tables are rebuilt
        once, before the next prediction.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors.
        y : array-like of shape (n_samples,), default=None
            Target labels, each one of ``classes``. Required unless
            ``class_proba`` is given.
        classes : array-like of shape (n_classes,), default=None
            Every class that can appear in y. Required on the first call, and
            must be the same if passed again.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each sample (1 when None).
        class_proba : {array-like, sparse matrix} of shape (n_samples, \
                n_classes), default=None
            Soft labels, in place of y: each sample's probability of each
            class, the columns in the order of ``classes_`` (the sorted
            classes). See ``fit``.

        Returns
        -------
        self : object
            The updated estimator.
        """
        self._validate_params()
        first_call = not hasattr(self, "classes_")
        namespace = input_namespace(X)
        if not first_call:
            self._check_fitted_state()
            check_fit_namespace(self, namespace, "partial_fit")
        # Arrays of other array-API libraries are read in NumPy.
        known = partial_fit_classes(self, as_numpy(classes))
        batch, codes, weights, _ = self._checked_batch(
            X,
            y,
            sample_weight,
            known,
            reset=first_call,
            allow_all_zero=True,
            class_proba=class_proba,
        )
        if first_call:
            statistics = self._fit_statistics(batch, codes, weights, len(known))
            self._set_state(known, statistics, made_here=True)
            keep_fit_namespace(self, namespace)
            return self
        # The count families add the batch into the model's own arrays: with
        # the lock held, predictions meanwhile score with the last tables built.
        with state_guard(self).lock:
            statistics = self._add_batch(
                self._statistics, batch, codes, weights, len(known)
            )
            self._set_state(known, statistics, made_here=True)
        return self

    def _set_state(self, classes, statistics, made_here=False):
        """Make ``statistics`` over ``classes`` the model's state.

        The parameters are checked against them first (which may raise); the
        tables are rebuilt when next needed. ``made_here``: the statistics
        were summed by this model's fit or partial_fit from a checked batch
        (and state), so their shapes need no check before the next call
        (_check_fitted_state: 8-16 us of a 1,000-row partial_fit).
        """
        params = self._table_params(statistics, len(classes))
        guard = state_guard(self)
        with guard.lock:
            tables = vars(self).get("_cache", {}).get("tables")
            if tables is not None:
                guard.last = tables
            self.classes_ = classes
            self._statistics = statistics
            self._params = params
            self._cache = {}
            guard.shapes_checked = (
                (statistics, self.n_features_in_) if made_here else None
            )

    # -- pickle, skops and copy.deepcopy -----------------------------------------

    def __getstate__(self):
        """The attributes to pickle, but the tables: only whether they were
        built (they are rebuilt from the statistics when unpickled)."""
        state = dict(super().__getstate__())
        if "_cache" in state:
            state["_cache"] = dict.fromkeys(state["_cache"])
        return state

    def __setstate__(self, state):
        """Restore pickled attributes, checking a fitted model's state as
        ``fastnb.from_state`` does (a pickle or skops file may have been
        changed): ValueError, before anything is scored, if it is not one
        that fitting could make. Tables that were built are rebuilt."""
        state = dict(state)
        built = state.pop("_cache", {})
        super().__setstate__(state)
        if "_statistics" in vars(self):
            self._adopt(
                self.classes_,
                self.n_features_in_,
                getattr(self, "feature_names_in_", None),
                self._statistics,
            )
            if isinstance(built, dict) and "tables" in built:
                self._final_tables()

    @unchanged_on_error
    def _adopt(
        self,
        classes,
        n_features,
        feature_names,
        statistics,
        copy_statistics=True,
        check_values=True,
    ):
        """Make this estimator the fitted model of ``classes``, the feature
        count and names, and ``statistics`` (copied, unless
        ``copy_statistics`` is False: arrays the caller made for this model
        alone), once they are checked as ``fastnb.from_state`` checks a
        state: ValueError, the estimator left as it was, if they are not what
        fitting with its parameters could make. The door into a model for
        states from outside (a state, a file, a pickle, fastnb.OneVsRestNB's
        labels). ``check_values`` False leaves the values unchecked (their
        names, dtypes and shapes are checked): statistics fastnb's kernels
        summed in this process (fastnb.OneVsRestNB's labels)."""
        classes = check_classes(classes)
        if isinstance(n_features, bool) or not isinstance(n_features, int | np.integer):
            raise ValueError(f"n_features_in must be an integer; got {n_features!r}.")
        if n_features < 1:
            raise ValueError(f"n_features_in must be at least 1; got {n_features}.")
        if feature_names is not None:
            feature_names = np.asarray(feature_names, dtype=object)
            if feature_names.shape != (n_features,) or not all(
                isinstance(name, str) for name in feature_names
            ):
                raise ValueError(
                    f"feature_names_in must be None or {n_features} strings; got "
                    f"{feature_names!r}."
                )
        if not isinstance(statistics, dict):
            raise ValueError("statistics must be a dict of arrays.")
        if copy_statistics:
            statistics = copy.deepcopy(statistics)
        self._check_statistics(statistics, len(classes), n_features, check_values)
        self._validate_params()
        self.n_features_in_ = int(n_features)
        self.__dict__.pop("feature_names_in_", None)
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        self._set_state(classes, statistics)

    def __deepcopy__(self, memo):
        """A copy of everything, tables too: made in this process from a model
        that was checked, it needs no checking."""
        duplicate = type(self).__new__(type(self))
        memo[id(self)] = duplicate
        vars(duplicate).update(copy.deepcopy(vars(self), memo))
        return duplicate

    # -- tables ------------------------------------------------------------------

    def _final_tables(self):
        """``(attributes, scoring)``, rebuilt once after the statistics changed.

        The public attributes are read-only arrays, as are the statistics the
        estimator shows (fitted_statistic): the model changes only by fitting.
        Attributes given as Deferred are built, and made read-only, when first
        read (fitted_table).

        Tables are built from one state under the model's lock
        (``state_guard``) and kept in that state's cache, so that they are
        always of one state. While a ``partial_fit`` in another thread holds
        the lock, the tables last built, of a state the model passed
        through, are taken instead of waiting for it.
        """
        tables = self._cache.get("tables")
        if tables is not None:
            return tables
        guard = state_guard(self)
        if not guard.lock.acquire(blocking=False):
            last = guard.last
            if last is not None:
                return last
            guard.lock.acquire()
        try:
            cache = self._cache
            if "tables" not in cache:
                attributes, scoring = self._tables(self._statistics, self._params)
                for value in attributes.values():
                    sealed(value)
                cache["tables"] = attributes, scoring
            return cache["tables"]
        finally:
            guard.lock.release()

    def _check_fitted_state(self):
        """Check that the model is fitted and that the fitted attributes a user
        can rebind (``classes_``, ``n_features_in_``) still agree with its
        statistics, whose shapes size the kernels' loops and buffers: in
        O(n_features), before every prediction and partial_fit."""
        if not self.__sklearn_is_fitted__():
            check_is_fitted(self)  # scikit-learn's NotFittedError
        n_classes = len(self._statistics[CLASS_COUNT.name])
        classes = self.classes_
        if not isinstance(classes, np.ndarray) or classes.shape != (n_classes,):
            raise ValueError(
                f"classes_ must be an array of the {n_classes} classes the model "
                f"was fitted on; got {classes!r}."
            )
        n_features = self.n_features_in_
        if isinstance(n_features, bool) or not isinstance(n_features, int | np.integer):
            raise ValueError(f"n_features_in_ must be an integer; got {n_features!r}.")
        names = vars(self).get("feature_names_in_")
        if names is not None and (
            not isinstance(names, np.ndarray) or names.shape != (n_features,)
        ):
            # scikit-learn compares them with X's names element-wise.
            raise ValueError(
                f"feature_names_in_ must be an array of the {n_features} feature "
                f"names the model was fitted on; got {names!r}."
            )
        # The statistics' shapes are checked once for each statistics and
        # feature count (a partial_fit's adding in place keeps the shapes).
        guard = state_guard(self)
        checked = guard.shapes_checked
        if (
            checked is not None
            and checked[0] is self._statistics
            and checked[1] == n_features
        ):
            return
        try:
            self._check_statistics(
                self._statistics, n_classes, n_features, values=False
            )
        except ValueError as exc:
            raise ValueError(
                f"n_features_in_={n_features} does not match the fitted "
                f"statistics: {exc}"
            ) from exc
        guard.shapes_checked = (self._statistics, n_features)

    def _fitted_statistics(self, name):
        """The statistics, for attribute ``name``; AttributeError if not fitted."""
        if "_statistics" not in vars(self):
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r} (not fitted)"
            )
        return self._statistics

    def _fitted_attributes(self, name):
        """The public fitted attributes, for attribute ``name``; as above."""
        self._fitted_statistics(name)
        return self._final_tables()[0]

    # -- prediction --------------------------------------------------------------

    def _predict_output(self, X, output, cost=None):
        """One scoring call; ``cost`` (checked) for MIN_EXPECTED_COST, which
        the kernels read where other outputs write (``out``)."""
        self._check_fitted_state()
        # One state's tables, for the checks and the scores alike: a
        # partial_fit in another thread may swap the state meanwhile.
        scoring = self._final_tables()[1]
        X = self._check_X(X, scoring)
        n_samples, n_classes = X.shape[0], len(self.classes_)
        if output == _kernels.Output.ARGMAX:
            out = np.empty((0, n_classes), dtype=np.float64)
            labels = np.empty(n_samples, dtype=np.intp)
        elif output == _kernels.Output.MIN_EXPECTED_COST:
            out = cost
            labels = np.empty(n_samples, dtype=np.intp)
        else:
            out = np.empty((n_samples, n_classes), dtype=np.float64)
            labels = np.empty(0, dtype=np.intp)
        self._score(X, scoring, output, out, labels)
        if output in (_kernels.Output.ARGMAX, _kernels.Output.MIN_EXPECTED_COST):
            return labels
        return out.astype(self._output_dtype(X), copy=False)

    def _output_dtype(self, X):
        """Floating dtype of the probability outputs (float64 unless overridden)."""
        return np.float64

    def _numpy_input(self, X, method):
        """``(X, namespace)``: X as NumPy, and the namespace and device its
        outputs go back to (None: NumPy), checked against the fit's where
        scikit-learn's array_api_dispatch is on (fastnb._validation)."""
        namespace = input_namespace(X)
        if self.__sklearn_is_fitted__():
            check_fit_namespace(self, namespace, method)
        return as_numpy(X), namespace

    def predict_joint_log_proba(self, X: MatrixLike) -> NDArray[np.floating]:
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
        X, namespace = self._numpy_input(X, "predict_joint_log_proba")
        output = _kernels.Output.JOINT_LOG_LIKELIHOOD
        return in_namespace(self._predict_output(X, output), namespace)

    def predict_log_proba(self, X: MatrixLike) -> NDArray[np.floating]:
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
        X, namespace = self._numpy_input(X, "predict_log_proba")
        output = _kernels.Output.LOG_PROBA
        return in_namespace(self._predict_output(X, output), namespace)

    def predict_proba(self, X: MatrixLike) -> NDArray[np.floating]:
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
        X, namespace = self._numpy_input(X, "predict_proba")
        output = _kernels.Output.PROBA
        return in_namespace(self._predict_output(X, output), namespace)

    def predict(self, X: MatrixLike, *, cost: ArrayLike | None = None) -> NDArray[Any]:
        """Return the most probable class of each sample, or the least costly.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples.
        cost : array-like of shape (n_classes, n_classes), default=None
            None for the most probable class (the MAP rule). Otherwise the
            Bayes decision rule: ``cost[i, j]`` is the cost of predicting
            ``classes_[j]`` when the truth is ``classes_[i]`` (finite,
            non-negative), and each sample gets the class j of least
            expected cost ``sum_i P(classes_[i] | x) cost[i, j]``; among
            classes of equal expected cost the most probable, else the
            first. The 0-1 matrix (0 on the diagonal, 1 elsewhere) gives
            the MAP rule exactly. The posterior is computed row by row in
            the scoring kernel: no (n_samples, n_classes) array is made.
            A keyword of ``predict`` (rather than a method of its own) so
            that a Pipeline passes it on: ``pipe.predict(X, cost=C)``.

        Returns
        -------
        C : ndarray of shape (n_samples,)
            Predicted labels, taken from ``classes_``.

        Examples
        --------
        >>> import numpy as np
        >>> from fastnb import MultinomialNB
        >>> X = np.array([[3, 0], [2, 1], [1, 2], [0, 3]])
        >>> clf = MultinomialNB().fit(X, ["ham", "ham", "spam", "spam"])
        >>> clf.predict([[1, 1]])
        array(['ham'], dtype='<U4')
        >>> clf.predict_proba([[2, 3]]).round(2)
        array([[0.25, 0.75]])
        >>> # Losing a real mail (ham predicted spam) costs 10, spam let through 1.
        >>> clf.predict([[2, 3]], cost=[[0, 10], [1, 0]])
        array(['ham'], dtype='<U4')
        """
        X, namespace = self._numpy_input(X, "predict")
        if cost is None:
            labels = self._predict_output(X, _kernels.Output.ARGMAX)
        else:
            self._check_fitted_state()
            labels = self._predict_output(
                X,
                _kernels.Output.MIN_EXPECTED_COST,
                check_cost(as_numpy(cost), self.classes_),
            )
        classes = self.classes_
        if classes.dtype.hasobject:
            # (References: NumPy copies them, counting each.)
            return classes[labels]
        predicted = np.empty(len(labels), dtype=classes.dtype)
        _kernels.take_labels(
            label_words(np.ascontiguousarray(classes)),
            labels,
            label_words(predicted),
            effective_n_threads(len(labels)),
        )
        return in_namespace(predicted, namespace)

    def score(
        self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> float:
        """Return the mean accuracy of ``predict(X)`` against y.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,)
            True labels of X.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each sample in the mean (1 when None).

        Returns
        -------
        score : float
            The share of samples whose predicted label is y's, weighted by
            ``sample_weight``.

        Examples
        --------
        >>> import numpy as np
        >>> from fastnb import GaussianNB
        >>> X = np.array([[1.0], [1.2], [3.0], [3.3]])
        >>> clf = GaussianNB().fit(X, [0, 0, 1, 1])
        >>> clf.score([[1.1], [2.9], [1.0]], [0, 1, 1])
        0.6666666666666666
        """
        # In NumPy whatever the input's namespace: the mean is a float.
        predicted = as_numpy(self.predict(X))
        return float(
            accuracy_score(
                as_numpy(y), predicted, sample_weight=as_numpy(sample_weight)
            )
        )

    # -- reading the model -------------------------------------------------------
