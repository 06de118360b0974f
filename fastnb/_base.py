"""What every fastnb estimator shares.

The state protocol's hooks (declared abstract in BaseNB), the one fit and
partial_fit flow over them, labels and priors, sample weights, the thread
count, the all-or-nothing rule for fitting, the lazily rebuilt tables, and
the four prediction methods, which all come from one scoring call.
"""

from __future__ import annotations

import copy
import functools
import os
import threading
import weakref
from abc import ABCMeta, abstractmethod
from collections.abc import Callable
from numbers import Real
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics import accuracy_score
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import (
    _check_n_features,
    check_is_fitted,
    validate_data,
)

from fastnb._array_api import (
    as_numpy,
    check_fit_namespace,
    in_namespace,
    input_namespace,
    keep_fit_namespace,
)
from fastnb._config import check_table_bytes
from fastnb._simd import kernels as _kernels

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from fastnb._typing import MatrixLike

FLOAT_DTYPES = (np.float64, np.float32)

# Values a kernel must touch to be worth each extra thread: waking a thread
# costs more than small inputs save, and on a busy machine far more.
WORK_PER_THREAD = 1 << 16


def effective_n_threads(work=None):
    """Number of threads the kernels use: OpenMP's limit, capped by usable CPUs.

    OpenMP's limit follows ``OMP_NUM_THREADS`` and ``threadpoolctl``. With
    ``work`` (how many values the kernel touches: nonzeros, or rows x
    columns), inputs of less than 2 * WORK_PER_THREAD values get one thread.
    Any other gets them all, never a team of a size between: GCC's OpenMP
    runtime ends the threads a smaller team leaves idle, and starts them
    again for the next larger one (on 16 cores, 13 threads ended and
    started again on every predict, whose last step had work for 3).
    """
    if work is not None and work < 2 * WORK_PER_THREAD:
        return 1  # without asking the system: small inputs are most calls
    if hasattr(os, "sched_getaffinity"):
        n_cpus = len(os.sched_getaffinity(0))
    else:
        n_cpus = os.cpu_count() or 1
    return max(1, min(_kernels.openmp_max_threads(), n_cpus))


def data_size(X):
    """How many values of X a kernel reads: nonzeros if sparse, else all."""
    return X.nnz if hasattr(X, "nnz") else X.size


def index_arrays(X):
    """indices, indptr of a CSR/CSC/BSR matrix, contiguous, in one index dtype.

    int32 if both are, else int64 (values checked by check_sparse_structure
    fit in it).
    """
    int32 = np.dtype(np.int32)
    index_dtype = np.int32 if X.indices.dtype == X.indptr.dtype == int32 else np.int64
    return (
        np.ascontiguousarray(X.indices, dtype=index_dtype),
        np.ascontiguousarray(X.indptr, dtype=index_dtype),
    )


def sparse_arrays(X):
    """data, indices, indptr of a CSR/CSC matrix, contiguous, for a kernel."""
    return (np.ascontiguousarray(X.data), *index_arrays(X))


def check_sparse_structure(X):
    """Refuse a sparse X whose indices point outside its shape or its arrays.

    scipy's format conversions and fastnb's kernels trust a matrix's index
    arrays, which anyone can set (``X.indices[0] = 10**9``). Checked: the
    index pointers and indices of CSR, CSC and BSR matrices (in one parallel
    pass, sparse_structure_error), the coordinates of COO ones, and that each
    LIL row has as many values as columns. Returns whether X's indices were
    checked (those of the other formats, LIL's included, are checked once
    scipy has converted them).
    """
    if not sp.issparse(X):
        return False
    name = f"X is a malformed {X.format.upper()} matrix"
    if X.format == "lil":
        # scipy's conversion trusts each row's values to match its columns.
        if len(X.rows) != X.shape[0] or len(X.data) != X.shape[0]:
            raise ValueError(f"{name}: X.rows and X.data must have a list a row.")
        for i, (columns, values) in enumerate(zip(X.rows, X.data, strict=True)):
            if len(columns) != len(values):
                raise ValueError(
                    f"{name}: row {i} has {len(columns)} columns in X.rows but "
                    f"{len(values)} values in X.data."
                )
        return False
    if X.format not in ("csr", "csc", "bsr", "coo"):
        return False
    if X.format == "coo":
        for axis, (attribute, what) in enumerate((("row", "row"), ("col", "column"))):
            coordinate = getattr(X, attribute)
            check_index_array(coordinate, f"X.{attribute}", name)
            if len(coordinate) != len(X.data):
                raise ValueError(f"{name}: X.{attribute} and X.data differ in length.")
            outside = np.flatnonzero((coordinate < 0) | (coordinate >= X.shape[axis]))
            if len(outside):
                raise ValueError(
                    f"{name}: stored value {outside[0]} has {what} index "
                    f"{coordinate[outside[0]]}, outside 0 .. {X.shape[axis] - 1}."
                )
        return True
    major = 1 if X.format == "csc" else 0
    blocks = X.blocksize if X.format == "bsr" else (1, 1)
    n_major = X.shape[major] // blocks[major]
    n_minor = X.shape[1 - major] // blocks[1 - major]
    major_name, minor_name = ("column", "row") if major else ("row", "column")
    if X.format == "bsr":
        major_name, minor_name = f"block {major_name}", f"block {minor_name}"
    check_index_array(X.indices, "X.indices", name)
    check_index_array(X.indptr, "X.indptr", name)
    if len(X.indptr) != n_major + 1:
        raise ValueError(
            f"{name}: X.indptr has {len(X.indptr)} entries; X has {n_major} "
            f"{major_name}s, so it must have {n_major + 1}."
        )
    if len(X.data) != len(X.indices):
        raise ValueError(f"{name}: X.indices and X.data differ in length.")
    if X.indptr[0] != 0:
        raise ValueError(f"{name}: X.indptr must start at 0; got {X.indptr[0]}.")
    indices, indptr = index_arrays(X)
    n_threads = effective_n_threads(len(indices))
    bad, canonical = _kernels.sparse_structure_error(
        indices, indptr, n_minor, n_threads
    )
    if bad < 0:
        if X.format != "bsr":
            # Known now, whatever scipy had cached (summed_duplicates reads it).
            X.has_canonical_format = canonical
        return True
    start, stop = int(X.indptr[bad]), int(X.indptr[bad + 1])
    if not 0 <= start <= stop <= len(X.indices):
        raise ValueError(
            f"{name}: {major_name} {bad} has offsets X.indptr[{bad}:{bad + 2}] "
            f"= [{start}, {stop}]; offsets must be non-decreasing, from 0 to at "
            f"most {len(X.indices)} (the number of stored values)."
        )
    stored = X.indices[start:stop]
    index = stored[(stored < 0) | (stored >= n_minor)][0]
    raise ValueError(
        f"{name}: {major_name} {bad} has {minor_name} index {index}, outside "
        f"0 .. {n_minor - 1}."
    )


def check_index_array(array, name, matrix):
    """A sparse matrix's index array must be a 1-D integer array."""
    if (
        not isinstance(array, np.ndarray)
        or array.ndim != 1
        or array.dtype.kind not in "iu"
    ):
        raise ValueError(
            f"{matrix}: {name} must be a 1-D integer array; got "
            f"{getattr(array, 'dtype', type(array).__name__)}."
        )


def validate_input(estimator, X, *args, **kwargs):
    """scikit-learn's ``validate_data``, with a sparse X's structure checked.

    Before scipy converts X to an accepted format, since its conversions
    trust the structure; after, if X was of a format not checked before.
    Stored values past the last offset are left out (stored_values_only).

    Input that ``check_array`` and ``check_X_y`` would return as it is (see
    taken_as_is) skips them: only the feature names and count are checked,
    by ``validate_data`` itself, which saves most of its fixed cost (80 us of
    a partial_fit's 300, 35 of a one-row predict's 75); for a NumPy array
    or scipy matrix when the model has no feature names, only the count, by
    scikit-learn's own check (and message).
    """
    if taken_as_is(X, *args, **kwargs):
        check_sparse_structure(X)
        X = stored_values_only(X)
        if getattr(estimator, "feature_names_in_", None) is None and (
            not args or args[0] is not None
        ):
            # A NumPy array or scipy matrix has no feature names, nor had the
            # model's data: only the count is checked (validate_data's checks
            # of names and tags cost more than all the rest of a small
            # partial_fit).
            _check_n_features(estimator, X, reset=kwargs.get("reset", True))
            return (X, *args) if args else X
        return validate_data(
            estimator,
            X,
            *args,
            reset=kwargs.get("reset", True),
            skip_check_array=True,
        )
    checked = check_sparse_structure(X)
    validated = validate_data(estimator, stored_values_only(X), *args, **kwargs)
    if checked:
        return validated
    if isinstance(validated, tuple):
        check_sparse_structure(validated[0])
        return (stored_values_only(validated[0]), *validated[1:])
    check_sparse_structure(validated)
    return stored_values_only(validated)


def stored_values_only(X):
    """X, or a CSR or CSC X whose index pointers end before its last stored
    values as a new matrix of the values they point to (views of X's
    arrays, not copies); its structure checked before.

    Values past the last offset are not part of the matrix, but scipy's
    operations assume there are none: its column indexing (MixedNB's
    columns of a family) writes past the arrays it makes for them.
    """
    if not sp.issparse(X) or X.format not in ("csr", "csc"):
        return X
    n_stored = int(X.indptr[-1])
    if n_stored == len(X.indices):
        return X
    stored = type(X)((X.data[:n_stored], X.indices[:n_stored], X.indptr), shape=X.shape)
    stored.has_canonical_format = X.has_canonical_format
    return stored


def taken_as_is(
    X,
    y=None,
    *,
    dtype="numeric",
    ensure_all_finite=True,
    reset=True,
    accept_sparse=None,
    **other,
):
    """Whether check_array (and check_X_y, given y) would return X (and y)
    unchanged, with these arguments (check_array's defaults), raising and
    warning nothing: X a NumPy array, or a scipy CSR or CSC matrix or array
    of a format in ``accept_sparse`` (not subclasses), of two non-empty
    dimensions, of a dtype in ``dtype``, a list or tuple (or, for None, a
    real number dtype), with no scan of its values asked for; y a 1-D
    contiguous array of integers or booleans (no value to check) of X's
    length. ``reset`` changes nothing for such input; other arguments of
    check_array are not taken as is."""
    if other or ensure_all_finite:
        return False
    if type(X) in SPARSE_TAKEN_AS_IS:
        formats = (accept_sparse,) if isinstance(accept_sparse, str) else accept_sparse
        if not isinstance(formats, list | tuple) or X.format not in formats:
            return False
    elif type(X) is not np.ndarray:
        return False
    if X.ndim != 2 or 0 in X.shape:
        return False
    if dtype is None:
        if X.dtype.kind not in "fiu":
            return False
    elif not isinstance(dtype, list | tuple) or X.dtype not in dtype:
        return False
    return y is None or (
        type(y) is np.ndarray
        and y.ndim == 1
        and y.dtype.kind in "iub"
        and y.flags.c_contiguous
        and len(y) == X.shape[0]
    )


# The sparse containers that check_array returns as they are when of an
# accepted format and dtype.
SPARSE_TAKEN_AS_IS = (sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array)


# The `missing` parameter every estimator takes: "error" refuses NaN in X,
# as scikit-learn does; "ignore" takes it for a missing value, left out of
# its feature's statistics in fit and of its feature's term in scoring
# (marginalised, under the Naive Bayes assumption).
MISSING_CONSTRAINT = [StrOptions({"error", "ignore"})]


def ignores_missing(estimator):
    """Whether the estimator takes NaN in X for a missing value."""
    return getattr(estimator, "missing", "error") == "ignore"


def observed_count(count, missing):
    """The weight of each entry's observed values: the class weights less
    the missing weights, never below 0 by rounding, (n_classes, n_features);
    the class weights as a column (n_classes, 1) where missing is None."""
    if missing is None:
        return count[:, None]
    return np.maximum(count[:, None] - missing, 0.0)


def observed_weights(statistics):
    """Each class's weight of each feature's observed values (n_classes,
    n_features), from its statistics ``class_count`` and, kept with
    missing="ignore", ``missing_count``; the class weights as a column
    where none are missing."""
    return observed_count(statistics["class_count"], statistics.get("missing_count"))


def refused_value_error(value, row, column, name):
    """ValueError for a value of X that the estimator of class ``name``
    refuses: scikit-learn's message for it, then where the first such value
    is."""
    where = f"The first is {value} in row {row}, column {column}"
    if np.isnan(value):
        return ValueError(
            f"Input X contains NaN. {where}; {name} does not accept missing "
            "values encoded as NaN natively. Pass missing='ignore' to leave "
            "them out of the model."
        )
    if np.isinf(value):
        return ValueError(
            "Input X contains infinity or a value too large for "
            f"{np.asarray(value).dtype!r}. {where}."
        )
    return ValueError(f"Negative values in data passed to {name} (input X). {where}.")


def first_refused_in_row(X, row, non_negative, allow_nan=False):
    """(column, value) of the first value of row ``row`` of X that the
    kernels refuse (see fastnb_refused in _rows.h)."""
    if sp.issparse(X):
        start, stop = X.indptr[row], X.indptr[row + 1]
        columns, values = X.indices[start:stop], X.data[start:stop]
    else:
        values = np.asarray(X[row])
        columns = np.arange(len(values))
    refused = np.isinf(values) if allow_nan else ~np.isfinite(values)
    if non_negative:
        refused |= values < 0
    first = np.flatnonzero(refused)[0]
    return int(columns[first]), values[first]


def raise_refused_value(X, row, estimator, non_negative):
    """Raise ValueError for the first refused value of X, found in row ``row``
    by a scoring kernel (CSR or dense X)."""
    column, value = first_refused_in_row(
        X, row, non_negative, ignores_missing(estimator)
    )
    raise refused_value_error(value, row, column, type(estimator).__name__)


def check_values(X, estimator, non_negative):
    """Refuse X holding infinity, NaN (unless the estimator ignores missing
    values), or with ``non_negative`` a value below zero: in one parallel
    pass (first_refused_value), naming the first.

    For fitting, before anything is counted. The values of a sparse X are
    its stored ones; a dense X is read in its memory order (a copy only if
    it is neither C- nor F-contiguous).
    """
    if sp.issparse(X):
        values = np.ascontiguousarray(X.data)
    elif X.flags.c_contiguous:
        values = X.reshape(-1)
    elif X.flags.f_contiguous:
        values = X.T.reshape(-1)
    else:
        X = np.ascontiguousarray(X)
        values = X.reshape(-1)
    n_threads = effective_n_threads(len(values))
    bad = _kernels.first_refused_value(
        values, non_negative, ignores_missing(estimator), n_threads
    )
    if bad < 0:
        return
    if sp.issparse(X):
        major = int(np.searchsorted(X.indptr, bad, side="right")) - 1
        minor = int(X.indices[bad])
        row, column = (minor, major) if X.format == "csc" else (major, minor)
    elif X.flags.c_contiguous:
        row, column = divmod(bad, X.shape[1])
    else:
        column, row = divmod(bad, X.shape[0])
    raise refused_value_error(values[bad], row, column, type(estimator).__name__)


def summed_duplicates(X):
    """X with repeated sparse entries summed into one (a copy only if needed).

    For scores that are not linear in a value (binarized, squared,
    log-factorial), where a repeated entry must count as its sum, as in the
    canonical matrix.
    """
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def rows_by_class(y, n_classes):
    """Row indices grouped by class (each group in row order) and group offsets.

    For the kernels that make each class one task over CSR rows.
    """
    order = np.empty(len(y), dtype=np.intp)
    class_ptr = np.empty(n_classes + 1, dtype=np.intp)
    _kernels.class_order(y, order, class_ptr, effective_n_threads(len(y)))
    return order, class_ptr


def dense_block_width(n_features, n_threads):
    """Columns per task for the dense kernels that split the work by columns.

    Every task reads all rows, so a task gets at least 64 columns (narrower
    slices of a row cost a whole memory read each); at most 256, so that its
    slice of the statistics stays in cache; otherwise about two tasks a
    thread. The width does not change any result.
    """
    return int(min(max(-(-n_features // (2 * n_threads)), 64), 256))


def dense_row_chunks(n_samples, chunk_table_size):
    """Rows a chunk for the dense kernels that give each chunk of rows its
    own statistics (chunk_table_size doubles) and merge them in order.

    It depends on the data's shape only, never on the number of threads, so
    neither does the result. The rows are cut in CHUNKS chunks, four tasks
    a thread on 16 (a 50,000-row partial_fit batch too), but a chunk has at
    least CHUNK_ROWS rows, and the chunks' tables stay within about 32 MiB.
    """
    most_chunks = max(1, (32 << 20) // (8 * max(chunk_table_size, 1)))
    chunk_rows = max(CHUNK_ROWS, -(-n_samples // min(CHUNKS, most_chunks)))
    return chunk_rows, max(1, -(-n_samples // chunk_rows))


# dense_row_chunks' chunks: how many, and their least rows. Each chunk's
# statistics are merged into the others', at a cost: with 128 chunks, a
# 100,000 x 50 GaussianNB batch of 10 classes took 20% longer at one thread
# than with chunks of 2**16 rows, with 64 about 7% (and 5% less at two).
CHUNKS = 64
CHUNK_ROWS = 512


def padded_class_count(n_classes, block=None):
    """n_classes rounded up to whole class blocks: for kernels that score
    classes in full register blocks (CLASS_BLOCK, or ``block``)."""
    block = _kernels.CLASS_BLOCK if block is None else block
    return n_classes + -n_classes % block


def pad_classes(table, block=None):
    """table (rows, n_classes) with zero columns up to whole class blocks
    (``padded_class_count``)."""
    n_classes = table.shape[-1]
    n_padded = padded_class_count(n_classes, block)
    # One copy, C-contiguous, whatever the layout of table (often a
    # transposed view).
    padded = np.zeros((*table.shape[:-1], n_padded))
    padded[..., :n_classes] = table
    return padded


def thread_scratch(n_threads, n_classes):
    """Per-thread blocks of score rows for the scoring kernels,
    (n_threads, rows, n_classes), rows at most SCORE_ROWS.

    Each row has room past n_classes for the classes padded to whole blocks
    (see pad_classes; of either kernel block), and the threads' blocks are
    a spare row, at least a cache line (8 doubles), apart so that threads
    never write to the same line. A block holds at most 256 KiB (32768
    doubles), or a single row if one row is larger.
    """
    room = padded_class_count(n_classes, _kernels.KDE_CLASS_BLOCK)
    rows = max(1, min(_kernels.SCORE_ROWS, 32768 // room))
    blocks = np.empty((n_threads, rows + 1, room), dtype=np.float64)
    return blocks[:, :rows, :n_classes]


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


# Each model's guard, kept outside the model so that pickling, copying,
# cloning and comparing models never see it.
_STATE_GUARDS: weakref.WeakKeyDictionary[Any, StateGuard] = weakref.WeakKeyDictionary()


def state_guard(model):
    """The model's StateGuard, made on first use."""
    guard = _STATE_GUARDS.get(model)
    if guard is None:
        guard = _STATE_GUARDS.setdefault(model, StateGuard())
    return guard


def check_sample_weight(sample_weight, n_samples, allow_all_zero):
    """Return sample weights as a float64 array of shape (n_samples,), or None.

    ``None`` (unit weights) stays None. Weights must be finite and non-negative;
    all zero is refused unless ``allow_all_zero`` (a partial_fit batch may
    carry no weight, a fit must).
    """
    if sample_weight is None:
        return None
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
            f"sample_weight.shape == {weights.shape}, expected ({n_samples},)!"
        )
    weights = np.ascontiguousarray(weights)
    # One parallel pass for NaN, infinity and negative weights.
    bad = _kernels.first_refused_value(
        weights, True, False, effective_n_threads(n_samples)
    )
    if bad >= 0 and not np.isfinite(weights[bad]):
        raise ValueError("sample_weight contains NaN or infinity.")
    if bad >= 0:
        raise ValueError("sample_weight contains negative values.")
    if not allow_all_zero and n_samples and not weights.any():
        raise ValueError("sample_weight is zero for every sample: nothing to fit.")
    return weights


def label_words(labels):
    """A contiguous 1-D array of labels (numbers, booleans, fixed-width
    strings: any dtype but object) as rows of unsigned words, the widest
    that divide its item size (a <U12 label is 6 uint64), as the kernel
    take_labels copies them."""
    size = labels.dtype.itemsize
    word = next(w for w in (8, 4, 2, 1) if size % w == 0)
    return labels.view(f"u{word}").reshape(len(labels), size // word)


# Integer labels spanning at most this many values (greatest - least + 1)
# are encoded by table lookup in parallel kernels; others are sorted.
LOOKUP_SPAN = 1 << 16


def lookup_labels(y):
    """y as int64 if its labels are integers that int64 holds, else None."""
    if y.ndim != 1 or y.dtype.kind not in "iu" or not y.size:
        return None
    if y.dtype.kind == "u" and y.dtype.itemsize == 8:
        return None
    return np.ascontiguousarray(y, dtype=np.int64)


def encode_fit_labels(y, work=None):
    """Sorted classes and each label's index in them, for ``fit``.

    ``work``: the values the fit's kernels touch (their threads are awake
    for those anyway); by default the labels.
    """
    y = np.asarray(y)
    labels = lookup_labels(y)
    if labels is not None:
        # Integer labels are valid classes by their type: a table lookup,
        # no sort (check_classification_targets would sort).
        n_threads = effective_n_threads(len(labels) if work is None else work)
        lowest, highest = _kernels.label_range(labels, n_threads)
        span = highest - lowest + 1
        if span <= LOOKUP_SPAN:
            present = np.zeros((n_threads, span), dtype=np.uint8)
            _kernels.label_presence(labels, lowest, present, n_threads)
            present = present.any(axis=0)
            lookup = np.cumsum(present, dtype=np.intp) - 1
            y_encoded = np.empty(len(labels), dtype=np.intp)
            _kernels.encode_by_lookup(labels, lowest, lookup, y_encoded, n_threads)
            classes = (np.flatnonzero(present) + lowest).astype(y.dtype)
            return classes, y_encoded
    check_classification_targets(y)
    classes, y_encoded = np.unique(y, return_inverse=True)
    return classes, y_encoded.astype(np.intp, copy=False).reshape(-1)


def partial_fit_classes(estimator, classes):
    """The classes a ``partial_fit`` call works with, checked against earlier calls."""
    if not hasattr(estimator, "classes_"):
        if classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        if (
            isinstance(classes, np.ndarray)
            and classes.ndim == 1
            and classes.size
            and classes.dtype.kind in "iu"
        ):
            # What unique_labels makes of integers, without its checks of the
            # target's type, which integers always pass (most of its time).
            return np.unique(classes)
        return unique_labels(classes)
    if (
        classes is not None
        and not np.array_equal(estimator.classes_, classes)
        and not np.array_equal(estimator.classes_, np.unique(np.asarray(classes)))
    ):
        raise ValueError(
            f"`classes={classes!r}` is not the same as on last call to "
            f"partial_fit, was: {estimator.classes_!r}"
        )
    return estimator.classes_


def encode_labels(y, classes, work=None):
    """Index of each label of y in the sorted ``classes``; unknown labels raise.

    ``work``: as encode_fit_labels'.
    """
    y = np.asarray(y)
    labels = lookup_labels(y)
    class_codes = None if labels is None else lookup_labels(classes)
    if class_codes is not None:
        # Integer labels are valid classes by type: a table lookup, when the
        # classes are sorted and close together (class_lookup).
        table = _kernels.class_lookup(class_codes, LOOKUP_SPAN)
        if table is not None:
            y_encoded = np.empty(len(labels), dtype=np.intp)
            n_threads = effective_n_threads(len(labels) if work is None else work)
            if _kernels.encode_by_lookup(labels, *table, y_encoded, n_threads) < 0:
                return y_encoded
    elif y.dtype.kind not in "iu":
        check_classification_targets(y)
    y_encoded = np.searchsorted(classes, y)
    known = y_encoded < len(classes)
    known[known] = classes[y_encoded[known]] == y[known]
    if not known.all():
        raise unknown_labels_error(np.unique(y[~known]), classes)
    return y_encoded.astype(np.intp, copy=False)


def missing_values_error(columns, estimator):
    """The ValueError for missing values (NaN or None) in the named columns."""
    return ValueError(
        f"Input X contains missing values (NaN or None) in columns {columns}; "
        f"{type(estimator).__name__} with missing='error' does not take missing "
        "values: pass missing='ignore' to leave them out of the model, impute "
        "them, or make 'missing' a category of its own."
    )


def unknown_labels_error(unknown, classes):
    """The ValueError for labels of y that are not among ``classes``."""
    return ValueError(
        f"The target label(s) {unknown} in y do not exist in the initial classes "
        f"{classes}; pass every class to the first partial_fit call."
    )


def check_class_prior(class_prior, n_classes, name="class_prior"):
    """Return a given class prior as float64 probabilities of n_classes, or None.

    The prior must have one finite, non-negative value per class, summing to
    one (scikit-learn's messages for GaussianNB's ``priors``).
    """
    if class_prior is None:
        return None
    try:
        prior = np.asarray(class_prior, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of numbers.") from exc
    if len(prior) != n_classes:
        raise ValueError("Number of priors must match number of classes.")
    if not np.isfinite(prior).all():
        raise ValueError(f"{name} contains NaN or infinity.")
    if (prior < 0).any():
        raise ValueError("Priors must be non-negative.")
    if not np.isclose(prior.sum(), 1.0):
        raise ValueError("The sum of the priors should be 1.")
    return prior


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


def class_weights(y, sample_weight, n_classes, work=None):
    """Weighted number of samples of each class (float64, n_classes), summed
    by a parallel kernel.

    ``work``: the values the call's other kernels touch (its threads are
    awake for those anyway); by default the labels.
    """
    weights = np.zeros(n_classes)
    n_threads = effective_n_threads(len(y) if work is None else work)
    _kernels.class_weights(
        y, weights_or_ones(sample_weight, len(y)), weights, n_threads
    )
    return weights


def weights_or_ones(sample_weight, n_samples):
    """The checked sample weights, or unit weights when none were given (None):
    a read-only view of one 1.0 (stride 0), which the counting and moments
    kernels take."""
    if sample_weight is None:
        # (A view of UNIT_WEIGHT: a fifth of np.broadcast_to's cost.)
        return np.ndarray(
            (n_samples,), dtype=np.float64, buffer=UNIT_WEIGHT, strides=(0,)
        )
    return sample_weight


def read_only(array):
    """``array``, made read-only (fitted arrays change only by fitting)."""
    array.flags.writeable = False
    return array


# The one value every unit weight of weights_or_ones views.
UNIT_WEIGHT = read_only(np.ones(1))


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


class BaseNB(ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Fitting and prediction shared by every fastnb estimator.

    A fitted model is its constructor parameters, ``classes_``,
    ``n_features_in_`` (and ``feature_names_in_``) and a dict of named
    sufficient statistics, ``_statistics`` (see :mod:`fastnb._state`); its
    tables are a cache, rebuilt from the statistics once after they change.
    ``fit``, ``partial_fit``, ``fastnb.get_state`` and ``fastnb.from_state``
    all go through the hooks below, which each family implements; none of
    them changes the estimator (but ``_add_batch``, once nothing can fail),
    so a fit that raises leaves it as it was.

    Fitting: ``_check_batch`` -> ``_fit_statistics`` (``_largest_table``
    checked against fastnb's max_table_bytes, then ``_batch_statistics``;
    ``partial_fit``: ``_add_batch``, which combines them with the model's)
    -> ``_table_params`` -> (lazily) ``_tables``.
    Predicting: ``_check_X`` -> ``_score``. Before every prediction and
    partial_fit, ``classes_`` and ``n_features_in_`` are checked against the
    statistics' shapes.
    """

    # Statistic name -> the axis that runs over classes, for statistics that
    # have one (aligning two models' classes in fastnb._state.combine_states).
    _class_axes: dict = {"class_count": 0}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = ignores_missing(self)
        # Arrays of other array-API libraries are taken in NumPy, and the
        # predictions given back in X's namespace (fastnb._array_api).
        tags.array_api_support = True
        return tags

    def __sklearn_is_fitted__(self):
        """Whether the model has fitted statistics (scikit-learn's
        check_is_fitted asks this, instead of looking for attributes whose
        names end in an underscore)."""
        return "_statistics" in vars(self)

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
    def _empty_statistics(self, n_classes, batch):
        """Statistics of no data over the features of a checked ``batch``.

        The identity of ``_combine_statistics``.
        """

    @abstractmethod
    def _batch_statistics(self, batch, y, sample_weight, n_classes):
        """Sufficient statistics of a checked batch, in new arrays.

        ``y`` holds class indices 0..n_classes-1; ``sample_weight`` is a
        checked float64 array, or None for unit weights.
        """

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
    def _combine_statistics(self, first, second):
        """The statistics of the union of the two batches behind ``first`` and
        ``second`` (over the same classes), in new arrays; neither is changed."""

    @abstractmethod
    def _statistic_names(self, statistics):
        """The names of the statistics a model of these parameters keeps
        (MixedNB's depend on the families ``statistics`` holds; the other
        families' on the parameters alone, missing="ignore" adding some)."""

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

    @abstractmethod
    def _check_statistic_values(self, statistics, n_classes, n_features, values):
        """_check_statistics for statistics of the right names."""

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

    @abstractmethod
    def _score(self, X, scoring, output, out, labels):
        """Score checked X with the ``scoring`` tables.

        Fills ``out`` (n_samples, n_classes) with joint log-likelihoods, log
        probabilities or probabilities, or ``labels`` with the best class
        index, as the kernels' ``output`` constant asks.
        """

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
        have one."""
        return {
            key: axis for key, axis in self._class_axes.items() if key in statistics
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
        self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> Self:
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
        namespace = input_namespace(X)
        # Arrays of other array-API libraries are read in NumPy.
        batch, labels = self._check_batch(as_numpy(X), as_numpy(y), reset=True)
        weights = check_sample_weight(
            as_numpy(sample_weight), len(labels), allow_all_zero=False
        )
        # (n_features_in_: set by the check; the batch may be a family's dict.)
        classes, codes = encode_fit_labels(labels, len(labels) * self.n_features_in_)
        statistics = self._fit_statistics(batch, codes, weights, len(classes))
        self._set_state(classes, statistics)
        keep_fit_namespace(self, namespace)
        self._final_tables()
        return self

    @unchanged_on_error
    def partial_fit(
        self,
        X: MatrixLike,
        y: ArrayLike,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> Self:
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
        namespace = input_namespace(X)
        if not first_call:
            self._check_fitted_state()
            check_fit_namespace(self, namespace, "partial_fit")
        # Arrays of other array-API libraries are read in NumPy.
        known = partial_fit_classes(self, as_numpy(classes))
        batch, labels = self._check_batch(as_numpy(X), as_numpy(y), reset=first_call)
        weights = check_sample_weight(
            as_numpy(sample_weight), len(labels), allow_all_zero=True
        )
        codes = encode_labels(labels, known, len(labels) * self.n_features_in_)
        if first_call:
            statistics = self._fit_statistics(batch, codes, weights, len(known))
            self._set_state(known, statistics)
            keep_fit_namespace(self, namespace)
            return self
        # The count families add the batch into the model's own arrays: with
        # the lock held, predictions meanwhile score with the last tables built.
        with state_guard(self).lock:
            statistics = self._add_batch(
                self._statistics, batch, codes, weights, len(known)
            )
            self._set_state(known, statistics)
        return self

    def _set_state(self, classes, statistics):
        """Make ``statistics`` over ``classes`` the model's state.

        The parameters are checked against them first (which may raise); the
        tables are rebuilt when next needed.
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
        from fastnb._state import adopt_state, state_of  # it imports this module

        state = dict(state)
        built = state.pop("_cache", {})
        super().__setstate__(state)
        if "_statistics" in vars(self):
            adopt_state(self, state_of(self, self.classes_, self._statistics))
            if isinstance(built, dict) and "tables" in built:
                self._final_tables()

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
        n_classes = len(self._statistics["class_count"])
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
        try:
            self._check_statistics(
                self._statistics, n_classes, n_features, values=False
            )
        except ValueError as exc:
            raise ValueError(
                f"n_features_in_={n_features} does not match the fitted "
                f"statistics: {exc}"
            ) from exc

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
        scikit-learn's array_api_dispatch is on (fastnb._array_api)."""
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
            from fastnb._explain import check_cost  # it imports this module

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
            pair too. Always float64.

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
        """
        from fastnb._explain import Contributions, class_selection, read_terms

        self._check_fitted_state()
        selection, mode = class_selection(self.classes_, classes)
        # Arrays of other array-API libraries are read in NumPy; the terms
        # are NumPy's (or SciPy's).
        scoring = self._final_tables()[1]
        X = self._check_X(as_numpy(X), scoring)
        return Contributions(*read_terms(self, X, scoring, selection, mode))

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
        from fastnb._explain import feature_names_of, rank_features

        self._check_fitted_state()
        if n is not None and (
            isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0
        ):
            raise ValueError(f"n must be a non-negative integer or None; got {n!r}.")
        names = feature_names_of(self, feature_names)
        return rank_features(self._informative_values(), self.classes_, names, n)
