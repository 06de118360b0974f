"""The compiled kernels: thread-count independence, bounds checks, memory use.

(The estimators' results against the thread count: test_invariants.)
"""

import importlib
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

import fastnb
from fastnb import _kernels as baseline
from fastnb._base import (
    effective_n_threads,
    pad_classes,
    sparse_arrays,
    thread_scratch,
)
from fastnb._gaussian import sparse_gaussian_table
from fastnb._simd import VARIANTS
from fastnb._simd import kernels as _kernels

from _helpers import THREADED_CASES, THREADED_ROWS

ESTIMATORS = [fastnb.MultinomialNB, fastnb.ComplementNB, fastnb.BernoulliNB]


def tfidf_like(n_samples, n_features, n_classes, seed=0):
    """Sparse non-integer data, where the order of summation shows in the bits."""
    rng = np.random.default_rng(seed)
    X = sp.random(n_samples, n_features, density=0.05, format="csr", random_state=rng)
    X.data = rng.random(X.nnz) ** 3
    y = rng.integers(0, n_classes, n_samples)
    return X, y


def count_with(kernel, args, options, n_threads, shape):
    out = np.zeros(shape)
    kernel(
        *args, threshold=0.0, binarize=False, out=out, n_threads=n_threads, **options
    )
    return out


@pytest.mark.parametrize("n_threads", [2, 3, 7])
def test_counting_does_not_depend_on_thread_count(n_threads):
    X, y = tfidf_like(3000, 300, 5)
    weights = np.random.default_rng(1).random(X.shape[0])
    shape = (5, X.shape[1])
    rows_by_class = np.argsort(y, kind="stable")
    class_ptr = np.concatenate([[0], np.cumsum(np.bincount(y))]).astype(np.intp)
    Xc = X.tocsc()
    csr_parts = (X.data, X.indices, X.indptr)
    dense = X.toarray()
    blocks = {"block_width": 16}
    cases = {
        "csr": (
            _kernels.discrete_count_csr,
            (*csr_parts, rows_by_class, class_ptr, weights),
            {},
        ),
        "csc": (
            _kernels.discrete_count_csc,
            (Xc.data, Xc.indices, Xc.indptr, y, weights),
            {},
        ),
        "dense C": (_kernels.discrete_count_dense, (dense, y, weights), blocks),
        "dense F": (
            _kernels.discrete_count_dense,
            (np.asfortranarray(dense), y, weights),
            blocks,
        ),
    }
    for name, (kernel, args, options) in cases.items():
        serial = count_with(kernel, args, options, 1, shape)
        parallel = count_with(kernel, args, options, n_threads, shape)
        assert np.array_equal(serial, parallel), name


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


def test_small_inputs_use_one_thread():
    assert effective_n_threads(1000) == 1
    assert effective_n_threads(None) >= effective_n_threads(1 << 30)


def test_scratch_rows_do_not_share_cache_lines():
    scratch = thread_scratch(3, 5)
    assert scratch.shape == (3, 5)
    assert scratch.strides[0] >= 64 + 5 * 8


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
    discrete = (table, intercept, 0.0, False)
    gaussian = np.zeros((len(table) + 1, 4, table.shape[1]))

    def finish():
        """Output, out, labels, scratch and threads of the scoring kernels."""
        output = k.Output.JOINT_LOG_LIKELIHOOD
        labels = np.empty(3, dtype=np.intp)
        return output, np.empty((3, 2)), labels, thread_scratch(2, 2), 2

    def counts():
        return np.zeros((2, 4))

    def moments():
        return np.zeros((2, 4)), np.zeros((2, 4)), np.zeros((2, 4))

    def chunk_moments():
        return np.zeros((1, 2, 4)), np.zeros((1, 2, 4))

    steps = np.ones(3)
    codes = np.array([[0, 1], [2, 0], [1, 2]])
    offsets = np.array([0, 4, 8], dtype=np.intp)  # 3 categories + unseen each
    categorical = pad_classes(np.zeros((8, 2)))
    # Counts of codes: 4 codes a feature, 2 classes, 16 entries in all.
    highest = np.array([3, 3])
    layout = np.array([0, 8, 16], dtype=np.intp)

    def count_table():
        return np.zeros((1, 16))

    def chunk_counts(n_chunks):
        """Largest codes, layouts and tables of categorical_check_count_dense."""
        return (
            np.empty((n_chunks, 2), dtype=codes.dtype),
            np.empty((n_chunks, 3), dtype=np.intp),
            np.empty((n_chunks, 64)),
        )

    def log_tables():
        """Outputs, scratch and threads of categorical_log_tables."""
        return (
            np.empty((8, 2)),
            np.empty((8, 2)),
            np.zeros((8, 8)),
            thread_scratch(2, 2),
            2,
        )

    row = "row [0-9]+ has"
    chunk = "chunk [0-9]+ has"
    bounds = "[Oo]ut of bounds"
    return {
        "discrete_count_csr column": (
            lambda: k.discrete_count_csr(
                *bad_column(csr), rows, class_ptr, weights, 0.0, False, counts(), 2
            ),
            bounds,
        ),
        "discrete_count_csr sample": (
            lambda: k.discrete_count_csr(
                *sparse_arrays(csr),
                np.array([0, 1, 3], dtype=np.intp),
                class_ptr,
                weights,
                0.0,
                False,
                counts(),
                2,
            ),
            bounds,
        ),
        "discrete_count_csc class": (
            lambda: k.discrete_count_csc(
                *sparse_arrays(csc), bad_y, weights, 0.0, False, counts(), 2
            ),
            bounds,
        ),
        "discrete_count_dense class": (
            lambda: k.discrete_count_dense(
                dense, bad_y, weights, 0.0, False, counts(), 64, 2
            ),
            bounds,
        ),
        "discrete_count_dense negative class": (
            lambda: k.discrete_count_dense(
                dense, negative_y, weights, 0.0, False, counts(), 64, 2
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
                np.zeros((3, 2)), k.Output.PROBA, np.empty((2, 2)), y, 2
            ),
            bounds,
        ),
        "finish_scores argmax sample": (
            lambda: k.finish_scores(
                np.zeros((3, 2)), k.Output.ARGMAX, np.empty((3, 2)), y[:2], 2
            ),
            bounds,
        ),
        "gaussian_steps class": (
            lambda: k.gaussian_steps(bad_y, weights, 3, np.zeros((1, 2)), np.empty(3)),
            bounds,
        ),
        "gaussian_moments_dense class": (
            lambda: k.gaussian_moments_dense(
                dense, bad_y, weights, steps, 3, *chunk_moments(), 2
            ),
            bounds,
        ),
        "gaussian_moments_dense F class": (
            lambda: k.gaussian_moments_dense(
                np.asfortranarray(dense), bad_y, weights, steps, 3, *chunk_moments(), 2
            ),
            bounds,
        ),
        "gaussian_moments_csr column": (
            lambda: k.gaussian_moments_csr(
                *bad_column(csr), rows, class_ptr, weights, *moments(), 2
            ),
            bounds,
        ),
        "gaussian_moments_csc class": (
            lambda: k.gaussian_moments_csc(
                *sparse_arrays(csc), bad_y, weights, *moments(), 2
            ),
            bounds,
        ),
        "gaussian_score_dense column": (
            lambda: k.gaussian_score_dense(wide, table, table, intercept, *finish()),
            row,
        ),
        "gaussian_score_csr column": (
            lambda: k.gaussian_score_csr(
                *bad_column(csr), gaussian, intercept, *finish()
            ),
            row,
        ),
        "gaussian_score_csr offset": (
            lambda: k.gaussian_score_csr(
                *past_stored(csr), gaussian, intercept, *finish()
            ),
            row,
        ),
        "categorical_check_count_dense class": (
            lambda: k.categorical_check_count_dense(
                codes, bad_y, weights, 10, 2, 3, *chunk_counts(1), 2
            ),
            row,
        ),
        "categorical_check_count_dense negative class": (
            lambda: k.categorical_check_count_dense(
                codes, negative_y, weights, 10, 2, 3, *chunk_counts(1), 2
            ),
            row,
        ),
        "categorical_check_count_dense chunk": (
            # Two chunks of two rows, largest codes and layout for one.
            lambda: k.categorical_check_count_dense(
                codes, y, weights, 10, 2, 2, *chunk_counts(1)[:2], np.empty((2, 64)), 2
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
                2,
            ),
            chunk,
        ),
        "categorical_count_dense class": (
            lambda: k.categorical_count_dense(
                codes, bad_y, weights, 2, highest, layout, 3, count_table(), 2, 2
            ),
            chunk,
        ),
        "categorical_merge_counts layout": (
            lambda: k.categorical_merge_counts(
                np.zeros((2, 16)),
                np.array([[0, 8, 16], [0, 8, 18]], dtype=np.intp),
                np.array([0, 4, 8], dtype=np.intp),
                np.zeros((8, 2)),
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
                *finish(),
            ),
            row,
        ),
        "categorical_log_tables counts": (
            lambda: k.categorical_log_tables(
                np.ones((5, 2)), offsets[:3], offsets[:3], np.ones(8), *log_tables()
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


def built_variants():
    """The instruction-set variants that were built and that this CPU runs."""
    found = []
    for variant in VARIANTS:
        try:
            module = importlib.import_module(f"fastnb._kernels_{variant}")
        except ImportError:
            continue
        if baseline.cpu_runs(variant):
            found.append(module)
    return found


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
    for output in (kernels.Output.JOINT_LOG_LIKELIHOOD, kernels.Output.PROBA):
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
            ),
            score(
                kernels.gaussian_score_dense, 300, output, dense, theta, inv_var, zeros
            ),
            score(
                kernels.gaussian_score_csr,
                500,
                output,
                *sparse_arrays(X),
                sparse_table,
                zeros,
            ),
        ]
    steps = np.empty(300)
    kernels.gaussian_steps(y, np.ones(300), 1 << 16, np.zeros((1, 11)), steps)
    mean, ssd = np.zeros((1, 11, 13)), np.zeros((1, 11, 13))
    kernels.gaussian_moments_dense(dense, y, np.ones(300), steps, 1 << 16, mean, ssd, 2)
    return results + [mean, ssd]


@pytest.mark.parametrize("variant", built_variants(), ids=lambda m: m.__name__)
def test_instruction_set_variants_agree_with_baseline(variant):
    # Fused multiply-adds may round differently: agreement to rounding.
    for ours, reference in zip(
        score_all_kernels(variant), score_all_kernels(baseline), strict=True
    ):
        np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-300)
