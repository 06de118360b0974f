"""Bad input that once reached the kernels: each case raises a clear error.

Cases that corrupted memory or allocated without bound run in a child
process, so that a regression shows as a failed test, not a dead run.
(test_tampering.py has the catalogues of malformed sparse matrices and of
changed fitted models.)

Also: predictions from several Python threads at once equal those made one
after another, and the count families' partial_fit, which counts into the
model's own arrays, still learns when it cannot write to them.
"""

import copy
import json
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

import fastnb

from _helpers import (
    CASES,
    OUTPUTS,
    SPARSE,
    as_container,
    assert_same_model,
    assert_same_outputs,
    assert_same_state,
    case_params,
    run_child,
    take_rows,
    tol,
)

CASE_INPUTS = ("case", "dtype", "container")
LABELS = np.array(["a", "b", "c"])

HUGE_CODES = {
    "float 1e19": np.array([[0.0, 1.0], [1e19, 0.0]]),
    "float 1e300": np.array([[0.0, 1.0], [1e300, 0.0]]),
    "uint64 2**63 + 5": np.array([[0, 1], [2**63 + 5, 0]], dtype=np.uint64),
    "int 10**9": np.array([[0, 1], [10**9, 0]]),
}
HUGE_CODE_ESTIMATORS = {
    "CategoricalNB": {},
    "MixedNB": {"families": {"categorical": "remaining"}},
}


@pytest.fixture(scope="module")
def huge_code_fits(tmp_path_factory):
    """{(estimator, name): what fitting HUGE_CODES[name] raised} (the
    exception's type, "ValueError" for any of its subclasses, and message, or
    "no error"), from one child process for
    all the cases: a fit that allocates for the code kills the child, not
    the run. A dead child fails every test that reads it."""
    cases = [
        (estimator, params, name, X.tolist(), str(X.dtype))
        for estimator, params in HUGE_CODE_ESTIMATORS.items()
        for name, X in HUGE_CODES.items()
    ]
    code = f"""
        import json, numpy as np, fastnb
        outcomes = []
        for estimator, params, name, values, dtype in {cases!r}:
            X = np.array(values, dtype=dtype)
            try:
                getattr(fastnb, estimator)(**params).fit(X, [0, 1])
                outcome = "no error"
            except ValueError as exc:
                outcome = f"ValueError: {{exc}}"
            except Exception as exc:
                outcome = f"{{type(exc).__name__}}: {{exc}}"
            outcomes.append([estimator, name, outcome])
        print(json.dumps(outcomes))
    """
    result = run_child(code, tmp_path_factory.mktemp("huge_codes"))
    if result.returncode != 0:
        return result.stderr
    return {
        (estimator, name): said for estimator, name, said in json.loads(result.stdout)
    }


@pytest.mark.parametrize("name", HUGE_CODES)
@pytest.mark.parametrize("estimator", HUGE_CODE_ESTIMATORS)
def test_a_huge_code_at_fit_is_refused_before_allocating(
    name, estimator, huge_code_fits
):
    assert isinstance(huge_code_fits, dict), f"the child died: {huge_code_fits}"
    shown = {
        "float 1e19": "10000000000000000000",
        "float 1e300": "1e+300",
        "uint64 2**63 + 5": str(2**63 + 5),
        "int 10**9": str(10**9),
    }[name]
    said = huge_code_fits[estimator, name]
    assert said.startswith("ValueError: "), said
    if estimator == "MixedNB":
        # The column named, and how to declare its family.
        assert f"column 0 of X, in the 'categorical' family, has code {shown}" in said
        assert "families={'gaussian': [0], 'categorical': 'remaining'}" in said
    else:
        assert f"feature 0 has code {shown}" in said
    assert "max_categories=1000000" in said


def test_max_categories_can_be_raised():
    X = np.array([[0, 1], [1_500_000, 0]])
    with pytest.raises(ValueError, match="max_categories=1000000"):
        fastnb.CategoricalNB().fit(X, [0, 1])
    model = fastnb.CategoricalNB(max_categories=2_000_000).fit(X, [0, 1])
    assert model.n_categories_.tolist() == [1_500_001, 2]


def test_max_categories_counts_raw_values():
    X = np.array([["a"], ["b"], ["c"]])
    with pytest.raises(ValueError, match="3 categories, more than max_categories=2"):
        fastnb.CategoricalNB(max_categories=2).fit(X, [0, 1, 0])
    model = fastnb.CategoricalNB(max_categories=2).fit(X[:2], [0, 1])
    with pytest.raises(ValueError, match="more than max_categories=2"):
        model.partial_fit(X[2:], [0])
    assert model.categories_[0].tolist() == ["a", "b"]


@pytest.mark.parametrize("name", ["float 1e19", "float 1e300", "uint64 2**63 + 5"])
def test_a_huge_code_at_predict_scores_as_unseen(name):
    model = fastnb.CategoricalNB().fit(np.array([[0, 1], [1, 0], [1, 1]]), [0, 1, 1])
    X = HUGE_CODES[name][1:]
    unseen = np.array([[2, 0]], dtype=X.dtype)
    np.testing.assert_array_equal(model.predict_proba(X), model.predict_proba(unseen))


@pytest.mark.parametrize(
    "estimator",
    [fastnb.MultinomialNB, fastnb.BernoulliNB, fastnb.PoissonNB, fastnb.CategoricalNB],
)
@pytest.mark.parametrize(
    ("prior", "message"),
    [
        ([0.5, -0.1, 0.6], "Priors must be non-negative"),
        ([0.5, np.nan, 0.5], "NaN or infinity"),
        ([0.2, 0.2, 0.2], "The sum of the priors should be 1"),
        ([0.5, 0.5], "Number of priors must match number of classes"),
    ],
)
def test_every_class_prior_is_checked(estimator, prior, message):
    X = np.array([[1, 0], [0, 1], [1, 1]])
    with pytest.raises(ValueError, match=message):
        estimator(class_prior=prior).fit(X, [0, 1, 2])


def test_mixed_family_alpha_of_the_wrong_length_is_refused():
    model = fastnb.MixedNB(
        families={"multinomial": [0, 1], "gaussian": [2]},
        multinomial_params={"alpha": [1.0, 1.0, 1.0]},
    )
    X = np.array([[1.0, 0.0, 0.5], [0.0, 2.0, -0.5]])
    with pytest.raises(ValueError, match="n_features") as raised:
        model.fit(X, [0, 1])
    assert "'multinomial' family" in "".join(raised.value.__notes__)


def with_duplicates(X):
    """X as a CSR matrix with every stored entry split in two halves."""
    canonical = sp.csr_matrix(X)
    counts = np.diff(canonical.indptr)
    # Each row's entries, then the same entries again, each half its value.
    data, indices = [], []
    for i in range(X.shape[0]):
        row = slice(canonical.indptr[i], canonical.indptr[i + 1])
        data += [canonical.data[row] / 2] * 2
        indices += [canonical.indices[row]] * 2
    indptr = np.concatenate([[0], np.cumsum(2 * counts)])
    split = sp.csr_matrix(
        (np.concatenate(data), np.concatenate(indices), indptr), shape=X.shape
    )
    assert not split.has_canonical_format and split.nnz == 2 * canonical.nnz
    return split


@pytest.mark.parametrize(
    "estimator",
    [
        fastnb.MultinomialNB(),
        fastnb.ComplementNB(),
        fastnb.BernoulliNB(binarize=1.0),
        fastnb.PoissonNB(),
        fastnb.GaussianNB(),
        # Halves of odd codes are not codes: they are summed before anything
        # reads them.
        fastnb.CategoricalNB(),
        fastnb.MixedNB(families={"categorical": [0, 1], "multinomial": "remaining"}),
    ],
    ids=type,
)
def test_duplicate_sparse_entries_count_as_their_sum(estimator):
    rng = np.random.default_rng(3)
    X = rng.poisson(1.0, size=(40, 5)).astype(np.float64)
    y = np.arange(40) % 3
    canonical = type(estimator)(**estimator.get_params()).fit(X, y)
    split = type(estimator)(**estimator.get_params()).fit(with_duplicates(X), y)
    np.testing.assert_allclose(
        split.predict_joint_log_proba(with_duplicates(X)),
        canonical.predict_joint_log_proba(X),
        rtol=1e-10,
    )


def every_other(array):
    """``array`` as a view of every other entry of an array twice as long."""
    spread = np.zeros(2 * len(array), dtype=array.dtype)
    spread[::2] = array
    return spread[::2]


@pytest.mark.parametrize("name", ["data", "indices", "indptr"])
@pytest.mark.parametrize(
    CASE_INPUTS,
    case_params(
        [case for case in CASES if case.sparse],
        containers=SPARSE,
        other_dtypes_in=(),
    ),
)
def test_a_sparse_matrix_of_strided_arrays_reads_as_one_of_copies(
    case, dtype, container, name
):
    X, y, _ = case.make(40, LABELS, seed=6)
    X = as_container(X, container, dtype)
    # scipy keeps the arrays it is given: one of them a strided view.
    arrays = [X.data, X.indices, X.indptr]
    position = ["data", "indices", "indptr"].index(name)
    arrays[position] = every_other(arrays[position])
    strided = type(X)(tuple(arrays), shape=X.shape)
    assert not getattr(strided, name).flags.c_contiguous
    expected = case.estimator().fit(X, y)
    assert_same_model(case.estimator().fit(strided, y), expected, X)
    assert_same_outputs(expected, expected, strided, X_expected=X)


# Python threads predicting at once: more than the cores of the machines the
# tests run on, each thread's kernels using OpenMP threads of their own.
N_PYTHON_THREADS = 8
# Rows of each thread's slice: enough for a kernel scoring dense rows of 3
# classes to use 2 threads (see fastnb._threads.WORK_PER_THREAD).
ROWS_A_SLICE = 6000
# Each prediction method on each slice is a task: 20 tasks for the threads.
N_SLICES = 4


@pytest.mark.parametrize(
    CASE_INPUTS,
    case_params(
        [case for case in CASES if not case.small_data],
        containers=("dense_c", "csr"),
        other_dtypes_in=(),
    ),
)
def test_concurrent_predictions_equal_serial_ones(case, dtype, container):
    n_rows = N_SLICES * ROWS_A_SLICE
    X, y, _ = case.make(n_rows, LABELS, seed=4)
    X = as_container(X, container, dtype)
    # After partial_fit the model has no tables yet: the threads race to
    # build them, then predict with the tables built.
    model = case.estimator().partial_fit(X, y, classes=LABELS)
    serial = copy.deepcopy(model)
    slices = [
        take_rows(X, slice(i, i + ROWS_A_SLICE)) for i in range(0, n_rows, ROWS_A_SLICE)
    ]
    tasks = [
        (method, i) for method in (*OUTPUTS, "predict") for i in range(len(slices))
    ]
    expected = [getattr(serial, method)(slices[i]) for method, i in tasks]

    def predict_once_started(start, method, i):
        start.wait()
        return getattr(model, method)(slices[i])

    for tables in ("not built", "built"):
        start = threading.Event()
        with ThreadPoolExecutor(N_PYTHON_THREADS) as pool:
            futures = [
                pool.submit(predict_once_started, start, *task) for task in tasks
            ]
            start.set()
            outputs = [future.result(timeout=120) for future in futures]
        assert_same_state(outputs, expected, where=f"outputs, tables {tables}")


def has_feature_count(case):
    model = case.estimator().fit(*case.make(12, LABELS)[:2])
    return hasattr(model, "feature_count_")


# The count families: partial_fit counts into the model's own feature_count_
# (and class_count_) when it can write to it.
COUNT_CASES = [case for case in CASES if has_feature_count(case)]


def read_only(model, name):
    """The model with its own array of statistic ``name`` read-only (as when
    a model's arrays come from a read-only file); the attribute shows it."""
    model._statistics[name.removesuffix("_")].flags.writeable = False
    return model


def fortran_ordered(model, name):
    """The model rebuilt from its state with the statistic in Fortran order."""
    state = fastnb.get_state(model)
    state.statistics[name] = np.asfortranarray(state.statistics[name])
    model = fastnb.from_state(state)
    assert not getattr(model, name + "_").flags.c_contiguous
    return model


FROZEN = {
    "read-only feature_count_": lambda model: read_only(model, "feature_count_"),
    "read-only class_count_": lambda model: read_only(model, "class_count_"),
    "Fortran-ordered feature_count_": lambda model: fortran_ordered(
        model, "feature_count"
    ),
}


@pytest.mark.parametrize("frozen", FROZEN)
@pytest.mark.parametrize(
    CASE_INPUTS,
    case_params(COUNT_CASES, containers=("dense_c", "csr"), other_dtypes_in=()),
)
def test_partial_fit_learns_into_new_counts_when_it_cannot_write(
    case, dtype, container, frozen
):
    X, y, w = case.make(60, LABELS, seed=5)
    X = as_container(X, container, dtype)
    first, rest = slice(0, 30), slice(30, None)
    model = case.estimator().partial_fit(
        take_rows(X, first), y[first], classes=LABELS, sample_weight=w[first]
    )
    model = FROZEN[frozen](model)
    counts = {name: getattr(model, name) for name in ("class_count_", "feature_count_")}
    kept = copy.deepcopy(counts)
    model.partial_fit(take_rows(X, rest), y[rest], sample_weight=w[rest])
    # The arrays it could not write to are as they were...
    assert_same_state(counts, kept, where="the first batch's counts")
    # ...and the model is the one fit makes of all the rows.
    whole = case.estimator().fit(X, y, sample_weight=w)
    assert_same_model(model, whole, X, tol(dtype))


# Values the kernels refuse: (estimator, value, message, when), one of each
# check: finiteness everywhere, negatives when fitting the count families
# that need them and when scoring PoissonNB.
REFUSED_VALUES = [
    (fastnb.MultinomialNB, np.nan, "Input X contains NaN", "fit"),
    (fastnb.ComplementNB, np.inf, "Input X contains infinity", "fit"),
    (fastnb.PoissonNB, -2.0, "Negative values in data passed to PoissonNB", "fit"),
    (fastnb.BernoulliNB, -np.inf, "Input X contains infinity", "fit"),
    (fastnb.GaussianNB, np.nan, "Input X contains NaN", "fit"),
    (fastnb.MultinomialNB, np.inf, "Input X contains infinity", "predict"),
    (fastnb.BernoulliNB, np.nan, "Input X contains NaN", "predict"),
    (fastnb.PoissonNB, -1.0, "Negative values in data passed to PoissonNB", "predict"),
    (fastnb.GaussianNB, -np.inf, "Input X contains infinity", "predict"),
]


@pytest.mark.parametrize("layout", ["C", "F", "CSR", "CSC"])
@pytest.mark.parametrize(("estimator", "value", "message", "when"), REFUSED_VALUES)
def test_the_first_refused_value_is_named(estimator, value, message, when, layout):
    # Big enough for several threads; three bad values, the first named.
    rng = np.random.default_rng(0)
    X = np.floor(rng.random((3000, 40)) * 3)
    y = np.arange(3000) % 3
    model = estimator().fit(X, y)
    before = copy.deepcopy(model.__dict__)
    bad = X.copy()
    bad[[2500, 1200, 1200], [3, 17, 9]] = value
    if layout == "F":
        bad = np.asfortranarray(bad)
    elif layout != "C":
        bad = sp.csr_matrix(bad) if layout == "CSR" else sp.csc_matrix(bad)
    # The first in the order X is read: rows for C and CSR, and when
    # scoring (which reads rows); columns when fitting F or CSC.
    by_columns = when == "fit" and layout in ("F", "CSC")
    first = (2500, 3) if by_columns else (1200, 9)
    pattern = f"{message}.*row {first[0]}, column {first[1]}"
    if when == "fit":
        with pytest.raises(ValueError, match=pattern):
            model.partial_fit(bad, y)
        assert_same_state(model.__dict__, before, where="after a refused batch")
        with pytest.raises(ValueError, match=pattern):
            estimator().fit(bad, y)
    else:
        for method in ("predict", "predict_proba", "predict_joint_log_proba"):
            with pytest.raises(ValueError, match=pattern):
                getattr(model, method)(bad)


def test_scores_of_minus_infinity_are_not_taken_for_refused_values():
    # A score can be -inf without a NaN or infinity in the row (log 0: no
    # smoothing, or a class given prior 0); the row is then checked, found
    # clean, and scored. A NaN is still found.
    X = np.array([[2.0, 0.0], [0.0, 3.0], [1.0, 1.0]] * 30000)
    y = np.array([0, 1, 2] * 30000)
    for model in (
        fastnb.MultinomialNB(alpha=0.0).fit(X, y),
        fastnb.MultinomialNB(class_prior=[0.0, 0.5, 0.5]).fit(X, y),
        fastnb.GaussianNB(priors=[0.0, 0.5, 0.5]).fit(X, y),
    ):
        jll = model.predict_joint_log_proba(X)
        assert np.isneginf(jll[:, 0]).any()
        assert (model.predict(X[:3]) == [0, 1, 2]).sum() >= 2
        bad = X.copy()
        bad[70000, 1] = np.nan
        with pytest.raises(ValueError, match="NaN. The first is nan in row 70000"):
            model.predict_proba(bad)


# -- input taken as is -----------------------------------------------------------

PLAIN = np.arange(12.0).reshape(4, 3)
LABELS_4 = np.array([0, 1, 0, 1])
# NumPy warns of every np.matrix made (a class it means to remove).
with pytest.warns(PendingDeprecationWarning, match="the matrix subclass"):
    MATRIX = np.asmatrix(PLAIN)
# (X, y, check_array's arguments, whether it is taken as is)
AS_IS_CASES = {
    "float64, C order": (PLAIN, LABELS_4, {}, True),
    "float64, F order": (np.asfortranarray(PLAIN), LABELS_4, {}, True),
    "float32": (PLAIN.astype(np.float32), LABELS_4, {}, True),
    "a column slice": (PLAIN[:, 1:], LABELS_4, {}, True),
    "boolean labels": (PLAIN, LABELS_4.astype(bool), {}, True),
    "unsigned labels": (PLAIN, LABELS_4.astype(np.uint8), {}, True),
    "X alone": (PLAIN, None, {}, True),
    "integer codes, any dtype": (PLAIN.astype(np.int64), None, {"dtype": None}, True),
    "integers where floats are asked": (PLAIN.astype(np.int64), None, {}, False),
    "float16": (PLAIN.astype(np.float16), None, {}, False),
    "big-endian float64": (PLAIN.astype(">f8"), None, {}, False),
    "a list": (PLAIN.tolist(), None, {}, False),
    "np.matrix": (MATRIX, None, {}, False),
    "1-D X": (PLAIN[0], None, {}, False),
    "no samples": (PLAIN[:0], None, {}, False),
    "no features": (PLAIN[:, :0], None, {}, False),
    "objects, any dtype": (PLAIN.astype(object), None, {"dtype": None}, False),
    "CSR matrix": (sp.csr_matrix(PLAIN), LABELS_4, {}, True),
    "CSR array": (sp.csr_array(PLAIN), None, {}, True),
    "CSC, CSR asked": (sp.csc_matrix(PLAIN), None, {}, False),
    "CSC, CSR or CSC asked": (
        sp.csc_matrix(PLAIN),
        None,
        {"accept_sparse": ("csr", "csc")},
        True,
    ),
    "COO": (sp.coo_matrix(PLAIN), None, {"accept_sparse": ("csr", "coo")}, False),
    "sparse, not accepted": (
        sp.csr_matrix(PLAIN),
        None,
        {"accept_sparse": False},
        False,
    ),
    "sparse integers where floats are asked": (
        sp.csr_matrix(PLAIN.astype(np.int64)),
        None,
        {},
        False,
    ),
    "sparse, no samples": (sp.csr_matrix(PLAIN[:0]), None, {}, False),
    "a CSR subclass": (type("CSR", (sp.csr_matrix,), {})(PLAIN), None, {}, False),
    "values to scan": (PLAIN, None, {"ensure_all_finite": True}, False),
    "other arguments": (PLAIN, None, {"ensure_min_samples": 2}, False),
    "one dtype, not a list": (PLAIN, None, {"dtype": np.float64}, False),
    "the dtype 'numeric'": (PLAIN, None, {"dtype": "numeric"}, False),
    "check_array's defaults": (PLAIN, None, None, False),
    "float labels": (PLAIN, LABELS_4.astype(float), {}, False),
    "string labels": (PLAIN, LABELS[[0, 1, 0, 1]], {}, False),
    "a column of labels": (PLAIN, LABELS_4[:, None], {}, False),
    "strided labels": (PLAIN, np.repeat(LABELS_4, 2)[::2], {}, False),
    "labels of another length": (PLAIN, LABELS_4[:3], {}, False),
    "a list of labels": (PLAIN, LABELS_4.tolist(), {}, False),
}


@pytest.mark.parametrize("case", AS_IS_CASES)
def test_input_taken_as_is_is_what_scikit_learn_returns_unchanged(case):
    # validate_input skips check_array / check_X_y for input taken as is:
    # that must be exactly the input they return unchanged, silently.
    from sklearn.utils.validation import check_array, check_X_y

    from fastnb._validation import taken_as_is

    X, y, arguments, expected = AS_IS_CASES[case]
    if arguments is None:
        assert taken_as_is(X, y) is expected
        return
    arguments = {
        "dtype": (np.float64, np.float32),
        "ensure_all_finite": False,
        "accept_sparse": "csr",
        **arguments,
    }
    assert taken_as_is(X, y, reset=False, **arguments) is expected
    if not expected:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if y is None:
            assert check_array(X, **arguments) is X
        else:
            checked_X, checked_y = check_X_y(X, y, **arguments)
            assert checked_X is X
            assert checked_y.base is y or checked_y is y


@pytest.mark.parametrize("name", ["GaussianNB", "MultinomialNB", "CategoricalNB"])
def test_input_taken_as_is_still_has_its_names_and_count_checked(name):
    # Taken as is, X still goes through validate_data's checks of the
    # feature count and names.
    pd = pytest.importorskip("pandas")
    cls = getattr(fastnb, name)
    frame = pd.DataFrame(PLAIN, columns=["a", "b", "c"])
    model = cls().fit(frame, LABELS_4)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        model.predict(PLAIN)
    model = cls().fit(PLAIN, LABELS_4)
    with pytest.raises(ValueError, match="X has 2 features, but"):
        model.predict(PLAIN[:, :2])
    with pytest.raises(ValueError, match="X has 2 features, but"):
        model.partial_fit(PLAIN[:, :2], LABELS_4)
    assert model.partial_fit(PLAIN, LABELS_4).n_features_in_ == 3
    assert not hasattr(model, "feature_names_in_")
    model = cls().fit(sp.csr_matrix(PLAIN), LABELS_4)
    with pytest.raises(ValueError, match="X has 2 features, but"):
        model.predict(sp.csr_matrix(PLAIN[:, :2]))
    with pytest.raises(ValueError, match="X has 2 features, but"):
        model.partial_fit(sp.csr_matrix(PLAIN[:, :2]), LABELS_4)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_a_rebound_feature_count_is_refused_after_predictions(case):
    # The statistics' shapes are checked once for each statistics and
    # feature count: a count rebound after predictions is still refused.
    X, y, _ = case.make(n_samples=60, seed=0)
    model = case.estimator().fit(X, y)
    model.predict(X)
    model.n_features_in_ += 1
    # (a model of named features finds the names no longer match first)
    message = "does not match the fitted statistics|feature_names_in_ must be"
    with pytest.raises(ValueError, match=message):
        model.predict(X)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_partial_fit_checks_only_shapes_it_did_not_make(case, monkeypatch):
    # The statistics a partial_fit sums from a checked batch need no check of
    # their shapes before the next call; a feature count rebound since, or
    # statistics rebound, are checked (and refused) all the same.
    X, y, _ = case.make(n_samples=60, seed=0)
    classes = np.unique(y)
    model = case.estimator().partial_fit(X, y, classes=classes)
    checks = []
    original = type(model)._check_statistics
    monkeypatch.setattr(
        type(model),
        "_check_statistics",
        lambda self, *args, **kwargs: (
            checks.append(1) or original(self, *args, **kwargs)
        ),
    )
    model.partial_fit(X, y)
    model.predict(X)
    assert checks == []
    model._statistics = dict(model._statistics)
    model.predict(X)
    assert checks == [1]
    model.n_features_in_ += 1
    message = "does not match the fitted statistics|feature_names_in_ must be"
    with pytest.raises(ValueError, match=message):
        model.partial_fit(X, y)
