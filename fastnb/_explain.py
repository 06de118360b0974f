"""Reading a model: per-prediction terms, informative features, costs.

What BaseNB's ``contributions``, ``most_informative_features`` and
``predict(X, cost=...)`` share, and the families' ``_terms``,
``_zero_log_likelihood`` and ``_informative_values`` hooks build on.

A family's ``_terms`` takes each value's log-likelihood less that of a 0 in
its place (the category of code 0 for CategoricalNB), so sparse X gives
sparse terms; ``_zero_log_likelihood`` gives each feature's log-likelihood
of a 0. From the two, ``contributions`` lays out the terms a reader wants:

- a pair of classes: each feature's exact log-likelihood ratio, whatever
  the family, beside the prior's log ratio;
- a class, or every class: count features (MultinomialNB, ComplementNB,
  BernoulliNB, PoissonNB) against a 0, which means "nothing counted";
  measurements and categories (GaussianNB, KernelDensityNB,
  CategoricalNB) against their mean over the classes, as no value of
  theirs means "nothing".
"""

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from fastnb._frames import is_pandas, pandas_frame, pandas_series
from fastnb._simd import kernels as _kernels
from fastnb._threads import data_size, effective_n_threads
from fastnb._validation import as_numpy, sparse_arrays


class Contributions(NamedTuple):
    """Each feature's additive term in the log-odds or joint log-likelihoods
    of some rows (see ``contributions`` for the baselines).

    For a pair (a, b), ``intercept + terms.sum(axis=1)`` is the log-odds
    ``log P(a | x) - log P(b | x)``. For a class or every class, it is
    ``predict_joint_log_proba(X)`` (its columns for the classes asked) less
    a number of each row that is the same in every class, so that its
    softmax over the classes is ``predict_proba(X)``.

    Attributes
    ----------
    terms : ndarray, sparse matrix or pandas.DataFrame
        (n_samples, n_features, n_classes) for every class; (n_samples,
        n_features) for one class or a pair, CSR for sparse X where a 0's
        term is 0. For X a DataFrame, a DataFrame of X's index whose
        columns are X's (for every class, a column per class and feature:
        ``terms[c]`` is class c's frame).
    intercept : ndarray of shape (n_classes,), pandas.Series or float
        What the joint log-likelihood adds to the terms, the log prior
        among it: an array for every class (for X a DataFrame, a Series
        by class), a float for one class or a pair.
    """

    terms: object
    intercept: object


class Selection(NamedTuple):
    """Which class columns a term is taken over: ``table[..., plus]``, less
    ``table[..., minus]`` for a pair (``minus`` None otherwise)."""

    plus: np.ndarray
    minus: object

    def of(self, table):
        """The selected columns of ``table`` (classes on its last axis), float64.

        Taken by indexing and one subtraction, never by a product with a
        0/1 matrix, which would turn a -inf into NaN.
        """
        table = np.asarray(table, dtype=np.float64)
        selected = table[..., self.plus]
        if self.minus is not None:
            with np.errstate(invalid="ignore"):
                selected = selected - table[..., self.minus]
        return np.ascontiguousarray(selected)

    @property
    def pair(self):
        """Whether the terms are a pair of classes' log-odds."""
        return self.minus is not None


def class_selection(classes, asked):
    """``(Selection, mode)`` for the ``classes`` argument of contributions.

    ``asked`` is None (every class: mode "all"), one label of ``classes``
    ("class"), or a tuple or list of two labels (a, b): the log-odds of a
    against b ("pair").
    """
    n_classes = len(classes)
    if asked is None:
        return Selection(np.arange(n_classes), None), "all"
    if isinstance(asked, tuple | list):
        if len(asked) != 2:
            raise ValueError(
                "classes must be None, one class, or a pair (a, b) of classes for "
                f"the log-odds of a against b; got {len(asked)} classes."
            )
        a, b = (class_position(classes, label) for label in asked)
        return Selection(np.array([a]), np.array([b])), "pair"
    return Selection(np.array([class_position(classes, asked)]), None), "class"


def class_position(classes, label):
    """The index of ``label`` in ``classes``; ValueError if it is not one.

    By Python equality, so that neither is converted to the other's type
    (1 is not the class "1").
    """
    try:
        return classes.tolist().index(label)
    except ValueError:
        raise ValueError(
            f"{label!r} is not one of the classes {classes.tolist()}."
        ) from None


def terms_output(X, n_out):
    """The kernels' output for checked X: (nnz, n_out) for CSR, else
    (n_samples, n_features, n_out)."""
    if sp.issparse(X):
        return np.empty((X.nnz, n_out))
    return np.empty((*X.shape, n_out))


def as_term_matrices(X, out):
    """The kernels' output as the hooks return it: an ndarray (n_samples,
    n_features, n_out) for dense X; for CSR X, a list of n_out CSR matrices
    with X's structure."""
    if not sp.issparse(X):
        return out
    return [
        sp.csr_matrix((out[:, m], X.indices, X.indptr), shape=X.shape)
        for m in range(out.shape[1])
    ]


def linear_terms(
    X, coef, square_coef, threshold, binarize, non_negative, missing_term=None
):
    """Terms of the linear families: run linear_terms_csr / _dense.

    ``missing_term`` (n_features, n_out), for a model with missing="ignore",
    is the term of a NaN in each feature (minus the term of a 0: a missing
    value's term is left out of the score); None refuses NaN. Returns
    ``(terms, bad)`` as as_term_matrices lays them out, and the first row
    with a refused value (or -1).
    """
    out = terms_output(X, coef.shape[1])
    quadratic = square_coef is not None
    if square_coef is None:
        square_coef = np.empty((0, coef.shape[1]))
    if missing_term is None:
        missing_term = np.empty((0, coef.shape[1]))
    elif missing_term.shape != coef.shape:
        raise ValueError(
            f"missing_term has shape {missing_term.shape}; expected {coef.shape}."
        )
    n_threads = effective_n_threads(data_size(X) * coef.shape[1])
    arguments = (
        coef,
        square_coef,
        np.ascontiguousarray(missing_term, dtype=np.float64),
        threshold,
        binarize,
        quadratic,
        non_negative,
        out,
        n_threads,
    )
    if sp.issparse(X):
        bad = _kernels.linear_terms_csr(*sparse_arrays(X), *arguments)
    else:
        bad = _kernels.linear_terms_dense(X, *arguments)
    return as_term_matrices(X, out), bad


def dense_terms(terms):
    """A hook's terms as one ndarray (n_samples, n_features, n_out)."""
    if isinstance(terms, list):
        return np.stack([matrix.toarray() for matrix in terms], axis=2)
    return terms


def final_terms(terms, mode):
    """A hook's terms as contributions returns them, for ``mode``."""
    if mode == "all":
        return dense_terms(terms)
    return terms[0] if isinstance(terms, list) else terms[:, :, 0]


def read_terms(model, X, scoring, selection, mode):
    """``(terms, intercept)`` of checked X as ``contributions`` returns them,
    from the family's terms against a 0 (``_terms``) and its features'
    log-likelihoods of a 0 (``_zero_log_likelihood``)."""
    if mode == "pair":
        terms, intercept = model._terms(X, scoring, selection)
        # log p(x_j | a) - log p(x_j | b): the term against a 0, plus the
        # ratio of a 0. The intercept keeps what is left, the prior's ratio.
        shift = selection.of(model._zero_log_likelihood(scoring))[:, 0]
        if np.any(shift):
            terms = dense_terms(terms) + shift[:, None]
        return final_terms(terms, mode), float(intercept[0] - shift.sum())
    centred = model._centred_features()
    if not centred.any():
        terms, intercept = model._terms(X, scoring, selection)
    else:
        # Terms against the mean over the classes need every class's.
        n_classes = len(model.classes_)
        every = Selection(np.arange(n_classes), None)
        terms, intercept = model._terms(X, scoring, every)
        terms = dense_terms(terms)
        zero = np.asarray(model._zero_log_likelihood(scoring), dtype=np.float64)
        log_likelihood = terms[:, centred, :] + zero[centred]
        terms[:, centred, :] = log_likelihood - log_likelihood.mean(
            axis=2, keepdims=True
        )
        intercept = intercept - zero[centred].sum(axis=0)
        terms, intercept = terms[:, :, selection.plus], intercept[selection.plus]
    terms = final_terms(terms, mode)
    return terms, (intercept if mode == "all" else float(intercept[0]))


def frame_terms(contributions, X, classes, mode):
    """``contributions`` of the pandas DataFrame X labelled as X is: the
    terms a DataFrame of X's index and columns (every class: columns by
    class, then feature), the intercept of every class a Series by class."""
    terms, intercept = contributions
    if mode == "all":
        n_samples, n_features, n_classes = terms.shape
        by_class = terms.transpose(0, 2, 1).reshape(n_samples, -1)
        return Contributions(
            pandas_frame(
                by_class,
                index=X.index,
                column_levels={"class": classes, "feature": X.columns},
            ),
            pandas_series(intercept, classes, "class"),
        )
    return Contributions(
        pandas_frame(terms, index=X.index, columns=X.columns), intercept
    )


def place_columns(parts, n_samples, n_features):
    """Terms of groups of columns (``(positions, terms)`` pairs, the terms as
    a hook returns them) as one set over all n_features columns."""
    if all(isinstance(terms, list) for _, terms in parts):
        n_out = len(parts[0][1])
        order = np.concatenate([np.asarray(positions) for positions, _ in parts])
        placed = []
        for m in range(n_out):
            stacked = sp.csr_matrix(sp.hstack([terms[m] for _, terms in parts]))
            matrix = sp.csr_matrix(
                (stacked.data, order[stacked.indices], stacked.indptr),
                shape=(n_samples, n_features),
            )
            matrix.sort_indices()
            placed.append(matrix)
        return placed
    n_out = next(
        len(terms) if isinstance(terms, list) else terms.shape[2] for _, terms in parts
    )
    out = np.zeros((n_samples, n_features, n_out))
    for positions, terms in parts:
        out[:, positions, :] = final_terms(terms, "all")
    return out


def check_cost(cost, classes):
    """The cost matrix C as the kernels read it: float64, C-contiguous, a copy.

    C[i, j] is the cost of predicting class j when the truth is class i
    (classes in the order of ``classes_``): it must be (n_classes,
    n_classes), finite and non-negative.
    """
    n_classes = len(classes)
    try:
        matrix = np.array(cost, dtype=np.float64, order="C", copy=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cost must be a matrix of numbers; got {cost!r}.") from exc
    if matrix.shape != (n_classes, n_classes):
        raise ValueError(
            f"cost must have shape (n_classes, n_classes) = ({n_classes}, "
            f"{n_classes}), C[i, j] the cost of predicting classes_[j] when the "
            f"truth is classes_[i]; got shape {matrix.shape}."
        )
    if not np.isfinite(matrix).all():
        raise ValueError("cost must be finite; it holds NaN or infinity.")
    if (matrix < 0).any():
        i, j = np.argwhere(matrix < 0)[0]
        raise ValueError(
            f"cost must be non-negative; C[{i}, {j}] = {matrix[i, j]} (predicting "
            f"{classes[j]!r} when the truth is {classes[i]!r})."
        )
    return matrix


# -- most informative features --------------------------------------------------


class InformativeValues(NamedTuple):
    """Candidate values of features and their log-likelihood in each class.

    ``feature`` (n_values,) column positions, ``value`` (n_values,) the
    values (object), ``log_likelihood`` (n_values, n_classes).
    """

    feature: np.ndarray
    value: np.ndarray
    log_likelihood: np.ndarray


def informative_values(feature, value, log_likelihood):
    """An InformativeValues of array-likes."""
    return InformativeValues(
        np.asarray(feature, dtype=np.intp),
        np.asarray(value, dtype=object),
        np.asarray(log_likelihood, dtype=np.float64),
    )


def join_values(parts):
    """One InformativeValues of several (``(positions, values)`` pairs, the
    values' features numbered within their columns ``positions``)."""
    return informative_values(
        np.concatenate(
            [np.asarray(positions)[values.feature] for positions, values in parts]
        ),
        np.concatenate([values.value for _, values in parts]),
        np.concatenate([values.log_likelihood for _, values in parts]),
    )


# Continuous features (GaussianNB, KernelDensityNB) are ranked as
# CategoricalNB would rank them cut into BINS bins of equal probability under
# the fitted model, with Laplace smoothing on the classes' weights: so their
# ratios are on the scale of the categorical ones, and a ratio read far in
# two densities' tails, where no data are, cannot rank first.
BINS = 10
# The points each feature's class densities are evaluated at, evenly spaced.
GRID_POINTS = 2049


def binned_values(log_density, low, high, class_count, n_bins=BINS):
    """Candidate values of continuous features: BINS intervals a feature.

    ``log_density(j, grid)`` gives feature j's class log-densities at the
    points ``grid`` (n_points, n_classes); ``low`` and ``high`` (n_features,)
    bound where they are read (past them, each class's mass is left out).
    The intervals hold equal shares of the classes' mixture (weighted by
    ``class_count``), the outer two reaching to infinity; an interval's
    log-likelihood in class c is ``log((n_c P_c + 1) / (n_c + n_bins))``,
    with P_c the class's probability of it and n_c ``class_count[c]``.
    The values are ``(start, stop)`` pairs.
    """
    count = np.asarray(class_count, dtype=np.float64)
    share = count / count.sum() if count.sum() > 0 else np.full(len(count), 1.0)
    share = share / share.sum()
    features, values, log_likelihoods = [], [], []
    for j in range(len(low)):
        grid = np.linspace(low[j], high[j], GRID_POINTS)
        log_f = np.asarray(log_density(j, grid), dtype=np.float64)
        # Each class's probability of each point's cell (equal widths).
        with np.errstate(invalid="ignore"):
            mass = np.exp(log_f - log_f.max(axis=0))
        mass = np.nan_to_num(mass / mass.sum(axis=0))
        cdf = np.cumsum(mass @ share)
        cuts = np.unique(np.searchsorted(cdf, np.arange(1, n_bins) / n_bins))
        cuts = cuts[(cuts > 0) & (cuts < GRID_POINTS)]
        probability = np.add.reduceat(mass, np.r_[0, cuts], axis=0)
        smoothed = (count * probability + 1.0) / (count + len(probability))
        # A cut falls between two points.
        edges = np.r_[-np.inf, (grid[cuts - 1] + grid[cuts]) / 2, np.inf]
        features.append(np.full(len(probability), j))
        values.extend(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))
        log_likelihoods.append(np.log(smoothed))
    values_array = np.empty(len(values), dtype=object)
    values_array[:] = values
    n_classes = len(count)
    return informative_values(
        np.concatenate(features) if features else np.empty(0, dtype=np.intp),
        values_array,
        np.concatenate(log_likelihoods)
        if log_likelihoods
        else np.empty((0, n_classes)),
    )


def feature_names_of(model, feature_names):
    """Names of the model's features: given (array-like, or an object with
    ``get_feature_names_out``, as a fitted vectorizer), ``feature_names_in_``,
    or x0, x1, ..."""
    n_features = model.n_features_in_
    if feature_names is None:
        names = getattr(model, "feature_names_in_", None)
        if names is None:
            return np.array([f"x{j}" for j in range(n_features)], dtype=object)
    elif hasattr(feature_names, "get_feature_names_out"):
        names = feature_names.get_feature_names_out()
    else:
        names = feature_names
    names = np.asarray(names, dtype=object)
    if names.shape != (n_features,):
        raise ValueError(
            f"feature_names must name the model's {n_features} features; got "
            f"{names.shape[0] if names.ndim == 1 else names.shape} names."
        )
    return names


class InformativeFeature(NamedTuple):
    """One row of most_informative_features without pandas."""

    feature: object
    value: object
    most_likely: object
    least_likely: object
    ratio: float
    log_ratio: float


COLUMNS = InformativeFeature._fields


def rank_features(values, classes, names, n):
    """The n features whose values separate the classes most: for each
    feature its value of greatest log-likelihood ratio between its most and
    its least likely class, features in decreasing order of that ratio
    (ties: in feature order). A DataFrame if pandas is installed, else a
    list of InformativeFeature."""
    ll = values.log_likelihood
    with np.errstate(invalid="ignore"):
        log_ratio = ll.max(axis=1) - ll.min(axis=1)
    # A value impossible in every class (all -inf) separates nothing.
    log_ratio = np.where(np.isnan(log_ratio), -np.inf, log_ratio)
    # Each feature's best value: sort by feature, then by decreasing ratio.
    order = np.lexsort((-log_ratio, values.feature))
    first = np.ones(len(order), dtype=bool)
    first[1:] = values.feature[order][1:] != values.feature[order][:-1]
    best = order[first]
    best = best[np.argsort(-log_ratio[best], kind="stable")]
    if n is not None:
        best = best[:n]
    rows = {
        "feature": names[values.feature[best]],
        "value": values.value[best],
        "most_likely": classes[np.argmax(ll[best], axis=1)],
        "least_likely": classes[np.argmin(ll[best], axis=1)],
        "ratio": np.exp(log_ratio[best]),
        "log_ratio": log_ratio[best],
    }
    try:
        return pandas_frame(rows, columns=COLUMNS)
    except ImportError:
        return [InformativeFeature(*row) for row in zip(*rows.values(), strict=True)]


class ReadingMixin:
    """What reading a fitted model gives (``contributions``,
    ``most_informative_features``), and the hooks a family fills in for
    them (``_terms``, ``_zero_log_likelihood``, ``_informative_values``);
    a base of fastnb's estimators (BaseNB)."""

    def contributions(self, X, classes=None):
        """Each feature's additive term in the log-odds or the joint
        log-likelihood of each sample.

        For a pair of classes ``(a, b)``, a feature's term is its exact
        log-likelihood ratio ``log p(x_j | a) - log p(x_j | b)``, whatever
        the family, and the intercept is what the joint log-likelihood adds
        beside the features, the prior's log ratio ``log P(a) - log P(b)``
        (ComplementNB, which leaves the prior out, 0). They add up to the
        log-odds::

            intercept + terms[i].sum() == log P(a | x_i) - log P(b | x_i)

        For a class, or every class, a term is taken against a baseline that
        means something for its family:

        - count features (MultinomialNB, ComplementNB, BernoulliNB,
          PoissonNB) against a 0, "nothing counted": the log-likelihood of
          the value less that of a 0, so a 0 contributes nothing and sparse
          X gives sparse terms. For MultinomialNB and ComplementNB that is
          ``x_j`` times the class's weight of feature j
          (``feature_log_prob_``); for PoissonNB ``x_j log rate_cj - log
          x_j!``; for BernoulliNB the binarized ``x_j`` times ``log p_cj -
          log(1 - p_cj)``. The intercept is the joint log-likelihood of the
          all-zeros row, the log prior included, and for every class c::

              intercept[c] + terms[i, :, c].sum() == predict_joint_log_proba(X)[i, c]

        - measurements and categories (GaussianNB, KernelDensityNB,
          CategoricalNB), where no value means "nothing", against their mean
          over the classes: ``log p(x_j | c)`` less its mean over the
          classes, so a term is positive where the value favours the class
          over the average class. The intercept is the log prior, and
          ``intercept[c] + terms[i, :, c].sum()`` is the joint
          log-likelihood less a number of the row that is the same in every
          class: its softmax over the classes is ``predict_proba``.

        MixedNB gives each column its family's term. A missing value
        (``missing="ignore"``) contributes nothing. Computed by compiled
        kernels over the stored values, rows in parallel.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The input samples, as ``predict`` takes them.
        classes : None, a class, or a pair (a, b) of classes, default=None
            None for every class (a dense array of n_samples x n_features
            x n_classes, whatever X is: ask for it on small X); one class
            of ``classes_`` for its terms; a tuple ``(a, b)`` for the terms
            of the log-odds of a against b, ``log P(a | x) - log P(b | x)``.

        Returns
        -------
        contributions : Contributions
            A named tuple ``(terms, intercept)``. For every class, ``terms``
            is an ndarray (n_samples, n_features, n_classes) and
            ``intercept`` (n_classes,); for a class or a pair, ``terms`` is
            (n_samples, n_features) and ``intercept`` a float. ``terms`` is
            CSR for sparse X where a 0's term is 0 in every column: the
            count families for a class, MultinomialNB and ComplementNB for a
            pair too. Always float64. For X a pandas DataFrame, the terms
            come labelled as X, as scikit-learn's ``set_output`` labels a
            transformer's: a DataFrame of X's index and columns (a sparse
            one where the terms are sparse); for every class, its columns
            are a MultiIndex of class then feature, so that ``terms[c]`` is
            class c's DataFrame, and ``intercept`` a Series by class.

        Raises
        ------
        ValueError
            Where a 0 has a log-likelihood of -inf in some class (an
            unsmoothed BernoulliNB feature on in every sample of a class,
            an unsmoothed CategoricalNB category 0 never seen in a class),
            since the terms are computed from it; and for X ``predict``
            refuses.

        Examples
        --------
        >>> import numpy as np
        >>> from fastnb import GaussianNB, MultinomialNB
        >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 0, 4]])
        >>> clf = MultinomialNB().fit(X, ["ham", "ham", "spam", "spam"])
        >>> terms, intercept = clf.contributions([[1, 0, 2]], classes=("spam", "ham"))
        >>> terms.round(3)
        array([[-1.361,  0.   ,  2.248]])
        >>> log_odds = np.diff(clf.predict_joint_log_proba([[1, 0, 2]])[0])
        >>> bool(np.isclose(intercept + terms.sum(), log_odds[0]))
        True

        A measurement's term for a pair is its log-likelihood ratio:

        >>> heights = np.array([[150.0], [160.0], [170.0], [180.0]])
        >>> model = GaussianNB().fit(heights, ["f", "f", "m", "m"])
        >>> model.contributions([[178.0]], classes=("m", "f")).terms.round(1)
        array([[10.4]])

        A DataFrame's terms are named by its columns:

        >>> import pandas as pd
        >>> frame = pd.DataFrame(X, columns=["free", "lunch", "call"])
        >>> clf = MultinomialNB().fit(frame, ["ham", "ham", "spam", "spam"])
        >>> clf.contributions(frame.iloc[[2]], classes=("spam", "ham")).terms.round(3)
           free  lunch   call
        2   0.0  0.286  3.372
        """
        self._check_fitted_state()
        selection, mode = class_selection(self.classes_, classes)
        # Arrays of other array-API libraries are read in NumPy; the terms
        # are NumPy's (or SciPy's), or for a DataFrame labelled as it is.
        scoring = self._final_tables()[1]
        checked = self._check_X(as_numpy(X), scoring)
        contributions = Contributions(
            *read_terms(self, checked, scoring, selection, mode)
        )
        if is_pandas(X):
            return frame_terms(contributions, X, self.classes_, mode)
        return contributions

    def most_informative_features(self, n=10, feature_names=None):
        """The features whose values separate the classes most, as NLTK ranks them.

        For each value a feature can take, the ratio of its likelihood in
        the class where it is most likely to that in the class where it is
        least likely; each feature is ranked by its value of greatest
        ratio. The values: for the count families, one occurrence (x = 1;
        ComplementNB: the ratio of its class weights); for BernoulliNB,
        present (1) and absent (0); for CategoricalNB, each category. For
        GaussianNB and KernelDensityNB, the ten intervals that hold equal
        shares of the fitted model's mass (the classes' densities mixed by
        their weights, the outer two reaching to infinity), an interval's
        likelihood in class c being ``(n_c P_c + 1) / (n_c + 10)``, its
        probability under the class smoothed as CategoricalNB (alpha=1)
        smooths a category of n_c samples: so every family's ratios are on
        one scale, and a ratio read far in two densities' tails, where no
        data are, cannot rank first. MixedNB ranks all its columns
        together.

        Parameters
        ----------
        n : int or None, default=10
            How many features to return; None for all.
        feature_names : array-like of str, or a fitted transformer, default=None
            The features' names: an array of n_features, or an object with
            ``get_feature_names_out`` (a fitted CountVectorizer); by default
            ``feature_names_in_``, else x0, x1, ...

        Returns
        -------
        table : pandas.DataFrame, or list of InformativeFeature
            A row a feature, most informative first, with columns
            ``feature``, ``value`` (a continuous feature's: an interval,
            ``(start, stop)``), ``most_likely`` and ``least_likely``
            (classes), ``ratio`` (of the likelihoods) and ``log_ratio``; a
            list of named tuples with those fields if pandas is not
            installed.

        Examples
        --------
        >>> import numpy as np
        >>> from fastnb import MultinomialNB
        >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 0, 4]])
        >>> clf = MultinomialNB().fit(X, ["ham", "ham", "spam", "spam"])
        >>> table = clf.most_informative_features(2, feature_names=["a", "b", "c"])
        >>> table.round(3)
          feature value most_likely least_likely  ratio  log_ratio
        0       a     1         ham         spam  3.900      1.361
        1       c     1        spam          ham  3.077      1.124
        """
        self._check_fitted_state()
        if n is not None and (
            isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0
        ):
            raise ValueError(f"n must be a non-negative integer or None; got {n!r}.")
        names = feature_names_of(self, feature_names)
        return rank_features(self._informative_values(), self.classes_, names, n)

    def _terms(self, X, scoring, selection):
        """``(terms, intercept)`` of checked X for ``contributions``.

        Each value's term in the joint log-likelihood less the term of a 0
        in its place, over the class columns of ``selection``
        (fastnb._explain.Selection): an ndarray (n_samples, n_features,
        n_out) for dense X, a list of n_out CSR matrices for sparse X; and
        the selected columns of the all-zeros row's joint log-likelihood
        (n_out,). Not abstract: a family without it has no contributions.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not give per-feature contributions."
        )

    # Whether contributions take this family's terms of a class against
    # their mean over the classes (measurements, categories), rather than
    # against a 0 (counts): fastnb._explain.read_terms.
    _terms_against_class_mean = False

    def _zero_log_likelihood(self, scoring):
        """Each feature's log-likelihood of a 0 in each class, the prior left
        out: (n_features, n_classes), from the ``scoring`` tables. With
        ``_terms``, it gives the exact log-likelihood of every value. Not
        abstract, as ``_terms``."""
        raise NotImplementedError(
            f"{type(self).__name__} does not give per-feature contributions."
        )

    def _centred_features(self):
        """Which features' terms of a class ``contributions`` takes against
        their mean over the classes (bool, n_features)."""
        return np.full(self.n_features_in_, self._terms_against_class_mean)

    def _informative_values(self):
        """fastnb._explain.InformativeValues: each feature's candidate values
        and their log-likelihood in each class, for
        ``most_informative_features``. Not abstract, as ``_terms``."""
        raise NotImplementedError(f"{type(self).__name__} does not rank its features.")
