"""A batch's labels as the kernels that sum statistics take them.

Hard labels are class indices, one a row, with the sample weights. Soft
labels (``class_proba=`` of fit and partial_fit) give each row a
probability of each class: a row then counts in each class with its weight
times that probability, and its classes of probability 0 are left out
(``SoftLabels``). The kernels take both as three label arrays
(``label_arrays``; see "Labels" in fastnb/_kernels.pyx): a row of
probability 1 for one class gives the sums of that class's hard label, bit
for bit.

A leaf of the package, beside _threads and _frames.
"""

import numpy as np
import scipy.sparse as sp

from fastnb._frames import columns_at
from fastnb._simd import kernels as _kernels
from fastnb._threads import effective_n_threads

# How far a row's class probabilities may sum from 1.
PROBABILITY_SUM_ATOL = 1e-6


def read_only(array):
    """``array``, made read-only (fitted arrays change only by fitting)."""
    array.flags.writeable = False
    return array


# The one value every unit weight of weights_or_ones views.
UNIT_WEIGHT = read_only(np.ones(1))
# The label_ptr of hard labels, and the entry_row of rows_by_class.
NO_ROWS = read_only(np.empty(0, dtype=np.intp))


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


class SoftLabels:
    """A batch's labels as class probabilities, with the sample weights in.

    Row i's labels are the entries ``ptr[i]`` .. ``ptr[i + 1] - 1``: entry e
    is class ``label_class[e]`` with weight ``label_weight[e]``, the row's
    sample weight times its probability of the class (only those above 0,
    in class order). ``unit_weights``: whether the rows have no sample
    weights, so each row's label weights sum to 1. Unpacks as the label
    arrays; its length is the rows'.
    """

    __slots__ = ("ptr", "label_class", "label_weight", "unit_weights")

    def __init__(self, ptr, label_class, label_weight, unit_weights):
        self.ptr = ptr
        self.label_class = label_class
        self.label_weight = label_weight
        self.unit_weights = unit_weights

    def __iter__(self):
        return iter((self.ptr, self.label_class, self.label_weight))

    def __len__(self):
        return len(self.ptr) - 1

    def rows(self):
        """Each entry's row."""
        return np.repeat(np.arange(len(self), dtype=np.intp), np.diff(self.ptr))

    def weighted(self, label_weight):
        """These labels with other weights (as many)."""
        return SoftLabels(
            self.ptr,
            self.label_class,
            np.ascontiguousarray(label_weight),
            unit_weights=False,
        )


def soft_labels(class_proba, n_samples, n_classes, sample_weight=None):
    """Check ``class_proba`` (n_samples, n_classes; dense or sparse) and
    return it as SoftLabels, each row's probabilities times its sample
    weight (checked, or None).

    The probabilities must be finite, from 0 to 1, and sum to 1 in each row
    (to within PROBABILITY_SUM_ATOL); ValueError names what is wrong.
    """
    if sp.issparse(class_proba):
        proba = sp.csr_array(class_proba, dtype=np.float64)
        proba.sum_duplicates()
        values, shape = proba.data, proba.shape
    else:
        try:
            proba = np.asarray(class_proba, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"class_proba must be an array of numbers; got {class_proba!r}."
            ) from exc
        values, shape = proba, proba.shape
    if shape != (n_samples, n_classes):
        raise ValueError(
            f"class_proba must be of shape (n_samples, n_classes) = "
            f"({n_samples}, {n_classes}); got {shape}."
        )
    if not np.isfinite(values).all():
        raise ValueError("class_proba contains NaN or infinity.")
    if ((values < 0) | (values > 1)).any():
        raise ValueError("class_proba must hold probabilities, from 0 to 1.")
    sums = np.asarray(proba.sum(axis=1)).reshape(-1)
    off = np.flatnonzero(np.abs(sums - 1.0) > PROBABILITY_SUM_ATOL)
    if len(off):
        raise ValueError(
            f"Each row of class_proba must sum to 1; row {off[0]} sums to "
            f"{float(sums[off[0]]):.6g}. Weigh rows with sample_weight."
        )
    return probability_labels(proba, sample_weight)


def probability_labels(proba, sample_weight=None):
    """SoftLabels of checked class probabilities (an ndarray or a CSR
    array of float64), each row's times its sample weight (or None)."""
    if sp.issparse(proba):
        proba.eliminate_zeros()
        ptr = proba.indptr.astype(np.intp)
        label_class = proba.indices.astype(np.intp)
        label_weight = proba.data.copy()
    else:
        rows, label_class = np.nonzero(proba)
        ptr = np.zeros(len(proba) + 1, dtype=np.intp)
        np.cumsum(np.bincount(rows, minlength=len(proba)), out=ptr[1:])
        label_class = label_class.astype(np.intp)
        label_weight = proba[rows, label_class]
    if sample_weight is not None:
        label_weight *= np.repeat(sample_weight, np.diff(ptr))
    return SoftLabels(
        ptr,
        label_class,
        np.ascontiguousarray(label_weight),
        unit_weights=sample_weight is None,
    )


def column_classes(class_proba):
    """The classes of class_proba's columns when none are given: 0 .. n - 1
    for its n columns (a DataFrame's counted without reading it, so a Dask
    DataFrame's too); none where it is not 2-D (soft_labels names its
    shape)."""
    if getattr(class_proba, "columns", None) is not None:
        return np.arange(len(class_proba.columns))
    return np.arange(np.shape(class_proba)[1] if np.ndim(class_proba) == 2 else 0)


def sorted_classes(classes, class_proba):
    """``(classes, class_proba)`` with the classes sorted, the columns of
    class_proba in their order, as fit's ``classes_`` are. ValueError for
    classes that repeat or are not one a column."""
    classes = np.asarray(classes)
    if classes.ndim != 1 or len(np.unique(classes)) != len(classes):
        raise ValueError(
            f"classes must be distinct labels, one a column of class_proba; got "
            f"{classes!r}."
        )
    order = np.argsort(classes, kind="stable")
    if (order == np.arange(len(order))).all():
        return classes, class_proba
    if np.ndim(class_proba) != 2 or np.shape(class_proba)[1] != len(classes):
        return classes[order], class_proba  # soft_labels names the shape
    if sp.issparse(class_proba):
        return classes[order], sp.csr_array(class_proba)[:, order]
    columns = columns_at(class_proba, order)  # a frame's, of its library
    if columns is not None:
        return classes[order], columns
    if not hasattr(class_proba, "shape"):
        class_proba = np.asarray(class_proba)
    return classes[order], class_proba[:, order]  # NumPy's, Dask's or another's


def label_arrays(y, sample_weight):
    """The label arrays of the kernels that sum statistics: ``(label_ptr,
    label_class, label_weight)``, for hard labels y (class indices) and
    their sample weights, or SoftLabels (sample_weight then None)."""
    if isinstance(y, SoftLabels):
        return tuple(y)
    return NO_ROWS, y, weights_or_ones(sample_weight, len(y))


def squared_weights(y, sample_weight):
    """``(y, sample_weight)`` with each label's weight squared (KernelDensityNB's
    effective sample sizes)."""
    if isinstance(y, SoftLabels):
        return y.weighted(y.label_weight**2), None
    return y, None if sample_weight is None else sample_weight**2


def positive_rows(y, sample_weight):
    """Which rows weigh more than 0 in some class (bool, n_samples)."""
    if isinstance(y, SoftLabels):
        return np.bincount(y.rows(), y.label_weight, minlength=len(y)) > 0
    return weights_or_ones(sample_weight, len(y)) > 0


def first_and_rest(labels):
    """SoftLabels as ``((classes, weights), (rows, classes, weights))``: each
    row's first label, as hard labels with their weights, and the rows' other
    labels, each with its row (none where every row has one class)."""
    first = labels.ptr[:-1]
    rest = np.ones(len(labels.label_class), dtype=bool)
    rest[first] = False
    return (
        (labels.label_class[first], labels.label_weight[first]),
        (labels.rows()[rest], labels.label_class[rest], labels.label_weight[rest]),
    )


def class_weights(y, sample_weight, n_classes, work=None, in_row_order=False):
    """Weighted number of samples of each class (float64, n_classes), summed
    by a parallel kernel; y holds class indices, or SoftLabels.

    ``work``: the values the call's other kernels touch (its threads are
    awake for those anyway); by default the labels. ``in_row_order``: each
    class's weights added one after another in row order, on one thread,
    as the sparse moments kernels add those of its stored values (so that
    a class's weight less that of its stored values of a feature is 0,
    not a rounding error, where every row stores one).
    """
    weights = np.zeros(n_classes)
    labels = label_arrays(y, sample_weight)
    # Unit weights (weights_or_ones: a view of one 1.0) sum exactly.
    in_row_order = in_row_order and labels[2].strides != (0,)
    if in_row_order:
        n_threads = 1
    else:
        n_threads = effective_n_threads(len(y) if work is None else work)
    _kernels.class_weights(*labels, weights, in_row_order, n_threads)
    return weights


def rows_by_class(y, sample_weight, n_classes, work=None):
    """The labels grouped by class for the kernels that make each class one
    task over CSR rows: ``(entries_by_class, class_ptr, entry_row,
    label_weight)``, each class's entries in row order, starting at
    class_ptr[c]; entry_row empty for hard labels (entry i is row i).

    ``work``: as class_weights'. (A 100,000-row batch's labels alone get
    one thread: 0.7 ms of a binary text batch on the main thread.)
    """
    _, label_class, label_weight = label_arrays(y, sample_weight)
    order = np.empty(len(label_class), dtype=np.intp)
    class_ptr = np.empty(n_classes + 1, dtype=np.intp)
    n_threads = effective_n_threads(len(label_class) if work is None else work)
    _kernels.class_order(label_class, order, class_ptr, n_threads)
    entry_row = y.rows() if isinstance(y, SoftLabels) else NO_ROWS
    return order, class_ptr, entry_row, label_weight
