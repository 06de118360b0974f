"""Mixed Naive Bayes: one model over columns of different kinds.

Each family of columns (gaussian, categorical, bernoulli, multinomial,
poisson) is fitted by the fastnb estimator of that family, all over the same
classes. Naive Bayes treats the features as independent given the class, so
the families' log-likelihoods add up; the class prior is the mixed model's
own, and each sub-estimator's prior is taken out of its joint log-likelihood.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from numbers import Integral
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import (
    check_consistent_length,
    column_or_1d,
    validate_data,
)

from fastnb._base import (
    BaseNB,
    finish_scores,
    fitted_statistic,
    fitted_table,
    log_class_prior,
)
from fastnb._categorical import CategoricalNB
from fastnb._codes import CategoryLimitError
from fastnb._discrete import BernoulliNB, MultinomialNB, PoissonNB
from fastnb._explain import join_values, place_columns
from fastnb._frames import (
    CATEGORICAL_DTYPES,
    FrameColumns,
    frame_dtypes,
    missing_columns,
    read_frame,
)
from fastnb._gaussian import GaussianNB
from fastnb._kde import KernelDensityNB
from fastnb._labels import class_weights
from fastnb._simd import kernels as _kernels
from fastnb._statistics import CLASS_COUNT, Statistic, check_statistic
from fastnb._validation import (
    MISSING_CONSTRAINT,
    check_class_prior,
    ignores_missing,
    missing_values_error,
    summed_duplicates,
    validate_input,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fastnb._typing import Missing

FAMILIES = {
    "gaussian": GaussianNB,
    "categorical": CategoricalNB,
    "bernoulli": BernoulliNB,
    "multinomial": MultinomialNB,
    "poisson": PoissonNB,
    "kde": KernelDensityNB,
}

REMAINING = "remaining"


# An integer column is inferred categorical where it looks like category
# codes: non-negative, at most this many distinct values, and at most one
# distinct value for every ROWS_PER_CODE rows (see MixedNB).
MOST_INFERRED_CODES = 50
ROWS_PER_CODE = 10


def infer_families(X, feature_names):
    """Families of a frame's columns (fastnb._frames.FrameColumns) from their
    dtypes (see MixedNB).

    Float columns are gaussian; boolean, string, categorical and object
    columns are categorical; integer columns are categorical where they
    look like codes (``looks_like_codes``), else gaussian. Other dtypes
    raise, naming the column and its dtype.
    """
    families = {"gaussian": [], "categorical": []}
    dtypes, dtype_names = frame_dtypes(X.frame)
    for position, dtype in enumerate(dtypes):
        if dtype.is_integer():
            codes = looks_like_codes(X.values[:, position])
            families["categorical" if codes else "gaussian"].append(position)
        elif dtype.is_numeric():
            families["gaussian"].append(position)
        elif isinstance(dtype, CATEGORICAL_DTYPES):
            families["categorical"].append(position)
        else:
            name = position if feature_names is None else feature_names[position]
            raise ValueError(
                f"families=None cannot infer the family of column {name!r} "
                f"(dtype {dtype_names[position]}); pass families explicitly."
            )
    return {
        family: np.array(columns, dtype=np.intp)
        for family, columns in families.items()
        if columns
    }


def looks_like_codes(column):
    """Whether an integer column (NumPy, NaN where missing) looks like
    category codes: no negative value, at most MOST_INFERRED_CODES distinct
    values and at most one for every ROWS_PER_CODE rows (missing values
    left out of the values, not of the rows)."""
    most = min(MOST_INFERRED_CODES, len(column) // ROWS_PER_CODE)
    present = np.asarray(column, dtype=np.float64)
    present = present[~np.isnan(present)]
    return np.unique(present).size <= most and not (present < 0).any()


def column_position(column, n_features, feature_names, family):
    """The position of one column given by position or by name."""
    if isinstance(column, (bool, np.bool_)):
        raise ValueError(
            f"families[{family!r}] holds the boolean {column!r}; list columns by "
            "position or by name."
        )
    if isinstance(column, Integral):
        if not 0 <= column < n_features:
            raise ValueError(
                f"families[{family!r}] lists column {column}, but X has "
                f"{n_features} columns (positions 0 to {n_features - 1})."
            )
        return int(column)
    if isinstance(column, str):
        if feature_names is None:
            raise ValueError(
                f"families[{family!r}] lists column {column!r} by name, but X has "
                "no string column names; use positions, or fit on a DataFrame."
            )
        where = np.flatnonzero(feature_names == column)
        if len(where) > 1:
            raise ValueError(
                f"families[{family!r}] lists column {column!r}, but X has "
                f"{len(where)} columns of that name; list them by position."
            )
        if len(where) == 0:
            raise ValueError(
                f"families[{family!r}] lists column {column!r}, which is not a "
                f"column of X (columns: {feature_names.tolist()})."
            )
        return int(where[0])
    raise ValueError(
        f"families[{family!r}] holds {column!r}: columns are integer positions "
        "or string names."
    )


def resolve_families(families, X, n_features, feature_names):
    """The families as {family: positions}, every column in exactly one family.

    Families left empty (an empty list, or "remaining" when nothing remains)
    are dropped.
    """
    if families is None:
        if sp.issparse(X):
            raise ValueError(
                "MixedNB with families=None infers the families from a data "
                "frame's column dtypes, and a sparse matrix has no column "
                "dtypes: pass families by position, for example "
                "families={'categorical': [0, 1], 'multinomial': 'remaining'}."
            )
        if not isinstance(X, FrameColumns):
            raise ValueError(
                "MixedNB with families=None infers the families from a data "
                "frame's column dtypes (pandas, polars, pyarrow, ...), but X is not "
                "a data frame: pass families, for example families={'gaussian': "
                "[0, 1], 'categorical': [2]}."
            )
        return infer_families(X, feature_names)
    if not families:
        raise ValueError("families is empty: give at least one family of columns.")
    unknown = [name for name in families if name not in FAMILIES]
    if unknown:
        raise ValueError(
            f"Unknown families {unknown}; the families are {list(FAMILIES)}."
        )
    remaining = [name for name, cols in families.items() if _is_remaining(cols)]
    if len(remaining) > 1:
        raise ValueError(
            f"Only one family may take the {REMAINING!r} columns; got {remaining}."
        )
    owner = np.full(n_features, -1, dtype=np.intp)
    names = list(families)
    resolved = {}
    for index, (family, columns) in enumerate(families.items()):
        if _is_remaining(columns):
            continue
        if isinstance(columns, str) or not np.iterable(columns):
            raise ValueError(
                f"families[{family!r}] must be a list of columns (positions or "
                f"names) or {REMAINING!r}; got {columns!r}."
            )
        positions = np.array(
            [column_position(c, n_features, feature_names, family) for c in columns],
            dtype=np.intp,
        )
        for position in positions:
            if owner[position] >= 0:
                if owner[position] == index:
                    where = "twice"
                else:
                    where = f"also in families[{names[owner[position]]!r}]"
                raise ValueError(
                    f"Column {_column_label(position, feature_names)} is listed "
                    f"in families[{family!r}] {where}: every column belongs to "
                    "exactly one family."
                )
            owner[position] = index
        resolved[family] = positions
    left_out = np.flatnonzero(owner < 0)
    if remaining:
        resolved[remaining[0]] = left_out
    elif len(left_out):
        labels = [_column_label(p, feature_names) for p in left_out]
        raise ValueError(
            f"Columns {labels} are in no family: every column belongs to exactly "
            f"one family (a family given as {REMAINING!r} takes every column not "
            "listed elsewhere)."
        )
    # Keep the order in which the families were given.
    return {
        family: resolved[family]
        for family in families
        if family in resolved and len(resolved[family])
    }


def _is_remaining(columns):
    return isinstance(columns, str) and columns == REMAINING


def _by_position(families):
    """Whether families (a dict) lists every column by position (or as
    "remaining"): as a sparse X, which has no column names, can give them."""
    for columns in families.values():
        if _is_remaining(columns):
            continue
        if isinstance(columns, str) or not np.iterable(columns):
            return False
        for column in columns:
            if isinstance(column, bool | np.bool_) or not isinstance(column, Integral):
                return False
    return True


def _column_label(position, feature_names):
    if feature_names is None:
        return str(position)
    return f"{position} ({feature_names[position]!r})"


class MixedNB(BaseNB):
    """Naive Bayes over columns of different kinds: one model, one prior.

    Columns are grouped in families, each modelled by the fastnb estimator
    of that family, all over the same classes:

    - "gaussian": :class:`~fastnb.GaussianNB`, continuous values;
    - "categorical": :class:`~fastnb.CategoricalNB`, categories (codes or raw
      values such as strings);
    - "bernoulli": :class:`~fastnb.BernoulliNB`, binary (or binarized) values;
    - "multinomial": :class:`~fastnb.MultinomialNB`, counts over one
      vocabulary;
    - "poisson": :class:`~fastnb.PoissonNB`, counts, each its own Poisson;
    - "kde": :class:`~fastnb.KernelDensityNB`, continuous values of any
      shape (skewed, multimodal), a kernel density each.

    As the features are independent given the class, the joint
    log-likelihood of a row x is the model's log prior plus each family's
    log-likelihood of its columns::

        log P(c, x) = log P(c) + sum_f log P(x_f | c)
        log P(x_f | c) = jll_f(x_f, c) - log P_f(c)

    with ``jll_f`` the joint log-likelihood of family f's estimator and
    ``log P_f(c)`` the prior it adds, which MixedNB takes out again (the
    sub-estimators are given uniform priors; the class prior belongs to
    MixedNB alone). For PoissonNB the likelihood includes ``-sum_i log
    x_i!``, which is the same for every class.

    Parameters
    ----------
    families : dict or None, default=None
        Maps a family name ("gaussian", "categorical", "bernoulli",
        "multinomial", "poisson", "kde") to its columns: a list of integer
        positions, or of column names when X is a data frame (pandas,
        polars, pyarrow, ...) with string column names (integers are always
        positions). One family may
        be given as the string ``"remaining"``: every column not listed by
        another family (so ``{"gaussian": "remaining"}`` is all columns, for
        any number of them). Every column must belong to exactly one family;
        families left empty are dropped.

        None infers the families from a data frame's column dtypes, the
        same from any library's: float columns are gaussian; boolean,
        object, string and categorical columns (pandas' category, polars'
        Categorical and Enum, Arrow's dictionary) are categorical; an
        integer column is categorical where it looks like category codes
        (none negative, at most 50 distinct values, and at most one
        distinct value for every 10 rows), else gaussian, as R's
        naivebayes and Weka take integers for numbers. The rule reads the
        first batch fitted (``fit``, or the first ``partial_fit``); give
        ``families`` to decide otherwise. None requires a data frame, and
        another dtype (a date, a list, bytes) raises, naming its column.
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed class priors; overrides ``fit_prior``.
    gaussian_params, categorical_params, bernoulli_params, multinomial_params, \
poisson_params, kde_params : dict, default=None
        Constructor parameters of that family's estimator, for example
        ``{"var_smoothing": 1e-8}`` or ``{"alpha": 0.5}``. Prior parameters
        (``priors``, ``fit_prior``, ``class_prior``) are refused: set the
        prior on MixedNB.
    missing : {"error", "ignore"}, default="error"
        What a missing value (NaN; None or NaN among raw categories) is:
        refused with scikit-learn's message ("error"), or left out of its
        column's statistics and of its column's term in the score
        ("ignore"), for every family (``missing`` of each family's
        estimator; the family parameters cannot set it).

    Attributes
    ----------
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of samples seen per class.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior of each class.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    estimators_ : dict
        Family name -> the fitted fastnb estimator of its columns (in the
        order of ``families_``). Their classes are ``classes_`` and their
        priors uniform; they see the columns by position, without names.
    families_ : dict
        Family name -> ndarray of the positions of its columns: the resolved
        ``families``, with the families left empty dropped.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Feature names, when X had string column names.

    Notes
    -----
    X is an array (any dtype the families accept; an object array for mixed
    values), a data frame of any library narwhals reads (pandas, polars,
    pyarrow, ...), read once, each column by its dtype, so that
    categorical columns may hold raw strings and nulls are missing values,
    or a sparse matrix (CSR or CSC;
    ``families`` by position), whose families each get their columns as a
    sparse matrix: categorical columns then hold codes, 0 where nothing is
    stored. Missing values (NaN, and None in categorical columns) are
    refused, or with ``missing="ignore"`` left out of their column's
    statistics and terms, each family's estimator doing so.
    The outputs are float64 whatever the input dtypes. ComplementNB is not a
    family: its class scores are not log-likelihoods, so they cannot be added
    to the others'.

    ``families_`` is resolved on the first call to ``fit`` or
    ``partial_fit`` and kept by later ``partial_fit`` calls; the families'
    parameters are read on every call, as the estimators themselves do.
    MixedNB's statistics are its class counts and each family's statistics
    (see :func:`fastnb.get_state`), computed and combined by the family
    estimators' own steps; ``estimators_`` are rebuilt from them.

    Examples
    --------
    >>> import pandas as pd
    >>> from fastnb import MixedNB
    >>> X = pd.DataFrame({"height": [180.0, 176.0, 162.0, 158.0],
    ...                   "colour": ["red", "red", "blue", "red"]})
    >>> clf = MixedNB().fit(X, ["a", "a", "b", "b"])
    >>> {family: columns.tolist() for family, columns in clf.families_.items()}
    {'gaussian': [0], 'categorical': [1]}
    >>> clf.predict(pd.DataFrame({"height": [165.0], "colour": ["blue"]}))
    array(['b'], dtype='<U1')
    """

    _parameter_constraints: dict = {
        "families": [dict, None],
        "fit_prior": ["boolean"],
        "class_prior": ["array-like", None],
        **{f"{family}_params": [dict, None] for family in FAMILIES},
        "missing": MISSING_CONSTRAINT,
    }

    class_log_prior_ = fitted_table(
        "class_log_prior_", "ndarray of shape (n_classes,): log P(y)."
    )

    def __init__(
        self,
        *,
        families: dict[str, Any] | None = None,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
        gaussian_params: dict[str, Any] | None = None,
        categorical_params: dict[str, Any] | None = None,
        bernoulli_params: dict[str, Any] | None = None,
        multinomial_params: dict[str, Any] | None = None,
        poisson_params: dict[str, Any] | None = None,
        kde_params: dict[str, Any] | None = None,
        missing: Missing = "error",
    ) -> None:
        self.families = families
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.gaussian_params = gaussian_params
        self.categorical_params = categorical_params
        self.bernoulli_params = bernoulli_params
        self.multinomial_params = multinomial_params
        self.poisson_params = poisson_params
        self.kde_params = kde_params
        self.missing = missing

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if isinstance(self.families, dict):
            kinds = set(self.families)
        else:
            kinds = {"gaussian", "categorical"}
        # A sparse X needs families by position (it has no dtypes or names),
        # and no kde family (KernelDensityNB takes dense X only).
        tags.input_tags.sparse = (
            isinstance(self.families, dict)
            and _by_position(self.families)
            and "kde" not in kinds
        )
        tags.input_tags.string = "categorical" in kinds
        tags.input_tags.categorical = "categorical" in kinds
        tags.input_tags.positive_only = bool(kinds & {"multinomial", "poisson"})
        tags.classifier_tags.poor_score = bool(kinds - {"gaussian", "kde"})
        return tags

    class_count_ = fitted_statistic(
        "class_count", "ndarray of shape (n_classes,): weighted samples per class."
    )
    estimators_ = fitted_table(
        "estimators_", "dict: family name -> the fitted estimator of its columns."
    )

    @property
    def families_(self):
        """dict: family name -> ndarray of the positions of its columns."""
        statistics = self._fitted_statistics("families_")
        return {
            family: statistics[columns_name(family)]
            for family in families_of(statistics)
        }

    # -- input ----------------------------------------------------------------

    def _check_X_y(self, X, y, reset):
        """X (a frame read once, as fastnb._frames.FrameColumns, else a checked
        array or CSR/CSC matrix) and y as a 1-D array."""
        columns = read_frame(X, find_missing=not ignores_missing(self))
        if columns is None:
            # The families check their own values; an ignoring one lets NaN by.
            return validate_input(
                self,
                X,
                y,
                dtype=None,
                accept_sparse=("csr", "csc"),
                ensure_all_finite=not ignores_missing(self),
                reset=reset,
            )
        X = self._check_frame(X, columns, reset)
        if y is None:
            raise ValueError(
                "This MixedNB estimator requires y to be passed, but the target y "
                "is None."
            )
        y = column_or_1d(y, warn=True)
        check_consistent_length(X.values, y)
        return X, y

    def _check_frame(self, X, columns, reset):
        """A frame X, read once as ``columns`` (fastnb._frames.read_frame):
        its names and shape checked, its missing values refused unless
        missing="ignore"."""
        validate_data(self, X, skip_check_array=True, reset=reset)
        n_samples, n_features = columns.shape
        if n_samples == 0 or n_features == 0:
            raise ValueError(
                f"Found array with {n_samples} sample(s) and {n_features} "
                f"feature(s) (shape={columns.shape}) while a minimum of 1 of each "
                "is required by MixedNB."
            )
        if not ignores_missing(self):
            missing = missing_columns(columns)
            if missing:
                raise missing_values_error(missing, self)
        return columns

    @staticmethod
    def _columns(X, positions, family):
        """The columns of X at ``positions``, as ``family``'s estimator takes them.

        From a frame (FrameColumns): the categorical family gets its columns
        as they were read, which say which hold codes; another family their
        values, as floats where every one of them holds numbers. The
        families' estimators see no column names, which MixedNB itself
        checks. A sparse X gives a sparse matrix of its format, in canonical
        format (as the dense columns, a family reading its values in
        storage order meets them in row-major order).
        """
        every = len(positions) == X.shape[1] and np.array_equal(
            positions, np.arange(X.shape[1])
        )
        if isinstance(X, FrameColumns):
            columns = X if every else X.take(positions)
            if family == "categorical":
                return columns
            values = columns.filled()
            if values.dtype == object and columns.numbers.all():
                values = values.astype(np.float64)
            return values
        if sp.issparse(X):
            return summed_duplicates(X if every else X[:, positions])
        return X if every else X[:, positions]

    def _family_params(self, family, n_classes):
        """Constructor parameters of a family's estimator: the user's, uniform prior.

        With ``n_classes`` None (checking and counting a first batch, which
        the prior does not enter) the prior parameters are left at their
        defaults.
        """
        params = getattr(self, f"{family}_params")
        params = {} if params is None else dict(params)
        # The families' prior parameters: set by MixedNB (uniform), never by users.
        refused = [name for name in FAMILIES[family]._prior_params if name in params]
        if refused:
            raise ValueError(
                f"{family}_params sets {refused}: the class prior belongs to "
                "MixedNB (use its fit_prior and class_prior)."
            )
        if "missing" in params:
            raise ValueError(
                f"{family}_params sets 'missing': MixedNB's missing applies to "
                "every family."
            )
        params["missing"] = self.missing
        if n_classes is None:
            return params
        return params | FAMILIES[family]._uniform_prior(n_classes)

    def _new_estimator(self, family, n_classes, validate=True):
        """An unfitted estimator of the family, with the family's parameters
        (checked by scikit-learn's validation unless ``validate`` is False)."""
        params = self._family_params(family, n_classes)
        try:
            estimator = FAMILIES[family](**params)
        except TypeError as exc:
            raise ValueError(
                f"{family}_params is not a valid set of parameters for "
                f"{FAMILIES[family].__name__}: {exc}"
            ) from exc
        if validate:
            estimator._validate_params()
        return estimator

    def _family_estimator(self, family, classes, statistics):
        """The family's estimator fitted to its part of ``statistics``."""
        estimator = self._new_estimator(family, len(classes))
        columns = statistics[columns_name(family)]
        estimator.n_features_in_ = len(columns)
        with self._in_family(family, columns):
            estimator._set_state(classes, family_statistics(statistics, family))
        return estimator

    @contextlib.contextmanager
    def _in_family(self, family, positions):
        """Say which columns an error of a family's estimator is about.

        Its messages number the features within the family (Python 3.11+
        shows the note under the message). A column refused for the size
        of its table gets a message of its own, which names it and says how
        to declare its family.
        """
        names = getattr(self, "feature_names_in_", None)
        try:
            yield
        except CategoryLimitError as exc:
            position = positions[exc.feature]
            column = int(position) if names is None else str(names[position])
            raise ValueError(
                f"MixedNB: column {_column_label(position, names)} of X, in the "
                f"{family!r} family, {exc.found}. If the column holds numbers "
                "rather than category codes, declare its family, for example "
                f"families={{'gaussian': [{column!r}], 'categorical': "
                f"'remaining'}}; if it has that many categories, raise "
                "max_categories in categorical_params."
            ) from exc
        except Exception as exc:
            columns = ", ".join(_column_label(p, names) for p in positions)
            exc.add_note(
                f"Raised for MixedNB's {family!r} family, whose features "
                f"0, 1, ... are the columns {columns} of X."
            )
            raise

    # -- the state protocol: each family's hooks on its columns ---------------

    def _check_batch(self, X, y, reset):
        X, y = self._check_X_y(X, y, reset)
        if reset:
            families = resolve_families(
                self.families,
                X,
                self.n_features_in_,
                getattr(self, "feature_names_in_", None),
            )
            estimators = {f: self._new_estimator(f, None) for f in families}
        else:
            families = self.families_
            estimators = {
                family: self._family_estimator(family, self.classes_, self._statistics)
                for family in families
            }
        batches = {}
        for family, columns in families.items():
            with self._in_family(family, columns):
                batches[family], _ = estimators[family]._check_batch(
                    self._columns(X, columns, family), y, reset
                )
        return MixedBatch(families, estimators, batches), y

    def _largest_table(self, batch, n_classes):
        # The largest of the families' (a model has at least one family).
        tables = []
        for family, estimator in batch.estimators.items():
            what, n_values = estimator._largest_table(batch.batches[family], n_classes)
            tables.append((f"{what}, of its {family!r} family,", n_values))
        return max(tables, key=lambda table: table[1])

    def _batch_statistics(self, batch, y, sample_weight, n_classes):
        class_count = class_weights(y, sample_weight, n_classes)
        statistics = {CLASS_COUNT.name: class_count}
        for family, estimator in batch.estimators.items():
            columns = batch.families[family]
            statistics[columns_name(family)] = columns
            with self._in_family(family, columns):
                part = estimator._batch_statistics(
                    batch.batches[family], y, sample_weight, n_classes
                )
            # The same class weights, which a family may sum in another
            # order (GaussianNB's by chunks of rows): one value for all.
            part[CLASS_COUNT.name] = class_count
            statistics.update(with_prefix(family, part))
        return statistics

    def _combine_statistics(self, first, second):
        families = families_of(first)
        if families != families_of(second) or not all(
            np.array_equal(first[columns_name(f)], second[columns_name(f)])
            for f in families
        ):
            raise ValueError(
                "Cannot combine MixedNB statistics over different families of columns."
            )
        count = CLASS_COUNT.name
        statistics = {count: first[count] + second[count]}
        for family in families:
            statistics[columns_name(family)] = first[columns_name(family)]
            part = self._new_estimator(family, None)._combine_statistics(
                family_statistics(first, family), family_statistics(second, family)
            )
            statistics.update(with_prefix(family, part))
        return statistics

    def _declared_statistics(self, statistics=None):
        # Its class counts, and each family's columns and own statistics
        # under its prefix (a prefix of no family is not expected).
        declared = [CLASS_COUNT]
        for family in families_of(statistics or {}):
            if family in FAMILIES:
                own = self._new_estimator(family, None, validate=False)
                part = family_statistics(statistics, family)
                columns = Statistic(columns_name(family), kind="own", combine="first")
                declared.append(columns)
                declared += [
                    replace(statistic, name=f"{family}/{statistic.name}")
                    for statistic in own._declared_statistics(part)
                ]
        return tuple(declared)

    def _check_statistic_values(self, statistics, n_classes, n_features, values):
        check_statistic(statistics, CLASS_COUNT.name, (n_classes,), values=values)
        families = families_of(statistics)
        for family in families:
            columns = statistics[columns_name(family)]
            if (
                not isinstance(columns, np.ndarray)
                or columns.ndim != 1
                or columns.dtype.kind not in "iu"
                or len(columns) == 0
                or columns.min() < 0
                or columns.max() >= n_features
            ):
                raise ValueError(
                    f"Statistic '{family}/columns' must be a non-empty 1-D integer "
                    f"array of column positions below {n_features}."
                )
        # Counted before anything of n_features (which may be anything) is
        # allocated.
        n_columns = sum(len(statistics[columns_name(family)]) for family in families)
        if n_columns != n_features:
            raise ValueError(
                f"The families' columns must hold every column of X exactly once; "
                f"they hold {n_columns} columns of {n_features}."
            )
        owner = np.zeros(n_features, dtype=np.intp)
        for family in families:
            columns = statistics[columns_name(family)]
            np.add.at(owner, columns, 1)
            part = family_statistics(statistics, family)
            # The shapes alone, before every prediction, need no validation
            # of the parameters, which is most of the cost of an estimator.
            # (The names were checked with MixedNB's own.)
            estimator = self._new_estimator(family, n_classes, validate=values)
            estimator._check_statistic_values(part, n_classes, len(columns), values)
            count = CLASS_COUNT.name
            if not np.array_equal(part[count], statistics[count]):
                raise ValueError(
                    f"Statistic '{family}/class_count' differs from 'class_count'."
                )
        if not (owner == 1).all():
            raise ValueError(
                "The families' columns must hold every column of X exactly once."
            )

    def _in_fit_order(self, statistics):
        statistics = dict(statistics)
        for family in families_of(statistics):
            part = FAMILIES[family]()._in_fit_order(
                family_statistics(statistics, family)
            )
            statistics.update(with_prefix(family, part))
        return statistics

    def _table_params(self, statistics, n_classes):
        for family in families_of(statistics):
            estimator = self._new_estimator(family, n_classes)
            with self._in_family(family, statistics[columns_name(family)]):
                estimator._table_params(
                    family_statistics(statistics, family), n_classes
                )
        return {
            "fit_prior": self.fit_prior,
            "class_prior": check_class_prior(self.class_prior, n_classes),
        }

    def _tables(self, statistics, params):
        prior = log_class_prior(
            statistics[CLASS_COUNT.name], params["class_prior"], params["fit_prior"]
        )
        estimators = {}
        for family in families_of(statistics):
            estimator = self._family_estimator(family, self.classes_, statistics)
            with self._in_family(family, statistics[columns_name(family)]):
                estimator._final_tables()
            estimators[family] = estimator
        attributes = {"class_log_prior_": prior, "estimators_": estimators}
        return attributes, MixedScoring(prior, estimators)

    def _check_X(self, X, scoring):
        columns = read_frame(X, find_missing=not ignores_missing(self))
        if columns is not None:
            X = self._check_frame(X, columns, reset=False)
        else:
            X = validate_input(
                self,
                X,
                dtype=None,
                accept_sparse=("csr", "csc"),
                ensure_all_finite=not ignores_missing(self),
                reset=False,
            )
        columns = {}
        for family, estimator in scoring.estimators.items():
            positions = self._statistics[columns_name(family)]
            with self._in_family(family, positions):
                columns[family] = estimator._check_X(
                    self._columns(X, positions, family), estimator._final_tables()[1]
                )
        return FamilyColumns(columns, X.shape)

    def _score(self, X, scoring, output, out, labels):
        # The prior plus each family's joint log-likelihood less its own
        # (uniform) prior, finished: each family's kernel, with its threads,
        # scores its columns and raises its own errors.
        n_samples, n_classes = X.shape[0], len(scoring.log_prior)
        if output == _kernels.Output.JOINT_LOG_LIKELIHOOD:
            jll = out
        else:
            jll = np.empty((n_samples, n_classes), dtype=np.float64)
        jll[:] = scoring.log_prior
        part = np.empty_like(jll)
        no_labels = np.empty(0, dtype=np.intp)
        for family, estimator in scoring.estimators.items():
            # Each family's joint log-likelihood, less the (uniform) prior it adds.
            family_scoring = estimator._final_tables()[1]
            # (The scoring kernels refuse NaN and infinity, naming the column.)
            with self._in_family(family, self._statistics[columns_name(family)]):
                estimator._score(
                    X.columns[family],
                    family_scoring,
                    _kernels.Output.JOINT_LOG_LIKELIHOOD,
                    part,
                    no_labels,
                )
            part -= family_scoring.log_prior
            jll += part
        if output != _kernels.Output.JOINT_LOG_LIKELIHOOD:
            finish_scores(jll, output, out, labels)

    def _terms(self, X, scoring, selection):
        # Each family's terms on its columns; the intercept is the log prior
        # plus each family's all-zeros row less the (uniform) prior it adds.
        intercept = selection.of(scoring.log_prior)
        parts = []
        for family, estimator in scoring.estimators.items():
            family_scoring = estimator._final_tables()[1]
            positions = self._statistics[columns_name(family)]
            with self._in_family(family, positions):
                terms, zeros = estimator._terms(
                    X.columns[family], family_scoring, selection
                )
            intercept = intercept + (zeros - selection.of(family_scoring.log_prior))
            parts.append((positions, terms))
        return place_columns(parts, *X.shape), intercept

    def _zero_log_likelihood(self, scoring):
        zero = np.empty((self.n_features_in_, len(self.classes_)))
        for family, estimator in scoring.estimators.items():
            zero[self._statistics[columns_name(family)]] = (
                estimator._zero_log_likelihood(estimator._final_tables()[1])
            )
        return zero

    def _centred_features(self):
        centred = np.empty(self.n_features_in_, dtype=bool)
        for family, estimator in self._final_tables()[1].estimators.items():
            centred[self._statistics[columns_name(family)]] = (
                estimator._terms_against_class_mean
            )
        return centred

    def _informative_values(self):
        estimators = self._final_tables()[1].estimators
        statistics = self._statistics
        return join_values(
            [
                (statistics[columns_name(family)], estimator._informative_values())
                for family, estimator in estimators.items()
            ]
        )


class FamilyColumns(NamedTuple):
    """X checked for prediction: each family's checked columns, and X's shape."""

    columns: dict
    shape: tuple


class MixedBatch(NamedTuple):
    """A batch checked for fitting: each family's column positions, its
    estimator and its checked batch, by family."""

    families: dict
    estimators: dict
    batches: dict


class MixedScoring(NamedTuple):
    """What MixedNB scores with: its log prior, and each family's estimator
    (holding that family's statistics and tables), by family."""

    log_prior: np.ndarray
    estimators: dict


def columns_name(family):
    """The name of the statistic of a family's column positions."""
    return f"{family}/columns"


def families_of(statistics):
    """The families a MixedNB's statistics hold, in their order."""
    suffix = columns_name("")
    return [key[: -len(suffix)] for key in statistics if key.endswith(suffix)]


def with_prefix(family, mapping):
    """``mapping`` with each key as "family/key"."""
    return {f"{family}/{key}": value for key, value in mapping.items()}


def family_statistics(statistics, family):
    """A family's own statistics out of a MixedNB's, without the prefix."""
    prefix = f"{family}/"
    return {
        key[len(prefix) :]: value
        for key, value in statistics.items()
        if key.startswith(prefix) and key != columns_name(family)
    }
