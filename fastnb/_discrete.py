"""Count-based Naive Bayes: multinomial, complement and multivariate Bernoulli.

All three keep the same sufficient statistics (weighted class counts and
per-class feature sums), filled by one counting path, and score with one
kernel: ``intercept[c] + sum_j x_j * table[j, c]`` over a feature-major table.
They differ only in how the tables are built from the counts.
"""

from __future__ import annotations

import functools
from abc import abstractmethod
from numbers import Real
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln
from sklearn.utils._param_validation import Interval

from fastnb._base import (
    BaseNB,
    Deferred,
    finish_scores,
    fitted_statistic,
    fitted_table,
    log_class_prior,
    observed_weights,
)
from fastnb._explain import informative_values, linear_terms
from fastnb._labels import class_weights, label_arrays, rows_by_class
from fastnb._plans import (
    PIECES_COST,
    class_tasks,
    csr_pieces,
    dense_block_width,
    dense_row_chunks,
    row_entries,
    whole_class_tasks,
)
from fastnb._simd import kernels as _kernels
from fastnb._smoothing import MEstimate, check_smoothing, pseudo_counts
from fastnb._statistics import (
    CLASS_COUNT,
    COUNT_DTYPES,
    MISSING_COUNT,
    Statistic,
    check_rows_agree,
)
from fastnb._threads import (
    data_size,
    effective_n_threads,
    padded_class_count,
)
from fastnb._validation import (
    MISSING_CONSTRAINT,
    booleans_as_bytes,
    check_class_prior,
    check_values,
    ignores_missing,
    sparse_arrays,
    validate_input,
    without_duplicates,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike

    from fastnb._typing import Missing


def accumulate_counts(X, y, sample_weight, out, binarize, missing=None, nan=False):
    """Add the weighted per-class feature sums of X to ``out`` (n_classes, n_features).

    ``y``: class indices with ``sample_weight`` (None for unit weights), or
    SoftLabels. ``binarize`` is None to count values as they are, or a
    threshold above which a value counts as 1 (else 0). A NaN (which only a
    model with missing="ignore" lets through, ``nan``) counts as nothing;
    its weight is added to ``missing`` (n_classes, n_features) when that is
    given.
    """
    n_threads = effective_n_threads(data_size(X))
    threshold = 0.0 if binarize is None else float(binarize)
    if missing is None:
        missing = np.empty((0, 0))
    labels = label_arrays(y, sample_weight)
    counting = (threshold, binarize is not None, out, missing, nan)
    if sp.issparse(X) and X.format == "csr":
        count_csr(X, y, sample_weight, labels, counting, n_threads)
    elif sp.issparse(X):
        _kernels.discrete_count_csc(*sparse_arrays(X), *labels, *counting, n_threads)
    else:
        # Each chunk's counts, and then its missing weights if they are kept.
        tables = 1 + (missing.shape[0] > 0)
        chunk_rows, n_chunks = dense_row_chunks(X.shape[0], tables * out.size)
        # (Each task zeroes its part of a chunk's table.)
        chunk_counts = np.empty((n_chunks - 1, tables * out.shape[0], out.shape[1]))
        block_width = dense_block_width(X.shape[1], n_threads)
        _kernels.discrete_count_dense(
            X,
            *labels,
            *counting,
            chunk_counts,
            chunk_rows,
            block_width,
            n_threads,
        )


def count_csr_tasks(X, by_class, tasks, n_dealt, counting, n_threads, parts=None):
    """Run discrete_count_csr's tasks (the last n_dealt dealt out in turn)
    over CSR X (rows_by_class's label entries by_class, ``counting`` as
    accumulate_counts makes it), the parts into ``parts`` (part and
    part_missing; none if None); returns the kernel's answer."""
    if parts is None:
        parts = (np.empty((0, 0)), np.empty((0, 0)))
    entries_by_class, _, entry_row, label_weight = by_class
    return _kernels.discrete_count_csr(
        *sparse_arrays(X),
        entries_by_class,
        entry_row,
        label_weight,
        tasks,
        n_dealt,
        *counting,
        *parts,
        n_threads,
    )


def count_csr(X, y, sample_weight, labels, counting, n_threads):
    """accumulate_counts for CSR X (``labels`` and ``counting`` as it makes
    them), by class_tasks's tasks.

    Where they cut classes in parts, the parts' sums are added to the
    counts only where every sum is exact (add_parts: whole numbers, none
    negative, below 2**53), and so the same as a class's sums in row order;
    if they are not, the classes cut are counted again as a task each, or,
    where the classes are fewer than PIECES_COST a thread, every class is
    counted by discrete_count_csr_blocks (the classes not cut are then
    counted once the parts are known to add up).
    """
    threshold, binarize, out, missing, nan = counting
    by_class = rows_by_class(y, sample_weight, out.shape[0], data_size(X))
    tracked = missing.shape[0] > 0
    tasks, part_class, dealt = class_tasks(
        X.indptr,
        by_class,
        out.shape[1],
        1 + tracked,
        n_threads,
        cut=whole_weights(labels[2]),
    )
    classes = tasks[tasks[:, 3] < 0]
    few_classes = n_threads > PIECES_COST * out.shape[0]
    if len(part_class):
        parts = (
            np.empty((len(part_class), out.shape[1])),
            np.empty((len(part_class), out.shape[1]) if tracked else (0, 0)),
        )
        # Where the classes are counted by rows if the parts' sums are not
        # exact, the classes not cut are counted once they are.
        first = tasks[tasks[:, 3] >= 0] if few_classes else tasks
        if count_csr_tasks(
            X, by_class, first, len(first), counting, n_threads, parts
        ) and _kernels.add_parts(out, missing, *parts, part_class, n_threads):
            if few_classes:
                count_csr_tasks(X, by_class, classes, 0, counting, n_threads)
            return
        if not few_classes:
            cut = whole_class_tasks(by_class[1])[np.unique(part_class)]
            count_csr_tasks(X, by_class, cut, 0, counting, n_threads)
            return
    if few_classes:
        # Far fewer classes than threads, and parts whose sums are not
        # exact: a task a class would leave most threads idle, so the rows
        # are cut in pieces (the same sums, bit for bit, at PIECES_COST
        # times the work).
        layout = csr_pieces(row_entries(X.indptr, labels[0]), out.shape[1])
        _kernels.discrete_count_csr_blocks(
            *sparse_arrays(X),
            *labels,
            threshold,
            binarize,
            out.shape[1],
            out.reshape(-1),
            missing.reshape(-1),
            nan,
            *layout,
            n_threads,
        )
    else:
        count_csr_tasks(
            X, by_class, classes, len(classes) if dealt else 0, counting, n_threads
        )


def whole_weights(label_weight):
    """Whether every label weight is a whole number, none negative."""
    if label_weight.strides == (0,):
        label_weight = label_weight[:1]
    return bool(
        np.all(label_weight >= 0) and np.all(label_weight == np.floor(label_weight))
    )


def count_table_width(n_classes):
    """Columns of the count families' scoring tables: 2 or 4 for up to 2 or
    4 classes, which their row helpers score in a narrow block of their own
    (two classes in a block of 8 did four times the work, from a table four
    times the size), else the classes padded to whole blocks."""
    for width in (2, 4):
        if n_classes <= width:
            return width
    return padded_class_count(n_classes)


def new_table(feature_count):
    """The empty output of a table kernel for counts (n_classes,
    n_features): the feature-major scoring table with its classes padded to
    count_table_width (the kernel zeroes the padding, on its threads: a
    memset of the main thread took 0.5 ms of a 20-class fit of 65,536
    features); and the thread count.
    """
    n_classes, n_features = feature_count.shape
    n_padded = count_table_width(n_classes)
    return (
        np.empty((n_features, n_padded)),
        effective_n_threads(n_classes * n_features),
    )


def class_major(table, n_classes):
    """The class-major attribute (n_classes, n_features) of a table whose
    values are the attribute's (MultinomialNB's log probabilities,
    ComplementNB's weights): built when first read (Deferred), so that a
    fit writes one table of 2**20 features x 20 classes, not two."""
    return np.ascontiguousarray(table[:, :n_classes].T)


def smoothing_per_feature(value, n_features):
    """A smoothing value (one, or one per feature) as an (n_features,) view."""
    return np.broadcast_to(np.asarray(value, dtype=np.float64), (n_features,))


# The missing-value terms of a model that keeps none.
NO_MISSING = np.empty((0, 0))
NO_MISSING.flags.writeable = False


def missing_table(counts, table):
    """The output for a table kernel's terms of missing values: of the
    scoring table's shape (padded, as new_table) if the model keeps
    missing_count, else empty."""
    if counts.missing_count is not None:
        return np.empty_like(table)
    return np.empty((0, 0))


def missing_indicator(X):
    """1.0 where X holds NaN (a missing value), else 0 (sparse as X is)."""
    if sp.issparse(X):
        X = X.copy()
        X.data = np.isnan(X.data).astype(np.float64)
        return X
    return np.isnan(X).astype(np.float64)


class CountingNB(BaseNB):
    """What the count families and CategoricalNB share, and nothing more:
    the parameters of a smoothed count model (alpha, force_alpha, fit_prior,
    class_prior, missing) with their constraints, sparse input, and the
    class prior's attribute. Each family fits and scores on its own."""

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="left"), "array-like"],
        "fit_prior": ["boolean"],
        "class_prior": ["array-like", None],
        "force_alpha": ["boolean"],
        "missing": MISSING_CONSTRAINT,
    }

    class_log_prior_ = fitted_table(
        "class_log_prior_", "ndarray of shape (n_classes,): log P(y)."
    )

    _prior_params = ("fit_prior", "class_prior")

    @classmethod
    def _uniform_prior(cls, n_classes):
        return {"fit_prior": False, "class_prior": None}

    def __init__(
        self,
        *,
        alpha: float | ArrayLike | MEstimate = 1.0,
        force_alpha: bool = True,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
        missing: Missing = "error",
    ) -> None:
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.missing = missing

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.poor_score = True
        return tags


# The count families' statistics: each class's weight, and its weighted sum
# of each feature.
FEATURE_COUNT = Statistic("feature_count", ("classes", "features"))
COUNTS = (CLASS_COUNT, FEATURE_COUNT)


class CountStatistics(NamedTuple):
    """The count families' statistics as they read them: COUNTS, and
    MISSING_COUNT where kept (else None)."""

    class_count: np.ndarray
    feature_count: np.ndarray
    missing_count: np.ndarray | None = None


class CountScoring(NamedTuple):
    """What the count families score with: ``table``, feature-major with
    the classes padded (n_features, n_padded; see new_table), and
    ``intercept`` (n_padded,), its padding 0; the log prior (n_classes,);
    and ``missing``: with missing_count, the term of a missing value minus
    the term of a 0 that the intercept holds (as ``table``), else empty
    (0, 0) (missing_table); BernoulliNB's
    ``certain`` features (a sparse (n_classes, n_features) indicator, or
    None); and the dense scoring kernel, told whether the table is finite."""

    table: np.ndarray
    intercept: np.ndarray
    log_prior: np.ndarray
    missing: np.ndarray = NO_MISSING
    certain: sp.csr_array | None = None
    dense_kernel: Callable | None = None


class BaseDiscreteNB(CountingNB):
    """Fitting and scoring shared by the count-based families.

    The statistics are ``class_count`` (n_classes,) and ``feature_count``
    (n_classes, n_features), and, for a family whose rates are per sample
    (``_keeps_missing``: BernoulliNB, PoissonNB) fitted with
    missing="ignore", ``missing_count`` (n_classes, n_features), the weight
    of each class's samples in which each feature was missing. Subclasses
    set ``_counts_binarize()`` (a threshold or None) and
    ``_log_tables(counts, params, class_log_prior)`` returning the public
    attributes and the CountScoring (its intercept unpadded).
    For MultinomialNB and ComplementNB a missing value is a value of 0 in
    fit and scoring alike: their statistics are sums, and a 0 has no term.
    """

    _requires_non_negative = True
    _keeps_missing = False

    class_count_ = fitted_statistic(
        "class_count", "ndarray of shape (n_classes,): weighted samples per class."
    )
    feature_count_ = fitted_statistic(
        "feature_count",
        "ndarray of shape (n_classes, n_features): weighted sum of each feature.",
    )
    feature_log_prob_ = fitted_table(
        "feature_log_prob_",
        "ndarray of shape (n_classes, n_features): smoothed log P(x_i | y).",
    )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = self._requires_non_negative
        return tags

    def _counts_binarize(self):
        """The threshold above which a value counts as 1 (else 0), or None."""
        return None

    @abstractmethod
    def _log_tables(self, counts, params, class_log_prior):
        """``(attributes, scoring)`` of the family, from its statistics
        (CountStatistics): the public attributes and a CountScoring whose
        ``intercept`` (n_classes,) ``_tables`` pads, adding the dense kernel.
        """

    # -- the state protocol ------------------------------------------------------

    def _check_batch(self, X, y, reset):
        # The values are checked in one parallel pass (check_values), not by
        # scikit-learn's scans.
        X, y = validate_input(
            self,
            booleans_as_bytes(X),
            y,
            accept_sparse=("csr", "csc"),
            dtype=COUNT_DTYPES,
            ensure_all_finite=False,
            reset=reset,
        )
        check_values(X, self, self._requires_non_negative)
        if self._counts_binarize() is not None:
            X = without_duplicates(X)
        return X, y

    def _declared_statistics(self, statistics=None):
        # missing_count only where kept; the statistics themselves change
        # nothing.
        if self._keeps_missing and ignores_missing(self):
            return (*COUNTS, MISSING_COUNT)
        return COUNTS

    def _batch_statistics(self, X, y, sample_weight, n_classes):
        statistics = self._empty_statistics(n_classes, X)
        counts = CountStatistics(**statistics)
        counts.class_count[:] = class_weights(y, sample_weight, n_classes, data_size(X))
        accumulate_counts(
            X,
            y,
            sample_weight,
            counts.feature_count,
            self._counts_binarize(),
            counts.missing_count,
            ignores_missing(self),
        )
        return statistics

    def _add_batch(self, statistics, X, y, sample_weight, n_classes):
        # Counting into the model's own arrays, as scikit-learn does, saves a
        # new n_classes x n_features table a batch, whose page faults cost
        # more than the counting. Nothing can fail once the first count is
        # written: X was checked (its sparse structure too), and the
        # parameters are checked against the statistics first (a batch does
        # not change their shapes).
        counts = CountStatistics(**statistics)
        if not all(
            value.flags.writeable and value.flags.c_contiguous
            for value in counts
            if value is not None
        ):
            return super()._add_batch(statistics, X, y, sample_weight, n_classes)
        self._table_params(statistics, n_classes)
        accumulate_counts(
            X,
            y,
            sample_weight,
            counts.feature_count,
            self._counts_binarize(),
            counts.missing_count,
            ignores_missing(self),
        )
        batch_count = class_weights(y, sample_weight, n_classes, data_size(X))
        counts.class_count[:] += batch_count
        return statistics

    def _check_statistics_agree(self, statistics):
        # A feature binarized is on in at most every sample of its class in
        # which it was seen.
        if self._counts_binarize() is not None:
            kept = MISSING_COUNT.name in statistics
            check_rows_agree(
                statistics,
                FEATURE_COUNT.name,
                upper_bound=True,
                plus=MISSING_COUNT.name if kept else None,
            )

    def _table_params(self, statistics, n_classes):
        n_features = CountStatistics(**statistics).feature_count.shape[1]
        return {
            "alpha": check_smoothing(
                self.alpha, n_features, self.force_alpha, prior_shape=(n_features,)
            ),
            "fit_prior": self.fit_prior,
            "class_prior": check_class_prior(self.class_prior, n_classes),
        }

    def _tables(self, statistics, params):
        counts = CountStatistics(**statistics)
        prior = log_class_prior(
            counts.class_count, params["class_prior"], params["fit_prior"]
        )
        attributes, scoring = self._log_tables(counts, params, prior)
        # The scoring kernels take the classes zero-padded, as the table.
        table = scoring.table
        intercept = np.zeros(table.shape[1])
        intercept[: len(prior)] = scoring.intercept
        # Where the table holds no infinity (a probability of 0 with alpha
        # 0), the dense kernel adds a zero times it as any value, without a
        # branch. With every pseudo-count positive, each value is the log of
        # a positive number (a Bernoulli feature's certain log(1 - p) left
        # out, a Poisson rate kept above the smallest double): no pass over
        # a table of 2**20 features x 20 classes is needed to know it.
        table_finite = (
            bool(np.all(np.asarray(pseudo_counts(params["alpha"], 1.0)[0]) > 0))
            or _kernels.first_refused_value(
                table.reshape(-1), False, False, effective_n_threads(table.size)
            )
            < 0
        )
        # The dense scoring kernel, told so once (_scorer).
        dense_kernel = functools.partial(
            _kernels.discrete_score_dense, table_finite=table_finite
        )
        return attributes, scoring._replace(
            intercept=intercept, dense_kernel=dense_kernel
        )

    def _check_X(self, X, scoring):
        # The scoring kernels check the values as they read them.
        X = validate_input(
            self,
            booleans_as_bytes(X),
            accept_sparse="csr",
            dtype=COUNT_DTYPES,
            ensure_all_finite=False,
            reset=False,
        )
        return X if self._counts_binarize() is None else without_duplicates(X)

    def _scorer(self, scoring, sparse):
        binarize = self._counts_binarize()
        tables = (
            scoring.table,
            scoring.intercept,
            0.0 if binarize is None else float(binarize),
            binarize is not None,
            self._scores_non_negative,
            ignores_missing(self),
            scoring.missing,
        )
        if sparse:
            return _kernels.discrete_score_csr, tables
        return scoring.dense_kernel, tables

    def _terms(self, X, scoring, selection):
        n_classes = len(scoring.log_prior)
        if scoring.certain is not None:
            raise ValueError(
                "contributions are taken against a value of 0, and a 0 is "
                "impossible in some class here (a feature on in every sample of "
                "a class, unsmoothed): fit with alpha > 0."
            )
        binarize = self._counts_binarize()
        coef = selection.of(scoring.table[:, :n_classes])
        missing_term = None
        if ignores_missing(self):
            missing = scoring.missing
            missing_term = (
                selection.of(missing[:, :n_classes])
                if missing.size
                else np.zeros_like(coef)
            )
        terms, bad = linear_terms(
            X,
            coef,
            None,
            0.0 if binarize is None else float(binarize),
            binarize is not None,
            self._scores_non_negative,
            missing_term,
        )
        if bad >= 0:
            raise self._refused_row(X, bad)
        # The all-zeros row scores its intercept (BernoulliNB's holds the
        # absent features' terms, PoissonNB's the rates).
        return terms, selection.of(scoring.intercept[:n_classes])

    def _zero_log_likelihood(self, scoring):
        # A count of 0 adds nothing to a multinomial (or complement) score.
        return np.zeros((scoring.table.shape[0], len(scoring.log_prior)))

    def _informative_values(self):
        # One occurrence of each feature, as the scoring table weighs it.
        scoring = self._final_tables()[1]
        n_classes = len(scoring.log_prior)
        n_features = scoring.table.shape[0]
        return informative_values(
            np.arange(n_features),
            np.ones(n_features, dtype=np.int64),
            self._one_occurrence(scoring.table[:, :n_classes]),
        )

    def _one_occurrence(self, table):
        """log-likelihood of x = 1 (n_features, n_classes), from the table."""
        return table


class MultinomialNB(BaseDiscreteNB):
    """Naive Bayes for multinomial counts, such as word counts of documents.

    A drop-in replacement for :class:`sklearn.naive_bayes.MultinomialNB`:
    same parameters, attributes and results, with compiled multi-threaded
    counting and scoring that never densify sparse input.

    With ``N_ci`` the (weighted) count of feature i in class c, the smoothed
    estimate is ``P(x_i | c) = (N_ci + alpha_i) / sum_j (N_cj + alpha_j)``.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive smoothing (1 is Laplace, other values Lidstone), one value
        for all features or one per feature; 0 means no smoothing.
    force_alpha : bool, default=True
        If False, alpha values below 1e-10 are raised to 1e-10.
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed class priors; overrides ``fit_prior``.
    missing : {"error", "ignore"}, default="error"
        What a NaN in X is: refused with scikit-learn's message ("error"),
        or a missing value ("ignore"), which adds nothing to its feature's
        counts and nothing to the score: as a value of 0 would.

    Attributes
    ----------
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of samples seen per class.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior of each class.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted sum of each feature per class.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        Smoothed ``log P(x_i | c)``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Feature names, when X had string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import MultinomialNB
    >>> X = np.array([[2, 1, 0], [3, 0, 0], [0, 1, 4], [0, 0, 3]])
    >>> clf = MultinomialNB().fit(X, ["ham", "ham", "spam", "spam"])
    >>> clf.predict([[0, 1, 2]])
    array(['spam'], dtype='<U4')
    """

    _parameter_constraints: dict = {
        **BaseDiscreteNB._parameter_constraints,
        "alpha": [*BaseDiscreteNB._parameter_constraints["alpha"], MEstimate],
    }

    def _log_tables(self, counts, params, class_log_prior):
        feature_count = np.ascontiguousarray(counts.feature_count)
        n_features = feature_count.shape[1]
        # alpha, or m virtual words spread over the vocabulary by the prior.
        pseudo, _ = pseudo_counts(params["alpha"], 1.0 / n_features)
        table, n_threads = new_table(feature_count)
        _kernels.multinomial_tables(
            feature_count, smoothing_per_feature(pseudo, n_features), table, n_threads
        )
        attributes = {
            "feature_log_prob_": Deferred(class_major, table, len(feature_count)),
            "class_log_prior_": class_log_prior,
        }
        return attributes, CountScoring(table, class_log_prior, class_log_prior)


class ComplementNB(BaseDiscreteNB):
    """Complement Naive Bayes (Rennie et al., 2003), for imbalanced text data.

    A drop-in replacement for :class:`sklearn.naive_bayes.ComplementNB`.
    Each class is described by the counts of all *other* classes:
    ``w_ci = log((N_~ci + alpha_i) / sum_j (N_~cj + alpha_j))`` and a sample
    goes to the class whose complement fits it worst.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive smoothing, one value for all features or one per feature.
    force_alpha : bool, default=True
        If False, alpha values below 1e-10 are raised to 1e-10.
    fit_prior : bool, default=True
        Only used when the training set has a single class.
    class_prior : array-like of shape (n_classes,), default=None
        Only used when the training set has a single class.
    norm : bool, default=False
        Normalise each class's weights by their sum (Rennie et al.'s
        weight normalisation).
    missing : {"error", "ignore"}, default="error"
        What a NaN in X is: refused with scikit-learn's message ("error"),
        or a missing value ("ignore"), which adds nothing to its feature's
        counts and nothing to the score: as a value of 0 would.

    Attributes
    ----------
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of samples seen per class.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior of each class (used only with a single class).
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    feature_all_ : ndarray of shape (n_features,)
        Weighted sum of each feature over all classes.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted sum of each feature per class.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        Class weights: ``-w_ci``, or ``w_ci / sum_j w_cj`` with ``norm``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Feature names, when X had string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import ComplementNB
    >>> X = np.array([[2, 1, 0], [3, 0, 0], [0, 1, 4], [0, 0, 3]])
    >>> clf = ComplementNB().fit(X, [0, 0, 1, 1])
    >>> clf.predict([[0, 1, 2]])
    array([1])
    """

    _parameter_constraints: dict = {
        **BaseDiscreteNB._parameter_constraints,
        "norm": ["boolean"],
    }

    feature_all_ = fitted_table(
        "feature_all_", "ndarray of shape (n_features,): sum of each feature."
    )

    def __init__(
        self,
        *,
        alpha: float | ArrayLike = 1.0,
        force_alpha: bool = True,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
        norm: bool = False,
        missing: Missing = "error",
    ) -> None:
        super().__init__(
            alpha=alpha,
            force_alpha=force_alpha,
            fit_prior=fit_prior,
            class_prior=class_prior,
            missing=missing,
        )
        self.norm = norm

    def _table_params(self, statistics, n_classes):
        return {**super()._table_params(statistics, n_classes), "norm": self.norm}

    def _log_tables(self, counts, params, class_log_prior):
        feature_count = np.ascontiguousarray(counts.feature_count)
        n_features = feature_count.shape[1]
        feature_all = np.empty(n_features)
        table, n_threads = new_table(feature_count)
        _kernels.complement_tables(
            feature_count,
            smoothing_per_feature(params["alpha"], n_features),
            params["norm"],
            feature_all,
            table,
            n_threads,
        )
        # The prior only matters when there is nothing to compare against.
        if len(class_log_prior) == 1:
            intercept = class_log_prior
        else:
            intercept = np.zeros_like(class_log_prior)
        attributes = {
            "feature_log_prob_": Deferred(class_major, table, len(feature_count)),
            "class_log_prior_": class_log_prior,
            "feature_all_": feature_all,
        }
        return attributes, CountScoring(table, intercept, class_log_prior)


class BernoulliNB(BaseDiscreteNB):
    """Naive Bayes for binary features (multivariate Bernoulli model).

    A drop-in replacement for :class:`sklearn.naive_bayes.BernoulliNB`.
    Unlike the multinomial model, the absence of a feature counts too:
    ``log P(x | c) = sum_i x_i log p_ci + (1 - x_i) log(1 - p_ci)`` with
    ``p_ci = (N_ci + alpha) / (N_c + 2 alpha)``.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive smoothing, one value for all features or one per feature.
    force_alpha : bool, default=True
        If False, alpha values below 1e-10 are raised to 1e-10.
    binarize : float or None, default=0.0
        Values above this threshold count as 1, others as 0, in fit and
        predict (done on the fly, X is not copied). None means X already
        holds binary values.
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed class priors; overrides ``fit_prior``.
    missing : {"error", "ignore"}, default="error"
        What a NaN in X is: refused with scikit-learn's message ("error"),
        or a missing value ("ignore"), left out of its feature's statistics
        (each feature's probability is estimated from the samples in which it was
        seen) and of its feature's term in the score.

    Attributes
    ----------
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of samples seen per class.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior of each class.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted number of samples per class in which each feature is on.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log p_ci``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Feature names, when X had string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import BernoulliNB
    >>> X = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1], [0, 0, 1]])
    >>> clf = BernoulliNB().fit(X, [0, 0, 1, 1])
    >>> clf.predict([[0, 1, 1]])
    array([1])
    """

    _parameter_constraints: dict = {
        **BaseDiscreteNB._parameter_constraints,
        "binarize": [None, Interval(Real, 0, None, closed="left")],
        "alpha": [*BaseDiscreteNB._parameter_constraints["alpha"], MEstimate],
    }
    _requires_non_negative = False
    _keeps_missing = True

    def __init__(
        self,
        *,
        alpha: float | ArrayLike | MEstimate = 1.0,
        force_alpha: bool = True,
        binarize: float | None = 0.0,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
        missing: Missing = "error",
    ) -> None:
        super().__init__(
            alpha=alpha,
            force_alpha=force_alpha,
            fit_prior=fit_prior,
            class_prior=class_prior,
            missing=missing,
        )
        self.binarize = binarize

    def _counts_binarize(self):
        return self.binarize

    def _log_tables(self, counts, params, class_log_prior):
        # (N_ci + alpha) / (N_c + 2 alpha), or (N_ci + m p_i) / (N_c + m): m
        # virtual samples, p_i of them on.
        pseudo_on, pseudo_total = pseudo_counts(params["alpha"], 0.5)
        feature_count = np.ascontiguousarray(counts.feature_count)
        n_classes, n_features = feature_count.shape
        feature_log_prob = np.empty(feature_count.shape)
        table, n_threads = new_table(feature_count)
        # log(1 - p), the score of an absent feature, goes into the intercept.
        # Without smoothing a feature can have p = 1 and log(1 - p) = -inf,
        # which would meet +inf in the table (NaN): such "certain" features
        # are left out of the linear score and checked apart (see _score).
        log_absent = np.empty(n_classes)
        certain = np.zeros((n_classes, n_features), dtype=np.uint8)
        missing = missing_table(counts, table)
        n_certain = _kernels.bernoulli_tables(
            feature_count,
            np.broadcast_to(observed_weights(counts), feature_count.shape),
            smoothing_per_feature(pseudo_on, n_features),
            smoothing_per_feature(pseudo_total, n_features),
            feature_log_prob,
            table,
            missing,
            log_absent,
            certain,
            n_threads,
        )
        attributes = {
            "feature_log_prob_": feature_log_prob,
            "class_log_prior_": class_log_prior,
        }
        return attributes, CountScoring(
            table,
            class_log_prior + log_absent,
            class_log_prior,
            missing,
            sp.csr_array(certain.astype(np.float64)) if n_certain else None,
        )

    def _score(self, X, scoring, output, out, labels):
        certain = scoring.certain
        if certain is None:
            super()._score(X, scoring, output, out, labels)
            return
        # A class gets -inf where the row lacks one of its certain features.
        jll = np.empty((X.shape[0], len(scoring.log_prior)))
        super()._score(
            X, scoring, _kernels.Output.JOINT_LOG_LIKELIHOOD, jll, labels[:0]
        )
        present = certain @ self._binarized(X).T
        if sp.issparse(present):
            present = present.toarray()
        needed = np.asarray(certain.sum(axis=1)).reshape(-1, 1)
        if ignores_missing(self):
            # A certain feature the row has no value for is not needed.
            unseen = certain @ missing_indicator(X).T
            needed = needed - (unseen.toarray() if sp.issparse(unseen) else unseen)
        jll[(present < needed - 0.5).T] = -np.inf
        finish_scores(jll, output, out, labels)

    def _zero_log_likelihood(self, scoring):
        # Absent: log(1 - p).
        with np.errstate(divide="ignore"):
            return np.log1p(-np.exp(np.asarray(self.feature_log_prob_).T))

    def _informative_values(self):
        # Present (1) and absent (0): log p and log(1 - p).
        log_p = np.asarray(self.feature_log_prob_).T
        n_features = log_p.shape[0]
        with np.errstate(divide="ignore"):
            log_absent = np.log1p(-np.exp(log_p))
        return informative_values(
            np.tile(np.arange(n_features), 2),
            np.repeat(np.array([1, 0]), n_features),
            np.concatenate([log_p, log_absent]),
        )

    def _binarized(self, X):
        """X as the model counts it: 1/0 against the threshold (a copy)."""
        if self.binarize is None:
            return X
        if sp.issparse(X):
            X = X.copy()
            X.data = (X.data > self.binarize).astype(np.float64)
            return X
        return (X > self.binarize).astype(np.float64)


class PoissonNB(BaseDiscreteNB):
    """Naive Bayes for counts modelled as Poisson, one rate per class and feature.

    ``P(x_i | c) = rate_ci^x_i exp(-rate_ci) / x_i!``, so the joint
    log-likelihood is ``log P(c) + sum_i (x_i log rate_ci - rate_ci -
    log x_i!)``. Unlike the multinomial model, the length of a document
    carries evidence. On sparse input the zeros contribute only the per-class
    constant ``-sum_i rate_ci``, so scoring costs one pass over the nonzeros.

    Rates are smoothed towards each feature's overall rate ``r_i`` (the
    weighted mean over all training samples), as if ``alpha`` extra samples
    at that rate had been seen in every class::

        rate_ci = (S_ci + alpha_i r_i) / (N_c + alpha_i)

    with ``S_ci`` the weighted sum of feature i in class c and ``N_c`` the
    class weight; ``alpha=0`` gives the maximum-likelihood rates (the class
    means). Rates are kept above the smallest positive float so that a count
    never seen in a class makes it very unlikely, never NaN.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Weight, in samples, of the overall rate in each class's rate.
    force_alpha : bool, default=True
        If False, alpha values below 1e-10 are raised to 1e-10.
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed class priors; overrides ``fit_prior``.
    missing : {"error", "ignore"}, default="error"
        What a NaN in X is: refused with scikit-learn's message ("error"),
        or a missing value ("ignore"), left out of its feature's statistics
        (each feature's rate is estimated from the samples in which it was
        seen) and of its feature's term in the score.

    Attributes
    ----------
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of samples seen per class.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior of each class.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted sum of each feature per class.
    rate_ : ndarray of shape (n_classes, n_features)
        Smoothed Poisson rate of each feature per class.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Feature names, when X had string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import PoissonNB
    >>> X = np.array([[5, 0], [4, 1], [0, 3], [1, 4]])
    >>> clf = PoissonNB().fit(X, ["a", "a", "b", "b"])
    >>> clf.predict([[6, 1]])
    array(['a'], dtype='<U1')
    """

    _keeps_missing = True

    rate_ = fitted_table(
        "rate_", "ndarray of shape (n_classes, n_features): Poisson rates."
    )

    def _log_tables(self, counts, params, class_log_prior):
        feature_count = np.ascontiguousarray(counts.feature_count)
        n_classes, n_features = feature_count.shape
        rate = np.empty(feature_count.shape)
        table, n_threads = new_table(feature_count)
        rate_sums = np.empty(n_classes)
        missing = missing_table(counts, table)
        _kernels.poisson_tables(
            feature_count,
            np.broadcast_to(observed_weights(counts), feature_count.shape),
            smoothing_per_feature(params["alpha"], n_features),
            np.empty(n_features),
            rate,
            table,
            missing,
            rate_sums,
            n_threads,
        )
        attributes = {"rate_": rate, "class_log_prior_": class_log_prior}
        return attributes, CountScoring(
            table, class_log_prior - rate_sums, class_log_prior, missing
        )

    # A negative count has no Poisson probability (and no log-factorial).
    _scores_non_negative = True

    def _check_X(self, X, scoring):
        return without_duplicates(super()._check_X(X, scoring))

    def _zero_log_likelihood(self, scoring):
        # log P(x = 0 | c) = -rate.
        return -np.asarray(self.rate_, dtype=np.float64).T

    def _one_occurrence(self, table):
        # log P(x = 1 | c) = log rate - rate (the table holds log rate).
        return table - np.asarray(self.rate_).T

    def _terms(self, X, scoring, selection):
        terms, intercept = super()._terms(X, scoring, selection)
        if not selection.pair:
            # -log(x!), the same in every class: it cancels in a pair's log-odds.
            if isinstance(terms, list):
                log_factorials = log_factorial(X.data)
                for matrix in terms:
                    matrix.data -= log_factorials
            else:
                terms -= log_factorial(X)[:, :, None]
        return terms, intercept

    def _score(self, X, scoring, output, out, labels):
        super()._score(X, scoring, output, out, labels)
        # -sum_i log(x_i!) is the same for every class: it cancels in the
        # posterior and matters only for the joint log-likelihood itself.
        if output == _kernels.Output.JOINT_LOG_LIKELIHOOD:
            out -= log_factorial_row_sums(X)[:, np.newaxis]


def log_factorial(values):
    """log(x!) of each value (log Gamma(x + 1) for real x), 0 for a missing
    one (NaN), whose term is left out of the score."""
    result = gammaln(np.asarray(values, dtype=np.float64) + 1)
    result[np.isnan(result)] = 0.0
    return result


def log_factorial_row_sums(X):
    """sum_i log(x_i!) over the values of every row of X."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        return np.asarray(
            sp.csr_matrix(
                (log_factorial(X.data), X.indices, X.indptr), shape=X.shape
            ).sum(axis=1)
        ).reshape(-1)
    return log_factorial(X).sum(axis=1)
