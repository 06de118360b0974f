"""The compiled kernels: thread-count independence, bounds checks, memory use.

(The estimators' results against the thread count: test_invariants.)
"""

import sys
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from threadpoolctl import threadpool_limits

import fastnb
from fastnb._gaussian import sparse_gaussian_table
from fastnb._labels import NO_ROWS, label_arrays, rows_by_class, soft_labels
from fastnb._plans import whole_class_tasks
from fastnb._simd import kernel_set
from fastnb._simd import kernels as _kernels
from fastnb._threads import effective_n_threads, pad_classes, thread_scratch
from fastnb._validation import encode_fit_labels, encode_labels, sparse_arrays

from _helpers import THREADED_CASES, THREADED_ROWS, runnable_variants

ESTIMATORS = [fastnb.MultinomialNB, fastnb.ComplementNB, fastnb.BernoulliNB]
# The baseline kernels and every variant built that this CPU runs.
baseline = kernel_set("baseline")
KERNEL_VARIANTS = [baseline, *runnable_variants()]


def tfidf_like(n_samples, n_features, n_classes, seed=0):
    """Sparse non-integer data, where the order of summation shows in the bits."""
    rng = np.random.default_rng(seed)
    X = sp.random(n_samples, n_features, density=0.05, format="csr", random_state=rng)
    X.data = rng.random(X.nnz) ** 3
    y = rng.integers(0, n_classes, n_samples)
    return X, y


# discrete_count_csr's part and part_missing, for tasks of whole classes only.
NO_PARTS = {"part": np.empty((0, 0)), "part_missing": np.empty((0, 0))}


def count_with(kernel, args, options, n_threads, shape):
    """The counts and the missing values' weights a counting kernel gives."""
    out, missing = np.zeros(shape), np.zeros(shape)
    fresh = {
        k: v.copy() if isinstance(v, np.ndarray) else v for k, v in options.items()
    }
    kernel(
        *args,
        threshold=0.0,
        binarize=False,
        out=out,
        missing=missing,
        allow_nan=True,
        n_threads=n_threads,
        **fresh,
    )
    return out, missing


@pytest.mark.parametrize("n_threads", [2, 3, 7])
def test_counting_does_not_depend_on_thread_count(n_threads):
    X, y = tfidf_like(3000, 300, 5)
    # Some stored values missing (missing="ignore"): their weights are
    # summed apart, in the same order.
    X.data[np.random.default_rng(5).random(X.nnz) < 0.1] = np.nan
    weights = np.random.default_rng(1).random(X.shape[0])
    shape = (5, X.shape[1])
    rows_by_class = np.argsort(y, kind="stable")
    class_ptr = np.concatenate([[0], np.cumsum(np.bincount(y))]).astype(np.intp)
    class_tasks = whole_class_tasks(class_ptr)
    Xc = X.tocsc()
    csr_parts = (X.data, X.indices, X.indptr)
    dense = X.toarray()
    # Chunks of 1000 rows, each counted apart and added in order.
    blocks = {
        "chunk_counts": np.zeros((2, 2 * shape[0], shape[1])),
        "chunk_rows": 1000,
        "block_width": 16,
    }
    cases = {
        "csr": (
            _kernels.discrete_count_csr,
            (*csr_parts, rows_by_class, NO_ROWS, weights, class_tasks, 0),
            NO_PARTS,
        ),
        "csr dealt": (
            _kernels.discrete_count_csr,
            (*csr_parts, rows_by_class, NO_ROWS, weights, class_tasks, 5),
            NO_PARTS,
        ),
        "csc": (
            _kernels.discrete_count_csc,
            (Xc.data, Xc.indices, Xc.indptr, NO_ROWS, y, weights),
            {},
        ),
        "dense C": (
            _kernels.discrete_count_dense,
            (dense, NO_ROWS, y, weights),
            blocks,
        ),
        "dense F": (
            _kernels.discrete_count_dense,
            (np.asfortranarray(dense), NO_ROWS, y, weights),
            blocks,
        ),
    }
    counted = {}
    for name, (kernel, args, options) in cases.items():
        serial = count_with(kernel, args, options, 1, shape)
        parallel = count_with(kernel, args, options, n_threads, shape)
        assert np.array_equal(np.stack(serial), np.stack(parallel)), name
        counted[name] = np.stack(serial)
    assert_array_equal(counted["csr dealt"], counted["csr"])
    # Summed in another order (dense: by chunks of rows), to rounding.
    for name in ("csc", "dense C", "dense F"):
        np.testing.assert_allclose(counted[name], counted["csr"], rtol=1e-13)
    # Against NumPy: the values as 0 where missing, the weights where missing.
    is_missing = sp.csr_matrix((np.isnan(X.data) * 1.0, X.indices, X.indptr))
    one_hot = np.eye(5)[y].T * weights
    expected = one_hot @ np.nan_to_num(dense), one_hot @ is_missing.toarray()
    np.testing.assert_allclose(counted["csr"], np.stack(expected), rtol=1e-12)


@pytest.mark.parametrize("n_threads", [1, 3])
def test_chunk_kernels_zero_their_own_chunk_tables(n_threads):
    # The callers hand these kernels each chunk's tables uninitialised
    # (np.empty): whatever the memory held (NaN here) must not reach the sums.
    rng = np.random.default_rng(3)
    X, y = tfidf_like(3000, 40, 5)
    dense = X.toarray()
    weights = rng.random(3000)

    def dense_counts(chunk_counts):
        out, missing = np.zeros((5, 40)), np.zeros((5, 40))
        _kernels.discrete_count_dense(
            dense, NO_ROWS, y, weights, 0.0, False, out, missing, True,
            chunk_counts, 500, 16, n_threads,
        )  # fmt: skip
        return out, missing

    def moments(data, fill, observed_shape):
        chunk_tables = (
            np.full((6, 5), fill),
            np.full(observed_shape, fill),
            np.full((6, 5, 40), fill),
            np.full((6, 5, 40), fill),
        )
        _kernels.gaussian_moments_dense(
            data, NO_ROWS, y, weights, 500, *chunk_tables, n_threads
        )
        return [table[0] for table in chunk_tables if table.size]

    stored = rng.random((3000, 20)) < 0.3
    codes = sp.csr_matrix(rng.integers(0, 4, (3000, 20)) * stored)
    offsets = np.arange(0, 84, 4, dtype=np.intp)

    def code_counts(tables):
        class_weight = np.full((len(tables), 5), tables[0, 0])
        _kernels.categorical_count_csr(
            *sparse_arrays(codes),
            y,
            weights,
            offsets,
            5,
            500,
            tables,
            class_weight,
            False,
            n_threads,
        )
        return np.hstack([tables, class_weight])

    with_nan = dense.copy()
    with_nan[rng.random(dense.shape) < 0.05] = np.nan
    pairs = {
        "discrete_count_dense": (
            dense_counts(np.zeros((5, 10, 40))),
            dense_counts(np.full((5, 10, 40), np.nan)),
        ),
        "categorical_count_csr": (
            code_counts(np.zeros((6, 400))),
            code_counts(np.full((6, 400), np.nan)),
        ),
    }
    for name, data, observed_shape in (
        ("C", dense, (0, 0, 0)),
        ("F", np.asfortranarray(dense), (0, 0, 0)),
        ("C, missing ignored", with_nan, (6, 5, 40)),
        ("F, missing ignored", np.asfortranarray(with_nan), (6, 5, 40)),
    ):
        pairs[f"gaussian_moments_dense {name}"] = (
            moments(data, 0.0, observed_shape),
            moments(data, np.nan, observed_shape),
        )
    for name, (from_zeros, from_garbage) in pairs.items():
        for expected, got in zip(from_zeros, from_garbage, strict=True):
            assert not np.isnan(got).any(), name
            assert_array_equal(got, expected, err_msg=name)


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("binarize", [False, True])
# Each variant: a compiler that fuses a multiply and an add (FMA) must fuse
# both kernels' alike.
@pytest.mark.parametrize("kernels", KERNEL_VARIANTS, ids=lambda m: m.__name__)
def test_counting_by_pieces_of_rows_is_the_class_tasks_sum_bit_for_bit(
    monkeypatch, kernels, n_threads, dtype, index_dtype, binarize
):
    # Small chunks and few pieces, so that there are many of each; empty
    # rows, a row longer than a chunk, missing values and weights.
    monkeypatch.setattr(fastnb._plans, "PIECES_CHUNK_VALUES", 500)
    monkeypatch.setattr(fastnb._plans, "PIECES", 7)
    X, y = tfidf_like(900, 300, 3, seed=4)
    empty, long = sp.csr_matrix((1, 300)), sp.csr_matrix(np.full((1, 300), 0.5))
    X = sp.vstack([X[:5], empty, X[5:], long], format="csr")
    y = np.r_[y[:5], 2, y[5:], 1]
    X.data[np.random.default_rng(6).random(X.nnz) < 0.1] = np.nan
    X = sp.csr_matrix(
        (
            X.data.astype(dtype),
            X.indices.astype(index_dtype),
            X.indptr.astype(index_dtype),
        ),
        shape=X.shape,
    )
    weights = np.random.default_rng(2).random(X.shape[0])
    shape = (3, X.shape[1])
    order = np.argsort(y, kind="stable").astype(np.intp)
    class_ptr = np.r_[0, np.cumsum(np.bincount(y))].astype(np.intp)
    expected = np.zeros(shape), np.zeros(shape)
    kernels.discrete_count_csr(
        X.data,
        X.indices,
        X.indptr,
        order,
        NO_ROWS,
        weights,
        whole_class_tasks(class_ptr),
        0,
        0.25,
        binarize,
        *expected,
        True,
        *NO_PARTS.values(),
        n_threads,
    )
    counts, missing = np.zeros(shape), np.zeros(shape)
    layout = fastnb._plans.csr_pieces(X.indptr, X.shape[1])
    assert len(layout[1]) - 1 > 10  # chunks
    kernels.discrete_count_csr_blocks(
        X.data,
        X.indices,
        X.indptr,
        NO_ROWS,
        y.astype(np.intp),
        weights,
        0.25,
        binarize,
        shape[1],
        counts.reshape(-1),
        missing.reshape(-1),
        True,
        *layout,
        n_threads,
    )
    assert_array_equal(counts, expected[0])
    assert_array_equal(missing, expected[1])
    assert np.count_nonzero(missing) and np.count_nonzero(counts)


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("kernels", KERNEL_VARIANTS, ids=lambda m: m.__name__)
def test_soft_labels_count_by_pieces_as_by_classes_bit_for_bit(
    monkeypatch, kernels, n_threads
):
    # Soft labels: each stored value is laid out once a label of its row, so
    # a chunk's values are the rows' values times their labels.
    monkeypatch.setattr(fastnb._plans, "PIECES_CHUNK_VALUES", 500)
    monkeypatch.setattr(fastnb._plans, "PIECES", 7)
    X, _ = tfidf_like(900, 300, 3, seed=9)
    X.data[np.random.default_rng(7).random(X.nnz) < 0.1] = np.nan
    rng = np.random.default_rng(3)
    proba = rng.dirichlet(np.ones(3), X.shape[0])
    proba[rng.random(X.shape[0]) < 0.3] = [0.0, 1.0, 0.0]
    labels = soft_labels(proba, X.shape[0], 3, rng.random(X.shape[0]))
    shape = (3, X.shape[1])
    expected = np.zeros(shape), np.zeros(shape)
    order, class_ptr, entry_row, label_weight = rows_by_class(labels, None, 3)
    kernels.discrete_count_csr(
        *sparse_arrays(X),
        order,
        entry_row,
        label_weight,
        whole_class_tasks(class_ptr),
        0,
        0.0,
        False,
        *expected,
        True,
        *NO_PARTS.values(),
        n_threads,
    )
    counts, missing = np.zeros(shape), np.zeros(shape)
    kernels.discrete_count_csr_blocks(
        *sparse_arrays(X),
        *labels,
        0.0,
        False,
        shape[1],
        counts.reshape(-1),
        missing.reshape(-1),
        True,
        *fastnb._plans.csr_pieces(
            fastnb._plans.row_entries(X.indptr, labels.ptr), shape[1]
        ),
        n_threads,
    )
    assert_array_equal(counts, expected[0])
    assert_array_equal(missing, expected[1])
    # Against NumPy: the weighted probabilities times X, NaN as 0.
    weighted = sp.csr_matrix(
        (labels.label_weight, labels.label_class, labels.ptr), shape=(X.shape[0], 3)
    )
    np.testing.assert_allclose(
        counts, (weighted.T @ np.nan_to_num(X.toarray())), rtol=1e-12
    )


@pytest.mark.parametrize(
    ("n_classes", "n_threads", "pieces"),
    # Pieces where the threads are more than PIECES_COST (3.5) a class.
    [(2, 16, True), (2, 8, True), (4, 16, True), (2, 4, False), (5, 16, False)],
)
def test_far_fewer_classes_than_threads_count_by_pieces_of_rows(
    monkeypatch, n_classes, n_threads, pieces
):
    # The counts of the pieces of rows, or of a task a class on many
    # threads, as one thread's task a class counts them.
    X, y = tfidf_like(2000, 500, n_classes, seed=8)
    one = fastnb.MultinomialNB().fit(X, y)
    pieces_kernel = "discrete_count_csr_blocks"
    many, calls = fit_on_threads(
        monkeypatch, fastnb.MultinomialNB(), X, y, n_threads, pieces_kernel
    )
    assert len(calls) == pieces
    assert_array_equal(many.feature_count_, one.feature_count_)
    assert_array_equal(many.predict_proba(X), one.predict_proba(X))


def fit_on_threads(monkeypatch, model, X, y, n_threads, kernel):
    """``(model fitted on X, y with its family's kernels on n_threads, the
    arguments of each call of the named kernel)``."""
    family = sys.modules[type(model).__module__]
    monkeypatch.setattr(family, "effective_n_threads", lambda work=None: n_threads)
    original, calls = getattr(_kernels, kernel), []
    monkeypatch.setattr(
        _kernels, kernel, lambda *args: calls.append(args) or original(*args)
    )
    return model.fit(X, y), calls


def whole_counts(n_samples, n_features, n_classes, seed=0):
    """tfidf_like's matrix with whole counts (1 to 5) for values."""
    X, y = tfidf_like(n_samples, n_features, n_classes, seed)
    X.data = np.ceil(X.data * 5)
    return X, y


def added_parts(monkeypatch):
    """What each call of add_parts returns, from now on."""
    original, answers = _kernels.add_parts, []
    monkeypatch.setattr(
        _kernels,
        "add_parts",
        lambda *args: answers.append(original(*args)) or answers[-1],
    )
    return answers


@pytest.mark.parametrize(("n_classes", "in_parts"), [(2, True), (3, True), (20, False)])
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_whole_counts_on_many_threads_count_classes_in_parts(
    monkeypatch, estimator, n_classes, in_parts
):
    # Counts are whole numbers, their sums exact in any order: the classes
    # are cut in parts of rows, every thread has some, and the model is one
    # thread's, bit for bit. Twenty about equal classes on sixteen threads
    # are not cut (parts would not end sooner), but dealt out in turn.
    X, y = whole_counts(4000, 300, n_classes, seed=3)
    one = estimator().fit(X, y)
    answers = added_parts(monkeypatch)
    many, calls = fit_on_threads(
        monkeypatch, estimator(), X, y, 16, "discrete_count_csr"
    )
    tasks, n_dealt = calls[0][6:8]
    assert answers == ([True] if in_parts else [])
    assert n_dealt == len(tasks) >= (16 if in_parts else n_classes)
    assert_array_equal(many.feature_count_, one.feature_count_)
    assert_array_equal(many.predict_proba(X), one.predict_proba(X))


def test_parts_of_whole_weights_and_soft_labels_are_exact(monkeypatch):
    X, y = whole_counts(3000, 200, 2, seed=5)
    weights = np.random.default_rng(5).integers(0, 4, X.shape[0]).astype(float)
    proba = np.eye(2)[y]
    proba[::3] = 0.5  # half a label each
    soft_weights = np.full(X.shape[0], 2.0)
    one_hard = fastnb.MultinomialNB().fit(X, y, sample_weight=weights)
    one_soft = fastnb.MultinomialNB().fit(
        X, class_proba=proba, sample_weight=soft_weights
    )
    answers = added_parts(monkeypatch)
    monkeypatch.setattr(fastnb._discrete, "effective_n_threads", lambda work=None: 16)
    hard = fastnb.MultinomialNB().fit(X, y, sample_weight=weights)
    soft = fastnb.MultinomialNB().fit(X, class_proba=proba, sample_weight=soft_weights)
    assert answers == [True, True]
    assert_array_equal(hard.feature_count_, one_hard.feature_count_)
    assert_array_equal(soft.feature_count_, one_soft.feature_count_)


@pytest.mark.parametrize("estimator", [fastnb.BernoulliNB, fastnb.PoissonNB])
def test_missing_values_counted_in_parts(monkeypatch, estimator):
    X, y = whole_counts(3000, 200, 2, seed=6)
    X.data[np.random.default_rng(6).random(X.nnz) < 0.1] = np.nan
    one = estimator(missing="ignore").fit(X, y)
    answers = added_parts(monkeypatch)
    many, _ = fit_on_threads(
        monkeypatch, estimator(missing="ignore"), X, y, 16, "add_parts"
    )
    assert answers == [True]
    assert_array_equal(many.feature_count_, one.feature_count_)
    missing = one._statistics["missing_count"]
    assert_array_equal(many._statistics["missing_count"], missing)
    assert np.count_nonzero(missing)


def fit_batches(model, batches):
    for X, y, weights in batches:
        model.partial_fit(X, y, classes=[0, 1], sample_weight=weights)
    return model


@pytest.mark.parametrize(
    "case", ["fractions", "fractional counts before", "sums past 2**53", "weights"]
)
def test_sums_that_are_not_exact_are_not_counted_in_parts(monkeypatch, case):
    # Whatever stops the parts' sums from being exact, the counts are one
    # thread's, bit for bit.
    X, y = whole_counts(3000, 200, 2, seed=7)
    weights = None
    batches = [(X, y, None)]
    if case == "fractions":
        X.data[::50] += 0.5
    elif case == "fractional counts before":
        # A first batch of fractional weights: the counts it leaves are not
        # whole numbers, which the parts of the next would add to.
        first = np.full(X.shape[0], 0.3)
        batches = [(X, y, first), (X, y, None)]
    elif case == "sums past 2**53":
        # Whole numbers, but sums that round (in another order, otherwise).
        X.data += 2.0**50
    else:
        weights = np.full(X.shape[0], 1.5)
        batches = [(X, y, weights)]
    one = fit_batches(fastnb.MultinomialNB(), batches)
    answers = added_parts(monkeypatch)
    monkeypatch.setattr(fastnb._discrete, "effective_n_threads", lambda work=None: 4)
    many = fit_batches(fastnb.MultinomialNB(), batches)
    assert True not in answers
    assert_array_equal(many.feature_count_, one.feature_count_)


def test_class_tasks_cut_classes_in_parts_of_their_entries_in_order():
    X, y = whole_counts(6000, 300, 3, seed=8)
    y[y == 2] = 0  # an empty class, and two of unequal sizes
    y[:4000][y[:4000] == 1] = 0
    by_class = rows_by_class(y.astype(np.intp), None, 3)
    tasks, part_class, dealt = fastnb._plans.class_tasks(
        X.indptr, by_class, X.shape[1], 1, 16
    )
    class_ptr = by_class[1]
    parts = tasks[tasks[:, 3] >= 0]
    assert dealt and len(tasks) >= 16 and len(parts) == len(part_class)
    # Each part's row is its place among its class's parts, the rows of a
    # class one after another, and together they hold the class's entries.
    for c in np.unique(part_class):
        mine = parts[parts[:, 2] == c]
        mine = mine[np.argsort(mine[:, 3])]
        assert_array_equal(part_class[mine[:, 3]], c)
        assert_array_equal(np.diff(mine[:, 3]), 1)
        assert mine[0, 0] == class_ptr[c] and mine[-1, 1] == class_ptr[c + 1]
        assert_array_equal(mine[1:, 0], mine[:-1, 1])
    whole = tasks[tasks[:, 3] < 0]
    assert_array_equal(
        whole[:, :2], np.c_[class_ptr[whole[:, 2]], class_ptr[whole[:, 2] + 1]]
    )
    # The largest first: the numbers of stored values their entries hold.
    rows = by_class[0]
    ends = np.r_[0, np.cumsum(np.diff(X.indptr)[rows])]
    sizes = ends[tasks[:, 1]] - ends[tasks[:, 0]]
    assert (np.diff(sizes) <= 0).all()
    # One thread: a task a class.
    tasks, part_class, _ = fastnb._plans.class_tasks(
        X.indptr, by_class, X.shape[1], 1, 1
    )
    assert len(part_class) == 0 and len(tasks) == 3


@pytest.mark.parametrize("kernels", KERNEL_VARIANTS, ids=lambda m: m.__name__)
def test_parts_report_values_that_are_not_whole_counts(kernels):
    X, y = whole_counts(400, 50, 1, seed=9)
    order = np.arange(X.shape[0], dtype=np.intp)
    tasks = np.array([[0, 200, 0, 0], [200, 400, 0, 1]], dtype=np.intp)
    weights = np.ones(X.shape[0])

    def count(data, binarize=False):
        parts = np.empty((2, 50)), np.empty((0, 0))
        return kernels.discrete_count_csr(
            data,
            X.indices,
            X.indptr,
            order,
            NO_ROWS,
            weights,
            tasks,
            2,
            0.5,
            binarize,
            np.zeros((1, 50)),
            np.empty((0, 0)),
            True,
            *parts,
            2,
        )

    assert count(X.data)
    for bad in (0.5, -1.0):
        data = X.data.copy()
        data[X.indptr[300]] = bad
        assert not count(data)
        assert count(data, binarize=True)  # binarized: 0 or 1
    data = X.data.copy()
    data[::7] = np.nan  # missing: counted as nothing
    assert count(data)


def test_add_parts_adds_only_exact_sums():
    part = np.array([[1.0, 2.0, 0.0], [3.0, 0.0, 5.0], [4.0, 4.0, 4.0]])
    part_class = np.array([1, 1, 0], dtype=np.intp)
    none = np.empty((0, 0))

    def add(out):
        before = out.copy()
        added = _kernels.add_parts(out, none, part.copy(), none, part_class, 2)
        return added, before

    out = np.array([[1.0, 1.0, 1.0], [0.0, 10.0, 2.0]])
    added, before = add(out)
    assert added
    assert_array_equal(out, [[5.0, 5.0, 5.0], [4.0, 12.0, 7.0]])
    for bad in (0.5, -2.0, 2.0**53 - 2):
        out = np.zeros((2, 3))
        out[1, 1] = bad
        added, before = add(out)
        assert not added
        assert_array_equal(out, before)


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("kernels", KERNEL_VARIANTS, ids=lambda m: m.__name__)
def test_sparse_moments_by_blocks_of_features_are_the_one_block_moments(
    kernels, n_threads
):
    # Blocks of uneven widths, one empty, a row of every feature, empty rows,
    # missing values and weights: each entry's Welford sum takes its rows in
    # the same order whatever the blocks, so the moments are bit for bit.
    X, y = tfidf_like(600, 300, 3, seed=11)
    full, empty = sp.csr_matrix(np.full((1, 300), 0.5)), sp.csr_matrix((1, 300))
    X = sp.vstack([X[:7], full, empty, X[7:]], format="csr")
    y = np.r_[y[:7], 1, 2, y[7:]]
    X.data[np.random.default_rng(12).random(X.nnz) < 0.1] = np.nan
    assert X.has_sorted_indices
    weights = np.random.default_rng(13).random(X.shape[0])
    labels = rows_by_class(y.astype(np.intp), weights, 3)

    def moments(edges):
        out = [np.zeros((3, 300)) for _ in range(4)]
        edges = np.array(edges, dtype=np.intp)
        kernels.gaussian_moments_csr(*sparse_arrays(X), *labels, edges, *out, n_threads)
        return np.stack(out)

    one_block = moments([0, 300])
    for edges in ([0, 150, 300], [0, 1, 2, 299, 300], [0, 37, 37, 200, 250, 300]):
        assert_array_equal(moments(edges), one_block)
    assert np.count_nonzero(one_block[1]) and np.count_nonzero(one_block[3])


@pytest.mark.parametrize(
    "edges", [[], [0], [1, 300], [0, 200, 100, 300], [0, 299], [0, 301]]
)
def test_sparse_moments_refuse_blocks_that_do_not_cut_the_features(edges):
    X, y = tfidf_like(50, 300, 2, seed=1)
    out = [np.zeros((2, 300)), np.zeros((0, 0)), np.zeros((2, 300)), np.zeros((2, 300))]
    labels = rows_by_class(y.astype(np.intp), None, 2)
    with pytest.raises(ValueError, match="feature_edges must"):
        _kernels.gaussian_moments_csr(
            *sparse_arrays(X), *labels, np.array(edges, dtype=np.intp), *out, 2
        )


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ignore", [False, True])
@pytest.mark.parametrize("soft", [False, True])
def test_dense_moments_of_f_order_are_those_of_c_order(n_threads, dtype, ignore, soft):
    # An F-order X is added a tile of rows and block of columns at a time:
    # 700 rows in chunks of 300 (tiles of 64, the last ones short), 150
    # features (blocks of 64, the last one short); the same steps in the
    # same order as the rows of its C-order copy, so the same bits.
    rng = np.random.default_rng(12)
    X = rng.normal(size=(700, 150)).astype(dtype)
    if ignore:
        X[rng.random(X.shape) < 0.1] = np.nan
    weights = rng.random(700)
    if soft:
        proba = rng.dirichlet(np.ones(4) * 0.3, 700)
        proba[proba < 0.2] = 0.0
        proba /= proba.sum(axis=1, keepdims=True)
        labels = label_arrays(soft_labels(proba, 700, 4, weights), None)
    else:
        labels = (NO_ROWS, rng.integers(0, 4, 700).astype(np.intp), weights)

    def moments(data):
        tables = (
            np.empty((3, 4)),
            np.empty((3, 4, 150) if ignore else (0, 0, 0)),
            np.empty((3, 4, 150)),
            np.empty((3, 4, 150)),
        )
        _kernels.gaussian_moments_dense(data, *labels, 300, *tables, n_threads)
        return [table[0] for table in tables if table.size]

    c_order = moments(X)
    assert all(np.isfinite(table).all() for table in c_order)
    for expected, got in zip(c_order, moments(np.asfortranarray(X)), strict=True):
        assert_array_equal(got, expected)
    # And against NumPy, class by class, for hard labels.
    if not soft:
        y = labels[1]
        for c in range(4):
            rows = X[y == c].astype(np.float64)
            w = np.where(np.isnan(rows), 0.0, weights[y == c, None])
            mean = (w * np.nan_to_num(rows)).sum(axis=0) / w.sum(axis=0)
            assert_allclose(c_order[-2][c], mean, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "shapes",
    [
        ((2, 4), (0, 0, 0), (2, 4, 5), (2, 4, 5)),  # 2 chunks of 10 rows for 30
        ((2, 4), (0, 0, 0), (3, 4, 5), (3, 4, 5)),  # weight of 2 chunks, not 3
        ((3, 4), (0, 0, 0), (3, 4, 4), (3, 4, 4)),  # 4 features, not 5
        ((3, 4), (0, 0, 0), (3, 4, 5), (3, 3, 5)),  # ssd of 3 classes
        ((3, 4), (3, 4, 4), (3, 4, 5), (3, 4, 5)),  # observed of 4 features
        ((3, 4), (3, 3, 5), (3, 4, 5), (3, 4, 5)),  # observed of 3 classes
    ],
)
@pytest.mark.parametrize("order", ["C", "F"])
def test_dense_moments_refuse_chunk_tables_of_the_wrong_shape(shapes, order):
    # The kernel adds whole rows into the tables: their shapes are checked
    # first, in every build (a narrower table would be written past).
    X = np.asarray(np.random.default_rng(0).normal(size=(30, 5)), order=order)
    y = np.arange(30, dtype=np.intp) % 4
    tables = [np.zeros(shape) for shape in shapes]
    with pytest.raises(ValueError, match="must"):
        _kernels.gaussian_moments_dense(X, NO_ROWS, y, np.ones(30), 10, *tables, 2)
    assert not any(table.any() for table in tables)


@pytest.mark.parametrize(
    "shapes",
    [
        ((3, 5), (0, 0), (1, 3, 4)),  # chunk tables of 4 features
        ((3, 5), (0, 0), (1, 2, 5)),  # chunk tables of 2 classes
        ((3, 5), (3, 5), (1, 3, 5)),  # no room for the missing weights
        ((3, 5), (3, 2), (1, 6, 5)),  # missing weights of 2 features
        ((3, 4), (0, 0), (1, 3, 4)),  # out of 4 features
        ((3, 5), (0, 0), (0, 3, 5)),  # one chunk of 15 rows for 30
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_dense_counts_refuse_tables_of_the_wrong_shape(shapes, dtype):
    # The kernel adds a block of a row at a time through a pointer: the
    # tables' shapes are checked first, in every build.
    X = np.random.default_rng(0).poisson(2.0, size=(30, 5)).astype(dtype)
    y = np.arange(30, dtype=np.intp) % 3
    out, missing, chunk_counts = (np.zeros(shape) for shape in shapes)
    counting = (0.0, False, out, missing, missing.size > 0)
    with pytest.raises(ValueError, match="must"):
        _kernels.discrete_count_dense(
            X, NO_ROWS, y, np.ones(30), *counting, chunk_counts, 15, 64, 2
        )
    assert not out.any() and not missing.any() and not chunk_counts.any()


def test_few_classes_on_many_threads_take_blocks_of_features(monkeypatch):
    # Two classes on 16 threads: 8 blocks of features, 16 tasks, and the
    # model of one thread's one block, bit for bit.
    X, y = tfidf_like(2000, 4096, 2, seed=8)
    one = fastnb.GaussianNB().fit(X, y)
    sixteen, calls = fit_on_threads(
        monkeypatch, fastnb.GaussianNB(), X, y, 16, "gaussian_moments_csr"
    )
    assert_array_equal(calls[0][7], np.arange(9) * 512)  # feature_edges
    assert_array_equal(sixteen.theta_, one.theta_)
    assert_array_equal(sixteen.var_, one.var_)


@pytest.mark.parametrize(
    ("n_classes", "n_features", "n_threads", "n_blocks"),
    [
        (2, 2**16, 1, 1),  # one thread: one block
        (2, 2**16, 2, 1),  # as many classes as threads
        (20, 2**16, 16, 1),  # two rounds of classes: blocks would cost more
        (2, 2**16, 4, 2),
        (2, 2**16, 16, 8),
        (4, 2**16, 16, 4),
        (2, 1000, 16, 3),  # blocks of at least 256 features
        (2, 100, 16, 1),
    ],
)
def test_feature_blocks_are_as_many_as_shorten_the_slowest_thread(
    n_classes, n_features, n_threads, n_blocks
):
    edges = fastnb._plans.feature_blocks(n_classes, n_features, n_threads)
    assert len(edges) == n_blocks + 1
    assert edges[0] == 0 and edges[-1] == n_features
    if n_blocks > 1:
        assert np.diff(edges).min() >= fastnb._plans.BLOCK_FEATURES


@pytest.mark.parametrize(
    "make",
    [
        fastnb.MultinomialNB,
        fastnb.ComplementNB,
        lambda: fastnb.ComplementNB(norm=True),
        lambda: fastnb.BernoulliNB(missing="ignore"),
        lambda: fastnb.PoissonNB(missing="ignore"),
    ],
)
def test_count_tables_zero_their_padding(monkeypatch, make):
    # new_table and missing_table leave the padding columns unset, for the
    # table kernels to zero on their threads: poisoned with NaN here, they
    # come out zero, and the model predicts as one fitted without poison.
    X, y = whole_counts(300, 50, 3, seed=10)
    expected = make().fit(X, y).predict_proba(X)

    def poisoned(make_tables):
        def make_poisoned(*args):
            tables = make_tables(*args)
            for table in tables if isinstance(tables, tuple) else (tables,):
                if isinstance(table, np.ndarray) and table.ndim == 2:
                    table.fill(np.nan)
            return tables

        return make_poisoned

    for name in ("new_table", "missing_table"):
        original = getattr(fastnb._discrete, name)
        monkeypatch.setattr(fastnb._discrete, name, poisoned(original))
    model = make().fit(X, y)
    scoring = model._final_tables()[1]
    kept = scoring.missing.size > 0
    tables = [scoring.table, scoring.missing if kept else np.zeros((50, 4))]
    for table in tables:
        assert table.shape == (50, 4)
        assert_array_equal(table[:, 3:], 0.0)
    assert_array_equal(model.predict_proba(X), expected)


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("size", [0, 1, 16383, 16384, 16385, 100_003])
def test_zero_values_zeroes_every_value(size, n_threads):
    values = np.full(size, np.nan)
    _kernels.zero_values(values, n_threads)
    assert_array_equal(values, np.zeros(size))


@pytest.mark.parametrize("shape", [(3, 4), (20, 65_536)])
def test_statistics_are_zeroed_on_the_threads_where_large(monkeypatch, shape):
    # Large statistics tables are zeroed by zero_values, on the threads; an
    # allocation that hands back used memory shows in np.empty's values.
    poisoned = lambda shape: np.full(shape, np.nan)  # noqa: E731
    monkeypatch.setattr(fastnb._threads.np, "empty", poisoned)
    # Four threads for the large table, whatever this machine has.
    monkeypatch.setattr(
        fastnb._threads,
        "effective_n_threads",
        lambda work=None: 1 if work < 2 * fastnb._threads.WORK_PER_THREAD else 4,
    )
    calls = []
    original = _kernels.zero_values
    monkeypatch.setattr(
        _kernels, "zero_values", lambda *args: calls.append(1) or original(*args)
    )
    assert_array_equal(fastnb._threads.zeroed(shape), np.zeros(shape))
    assert len(calls) == (shape[1] > 4)


@pytest.mark.parametrize("n_classes", [1, 2, 3, 4, 5, 9])
@pytest.mark.parametrize("layout", ["csr", "dense"])
@pytest.mark.parametrize("kernels", KERNEL_VARIANTS, ids=lambda m: m.__name__)
def test_narrow_count_tables_score_as_whole_blocks_bit_for_bit(
    kernels, n_classes, layout
):
    # Up to 4 classes, the count families' tables are 2 or 4 wide, and the
    # row helpers score them in a narrow block: the same scores as from the
    # table padded to whole blocks, missing values' terms included.
    X, _ = tfidf_like(500, 60, n_classes, seed=3)
    X.data[::13] = np.nan
    rng = np.random.default_rng(4)
    table, missing = -rng.random((60, n_classes)), -rng.random((60, n_classes))
    intercept = -rng.random(n_classes)
    width = fastnb._discrete.count_table_width(n_classes)
    assert width == {1: 2, 2: 2, 3: 4, 4: 4, 5: 8, 9: 16}[n_classes]

    def scores(padded):
        def pad(array):
            out = np.zeros((*array.shape[:-1], padded))
            out[..., :n_classes] = array
            return out

        out = np.empty((X.shape[0], n_classes))
        arguments = (pad(table), pad(intercept), 0.0, False, True, True, pad(missing))
        finish = (
            kernels.Output.JOINT_LOG_LIKELIHOOD,
            out,
            np.empty(0, dtype=np.intp),
            thread_scratch(2, n_classes),
            2,
        )
        if layout == "csr":
            bad = kernels.discrete_score_csr(*sparse_arrays(X), *arguments, *finish)
        else:
            bad = kernels.discrete_score_dense(X.toarray(), *arguments, *finish)
        assert bad == -1
        return out

    narrow, whole = scores(width), scores(pad_classes(np.zeros(n_classes)).size)
    assert_array_equal(narrow, whole)
    # Against NumPy: the values' terms, NaN's rows of missing.
    dense = X.toarray()
    expected = np.nan_to_num(dense) @ table + np.isnan(dense) @ missing + intercept
    np.testing.assert_allclose(narrow, expected, rtol=1e-12)


@pytest.mark.parametrize(
    # MixedNB's families each read their own columns.
    "case",
    [case for case in THREADED_CASES if case.name != "MixedNB"],
    ids=lambda case: case.id,
)
def test_thread_invariant_data_give_work_for_several_threads(case):
    # test_invariants compares the estimators' results with one thread and
    # with more: its input must make the kernels use several.
    if not _kernels.openmp_enabled() or effective_n_threads() == 1:
        pytest.skip("the kernels run one thread here (no OpenMP, or one CPU)")
    X = case.make(THREADED_ROWS, seed=3)[0]
    assert effective_n_threads(X.size) > 1
    if case.sparse:
        assert effective_n_threads(sp.csr_matrix(X).nnz) > 1


def test_openmp_threads_follow_the_limit():
    if not _kernels.openmp_enabled():
        assert effective_n_threads() == 1
        return
    with threadpool_limits(limits=1, user_api="openmp"):
        assert _kernels.openmp_max_threads() == 1
    assert effective_n_threads() >= 1


def test_small_inputs_use_one_thread_and_others_every_thread():
    assert effective_n_threads(1000) == 1
    # Never a team of a size between one and all (GCC's OpenMP runtime
    # would end the threads it leaves idle, and start them again).
    with threadpool_limits(limits=4, user_api="openmp"):
        every = effective_n_threads()
        sizes = {effective_n_threads(work) for work in range(0, 1 << 20, 4096)}
    assert sizes == {1, every}


def test_teams_keep_their_threads(monkeypatch):
    # Kernels run one after another with the work of a few threads and of
    # many: the OpenMP threads stay the same ones (none ended and started
    # again), as /proc lists them.
    import os

    if not os.path.isdir("/proc/self/task"):
        pytest.skip("no /proc/self/task on this system")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)))
    # About 480,000 and 240,000 values of work to score: once, teams of 4
    # and of 3 threads.
    X, y = tfidf_like(8000, 400, 3)
    model = fastnb.MultinomialNB().fit(X, y)
    with threadpool_limits(limits=4, user_api="openmp"):
        model.predict_proba(X)
        before = set(os.listdir("/proc/self/task"))
        for _ in range(3):
            model.predict_proba(X[:4000])
            model.predict_proba(X)
        assert set(os.listdir("/proc/self/task")) == before


def test_scratch_blocks_do_not_share_cache_lines():
    scratch = thread_scratch(3, 5)
    assert scratch.shape == (3, _kernels.SCORE_ROWS, 5)
    # Each row has room for the classes padded to either kernel block.
    assert scratch.strides[2] == 8
    assert scratch.strides[1] >= _kernels.KDE_CLASS_BLOCK * 8
    # A thread's block ends at least a cache line before the next begins.
    assert scratch.strides[0] >= scratch.shape[1] * scratch.strides[1] + 64
    # Many classes: fewer rows a block, never fewer than one.
    wide = thread_scratch(2, 3000)
    assert 1 <= wide.shape[1] < _kernels.SCORE_ROWS
    assert wide.shape[1] * wide.strides[1] <= 256 * 1024
    assert thread_scratch(1, 100_000).shape[1:] == (1, 100_000)


@pytest.mark.parametrize(
    "scratch",
    [
        thread_scratch(1, 3),  # a block for one thread of two
        np.zeros((2, 4, 3)),  # rows without room for the padded classes
        thread_scratch(2, 3)[:, :, ::-1],  # rows not contiguous
        thread_scratch(2, 3)[:, :0],  # no row
    ],
    ids=["threads", "room", "strides", "rows"],
)
def test_scoring_kernels_refuse_a_scratch_without_room(scratch):
    X = np.ones((5, 2))
    table = np.zeros((2, 8))
    labels = np.empty(5, dtype=np.intp)
    out = np.empty((0, 0))
    with pytest.raises(ValueError, match="scratch must have a block of rows"):
        _kernels.discrete_score_dense(
            X,
            table,
            np.zeros(8),
            0.0,
            False,
            True,
            False,
            np.empty((0, 0)),
            _kernels.Output.ARGMAX,
            out,
            labels,
            scratch,
            2,
        )
    with pytest.raises(ValueError, match="scratch must have a block of rows"):
        _kernels.finish_scores(
            np.zeros((5, 3)), _kernels.Output.ARGMAX, out, labels, scratch, 2
        )


def out_of_range_calls():
    """Every kernel called with one index out of range, else valid input.

    Returns {case: (call, match)}, match a pattern of the IndexError's
    message. The input has three samples, four features and two classes.
    """
    k = _kernels
    dense = np.array([[1.0, 0, 2, 0], [0, 3, 0, 1], [4, 0, 0, 5]])
    csr, csc = sp.csr_matrix(dense), sp.csc_matrix(dense)
    y, weights = np.array([0, 1, 1], dtype=np.intp), np.ones(3)
    bad_y = np.array([0, 1, 2], dtype=np.intp)  # class 2 of two
    negative_y = np.array([0, -1, 1], dtype=np.intp)
    rows, class_ptr = np.arange(3, dtype=np.intp), np.array([0, 1, 3], dtype=np.intp)
    wide = np.ones((3, 5))  # a fifth feature, past the tables' four rows
    with_nan = np.where(np.isnan(dense), 0.0, dense)
    with_nan[1, 3] = np.nan  # missing in a feature past missing_term's rows

    def bad_column(X):
        """X's arrays, its last stored value moved to column (or row) 9."""
        indices = X.indices.copy()
        indices[-1] = 9
        return X.data, indices, X.indptr

    def past_stored(X):
        """X's arrays, its last row ending past the stored values."""
        indptr = X.indptr.copy()
        indptr[-1] += 3
        return X.data, X.indices, indptr

    table, intercept = pad_classes(np.zeros((4, 2))), pad_classes(np.zeros(2))
    discrete = (table, intercept, 0.0, False, False, False, np.empty((0, 0)))
    gaussian = np.zeros((len(table) + 1, 4, table.shape[1]))
    no_log_var = table[:0]  # NaN refused
    dense_nan = dense.copy()
    dense_nan[1, 1] = np.nan  # a missing value of class 1
    # Class 1 for every row (y's first rows are some kernels' output).
    ones = np.ones(3, dtype=np.intp)
    csr_nan, csc_nan = sp.csr_matrix(dense_nan), sp.csc_matrix(dense_nan)
    no_missing = np.empty((0, 0))

    def narrow():
        """Missing weights with room for two of the four features."""
        return np.zeros((2, 2))

    def finish():
        """Output, out, labels, scratch and threads of the scoring kernels."""
        output = k.Output.JOINT_LOG_LIKELIHOOD
        labels = np.empty(3, dtype=np.intp)
        return output, np.empty((3, 2)), labels, thread_scratch(2, 2), 2

    def categorical_finish(missing=False):
        """The categorical scoring kernels' missing flag, then finish()."""
        return missing, *finish()

    def kde_score(X, n_points, missing=False):
        """kde_score_dense of X with four features' tables of 3 points, each
        grid said to have n_points."""
        n_features, width = X.shape[1], k.KDE_CLASS_BLOCK
        return k.kde_score_dense(
            X,
            np.zeros((4, 3, width), dtype=np.float32),
            np.zeros(n_features),
            np.ones(n_features),
            np.full(n_features, n_points, dtype=np.intp),
            np.zeros((4, 4, width)),
            np.zeros(width),
            missing,
            *finish(),
        )

    def counts():
        return np.zeros((2, 4))

    def count_by_pieces(csr_arrays, labels):
        """discrete_count_csr_blocks of these CSR arrays and labels."""
        return k.discrete_count_csr_blocks(
            *csr_arrays,
            NO_ROWS,
            labels,
            weights,
            0.0,
            False,
            4,
            counts().reshape(-1),
            no_missing.reshape(-1),
            False,
            *fastnb._plans.csr_pieces(csr.indptr, 4),
            2,
        )

    def count_by_classes(csr_arrays, entries, tasks, n_dealt, parts):
        """discrete_count_csr of these CSR arrays, label entries grouped by
        class, tasks (n_dealt of them dealt) and part rows."""
        return k.discrete_count_csr(
            *csr_arrays,
            entries,
            NO_ROWS,
            weights,
            tasks,
            n_dealt,
            0.0,
            False,
            counts(),
            no_missing,
            False,
            *parts,
            2,
        )

    def chunks():
        """The counts of the second chunk of two rows (the rows 2 and 3)."""
        return np.zeros((1, 2, 4))

    def chunk_moments(observed=(0, 0, 0)):
        """observed (empty: NaN refused), mean and ssd of
        gaussian_moments_dense."""
        return np.zeros(observed), np.zeros((1, 2, 4)), np.zeros((1, 2, 4))

    def sparse_moments(missing=(0, 0)):
        """nz_weight, missing (empty: NaN refused), mean and ssd of
        gaussian_moments_csr / _csc."""
        return np.zeros((2, 4)), np.zeros(missing), np.zeros((2, 4)), np.zeros((2, 4))

    codes = np.array([[0, 1], [2, 0], [1, 2]])
    codes_csr, codes_csc = sp.csr_matrix(codes), sp.csc_matrix(codes)
    # Float codes with a missing value (NaN) stored in feature 1.
    missing_codes = np.array([[0.0, 1], [2, np.nan], [1, 2]])
    missing_csr = sp.csr_matrix(missing_codes)
    # Feature 1 stores nothing but its NaN: only the NaN reads its rows.
    only_nan = np.array([[0.0, 0], [2, np.nan], [1, 0]])
    only_nan_csr, only_nan_csc = sp.csr_matrix(only_nan), sp.csc_matrix(only_nan)
    offsets = np.array([0, 4, 8], dtype=np.intp)  # 3 categories + unseen each
    count_offsets = np.array([0, 3, 6], dtype=np.intp)  # 3 categories each
    categorical = pad_classes(np.zeros((8, 2)))
    # Counts of codes: 4 codes a feature, 2 classes, 16 entries in all.
    highest = np.array([3, 3])
    layout = np.array([0, 8, 16], dtype=np.intp)

    def count_table():
        return np.zeros((1, 16))

    def chunk_counts(n_chunks):
        """Largest codes, layouts, tables and class weights of
        categorical_check_count_dense."""
        return (
            np.empty((n_chunks, 2), dtype=codes.dtype),
            np.empty((n_chunks, 3), dtype=np.intp),
            np.empty((n_chunks, 64)),
            np.empty((n_chunks, 2)),
        )

    def count_sums():
        """Sizes, offsets and class weights of categorical_check_count_dense."""
        return np.zeros(2, dtype=np.int64), np.empty(3, dtype=np.intp), np.empty(2)

    def log_tables():
        """Outputs, scratch and threads of categorical_log_tables."""
        return (
            np.empty((8, 2)),
            np.empty((8, 2)),
            np.zeros((8, 8)),
            thread_scratch(2, 2)[:, 0],
            False,
            2,
        )

    def linear_terms(quadratic, missing_rows=0):
        """coef, square_coef (empty unless quadratic: past its rows if it
        is), missing_term (missing_rows rows: empty refuses NaN), threshold,
        binarize, quadratic, non_negative of linear_terms_*."""
        coef, square_coef = np.zeros((4, 1)), np.zeros((0, 1))
        missing_term = np.zeros((missing_rows, 1))
        return coef, square_coef, missing_term, 0.0, False, quadratic, False

    row = "row [0-9]+ has"
    chunk = "chunk [0-9]+ has"
    bounds = "[Oo]ut of bounds"
    return {
        "discrete_count_csr column": (
            lambda: count_by_classes(
                bad_column(csr),
                rows,
                whole_class_tasks(class_ptr),
                0,
                NO_PARTS.values(),
            ),
            bounds,
        ),
        "discrete_count_csr sample": (
            lambda: count_by_classes(
                sparse_arrays(csr),
                np.array([0, 1, 3], dtype=np.intp),
                whole_class_tasks(class_ptr),
                0,
                NO_PARTS.values(),
            ),
            bounds,
        ),
        "discrete_count_csr part": (
            lambda: count_by_classes(
                sparse_arrays(csr),
                rows,
                np.array([[0, 2, 0, 0], [2, 3, 1, 1]], dtype=np.intp),
                2,
                (np.zeros((1, csr.shape[1])), np.empty((0, 0))),
            ),
            bounds,
        ),
        "add_parts class": (
            lambda: k.add_parts(
                counts(),
                no_missing,
                np.zeros((2, csr.shape[1])),
                np.empty((0, 0)),
                np.array([0, 5], dtype=np.intp),
                2,
            ),
            bounds,
        ),
        "discrete_count_csr_blocks class": (
            lambda: count_by_pieces(sparse_arrays(csr), bad_y),
            bounds,
        ),
        "discrete_count_csr_blocks column": (
            lambda: count_by_pieces(bad_column(csr), y),
            bounds,
        ),
        "discrete_count_csc class": (
            lambda: k.discrete_count_csc(
                *sparse_arrays(csc),
                NO_ROWS,
                bad_y,
                weights,
                0.0,
                False,
                counts(),
                no_missing,
                False,
                2,
            ),
            bounds,
        ),
        "discrete_count_dense class": (
            lambda: k.discrete_count_dense(
                dense,
                NO_ROWS,
                bad_y,
                weights,
                0.0,
                False,
                counts(),
                no_missing,
                False,
                chunks(),
                2,
                64,
                2,
            ),
            bounds,
        ),
        "discrete_count_dense negative class": (
            lambda: k.discrete_count_dense(
                dense,
                NO_ROWS,
                negative_y,
                weights,
                0.0,
                False,
                counts(),
                no_missing,
                False,
                chunks(),
                2,
                64,
                2,
            ),
            bounds,
        ),
        "discrete_count_csr missing": (
            lambda: k.discrete_count_csr(
                *sparse_arrays(sp.csr_matrix(with_nan)),
                rows,
                NO_ROWS,
                weights,
                whole_class_tasks(class_ptr),
                0,
                0.0,
                False,
                counts(),
                narrow(),
                True,
                *NO_PARTS.values(),
                2,
            ),
            bounds,
        ),
        "discrete_score_csr column": (
            lambda: k.discrete_score_csr(*bad_column(csr), *discrete, *finish()),
            row,
        ),
        "discrete_score_csr offset": (
            lambda: k.discrete_score_csr(*past_stored(csr), *discrete, *finish()),
            row,
        ),
        "discrete_score_dense column": (
            lambda: k.discrete_score_dense(wide, *discrete, *finish()),
            row,
        ),
        "finish_scores sample": (
            lambda: k.finish_scores(
                np.zeros((3, 2)),
                k.Output.PROBA,
                np.empty((2, 2)),
                y,
                thread_scratch(2, 2),
                2,
            ),
            bounds,
        ),
        "finish_scores argmax sample": (
            lambda: k.finish_scores(
                np.zeros((3, 2)),
                k.Output.ARGMAX,
                np.empty((3, 2)),
                y[:2],
                thread_scratch(2, 2),
                2,
            ),
            bounds,
        ),
        "take_labels label": (
            lambda: k.take_labels(
                np.zeros((2, 1), dtype=np.uint64),
                bad_y,
                np.empty((3, 1), dtype=np.uint64),
                2,
            ),
            bounds,
        ),
        "entry_value_ends row": (
            lambda: k.entry_value_ends(
                np.array([0, 1, 2]),
                np.array([0, 2]),
                NO_ROWS,
                np.empty(3, dtype=np.intp),
                2,
            ),
            bounds,
        ),
        "class_order class": (
            lambda: k.class_order(
                bad_y, np.empty(3, dtype=np.intp), np.empty(3, dtype=np.intp), 2
            ),
            bounds,
        ),
        "multinomial_tables feature": (
            lambda: k.multinomial_tables(counts(), np.ones(4), table[:3], 2),
            bounds,
        ),
        "gaussian_moments_dense class": (
            lambda: k.gaussian_moments_dense(
                dense, NO_ROWS, bad_y, weights, 3, np.zeros((1, 2)), *chunk_moments(), 2
            ),
            bounds,
        ),
        "gaussian_moments_dense F class": (
            lambda: k.gaussian_moments_dense(
                np.asfortranarray(dense),
                NO_ROWS,
                bad_y,
                weights,
                3,
                np.zeros((1, 2)),
                *chunk_moments(),
                2,
            ),
            bounds,
        ),
        "gaussian_moments_csr column": (
            lambda: k.gaussian_moments_csr(
                *bad_column(csr),
                rows,
                class_ptr,
                NO_ROWS,
                weights,
                np.array([0, 4], dtype=np.intp),  # one block of the 4 features
                *sparse_moments(),
                2,
            ),
            bounds,
        ),
        "gaussian_moments_csr missing feature": (
            lambda: k.gaussian_moments_csr(
                *sparse_arrays(csr_nan),
                rows,
                class_ptr,
                NO_ROWS,
                weights,
                np.array([0, 4], dtype=np.intp),  # one block of the 4 features
                *sparse_moments((2, 1)),
                2,
            ),
            bounds,
        ),
        "gaussian_moments_csc class": (
            lambda: k.gaussian_moments_csc(
                *sparse_arrays(csc), NO_ROWS, bad_y, weights, *sparse_moments(), 2
            ),
            bounds,
        ),
        "gaussian_moments_csc missing class": (
            lambda: k.gaussian_moments_csc(
                *sparse_arrays(csc_nan),
                NO_ROWS,
                ones,
                weights,
                *sparse_moments((1, 4)),
                2,
            ),
            bounds,
        ),
        "gaussian_score_dense column": (
            lambda: k.gaussian_score_dense(
                wide, table, table, no_log_var, intercept, *finish()
            ),
            row,
        ),
        "gaussian_score_dense missing column": (
            lambda: k.gaussian_score_dense(
                wide, table, table, table, intercept, *finish()
            ),
            row,
        ),
        "gaussian_score_dense log_var rows": (
            lambda: k.gaussian_score_dense(
                dense_nan, table, table, table[:2], intercept, *finish()
            ),
            "log_var has 2 rows of 4",
        ),
        "gaussian_score_csr column": (
            lambda: k.gaussian_score_csr(
                *bad_column(csr), gaussian, no_log_var, intercept, *finish()
            ),
            row,
        ),
        "gaussian_score_csr missing column": (
            lambda: k.gaussian_score_csr(
                *bad_column(csr), gaussian, table, intercept, *finish()
            ),
            row,
        ),
        "gaussian_score_csr offset": (
            lambda: k.gaussian_score_csr(
                *past_stored(csr), gaussian, no_log_var, intercept, *finish()
            ),
            row,
        ),
        "gaussian_score_csr log_var rows": (
            lambda: k.gaussian_score_csr(
                *sparse_arrays(csr_nan), gaussian, table[:3], intercept, *finish()
            ),
            "log_var has 3 rows of 4",
        ),
        "categorical_check_count_dense class": (
            lambda: k.categorical_check_count_dense(
                codes,
                bad_y,
                weights,
                10,
                2,
                3,
                *chunk_counts(1),
                *count_sums(),
                False,
                2,
            ),
            row,
        ),
        "categorical_check_count_dense negative class": (
            lambda: k.categorical_check_count_dense(
                codes,
                negative_y,
                weights,
                10,
                2,
                3,
                *chunk_counts(1),
                *count_sums(),
                False,
                2,
            ),
            row,
        ),
        "categorical_check_count_dense chunk": (
            # Two chunks of two rows, largest codes and layout for one.
            lambda: k.categorical_check_count_dense(
                codes,
                y,
                weights,
                10,
                2,
                2,
                *chunk_counts(1)[:2],
                np.empty((2, 64)),
                np.empty((2, 2)),
                *count_sums(),
                False,
                2,
            ),
            bounds,
        ),
        "categorical_count_dense layout": (
            lambda: k.categorical_count_dense(
                codes,
                y,
                weights,
                2,
                highest,
                layout + [0, 4, 4],
                3,
                count_table(),
                2,
                False,
                2,
            ),
            chunk,
        ),
        "categorical_count_dense class": (
            lambda: k.categorical_count_dense(
                codes, bad_y, weights, 2, highest, layout, 3, count_table(), 2, False, 2
            ),
            chunk,
        ),
        "categorical_merge_counts layout": (
            lambda: k.categorical_merge_counts(
                np.zeros((2, 16)),
                np.array([[0, 8, 16], [0, 8, 18]], dtype=np.intp),
                np.array([0, 4, 8], dtype=np.intp),
                np.zeros((8, 2)),
                np.empty(0),
                np.empty((0, 0)),
                2,
            ),
            bounds,
        ),
        "categorical_merge_counts offsets": (
            lambda: k.categorical_merge_counts(
                np.zeros((2, 16)),
                np.array([[0, 8, 16], [0, 8, 16]], dtype=np.intp),
                np.array([0, 5, 9], dtype=np.intp),
                np.zeros((8, 2)),
                np.empty(0),
                np.empty((0, 0)),
                2,
            ),
            bounds,
        ),
        "categorical_score_dense offset": (
            lambda: k.categorical_score_dense(
                codes,
                np.array([0, 6, 12], dtype=np.intp),  # rows 6-11 of 8
                categorical,
                intercept,
                *categorical_finish(),
            ),
            row,
        ),
        "categorical_check_csr column": (
            lambda: k.categorical_check_csr(
                *bad_column(codes_csr),
                10,
                np.zeros((2, 2), dtype=codes.dtype),
                False,
                2,
            ),
            bounds,
        ),
        "categorical_check_csc offset": (
            lambda: k.categorical_check_csc(
                *past_stored(codes_csc), 10, np.zeros(2, dtype=codes.dtype), False, 2
            ),
            bounds,
        ),
        "categorical_count_csr column": (
            lambda: k.categorical_count_csr(
                *bad_column(codes_csr),
                y,
                weights,
                count_offsets,
                2,
                3,
                np.zeros((1, 12)),
                np.zeros((1, 2)),
                False,
                2,
            ),
            bounds,
        ),
        "categorical_count_csr code": (
            lambda: k.categorical_count_csr(
                *sparse_arrays(sp.csr_matrix(codes * 2)),
                y,
                weights,
                count_offsets,
                2,
                3,
                np.zeros((1, 12)),
                np.zeros((1, 2)),
                False,
                2,
            ),
            chunk,
        ),
        "categorical_count_csr class": (
            lambda: k.categorical_count_csr(
                *sparse_arrays(codes_csr),
                bad_y,
                weights,
                count_offsets,
                2,
                3,
                np.zeros((1, 12)),
                np.zeros((1, 2)),
                False,
                2,
            ),
            chunk,
        ),
        "categorical_count_csc class": (
            lambda: k.categorical_count_csc(
                *sparse_arrays(codes_csc),
                bad_y,
                weights,
                count_offsets,
                np.zeros((6, 2)),
                False,
                2,
            ),
            bounds,
        ),
        "categorical_count_csc code": (
            lambda: k.categorical_count_csc(
                *sparse_arrays(sp.csc_matrix(codes * 2)),
                y,
                weights,
                count_offsets,
                np.zeros((6, 2)),
                False,
                2,
            ),
            "column [0-9]+ has",
        ),
        "categorical_add_zeros offsets": (
            lambda: k.categorical_add_zeros(
                np.zeros((6, 2)),
                np.array([0, 3, 7], dtype=np.intp),
                np.ones(2),
                thread_scratch(2, 2)[:, 0],
                2,
            ),
            bounds,
        ),
        "categorical_zero_scores offsets": (
            lambda: k.categorical_zero_scores(
                categorical,
                np.array([0, 9, 12], dtype=np.intp),
                intercept,
                np.empty(len(intercept)),
                2,
            ),
            bounds,
        ),
        "categorical_score_csr column": (
            lambda: k.categorical_score_csr(
                *bad_column(codes_csr),
                offsets,
                categorical,
                intercept,
                False,
                *categorical_finish(),
            ),
            row,
        ),
        "categorical_score_csr every feature offset": (
            lambda: k.categorical_score_csr(
                *past_stored(codes_csr),
                offsets,
                categorical,
                intercept,
                True,
                *categorical_finish(),
            ),
            row,
        ),
        "linear_terms_csr column": (
            lambda: k.linear_terms_csr(
                *bad_column(csr), *linear_terms(False), np.empty((csr.nnz, 1)), 2
            ),
            bounds,
        ),
        "linear_terms_dense column": (
            lambda: k.linear_terms_dense(
                wide, *linear_terms(False), np.empty((3, 5, 1)), 2
            ),
            bounds,
        ),
        "linear_terms_dense square": (
            lambda: k.linear_terms_dense(
                dense, *linear_terms(True), np.empty((3, 4, 1)), 2
            ),
            bounds,
        ),
        "linear_terms_dense missing": (
            lambda: k.linear_terms_dense(
                with_nan, *linear_terms(False, 2), np.empty((3, 4, 1)), 2
            ),
            bounds,
        ),
        "categorical_terms_csr feature": (
            lambda: k.categorical_terms_csr(
                *bad_column(codes_csr),
                offsets,
                np.zeros((8, 1)),
                np.zeros((0, 1)),
                np.empty((codes_csr.nnz, 1)),
                2,
            ),
            bounds,
        ),
        "categorical_terms_dense offset": (
            lambda: k.categorical_terms_dense(
                codes,
                np.array([0, 6, 12], dtype=np.intp),  # rows 6-11 of 8
                np.zeros((8, 1)),
                np.zeros((0, 1)),
                np.empty((3, 2, 1)),
                2,
            ),
            bounds,
        ),
        # missing="ignore": the new indices, each out of range once.
        "categorical_terms_csr missing": (
            lambda: k.categorical_terms_csr(
                *sparse_arrays(missing_csr),
                offsets,
                np.zeros((8, 1)),
                np.zeros((1, 1)),  # feature 1's NaN past missing_term's row
                np.empty((missing_csr.nnz, 1)),
                2,
            ),
            bounds,
        ),
        "categorical_terms_dense missing": (
            lambda: k.categorical_terms_dense(
                missing_codes,
                offsets,
                np.zeros((8, 1)),
                np.zeros((1, 1)),
                np.empty((3, 2, 1)),
                2,
            ),
            bounds,
        ),
        "categorical_score_csr missing offset": (
            # Feature 1's code-0 row, taken away for its NaN, is row 9 of 8.
            lambda: k.categorical_score_csr(
                *sparse_arrays(only_nan_csr),
                np.array([0, 9, 12], dtype=np.intp),
                categorical,
                intercept,
                False,
                *categorical_finish(missing=True),
            ),
            row,
        ),
        "categorical_count_csr missing row": (
            # Feature 1's row for missing values, 6, is past the 6 rows.
            lambda: k.categorical_count_csr(
                *sparse_arrays(only_nan_csr),
                y,
                weights,
                np.array([0, 4, 7], dtype=np.intp),
                2,
                3,
                np.zeros((1, 12)),
                np.zeros((1, 2)),
                True,
                2,
            ),
            bounds,
        ),
        "categorical_count_csc missing row": (
            lambda: k.categorical_count_csc(
                *sparse_arrays(only_nan_csc),
                y,
                weights,
                np.array([0, 4, 7], dtype=np.intp),
                np.zeros((6, 2)),
                True,
                2,
            ),
            bounds,
        ),
        "finish_scores cost": (
            lambda: k.finish_scores(
                np.zeros((3, 3)),
                k.Output.MIN_EXPECTED_COST,
                np.zeros((2, 2)),  # the cost matrix of two classes, not three
                np.empty(3, dtype=np.intp),
                thread_scratch(2, 3),
                2,
            ),
            bounds,
        ),
        "categorical_log_tables counts": (
            lambda: k.categorical_log_tables(
                np.ones((5, 2)), offsets[:3], offsets[:3], np.ones(8), *log_tables()
            ),
            bounds,
        ),
        "kde_bin_dense value past the grid": (
            # dense's largest value, 5, lands past a grid of 4 points a feature.
            lambda: k.kde_bin_dense(
                dense,
                NO_ROWS,
                y,
                weights,
                np.ones(4),
                np.zeros(4),
                4,
                4,
                False,
                np.zeros((2, 16)),
                2,
            ),
            bounds,
        ),
        "kde_bin_dense value past the grid, NaN skipped": (
            lambda: k.kde_bin_dense(
                dense_nan,
                NO_ROWS,
                y,
                weights,
                np.ones(4),
                np.zeros(4),
                4,
                4,
                True,
                np.zeros((2, 16)),
                2,
            ),
            bounds,
        ),
        "kde_score_dense grid longer than its table": (
            lambda: kde_score(dense, n_points=4),
            row,
        ),
        "kde_score_dense more features than tables": (
            lambda: kde_score(wide, n_points=3),
            row,
        ),
        "kde_score_dense missing, more features than tables": (
            lambda: kde_score(wide, n_points=3, missing=True),
            row,
        ),
        "kde_tail_log_density point": (
            lambda: k.kde_tail_log_density(
                np.ones((2, 4)),
                np.zeros((2, 4), dtype=np.intp),
                np.zeros((2, 4), dtype=np.intp),
                np.ones(2),
                np.ones(2, dtype=np.intp),
                np.zeros(2),
                np.array([9], dtype=np.intp),
                np.zeros((2, 4)),
                2,
            ),
            bounds,
        ),
        "categorical_log_tables pseudo": (
            lambda: k.categorical_log_tables(
                np.ones((6, 2)), offsets - [0, 1, 2], offsets, np.ones(7), *log_tables()
            ),
            bounds,
        ),
    }


OUT_OF_RANGE = out_of_range_calls()


@pytest.mark.skipif(
    not baseline.debug_build(), reason="bounds checks need a FASTNB_DEBUG=1 build"
)
# An error swallowed on the way ("Exception ignored in ...") fails the test.
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("case", OUT_OF_RANGE)
def test_debug_build_raises_index_error(case):
    call, match = OUT_OF_RANGE[case]
    with pytest.raises(IndexError, match=match):
        call()


def peak_bytes(function):
    """Peak memory NumPy allocates while function runs (tracemalloc)."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_memory_of_fit_and_predict(Estimator):
    n_samples, n_features, n_classes = 40_000, 50, 40
    X, y = tfidf_like(n_samples, n_features, n_classes)
    samples_by_classes = n_samples * n_classes * 8
    model = Estimator()
    fit_peak = peak_bytes(lambda: model.fit(X, y))
    # fit needs a few vectors of n_samples (labels, weights, their order),
    # never an n_samples x n_classes array.
    assert fit_peak < 8 * n_samples * 8 < samples_by_classes / 4
    predict_peak = peak_bytes(lambda: model.predict(X))
    # predict: its output and the class indices behind it, plus tables and
    # per-thread scratch.
    assert predict_peak < 2 * n_samples * 8 + 4 * n_features * n_classes * 8 + 65536
    proba_peak = peak_bytes(lambda: model.predict_proba(X))
    assert proba_peak < samples_by_classes * 1.1


def score_all_kernels(kernels):
    """Outputs of the scoring and moments kernels on fixed data."""
    rng = np.random.default_rng(3)
    X, _ = tfidf_like(500, 40, 3, seed=3)
    dense = rng.normal(size=(300, 13)) * 5 + 2
    y = rng.integers(0, 11, 300)
    table = pad_classes(np.log(rng.random((40, 11))))
    theta = pad_classes(rng.normal(size=(13, 11)))
    inv_var = pad_classes(rng.random((13, 11)) + 0.5)
    # For X: class 0 with variances of 1e-9, whose zeros weigh 1e9 each.
    sparse_theta = rng.normal(size=(40, 11))
    sparse_inv_var = (rng.random((40, 11)) + 0.5) * np.r_[1e9, np.ones(10)]
    sparse_table = sparse_gaussian_table(
        pad_classes(sparse_theta), pad_classes(sparse_inv_var)
    )
    zeros = pad_classes(np.zeros(11))
    # Missing values (missing="ignore"): their features' log(2 pi var) back.
    dense_nan = np.where(rng.random(dense.shape) < 0.1, np.nan, dense)
    X_nan = X.copy()
    X_nan.data[::7] = np.nan
    log_var = pad_classes(rng.normal(size=(13, 11)))
    sparse_log_var = pad_classes(rng.normal(size=(40, 11)))
    # missing="ignore": a tenth of the values missing, each adding its row.
    with_nan = np.where(rng.random(dense.shape) < 0.1, np.nan, dense)
    missing_table = pad_classes(rng.normal(size=(40, 11)))

    def score(kernel, n_samples, output, *arguments):
        out = np.empty((n_samples, 11))
        kernel(
            *arguments,
            output,
            out,
            np.empty(0, dtype=np.intp),
            thread_scratch(2, 11),
            2,
        )
        return out

    results = []
    Output = kernels.Output
    for output in (Output.JOINT_LOG_LIKELIHOOD, Output.PROBA, Output.LOG_PROBA):
        results += [
            score(
                kernels.discrete_score_csr,
                500,
                output,
                X.data,
                X.indices,
                X.indptr,
                table,
                zeros,
                0.0,
                False,
                False,
                False,
                np.empty((0, 0)),
            ),
            score(
                kernels.discrete_score_dense,
                300,
                output,
                with_nan,
                table,
                zeros,
                0.0,
                False,
                False,
                True,
                missing_table,
            ),
        ]
        # missing="error" (no log_var table), then "ignore" on data with NaN.
        for dense_X, sparse_X, dense_log_var, sparse_log_var_table in (
            (dense, X, theta[:0], theta[:0]),
            (dense_nan, X_nan, log_var, sparse_log_var),
        ):
            results += [
                score(
                    kernels.gaussian_score_dense,
                    300,
                    output,
                    dense_X,
                    theta,
                    inv_var,
                    dense_log_var,
                    zeros,
                ),
                score(
                    kernels.gaussian_score_csr,
                    500,
                    output,
                    *sparse_arrays(sparse_X),
                    sparse_table,
                    sparse_log_var_table,
                    zeros,
                ),
            ]
    moments = []
    for data, observed in ((dense, (0, 0, 0)), (dense_nan, (1, 11, 13))):
        weight, mean, ssd = (
            np.zeros((1, 11)),
            np.zeros((1, 11, 13)),
            np.zeros((1, 11, 13)),
        )
        observed = np.zeros(observed)
        kernels.gaussian_moments_dense(
            data,
            NO_ROWS,
            y,
            np.ones(300),
            1 << 16,
            weight,
            observed,
            mean,
            ssd,
            n_threads=2,
        )
        moments += [weight, observed, mean, ssd]
    return results + moments


@pytest.mark.parametrize("kernels", KERNEL_VARIANTS, ids=lambda m: m.__name__)
def test_probabilities_are_the_softmax_of_the_scores_to_rounding(kernels):
    # predict_proba's and predict_log_proba's exp (a polynomial of its own
    # in the AVX2 and AVX-512 variants, libm's elsewhere) against NumPy's:
    # score differences from 0 to -1800, through the subnormal results
    # (below 2**-1022, from about -708) to 0 (below about -745). 4001 rows:
    # whole blocks of scratch rows and a part of one.
    n_classes = 11
    x = np.linspace(0.0, 60.0, 4001)[:, None]
    intercept = pad_classes(np.linspace(0.0, -3.0, n_classes))
    theta = pad_classes(np.zeros((1, n_classes)))
    inv_var = pad_classes(np.arange(n_classes)[None, :] / (n_classes - 1))
    outputs = {}
    Output = kernels.Output
    for output in (Output.JOINT_LOG_LIKELIHOOD, Output.PROBA, Output.LOG_PROBA):
        out = np.empty((len(x), n_classes))
        kernels.gaussian_score_dense(
            x,
            theta,
            inv_var,
            np.empty((0, 0)),
            intercept,
            output,
            out,
            np.empty(0, dtype=np.intp),
            thread_scratch(2, n_classes),
            2,
        )
        outputs[output] = out
    scores = outputs[Output.JOINT_LOG_LIKELIHOOD]
    shifted = scores - scores.max(axis=1, keepdims=True)
    exps = np.exp(shifted)
    expected = exps / exps.sum(axis=1, keepdims=True)
    # log(total) of exps each within an ulp: the same to a few ulps of 1.
    expected_log = shifted - np.log(exps.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(
        outputs[Output.LOG_PROBA], expected_log, rtol=1e-15, atol=1e-15
    )
    proba = outputs[Output.PROBA]
    smallest_normal = np.finfo(np.float64).tiny
    normal = expected >= smallest_normal
    assert (~normal).sum() > 100  # subnormals and zeros
    # Each exp within an ulp of NumPy's, the sum and the quotient rounded.
    np.testing.assert_allclose(proba[normal], expected[normal], rtol=1e-15)
    # Subnormal and zero results to a few of the least subnormal steps.
    tiny = np.abs(proba - expected)[~normal] / np.spacing(0.0)
    assert tiny.max() <= 4


@pytest.mark.emulated
@pytest.mark.parametrize("variant", runnable_variants(), ids=lambda m: m.__name__)
def test_instruction_set_variants_agree_with_baseline(variant):
    # Fused multiply-adds may round differently: agreement to rounding.
    for ours, reference in zip(
        score_all_kernels(variant), score_all_kernels(baseline), strict=True
    ):
        np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-300)


def table_outputs(kernel, n_threads):
    """The outputs of a count family's table kernel on fixed counts."""
    rng = np.random.default_rng(5)
    # Several blocks of features (TABLE_BLOCK = 2048), some zero counts.
    counts = np.floor(rng.random((5, 3 * 2048 + 17)) ** 4 * 7)
    class_count = counts.max(axis=1) * 2  # at least every feature count
    alpha = rng.random(counts.shape[1]) + 0.1
    n_classes, n_features = counts.shape
    attribute = np.empty_like(counts)
    table = np.zeros((n_features, pad_classes(np.zeros(n_classes)).shape[0]))
    sums = np.empty(n_classes)
    if kernel == "multinomial":
        _kernels.multinomial_tables(counts, alpha, table, n_threads)
        return (table,)
    if kernel == "complement":
        feature_all = np.empty(n_features)
        _kernels.complement_tables(counts, alpha, True, feature_all, table, n_threads)
        return table, feature_all
    # Some of each class's samples lack each feature (missing="ignore").
    seen = class_count[:, np.newaxis] * rng.uniform(0.5, 1.0, counts.shape)
    missing = np.zeros_like(table)
    if kernel == "bernoulli":
        certain = np.zeros(counts.shape, dtype=np.uint8)
        _kernels.bernoulli_tables(
            counts,
            seen + counts,
            alpha,
            2 * alpha,
            attribute,
            table,
            missing,
            sums,
            certain,
            n_threads,
        )
        return attribute, table, missing, sums
    _kernels.poisson_tables(
        counts,
        seen,
        alpha,
        np.empty(n_features),
        attribute,
        table,
        missing,
        sums,
        n_threads,
    )
    return attribute, table, missing, sums


@pytest.mark.parametrize(
    "kernel", ["multinomial", "complement", "bernoulli", "poisson"]
)
@pytest.mark.parametrize("n_threads", [2, 3, 7])
def test_tables_do_not_depend_on_thread_count(kernel, n_threads):
    for serial, parallel in zip(
        table_outputs(kernel, 1), table_outputs(kernel, n_threads), strict=True
    ):
        assert_array_equal(parallel, serial)


def test_multinomial_table_is_the_smoothed_log_frequency():
    (table,) = table_outputs("multinomial", 2)
    rng = np.random.default_rng(5)  # the counts and alpha of table_outputs
    counts = np.floor(rng.random((5, 3 * 2048 + 17)) ** 4 * 7)
    smoothed = counts + (rng.random(counts.shape[1]) + 0.1)
    expected = np.log(smoothed / smoothed.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(table[:, :5].T, expected, rtol=1e-12)
    assert not table[:, 5:].any()  # the padding stays zero


@pytest.mark.parametrize("norm", [False, True])
def test_complement_table_is_the_normalised_complement_log_frequency(norm):
    # Rennie et al.'s weights, as scikit-learn computes them (to rounding:
    # the log of a complement count less the log of its class's total).
    rng = np.random.default_rng(6)
    counts = np.floor(rng.random((4, 2 * 2048 + 5)) ** 6 * 9)  # most are 0
    alpha = rng.random(counts.shape[1]) + 0.1
    table = np.full((counts.shape[1], 4), np.nan)
    feature_all = np.empty(counts.shape[1])
    _kernels.complement_tables(counts, alpha, norm, feature_all, table, 2)
    complement = counts.sum(axis=0) + alpha - counts
    logged = np.log(complement / complement.sum(axis=1, keepdims=True))
    expected = logged / logged.sum(axis=1, keepdims=True) if norm else -logged
    np.testing.assert_allclose(table.T, expected, rtol=1e-13)
    assert_array_equal(feature_all, counts.sum(axis=0))


@pytest.mark.parametrize("alpha", [1.0, 0.3, 1e-10, 0.0])
def test_multinomial_tables_of_small_counts_are_the_same_bit_for_bit(alpha):
    # With one alpha for every feature (a stride-0 view), whole counts below
    # SMALL_COUNTS (256) take their log from a table: the same values as
    # log(count + alpha), which a per-feature alpha takes each time.
    rng = np.random.default_rng(3)
    edges = [0.0, 1.0, 2.0, 254.0, 255.0, 256.0, 257.0, 0.5, 255.5, 1e9, 3.25]
    counts = np.vstack([edges, rng.integers(0, 300, (2, len(edges))), edges[::-1]])
    counts = counts.astype(np.float64)
    n_classes, n_features = counts.shape
    outputs = []
    for pseudo in (np.broadcast_to(alpha, n_features), np.full(n_features, alpha)):
        table = np.zeros((n_features, 8))
        _kernels.multinomial_tables(counts, pseudo, table, 2)
        outputs.append(table)
    one_table, each_table = outputs
    assert_array_equal(one_table, each_table)
    smoothed = counts + alpha
    with np.errstate(divide="ignore"):
        expected = np.log(smoothed) - np.log(smoothed.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(one_table[:, :n_classes].T, expected, rtol=1e-14)


@pytest.mark.parametrize("alpha", [1.0, 0.3, 1e-10, 0.0])
def test_bernoulli_tables_of_small_counts_are_the_same_bit_for_bit(alpha):
    # With one alpha for every feature and no missing values (stride-0
    # views), whole counts below SMALL_COUNTS (256) take log p and log(1 -
    # p) from a table a class: the same values as a per-feature alpha's
    # logs and exps, taken each time. Certain features (p = 1 without
    # smoothing) come out of both alike.
    rng = np.random.default_rng(4)
    edges = [0.0, 1.0, 2.0, 254.0, 255.0, 256.0, 257.0, 0.5, 255.5, 300.0, 3.25]
    counts = np.vstack([edges, rng.integers(0, 300, (2, len(edges)))])
    counts = counts.astype(np.float64)
    class_count = np.array([300.0, 300.0, 299.0])
    n_classes, n_features = counts.shape
    outputs = []
    for on, total in (
        (np.broadcast_to(alpha, n_features), np.broadcast_to(2 * alpha, n_features)),
        (np.full(n_features, alpha), np.full(n_features, 2 * alpha)),
    ):
        attribute = np.empty_like(counts)
        table = np.zeros((n_features, 8))
        sums = np.empty(n_classes)
        certain = np.zeros(counts.shape, dtype=np.uint8)
        n_certain = _kernels.bernoulli_tables(
            counts,
            np.broadcast_to(class_count[:, None], counts.shape),
            on,
            total,
            attribute,
            table,
            np.empty((0, 0)),
            sums,
            certain,
            2,
        )
        outputs.append((attribute, table, sums, certain, n_certain))
    for one, each in zip(*outputs, strict=True):
        assert_array_equal(one, each)
    attribute, _, _, certain, _ = outputs[0]
    with np.errstate(divide="ignore"):
        expected = np.log(counts + alpha) - np.log(class_count + 2 * alpha)[:, None]
    np.testing.assert_allclose(attribute, expected, rtol=1e-14)
    assert_array_equal(certain, (expected == 0.0).astype(np.uint8))


def unsorted_rows(X, rng):
    """CSR X with each row's entries in a random order (the same matrix)."""
    X = X.copy()
    for i in range(X.shape[0]):
        start, stop = X.indptr[i], X.indptr[i + 1]
        order = start + rng.permutation(stop - start)
        X.indices[start:stop] = X.indices[order]
        X.data[start:stop] = X.data[order]
    X.has_sorted_indices = False
    return X


@pytest.mark.parametrize("n_threads", [1, 2, 7])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_repeated_indices_are_found_in_any_row(index_dtype, n_threads):
    # Against a row-by-row reading in NumPy: rows of 0 to 30 indices out of
    # 200 columns (the last column too, a bit at the end of a word), a
    # repeat put in one random row at a time, adjacent or apart.
    rng = np.random.default_rng(7)
    X = sp.random(500, 200, density=0.05, format="csr", random_state=rng)
    X.indices[X.indptr[1] - 1] = 199 if X.indptr[1] else X.indices[0]
    X = unsorted_rows(X, rng)
    indices = X.indices.astype(index_dtype)
    indptr = X.indptr.astype(index_dtype)

    def repeats(indices):
        return any(
            len(set(row)) < len(row)
            for row in np.split(indices, indptr[1:-1].astype(np.intp))
        )

    assert not repeats(indices)
    assert not _kernels.sparse_repeats_an_index(indices, indptr, 200, n_threads)
    long_rows = np.flatnonzero(np.diff(indptr) >= 2)
    for row in rng.choice(long_rows, 25):
        start, stop = indptr[row], indptr[row + 1]
        broken = indices.copy()
        a, b = sorted(rng.choice(np.arange(start, stop), 2, replace=False))
        broken[b] = broken[a]
        assert repeats(broken)
        assert _kernels.sparse_repeats_an_index(broken, indptr, 200, n_threads)
        # The bits a row set are cleared: the next row's are not repeats.
        assert not _kernels.sparse_repeats_an_index(indices, indptr, 200, n_threads)


COUNT_VALUE_DTYPES = [np.int64, np.int32, np.uint8]


@pytest.mark.parametrize("value_dtype", COUNT_VALUE_DTYPES)
@pytest.mark.parametrize("kernels", KERNEL_VARIANTS, ids=lambda m: m.__name__)
def test_count_kernels_read_integers_as_their_float64_values(kernels, value_dtype):
    # Counting and scoring, CSR (sorted or not), CSC and dense, plain and
    # binarized: integer values give the sums and scores of the same values
    # as float64, bit for bit, in every variant.
    rng = np.random.default_rng(11)
    n_samples, n_features, n_classes = 400, 60, 5
    dense = rng.poisson(1.0, (n_samples, n_features))
    dense[rng.random(dense.shape) < 0.5] = 0
    y = rng.integers(0, n_classes, n_samples)
    weights = rng.random(n_samples)
    table = pad_classes(np.log(rng.random((n_features, n_classes))))
    intercept = pad_classes(rng.random(n_classes))

    def results(X):
        found = []
        csr = unsorted_rows(sp.csr_matrix(X), np.random.default_rng(0))
        csc = sp.csc_matrix(X)
        for binarize in (False, True):
            counting = {"threshold": 0.5, "binarize": binarize, "allow_nan": False}
            out = np.zeros((n_classes, n_features))
            order = np.argsort(y, kind="stable")
            class_ptr = np.concatenate([[0], np.cumsum(np.bincount(y))])
            kernels.discrete_count_csr(
                *sparse_arrays(csr),
                order,
                NO_ROWS,
                weights,
                whole_class_tasks(class_ptr.astype(np.intp)),
                0,
                out=out,
                missing=np.empty((0, 0)),
                n_threads=3,
                **counting,
                **NO_PARTS,
            )
            found.append(out)
            out = np.zeros((n_classes, n_features))
            kernels.discrete_count_csc(
                *sparse_arrays(csc),
                NO_ROWS,
                y,
                weights,
                out=out,
                missing=np.empty((0, 0)),
                n_threads=3,
                **counting,
            )
            found.append(out)
            out = np.zeros((n_classes, n_features))
            kernels.discrete_count_dense(
                X,
                NO_ROWS,
                y,
                weights,
                out=out,
                missing=np.empty((0, 0)),
                chunk_counts=np.empty((1, n_classes, n_features)),
                chunk_rows=256,
                block_width=16,
                n_threads=3,
                **counting,
            )
            found.append(out)
            arguments = (
                table,
                intercept,
                0.5,
                binarize,
                True,
                False,
                np.empty((0, 0)),
                kernels.Output.JOINT_LOG_LIKELIHOOD,
            )
            for layout, score in (
                ("csr", kernels.discrete_score_csr),
                ("dense", kernels.discrete_score_dense),
            ):
                out = np.empty((n_samples, n_classes))
                given = sparse_arrays(csr) if layout == "csr" else (X,)
                assert (
                    score(
                        *given,
                        *arguments,
                        out,
                        np.empty(0, dtype=np.intp),
                        thread_scratch(3, n_classes),
                        3,
                    )
                    == -1
                )
                found.append(out)
        return found

    values = np.ascontiguousarray(dense.astype(value_dtype))
    for ours, expected in zip(
        results(values), results(dense.astype(np.float64)), strict=True
    ):
        assert_array_equal(ours, expected, strict=True)


@pytest.mark.parametrize("value_dtype", [np.int64, np.int32])
def test_count_kernels_refuse_negative_integers_first_of_all(value_dtype):
    values = np.zeros(50_000, dtype=value_dtype)
    values[[30_000, 40_000]] = -1
    assert _kernels.first_refused_value(values, True, False, 3) == 30_000
    assert _kernels.first_refused_value(values, False, False, 3) == -1


@pytest.mark.parametrize("n_threads", [1, 2, 3, 7])
def test_first_refused_value_is_the_first_whatever_the_threads(n_threads):
    values = np.ones(200_000)
    assert _kernels.first_refused_value(values, True, False, n_threads) == -1
    for bad, non_negative in [
        ([150_000, 199_999], True),
        ([0, 70_000], False),
        ([123_456], False),
        ([16_384, 16_385, 190_000], True),
    ]:
        refused = values.copy()
        refused[bad] = -1.0 if non_negative else np.inf
        found = _kernels.first_refused_value(refused, non_negative, False, n_threads)
        assert found == bad[0]
    negative = values.copy()
    negative[5] = -0.0  # zero, though signed: allowed
    negative[7] = -1e-300
    assert _kernels.first_refused_value(negative, True, False, n_threads) == 7
    assert _kernels.first_refused_value(negative, False, False, n_threads) == -1
    nan = values.astype(np.float32)
    nan[99_999] = np.nan
    assert _kernels.first_refused_value(nan, False, False, n_threads) == 99_999
    # With NaN allowed (missing="ignore"), infinity and negatives still are not.
    assert _kernels.first_refused_value(nan, True, True, n_threads) == -1
    nan[150_000] = -np.inf
    assert _kernels.first_refused_value(nan, False, True, n_threads) == 150_000
    nan[120_000] = -2.0
    assert _kernels.first_refused_value(nan, True, True, n_threads) == 120_000


@pytest.mark.parametrize("n_threads", [1, 2, 7])
def test_scoring_kernels_report_the_first_refused_row(n_threads):
    rng = np.random.default_rng(2)
    dense = rng.random((2000, 6))
    dense[[1500, 700, 1999], [2, 5, 0]] = [np.nan, -np.inf, np.nan]
    table = pad_classes(np.log(rng.random((6, 3))))
    intercept = pad_classes(np.zeros(3))

    def finish():
        out = np.empty((2000, 3))
        labels = np.empty(0, dtype=np.intp)
        output = _kernels.Output.PROBA
        return output, out, labels, thread_scratch(n_threads, 3), n_threads

    discrete = (table, intercept, 0.0, False, False, False, np.empty((0, 0)))
    csr = sp.csr_matrix(dense)
    assert _kernels.discrete_score_dense(dense, *discrete, *finish()) == 700
    assert _kernels.discrete_score_csr(*sparse_arrays(csr), *discrete, *finish()) == 700
    gaussian = (table, np.ones_like(table), table[:0], intercept)
    assert _kernels.gaussian_score_dense(dense, *gaussian, *finish()) == 700
    # With missing="ignore", NaN is a missing value; infinity is refused.
    gaussian = (table, np.ones_like(table), np.zeros_like(table), intercept)
    assert _kernels.gaussian_score_dense(dense, *gaussian, *finish()) == 700
    dense[700, 5] = np.nan
    assert _kernels.gaussian_score_dense(dense, *gaussian, *finish()) == -1
    dense[700, 5] = -np.inf
    negative = np.abs(np.nan_to_num(dense, posinf=1.0, neginf=1.0))
    negative[[40, 30], [1, 4]] = -2.0
    assert _kernels.discrete_score_dense(negative, *discrete, *finish()) == -1
    no_missing = np.empty((0, 0))
    non_negative = (table, intercept, 0.0, False, True, False, no_missing)
    assert _kernels.discrete_score_dense(negative, *non_negative, *finish()) == 30
    # missing="ignore": NaN is a missing value, infinity still refused.
    ignoring = (table, intercept, 0.0, False, False, True, np.zeros_like(table))
    assert _kernels.discrete_score_dense(dense, *ignoring, *finish()) == 700
    assert _kernels.discrete_score_csr(*sparse_arrays(csr), *ignoring, *finish()) == 700
    finite = np.where(np.isinf(dense), 1.0, dense)
    assert _kernels.discrete_score_dense(finite, *ignoring, *finish()) == -1


@pytest.mark.parametrize("n_classes", [2, 5, 17])
def test_dense_scoring_adds_zeros_as_the_skipping_loop_sums(n_classes):
    # With a finite table, a zero is added times the table (no branch) or
    # skipped, by the density of a block's first row: the same sums, bit
    # for bit, either way. Rows of every density, in blocks of each.
    rng = np.random.default_rng(21)
    density = np.repeat([1.0, 0.6, 0.05, 0.0, 0.3], 400)[:, None]
    X = (rng.random((2000, 70)) < density) * rng.integers(1, 5, (2000, 70)) * 1.0
    table = pad_classes(np.log(rng.random((70, n_classes))))
    intercept = pad_classes(np.log(rng.random(n_classes)))

    def scores(score, arrays, threads, **table_finite):
        out = np.empty((2000, n_classes))
        arguments = (table, intercept, 0.0, False, True, False, np.empty((0, 0)))
        finish = (_kernels.Output.JOINT_LOG_LIKELIHOOD, out, np.empty(0, dtype=np.intp))
        scratch = thread_scratch(threads, n_classes)
        bad = score(*arrays, *arguments, *finish, scratch, threads, **table_finite)
        assert bad == -1
        return out

    dense = _kernels.discrete_score_dense
    skipped = scores(dense, (X,), 1)
    assert_allclose(skipped, intercept[:n_classes] + X @ table[:, :n_classes])
    for threads in (1, 3):
        for arrays in ((X,), (np.asfortranarray(X),), (X.astype(np.float32),)):
            added = scores(dense, arrays, threads, table_finite=True)
            if arrays[0].dtype == np.float64:
                assert_array_equal(added, skipped)
            else:
                assert_allclose(added, skipped, rtol=1e-6)
        csr = sparse_arrays(sp.csr_matrix(X))
        assert_array_equal(scores(_kernels.discrete_score_csr, csr, threads), skipped)


def test_zeros_on_a_probability_of_zero_add_nothing_dense_or_sparse():
    # alpha=0: a feature a class never had gets log 0 = -inf. A zero of it
    # adds nothing (0 log 0 = 0), dense or sparse, whatever the rows.
    X = np.array([[2.0, 0, 1], [0, 3, 0], [1, 1, 0]] * 50)
    y = np.array([0, 1, 0] * 50)
    model = fastnb.MultinomialNB(alpha=0.0, force_alpha=True).fit(X, y)
    assert np.isinf(model.feature_log_prob_).any()
    dense = model.predict_joint_log_proba(X)
    assert_array_equal(model.predict_joint_log_proba(sp.csr_matrix(X)), dense)
    terms = np.where(X[:, None, :] > 0, model.feature_log_prob_, 0.0) * X[:, None, :]
    assert_allclose(dense, terms.sum(axis=2) + model.class_log_prior_)


@pytest.mark.parametrize("n_threads", [2, 3, 7, 16])
@pytest.mark.parametrize("layout", ["sorted by length", "one long row", "all empty"])
def test_csr_scoring_of_uneven_rows_is_the_dense_scoring(layout, n_threads):
    # CSR scoring shares its rows out to the threads by rows and stored
    # values together: runs of very different row counts, some of none.
    rng = np.random.default_rng(5)
    n_samples, n_features = 3000, 40
    dense = np.zeros((n_samples, n_features))
    if layout == "sorted by length":
        for i, length in enumerate(np.sort(rng.integers(0, n_features, n_samples))):
            dense[i, rng.choice(n_features, length, replace=False)] = 1.0
    elif layout == "one long row":
        dense[2500] = rng.integers(1, 5, n_features)
        dense[[3, 1700], 7] = 2.0
    csr = sp.csr_matrix(dense)
    table = pad_classes(np.log(rng.random((n_features, 5))))
    intercept = pad_classes(np.log(rng.random(5)))
    discrete = (table, intercept, 0.0, False, False, False, np.empty((0, 0)))

    def scores(score, X, threads):
        out = np.empty((n_samples, 5))
        labels = np.empty(0, dtype=np.intp)
        output = _kernels.Output.JOINT_LOG_LIKELIHOOD
        scratch = thread_scratch(threads, 5)
        assert score(*X, *discrete, output, out, labels, scratch, threads) == -1
        return out

    expected = scores(_kernels.discrete_score_dense, (dense,), 1)
    assert_allclose(expected, intercept[:5] + dense @ table[:, :5], rtol=1e-12)
    for threads in (1, n_threads):
        got = scores(_kernels.discrete_score_csr, sparse_arrays(csr), threads)
        assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_threads", [1, 2, 3, 7])
@pytest.mark.parametrize("n_samples", [0, 1, 5, 10_000])
def test_class_order_is_a_stable_sort_for_any_thread_count(n_samples, n_threads):
    y = np.random.default_rng(4).integers(0, 7, n_samples).astype(np.intp)
    order, class_ptr = np.empty(len(y), dtype=np.intp), np.empty(9, dtype=np.intp)
    _kernels.class_order(y, order, class_ptr, n_threads)
    assert_array_equal(order, np.argsort(y, kind="stable"))
    assert_array_equal(class_ptr, np.r_[0, np.cumsum(np.bincount(y, minlength=8))])


@pytest.mark.parametrize("index", [np.int32, np.int64])
@pytest.mark.parametrize("n_threads", [1, 2, 7])
@pytest.mark.parametrize("n_entries", [0, 1, 40_000])
def test_entry_value_ends_are_the_running_sums_of_rows_values(
    n_entries, n_threads, index
):
    # 40,000 entries: 40 chunks of 1,024 (label_chunk), the last one short.
    rng = np.random.default_rng(8)
    indptr = np.r_[0, np.cumsum(rng.integers(0, 9, 30_000))].astype(index)
    entries = rng.integers(0, 30_000, n_entries).astype(np.intp)
    values = np.diff(indptr)
    for entry_row, rows in [
        (NO_ROWS, entries),
        # soft labels: entries are label entries, each of entry_row's row
        (rng.permutation(30_000).astype(np.intp), None),
    ]:
        rows = entry_row[entries] if rows is None else rows
        ends = np.full(n_entries + 1, -1, dtype=np.intp)
        _kernels.entry_value_ends(indptr, entries, entry_row, ends, n_threads)
        assert_array_equal(ends, np.r_[0, np.cumsum(values[rows])])


def test_structure_check_finds_whether_indices_are_canonical():
    X = sp.random(300, 50, density=0.1, format="csr", random_state=0)
    indices, indptr = X.indices.copy(), X.indptr
    assert _kernels.sparse_structure_error(indices, indptr, 50, 2) == (-1, True)
    row = np.flatnonzero(np.diff(indptr) >= 2)[0]
    first = indptr[row]
    indices[first : first + 2] = indices[first + 1], indices[first]  # unsorted
    assert _kernels.sparse_structure_error(indices, indptr, 50, 2) == (-1, False)
    indices[first + 1] = indices[first]  # a duplicate
    assert _kernels.sparse_structure_error(indices, indptr, 50, 2) == (-1, False)


def structure_by_rows(indices, indptr, n_minor):
    """sparse_structure_error's answer, row by row in NumPy."""
    canonical = True
    for i in range(len(indptr) - 1):
        start, stop = indptr[i], indptr[i + 1]
        if not 0 <= start <= stop <= len(indices):
            return i, canonical
        row = indices[start:stop]
        if ((row < 0) | (row >= n_minor)).any():
            return i, canonical
        canonical = canonical and bool((np.diff(row) > 0).all())
    return -1, canonical


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("seed", range(4))
def test_structure_check_is_that_of_each_row(index_dtype, seed):
    # Rows of 0 to 12 indices, a fifth of them empty, over many blocks of
    # rows; each change below breaks one row or two, in any block.
    rng = np.random.default_rng(seed)
    n_rows, n_columns = 3001, 40
    lengths = rng.integers(0, 13, n_rows) * (rng.random(n_rows) > 0.2)
    indptr = np.r_[0, np.cumsum(lengths)].astype(index_dtype)
    indices = np.concatenate(
        [np.sort(rng.choice(n_columns, n, replace=False)) for n in lengths]
    ).astype(index_dtype)
    stored = np.flatnonzero(np.diff(indptr) >= 2)

    def changed():
        """(what, indices, indptr) after one random change."""
        bad_indices, bad_indptr = indices.copy(), indptr.copy()
        kind = rng.choice(["none", "index", "offset", "swap", "repeat", "two"])
        if kind in ("index", "two"):
            for p in rng.choice(len(indices), 1 if kind == "index" else 2):
                bad_indices[p] = rng.choice([-1, n_columns, -(2**31), 2**31 - 1])
        elif kind == "offset":
            k = rng.integers(0, n_rows + 1)
            bad_indptr[k] = rng.choice([bad_indptr[k] - 1, len(indices) + 1, -1])
        elif kind in ("swap", "repeat"):
            start = indptr[rng.choice(stored)]
            second = bad_indices[start] if kind == "repeat" else bad_indices[start + 1]
            bad_indices[start], bad_indices[start + 1] = bad_indices[start + 1], second
        return kind, bad_indices, bad_indptr

    for _ in range(25):
        kind, bad_indices, bad_indptr = changed()
        expected = structure_by_rows(bad_indices, bad_indptr, n_columns)
        for n_threads in (1, 2, 3, 7):
            found = _kernels.sparse_structure_error(
                bad_indices, bad_indptr, n_columns, n_threads
            )
            # Whether the rows are canonical is read only when none is bad.
            assert found[0] == expected[0], (kind, n_threads)
            if found[0] < 0:
                assert found[1] == expected[1], (kind, n_threads)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_structure_check_finds_each_index_out_of_range(index_dtype):
    # Rows of 40 indices (long enough for the vectorised loop), each bad
    # index at the start, inside or at the end of row 3.
    n_rows, n_columns = 6, 50
    indptr = np.arange(0, 40 * n_rows + 1, 40, dtype=index_dtype)
    row_indices = np.arange(5, 45, dtype=index_dtype)
    valid = np.tile(row_indices, n_rows)
    limits = np.iinfo(index_dtype)
    assert _kernels.sparse_structure_error(valid, indptr, n_columns, 2) == (-1, True)
    # No columns: every stored index is out of range.
    assert _kernels.sparse_structure_error(valid, indptr, 0, 2)[0] == 0
    for bad in (-1, n_columns, limits.min, limits.max):
        for place in (0, 17, 39):
            indices = valid.copy()
            indices[3 * 40 + place] = bad
            found, _ = _kernels.sparse_structure_error(indices, indptr, n_columns, 2)
            assert found == 3, (bad, place)
            # Past 2**31 columns, a 32-bit index is out of range only if
            # negative.
            wide = 2**31 + 5
            found, _ = _kernels.sparse_structure_error(indices, indptr, wide, 2)
            assert found == (3 if not 0 <= bad < wide else -1), (bad, place)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.int64])
@pytest.mark.parametrize("n_threads", [1, 2, 7])
def test_integer_labels_are_encoded_as_by_sorting(dtype, n_threads):
    rng = np.random.default_rng(6)
    low = 0 if np.dtype(dtype).kind == "u" else -50
    y = rng.choice(np.arange(low, 100, 7), size=300_000).astype(dtype)
    expected_classes, expected = np.unique(y, return_inverse=True)
    with threadpool_limits(limits=n_threads, user_api="openmp"):
        classes, encoded = encode_fit_labels(y)
        assert classes.dtype == y.dtype
        assert_array_equal(classes, expected_classes)
        assert_array_equal(encoded, expected)
        assert_array_equal(encode_labels(y, classes), expected)
        unknown = y.copy()
        unknown[[160_000, 265_000]] = 1  # not a class: -50 + 7k, 7k
        with pytest.raises(ValueError, match=r"label\(s\) \[1\] in y do not exist"):
            encode_labels(unknown, classes)


def test_labels_spanning_many_values_are_sorted():
    y = np.array([0, 10**12, 5, 0, 5], dtype=np.int64)
    classes, encoded = encode_fit_labels(y)
    assert_array_equal(classes, [0, 5, 10**12])
    assert_array_equal(encoded, [0, 2, 1, 0, 1])
    assert_array_equal(encode_labels(y[::-1], classes), [1, 0, 1, 2, 0])


@pytest.mark.parametrize(
    "classes",
    [
        [3, 3, 9],  # not strictly increasing
        [9, 3],
        [0, 1 << 16],  # spanning one value too many
        [-(2**63), 2**63 - 1],  # the widest span, past int64 as a difference
        [],
    ],
)
def test_class_lookup_is_refused_unless_sorted_and_close(classes):
    assert _kernels.class_lookup(np.array(classes, dtype=np.int64), 1 << 16) is None


def test_class_lookup_maps_each_class_to_its_index():
    lowest, lookup = _kernels.class_lookup(
        np.array([-(2**63), -(2**63) + 2, -(2**63) + 3], dtype=np.int64), 4
    )
    assert lowest == -(2**63)
    assert_array_equal(lookup, [0, -1, 1, 2])
    # Integer classes of an unsigned 64-bit type are looked up by sorting.
    y = np.array([7, 2, 7], dtype=np.int64)
    assert_array_equal(encode_labels(y, np.array([2, 7], dtype=np.uint64)), [1, 0, 1])


def gaussian_table_outputs(n_threads):
    rng = np.random.default_rng(8)
    theta = rng.normal(size=(4, 2 * 2048 + 5))
    ssd = rng.random(theta.shape) * 10
    dof = np.broadcast_to(np.array([[3.0], [0.0], [7.5], [2.0]]), theta.shape)
    variance = np.empty_like(theta)
    tables = np.zeros((3, theta.shape[1], 8))
    sums = np.empty(4)
    bad = _kernels.gaussian_tables(
        theta, ssd, dof, 1e-3, variance, *tables, sums, n_threads
    )
    return bad, theta, ssd, dof, variance, tables, sums


@pytest.mark.parametrize("n_threads", [2, 3, 7])
def test_gaussian_tables_do_not_depend_on_thread_count(n_threads):
    for serial, parallel in zip(
        gaussian_table_outputs(1), gaussian_table_outputs(n_threads), strict=True
    ):
        assert_array_equal(parallel, serial)


def test_gaussian_tables_are_the_smoothed_variances():
    bad, theta, ssd, dof, variance, tables, sums = gaussian_table_outputs(2)
    expected = np.where(dof > 0, ssd / np.where(dof > 0, dof, 1), 0.0) + 1e-3
    assert bad == 0
    np.testing.assert_allclose(variance, expected, rtol=1e-15)
    assert_array_equal(tables[0, :, :4], theta.T)
    assert_array_equal(tables[1, :, :4], 1 / variance.T)
    assert not tables[:, :, 4:].any()
    log_var = np.log(2 * np.pi * expected)
    np.testing.assert_allclose(tables[2, :, :4], log_var.T, rtol=1e-15)
    np.testing.assert_allclose(sums, log_var.sum(axis=1))
    assert (
        _kernels.gaussian_tables(
            theta, ssd, dof, 0.0, variance, *tables[:2], tables[2, :0], sums, 2
        )
        == theta.shape[1]
    )  # class 1 has no degrees of freedom: variance 0


@pytest.mark.parametrize("n_threads", [2, 3, 7])
def test_sparse_gaussian_table_does_not_depend_on_thread_count(n_threads):
    rng = np.random.default_rng(9)
    theta = rng.normal(size=(2 * 2048 + 5, 8)) * 100
    inv_var = rng.random(theta.shape) + 1e-3
    tables = []
    for threads in (1, n_threads):
        table = np.zeros((len(theta) + 1, 4, 8))
        assert _kernels.gaussian_sparse_table(theta, inv_var, table, threads)
        tables.append(table)
    assert_array_equal(tables[1], tables[0])
    inv_var[7, 3] = 1e308  # theta^2 / var overflows
    assert not _kernels.gaussian_sparse_table(theta, inv_var, table, n_threads)


def test_moments_merge_by_the_pairwise_formula():
    rng = np.random.default_rng(10)
    shape = (3, 2 * 2048 + 9)
    n, a, s = (
        rng.integers(0, 4, (3, 1)) * 1.0,
        rng.normal(size=shape),
        rng.random(shape),
    )
    m, b, t = (
        rng.integers(0, 4, (3, 1)) * 1.0,
        rng.normal(size=shape),
        rng.random(shape),
    )
    merged = {threads: (np.empty(shape), np.empty(shape)) for threads in (1, 3)}
    for threads, (mean, ssd) in merged.items():
        # The counts as columns: a weight a row.
        _kernels.merge_moments(n, a, s, m, b, t, mean, ssd, threads)
    assert_array_equal(merged[3][0], merged[1][0])
    assert_array_equal(merged[3][1], merged[1][1])
    # A weight an entry, the same weights: the same moments.
    entries = np.empty(shape), np.empty(shape)
    n_entries, m_entries = np.tile(n, shape[1]), np.tile(m, shape[1])
    _kernels.merge_moments(n_entries, a, s, m_entries, b, t, *entries, 3)
    assert_array_equal(entries[0], merged[1][0])
    assert_array_equal(entries[1], merged[1][1])
    # Counts of neither shape, and moments of another shape, are refused
    # before anything is read.
    with pytest.raises(ValueError, match=r"batch_count must be \(3, 4105\) or"):
        _kernels.merge_moments(n, a, s, m[:2], b, t, *entries, 3)
    with pytest.raises(ValueError, match="count must be"):
        _kernels.merge_moments(n_entries[:, :-1], a, s, m, b, t, *entries, 3)
    with pytest.raises(ValueError, match="must all have the shape of mean"):
        _kernels.merge_moments(n, a, s, m, b[:, :-1], t, *entries, 3)
    total = n + m
    share = np.divide(m, total, out=np.zeros_like(total), where=total > 0)
    np.testing.assert_allclose(merged[1][0], a + (b - a) * share, rtol=1e-14)
    np.testing.assert_allclose(
        merged[1][1], s + t + (b - a) ** 2 * n * share, rtol=1e-14
    )
    # The classes pooled: the moments of all the samples together.
    count = np.array([2.0, 0.0, 5.0])
    pooled = {}
    for threads in (1, 3):
        pooled[threads] = np.empty(shape[1]), np.empty(shape[1])
        _kernels.pooled_moments(count[:, None], a, s, *pooled[threads], threads)
    assert_array_equal(pooled[3][0], pooled[1][0])
    assert_array_equal(pooled[3][1], pooled[1][1])
    overall = count @ a / count.sum()
    np.testing.assert_allclose(pooled[1][0], overall, rtol=1e-12, atol=1e-15)
    spread = s.sum(axis=0) + count @ (a - overall) ** 2
    np.testing.assert_allclose(pooled[1][1], spread, rtol=1e-12)


@pytest.mark.parametrize("n_threads", [2, 3, 7])
# label_chunk: 64 chunks of 1,563 labels; 92 of VALUE_CHUNK.
@pytest.mark.parametrize("n_labels", [100_000, 1_500_000])
def test_class_weights_do_not_depend_on_thread_count(n_threads, n_labels):
    rng = np.random.default_rng(11)
    y = rng.integers(0, 6, n_labels).astype(np.intp)
    weights = rng.random(len(y))
    sums = {threads: np.zeros(7) for threads in (1, n_threads)}
    for threads, out in sums.items():
        _kernels.class_weights(NO_ROWS, y, weights, out, False, threads)
    assert_array_equal(sums[n_threads], sums[1])
    np.testing.assert_allclose(sums[1], np.bincount(y, weights, 7), rtol=1e-12)


@pytest.mark.parametrize("n_threads", [1, 2, 3, 7])
def test_merge_adds_the_implicit_zeros_after_it(n_threads):
    # Sparse codes' chunk tables, merged with each feature's implicit zeros
    # added to its code 0 in the same parallel region: as merged, then
    # categorical_add_zeros, and as NumPy sums them.
    rng = np.random.default_rng(12)
    n_chunks, n_classes = 6, 3
    offsets = np.array([0, 3, 4, 10, 12], dtype=np.intp)
    tables = rng.integers(0, 5, (n_chunks, offsets[-1] * n_classes)) * 0.25
    layout = np.tile(offsets * n_classes, (n_chunks, 1))
    class_count = 40.0 + rng.random(n_classes)

    def merged(class_count, scratch, threads):
        out = np.zeros((offsets[-1], n_classes))
        _kernels.categorical_merge_counts(
            tables, layout, offsets, out, class_count, scratch, threads
        )
        return out

    in_two_steps = merged(np.empty(0), np.empty((0, 0)), 1)
    assert_allclose(in_two_steps, tables.reshape(n_chunks, -1, n_classes).sum(axis=0))
    _kernels.categorical_add_zeros(
        in_two_steps, offsets, class_count, thread_scratch(1, n_classes)[:, 0], 1
    )
    # Each feature's counts, its code 0 now holding the rows that store
    # nothing for it, add up to each class's weight.
    assert_allclose(
        np.add.reduceat(in_two_steps, offsets[:-1]), np.tile(class_count, (4, 1))
    )
    scratch = thread_scratch(n_threads, n_classes)[:, 0]
    assert_array_equal(merged(class_count, scratch, n_threads), in_two_steps)
    with pytest.raises(ValueError, match="scratch a row"):
        merged(class_count[:2], scratch, n_threads)


LABEL_CLASSES = {
    "int32": np.array([-7, 3, 40, 41], dtype=np.int32),
    "int64": np.array([-7, 3, 40, 2**40], dtype=np.int64),
    "uint8": np.array([0, 3, 200, 255], dtype=np.uint8),
    "int16": np.array([-300, 3, 40, 41], dtype=np.int16),
    "float32": np.array([-7, 3, 40, 41], dtype=np.float32),
    "float64": np.array([-7, 3, 40, 2.0**40], dtype=np.float64),
    "bool": np.array([False, True]),
    "strings": np.array(["ham", "spam", "x" * 12, "é"]),
    "bytes of odd width": np.array([b"abc", b"de", b"f", b"ghi"]),
    "datetimes": np.array(["2026-11-25", "1970-01-01"], dtype="datetime64[D]"),
}


@pytest.mark.parametrize("name", LABEL_CLASSES)
def test_predict_takes_its_classes_in_a_kernel(name):
    from fastnb._validation import label_words

    classes = LABEL_CLASSES[name]
    labels = np.random.default_rng(12).integers(0, len(classes), 100_000)
    labels = labels.astype(np.intp)
    for threads in (1, 3):
        out = np.empty(len(labels), dtype=classes.dtype)
        _kernels.take_labels(label_words(classes), labels, label_words(out), threads)
        assert_array_equal(out, classes[labels])
    if classes.dtype.kind == "S":
        return  # scikit-learn refuses bytes for labels
    y = classes[np.arange(300) % len(classes)]
    X = np.abs(np.random.default_rng(13).normal(size=(300, 3))) * [1, 2, 3]
    model = fastnb.MultinomialNB().fit(X, y)
    predicted = model.predict(X)
    assert predicted.dtype == y.dtype
    assert_array_equal(predicted, model.classes_[model.predict_proba(X).argmax(1)])
