"""Plots of a fitted model (extra ``fastnb[plot]``: matplotlib).

- :func:`plot_feature`: the class-conditional distribution of one feature,
  a curve a class for a Gaussian column, bars for the others.
- :func:`plot_contributions`: one prediction's largest terms, as bars.

Both draw on a matplotlib Axes (a new figure's if none is given) and
return it. matplotlib is imported when a plot is drawn, not with fastnb.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fastnb._discrete import BernoulliNB, ComplementNB, PoissonNB
from fastnb._explain import feature_names_of
from fastnb._frames import read_frame
from fastnb._gaussian import GaussianNB
from fastnb._kde import KernelDensityNB
from fastnb._mixed import MixedNB

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

    from fastnb._base import BaseNB
    from fastnb._typing import MatrixLike

__all__ = ["plot_contributions", "plot_feature"]


def pyplot():
    """matplotlib.pyplot, or ImportError saying how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "fastnb's plots need matplotlib: pip install 'fastnb[plot]'"
        ) from exc
    return plt


def new_axes(ax):
    """``ax``, or the Axes of a new figure."""
    if ax is None:
        _, ax = pyplot().subplots()
    return ax


def feature_position(model, feature):
    """The column position of ``feature``: a position, or a name of
    ``feature_names_in_``."""
    n_features = model.n_features_in_
    if isinstance(feature, str):
        names = getattr(model, "feature_names_in_", None)
        if names is None or feature not in list(names):
            raise ValueError(f"{feature!r} is not a feature name of the model.")
        return list(names).index(feature)
    if isinstance(feature, bool) or not isinstance(feature, int | np.integer):
        raise ValueError(f"feature must be a position or a name; got {feature!r}.")
    if not 0 <= feature < n_features:
        raise ValueError(
            f"feature {feature} is outside the model's {n_features} features."
        )
    return int(feature)


def family_of(model, position):
    """``(estimator, position)``: the estimator that models the column (a
    MixedNB's family) and the column's position in it."""
    if not isinstance(model, MixedNB):
        return model, position
    for family, estimator in model.estimators_.items():
        columns = list(model._statistics[f"{family}/columns"])
        if position in columns:
            return estimator, columns.index(position)
    raise AssertionError(f"column {position} is in no family")  # fit sees to it


def class_densities(estimator, j):
    """``(x, density)``: 400 values of feature j and each class's density
    at them, (400, n_classes). GaussianNB: the normal of ``theta_`` and
    ``var_``, over the classes' means plus and minus four standard
    deviations; KernelDensityNB: its kernel density as it scores it, over
    the range seen widened by four bandwidths on each side."""
    if isinstance(estimator, GaussianNB):
        theta = np.asarray(estimator.theta_, dtype=np.float64)[:, j]
        var = np.asarray(estimator.var_, dtype=np.float64)[:, j]
        spread = 4 * np.sqrt(var)
        x = np.linspace((theta - spread).min(), (theta + spread).max(), 400)
        density = np.exp(-0.5 * (x[:, None] - theta) ** 2 / var) / np.sqrt(
            2 * np.pi * var
        )
        return x, density
    low, high = estimator._density_extent()
    x = np.linspace(low[j], high[j], 400)
    return x, np.exp(estimator._feature_log_density(j, x))


def grouped_bars(ax, labels, heights, classes):
    """Bars of heights (n_labels, n_classes): a group a label, a bar a class
    (one BarContainer a class, labelled with it)."""
    n_labels, n_classes = heights.shape
    width = 0.8 / n_classes
    positions = np.arange(n_labels)
    for c in range(n_classes):
        ax.bar(
            positions + (c - (n_classes - 1) / 2) * width,
            heights[:, c],
            width,
            label=str(classes[c]),
        )
    ax.set_xticks(positions, [str(label) for label in labels])


def plot_feature(
    model: BaseNB,
    feature: int | str,
    *,
    ax: Axes | None = None,
    feature_names: ArrayLike | Any | None = None,
) -> Axes:
    """Plot the class-conditional distribution of one feature of a fitted model.

    - GaussianNB (and a MixedNB's Gaussian columns): the normal density of
      each class (``theta_``, ``var_``), a line a class over the classes'
      means plus and minus four standard deviations.
    - KernelDensityNB (and a MixedNB's kde columns): the kernel density of
      each class, as the model scores it, a line a class over the range of
      the data seen widened by four bandwidths on each side.
    - CategoricalNB: ``P(category | class)`` (``exp(feature_log_prob_)``),
      bars grouped by category.
    - PoissonNB: ``P(count | class)`` for the counts 0 to a little past the
      largest rate, bars grouped by count.
    - MultinomialNB: ``P(feature | class)``, the probability of each draw
      (token) being the feature; BernoulliNB: ``P(present | class)``;
      ComplementNB: the class weights (``feature_log_prob_``, not
      probabilities): a bar a class.

    Parameters
    ----------
    model : fitted fastnb estimator
    feature : int or str
        The feature's position, or its name in ``feature_names_in_``.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure's Axes if None.
    feature_names : array-like of str, or a fitted transformer, default=None
        Names for the title, as ``most_informative_features`` takes them.

    Returns
    -------
    ax : matplotlib Axes
        One line, or one BarContainer, per class, labelled with the class.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from fastnb import GaussianNB
    >>> from fastnb.plot import plot_feature
    >>> clf = GaussianNB().fit(np.array([[1.0], [1.2], [3.0], [3.4]]), [0, 0, 1, 1])
    >>> ax = plot_feature(clf, 0)
    >>> [line.get_label() for line in ax.get_lines()]
    ['0', '1']
    """
    position = feature_position(model, feature)
    name = feature_names_of(model, feature_names)[position]
    estimator, j = family_of(model, position)
    classes = model.classes_
    ax = new_axes(ax)
    if isinstance(estimator, GaussianNB | KernelDensityNB):
        x, density = class_densities(estimator, j)
        for c in range(len(classes)):
            ax.plot(x, density[:, c], label=str(classes[c]))
        ax.set_xlabel(str(name))
        ax.set_ylabel("density")
    elif hasattr(estimator, "categories_"):
        table = np.exp(estimator.feature_log_prob_[j]).T  # (categories, classes)
        grouped_bars(ax, estimator.categories_[j], table, classes)
        ax.set_xlabel(str(name))
        ax.set_ylabel("P(category | class)")
    elif isinstance(estimator, PoissonNB):
        rate = np.asarray(estimator.rate_)[:, j]
        top = int(np.ceil(rate.max() + 3 * np.sqrt(rate.max()))) + 1
        counts = np.arange(top + 1)
        from scipy.stats import poisson

        grouped_bars(ax, counts, poisson.pmf(counts[:, None], rate), classes)
        ax.set_xlabel(f"{name} (count)")
        ax.set_ylabel("P(count | class)")
    else:
        weights = np.asarray(estimator.feature_log_prob_)[:, j]
        if isinstance(estimator, ComplementNB):
            heights, label = weights, "class weight"
        elif isinstance(estimator, BernoulliNB):
            heights, label = np.exp(weights), "P(present | class)"
        else:
            heights, label = np.exp(weights), "P(feature | class)"
        grouped_bars(ax, [name], heights[None, :], classes)
        ax.set_ylabel(label)
    ax.set_title(f"{name}: distribution in each class")
    ax.legend(title="class")
    return ax


def plot_contributions(
    model: BaseNB,
    x: MatrixLike,
    n: int = 10,
    *,
    classes: tuple[Any, Any] | None = None,
    ax: Axes | None = None,
    feature_names: ArrayLike | Any | None = None,
) -> Axes:
    """Plot one prediction's largest terms: why the model prefers a class.

    The terms of the log-odds of ``a`` against ``b`` (see
    :meth:`~fastnb.MultinomialNB.contributions`: each feature's
    log-likelihood ratio ``log p(x_j | a) - log p(x_j | b)``), the ``n``
    largest in magnitude as horizontal bars, largest at the top; the title
    gives the intercept (the prior's log ratio) and the whole log-odds.

    Parameters
    ----------
    model : fitted fastnb estimator
    x : array-like or sparse matrix of shape (1, n_features) or (n_features,)
        One sample, as ``predict`` takes it (a one-row DataFrame for a
        model fitted on one).
    n : int, default=10
        How many terms to show (the features whose terms are largest in
        magnitude; fewer if fewer are nonzero).
    classes : pair (a, b) of classes, default=None
        The log-odds shown; by default the predicted class against the
        most probable other.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure's Axes if None.
    feature_names : array-like of str, or a fitted transformer, default=None
        Names of the features, as ``most_informative_features`` takes them.

    Returns
    -------
    ax : matplotlib Axes
        One BarContainer: a bar a term, its width the term.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from fastnb import MultinomialNB
    >>> from fastnb.plot import plot_contributions
    >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 0, 4]])
    >>> clf = MultinomialNB().fit(X, ["ham", "ham", "spam", "spam"])
    >>> ax = plot_contributions(clf, [1, 0, 2], feature_names=["a", "b", "c"])
    >>> [label.get_text() for label in ax.get_yticklabels()]
    ['a = 1', 'c = 2']
    """
    # A data frame, a sparse matrix or an array, told apart by hand below.
    sample: Any = x
    columns = None if sp.issparse(sample) else read_frame(sample)
    if columns is None and not sp.issparse(sample):
        sample = np.asarray(sample)
        if sample.ndim == 1:
            sample = sample.reshape(1, -1)
    if sample.shape[0] != 1:
        raise ValueError(f"x must be one sample; got {sample.shape[0]} rows.")
    if classes is None:
        log_proba = model.predict_joint_log_proba(sample)[0]
        order = np.argsort(-log_proba, kind="stable")
        classes = tuple(model.classes_[order[:2]])
    terms, intercept = model.contributions(sample, classes=tuple(classes))
    terms = terms.toarray()[0] if sp.issparse(terms) else np.asarray(terms)[0]
    names = feature_names_of(model, feature_names)
    if columns is not None:
        values = columns.filled()[0]
    else:
        values = sample.toarray()[0] if sp.issparse(sample) else sample[0]
    shown = np.flatnonzero(terms)
    shown = shown[np.argsort(-np.abs(terms[shown]), kind="stable")[:n]][::-1]
    ax = new_axes(ax)
    labels = [f"{names[j]} = {format_value(values[j])}" for j in shown]
    colours = ["tab:blue" if terms[j] > 0 else "tab:red" for j in shown]
    ax.barh(np.arange(len(shown)), terms[shown], color=colours)
    ax.set_yticks(np.arange(len(shown)), labels)
    ax.axvline(0.0, color="black", linewidth=0.8)
    a, b = classes
    ax.set_xlabel(f"term of log P({a} | x) / P({b} | x)")
    ax.set_title(
        f"log-odds {intercept + terms.sum():.3g} = intercept {intercept:.3g} "
        f"+ terms {terms.sum():.3g}"
    )
    return ax


def format_value(value):
    """A feature value for a label: whole numbers without a decimal point."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{value:.3g}"
    return str(value)
