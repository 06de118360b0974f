"""Checks of what a caller passes in, before any kernel reads it: X (as
scikit-learn checks it, with a sparse matrix's structure and the values the
kernels refuse), sample weights, labels (coded as class indices) and class
priors, with scikit-learn's messages where it has one; and X of other
array-API libraries (PyTorch, CuPy, array-api-strict).

The kernels read NumPy arrays in the CPU's memory, so an array of another
library is copied to one (or viewed, where the library shares its memory
through DLPack) before anything reads it, whether or not scikit-learn's
``array_api_dispatch`` is on. With it on, fastnb follows scikit-learn's
rules for what comes out: a prediction is given back in the namespace and
on the device of its X, and a fitted model refuses X of another namespace
or device than the one it was fitted on (ValueError, scikit-learn's
message). The fitted attributes stay NumPy arrays: the statistics are
computed and kept by the CPU kernels. The fit's namespace is not part of a
model's state: a model rebuilt by from_state, load or merge takes NumPy.

A leaf of the package: it imports nothing of fastnb but the kernels, the
thread count and the refusal of lazy frames.
"""

from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.externals import array_api_compat
from sklearn.utils._array_api import get_namespace_and_device, move_to
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import _check_n_features, validate_data

from fastnb._frames import refuse_lazy
from fastnb._simd import kernels as _kernels
from fastnb._threads import effective_n_threads

if TYPE_CHECKING:
    from fastnb._base import BaseNB

# The `missing` parameter every estimator takes: "error" refuses NaN in X,
# as scikit-learn does; "ignore" takes it for a missing value, left out of
# its feature's statistics in fit and of its feature's term in scoring
# (marginalised, under the Naive Bayes assumption).
MISSING_CONSTRAINT = [StrOptions({"error", "ignore"})]


def ignores_missing(estimator):
    """Whether the estimator takes NaN in X for a missing value."""
    return getattr(estimator, "missing", "error") == "ignore"


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


def booleans_as_bytes(X):
    """A NumPy array or scipy sparse matrix of booleans as one of uint8, in
    the same memory (True is 1, False 0), as the count families' kernels
    read it; X itself otherwise."""
    if type(X) is np.ndarray and X.dtype == np.bool_:
        return X.view(np.uint8)
    if sp.issparse(X) and X.format in ("csr", "csc") and X.dtype == np.bool_:
        as_bytes = type(X)((X.data.view(np.uint8), X.indices, X.indptr), shape=X.shape)
        as_bytes.has_canonical_format = X.has_canonical_format
        return as_bytes
    return X


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
    """X in canonical format: repeated sparse entries summed into one, and
    the indices sorted (a copy only if needed).

    For kernels that need a row's indices sorted (GaussianNB's moments by
    blocks of features, CategoricalNB's sparse codes).
    """
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def without_duplicates(X):
    """X with repeated sparse entries summed into one: X itself if it has
    none (its indices sorted or not, as scikit-learn's CountVectorizer
    leaves them), else a canonical copy (summed_duplicates).

    For statistics and scores that are not linear in a value (binarized,
    squared, log-factorial), where a repeated entry must count as its sum;
    found in one parallel pass over an X whose indices are not sorted
    (sparse_repeats_an_index), its structure checked before.
    """
    if not sp.issparse(X) or X.has_canonical_format:
        return X
    indices, indptr = index_arrays(X)
    n_minor = X.shape[0] if X.format == "csc" else X.shape[1]
    if not _kernels.sparse_repeats_an_index(
        indices, indptr, n_minor, effective_n_threads(len(indices))
    ):
        return X
    return summed_duplicates(X)


def num_samples(X):
    """The rows of X (any of the containers fit takes), before it is checked."""
    shape = getattr(X, "shape", None)
    if shape is None and hasattr(X, "__array__"):
        shape = np.asarray(X).shape
    if shape is not None and len(shape):
        return int(shape[0])
    try:
        return len(X)
    except TypeError as exc:
        raise TypeError(
            f"Expected a 2-D array of samples for X; got {type(X).__name__}."
        ) from exc


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
            # target's type, which integers always pass (most of its time);
            # classes given sorted and distinct, as most are, are copied
            # without a sort.
            if np.all(classes[1:] > classes[:-1]):
                return classes.copy()
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


def missing_values_error(positions, estimator):
    """The ValueError for missing values (NaN or None) in the columns at
    ``positions``, named as the estimator's ``feature_names_in_`` name them
    (by position where it has none)."""
    names = getattr(estimator, "feature_names_in_", None)
    columns = [j if names is None else str(names[j]) for j in positions]
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


# Array-API input: other libraries' arrays to NumPy, and the namespace
# of what goes back.


class Namespace(NamedTuple):
    """Where an input array lives: its array-API namespace and device."""

    xp: Any
    device: Any


def is_foreign(value: object) -> bool:
    """Whether ``value`` is an array of an array-API library other than NumPy.

    Dask's arrays are left out: scikit-learn's checks compute them, and
    fastnb.dask hands the estimators NumPy blocks.
    """
    if value is None or (type(value) is np.ndarray and value.dtype.kind != "V"):
        # Most inputs, without array_api_compat's checks (a tenth of a
        # small partial_fit). (A void dtype may be JAX's float0.)
        return False
    return (
        array_api_compat.is_array_api_obj(value)
        and not array_api_compat.is_numpy_array(value)
        and not array_api_compat.is_dask_array(value)
    )


def as_numpy(value: Any) -> Any:
    """``value`` as a NumPy array on the CPU if it is another library's array
    (is_foreign); anything else (NumPy arrays, lists, sparse matrices,
    DataFrames, None) as it is, but a lazy frame (TypeError: refuse_lazy)."""
    if type(value) is np.ndarray or sp.issparse(value):
        return value  # (most inputs, without the checks below)
    if not is_foreign(value):
        refuse_lazy(value)
        return value
    return move_to(value, xp=np, device="cpu")


def input_namespace(X: object) -> Namespace | None:
    """The namespace and device the outputs for X go back to: X's own where
    ``array_api_dispatch`` is on and X is another library's array; None
    (NumPy) otherwise."""
    if not get_config()["array_api_dispatch"] or not is_foreign(X):
        return None
    xp, _, device = get_namespace_and_device(X)
    return Namespace(xp, device)


def in_namespace(result: np.ndarray, namespace: Namespace | None) -> Any:
    """A NumPy ``result`` moved to X's ``namespace`` and device; as it is for
    NumPy X (None), and for labels the namespace has no dtype for (strings,
    objects), which stay NumPy arrays."""
    if namespace is None or result.dtype.kind not in "biuf":
        return result
    return move_to(result, xp=namespace.xp, device=namespace.device)


def namespace_key(namespace: Namespace | None) -> tuple[str, str] | None:
    """What a model keeps of the namespace it was fitted in: None for NumPy,
    else the namespace's name and the device's repr (strings, so that a
    pickle or a skops file of the model holds no object of the library)."""
    if namespace is None:
        return None
    return namespace.xp.__name__, repr(namespace.device)


def keep_fit_namespace(estimator: BaseNB, namespace: Namespace | None) -> None:
    """Record the namespace of the X a model was fitted on (nothing for NumPy)."""
    key = namespace_key(namespace)
    if key is not None:
        estimator._fit_namespace = key
    elif hasattr(estimator, "_fit_namespace"):
        del estimator._fit_namespace


def check_fit_namespace(
    estimator: BaseNB, namespace: Namespace | None, method: str
) -> None:
    """With ``array_api_dispatch`` on, raise ValueError if X's namespace or
    device (``namespace``) is not the one the model was fitted on, as
    scikit-learn's estimators do."""
    if not get_config()["array_api_dispatch"]:
        return
    fitted = vars(estimator).get("_fit_namespace")
    given = namespace_key(namespace)
    if fitted == given:
        return
    raise ValueError(
        f"Inputs passed to {type(estimator).__name__}.{method}() must use the "
        "same namespace and the same device as those passed to fit(): the "
        f"model was fitted on {described(fitted)}, and {method} was given "
        f"{described(given)}."
    )


def described(key: tuple[str, str] | None) -> str:
    """A namespace_key in words, for error messages."""
    if key is None:
        return "NumPy or array-like input"
    name, device = key
    return f"{name} arrays on device {device}"
