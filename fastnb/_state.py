"""The state protocol: a fitted model as named sufficient statistics.

Every fastnb estimator is, once fitted, its constructor parameters, its
classes, its number (and names) of features, and a dict of sufficient
statistics: arrays such as the weighted class counts and per-class feature
sums, from which every table it predicts with is derived. ``get_state``
reads them out as a :class:`ModelState`, ``from_state`` builds a fitted
estimator from one after checking it, ``combine_states`` adds two states
up into the state of a model fitted on both models' data, and ``merge``
does that for fitted models.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from fastnb._base import BaseNB
from fastnb._config import check_table_bytes
from fastnb._labels import sorted_classes
from fastnb._registry import ESTIMATOR_NAMES, ESTIMATORS
from fastnb._statistics import check_classes

# A fastnb estimator class: merge returns a model of its models' class.
NB = TypeVar("NB", bound=BaseNB)


@dataclass(frozen=True)
class ModelState:
    """A fitted fastnb model as data: parameters and sufficient statistics.

    Attributes
    ----------
    estimator : str
        The estimator's class name, for example ``"MultinomialNB"``.
    params : dict
        Its constructor parameters (``get_params(deep=False)``).
    classes : ndarray of shape (n_classes,)
        The class labels, sorted (``classes_``).
    n_features_in : int
        The number of features (``n_features_in_``).
    feature_names_in : ndarray of shape (n_features_in,) or None
        The feature names (``feature_names_in_``), when it was fitted on them.
    statistics : dict
        The sufficient statistics by name: float64 arrays whose first axis
        (or, for CategoricalNB's ``category_count``, second axis) runs over
        the classes, plus, for GaussianNB, the ``dtype`` of the data and, for
        CategoricalNB, the ``categories`` of each feature (a list of arrays).
        MixedNB's are its ``class_count`` and each family's statistics with
        the family's name and a slash before the key (``"gaussian/mean"``),
        with the family's column positions as ``"gaussian/columns"``.
    """

    estimator: str
    params: dict
    classes: np.ndarray
    n_features_in: int
    feature_names_in: np.ndarray | None
    statistics: dict = field(repr=False)


def get_state(model: BaseNB) -> ModelState:
    """Return the state of a fitted fastnb estimator as a :class:`ModelState`.

    The state holds copies: changing it does not change the model.

    Parameters
    ----------
    model : fastnb estimator
        A fitted estimator.

    Returns
    -------
    state : ModelState

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import MultinomialNB, get_state
    >>> model = MultinomialNB().fit(np.array([[2, 1], [0, 3]]), ["a", "b"])
    >>> state = get_state(model)
    >>> sorted(state.statistics)
    ['class_count', 'feature_count']
    >>> state.statistics["feature_count"]
    array([[2., 1.],
           [0., 3.]])
    """
    name = type(model).__name__
    if not isinstance(model, BaseNB):
        raise TypeError(
            f"get_state takes a fastnb estimator ({', '.join(ESTIMATOR_NAMES)}); "
            f"got {name}."
        )
    check_is_fitted(model)
    return state_of(model, model.classes_.copy(), copy.deepcopy(model._statistics))


def state_of(model, classes, statistics):
    """A ModelState of ``model``'s class, parameters and features (copies),
    with the given classes and statistics."""
    names = getattr(model, "feature_names_in_", None)
    return ModelState(
        estimator=type(model).__name__,
        params=copy.deepcopy(model.get_params(deep=False)),
        classes=classes,
        n_features_in=int(model.n_features_in_),
        feature_names_in=None if names is None else names.copy(),
        statistics=statistics,
    )


def from_state(state: ModelState) -> BaseNB:
    """Build a fitted fastnb estimator from a :class:`ModelState`.

    Everything is checked before the estimator is built: the class name
    against the fastnb estimators, the parameters as the constructor and
    ``fit`` check them, the classes (unique and sorted), the feature count
    and names, and the statistics' names, dtypes, shapes and values (finite,
    non-negative where they are counts, consistent with each other). The
    estimator predicts as the model the state was read from, and can go on
    with ``partial_fit``.

    Parameters
    ----------
    state : ModelState

    Returns
    -------
    model : fastnb estimator
        Fitted, holding copies of the state's arrays.

    Raises
    ------
    ValueError
        If the state is not one a fastnb estimator could have.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import MultinomialNB, from_state, get_state
    >>> X, y = np.array([[2, 1], [0, 3]]), ["a", "b"]
    >>> copy = from_state(get_state(MultinomialNB().fit(X, y)))
    >>> copy.predict([[3, 0]])
    array(['a'], dtype='<U1')
    """
    if not isinstance(state, ModelState):
        raise TypeError(f"from_state takes a ModelState; got {type(state).__name__}.")
    model = new_estimator(state.estimator, state.params)
    adopt_state(model, state)
    return model


def adopt_state(model, state):
    """Make ``model`` (an estimator of the state's class, with its parameters)
    the fitted model of ``state``, after checking the state as ``from_state``
    does (BaseNB._adopt); the model is left as it was if the state is refused."""
    model._adopt(
        state.classes, state.n_features_in, state.feature_names_in, state.statistics
    )


def combine_states(first: ModelState, second: ModelState) -> ModelState:
    """The state of one model fitted on the data of both states' models.

    Both must be of the same estimator with the same parameters, features
    and feature names. Their classes are united (sorted, as one ``fit``
    orders them), a class one of them has not seen counting as seen with
    zero weight; counts and category tables are added, moments merged by
    the pairwise formula, categories united.

    Parameters
    ----------
    first, second : ModelState

    Returns
    -------
    state : ModelState
    """
    for state in (first, second):
        if not isinstance(state, ModelState):
            raise TypeError(
                f"combine_states takes two ModelStates; got {type(state).__name__}."
            )
    if first.estimator != second.estimator:
        raise ValueError(
            f"Cannot combine a {first.estimator} with a {second.estimator}."
        )
    if not same_value(first.params, second.params):
        raise ValueError(
            f"Cannot combine {first.estimator} models with different parameters: "
            f"{first.params} and {second.params}."
        )
    if first.n_features_in != second.n_features_in:
        raise ValueError(
            f"Cannot combine models of {first.n_features_in} and "
            f"{second.n_features_in} features."
        )
    if not same_value(first.feature_names_in, second.feature_names_in):
        raise ValueError("Cannot combine models fitted on different feature names.")
    model = new_estimator(first.estimator, first.params)
    first_classes, second_classes = (
        check_classes(first.classes),
        check_classes(second.classes),
    )
    for state, classes in ((first, first_classes), (second, second_classes)):
        model._check_statistics(state.statistics, len(classes), state.n_features_in)
    classes = np.union1d(first_classes, second_classes)
    statistics = model._combine_statistics(
        expand_classes(model, first.statistics, first_classes, classes),
        expand_classes(model, second.statistics, second_classes, classes),
    )
    return ModelState(
        estimator=first.estimator,
        params=copy.deepcopy(first.params),
        classes=classes,
        n_features_in=first.n_features_in,
        feature_names_in=first.feature_names_in,
        statistics=statistics,
    )


def merge(models: Iterable[NB]) -> NB:
    """Merge fitted models into the model fitted on the union of their data.

    Naive Bayes is fitted by summing sufficient statistics, so models fitted
    on separate parts of a data set (per shard, per day, per worker) add up
    to the model of the whole: counts and category tables are added exactly,
    Gaussian moments merged by the pairwise formula. The classes are united
    and sorted, and each feature's raw categories sorted, as one ``fit``
    orders them. The inputs are not changed.

    Parameters
    ----------
    models : iterable of fastnb estimators
        Fitted estimators of one class with the same parameters, the same
        number of features and the same feature names (or none).

    Returns
    -------
    model : fastnb estimator
        A new fitted estimator of the first model's class.

    Raises
    ------
    ValueError
        If the models are of different classes or parameters, have different
        numbers or names of features, or there are none.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import MultinomialNB, merge
    >>> X = np.array([[2, 1], [0, 3], [3, 0], [1, 4]])
    >>> y = np.array(["spam", "ham", "spam", "ham"])
    >>> monday = MultinomialNB().fit(X[:2], y[:2])
    >>> tuesday = MultinomialNB().fit(X[2:], y[2:])
    >>> merge([monday, tuesday]).feature_count_
    array([[1., 7.],
           [5., 1.]])
    >>> MultinomialNB().fit(X, y).feature_count_
    array([[1., 7.],
           [5., 1.]])
    """
    models = list(models)
    if not models:
        raise ValueError("merge needs at least one fitted model; got none.")
    states = [get_state(model) for model in models]
    state = states[0]
    for other in states[1:]:
        state = combine_states(state, other)
    merged = clone(models[0])
    adopt_state(merged, in_fit_order(merged, state))
    return merged


def combined_in_order(states):
    """The states combined in order, those that are None (a block or batch
    of no rows) left out; None if every one is."""
    result = None
    for state in states:
        if state is not None:
            result = state if result is None else combine_states(result, state)
    return result


def in_fit_order(model, state):
    """``state``, combined from parts, with its statistics laid out as one
    fit of ``model``'s class lays them out (BaseNB._in_fit_order)."""
    return dataclasses.replace(state, statistics=model._in_fit_order(state.statistics))


def batch_state(
    model, X, y=None, sample_weight=None, *, class_proba=None, classes=None
):
    """The state of one batch of data, for fitting in parts (fastnb.dask).

    For an unfitted ``model``, the state of its parameters fitted on X, y
    alone: the classes are y's (with soft labels, ``class_proba``, those of
    its columns: ``classes``, by default 0 .. n - 1, as ``fit`` takes them).
    For a fitted one, X, y (or class_proba) and the weights are
    checked against it as ``partial_fit`` checks them (features, their
    names, classes) and the state holds only the batch's statistics, over
    the model's classes (CategoricalNB: its categories first, with their
    codes). Weights may be all zero; the batch's tables are not built, so
    parameters that depend on all classes (priors) are checked once the
    batches are combined.
    """
    fitted = hasattr(model, "classes_")
    if fitted:
        model._check_fitted_state()
    else:
        model = clone(model)
    model._validate_params()
    if fitted:
        classes = model.classes_
    elif classes is not None:
        classes, class_proba = sorted_classes(classes, class_proba)
    batch, y, sample_weight, classes = model._checked_batch(
        X,
        y,
        sample_weight,
        classes,
        reset=not fitted,
        allow_all_zero=True,
        class_proba=class_proba,
    )
    return state_of(
        model,
        classes,
        model._fit_statistics(batch, y, sample_weight, len(classes)),
    )


def new_estimator(name, params):
    """An unfitted estimator of the named class with the given parameters."""
    if name not in ESTIMATORS:
        raise ValueError(
            f"Unknown estimator {name!r}; a state names one of {list(ESTIMATOR_NAMES)}."
        )
    if not isinstance(params, dict):
        raise ValueError(f"params must be a dict; got {type(params).__name__}.")
    try:
        return ESTIMATORS[name](**params)
    except TypeError as exc:
        raise ValueError(f"params are not {name}'s parameters: {exc}") from exc


def expand_classes(model, statistics, classes, all_classes):
    """Statistics over ``classes`` laid out over ``all_classes`` (a superset).

    Each statistic with a class axis gets zeros (no weight seen) for the
    classes it lacks; the others are shared as they are.
    """
    if np.array_equal(classes, all_classes):
        return statistics
    positions = np.searchsorted(all_classes, classes)
    expanded = dict(statistics)
    for key, axis in model._class_axes_of(statistics).items():
        value = statistics[key]
        shape = list(value.shape)
        shape[axis] = len(all_classes)
        check_table_bytes(
            type(model).__name__,
            f"statistic {key!r} over {len(all_classes)} classes, of shape "
            f"{tuple(shape)},",
            math.prod(float(n) for n in shape),
            value.dtype.itemsize,
        )
        wide = np.zeros(shape, dtype=value.dtype)
        index = [slice(None)] * value.ndim
        index[axis] = positions
        wide[tuple(index)] = value
        expanded[key] = wide
    return expanded


def same_value(a, b):
    """Whether two parameter values (nested dicts, lists, arrays) are equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(
            same_value(x, y) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and bool(np.all(a == b))
        )
    return bool(a == b)
