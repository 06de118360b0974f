"""Categorical Naive Bayes: a conditional probability table per attribute.

The statistics are weighted counts of every (feature, category, class),
held in one feature-major table for all features: feature j owns rows
``offsets[j]`` to ``offsets[j + 1] - 1``, one per category code and a last
one standing for categories never seen in training. The table grows when
later batches bring new categories. Columns are either category codes
(non-negative integers, scikit-learn's protocol) or raw values such as
strings and booleans, which the model encodes itself. A sparse X (CSR or
CSC) holds codes, code 0 wherever it stores nothing.

With ``missing="ignore"`` a NaN code (dense, or stored in a sparse X), and
None, NaN or pandas' NA among raw values, is a missing value: left out of
its feature's counts, and of its feature's term when scoring. Raw values
are then encoded as float64 codes, NaN where missing. No statistic is
added: a feature's weight seen in a class is the sum of its category
counts, which is what the smoothed tables divide by.
"""

from __future__ import annotations

from numbers import Integral
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils import assert_all_finite
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import (
    _check_n_features,
    check_array,
    check_X_y,
    validate_data,
)

from fastnb._base import Deferred, fitted_statistic, fitted_table, log_class_prior
from fastnb._codes import (
    LARGEST_LIMIT,
    CategoryLimitError,
    absent_values,
    as_int64_codes,
    bad_row_error,
    categories_of,
    category_sizes,
    check_categories_agree,
    checked_codes,
    code_error,
    code_range,
    code_sizes,
    coded_distinct_values,
    column_kinds,
    distinct_values,
    feature_tables,
    kernel_codes,
    mixed_values_error,
    row_pseudo_counts,
    same_categories,
    sparse_codes,
    stored_position,
    table_offsets,
    united_categories,
)
from fastnb._config import check_table_bytes
from fastnb._discrete import CountingNB
from fastnb._explain import as_term_matrices, informative_values, terms_output
from fastnb._frames import (
    FrameColumns,
    read_frame,
)
from fastnb._labels import SoftLabels, class_weights, first_and_rest, read_only
from fastnb._plans import category_table_chunks, one_pass_chunks, sparse_count_chunks
from fastnb._simd import kernels as _kernels
from fastnb._smoothing import MEstimate, check_smoothing
from fastnb._statistics import CLASS_COUNT, Statistic
from fastnb._threads import (
    data_size,
    effective_n_threads,
    pad_classes,
    padded_class_count,
    thread_scratch,
    zeroed,
)
from fastnb._validation import (
    check_class_prior,
    ignores_missing,
    missing_values_error,
    sparse_arrays,
    validate_input,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fastnb._typing import Missing

# categorical_merge_counts' class weights and scratch for dense codes: no
# implicit zeros to add.
NO_CLASS_COUNT = read_only(np.empty(0))
NO_SCRATCH = np.empty((0, 0))


def count_codes(
    codes, y, sample_weight, n_classes, max_categories, least_sizes, missing=False
):
    """Check the codes of a fit and count them, per feature, category and class.

    Returns ``(bad, sizes, counts, class_count)``: the flat position (row *
    n_features + column) of the first code that is not a whole number
    below max_categories, or None; each feature's number of categories (its
    largest code + 1, at least ``least_sizes``); the weighted counts, a row
    per category (feature-major) and a column per class; and each class's
    weight, summed in the same pass (by chunk, then over the chunks in
    order: the same for any number of threads). One pass
    over the codes when each chunk's counts fit their room, else two; the
    counts are sums in row order within chunks, then in chunk order, the
    same for any number of threads. With ``missing``, NaN is a missing
    value, left out of the counts.
    """
    n_samples, n_features = codes.shape
    weights = np.empty(0) if sample_weight is None else sample_weight
    n_threads = effective_n_threads(codes.size)
    chunk_rows, n_chunks, room = one_pass_chunks(n_samples, n_features, n_classes)
    highest = np.empty((n_chunks, n_features), dtype=codes.dtype)
    layout = np.empty((n_chunks, n_features + 1), dtype=np.intp)
    tables = np.empty((n_chunks, room))
    chunk_class_count = np.empty((n_chunks, n_classes))
    # Filled by the kernel, from the chunks' figures (sizes from the least).
    sizes = np.array(least_sizes, dtype=np.int64)
    offsets = np.empty(n_features + 1, dtype=np.intp)
    class_count = np.empty(n_classes)
    bad, all_counted = _kernels.categorical_check_count_dense(
        codes,
        y,
        weights,
        min(max_categories, LARGEST_LIMIT),
        n_classes,
        chunk_rows,
        highest,
        layout,
        tables,
        chunk_class_count,
        sizes,
        offsets,
        class_count,
        missing,
        n_threads,
    )
    if bad >= 0:
        return bad, None, None, None
    counts = new_counts(sizes, n_classes)
    if not all_counted:
        # Some chunk's counts outgrew their room: count again, into tables
        # laid out for every category.
        del tables
        chunk_rows, n_chunks = category_table_chunks(n_samples, n_features, counts.size)
        if n_chunks == 1:
            tables = counts.reshape(1, -1)
        else:
            tables = zeroed((n_chunks, counts.size))
        # Tasks are chunks x blocks of columns, about two a thread.
        n_blocks = min(n_features, -(-2 * n_threads // n_chunks))
        _kernels.categorical_count_dense(
            codes,
            y,
            weights,
            n_classes,
            (sizes - 1).astype(codes.dtype),
            offsets * n_classes,
            chunk_rows,
            tables,
            -(-n_features // n_blocks),
            missing,
            n_threads,
        )
        if n_chunks == 1:
            return None, sizes, counts, class_count
        layout = np.tile(offsets * n_classes, (n_chunks, 1))
    # The counting's threads (awake already), even for small tables.
    _kernels.categorical_merge_counts(
        tables, layout, offsets, counts, NO_CLASS_COUNT, NO_SCRATCH, n_threads
    )
    return None, sizes, counts, class_count


def new_counts(sizes, n_classes):
    """A zeroed count table, a row per category of every feature (``sizes``)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    # Summed in float64 for the check: in int64, many huge sizes overflow.
    n_categories = sizes.sum(dtype=np.float64)
    check_table_bytes(
        "CategoricalNB",
        f"a count table of {n_categories:.0f} categories (of {len(sizes)} "
        f"feature{'s' if len(sizes) > 1 else ''}) by {n_classes} classes",
        n_categories * n_classes,
    )
    return np.zeros((int(sizes.sum()), n_classes))


def count_sparse_codes(
    codes, y, sample_weight, n_classes, max_categories, missing=False
):
    """count_codes for a canonical CSR or CSC X of codes, 0 where nothing is stored.

    Returns ``(bad, sizes, counts, class_count)`` as count_codes does,
    ``bad`` being the position in ``codes.data`` of the first bad stored
    code in row-major order. One pass checks the stored codes and finds
    each feature's largest, a second counts them: a CSC X a task a column
    (its class weights by class_weights), a CSR X in chunks of rows, a
    table and each class's weight a chunk, added up in chunk order. Each
    feature's implicit zeros go to its code 0: each class's weight less the
    weight of its stored codes of the feature, O(categories x classes). The
    counts do not depend on the number of threads. With ``missing``, a
    stored NaN is a missing value: counted in a row of its own after its
    feature's codes, so that it is not taken for an implicit zero, and that
    row dropped at the end.
    """
    n_samples, n_features = codes.shape
    data, indices, indptr = sparse_arrays(codes)
    weights = np.empty(0) if sample_weight is None else sample_weight
    n_threads = effective_n_threads(len(data))
    limit = min(max_categories, LARGEST_LIMIT)
    if codes.format == "csr":
        highest = np.zeros((n_threads, n_features), dtype=data.dtype)
        bad = _kernels.categorical_check_csr(
            data, indices, indptr, limit, highest, missing, n_threads
        )
        highest = highest.max(axis=0)
    else:
        highest = np.zeros(n_features, dtype=data.dtype)
        bad = _kernels.categorical_check_csc(
            data, indices, indptr, limit, highest, missing, n_threads
        )
    if bad >= 0:
        return bad, None, None, None
    # Code 0 is always there: implicit, or highest's start.
    sizes = highest.astype(np.int64) + 1
    counts = new_counts(sizes + missing, n_classes)
    offsets = table_offsets(sizes, block_extra=int(missing))
    scratch = thread_scratch(n_threads, n_classes)[:, 0]
    if codes.format == "csc":
        class_count = class_weights(y, sample_weight, n_classes, len(data))
        _kernels.categorical_count_csc(
            data, indices, indptr, y, weights, offsets, counts, missing, n_threads
        )
        _kernels.categorical_add_zeros(counts, offsets, class_count, scratch, n_threads)
    else:
        chunk_rows, n_chunks = sparse_count_chunks(n_samples, len(data), counts.size)
        # (Each chunk's task zeroes its table and its class weights.)
        tables = (
            counts.reshape(1, -1)
            if n_chunks == 1
            else np.empty((n_chunks, counts.size))
        )
        chunk_class_count = np.empty((n_chunks, n_classes))
        _kernels.categorical_count_csr(
            data,
            indices,
            indptr,
            y,
            weights,
            offsets,
            n_classes,
            chunk_rows,
            tables,
            chunk_class_count,
            missing,
            n_threads,
        )
        class_count = chunk_class_count.sum(axis=0)
        if n_chunks == 1:
            _kernels.categorical_add_zeros(
                counts, offsets, class_count, scratch, n_threads
            )
        else:
            # The merge adds the implicit zeros too, on the same threads.
            _kernels.categorical_merge_counts(
                tables,
                np.tile(offsets * n_classes, (n_chunks, 1)),
                offsets,
                counts,
                class_count,
                scratch,
                n_threads,
            )
    if missing:
        counts = np.delete(counts, offsets[1:] - 1, axis=0)
    return None, sizes, counts, class_count


# CategoricalNB's statistics: each class's weight, the count table (a row
# per feature and category, feature-major) and each feature's categories
# (codes or raw values).
CATEGORY_COUNTS = (
    CLASS_COUNT,
    Statistic("category_count", ("categories", "classes"), combine="own"),
    Statistic("categories", kind="own", combine="own"),
)


class CategoryCounts(NamedTuple):
    """CategoricalNB's statistics (CATEGORY_COUNTS) as it reads them."""

    class_count: np.ndarray
    category_count: np.ndarray
    categories: list


class CodedBatch(NamedTuple):
    """A batch checked for fitting: X as checked (for the errors' values),
    its codes (dense, or canonical CSR), each feature's raw values by code
    (None for a column of codes), and the model's categories where every
    column is of codes (else None)."""

    X: Any
    codes: Any
    values: list
    known: list | None = None


class CategoricalScoring(NamedTuple):
    """What CategoricalNB scores with: the feature-major log table, a row
    per category and one per feature for unseen ones, its classes padded
    (n_rows, n_padded), each feature's first row (``offsets``, n_features +
    1); the intercept (n_padded,); the log prior; the categories that code
    raw values; and the scores of a row of codes 0 for canonical CSR codes,
    or None where some code 0's term is not finite."""

    offsets: np.ndarray
    table: np.ndarray
    intercept: np.ndarray
    log_prior: np.ndarray
    categories: list
    zero_scores: np.ndarray | None


def frame_columns(X):
    """X's columns if X is a data frame (read once: read_frame), or X
    itself if already read; None for an array or another input."""
    if isinstance(X, FrameColumns):
        return X
    if isinstance(X, np.ndarray):
        return None  # (without the frame checks)
    return read_frame(X)


class CategoricalNB(CountingNB):
    """Naive Bayes for categorical features: a probability table per attribute.

    A drop-in replacement for :class:`sklearn.naive_bayes.CategoricalNB`:
    same parameters, attributes and results on category codes, with compiled
    counting and scoring over all features at once, plus:

    - raw categories: columns of strings, booleans, objects or
      categoricals (of a pandas, polars or pyarrow frame, read by their
      codes) are encoded by the model (no encoder needed); the categories
      are kept in ``categories_``;
    - sparse codes: a CSR or CSC matrix (one-hot or hashed data), read as
      it is stored, never made dense: an entry not stored is code 0, and
      the model is the one fitted on ``X.toarray()``;
    - categories never seen in training get the smoothed probability of a
      zero count, ``alpha_i / (N_c + alpha_i n_i)``, instead of an
      IndexError;
    - ``alpha`` per feature, or an :class:`~fastnb.MEstimate`.

    The estimate for category a of feature i in class c is
    ``(N_ica + alpha_i) / (N_c + alpha_i n_i)`` with n_i categories, or with
    an m-estimate ``(N_ica + m_i p_ia) / (N_c + m_i)``.

    Parameters
    ----------
    alpha : float, array-like of shape (n_features,) or MEstimate, default=1.0
        Additive smoothing (1 is Laplace), one value or one per feature; or
        an m-estimate, whose prior is a list of per-feature category
        probabilities (uniform when None). Unseen categories are smoothed
        as if uniform.
    force_alpha : bool, default=True
        If False, alpha values below 1e-10 are raised to 1e-10.
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Fixed class priors; overrides ``fit_prior``.
    min_categories : int or array-like of shape (n_features,), default=None
        Least number of categories per feature (codes ``0 ..
        min_categories - 1`` are then known even if unseen).
    max_categories : int, default=1_000_000
        Most categories a feature may have. ``fit`` and ``partial_fit`` refuse
        a code ``>= max_categories`` (or more distinct raw values) with a
        ValueError before any table is allocated: one stray huge code would
        otherwise ask for a table of that many rows per class. Raise it for
        features that really have more categories. At predict time any code
        is accepted (a code never seen scores as unseen).
    missing : {"error", "ignore"}, default="error"
        What a missing value is to the model: NaN among codes (in a dense
        X, or stored in a sparse one: a value not stored is still code 0),
        or None, NaN or pandas' NA among raw values. "error" refuses it
        with a ValueError, as scikit-learn does. "ignore" leaves it out:
        at fit, out of its feature's counts (never a category); when
        scoring, out of the row's joint log-likelihood, which then sums
        the terms of the row's observed features only (the missing
        feature marginalised, under the Naive Bayes assumption). A class in
        which a feature is never observed gets uniform probabilities for
        it, ``1 / n_i`` for each category, also with ``alpha=0`` (where
        the estimate would be 0 / 0); a feature never observed at all has
        no categories and a term of 0.

    Attributes
    ----------
    categories_ : list of ndarray
        For each feature, the category of each code: ``arange(n)`` for code
        columns; for encoded ones the first batch's values sorted, then each
        later batch's new values sorted (codes never change once given).
    category_count_ : list of ndarray of shape (n_classes, n_categories_[i])
        Weighted count of each category per class, one array per feature.
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of samples seen per class.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior of each class.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    feature_log_prob_ : list of ndarray of shape (n_classes, n_categories_[i])
        Smoothed ``log P(x_i = a | c)``, one array per feature.
    n_categories_ : ndarray of shape (n_features,)
        Number of categories of each feature.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Feature names, when X had string column names.

    Notes
    -----
    A sparse X is read twice at fit (its stored codes checked, then
    counted); each feature's zeros not stored are counted as each class's
    weight less that of its stored codes, so code 0's count of a class may
    differ from a dense fit's by rounding when the weights are not whole
    numbers. A sparse row scores as the row of zeros plus, for each stored
    code, its term less code 0's.

    After several ``partial_fit`` calls ``n_categories_`` covers every batch
    seen (scikit-learn keeps the last batch's). With ``alpha=0`` a category
    never seen makes every class impossible.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import CategoricalNB
    >>> X = np.array([["sunny", "hot"], ["rain", "mild"], ["sunny", "mild"],
    ...               ["rain", "cool"]])
    >>> clf = CategoricalNB().fit(X, ["no", "yes", "no", "yes"])
    >>> clf.predict([["sunny", "hot"]])
    array(['no'], dtype='<U3')
    >>> clf.categories_[0]
    array(['rain', 'sunny'], dtype=object)

    With ``missing="ignore"`` a missing value is no category, and its
    feature is left out of its row's score:

    >>> X = np.array([["sunny", None], ["rain", "mild"], [None, "hot"],
    ...               ["rain", None]])
    >>> clf = CategoricalNB(missing="ignore").fit(X, ["no", "yes", "no", "yes"])
    >>> clf.categories_[1]
    array(['hot', 'mild'], dtype=object)
    >>> clf.predict([[None, "mild"]])
    array(['yes'], dtype='<U3')
    """

    # How two states combine (merge, fastnb.dask's blocks), for the docs.
    _combining = (
        "The raw categories of a DataFrame's columns are found across its "
        "partitions and sorted, as one fit sorts them."
    )

    _parameter_constraints: dict = {
        **CountingNB._parameter_constraints,
        "alpha": [*CountingNB._parameter_constraints["alpha"], MEstimate],
        "min_categories": [
            None,
            "array-like",
            Interval(Integral, 1, None, closed="left"),
        ],
        "max_categories": [Interval(Integral, 1, None, closed="left")],
    }

    feature_log_prob_ = fitted_table(
        "feature_log_prob_", "list of ndarray: smoothed log P(x_i = a | c) per feature."
    )

    def __init__(
        self,
        *,
        alpha: float | ArrayLike | MEstimate = 1.0,
        force_alpha: bool = True,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
        min_categories: int | ArrayLike | None = None,
        max_categories: int = 1_000_000,
        missing: Missing = "error",
    ) -> None:
        super().__init__(
            alpha=alpha,
            force_alpha=force_alpha,
            fit_prior=fit_prior,
            class_prior=class_prior,
            missing=missing,
        )
        self.min_categories = min_categories
        self.max_categories = max_categories

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        tags.input_tags.string = True
        return tags

    # -- statistics: a flat feature-major count table ------------------------

    class_count_ = fitted_statistic(
        "class_count", "ndarray of shape (n_classes,): weighted samples per class."
    )

    # The statistics hold the categories seen; min_categories, a parameter,
    # adds categories with zero counts in the tables and these attributes.
    categories_ = fitted_table(
        "categories_", "list of ndarray: the category of each code, per feature."
    )
    n_categories_ = fitted_table(
        "n_categories_", "ndarray of shape (n_features,): categories per feature."
    )
    category_count_ = fitted_table(
        "category_count_",
        "list of ndarray (n_classes, n_categories_[i]): weighted counts.",
    )

    def _check_batch(self, X, y, reset):
        # Codes are checked as they are counted (count_codes,
        # count_sparse_codes), NaN and infinity too.
        coded = None
        columns = frame_columns(X)
        if columns is not None:
            X, codes_columns, coded, y = self._check_frame(
                X, columns, y, reset=reset, fitting=True
            )
        else:
            X, y = validate_input(
                self,
                X,
                y,
                dtype=None,
                accept_sparse=("csr", "csc"),
                ensure_all_finite=False,
                reset=reset,
            )
            if sp.issparse(X):
                codes, X = sparse_codes(X, X.format)
                return CodedBatch(X, codes, [None] * X.shape[1]), y
            codes_columns = column_kinds(X)
        known = None if reset else CategoryCounts(**self._statistics).categories
        codes, values = self._encode(X, codes_columns, known, learn=True, coded=coded)
        # The model's categories, for a batch all of codes (_batch_statistics).
        known = known if codes_columns.all() else None
        return CodedBatch(X, codes, values, known), y

    def _largest_table(self, batch, n_classes):
        # The count table, categories x classes, is checked once the kernels
        # have found how many categories each feature has (new_counts).
        return super()._largest_table(batch.codes, n_classes)

    def _batch_statistics(self, batch, y, sample_weight, n_classes):
        if isinstance(y, SoftLabels):
            return self._soft_batch_statistics(batch, y, n_classes)
        codes, values, known = batch.codes, batch.values, batch.known
        # Dense codes for a model whose every feature's categories are codes
        # are counted in a table at least as large as the model's: a batch
        # that brings no new category then has the model's categories.
        model_sizes = None if known is None else code_sizes(known)
        if sp.issparse(codes):
            bad, sizes, counts, class_count = count_sparse_codes(
                codes,
                y,
                sample_weight,
                n_classes,
                self.max_categories,
                ignores_missing(self),
            )
            if bad is not None:
                row, column = stored_position(codes, bad)
                value = batch.X.data[bad]
                raise code_error(value, column, row, self.max_categories)
        else:
            if model_sizes is None:
                least_sizes = [0 if v is None else len(v) for v in values]
            else:
                least_sizes = model_sizes
            bad, sizes, counts, class_count = count_codes(
                codes,
                y,
                sample_weight,
                n_classes,
                self.max_categories,
                least_sizes,
                ignores_missing(self),
            )
            if bad is not None:
                row, column = divmod(bad, codes.shape[1])
                value = batch.X[row, column]
                raise code_error(value, column, row, self.max_categories)
        if model_sizes is not None and np.array_equal(sizes, model_sizes):
            categories = known
        else:
            # A column of codes has the codes 0 .. n - 1 as its categories.
            categories = [
                code_range(n) if v is None else v
                for v, n in zip(values, sizes.tolist(), strict=True)
            ]
        return {
            "class_count": class_count,
            "category_count": counts,
            "categories": categories,
        }

    def _soft_batch_statistics(self, batch, labels, n_classes):
        """_batch_statistics of soft labels: each row's first class counted
        over the batch as hard labels are, the rows' other classes over
        those rows alone, and the two combined (the second's categories
        those of fewer rows: CategoricalNB's counting takes one class a
        row). A row of one class is counted once, as its hard label."""
        (first, weights), (rows, classes, rest_weights) = first_and_rest(labels)
        statistics = self._batch_statistics(batch, first, weights, n_classes)
        if not len(rows):
            return statistics
        rest = batch._replace(X=batch.X[rows], codes=batch.codes[rows])
        return self._combine_statistics(
            statistics,
            self._batch_statistics(rest, classes, rest_weights, n_classes),
        )

    # _add_batch is BaseNB's: a batch may bring new categories, which widen
    # the table, so it is counted and combined in new arrays, not into the
    # model's own (as the count families do).

    def _combined_own(self, first, second):
        first, second = CategoryCounts(**first), CategoryCounts(**second)
        categories = first.categories
        if same_categories(categories, second.categories):
            # As most batches of a partial_fit: no new category.
            categories = list(categories)
            counts = first.category_count + second.category_count
        else:
            categories, first_rows, second_rows = united_categories(
                categories, second.categories
            )
            counts = np.zeros(
                (sum(len(c) for c in categories), first.category_count.shape[1])
            )
            counts[first_rows] += first.category_count
            counts[second_rows] += second.category_count
        return {"category_count": counts, "categories": categories}

    def _in_fit_order(self, statistics):
        # One fit sorts each feature's raw values; combining batches unites
        # them in the order the batches came.
        counts = CategoryCounts(**statistics)
        rows, ordered, start = [], [], 0
        for feature, values in enumerate(counts.categories):
            order = np.arange(len(values))
            if values.dtype == object:
                try:
                    order = np.argsort(values, kind="stable")
                except TypeError as exc:
                    raise mixed_values_error(feature) from exc
            ordered.append(values[order])
            rows.append(start + order)
            start += len(values)
        return counts._replace(
            categories=ordered,
            category_count=counts.category_count[np.concatenate(rows)],
        )._asdict()

    def _declared_statistics(self, statistics=None):
        return CATEGORY_COUNTS

    def _statistic_sizes(self, statistics, n_features):
        if statistics is None:
            return {"categories": 0}
        categories = CategoryCounts(**statistics).categories
        if (
            not isinstance(categories, list)
            or len(categories) != n_features
            or not all(
                isinstance(c, np.ndarray) and c.ndim == 1 and c.dtype.kind in "iuO"
                for c in categories
            )
        ):
            raise ValueError(
                f"Statistic 'categories' must be a list of {n_features} 1-D arrays "
                "of integer codes or of values (object)."
            )
        return {"categories": int(category_sizes(categories).sum())}

    def _check_statistics_agree(self, statistics):
        check_categories_agree(CategoryCounts(**statistics), ignores_missing(self))

    def _table_params(self, statistics, n_classes):
        n_categories = self._with_min_categories(
            category_sizes(CategoryCounts(**statistics).categories)
        )
        return {
            "n_categories": n_categories,
            "alpha": check_smoothing(
                self.alpha,
                len(n_categories),
                self.force_alpha,
                prior_shape=n_categories,
            ),
            "fit_prior": self.fit_prior,
            "class_prior": check_class_prior(self.class_prior, n_classes),
        }

    # -- input ----------------------------------------------------------------

    def _with_min_categories(self, n_categories):
        if self.min_categories is None:
            return n_categories
        minimum = np.asarray(self.min_categories)
        if not np.issubdtype(minimum.dtype, np.integer):
            raise ValueError(
                f"'min_categories' should have integral type. Got {minimum.dtype} "
                "instead."
            )
        if minimum.ndim and minimum.shape != n_categories.shape:
            raise ValueError(
                f"'min_categories' should have shape ({len(n_categories)},) when an "
                f"array-like is provided. Got {minimum.shape} instead."
            )
        return np.maximum(n_categories, minimum).astype(np.int64)

    def _encode(self, X, codes_columns, known, learn, coded=None):
        """Codes for X, and each encoded feature's categories (grown if ``learn``).

        ``known`` is the model's categories, or None before the first fit.
        Returns the codes, in a dtype the kernels read (X itself when it is
        all codes of such a dtype), and per feature the array of its values
        if encoded, None if a column of codes (codes are their own
        categories; a huge unseen code at predict time costs nothing). A
        matrix of codes of a float or integer dtype is checked by the
        kernels as they read it (count_codes, categorical_score_dense),
        other columns of codes here. With missing="ignore", an object X's
        missing values (see absent_values) make the codes float64, NaN
        where missing. ``coded``: a frame's categorical columns by their
        codes (fastnb._frames.FrameColumns.coded), encoded from them.
        """
        n_features = X.shape[1]
        numeric = X.dtype.kind in "iu" or (
            X.dtype.kind == "f" and X.dtype.itemsize <= 8
        )
        if codes_columns.all() and numeric:
            return kernel_codes(X), [None] * n_features
        ignore = ignores_missing(self)
        # What validate_data would have checked (see _check_batch).
        absent = None
        if X.dtype == object:
            # (assert_all_finite finds no more in objects than NaN.)
            absent = absent_values(X, coded)
            if not ignore:
                self._refuse_missing(absent)
            elif not absent.any():
                absent = None
        else:
            assert_all_finite(
                X,
                allow_nan=ignore,
                input_name="X",
                estimator_name=type(self).__name__,
            )
        if coded is None:
            coded = (None,) * n_features
        if known is None:
            known = [np.arange(0)] * n_features
        limit = self.max_categories if learn else None
        codes = np.empty(X.shape, dtype=np.int64 if absent is None else np.float64)
        values = []
        for j in range(n_features):
            column, rows = X[:, j], slice(None)
            if absent is not None and absent[:, j].any():
                # Missing values get NaN; the others are coded as usual.
                rows = ~absent[:, j]
                codes[absent[:, j], j] = np.nan
                if coded[j] is None:
                    column = np.where(rows, column, np.nan)
            if codes_columns[j]:
                column = checked_codes(column, j, limit, ignore)
                codes[:, j] = column if absent is not None else as_int64_codes(column)
                values.append(None)
                continue
            if coded[j] is None:
                column_codes, column_values = self._encode_values(
                    column[rows], known[j], learn, j
                )
            else:
                # The model's code of each category that occurs, then of
                # each row by its category's code.
                distinct, positions = coded_distinct_values(coded[j], j)
                value_codes, column_values = self._code_values(
                    distinct, known[j], learn
                )
                by_category = np.zeros(len(coded[j].categories), dtype=np.int64)
                by_category[positions] = value_codes
                column_codes = by_category[coded[j].codes[rows]]
            if learn and len(column_values) > self.max_categories:
                raise CategoryLimitError(
                    j,
                    f"has {len(column_values)} categories, more than "
                    f"max_categories={self.max_categories}",
                )
            codes[rows, j] = column_codes
            values.append(column_values)
        return codes, values

    def _refuse_missing(self, absent):
        """ValueError naming the columns of an object X that hold missing
        values, where ``absent`` (absent_values) is True (scikit-learn would
        say only "Input contains NaN")."""
        missing = np.flatnonzero(absent.any(axis=0)).tolist()
        if missing:
            raise missing_values_error(missing, self)

    @staticmethod
    def _encode_values(column, known, learn, name):
        """Codes of raw values; new values are appended to ``known`` if ``learn``.

        A value that is not known (and not learnt) gets a code past every
        category, which scores as an unseen category.
        """
        values, inverse = distinct_values(column, name)
        value_codes, known = CategoricalNB._code_values(values, known, learn)
        return value_codes[inverse.reshape(-1)], known

    @staticmethod
    def _code_values(values, known, learn):
        """The codes of distinct ``values`` in ``known``, to which new ones are
        appended if ``learn`` (else they get a code past every category), and
        the categories ``known`` then holds."""
        lookup = {value: code for code, value in enumerate(known.tolist())}
        new = [value for value in values.tolist() if value not in lookup]
        if learn and new:
            # (fromiter: values that are tuples stay one value each.)
            new_values = np.fromiter(new, dtype=object, count=len(new))
            known = np.concatenate([known.astype(object), new_values])
            lookup.update((value, len(lookup)) for value in new)
        unseen = np.iinfo(np.int64).max
        value_codes = np.array([lookup.get(value, unseen) for value in values.tolist()])
        return value_codes, known.astype(object)

    def _check_frame(self, frame, columns, y=None, *, reset, fitting):
        """A frame X, read as ``columns`` (fastnb._frames.read_frame), and y
        if ``fitting``, checked: ``(X, codes_columns, coded, y)``.

        scikit-learn checks the frame's feature names and count, then X as
        read (the array, which columns hold codes, the categorical columns'
        codes), and y. MixedNB hands its
        categorical family the FrameColumns it read from its frame, whose
        names it checked: only their count is checked here. With
        missing="error", missing values are refused naming their columns,
        whatever the columns' dtypes (those of an object X as it is
        encoded).
        """
        if isinstance(frame, FrameColumns):
            _check_n_features(self, frame.values, reset=reset)
        elif fitting:
            validate_data(self, frame, y, skip_check_array=True, reset=reset)
        else:
            validate_data(self, frame, skip_check_array=True, reset=reset)
        X = columns.values
        if fitting:
            X, y = check_X_y(X, y, dtype=None, ensure_all_finite=False, estimator=self)
        else:
            X = check_array(
                X, dtype=None, ensure_all_finite=False, estimator=self, input_name="X"
            )
        if not ignores_missing(self) and X.dtype != object:
            self._refuse_missing(absent_values(X))
        return X, columns.numbers, columns.coded, y

    def _check_X(self, X, scoring):
        # Codes are checked as they are scored (_score).
        coded = None
        columns = frame_columns(X)
        if columns is not None:
            X, codes_columns, coded, _ = self._check_frame(
                X, columns, reset=False, fitting=False
            )
        else:
            X = validate_input(
                self,
                X,
                dtype=None,
                accept_sparse=("csr", "csc"),
                ensure_all_finite=False,
                reset=False,
            )
            if sp.issparse(X):
                return sparse_codes(X, "csr")[0]
            codes_columns = column_kinds(X)
        # The categories of the state whose tables score X.
        codes, _ = self._encode(
            X, codes_columns, scoring.categories, learn=False, coded=coded
        )
        return codes

    # -- tables and scoring ---------------------------------------------------

    def _tables(self, statistics, params):
        counts = CategoryCounts(**statistics)
        prior = log_class_prior(
            counts.class_count, params["class_prior"], params["fit_prior"]
        )
        attributes, offsets, table = self._log_tables(counts, params, prior)
        intercept = pad_classes(prior)
        # Sparse rows start from the scores of a row of codes 0, unless a
        # term of code 0 is -inf or NaN (unsmoothed counts of 0): its
        # difference with another code's term would be infinite.
        zero_scores = np.empty_like(intercept)
        finite = _kernels.categorical_zero_scores(
            table, offsets, intercept, zero_scores, effective_n_threads(table.size)
        )
        # Raw values are coded by the categories of the tables' own state.
        return attributes, CategoricalScoring(
            offsets,
            table,
            intercept,
            prior,
            counts.categories,
            zero_scores if finite else None,
        )

    def _log_tables(self, statistics, params, class_log_prior):
        """``(attributes, offsets, table)``: the public attributes, and the
        log table with a row per category and one per feature for unseen
        ones, its classes padded to whole blocks, with each feature's first
        row."""
        n_categories = params["n_categories"]
        categories = statistics.categories
        n_classes = len(class_log_prior)
        offsets = table_offsets(n_categories, block_extra=1)
        counts = np.empty((offsets[-1], n_classes))
        table = np.empty_like(counts)
        # The scoring table, its classes padded to whole blocks.
        n_padded = padded_class_count(n_classes)
        padded = np.zeros((offsets[-1], n_padded))
        n_threads = effective_n_threads(counts.size)
        # Rows of categories seen; those min_categories adds get zero counts.
        _kernels.categorical_log_tables(
            np.ascontiguousarray(statistics.category_count, dtype=np.float64),
            table_offsets(category_sizes(categories), block_extra=0),
            offsets,
            row_pseudo_counts(params["alpha"], n_categories, offsets),
            counts,
            table,
            padded,
            thread_scratch(n_threads, n_classes)[:, 0],
            ignores_missing(self),
            n_threads,
        )
        # The lists of an array a feature are built when first read.
        attributes = {
            "feature_log_prob_": Deferred(feature_tables, table, n_categories, 1),
            "class_log_prior_": class_log_prior,
            "category_count_": Deferred(feature_tables, counts, n_categories, 1),
            "n_categories_": n_categories,
            "categories_": Deferred(categories_of, categories, n_categories),
        }
        return attributes, offsets, padded

    def _scorer(self, scoring, sparse):
        ignore = ignores_missing(self)
        offsets, table = scoring.offsets, scoring.table
        if not sparse:
            tables = (offsets, table, scoring.intercept, ignore)
            return _kernels.categorical_score_dense, tables
        # Canonical CSR codes (categorical_score_csr): the all-zeros row's
        # scores and each stored code's term less code 0's, or, where some
        # code 0's term is not finite, every feature's term.
        zero_scores = scoring.zero_scores
        every_feature = zero_scores is None
        intercept = scoring.intercept if every_feature else zero_scores
        tables = (offsets, table, intercept, every_feature, ignore)
        return _kernels.categorical_score_csr, tables

    def _refused_row(self, X, row):
        return bad_row_error(X, row, ignores_missing(self))

    # No category means "nothing": a class's terms are against their mean.
    _terms_against_class_mean = True

    def _zero_log_likelihood(self, scoring):
        # Each feature's category of code 0.
        n_classes = len(scoring.log_prior)
        return scoring.table[scoring.offsets[:-1], :n_classes]

    def _terms(self, X, scoring, selection):
        n_classes = len(scoring.log_prior)
        offsets = scoring.offsets
        table = scoring.table[:, :n_classes]
        zeros = table[offsets[:-1]]  # each feature's code 0
        if not np.isfinite(zeros).all():
            raise ValueError(
                "contributions are taken against category code 0, which is "
                "impossible in some class here (never seen, unsmoothed): fit "
                "with alpha > 0."
            )
        feature = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
        differences = selection.of(table - zeros[feature])
        # A missing value's feature has no term: against code 0's, minus it.
        missing_term = np.empty((0, differences.shape[1]))
        if ignores_missing(self):
            missing_term = np.ascontiguousarray(selection.of(-zeros))
        out = terms_output(X, differences.shape[1])
        n_threads = effective_n_threads(data_size(X) * differences.shape[1])
        if sp.issparse(X):
            bad = _kernels.categorical_terms_csr(
                *sparse_arrays(X), offsets, differences, missing_term, out, n_threads
            )
        else:
            bad = _kernels.categorical_terms_dense(
                X, offsets, differences, missing_term, out, n_threads
            )
        if bad >= 0:
            raise self._refused_row(X, bad)
        baseline = scoring.log_prior + zeros.sum(axis=0)
        return as_term_matrices(X, out), selection.of(baseline)

    def _informative_values(self):
        # Each category (not the row for categories never seen).
        log_probs, categories = self.feature_log_prob_, self.categories_
        return informative_values(
            np.repeat(np.arange(len(log_probs)), [t.shape[1] for t in log_probs]),
            np.concatenate([np.asarray(c, dtype=object) for c in categories]),
            np.concatenate([np.asarray(t).T for t in log_probs]),
        )
