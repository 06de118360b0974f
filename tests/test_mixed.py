"""fastnb.MixedNB: one Naive Bayes model over columns of different kinds.

Oracles: with one family MixedNB is that family's estimator; with several,
its joint log-likelihood is the prior plus each family's log-likelihood,
computed here from separately fitted fastnb and scikit-learn estimators.
"""

import doctest
import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp
from sklearn import naive_bayes as sk_nb
from sklearn.preprocessing import OrdinalEncoder

import fastnb
from fastnb import MixedNB, _mixed

from _helpers import (
    ADULT_COLUMNS,
    ADULT_NUMERIC,
    SPARSE,
    assert_same_outputs,
    assert_same_state,
    make_counts,
    public_attributes,
    read_adult,
    require_data,
    sparse_with_zeros,
)

OUTPUTS = ["predict_joint_log_proba", "predict_log_proba", "predict_proba"]
LABELS = np.array(["a", "b", "c"])
COLOURS = np.array(["red", "green", "blue", "white"])
# The columns of mixed_frame and their families, in column order.
FAMILIES = {
    "gaussian": ["height", "weight"],
    "categorical": ["colour", "size"],
    "poisson": ["visits"],
}

FAMILIES_BY_POSITION = {"gaussian": [0, 1], "categorical": [2, 3], "poisson": [4]}


def mixed_frame(n_samples=90, seed=0):
    """A DataFrame of two normal, a string, a code and a count column; labels.

    Every class has every colour and size code at least once when
    n_samples >= 90, so scikit-learn's CategoricalNB can score it.
    """
    rng = np.random.default_rng(seed)
    index = rng.permutation(np.arange(n_samples) % len(LABELS))
    X = pd.DataFrame(
        {
            "height": rng.normal(165 + 6 * index, 7),
            "weight": rng.normal(60 + 4 * index, 9),
            "colour": COLOURS[(index + rng.integers(0, 3, n_samples)) % 4],
            "size": (index + rng.integers(0, 2, n_samples) + np.arange(n_samples)) % 3,
            "visits": rng.poisson(1.0 + index),
        }
    )
    return X, LABELS[index]


def assert_outputs_agree(ours, theirs, X_ours, X_theirs=None, rtol=1e-12):
    """Same outputs of two fitted models: probabilities to rtol, labels equal."""
    X_theirs = X_ours if X_theirs is None else X_theirs
    for method in OUTPUTS:
        assert_allclose(
            getattr(ours, method)(X_ours),
            getattr(theirs, method)(X_theirs),
            rtol=rtol,
            atol=1e-300,
            err_msg=method,
        )
    assert_array_equal(ours.predict(X_ours), theirs.predict(X_theirs))


# ---------------------------------------------------------------------------
# One family: MixedNB is that family's estimator
# ---------------------------------------------------------------------------


def single_family_data(family):
    X, y, sample_weight = make_counts(LABELS, n_samples=90, n_features=6)
    if family in ("gaussian", "kde"):
        rng = np.random.default_rng(1)
        X = rng.normal(size=X.shape) + (y == "a")[:, None]
    elif family == "categorical":
        X = np.minimum(np.round(X), 3)
    elif family == "bernoulli":
        X = (X > 1).astype(np.float64)
    elif family == "poisson":
        X = np.round(X)
    return X, y, sample_weight


@pytest.mark.parametrize("family", list(_mixed.FAMILIES))
@pytest.mark.parametrize(
    "prior", [{}, {"fit_prior": False}, {"class_prior": [0.2, 0.5, 0.3]}]
)
def test_single_family_is_that_estimator(family, prior):
    X, y, sample_weight = single_family_data(family)
    X_train, X_test = X[:70], X[70:]
    ours = MixedNB(families={family: "remaining"}, **prior)
    ours.fit(X_train, y[:70], sample_weight=sample_weight[:70])
    if family in ("gaussian", "kde"):
        # GaussianNB and KernelDensityNB have no fit_prior: a uniform prior
        # is given as priors.
        priors = prior.get("class_prior", [1 / 3] * 3 if prior else None)
        theirs = _mixed.FAMILIES[family](priors=priors)
    else:
        theirs = _mixed.FAMILIES[family](**prior)
    theirs.fit(X_train, y[:70], sample_weight=sample_weight[:70])
    assert_outputs_agree(ours, theirs, X_test)
    assert_array_equal(ours.classes_, theirs.classes_)
    assert_allclose(ours.class_count_, theirs.class_count_, rtol=1e-15)
    if family not in ("gaussian", "kde"):
        assert_allclose(ours.class_log_prior_, theirs.class_log_prior_, rtol=1e-15)
    assert list(ours.estimators_) == [family]
    assert_array_equal(ours.families_[family], np.arange(X.shape[1]))
    assert ours.n_features_in_ == X.shape[1]


# ---------------------------------------------------------------------------
# Several families: the joint log-likelihood by hand
# ---------------------------------------------------------------------------


def test_gaussian_categorical_jll_by_hand():
    X, y = mixed_frame(150)
    X = X[["height", "colour", "weight", "size"]]
    train, test = slice(0, 110), slice(110, None)
    numeric, categorical = ["height", "weight"], ["colour", "size"]
    model = MixedNB(families={"gaussian": numeric, "categorical": categorical})
    model.fit(X[train], y[train])
    assert {f: c.tolist() for f, c in model.families_.items()} == {
        "gaussian": [0, 2],
        "categorical": [1, 3],
    }
    jll = model.predict_joint_log_proba(X[test])

    # scikit-learn, on the categories ordinal-encoded.
    encoder = OrdinalEncoder().fit(X[categorical])
    gaussian = sk_nb.GaussianNB().fit(X[train][numeric], y[train])
    codes = encoder.transform(X[categorical])
    categorical_nb = sk_nb.CategoricalNB().fit(codes[train], y[train])
    counts = np.unique(y[train], return_counts=True)[1]
    expected = (
        np.log(counts / counts.sum())
        + gaussian.predict_joint_log_proba(X[test][numeric])
        - np.log(gaussian.class_prior_)
        + categorical_nb.predict_joint_log_proba(codes[test])
        - categorical_nb.class_log_prior_
    )
    assert_allclose(jll, expected, rtol=1e-10)

    # The same from fastnb's own estimators, categories as raw strings.
    ours_gaussian = fastnb.GaussianNB().fit(X[train][numeric], y[train])
    ours_categorical = fastnb.CategoricalNB().fit(X[train][categorical], y[train])
    from_fastnb = (
        np.log(counts / counts.sum())
        + ours_gaussian.predict_joint_log_proba(X[test][numeric])
        - np.log(ours_gaussian.class_prior_)
        + ours_categorical.predict_joint_log_proba(X[test][categorical])
        - ours_categorical.class_log_prior_
    )
    assert_allclose(jll, from_fastnb, rtol=1e-12)

    assert_allclose(
        model.predict_log_proba(X[test]),
        jll - logsumexp(jll, axis=1)[:, None],
        rtol=1e-10,
        atol=1e-12,
    )
    assert_allclose(model.predict_proba(X[test]).sum(axis=1), 1.0, rtol=1e-14)
    assert_array_equal(model.predict(X[test]), model.classes_[jll.argmax(axis=1)])


def test_poisson_family_keeps_the_factorial_term():
    X, y = mixed_frame()
    model = MixedNB(families={"gaussian": ["height"], "poisson": ["visits"]})
    model.fit(X[["height", "visits"]], y)
    gaussian = fastnb.GaussianNB().fit(X[["height"]], y)
    poisson = fastnb.PoissonNB().fit(X[["visits"]], y)
    expected = (
        gaussian.predict_joint_log_proba(X[["height"]])
        + poisson.predict_joint_log_proba(X[["visits"]])
        - poisson.class_log_prior_
    )
    # -log(x!) is in the joint log-likelihood, as in PoissonNB's own.
    assert_allclose(model.predict_joint_log_proba(X[["height", "visits"]]), expected)


def test_unseen_category_scores_as_in_categorical_nb():
    X, y = mixed_frame()
    model = MixedNB(families={"gaussian": [0, 1], "categorical": [2, 3]})
    model.fit(X[["height", "weight", "colour", "size"]], y)
    new = X[["height", "weight", "colour", "size"]].iloc[:5].copy()
    new["colour"] = ["purple", "red", "purple", "green", "black"]
    new["size"] = [0, 7, 1, 2, 9]
    gaussian = fastnb.GaussianNB().fit(X[["height", "weight"]], y)
    categorical = fastnb.CategoricalNB().fit(X[["colour", "size"]], y)
    expected = (
        gaussian.predict_joint_log_proba(new[["height", "weight"]])
        + categorical.predict_joint_log_proba(new[["colour", "size"]])
        - categorical.class_log_prior_
    )
    assert_allclose(model.predict_joint_log_proba(new), expected, rtol=1e-12)


def test_family_params_reach_the_estimators():
    X, y = mixed_frame()
    model = MixedNB(
        families=FAMILIES,
        gaussian_params={"var_smoothing": 1e-3, "var_type": "tied"},
        categorical_params={"alpha": 0.5},
        poisson_params={"alpha": 2.0},
    ).fit(X, y)
    assert model.estimators_["gaussian"].var_smoothing == 1e-3
    assert model.estimators_["categorical"].alpha == 0.5
    assert model.estimators_["poisson"].alpha == 2.0
    # Each family's prior made uniform by its own parameters.
    assert_allclose(model.estimators_["gaussian"].priors, [1 / 3] * 3)
    for family in ("categorical", "poisson"):
        assert model.estimators_[family].fit_prior is False
        assert model.estimators_[family].class_prior is None
    jll = model.class_log_prior_ + sum(
        fastnb_family(family, params)
        .fit(X[FAMILIES[family]], y)
        .predict_joint_log_proba(X[FAMILIES[family]])
        - np.log(1 / 3)
        for family, params in [
            ("gaussian", {"var_smoothing": 1e-3, "var_type": "tied"}),
            ("categorical", {"alpha": 0.5}),
            ("poisson", {"alpha": 2.0}),
        ]
    )
    assert_allclose(model.predict_joint_log_proba(X), jll, rtol=1e-12)


def fastnb_family(family, params):
    """The family's estimator with a uniform prior over LABELS, as MixedNB's."""
    if family == "gaussian":
        return fastnb.GaussianNB(priors=[1 / 3] * 3, **params)
    return _mixed.FAMILIES[family](fit_prior=False, **params)


# ---------------------------------------------------------------------------
# Inputs: names, positions, arrays, DataFrames
# ---------------------------------------------------------------------------


def test_columns_by_name_or_position_and_any_container():
    X, y = mixed_frame()
    by_name = MixedNB(families=FAMILIES).fit(X, y)
    by_position = MixedNB(
        families={"poisson": [4], "categorical": [3, 2], "gaussian": "remaining"}
    ).fit(X, y)
    mixed = {"gaussian": ["height", 1], "categorical": "remaining", "poisson": [4]}
    by_both = MixedNB(families=mixed).fit(X, y)
    # The columns as an object array (positions only: no names).
    as_array = X.to_numpy(dtype=object)
    from_array = MixedNB(families=FAMILIES_BY_POSITION).fit(as_array, y)
    assert_array_equal(by_name.feature_names_in_, X.columns)
    assert not hasattr(from_array, "feature_names_in_")
    for other in (by_position, by_both):
        # The same columns, families in another order: the same sums.
        assert_outputs_agree(other, by_name, X, rtol=1e-13)
    assert_outputs_agree(from_array, by_name, as_array, X, rtol=1e-13)
    assert_array_equal(by_both.families_["categorical"], [2, 3])
    assert list(by_position.families_) == ["poisson", "categorical", "gaussian"]
    assert_array_equal(by_position.families_["categorical"], [3, 2])


def test_families_inferred_from_dtypes():
    rng = np.random.default_rng(0)
    n_samples = 40
    y = LABELS[np.arange(n_samples) % 3]
    X = pd.DataFrame(
        {
            "f64": rng.normal(size=n_samples),
            "codes": rng.integers(0, 3, n_samples),
            "flag": rng.random(n_samples) < 0.5,
            "text": COLOURS[rng.integers(0, 4, n_samples)],
            "string": pd.array(COLOURS[rng.integers(0, 4, n_samples)], dtype="string"),
            "category": pd.Categorical(COLOURS[rng.integers(0, 4, n_samples)]),
            "f32": rng.normal(size=n_samples).astype(np.float32),
        }
    )
    model = MixedNB().fit(X, y)
    assert {f: c.tolist() for f, c in model.families_.items()} == {
        "gaussian": [0, 6],
        "categorical": [1, 2, 3, 4, 5],
    }
    explicit = MixedNB(
        families={"gaussian": ["f64", "f32"], "categorical": "remaining"}
    ).fit(X, y)
    assert_outputs_agree(model, explicit, X, rtol=1e-15)
    assert model.__sklearn_tags__().input_tags.string

    dates = X.assign(when=pd.date_range("2024-01-01", periods=n_samples))
    with pytest.raises(ValueError, match="cannot infer the family of column 'when'"):
        MixedNB().fit(dates, y)
    with pytest.raises(ValueError, match="infers the families from a data frame"):
        MixedNB().fit(X.to_numpy(), y)


def test_integer_columns_are_categorical_where_they_look_like_codes():
    # At most 50 distinct values, one for every 10 rows, none negative.
    rng = np.random.default_rng(1)
    n_samples = 200
    y = LABELS[np.arange(n_samples) % 3]
    X = pd.DataFrame(
        {
            "codes": np.arange(n_samples) % 20,
            "one_code_too_many": np.arange(n_samples) % 21,
            "negative": rng.integers(-1, 2, n_samples),
            "nullable": pd.array(
                np.where(np.arange(n_samples) % 7 == 0, None, np.arange(n_samples) % 3),
                dtype="Int64",
            ),
            "unsigned": (np.arange(n_samples) % 4).astype(np.uint8),
            "measured": rng.integers(0, 10**6, n_samples),
        }
    )
    model = MixedNB(missing="ignore").fit(X, y)
    families = {f: X.columns[c].tolist() for f, c in model.families_.items()}
    assert families == {
        "gaussian": ["one_code_too_many", "negative", "measured"],
        "categorical": ["codes", "nullable", "unsigned"],
    }
    # Fifty distinct values at most, however many rows.
    wide = pd.DataFrame(
        {"fifty": np.arange(1000) % 50, "fifty_one": np.arange(1000) % 51}
    )
    model = MixedNB().fit(wide, np.arange(1000) % 2)
    assert {f: c.tolist() for f, c in model.families_.items()} == {
        "gaussian": [1],
        "categorical": [0],
    }
    # Families given decide, whatever the column looks like.
    given = MixedNB(families={"categorical": ["measured"], "gaussian": "remaining"})
    assert given.fit(X.fillna(0), y).families_["categorical"].tolist() == [5]


def test_a_column_refused_for_its_table_is_named_with_its_family():
    # Issue 54: codes past max_categories, in a column declared categorical.
    X, y = mixed_frame()
    X["serial"] = np.arange(len(X)) * 50_000
    model = MixedNB(families={**FAMILIES, "categorical": "remaining"})
    message = (
        "MixedNB: column 5 ('serial') of X, in the 'categorical' family, has code "
        "1000000 in row 20, which needs a table of more than max_categories=1000000 "
        "categories. If the column holds numbers rather than category codes, "
        "declare its family, for example families={'gaussian': ['serial'], "
        "'categorical': 'remaining'}"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        model.fit(X, y)
    assert not hasattr(model, "classes_")
    # Raw values: more categories than max_categories.
    model.set_params(categorical_params={"max_categories": 20})
    X["serial"] = X["serial"].astype(str)
    with pytest.raises(ValueError, match="'serial'.* has 90 categories, more than"):
        model.fit(X, y)


BAD_FAMILIES = [
    ({"gausian": [0]}, "Unknown families \\['gausian'\\]"),
    ({"gaussian": [0, 1], "poisson": [1, 2]}, "listed in families\\['poisson'\\] also"),
    ({"gaussian": [0, 0, 1, 2]}, "listed in families\\['gaussian'\\] twice"),
    ({"gaussian": [0, 1, 2, 3]}, "lists column 3, but X has 3 columns"),
    ({"gaussian": [-1, 0, 1]}, "lists column -1"),
    ({"gaussian": [0, 1]}, "Columns \\['2'\\] are in no family"),
    ({"gaussian": "remaining", "poisson": "remaining"}, "Only one family may"),
    ({"gaussian": "all"}, "must be a list of columns"),
    ({"gaussian": 0, "poisson": [1, 2]}, "must be a list of columns"),
    ({"gaussian": [0, 1, True]}, "holds the boolean True"),
    ({"gaussian": [0, 1, 2.0]}, "columns are integer positions or string names"),
    ({"gaussian": ["x"], "poisson": "remaining"}, "no string column names"),
    ({}, "families is empty"),
]


@pytest.mark.parametrize(("families", "message"), BAD_FAMILIES)
def test_bad_families(families, message):
    X = np.abs(np.random.default_rng(0).normal(size=(6, 3)))
    y = [0, 1] * 3
    model = MixedNB(families=families)
    with pytest.raises(ValueError, match=message):
        model.fit(X, y)
    with pytest.raises(ValueError, match=message):
        model.partial_fit(X, y, classes=[0, 1])
    assert not hasattr(model, "classes_")


def test_bad_family_names_and_params():
    X, y = mixed_frame()
    with pytest.raises(
        ValueError, match="lists column 'shoe', which is not a column of X"
    ):
        MixedNB(families={"gaussian": ["shoe"], "categorical": "remaining"}).fit(X, y)
    with pytest.raises(ValueError, match="must be an instance of 'dict'"):
        MixedNB(families=[("gaussian", [0])]).fit(X, y)
    for params, message in [
        ({"gaussian_params": {"priors": [0.5, 0.5]}}, "prior belongs to MixedNB"),
        ({"poisson_params": {"fit_prior": False}}, "prior belongs to MixedNB"),
        ({"categorical_params": {"class_prior": [0.5, 0.5]}}, "prior belongs to"),
        ({"categorical_params": {"alpah": 1.0}}, "not a valid set of parameters"),
        ({"poisson_params": {"alpha": -1.0}}, "'alpha' parameter of PoissonNB"),
    ]:
        with pytest.raises(ValueError, match=message):
            MixedNB(families=FAMILIES, **params).fit(X, y)


def test_prediction_input_checks():
    X, y = mixed_frame()
    model = MixedNB(families=FAMILIES).fit(X, y)
    with pytest.raises(ValueError, match="missing:\n- visits"):
        model.predict(X.iloc[:, :4])
    from_array = MixedNB(families=FAMILIES_BY_POSITION).fit(X.to_numpy(object), y)
    with pytest.raises(ValueError, match="has 4 features, but MixedNB is expecting 5"):
        from_array.predict(X.iloc[:, :4].to_numpy(object))
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict(X.rename(columns={"height": "tallness"}))
    with pytest.raises(ValueError, match="missing values .* \\['colour'\\]"):
        model.predict(X.assign(colour=X["colour"].where(X.index != 3, None)))
    with pytest.raises(ValueError, match="missing values .* \\['height'\\]"):
        model.fit(X.assign(height=X["height"].where(X.index != 3)), y)
    with pytest.raises(ValueError, match="requires y to be passed"):
        MixedNB(families=FAMILIES).fit(X, None)
    # Columns in another order are refused, not silently mixed up.
    with pytest.raises(ValueError, match="feature names"):
        model.predict(X[X.columns[::-1]])


@pytest.mark.parametrize(
    ("families", "string", "positive_only", "poor_score", "sparse"),
    [
        (None, True, False, True, False),
        ({"gaussian": "remaining"}, False, False, False, True),
        ({"gaussian": [0], "categorical": "remaining"}, True, False, True, True),
        ({"gaussian": [0], "multinomial": "remaining"}, False, True, True, True),
        ({"bernoulli": [0], "poisson": "remaining"}, False, True, True, True),
        # Columns by name need a DataFrame.
        (
            {"gaussian": ["height"], "categorical": "remaining"},
            True,
            False,
            True,
            False,
        ),
    ],
)
def test_tags(families, string, positive_only, poor_score, sparse):
    tags = MixedNB(families=families).__sklearn_tags__()
    assert tags.input_tags.string is string
    assert tags.input_tags.categorical is string
    assert tags.input_tags.positive_only is positive_only
    assert tags.classifier_tags.poor_score is poor_score
    assert tags.input_tags.sparse is sparse
    assert not tags.input_tags.allow_nan


def test_errors_of_a_family_name_its_columns():
    X, y = mixed_frame()
    X.iloc[3, 3] = -1
    with pytest.raises(ValueError, match="Negative values .* feature 1") as error:
        MixedNB(families=FAMILIES).fit(X, y)
    if hasattr(error.value, "add_note"):  # Python 3.11+
        assert error.value.__notes__ == [
            "Raised for MixedNB's 'categorical' family, whose features 0, 1, ... "
            "are the columns 2 ('colour'), 3 ('size') of X."
        ]


# ---------------------------------------------------------------------------
# partial_fit and sample weights
# ---------------------------------------------------------------------------


def test_partial_fit_in_chunks_equals_fit():
    X, y = mixed_frame(120, seed=3)
    # A colour and size codes first seen in the last chunk.
    X.loc[100:, "colour"] = "violet"
    X.loc[110:, "size"] = 5
    weights = np.random.default_rng(4).uniform(0.0, 3.0, len(y))
    whole = MixedNB(families=FAMILIES).fit(X, y, sample_weight=weights)
    chunked = MixedNB(families=FAMILIES)
    for start, stop in [(0, 7), (7, 50), (50, 51), (51, 120)]:
        chunked.partial_fit(
            X[start:stop],
            y[start:stop],
            classes=LABELS,
            sample_weight=weights[start:stop],
        )
    # Gaussian moments merged from chunks differ from one pass by rounding.
    assert_outputs_agree(chunked, whole, X, rtol=1e-10)
    assert_allclose(chunked.class_count_, whole.class_count_, rtol=1e-14)
    assert_allclose(chunked.class_log_prior_, whole.class_log_prior_, rtol=1e-14)
    for family in FAMILIES:
        assert_array_equal(chunked.estimators_[family].classes_, LABELS)


# partial_fit in any chunks is fit, integer weights are repeated rows:
# test_invariants, on a DataFrame and on an array.


# ---------------------------------------------------------------------------
# All-or-nothing fitting
# ---------------------------------------------------------------------------


def three_batches():
    X, y = mixed_frame(120, seed=7)
    return [(X[:40], y[:40]), (X[40:80], y[40:80]), (X[80:], y[80:])]


def failing_call(case, X, y):
    """(arguments of partial_fit, parameters to set first) for each failure."""
    X = X.copy()
    if case == "first family (gaussian): infinity":
        X.iloc[3, 0] = np.inf
    elif case == "middle family (categorical): negative code":
        X.iloc[3, 3] = -1
    elif case == "last family (poisson): negative count":
        X.iloc[3, 4] = -2
    elif case == "last family's parameters":
        return (X, y), {"poisson_params": {"alpha": -1.0}}
    elif case == "middle family's parameters":
        return (X, y), {"categorical_params": {"min_categories": -3}}
    elif case == "unknown label":
        y = np.where(np.arange(len(y)) == 3, "z", y)
    elif case == "wrong classes":
        return (X, y, ["a", "b"]), {}
    elif case == "sample_weight":
        return (X, y, None, -np.ones(len(y))), {}
    elif case == "missing value":
        X.iloc[3, 2] = None
    elif case == "feature count":
        X = X.iloc[:, :4]
    return (X, y), {}


# The failures of failing_call, each with a part of its message.
FAILURES = {
    "first family (gaussian): infinity": "contains infinity",
    "middle family (categorical): negative code": (
        "Negative values in data passed to CategoricalNB"
    ),
    "last family (poisson): negative count": (
        "Negative values in data passed to PoissonNB"
    ),
    "last family's parameters": "The 'alpha' parameter of PoissonNB must be",
    "middle family's parameters": (
        "The 'min_categories' parameter of CategoricalNB must be"
    ),
    "unknown label": r"The target label\(s\) \['z'\] in y do not exist",
    "wrong classes": "is not the same as on last call to partial_fit",
    "sample_weight": "sample_weight contains negative values",
    "missing value": r"contains missing values \(NaN or None\) in columns \['colour'\]",
    "feature count": "Feature names seen at fit time, yet now missing",
}


@pytest.mark.parametrize("case", FAILURES)
def test_failed_partial_fit_keeps_the_family_estimators(case):
    # The failed call leaves the model as it was (test_invariants): here, its
    # family estimators are those it had, restored, not copies.
    batches = three_batches()
    model = MixedNB(families=FAMILIES)
    model.partial_fit(*batches[0], classes=LABELS)
    model.partial_fit(*batches[1])
    model.predict(batches[0][0])  # tables built; a failed call must keep them
    estimators = dict(model.estimators_)
    args, params = failing_call(case, *batches[2])
    model.set_params(**params)
    with pytest.raises(ValueError, match=FAILURES[case]):
        model.partial_fit(*args)
    assert all(model.estimators_[f] is estimators[f] for f in FAMILIES)


# ---------------------------------------------------------------------------
# Documentation
# ---------------------------------------------------------------------------


def test_docstring_examples():
    failed, attempted = doctest.testmod(_mixed, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failed == 0


# ---------------------------------------------------------------------------
# Real data: UCI Adult, 6 numeric and 8 categorical columns
# ---------------------------------------------------------------------------

ADULT_CATEGORICAL = [c for c in ADULT_COLUMNS[:-1] if c not in ADULT_NUMERIC]
# From the issue: each family alone on the canonical train/test split.
ADULT_CATEGORICAL_ACCURACY = 0.8009
ADULT_GAUSSIAN_ACCURACY = 0.7956


def test_adult_mixed_beats_each_family():
    X_train, y_train = read_adult(require_data("adult/adult.data"))
    # adult.test starts with a comment line.
    X_test, y_test = read_adult(require_data("adult/adult.test"), skiprows=1)
    assert X_train.shape == (32561, 14) and X_test.shape == (16281, 14)
    assert set(y_train) == set(y_test) == {"<=50K", ">50K"}
    assert (X_train[ADULT_CATEGORICAL] == "?").any().sum() == 3

    encoder = OrdinalEncoder().fit(
        pd.concat([X_train[ADULT_CATEGORICAL], X_test[ADULT_CATEGORICAL]])
    )
    categorical = fastnb.CategoricalNB().fit(
        encoder.transform(X_train[ADULT_CATEGORICAL]), y_train
    )
    categorical_accuracy = categorical.score(
        encoder.transform(X_test[ADULT_CATEGORICAL]), y_test
    )
    gaussian = fastnb.GaussianNB().fit(X_train[ADULT_NUMERIC], y_train)
    gaussian_accuracy = gaussian.score(X_test[ADULT_NUMERIC], y_test)
    mixed = MixedNB(
        families={"gaussian": ADULT_NUMERIC, "categorical": ADULT_CATEGORICAL}
    ).fit(X_train, y_train)
    mixed_accuracy = mixed.score(X_test, y_test)
    print(
        f"\nAdult test accuracy: CategoricalNB {categorical_accuracy:.4f}, "
        f"GaussianNB {gaussian_accuracy:.4f}, MixedNB {mixed_accuracy:.4f}"
    )
    assert round(categorical_accuracy, 4) == ADULT_CATEGORICAL_ACCURACY
    assert round(gaussian_accuracy, 4) == ADULT_GAUSSIAN_ACCURACY
    assert mixed_accuracy > max(categorical_accuracy, gaussian_accuracy)
    # MixedNB sums the two models' log-likelihoods with one prior.
    expected = (
        gaussian.predict_joint_log_proba(X_test[ADULT_NUMERIC])
        + categorical.predict_joint_log_proba(
            encoder.transform(X_test[ADULT_CATEGORICAL])
        )
        - categorical.class_log_prior_
    )
    assert_allclose(mixed.predict_joint_log_proba(X_test), expected, rtol=1e-10)


def test_adult_as_pandas_reads_it_fits_with_families_inferred():
    # Issue 54: with "?" as missing and a boolean column, as a newcomer reads
    # the files. pandas gives the numeric columns int64, which were all taken
    # for codes: fnlwgt's (up to 1,484,705) passed max_categories.
    X_train, y_train = read_adult(require_data("adult/adult.data"), na_values="?")
    X_test, y_test = read_adult(
        require_data("adult/adult.test"), skiprows=1, na_values="?"
    )
    for X in (X_train, X_test):
        X["sex"] = X["sex"] == "Male"
    assert (X_train.dtypes == np.int64).sum() == 6 and X_train["sex"].dtype == bool
    assert X_train.isna().any().sum() == 3
    model = MixedNB(missing="ignore").fit(X_train, y_train)
    families = {f: X_train.columns[c].tolist() for f, c in model.families_.items()}
    # education-num's 16 values look like codes; the other integers are numbers.
    numbers = [c for c in ADULT_NUMERIC if c != "education-num"]
    assert families == {
        "gaussian": numbers,
        "categorical": [c for c in X_train.columns if c not in numbers],
    }
    assert model.score(X_test, y_test) >= 0.82


# ---------------------------------------------------------------------------
# Sparse X: families by position, each given its columns sparse
# ---------------------------------------------------------------------------

# Codes, counts, a binary column, counts again and normal values.
SPARSE_FAMILIES = {
    "categorical": [0, 1, 2],
    "multinomial": [3, 4],
    "bernoulli": [5],
    "poisson": [6],
    "gaussian": "remaining",
}


def mostly_zero_columns(n_samples=120, seed=0):
    """X for SPARSE_FAMILIES, about half of it 0; labels; weights."""
    rng = np.random.default_rng(seed)
    index = rng.permutation(np.arange(n_samples) % len(LABELS))
    codes = (index[:, None] + rng.integers(0, 3, (n_samples, 3))) % 4
    counts = rng.poisson(0.6 + 0.4 * index[:, None], (n_samples, 4))
    normal = rng.normal(index[:, None], 1.0, (n_samples, 2))
    X = np.hstack([codes, counts, normal]).astype(np.float64)
    X[rng.random(X.shape) < 0.4] = 0.0
    return X, LABELS[index], rng.uniform(0.2, 3.0, n_samples)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("container", SPARSE)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_sparse_x_fits_as_its_dense_x(weighted, container, index_dtype):
    X, y, w = mostly_zero_columns()
    weights = w if weighted else None
    X_sparse = sparse_with_zeros(X, container, index_dtype)
    ours = MixedNB(families=SPARSE_FAMILIES).fit(X_sparse, y, sample_weight=weights)
    dense = MixedNB(families=SPARSE_FAMILIES).fit(X, y, sample_weight=weights)
    assert_same_state(public_attributes(ours), public_attributes(dense), 1e-12)
    for family, estimator in ours.estimators_.items():
        assert_same_state(
            public_attributes(estimator),
            public_attributes(dense.estimators_[family]),
            1e-12,
            where=family,
        )
    X_new = mostly_zero_columns(40, seed=1)[0]
    X_new[:2, 0] = [7, 4]  # codes never seen
    for X_eval in (X, X_new):
        X_eval_sparse = sparse_with_zeros(X_eval, container, index_dtype, seed=3)
        assert_same_outputs(ours, dense, X_eval_sparse, 1e-12, X_expected=X_eval)


@pytest.mark.parametrize("container", SPARSE)
def test_sparse_partial_fit_in_chunks_equals_dense_fit(container):
    X, y, w = mostly_zero_columns(150, seed=2)
    model = MixedNB(families=SPARSE_FAMILIES)
    for start, stop in [(0, 50), (50, 51), (51, 150)]:
        rows = slice(start, stop)
        model.partial_fit(
            sparse_with_zeros(X[rows], container, seed=start),
            y[rows],
            classes=LABELS,
            sample_weight=w[rows],
        )
    dense = MixedNB(families=SPARSE_FAMILIES).fit(X, y, sample_weight=w)
    assert_same_outputs(model, dense, sp.csr_matrix(X), 1e-10, X_expected=X)


def test_sparse_x_needs_families_by_position():
    X, y, _ = mostly_zero_columns()
    with pytest.raises(ValueError, match="sparse matrix has no column dtypes: pass"):
        MixedNB().fit(sp.csr_matrix(X), y)
    by_name = {"gaussian": ["height"], "multinomial": "remaining"}
    with pytest.raises(ValueError, match="by name, but X has no string column"):
        MixedNB(families=by_name).fit(sp.csc_matrix(X), y)


@pytest.mark.parametrize("container", SPARSE)
def test_sparse_bad_values_are_named_as_for_dense_x(container):
    X, y, _ = mostly_zero_columns()
    bad_code = X.copy()
    bad_code[5, 1] = 1.5
    negative = X.copy()
    negative[7, 4] = -2.0
    for X_bad, message in [
        (bad_code, r"feature 1 has non-integer codes \(1.5 in row 5\)"),
        (negative, "Negative values in data passed to MultinomialNB"),
    ]:
        with pytest.raises(ValueError, match=message):
            MixedNB(families=SPARSE_FAMILIES).fit(X_bad, y)
        with pytest.raises(ValueError, match=message):
            MixedNB(families=SPARSE_FAMILIES).fit(
                sparse_with_zeros(X_bad, container), y
            )
