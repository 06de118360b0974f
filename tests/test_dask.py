"""fastnb.dask on a real cluster: Dask fits and predictions equal in-memory fastnb's.

One ``distributed.LocalCluster`` of two worker processes (module-scoped)
runs every test that computes. Only fastnb's and Dask's own functions run on
the workers: the data are made on the client (the cases' makers) or by
``dask.array.random``. Float values and weights are rounded to multiples of
1/8, so that their sums are exact in any order: a Dask fit's counts and
category tables must equal one in-memory fit's exactly, and its Gaussian
moments (merged block by block by the pairwise formula) to rounding.
"""

import math
import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.base import clone

import fastnb

from _helpers import (
    CASES,
    OUTPUTS,
    SCHEDULER_HTTP,
    as_container,
    assert_same_fit,
    assert_same_outputs,
    assert_same_state,
    case_params,
    exact,
    has_moments,
    local_client,
    set_cell,
    take_rows,
    tol,
)

pytest.importorskip("dask")
pytest.importorskip("distributed")

import dask
import dask.array as da
import dask.dataframe as dd
import dask.local
import dask.threaded

import fastnb.dask

# Also run on the wheel built from the sdist (.ci/run step 3).
pytestmark = pytest.mark.wheel

CASE = {case.id: case for case in CASES}
N_SAMPLES = 650
ROWS = 200  # a Dask array's blocks: 200, 200, 200 and 50 rows
N_PARTITIONS = 3  # a Dask DataFrame's partitions: 217, 217 and 216 rows
METHODS = ("predict", *OUTPUTS)


@pytest.fixture(scope="module")
def client():
    """A Client of a cluster of two worker processes, the default scheduler."""
    with local_client() as client:
        yield client


# ---------------------------------------------------------------------------
# Data and comparisons
# ---------------------------------------------------------------------------


def dask_rows(values, rows=ROWS):
    """An ndarray or CSR matrix as a Dask array of blocks of ``rows`` rows
    (a size, or the sizes), each with every column; a CSR matrix's blocks
    are CSR matrices."""
    chunks = (rows,) + (-1,) * (values.ndim - 1)
    if sp.issparse(values):
        dense = da.from_array(values.toarray(), chunks=chunks)
        return dense.map_blocks(
            sp.csr_matrix, meta=sp.csr_matrix((0, 0), dtype=values.dtype)
        )
    return da.from_array(values, chunks=chunks)


def dask_frame(values, npartitions=N_PARTITIONS):
    """A pandas DataFrame or Series as a Dask one of ``npartitions``."""
    return dd.from_pandas(values, npartitions=npartitions)


def in_memory_data(case, dtype=np.float64, container="dense_c", rows=None, seed=0):
    """X, y and weights of the case (N_SAMPLES rows, or those of ``rows``).

    A "native" X (strings, a frame) comes as a DataFrame, y and the weights
    as Series; else X in ``container`` and ``dtype``.
    """
    X, y, w = case.make(n_samples=N_SAMPLES, seed=seed)
    if rows is not None:
        X, y, w = take_rows(X, rows), y[rows], w[rows]
    w = exact(w)
    if container == "native":
        if not isinstance(X, pd.DataFrame):
            X = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        return X.reset_index(drop=True), pd.Series(y), pd.Series(w)
    return as_container(exact(X), container, dtype), y, w


def as_dask(data, rows=ROWS, npartitions=N_PARTITIONS):
    """X, y and weights as Dask collections: a DataFrame and Series in
    ``npartitions``, or arrays in blocks of ``rows`` rows."""
    if isinstance(data[0], pd.DataFrame):
        return tuple(dask_frame(v, npartitions) for v in data)
    return tuple(dask_rows(v, rows) for v in data)


def dask_estimator(case, **params):
    """The case's estimator from fastnb.dask."""
    return getattr(fastnb.dask, case.name)(**{**case.params, **params})


def output_rtol(model, dtype):
    """How close the outputs of two fits of ``model``'s data are: exactly
    equal but for models of moments."""
    return tol(dtype) if has_moments(model) else None


def assert_same_dask_outputs(model, expected, dask_X, X, rtol):
    """Every prediction of Dask X is a Dask array cut as X's rows (unknown
    sizes for a DataFrame) and equals ``expected``'s prediction of X."""
    outputs = [getattr(model, method)(dask_X) for method in METHODS]
    for method, output in zip(METHODS, outputs, strict=True):
        desired = getattr(expected, method)(X)
        assert isinstance(output, da.Array), method
        # The model goes to the workers as one key of the graph.
        model_keys = [
            key
            for key in dict(output.__dask_graph__())
            if str(key).startswith(f"{type(model).__name__}-")
        ]
        assert len(model_keys) == 1, method
        assert output.dtype == desired.dtype, method
        assert output.chunks[1:] == tuple((n,) for n in desired.shape[1:]), method
        if isinstance(dask_X, da.Array):
            assert output.chunks[0] == dask_X.chunks[0], method
        else:
            assert len(output.chunks[0]) == dask_X.npartitions, method
            assert all(math.isnan(n) for n in output.chunks[0]), method
    for method, computed in zip(METHODS, dask.compute(*outputs), strict=True):
        desired = getattr(expected, method)(X)
        assert_same_state(computed, desired, None if method == "predict" else rtol)


def first_input(case):
    """The case's first dtype and container: float64 dense, or "native"."""
    return case.dtypes[0], case.containers[0]


@pytest.fixture(scope="module")
def fitted(client):
    """``fitted(case_id)``: the case's Dask model fitted on its Dask data (its
    first input), that data, and the in-memory model fitted on the data in
    memory; made once per case. Tests copy a model before changing it."""
    fits = {}

    def fit(case_id):
        if case_id not in fits:
            case = CASE[case_id]
            dtype, container = first_input(case)
            data = in_memory_data(case, dtype, container)
            dask_data = as_dask(data)
            model = dask_estimator(case).fit(dask_data[0], dask_data[1], dask_data[2])
            expected = case.estimator().fit(data[0], data[1], sample_weight=data[2])
            fits[case_id] = model, expected, data, dask_data
        return fits[case_id]

    return fit


def error_of(call, error, match):
    """The exception ``call()`` raises, which must be an ``error`` whose message
    matches ``match``, for a test to compare with the Dask model's."""
    with pytest.raises(error, match=match) as info:
        call()
    return info.value


# ---------------------------------------------------------------------------
# Fitting on Dask collections equals fitting in memory
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "dtype", "container"),
    case_params(containers=("dense_c", "csr"), other_dtypes_in=("dense_c",)),
)
def test_fit_equals_in_memory_fit(client, case, dtype, container):
    data = in_memory_data(case, dtype, container)
    X, y, w = as_dask(data)
    model = dask_estimator(case).fit(X, y, sample_weight=w)
    expected = case.estimator().fit(data[0], data[1], sample_weight=data[2])
    assert_same_fit(model, expected)
    assert_same_dask_outputs(model, expected, X, data[0], output_rtol(model, dtype))


# Cases whose X is a float array, one a family.
MISSING_CASES = [
    "MultinomialNB",
    "BernoulliNB",
    "PoissonNB-alpha-per-feature",
    "GaussianNB",
    "KernelDensityNB",
    "CategoricalNB-codes",
]


@pytest.mark.parametrize("case", MISSING_CASES)
def test_missing_values_fit_as_in_memory(client, case):
    # Dense, and CSR (stored NaN) for the families that take it.
    case = CASE[case]
    container = "csr" if case.sparse else "dense_c"
    X, y, w = in_memory_data(case)
    X = np.where(np.random.default_rng(4).random(X.shape) < 0.15, np.nan, X)
    X = as_container(X, container)
    dask_X, dask_y, dask_w = as_dask((X, y, w))
    model = dask_estimator(case, missing="ignore").fit(
        dask_X, dask_y, sample_weight=dask_w
    )
    expected = case.estimator(missing="ignore").fit(X, y, sample_weight=w)
    assert_same_fit(model, expected)
    assert_same_dask_outputs(model, expected, dask_X, X, output_rtol(model, X.dtype))


@pytest.mark.parametrize(
    "case", ["MultinomialNB", "GaussianNB", "CategoricalNB-strings", "MixedNB-frame"]
)
def test_blocks_that_miss_classes(client, case):
    # Rows sorted by class: each block sees one or two of the classes; the
    # classes of all blocks are united, each counted where it was seen.
    case = CASE[case]
    data = in_memory_data(case, *first_input(case))
    order = np.argsort(np.asarray(data[1]), kind="stable")
    X, y, w = (take_rows(v, order) for v in data)
    if isinstance(X, pd.DataFrame):
        X, y, w = (v.reset_index(drop=True) for v in (X, y, w))
    dask_X, dask_y, dask_w = as_dask((X, y, w))
    model = dask_estimator(case).fit(dask_X, dask_y, sample_weight=dask_w)
    expected = case.estimator().fit(X, y, sample_weight=w)
    assert_same_fit(model, expected)
    assert_same_dask_outputs(model, expected, dask_X, X, output_rtol(model, None))


@pytest.mark.parametrize("case", ["MultinomialNB", "GaussianNB"])
@pytest.mark.parametrize("given_as", ["numpy", "dask-other-chunks", "dask-unknown"])
def test_y_and_weights_need_not_be_cut_as_x(fitted, case, given_as):
    # y and the weights as NumPy arrays, or Dask arrays of other blocks, or
    # of X's blocks but of unknown sizes: cut as X's rows, they give the
    # model of Dask collections cut alike.
    model, _, (_, y, w), (X, dask_y, dask_w) = fitted(case)
    if given_as == "dask-other-chunks":
        y, w = dask_rows(y, rows=150), dask_rows(w, rows=(50, 400, 200))
    if given_as == "dask-unknown":
        y, w = (v[v == v] for v in (dask_y, dask_w))  # every row, sizes unknown
        assert np.isnan(y.chunks[0]).all()
    refit = dask_estimator(CASE[case]).fit(X, y, sample_weight=w)
    assert_same_state(fastnb.get_state(refit), fastnb.get_state(model))


@pytest.mark.parametrize("case", ["GaussianNB", "MultinomialNB"])
def test_columns_of_one_dataframe_equal_in_memory(client, case):
    # X, y and the weights as columns of one Dask DataFrame, filtered so
    # that its first partition is empty: the feature names are learnt, the
    # empty partition is skipped (and scored as nothing), and predictions
    # are Dask arrays of unknown row counts.
    case = CASE[case]
    X, y, w = in_memory_data(case)
    features = [f"f{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=features)
    frame = frame.assign(label=y, weight=w, row=np.arange(N_SAMPLES))
    data = dask_frame(frame)
    kept = data[data["row"] >= data.divisions[1]]
    dask_X, dask_y, dask_w = kept[features], kept["label"], kept["weight"]
    assert [len(part) for part in dask.compute(*dask_X.to_delayed())][0] == 0
    model = dask_estimator(case).fit(dask_X, dask_y, sample_weight=dask_w)
    rows = frame.index >= data.divisions[1]
    X, y, w = (
        frame.loc[rows, features],
        frame.loc[rows, "label"],
        frame.loc[rows, "weight"],
    )
    expected = case.estimator().fit(X, y, sample_weight=w)
    assert_array_equal(model.feature_names_in_, np.array(features, dtype=object))
    assert_same_fit(model, expected)
    assert_same_dask_outputs(model, expected, dask_X, X, output_rtol(model, None))
    assert model.score(dask_X, dask_y, dask_w) == pytest.approx(
        expected.score(X, y, w), rel=1e-12
    )


def test_x_in_blocks_of_columns(fitted):
    # X's blocks of columns are joined block of rows by block of rows.
    model, expected, (X, _, _), (dask_X, dask_y, dask_w) = fitted("MixedNB-array")
    by_columns = dask_X.rechunk((ROWS, 3))
    refit = dask_estimator(CASE["MixedNB-array"]).fit(by_columns, dask_y, dask_w)
    assert_same_state(fastnb.get_state(refit), fastnb.get_state(model))
    assert_same_dask_outputs(refit, expected, by_columns, X, tol(X.dtype))


@pytest.mark.parametrize(
    ("case", "container"),
    [
        pytest.param(CASE[case_id], container, id=f"{case_id}-{container}")
        for case_id in ("MultinomialNB", "GaussianNB", "CategoricalNB-codes")
        for container in ("dense_c", "csr")
        if container in CASE[case_id].containers
    ],
)
def test_block_without_rows(client, case, container):
    # A block of no rows adds nothing to the fit and gets an empty block of
    # predictions.
    data = in_memory_data(case, container=container, rows=slice(500))
    rows = (300, 0, 200)
    X, y, w = as_dask(data, rows=rows)
    model = dask_estimator(case).fit(X, y, sample_weight=w)
    expected = case.estimator().fit(data[0], data[1], sample_weight=data[2])
    assert_same_fit(model, expected)
    assert_same_dask_outputs(model, expected, X, data[0], output_rtol(model, None))
    assert model.predict_proba(X).blocks[1].compute().shape == (0, 3)


# ---------------------------------------------------------------------------
# partial_fit
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("case", "dtype", "container"), case_params(containers=()))
def test_partial_fit_equals_in_memory_partial_fit(client, case, dtype, container):
    data = in_memory_data(case, dtype, container)
    classes = np.unique(data[1])
    batches = [slice(0, 350), slice(350, N_SAMPLES)]  # 200 + 150, 200 + 100 rows
    model, expected = dask_estimator(case), case.estimator()
    for batch in batches:
        X, y, w = (take_rows(v, batch) for v in data)
        dask_X, dask_y, dask_w = as_dask((X, y, w), npartitions=2)
        model.partial_fit(dask_X, dask_y, classes=classes, sample_weight=dask_w)
        expected.partial_fit(X, y, classes=classes, sample_weight=w)
        assert_same_fit(model, expected)
    assert_same_dask_outputs(
        model, expected, as_dask(data)[0], data[0], output_rtol(model, dtype)
    )


def soft_labels_of(y, seed=0):
    """Class probabilities in eighths (sums exact in any order) for labels y:
    each row's own class at least 1/2, the rest spread over the classes."""
    classes = np.unique(np.asarray(y))
    rng = np.random.default_rng(seed)
    spread = rng.multinomial(4, np.full(len(classes), 1 / len(classes)), len(y)) / 8
    own = (np.asarray(y)[:, None] == classes).astype(float) / 2
    return own + spread, classes


@pytest.mark.parametrize(
    "case", ["MultinomialNB", "GaussianNB", "CategoricalNB-codes", "MixedNB-array"]
)
@pytest.mark.parametrize("given_as", ["dask", "numpy"])
def test_soft_labels_fit_and_partial_fit_as_in_memory(client, case, given_as):
    case = CASE[case]
    X, y, w = in_memory_data(case)
    proba, classes = soft_labels_of(y)
    labels = ["no", "yes", "maybe"][: len(classes)]
    dask_X, dask_w = dask_rows(X), dask_rows(w)
    dask_proba = dask_rows(proba) if given_as == "dask" else proba
    model = dask_estimator(case).fit(
        dask_X, class_proba=dask_proba, classes=labels, sample_weight=dask_w
    )
    expected = case.estimator().fit(
        X, class_proba=proba, classes=labels, sample_weight=w
    )
    assert_same_fit(model, expected)
    assert_same_dask_outputs(model, expected, dask_X, X, output_rtol(model, None))
    # partial_fit: the columns in the order of the sorted classes.
    model, expected = dask_estimator(case), case.estimator()
    for batch in (slice(0, 400), slice(400, N_SAMPLES)):
        model.partial_fit(
            dask_rows(X[batch]),
            classes=labels,
            class_proba=dask_rows(proba[batch]),
            sample_weight=dask_rows(w[batch]),
        )
        expected.partial_fit(
            X[batch], classes=labels, class_proba=proba[batch], sample_weight=w[batch]
        )
    assert_same_fit(model, expected)


def test_soft_labels_of_a_dask_frame(client):
    case = CASE["MixedNB-frame"]
    X, y, w = in_memory_data(case, *first_input(case))
    proba, classes = soft_labels_of(y)
    frame = pd.DataFrame(proba, columns=classes)
    model = dask_estimator(case).fit(
        dask_frame(X), class_proba=dask_frame(frame), classes=classes
    )
    expected = case.estimator().fit(X, class_proba=proba, classes=classes)
    assert_same_fit(model, expected)


def test_a_dask_frame_of_pyarrow_dtypes(client):
    # Issue 56: partitions of pandas' Arrow-backed dtypes (strings, integers
    # and floats with nulls, booleans) fit as the same frame in memory, the
    # families inferred from the dtypes alike.
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(5)
    n = 90
    frame = pd.DataFrame(
        {
            "height": pd.array(rng.normal(170, 10, n), dtype="double[pyarrow]"),
            "grade": pd.array(rng.integers(0, 3, n), dtype="int64[pyarrow]"),
            "colour": pd.array(
                np.array(["red", "green", "blue"])[rng.integers(0, 3, n)],
                dtype="string[pyarrow]",
            ),
            "member": pd.array(rng.random(n) < 0.5, dtype="bool[pyarrow]"),
        }
    )
    for name in frame.columns:
        frame.loc[rng.random(n) < 0.1, name] = None
    y = pd.Series(np.array(["no", "yes"])[rng.integers(0, 2, n)])
    model = fastnb.dask.MixedNB(missing="ignore").fit(dask_frame(frame), dask_frame(y))
    expected = fastnb.MixedNB(missing="ignore").fit(frame, y)
    assert {f: c.tolist() for f, c in expected.families_.items()} == {
        "gaussian": [0],
        "categorical": [1, 2, 3],
    }
    assert_same_fit(model, expected)
    assert_array_equal(
        model.predict(dask_frame(frame)).compute(), expected.predict(frame)
    )


def test_bad_soft_labels_on_dask(client):
    X, y, _ = in_memory_data(CASE["MultinomialNB"])
    proba, _ = soft_labels_of(y)
    model = fastnb.dask.MultinomialNB()
    with pytest.raises(ValueError, match="class_proba must be 2-D"):
        model.fit(dask_rows(X), class_proba=dask_rows(proba[:, 0]))
    with pytest.raises(ValueError, match="Pass either y or class_proba, not both"):
        model.fit(dask_rows(X), dask_rows(y), class_proba=dask_rows(proba))
    with pytest.raises(ValueError, match="Each row of class_proba must sum to 1"):
        model.fit(dask_rows(X), class_proba=dask_rows(proba / 2))
    assert not hasattr(model, "classes_")


# Two batches of weather, the second bringing new categories: its partitions
# (of 3, 3 and 2 rows) bring hail and breeze, then fog and drizzle, then fog.
WEATHER = pd.DataFrame(
    {
        "sky": ["sun", "rain", "sun", "rain", "sun", "sun"]
        + ["sun", "hail", "rain", "fog", "sun", "drizzle", "fog", "sun"],
        "wind": ["calm", "gale", "calm", "calm", "gale", "calm"]
        + ["calm", "gale", "breeze", "calm", "gale", "calm", "calm", "gale"],
        "temperature": np.linspace(-4.0, 22.0, 14),
    }
)
WEATHER_Y = pd.Series([0, 1, 0, 1, 1, 0] + [0, 1, 1, 0, 1, 0, 0, 1])
FIRST, SECOND = slice(0, 6), slice(6, 14)
SORTED_CATEGORIES = [
    ["drizzle", "fog", "hail", "rain", "sun"],
    ["breeze", "calm", "gale"],
]
WEATHER_MODELS = {
    "CategoricalNB": ("CategoricalNB", {}, ["sky", "wind"]),
    "MixedNB": (
        "MixedNB",
        {"families": {"categorical": ["sky", "wind"], "gaussian": ["temperature"]}},
        ["sky", "wind", "temperature"],
    ),
}


def weather(name, rows=slice(None)):
    """The estimator of WEATHER_MODELS[name] (fastnb's and fastnb.dask's), and
    the rows of the weather it reads."""
    estimator, params, columns = WEATHER_MODELS[name]
    X, y = WEATHER.loc[:, columns].iloc[rows], WEATHER_Y.iloc[rows]
    return (
        getattr(fastnb.dask, estimator)(**params),
        getattr(fastnb, estimator)(**params),
        X.reset_index(drop=True),
        y.reset_index(drop=True),
    )


def categories(model):
    """The categories of each feature (of MixedNB's categorical family), as lists."""
    if isinstance(model, fastnb.MixedNB):
        model = model.estimators_["categorical"]
    return [list(c) for c in model.categories_]


@pytest.mark.parametrize("name", list(WEATHER_MODELS))
def test_categories_come_out_sorted_as_one_fit_sorts_them(client, name):
    # The partitions bring categories in an order that is not sorted; the
    # Dask fit, and the merge of Dask fits of the two batches (the second
    # bringing new categories), sort them all.
    model, expected, X, y = weather(name)
    model.fit(dask_frame(X, 3), dask_frame(y, 3))
    expected.fit(X, y)
    assert categories(model) == SORTED_CATEGORIES
    assert_same_fit(model, expected)
    assert_same_dask_outputs(
        model, expected, dask_frame(X, 3), X, output_rtol(model, None)
    )
    parts = []
    for rows in (FIRST, SECOND):
        part, _, X_part, y_part = weather(name, rows)
        parts.append(part.fit(dask_frame(X_part, 2), dask_frame(y_part, 2)))
    assert_same_fit(fastnb.merge(parts), expected)


@pytest.mark.parametrize("name", list(WEATHER_MODELS))
def test_pandas_categorical_columns(client, name):
    # Columns of the category dtype are read by value, whatever categories
    # each partition's dtype lists: the same model as in memory.
    model, expected, X, y = weather(name)
    X = X.astype({"sky": "category", "wind": "category"})
    dask_X = dask_frame(X, 3)
    dask_X["wind"] = dask_X["wind"].cat.as_unknown()
    model.fit(dask_X, dask_frame(y, 3))
    expected.fit(X, y)
    assert categories(model) == SORTED_CATEGORIES
    assert_same_fit(model, expected)
    assert_same_dask_outputs(model, expected, dask_X, X, output_rtol(model, None))


@pytest.mark.parametrize("name", list(WEATHER_MODELS))
def test_partial_fit_appends_new_categories_sorted(client, name):
    # The model keeps its categories' codes; the categories a later batch
    # brings, in whatever partitions, come after them, sorted, as in-memory
    # partial_fit lays them out.
    model, expected, _, _ = weather(name)
    for rows, npartitions in ((FIRST, 2), (SECOND, 3)):
        _, _, X, y = weather(name, rows)
        model.partial_fit(
            dask_frame(X, npartitions), dask_frame(y, npartitions), classes=[0, 1]
        )
        expected.partial_fit(X, y, classes=[0, 1])
        assert_same_fit(model, expected)
    assert categories(model) == [
        ["rain", "sun", "drizzle", "fog", "hail"],
        ["calm", "gale", "breeze"],
    ]
    _, _, X, _ = weather(name)
    assert_same_dask_outputs(
        model, expected, dask_frame(X, 3), X, output_rtol(model, None)
    )


@pytest.mark.parametrize("case", ["MultinomialNB", "CategoricalNB-strings"])
@pytest.mark.parametrize("classes", [None, ["a", "b"]], ids=["none", "too-few"])
def test_first_partial_fit_checks_the_classes(fitted, case, classes):
    # Without classes, or with classes that miss a label of y: in-memory
    # partial_fit's error, and the model stays unfitted.
    _, _, (X, y, w), (dask_X, dask_y, dask_w) = fitted(case)
    in_memory = CASE[case].estimator()
    pattern = "classes must be passed" if classes is None else "\\['c'\\]"
    expected = error_of(
        lambda: in_memory.partial_fit(X, y, classes, w), ValueError, pattern
    )
    model = dask_estimator(CASE[case])
    with pytest.raises(ValueError, match=pattern) as info:
        model.partial_fit(dask_X, dask_y, classes, dask_w)
    assert type(info.value) is type(expected)
    assert str(info.value) == str(expected)
    assert not hasattr(model, "classes_")


# ---------------------------------------------------------------------------
# Schedulers and scale
# ---------------------------------------------------------------------------


# Dask's schedulers in this process, by name.
LOCAL_SCHEDULERS = {"threads": dask.threaded.get, "sync": dask.local.get_sync}


@pytest.mark.parametrize("scheduler", list(LOCAL_SCHEDULERS))
@pytest.mark.parametrize("case", ["MultinomialNB", "GaussianNB", "MixedNB-frame"])
def test_fit_without_a_client_gives_the_same_model(fitted, case, scheduler):
    # The cluster's model (fitted) equals the model of Dask's local
    # schedulers, bit for bit: the blocks are combined in the same order.
    model, _, _, (X, y, w) = fitted(case)
    with dask.config.set(scheduler=scheduler):
        assert dask.base.get_scheduler() is LOCAL_SCHEDULERS[scheduler]
        local = dask_estimator(CASE[case]).fit(X, y, sample_weight=w)
        proba = local.predict_proba(X).compute()
    assert_same_state(fastnb.get_state(local), fastnb.get_state(model))
    assert_same_state(proba, model.predict_proba(X).compute())


@pytest.mark.parametrize("estimator", ["MultinomialNB", "GaussianNB"])
def test_fit_reads_x_block_by_block_on_the_workers(client, monkeypatch, estimator):
    # X, made on the workers, is read block by block there: the graph never
    # joins its blocks, and what comes back to the client is one state of
    # classes x features, not X.
    rng = da.random.default_rng(7)
    shape, chunks = (20_000, 30), (6_000, 30)  # blocks of 6000 rows and 2000
    if estimator == "GaussianNB":
        X = rng.normal(size=shape, chunks=chunks)
    else:
        X = rng.poisson(2.0, size=shape, chunks=chunks).astype(np.float64)
    y = (X[:, 0] > X[:, 1]).astype(np.int64) + (X[:, 2] > X[:, 3])
    calls = []
    compute = fastnb.dask.compute

    def recording_compute(collection):
        value = compute(collection)
        calls.append((collection, value))
        return value

    monkeypatch.setattr(fastnb.dask, "compute", recording_compute)
    model = getattr(fastnb.dask, estimator)().fit(X, y)
    assert len(calls) == 1
    graph, value = calls[0]
    keys = [str(key) for key in dict(graph.__dask_graph__())]
    assert any(X.name in key for key in keys)  # X's blocks are made in this graph
    assert not [k for k in keys if "concatenate" in k or "rechunk" in k]
    assert sum("block_state" in key for key in keys) == X.numblocks[0] == 4
    assert isinstance(value, fastnb.ModelState)
    assert list(value.classes) == [0, 1, 2]
    # At most four float64 tables of classes x features, and the rest.
    limit = 4 * 8 * len(value.classes) * X.shape[1] + 8192
    assert len(pickle.dumps(value)) < limit < X.nbytes / 100
    # The model is the one of X in memory.
    X_local, y_local = dask.compute(X, y)
    expected = getattr(fastnb, estimator)().fit(X_local, y_local)
    assert_same_fit(model, expected)


@pytest.mark.parametrize("method", ["fit", "score"])
def test_x_is_made_once_when_y_is_derived_from_it(fitted, method):
    # y computed from X shares X's blocks: each is made once, not once for
    # X and again for y (and the weights). In-process scheduler: the counting
    # function is the test's own.
    made = []

    def make_block(block):
        made.append(len(block))
        return block

    model, _, (X, _, _), _ = fitted("GaussianNB")
    dask_X = dask_rows(X).map_blocks(make_block, meta=np.empty((0, 0)))
    y = (dask_X[:, 0] > 0).astype(np.int64)
    w = 1.0 + (dask_X[:, 1] > 0)
    with dask.config.set(scheduler="sync"):
        estimator = dask_estimator(CASE["GaussianNB"]).fit(dask_X, y, sample_weight=w)
        if method == "score":
            made.clear()
            estimator.score(dask_X, y, sample_weight=w)
    assert sorted(made) == sorted(dask_rows(X).chunks[0])


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

BAD_ROW = 2 * ROWS + 17  # in block 2 (rows 400 to 599)


@pytest.mark.parametrize(
    ("case", "fault"),
    [
        ("MultinomialNB", "NaN"),
        ("MultinomialNB", "negative count"),
        ("GaussianNB", "NaN"),
    ],
)
def test_bad_value_in_a_block_raises_the_in_memory_error(fitted, case, fault):
    # The block's in-memory error, with a note naming the block; neither a
    # fitted model nor an unfitted one changes.
    case = CASE[case]
    column, value, pattern = case.bad_cells[fault]
    _, _, (X, y, w), _ = fitted(case.id)
    X = set_cell(X, BAD_ROW, column, value)
    block = slice(2 * ROWS, 3 * ROWS)
    expected = error_of(
        lambda: case.estimator().fit(X[block], y[block], w[block]),
        ValueError,
        case.message(pattern),
    )
    assert "row 17" in str(expected)
    with pytest.raises(ValueError, match=case.message(pattern)):
        case.estimator().fit(X, y, sample_weight=w)
    dask_X, dask_y, dask_w = as_dask((X, y, w))
    fresh = dask_estimator(case)
    good = dask_estimator(case).fit(*as_dask(in_memory_data(case, seed=1)))
    for model in (fresh, good):
        before = pickle.loads(pickle.dumps(model))
        with pytest.raises(ValueError, match=case.message(pattern)) as info:
            model.fit(dask_X, dask_y, sample_weight=dask_w)
        assert type(info.value) is type(expected)
        assert str(info.value) == str(expected)
        assert info.value.__notes__ == [
            "Raised for block 2 of X (rows are counted from the block's first, "
            "row 400 of X)."
        ]
        assert_same_state(model, before)
    assert not hasattr(fresh, "classes_")


def last_block(dask_X):
    """The index of Dask X's last block of rows, and its rows."""
    if isinstance(dask_X, da.Array):
        return len(dask_X.chunks[0]) - 1, slice(N_SAMPLES - dask_X.chunks[0][-1], None)
    return dask_X.npartitions - 1, slice(dask_X.divisions[-2], None)


@pytest.mark.parametrize("case", ["MultinomialNB", "CategoricalNB-strings"])
def test_unknown_label_in_a_later_partial_fit(fitted, case):
    # A label not among the classes, in the last block of a later batch:
    # in-memory partial_fit's error for that block, with a note naming it;
    # the model does not change.
    case = CASE[case]
    _, _, (X, y, w), (dask_X, dask_y, dask_w) = fitted(case.id)
    classes = np.unique(y)
    model = dask_estimator(case).partial_fit(
        dask_X, dask_y, classes=classes, sample_weight=dask_w
    )
    in_memory = case.estimator().partial_fit(X, y, classes=classes, sample_weight=w)
    bad_y = pd.Series(y, dtype=object) if isinstance(y, pd.Series) else y.copy()
    bad_y[N_SAMPLES - 3] = "d"
    index, rows = last_block(dask_X)
    expected = error_of(
        lambda: in_memory.partial_fit(
            take_rows(X, rows), bad_y[rows], sample_weight=w[rows]
        ),
        ValueError,
        "\\['d'\\]",
    )
    before = pickle.loads(pickle.dumps(model))
    bad_dask_y = as_dask((X, bad_y, w))[1]
    with pytest.raises(ValueError, match="\\['d'\\]") as info:
        model.partial_fit(dask_X, bad_dask_y, sample_weight=dask_w)
    assert str(info.value) == str(expected)
    (note,) = info.value.__notes__
    kind = "block" if isinstance(dask_X, da.Array) else "partition"
    assert note.startswith(f"Raised for {kind} {index} of X")
    assert_same_state(model, before)


def test_misaligned_inputs_are_refused(client):
    case = CASE["MultinomialNB"]
    X, y, w = in_memory_data(case)
    dask_X, dask_y, _ = as_dask((X, y, w))
    frame_X = dask_frame(pd.DataFrame(X), 3)
    model = dask_estimator(case)
    refusals = [
        # A DataFrame's y in other partitions than X's.
        (
            lambda: model.fit(frame_X, dask_frame(pd.Series(y), 4)),
            ValueError,
            "y has 4 blocks of rows and X 3",
        ),
        (
            lambda: model.fit(frame_X, dask_frame(pd.Series(y), 3), sample_weight=w),
            TypeError,
            "sample_weight must be a Dask collection partitioned as X",
        ),
        (
            lambda: model.fit(dask_X, y[:-1]),
            ValueError,
            "inconsistent numbers of samples: \\[650, 649\\]",
        ),
        (
            lambda: model.fit(dask_X, dask_rows(y[:-1])),
            ValueError,
            "inconsistent numbers of samples: \\[650, 649\\]",
        ),
        (
            lambda: model.fit(dask_X, dask_y, sample_weight=w[:-1]),
            ValueError,
            "inconsistent numbers of samples: \\[650, 649\\]",
        ),
        (lambda: model.fit(dask_X[:, 0], dask_y), ValueError, "2-D Dask array"),
        (lambda: model.fit(dask_X[:, :, None], dask_y), ValueError, "2-D Dask array"),
        (lambda: model.fit(dask_X, dask_rows(y[:, None])), ValueError, "must be 1-D"),
    ]
    for call, error, message in refusals:
        with pytest.raises(error, match=message):
            call()
        assert not hasattr(model, "classes_")


# ---------------------------------------------------------------------------
# The fitted model
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", [case.id for case in CASES])
def test_score_equals_in_memory_score(fitted, case):
    model, expected, (X, y, w), (dask_X, dask_y, dask_w) = fitted(case)
    score = model.score(dask_X, dask_y)
    assert type(score) is float
    assert score == pytest.approx(expected.score(X, y), rel=1e-12)
    weighted = model.score(dask_X, dask_y, sample_weight=dask_w)
    assert weighted == pytest.approx(expected.score(X, y, sample_weight=w), rel=1e-12)
    assert weighted != score  # the weights count


@pytest.mark.parametrize("case", [case.id for case in CASES])
def test_predict_by_cost_equals_in_memory_predict(fitted, case):
    model, expected, (X, _, _), (dask_X, _, _) = fitted(case)
    n_classes = len(model.classes_)
    cost = np.random.default_rng(0).uniform(0.0, 5.0, size=(n_classes, n_classes))
    predicted = model.predict(dask_X, cost=cost)
    assert isinstance(predicted, da.Array)
    desired = expected.predict(X, cost=cost)
    np.testing.assert_array_equal(predicted.compute(), desired, strict=True)
    np.testing.assert_array_equal(model.predict(X, cost=cost), desired, strict=True)
    with pytest.raises(ValueError, match="cost must have shape"):
        model.predict(dask_X, cost=np.zeros((n_classes + 1, n_classes + 1)))


@pytest.mark.parametrize("case", [case.id for case in CASES])
def test_fitted_model_predicts_in_memory_input_as_fastnb(fitted, case):
    # On NumPy, SciPy and pandas input the Dask estimator is the fastnb one.
    model, expected, (X, _, _), _ = fitted(case)
    inputs = [X]
    if CASE[case].sparse:
        inputs.append(sp.csr_matrix(X))
    rtol = output_rtol(model, getattr(X, "dtype", None))  # None: a DataFrame
    for X_in in inputs:
        assert isinstance(model.predict_proba(X_in), np.ndarray)
        assert_same_outputs(model, expected, X_in, rtol)


def test_the_clients_memory_bound_holds_on_the_workers(fitted):
    model, _, _, (X, y, w) = fitted("MultinomialNB")
    n_bytes = len(model.classes_) * model.n_features_in_ * 8
    with fastnb.config_context(max_table_bytes=n_bytes - 1):
        with pytest.raises(MemoryError, match=f"max_table_bytes={n_bytes - 1} "):
            dask_estimator(CASE["MultinomialNB"]).fit(X, y, sample_weight=w)
    with fastnb.config_context(max_table_bytes=n_bytes):
        dask_estimator(CASE["MultinomialNB"]).fit(X, y, sample_weight=w)


@pytest.mark.parametrize("case", [case.id for case in CASES])
def test_clone_and_pickle(fitted, case):
    model, _, _, (dask_X, _, _) = fitted(case)
    fresh = clone(model)
    assert type(fresh) is type(model)
    assert not hasattr(fresh, "classes_")
    assert_same_state(fresh, dask_estimator(CASE[case]))
    copied = pickle.loads(pickle.dumps(model))
    assert_same_state(copied, model)
    mine, theirs = dask.compute(
        copied.predict_proba(dask_X), model.predict_proba(dask_X)
    )
    assert_same_state(mine, theirs)


@pytest.mark.parametrize("case", [case.id for case in CASES])
def test_merge_of_dask_fits_equals_the_dask_fit_on_both(fitted, case):
    whole, _, (X, y, w), _ = fitted(case)
    parts = []
    for rows in (slice(0, 350), slice(350, N_SAMPLES)):
        dask_X, dask_y, dask_w = as_dask(
            tuple(take_rows(v, rows) for v in (X, y, w)), npartitions=2
        )
        parts.append(
            dask_estimator(CASE[case]).fit(dask_X, dask_y, sample_weight=dask_w)
        )
    merged = fastnb.merge(parts)
    assert type(merged) is type(whole)
    assert_same_fit(merged, whole)


# ---------------------------------------------------------------------------
# Threads: a worker's task threads share the CPUs
# ---------------------------------------------------------------------------


@pytest.fixture
def kernel_threads(monkeypatch):
    """The thread counts the dense counting kernel is called with, on a
    machine that shows 4 usable CPUs; skips where OpenMP allows only one
    thread (then no cap can show)."""
    from fastnb._simd import kernels

    if kernels.openmp_max_threads() < 2:
        pytest.skip("OpenMP allows one thread here: a cap would not show")
    monkeypatch.setattr(
        "os.sched_getaffinity", lambda pid: set(range(4)), raising=False
    )
    counting = kernels.discrete_count_dense
    seen = []

    def spy(*args):
        seen.append(args[-1])
        return counting(*args)

    monkeypatch.setattr(kernels, "discrete_count_dense", spy)
    return seen


def threads_blocks():
    """X, two blocks of 4,000 x 64 counts (256,000 values: each large enough
    for every thread), and y, cut alike, as Dask arrays."""
    X = np.random.default_rng(0).poisson(1.0, (8000, 64)).astype(float)
    y = np.arange(8000) % 3
    return da.from_array(X, chunks=(4000, -1)), da.from_array(y, chunks=4000)


def test_a_workers_task_threads_share_the_cpus(kernel_threads):
    # One worker of 4 task threads in this process: each task's kernels get
    # 4 CPUs / 4 threads = 1 thread, where the caller's get all it may.
    from distributed import Client, LocalCluster

    X, y = threads_blocks()
    fastnb.MultinomialNB().fit(X.compute(), y.compute())
    assert kernel_threads[0] >= 2  # the caller's own fit: uncapped
    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=4,
            processes=False,
            dashboard_address=None,
            scheduler_kwargs=SCHEDULER_HTTP,
        ) as cluster,
        Client(cluster),
    ):
        fastnb.dask.MultinomialNB().fit(X, y)
    assert kernel_threads[1:] == [1, 1]


@pytest.mark.parametrize(
    ("scheduler", "per_task"), [("threads", 1), ("sync", None)], ids=str
)
def test_local_schedulers_task_threads(kernel_threads, scheduler, per_task):
    # Dask's threaded scheduler of 4 threads shares the 4 CPUs out, one a
    # task; the synchronous one runs the tasks in the caller's thread,
    # uncapped.
    X, y = threads_blocks()
    with dask.config.set(scheduler=scheduler, num_workers=4):
        fastnb.dask.MultinomialNB().fit(X, y)
    uncapped = min(fastnb._simd.kernels.openmp_max_threads(), 4)
    assert kernel_threads == [per_task or uncapped] * 2
