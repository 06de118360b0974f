"""Category codes: a column checked as codes, or its raw values coded
(strings, booleans, a frame's categoricals by their codes), where values
are missing, and the algebra of a model's categories (their sizes, the
table's offsets, the categories of two states agreeing, nested or united).

CategoricalNB (fastnb._categorical) counts and scores the codes; MixedNB
hands it its categorical columns.
"""

import functools

import numpy as np
import scipy.sparse as sp

from fastnb._frames import factorized, missing_objects
from fastnb._labels import read_only
from fastnb._smoothing import MEstimate, pseudo_counts
from fastnb._statistics import SUM_RTOL
from fastnb._validation import refused_value_error, summed_duplicates

CODE_DTYPES = (np.int32, np.int64, np.float32, np.float64)


def column_kinds(X):
    """For each column of a validated 2-D array (not a frame: see
    fastnb._frames.read_frame): True if its values are codes, False if to
    be encoded.

    Integer and float arrays hold codes; any other (strings, objects,
    booleans) holds values to encode.
    """
    return np.full(X.shape[1], X.dtype.kind in "iuf")


# The largest code int64 holds: a larger unsigned code is unseen at predict.
LARGEST_CODE = np.iinfo(np.int64).max

# The kernels check codes against max_categories in float64 too: at most
# 2**53, which a double holds exactly (no table has that many rows).
LARGEST_LIMIT = 2**53


def code_error(value, feature, row, max_categories=None):
    """The ValueError for a bad category code, ``value`` at (row, feature).

    NaN and infinities get scikit-learn's message for them, and where they
    are, as the other families' (refused_value_error); negative and
    fractional codes, and at fit (``max_categories`` given) codes it
    refuses, one that names the feature, the row and the code.
    """
    if np.issubdtype(type(value), np.floating) and not np.isfinite(value):
        return refused_value_error(value, row, feature, "CategoricalNB")
    value = value.item() if isinstance(value, np.generic) else value
    where = f"feature {feature} has code {shown_code(value)} in row {row}"
    if value < 0:
        return ValueError(
            "Negative values in data passed to CategoricalNB (input X). The "
            f"first: {where}; codes must be integers >= 0."
        )
    if not float(value).is_integer():
        return ValueError(
            f"CategoricalNB: feature {feature} has non-integer codes ({value} in "
            f"row {row}); category codes must be whole numbers (or pass the raw "
            "values as strings)."
        )
    if max_categories is not None and value >= max_categories:
        return CategoryLimitError(
            feature,
            f"has code {shown_code(value)} in row {row}, which needs a table of "
            f"more than max_categories={max_categories} categories",
        )
    # Only a code past 2**53 below a larger max_categories gets here.
    return ValueError(f"CategoricalNB: {where}, too large for any table.")


class CategoryLimitError(ValueError):
    """A fit refused for the size of a feature's table: more categories than
    ``max_categories``. ``feature`` is the feature's position and ``found``
    what it holds (MixedNB names the column with them)."""

    def __init__(self, feature, found):
        super().__init__(
            f"CategoricalNB: feature {feature} {found}; raise max_categories if "
            "the feature really has that many."
        )
        self.feature = feature
        self.found = found


def mixed_values_error(feature):
    """The ValueError for a feature whose raw values cannot be ordered."""
    return ValueError(
        f"CategoricalNB: feature {feature} mixes values that cannot be compared "
        "(for example numbers and strings)."
    )


def unhashable_values_error(feature, exc):
    """The ValueError for a feature holding raw values that cannot be
    categories (a list, a dict: ``exc`` is the TypeError they raised)."""
    return ValueError(
        f"CategoricalNB: feature {feature} holds values that cannot be "
        f"categories ({exc}); categories must be hashable, such as strings, "
        "numbers, booleans or tuples."
    )


def distinct_values(column, name):
    """A column's distinct values, sorted, and each row's index in them:
    ``numpy.unique(column, return_inverse=True)``, found by hashing each
    value once (fastnb._frames.factorized) and sorting only
    the distinct ones. (numpy.unique sorts every row of an object column by
    Python comparisons: 5 ms for Adult's 16,281 test rows of one column of
    strings, against 0.3 ms.) ``name`` is the feature, for the errors.
    """
    try:
        first_seen, distinct = factorized(column)
    except TypeError as exc:
        raise unhashable_values_error(name, exc) from exc
    try:
        order = sorted(range(len(distinct)), key=distinct.__getitem__)
    except TypeError as exc:
        raise mixed_values_error(name) from exc
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    # (fromiter: values that are tuples stay one value each.)
    values = np.fromiter((distinct[i] for i in order), dtype=object, count=len(order))
    return values, rank[first_seen]


def shown_code(value):
    """A code as error messages show it: whole numbers below 2**64 as integers."""
    if float(value).is_integer() and abs(float(value)) < 2.0**64:
        return int(value)
    return value


def bad_codes(codes, allow_nan=False):
    """Where codes are not whole numbers >= 0 (or are infinite), element-wise;
    NaN is not bad with ``allow_nan`` (missing="ignore")."""
    if codes.dtype.kind in "iu":
        return codes < 0
    with np.errstate(invalid="ignore"):
        bad = ~(codes >= 0) | ~np.isfinite(codes) | (codes != np.floor(codes))
    if allow_nan:
        bad &= ~np.isnan(codes)
    return bad


def absent_values(X, coded=None):
    """Where a 2-D array of codes or values holds a missing value: NaN in
    floats (never in integers), missing_objects in objects; a column read by
    its codes (``coded``: fastnb._frames.FrameColumns.coded) where its code
    is -1."""
    if X.dtype.kind == "f":
        return np.isnan(X)
    if X.dtype.kind in "iu":
        return np.zeros(X.shape, dtype=bool)
    if coded is None or all(column is None for column in coded):
        return missing_objects(X)
    absent = np.empty(X.shape, dtype=bool)
    for j, column in enumerate(coded):
        if column is None:
            absent[:, j] = missing_objects(X[:, j])
        else:
            absent[:, j] = column.codes < 0
    return absent


def coded_distinct_values(coded, name):
    """A categorical column's distinct present values, from its codes
    (fastnb._frames.CategoryCodes): the categories that occur, sorted, and
    their positions among the column's categories. No value of a row is
    hashed."""
    # (Shifted by one: the missing rows' code -1 counts in bin 0.)
    occurs = np.bincount(coded.codes + 1, minlength=len(coded.categories) + 1)[1:]
    seen = np.flatnonzero(occurs)
    distinct = coded.categories[seen].tolist()
    try:
        order = sorted(range(len(distinct)), key=distinct.__getitem__)
    except TypeError as exc:
        raise mixed_values_error(name) from exc
    # (fromiter: values that are tuples stay one value each.)
    values = np.fromiter((distinct[i] for i in order), dtype=object, count=len(order))
    return values, seen[order]


def checked_codes(column, name, max_categories=None, allow_nan=False):
    """A column of codes as non-negative integers; ValueError otherwise.

    With ``max_categories`` (fitting), a code must also be below it. With
    ``allow_nan``, NaN (a missing value) is kept, and the column is float.
    The error is about the column's first bad code.
    """
    if column.dtype.kind not in "iuf":
        try:
            column = column.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"CategoricalNB: feature {name} mixes numbers with other values."
            ) from exc
    bad = bad_codes(column, allow_nan)
    if max_categories is not None:
        bad |= column >= max_categories
    if bad.any():
        row = int(np.argmax(bad))
        raise code_error(column[row], name, row, max_categories)
    return column


def as_int64_codes(column):
    """Checked codes as int64; unsigned codes too large for it become LARGEST_CODE."""
    if column.dtype.kind == "u" and column.dtype.itemsize == 8:
        column = np.minimum(column, LARGEST_CODE)
    return column.astype(np.int64)


def kernel_codes(X):
    """A numeric matrix of codes as the kernels read it (X itself if they can).

    The same values in a kernel dtype (int32, int64, float32, float64);
    unsigned codes too large for int64 become LARGEST_CODE.
    """
    if X.dtype in CODE_DTYPES:
        return X
    if X.dtype.kind == "f":
        return X.astype(np.float64)
    return as_int64_codes(X)


def sparse_codes(X, format):
    """A sparse X of codes as the kernels read it, and X as it is read.

    Both in ``format`` ("csr" or "csc") and canonical, repeated entries
    summed as ``X.toarray()`` sums them (copies only where needed); the
    first has its stored codes in a kernel dtype (see kernel_codes) and the
    same index arrays. ValueError unless X holds numbers.
    """
    if X.dtype.kind not in "iuf":
        raise ValueError(
            "CategoricalNB reads a sparse X as category codes (0 where nothing is "
            f"stored), which must be numbers; got a sparse matrix of {X.dtype}. "
            "Convert it to integer codes (X.astype(np.int32)), or pass the raw "
            "values in a dense array."
        )
    X = summed_duplicates(X.asformat(format))
    data = kernel_codes(X.data)
    if data is X.data:
        return X, X
    codes = type(X)((data, X.indices, X.indptr), shape=X.shape, copy=False)
    return codes, X


def stored_position(X, position):
    """(row, column) of the value stored at ``position`` of a CSR or CSC X."""
    major = int(np.searchsorted(X.indptr, position, side="right")) - 1
    minor = int(X.indices[position])
    return (minor, major) if X.format == "csc" else (major, minor)


def bad_row_error(X, row, allow_nan=False):
    """The ValueError for the first bad code of row ``row`` of checked X
    (codes, dense or CSR), which a kernel reported; NaN is not bad with
    ``allow_nan``."""
    if sp.issparse(X):
        start, stop = X.indptr[row], X.indptr[row + 1]
        first = start + int(np.argmax(bad_codes(X.data[start:stop], allow_nan)))
        return code_error(X.data[first], int(X.indices[first]), row)
    column = int(np.argmax(bad_codes(X[row], allow_nan)))
    return code_error(X[row, column], column, row)


def row_pseudo_counts(alpha, n_categories, offsets):
    """The pseudo-count of each row of the log tables, for a checked ``alpha``.

    The rows are each feature's categories, then one for unseen ones (the
    m-estimate's prior gives these no share: they get uniform's).
    """
    n_features = len(n_categories)
    feature = np.repeat(np.arange(n_features), n_categories + 1)
    # (A feature of no categories, never seen with missing="ignore", has
    # only its unseen row, which categorical_log_tables makes 0.)
    uniform = 1.0 / np.maximum(n_categories, 1)[feature]
    if isinstance(alpha, MEstimate):
        share = None
        if alpha.prior is not None:
            seen = np.arange(len(feature)) - offsets[feature] < n_categories[feature]
            share = uniform.copy()
            share[seen] = np.concatenate(alpha.prior)
        alpha = MEstimate(np.broadcast_to(alpha.m, (n_features,))[feature], share)
    else:
        alpha = np.broadcast_to(alpha, (n_features,))[feature]
    pseudo, _ = pseudo_counts(alpha, uniform)
    return np.ascontiguousarray(np.broadcast_to(pseudo, feature.shape), np.float64)


def check_categories_agree(statistics, missing=False):
    """Check what fitting makes sure of, of CategoricalNB's statistics (its
    record, CategoryCounts): each feature's categories unique
    (codes, those of a column of codes, 0 .. n - 1), and its counts summing
    to the class counts (to rounding); with ``missing`` (missing="ignore"),
    at most to the class counts, a feature's missing values being left
    out."""
    class_count = statistics.class_count
    start = 0
    for feature, values in enumerate(statistics.categories):
        if values.dtype.kind in "iu":
            if not np.array_equal(values, np.arange(len(values))):
                raise ValueError(
                    f"Statistic 'categories' of feature {feature} must be the "
                    f"codes 0 to {len(values) - 1}, as of a column of codes."
                )
        elif len(set(values.tolist())) != len(values):
            raise ValueError(
                f"Statistic 'categories' of feature {feature} holds a value twice."
            )
        end = start + len(values)
        total = statistics.category_count[start:end].sum(axis=0)
        if missing:
            if (total > class_count * (1 + SUM_RTOL)).any():
                raise ValueError(
                    f"Statistic 'category_count' of feature {feature} adds up to "
                    "more than class_count."
                )
        elif not np.allclose(total, class_count, rtol=SUM_RTOL, atol=0.0):
            raise ValueError(
                f"Statistic 'category_count' of feature {feature} does not add "
                "up to class_count."
            )
        start = end


def code_sizes(categories):
    """Each feature's number of categories (int64) when every feature's
    are codes, as a model fitted on columns of codes has; else None. (A
    model's categories that are integers are the codes 0 .. n - 1:
    check_categories_agree.)"""
    if any(c.dtype.kind not in "iu" for c in categories):
        return None
    return category_sizes(categories)


def category_sizes(categories):
    """The number of categories of each feature, as an int64 array."""
    return np.fromiter(map(len, categories), dtype=np.int64, count=len(categories))


def table_offsets(n_categories, block_extra):
    """First row of each feature's block in a flat table, and the end.

    A block holds a row per category plus ``block_extra`` (the log tables
    keep one more row per feature, for categories never seen).
    """
    offsets = np.zeros(len(n_categories) + 1, dtype=np.intp)
    np.cumsum(np.asarray(n_categories) + block_extra, out=offsets[1:])
    return offsets


def categories_of(categories, n_categories):
    """Each feature's categories, for ``categories_``: those of a column of
    codes are its codes 0 .. n - 1, n its ``n_categories_``."""
    return [
        code_range(n) if c.dtype.kind in "iu" else c
        for c, n in zip(categories, n_categories, strict=True)
    ]


def feature_tables(table, n_categories, block_extra):
    """Views of a flat table, one (n_classes, n_categories[i]) array a feature."""
    starts = table_offsets(n_categories, block_extra)[:-1]
    return [table[a : a + n].T for a, n in zip(starts, n_categories, strict=True)]


def ranges(starts, lengths):
    """The integers start .. start + length - 1 of each pair, concatenated."""
    lengths = np.asarray(lengths, dtype=np.intp)
    ends = np.cumsum(lengths)
    return np.repeat(np.asarray(starts, dtype=np.intp) - (ends - lengths), lengths) + (
        np.arange(ends[-1] if len(ends) else 0, dtype=np.intp)
    )


# Columns of codes of at most this many categories share the array of
# their categories (code_range).
SHARED_CODE_RANGE = 4096


@functools.lru_cache(maxsize=64)
def shared_code_range(n):
    """A read-only array of the codes 0 .. n - 1, one for each n: a view of
    a read-only array, so that no one can make it writeable."""
    return read_only(np.arange(n, dtype=np.int64))[:]


def code_range(n):
    """The categories of a column of codes with n categories: 0 .. n - 1, as
    int64. Up to SHARED_CODE_RANGE, one read-only array for each n, which
    every model shares (nothing changes categories in place): a batch that
    brings no new category then has the model's own arrays."""
    n = int(n)
    if n <= SHARED_CODE_RANGE:
        return shared_code_range(n)
    return np.arange(n, dtype=np.int64)


def same_categories(first, second):
    """Whether two lists of categories are the same, feature by feature."""
    if first is second or all(a is b for a, b in zip(first, second, strict=True)):
        return True
    if any(
        len(a) != len(b) or a.dtype != b.dtype
        for a, b in zip(first, second, strict=True)
    ):
        return False
    return not first or np.array_equal(np.concatenate(first), np.concatenate(second))


def nested_categories(first, second):
    """united_categories where, in every feature, one list of categories
    starts with the other (as category codes 0 .. n - 1 do), all of one
    numeric dtype: found in a few passes over all features at once, not a
    loop over them. None otherwise."""
    dtypes = {a.dtype for a in first} | {b.dtype for b in second}
    if len(dtypes) != 1 or dtypes.pop().kind not in "iuf":
        return None
    a_lengths = np.fromiter(map(len, first), dtype=np.intp, count=len(first))
    b_lengths = np.fromiter(map(len, second), dtype=np.intp, count=len(second))
    shared = np.minimum(a_lengths, b_lengths)
    a_starts = np.cumsum(a_lengths) - a_lengths
    b_starts = np.cumsum(b_lengths) - b_lengths
    a_values, b_values = np.concatenate(first), np.concatenate(second)
    if not np.array_equal(
        a_values[ranges(a_starts, shared)], b_values[ranges(b_starts, shared)]
    ):
        return None
    united_lengths = np.maximum(a_lengths, b_lengths)
    starts = np.cumsum(united_lengths) - united_lengths
    return (
        [b if len(a) <= len(b) else a for a, b in zip(first, second, strict=True)],
        ranges(starts, a_lengths),
        ranges(starts, b_lengths),
    )


def united_categories(first, second):
    """Each feature's categories of both, and where each one's rows go.

    Per feature the union keeps ``first``'s categories in order, then
    ``second``'s new ones in ``second``'s order (where one list starts with
    the other, the longer). Returns the united categories and, for each
    input, the row of the united flat table that each of its rows becomes.
    """
    united = nested_categories(first, second)
    if united is not None:
        return united
    united, first_rows, second_rows = [], [], []
    start = 0
    for a, b in zip(first, second, strict=True):
        if len(a) <= len(b) and np.array_equal(b[: len(a)], a):
            union, a_at, b_at = b, np.arange(len(a)), np.arange(len(b))
        elif len(b) < len(a) and np.array_equal(a[: len(b)], b):
            union, a_at, b_at = a, np.arange(len(a)), np.arange(len(b))
        else:
            position = {value: i for i, value in enumerate(a.tolist())}
            new = [v for v in b.tolist() if v not in position]
            position.update((v, len(a) + i) for i, v in enumerate(new))
            union = np.concatenate([a.astype(object), np.array(new, dtype=object)])
            a_at = np.arange(len(a))
            b_at = np.array([position[v] for v in b.tolist()], dtype=np.intp)
        united.append(union)
        first_rows.append(start + a_at)
        second_rows.append(start + b_at)
        start += len(union)
    return (
        united,
        np.concatenate(first_rows).astype(np.intp),
        np.concatenate(second_rows).astype(np.intp),
    )
