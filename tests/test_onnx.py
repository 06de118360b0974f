"""fastnb.onnx: each estimator's ONNX graph, run by onnxruntime, gives
fastnb's labels and probabilities (float32 input to 1e-5, float64 to 1e-10).

Every comparison is against the fastnb model's own predict and
predict_proba. The real data sets skip, naming the missing file, when the
shared data folder is absent.
"""

import doctest

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import MultinomialNB as SklearnMultinomialNB
from sklearn.pipeline import make_pipeline

pytest.importorskip("skl2onnx")
ort = pytest.importorskip("onnxruntime")

import skl2onnx  # noqa: E402
from skl2onnx.common.data_types import (  # noqa: E402
    FloatTensorType,
    Int64TensorType,
    StringTensorType,
)

import fastnb  # noqa: E402
import fastnb.onnx  # noqa: E402
from fastnb.onnx import sklearn_twin, to_onnx  # noqa: E402

from _helpers import (  # noqa: E402
    ADULT_NUMERIC,
    ALPHA_PER_FEATURE,
    CASES,
    N_CODES,
    N_FEATURES,
    Case,
    codes_data,
    continuous_data,
    counts_data,
    read_adult,
    require_data,
    run_child,
    split_uci,
    tol,
)

# Also run on the wheel built from the sdist (.ci/run step 3).
pytestmark = pytest.mark.wheel

# ---------------------------------------------------------------------------
# Running a graph
# ---------------------------------------------------------------------------


def session(onx):
    """An onnxruntime session of the model, its warnings silenced."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(
        onx.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def feeds(onx, X):
    """The inputs of the graph for X: the array, or a DataFrame's columns in
    order (skl2onnx names the inputs as the columns, made valid names)."""
    names = [i.name for i in onx.graph.input]
    if isinstance(X, pd.DataFrame):
        return {
            name: as_input(X[column].to_numpy()).reshape(-1, 1)
            for name, column in zip(names, X.columns, strict=True)
        }
    return {names[0]: as_input(X)}


def as_input(values):
    """An array as onnxruntime takes it: strings as objects."""
    return values if values.dtype.kind in "biuf" else values.astype(object)


def run(onx, X):
    """(labels, probabilities) of the graph (converted with zipmap=False) on X."""
    return session(onx).run(None, feeds(onx, X))


def assert_scores_as(model, X, labels, probabilities):
    """The graph's labels are the model's, its probabilities within the
    tolerance of their dtype (1e-5 for float32, 1e-10 for float64)."""
    assert_array_equal(labels.tolist(), model.predict(X).tolist())
    expected = model.predict_proba(X)
    assert probabilities.shape == expected.shape
    error = np.abs(probabilities.astype(np.float64) - expected).max()
    assert error <= tol(probabilities.dtype), error


def probability_array(model, outputs, zipmap):
    """The probabilities a graph gave (its outputs after the label) as one
    (n_samples, n_classes) array: the tensor; ZipMap's dicts, keyed by the
    classes in order, whose values are float32 (ONNX's ZipMap takes no
    other); or a column a class."""
    if zipmap is False:
        (probabilities,) = outputs
        return probabilities
    if zipmap == "columns":
        return np.column_stack(outputs)
    (maps,) = outputs
    assert [list(row) for row in maps] == [model.classes_.tolist()] * len(maps)
    return np.array([list(row.values()) for row in maps], dtype=np.float32)


def convert_and_check(model, X, zipmap=False):
    """Convert ``model`` for X's input with the option ``zipmap``, run it on
    X in onnxruntime, compare."""
    onx = to_onnx(model, X, options={"zipmap": zipmap})
    labels, *probabilities = session(onx).run(None, feeds(onx, X))
    assert_scores_as(model, X, labels, probability_array(model, probabilities, zipmap))
    return onx


# ---------------------------------------------------------------------------
# Every estimator, in the configurations of the shared cases and more
# ---------------------------------------------------------------------------


def binary_data(rng, index, n_classes, scale=1.0):
    """Ones and zeros, a class's rate its own (BernoulliNB without binarize)."""
    return (counts_data(rng, index, n_classes) > 1).astype(np.float64)


def all_families_data(rng, index, n_classes, scale=1.0):
    """Normal values, codes, binary values, counts, counts: one float array."""
    return np.hstack(
        [
            continuous_data(rng, index, n_classes, n_features=2),
            codes_data(rng, index, n_classes)[:, :2],
            counts_data(rng, index, n_classes, n_features=4),
        ]
    )


ALL_FAMILIES = {
    "gaussian": [0, 1],
    "categorical": [2, 3],
    "bernoulli": [4],
    "multinomial": [5, 6],
    "poisson": [7],
}
ONNX_CASES = [
    # KernelDensityNB is not converted (test_refuses_kernel_densities).
    *(case for case in CASES if case.name != "KernelDensityNB"),
    Case(
        "MultinomialNB-alpha",
        "MultinomialNB",
        {"alpha": ALPHA_PER_FEATURE},
        counts_data,
    ),
    Case(
        "MultinomialNB-m-estimate",
        "MultinomialNB",
        {
            "alpha": fastnb.MEstimate(2.0, np.linspace(1, 2, N_FEATURES) / 12),
            "class_prior": [0.2, 0.3, 0.5],
        },
        counts_data,
    ),
    Case("ComplementNB", "ComplementNB", {"alpha": ALPHA_PER_FEATURE}, counts_data),
    Case(
        "BernoulliNB-m-estimate",
        "BernoulliNB",
        {"alpha": fastnb.MEstimate(3.0)},
        counts_data,
    ),
    Case("BernoulliNB-binary", "BernoulliNB", {"binarize": None}, binary_data),
    Case("PoissonNB", "PoissonNB", {}, counts_data),
    Case(
        "GaussianNB-unbiased-priors",
        "GaussianNB",
        {"var_estimator": "unbiased", "priors": [0.5, 0.3, 0.2]},
        continuous_data,
    ),
    Case(
        "GaussianNB-tied-unbiased",
        "GaussianNB",
        {"var_type": "tied", "var_estimator": "unbiased"},
        continuous_data,
    ),
    Case(
        "CategoricalNB-alpha",
        "CategoricalNB",
        {"alpha": ALPHA_PER_FEATURE, "fit_prior": False},
        codes_data,
    ),
    Case(
        "CategoricalNB-m-estimate",
        "CategoricalNB",
        {"alpha": fastnb.MEstimate(1.5, [np.full(n, 1 / n) for n in N_CODES])},
        codes_data,
    ),
    Case(
        "MixedNB-all-families",
        "MixedNB",
        {"families": ALL_FAMILIES, "class_prior": [0.5, 0.25, 0.25]},
        all_families_data,
    ),
]
# (case, dtype): the float dtypes of a case's dense X, or None for X as it is
# (strings, a DataFrame).
INPUTS = [
    pytest.param(case, dtype, id=f"{case.id}-{getattr(dtype, '__name__', 'native')}")
    for case in ONNX_CASES
    for dtype in case.dtypes
]


@pytest.mark.parametrize(
    "zipmap", [False, True, "columns"], ids=["tensor", "zipmap", "columns"]
)
@pytest.mark.parametrize(("case", "dtype"), INPUTS)
@pytest.mark.parametrize("labels", [("a", "b", "c"), (3, 7, 11)], ids=["str", "int"])
def test_scores_as_fastnb(case, dtype, labels, zipmap):
    # Every graph runs in onnxruntime as made, on float32 and float64 input
    # (issue 54: a float64 graph's ZipMap was refused, INVALID_GRAPH).
    X, y, _ = case.make(labels=labels)
    if dtype is not None:
        X = X.astype(dtype)
    model = case.estimator().fit(X, y)
    convert_and_check(model, X, zipmap)


# ---------------------------------------------------------------------------
# Categories never seen
# ---------------------------------------------------------------------------


def with_unseen(X, unseen):
    """X with ``unseen`` values put into its cells in turn: row i, column i mod F."""
    X = X.copy()
    for i, value in enumerate(unseen):
        X[i, i % X.shape[1]] = value
    return X


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64])
def test_codes_past_the_table_score_as_fastnb(dtype):
    X, y, _ = Case("codes", "CategoricalNB", {}, codes_data).make()
    model = fastnb.CategoricalNB(min_categories=3).fit(X, y)
    X = with_unseen(X, [2, 3, 4, 7, 10**6, 3, 9, 2**40 if dtype == np.int64 else 50])
    onx = convert_and_check(model, X.astype(dtype))
    # A negative code (which fastnb refuses) scores as unseen too.
    negative = session(onx).run(None, {"X": with_unseen(X, [-1, -5]).astype(dtype)})
    unseen = session(onx).run(None, {"X": with_unseen(X, [9, 9]).astype(dtype)})
    assert_array_equal(negative[1], unseen[1])


def test_strings_never_seen_score_as_fastnb():
    case = next(case for case in CASES if case.id == "CategoricalNB-strings")
    X, y, _ = case.make()
    model = case.estimator().fit(X, y)
    X = with_unseen(X.astype(object), ["violet", "", "RED", "blue ", "a" * 40])
    convert_and_check(model, X)


def test_frame_never_seen_scores_as_fastnb():
    case = next(case for case in CASES if case.id == "MixedNB-frame")
    X, y, _ = case.make()
    model = case.estimator().fit(X, y)
    X = X.astype({"colour": object})
    X.loc[:2, "colour"] = "violet"
    X.loc[1:3, "size"] = [5, 17, 1000]
    convert_and_check(model, X)


# ---------------------------------------------------------------------------
# Which graph, the outputs and their options
# ---------------------------------------------------------------------------

# The configurations skl2onnx's own converter of the scikit-learn estimator
# scores as fastnb (test_scores_as_fastnb checks its graphs).
SKL2ONNX_CASES = {"GaussianNB", "GaussianNB-unbiased-priors"}


@pytest.mark.parametrize("case", ONNX_CASES, ids=[case.id for case in ONNX_CASES])
def test_which_graph(case):
    X, y, _ = case.make()
    model = case.estimator().fit(X, y)
    twin = sklearn_twin(model)
    assert (twin is not None) == (case.id in SKL2ONNX_CASES)
    if twin is not None:
        assert type(twin).__name__ == type(model).__name__
        assert type(twin).__module__ == "sklearn.naive_bayes"


def unread_initializers(onx):
    """The names of the graph's initializers that no node reads (onnxruntime
    warns of each, and drops it)."""
    read = {name for node in onx.graph.node for name in node.input}
    read.update(output.name for output in onx.graph.output)
    return [tensor.name for tensor in onx.graph.initializer if tensor.name not in read]


@pytest.mark.parametrize("case", ONNX_CASES, ids=[case.id for case in ONNX_CASES])
def test_every_initializer_is_read(case):
    # skl2onnx's ComplementNB graph kept class_log_prior, which it never adds.
    X, y, _ = case.make()
    model = case.estimator().fit(X, y)
    assert unread_initializers(to_onnx(model)) == []
    assert unread_initializers(to_onnx(model, options={"zipmap": False})) == []


OPTION_CASES = ["MultinomialNB", "GaussianNB", "CategoricalNB-strings"]


@pytest.mark.parametrize("case_id", OPTION_CASES)
@pytest.mark.parametrize("labels", [("a", "b", "c"), (3, 7, 11)], ids=["str", "int"])
def test_nocl_and_class_labels(case_id, labels):
    case = next(case for case in CASES if case.id == case_id)
    X, y, _ = case.make(labels=labels)
    model = case.estimator().fit(X, y)
    classes = model.classes_.tolist()

    onx = to_onnx(model, X, options={"zipmap": False, "nocl": True})
    indices, probabilities = run(onx, X)
    assert indices.dtype == np.int64
    assert_array_equal(np.array(classes)[indices], model.predict(X))

    onx = to_onnx(model, X, options={"zipmap": False, "output_class_labels": True})
    _, _, class_labels = run(onx, X)
    assert class_labels.tolist() == classes


def test_label_and_probability_types():
    X, y, _ = CASES[0].make(labels=(False, True))
    for dtype, proba_type in [(np.float32, np.float32), (np.float64, np.float64)]:
        for model in (fastnb.MultinomialNB(), fastnb.PoissonNB()):
            model.fit(X, y)
            onx = to_onnx(model, X.astype(dtype), options={"zipmap": False})
            labels, probabilities = run(onx, X.astype(dtype))
            assert labels.dtype == np.int64 and probabilities.dtype == proba_type
    # Float classes (whole numbers) label as int64, as skl2onnx's.
    model = fastnb.PoissonNB().fit(X, y.astype(float))
    onx = to_onnx(model, X.astype(np.float32), options={"zipmap": False})
    labels, _ = run(onx, X.astype(np.float32))
    assert labels.dtype == np.int64
    assert_array_equal(labels, model.predict(X).astype(int))


# ---------------------------------------------------------------------------
# to_onnx's inputs
# ---------------------------------------------------------------------------


def input_types(onx):
    """(name, element type, shape) of each input of the graph."""
    return [
        (
            i.name,
            i.type.tensor_type.elem_type,
            [d.dim_value or None for d in i.type.tensor_type.shape.dim],
        )
        for i in onx.graph.input
    ]


@pytest.mark.parametrize(
    ("case_id", "expected"),
    [
        ("MultinomialNB", [("X", 1, [None, N_FEATURES])]),
        ("GaussianNB-tied", [("X", 1, [None, N_FEATURES])]),
        ("CategoricalNB-codes", [("X", 7, [None, N_FEATURES])]),
        ("CategoricalNB-strings", [("X", 8, [None, N_FEATURES])]),
        (
            "MixedNB-frame",
            [
                ("height", 1, [None, 1]),
                ("weight", 1, [None, 1]),
                ("colour", 8, [None, 1]),
                ("size", 1, [None, 1]),
                ("visits", 1, [None, 1]),
            ],
        ),
    ],
)
def test_default_inputs(case_id, expected):
    case = next(case for case in CASES if case.id == case_id)
    X, y, _ = case.make()
    model = case.estimator().fit(X, y)
    onx = to_onnx(model)
    assert input_types(onx) == expected
    if case_id == "MultinomialNB":
        labels, _ = run(onx, X.astype(np.float32))
        assert_array_equal(labels, model.predict(X))


def test_sparse_x_declares_a_dense_input():
    X, y, _ = CASES[0].make()
    model = fastnb.MultinomialNB().fit(X, y)
    onx = to_onnx(model, sp.csr_matrix(X.astype(np.float32)))
    assert input_types(onx) == [("X", 1, [None, N_FEATURES])]


def test_initial_types_and_the_lazy_function():
    X, y, _ = CASES[0].make()
    model = fastnb.PoissonNB().fit(X, y)
    onx = fastnb.to_onnx(
        model,
        initial_types=[("counts", Int64TensorType([None, N_FEATURES]))],
        options={"zipmap": False},
    )
    labels, _ = session(onx).run(None, {"counts": X.astype(np.int64)})
    assert_array_equal(labels, model.predict(X.astype(np.int64)))


def test_dask_estimators_convert_as_their_fastnb_estimator():
    pytest.importorskip("dask")
    import fastnb.dask

    X, y, _ = CASES[0].make()
    for name in ("MultinomialNB", "PoissonNB"):
        convert_and_check(getattr(fastnb.dask, name)().fit(X, y), X)


# ---------------------------------------------------------------------------
# Pipelines: raw text in, through skl2onnx's vectorizers
# ---------------------------------------------------------------------------

# skl2onnx's vectorizers lowercase in the locale en_US.UTF-8 unless told
# another; machines without it (CI images) have C.UTF-8.
LOCALE = {"locale": "C.UTF-8"}


def assert_pipeline_converts(pipeline, texts):
    """skl2onnx converts the fitted pipeline, whose labels and probabilities
    on the raw texts are the pipeline's own."""
    vectorizer, model = pipeline.steps[0][1], pipeline.steps[-1][1]
    onx = skl2onnx.to_onnx(
        pipeline,
        initial_types=[("text", StringTensorType([None, 1]))],
        options={id(vectorizer): LOCALE, id(model): {"zipmap": False}},
    )
    assert unread_initializers(onx) == []
    labels, probabilities = session(onx).run(
        None, {"text": np.array(texts, dtype=object).reshape(-1, 1)}
    )
    assert_scores_as(pipeline, texts, labels, probabilities)


TEXTS = [
    "free prize call now",
    "win a free holiday now",
    "are we still meeting for lunch",
    "call me when you get home",
    "prize draw winner call",
    "lunch at home tonight?",
]
TEXT_LABELS = ["spam", "spam", "ham", "ham", "spam", "ham"]


@pytest.mark.parametrize(
    "vectorizer", [CountVectorizer, TfidfVectorizer], ids=["count", "tfidf"]
)
@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "BernoulliNB"])
def test_pipeline_with_a_vectorizer(name, vectorizer):
    pipeline = make_pipeline(vectorizer(), getattr(fastnb, name)())
    pipeline.fit(TEXTS, TEXT_LABELS)
    assert_pipeline_converts(pipeline, [*TEXTS, "a free lunch", "unknown words"])


# ---------------------------------------------------------------------------
# Real data (../shared/data)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sms():
    path = require_data("sms_spam/SMSSpamCollection")
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t", 1) for line in f]
    labels, texts = zip(*rows, strict=True)
    return train_test_split(
        list(texts), np.array(labels), test_size=0.25, random_state=42, stratify=labels
    )


@pytest.mark.parametrize(
    "name", ["MultinomialNB", "ComplementNB", "BernoulliNB", "PoissonNB"]
)
def test_sms_spam_pipeline(name, sms):
    texts_train, texts_test, y_train, _ = sms
    pipeline = make_pipeline(CountVectorizer(), getattr(fastnb, name)())
    assert_pipeline_converts(pipeline.fit(texts_train, y_train), texts_test)


# Rows a batch: 20 Newsgroups' test posts made dense, a batch at a time.
NEWSGROUPS_BATCH = 500


@pytest.mark.parametrize(
    "name", ["MultinomialNB", "ComplementNB", "BernoulliNB", "PoissonNB"]
)
def test_20newsgroups_counts_in_float32(name, newsgroups, newsgroups_counts):
    # Issue 54: MultinomialNB's graph (then skl2onnx's, summing in float32)
    # was up to 7.7e-4 off on these posts' counts.
    X_train, X_test = newsgroups_counts
    model = getattr(fastnb, name)().fit(X_train, newsgroups[0].target)
    onx = to_onnx(model, X_train[:1].astype(np.float32), options={"zipmap": False})
    graph = session(onx)
    for start in range(0, X_test.shape[0], NEWSGROUPS_BATCH):
        X = X_test[start : start + NEWSGROUPS_BATCH]
        labels, probabilities = graph.run(None, {"X": X.toarray().astype(np.float32)})
        assert_scores_as(model, X, labels, probabilities)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"var_estimator": "unbiased"},
        {"var_type": "tied"},
        {"var_type": "spherical"},
    ],
    ids=["diag", "unbiased", "tied", "spherical"],
)
def test_spambase_gaussian(params):
    data = np.loadtxt(require_data("spambase/spambase.data"), delimiter=",")
    X, y = data[:, :-1], data[:, -1].astype(int)
    X_train, X_test, y_train, _ = train_test_split(
        X, y, test_size=0.25, random_state=42, stratify=y
    )
    model = fastnb.GaussianNB(**params).fit(X_train, y_train)
    for dtype in (np.float32, np.float64):
        convert_and_check(model, X_test.astype(dtype))


@pytest.mark.parametrize(
    ("path", "label_column"),
    [
        ("car/car.data", 6),
        ("mushroom/agaricus-lepiota.data", 0),
        ("nursery/nursery.data", 8),
    ],
    ids=["car", "mushroom", "nursery"],
)
def test_uci_categories_as_strings(path, label_column):
    X_train, X_test, y_train, _ = split_uci(require_data(path), label_column)
    model = fastnb.CategoricalNB().fit(X_train, y_train)
    # Test rows, and some with categories never seen.
    X = np.vstack([X_test, with_unseen(X_test[:30], ["?"] * 10 + ["new"] * 20)])
    convert_and_check(model, X)


def test_adult_mixed():
    X_train, y_train = read_adult(require_data("adult/adult.data"))
    X_test, _ = read_adult(require_data("adult/adult.test"), skiprows=1)
    categorical = [c for c in X_train.columns if c not in ADULT_NUMERIC]
    families = {"gaussian": ADULT_NUMERIC, "categorical": categorical}
    model = fastnb.MixedNB(families=families).fit(X_train, y_train)
    # One input a column: int64 numbers and strings, as the DataFrame holds.
    convert_and_check(model, X_test)


# ---------------------------------------------------------------------------
# What is refused
# ---------------------------------------------------------------------------


def test_refuses_what_it_cannot_convert():
    X, y, _ = CASES[0].make()
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        to_onnx(fastnb.MultinomialNB())
    with pytest.raises(TypeError, match="converts fastnb's estimators"):
        to_onnx(SklearnMultinomialNB().fit(X, y))
    with pytest.raises(TypeError, match="For a Pipeline"):
        to_onnx(make_pipeline(fastnb.MultinomialNB()).fit(X, y))
    # A count never seen, unsmoothed: -inf where the graph multiplies.
    X[y == "a", 0] = 0
    for name in ("MultinomialNB", "BernoulliNB", "PoissonNB", "ComplementNB"):
        model = getattr(fastnb, name)(alpha=0.0).fit(X, y)
        if np.isfinite(fastnb.onnx.scoring_tables(model).table).all():
            continue  # (PoissonNB's rates never reach 0)
        with pytest.raises(ValueError, match="Fit with alpha > 0"):
            to_onnx(model)


def test_refuses_kernel_densities():
    X, y, _ = CASES[0].make()
    with pytest.raises(ValueError, match="does not convert KernelDensityNB yet"):
        to_onnx(fastnb.KernelDensityNB().fit(X, y))
    mixed = fastnb.MixedNB(families={"kde": [0, 1], "multinomial": "remaining"})
    with pytest.raises(ValueError, match="does not convert MixedNB's 'kde' family"):
        to_onnx(mixed.fit(X, y))


@pytest.mark.parametrize("name", ["MultinomialNB", "BernoulliNB", "MixedNB"])
def test_refuses_models_that_ignore_missing_values(name):
    X, y, _ = CASES[0].make()
    params = {"families": {"bernoulli": "remaining"}} if name == "MixedNB" else {}
    model = getattr(fastnb, name)(missing="ignore", **params).fit(X, y)
    with pytest.raises(ValueError, match=f"a {name} with missing='ignore' yet"):
        to_onnx(model)


def test_refuses_raw_categories_other_than_strings():
    X = np.array([[True, "a"], [False, "b"], [True, "b"]], dtype=object)
    model = fastnb.CategoricalNB().fit(X, [0, 1, 1])
    with pytest.raises(ValueError, match="Column 0 holds raw categories that are"):
        to_onnx(model)


def test_refuses_inputs_that_do_not_fit():
    X, y, _ = CASES[0].make()
    model = fastnb.MultinomialNB().fit(X, y)
    with pytest.raises(ValueError, match="takes 8 columns"):
        to_onnx(model, X[:, :3].astype(np.float32))
    with pytest.raises(TypeError, match="must be a float, double, int64 or bool"):
        to_onnx(model, initial_types=[("X", StringTensorType([None, N_FEATURES]))])
    with pytest.raises(ValueError, match="one input a column is for CategoricalNB"):
        to_onnx(model, pd.DataFrame(X, columns=[f"c{j}" for j in range(N_FEATURES)]))
    case = next(case for case in CASES if case.id == "CategoricalNB-strings")
    X, y, _ = case.make()
    model = case.estimator().fit(X, y)
    with pytest.raises(TypeError, match="Column 0 of CategoricalNB holds strings"):
        to_onnx(model, initial_types=[("X", FloatTensorType([None, N_FEATURES]))])
    case = next(case for case in CASES if case.id == "MixedNB-frame")
    X, y, _ = case.make()
    model = case.estimator().fit(X, y)
    with pytest.raises(ValueError, match="one input a column, in the order"):
        to_onnx(model, X[X.columns[::-1]])
    with pytest.raises(ValueError, match="got 2 inputs"):
        to_onnx(model, X.iloc[:, :2])
    with pytest.raises(TypeError, match="Column 2 of MixedNB holds strings"):
        to_onnx(model, initial_types=[("X", FloatTensorType([None, 5]))])


def test_fastnb_imports_without_the_extra(tmp_path):
    result = run_child(
        """
        import sys
        sys.modules["skl2onnx"] = None
        import numpy as np
        import fastnb
        model = fastnb.MultinomialNB().fit(np.eye(2), [0, 1])
        try:
            fastnb.to_onnx(model)
        except ImportError as exc:
            print(exc)
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "pip install 'fastnb[onnx]'" in result.stdout


def test_docstring_examples():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in [*finder.find(fastnb.onnx), *finder.find(fastnb.to_onnx)]:
        runner.run(test)
    assert runner.tries and not runner.failures
