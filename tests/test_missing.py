"""missing="ignore": a NaN in X is a missing value, left out of its feature's
statistics in fit and of its feature's term in scoring.

The oracle is the textbook formula of each family over a row's observed
features only, from the fitted public attributes ("drop the missing
features row by row"); and, for fitting, a missing="error" fit of each
feature on the rows where it was observed. Each family's own file tests
what only it has (categories, variances, densities).
"""

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import gammaln

import fastnb
from fastnb import reference

from _helpers import as_container

RTOL = 1e-10


def with_missing(X, share=0.2, seed=1):
    """X (float64) with about ``share`` of its values made NaN."""
    X = np.array(X, dtype=np.float64)
    X[np.random.default_rng(seed).random(X.shape) < share] = np.nan
    return X


def count_data(n_samples=240, n_features=7, n_classes=3, seed=0):
    """Counts with classes of different rates, some values missing."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n_samples)
    rates = rng.uniform(0.3, 4.0, (n_classes, n_features))
    return with_missing(rng.poisson(rates[y]), seed=seed + 1), y


def log_prior(model):
    return np.log(model.class_count_ / model.class_count_.sum())


# Each family's terms of each row over its observed features only, from
# the fitted attributes: X -> (n_samples, n_classes); the joint
# log-likelihood adds the log prior (but ComplementNB's, which has none).
def multinomial_terms(model, X):
    return np.nan_to_num(X) @ model.feature_log_prob_.T


def bernoulli_terms(model, X):
    log_p = model.feature_log_prob_
    log_absent = np.log1p(-np.exp(log_p))
    seen = ~np.isnan(X)
    on = (np.nan_to_num(X) > model.binarize) & seen
    off = ~on & seen
    return on @ log_p.T + off @ log_absent.T


def poisson_terms(model, X):
    seen = ~np.isnan(X)
    x = np.nan_to_num(X)
    rate = model.rate_
    return x @ np.log(rate).T - seen @ rate.T - gammaln(x + 1).sum(axis=1)[:, None]


def gaussian_terms(model, X):
    seen = ~np.isnan(X)
    x = np.nan_to_num(X)[:, None, :]
    density = -0.5 * (
        np.log(2 * np.pi * model.var_) + (x - model.theta_) ** 2 / model.var_
    )
    return np.where(seen[:, None, :], density, 0.0).sum(axis=2)


def categorical_terms(model, X):
    terms = np.zeros((X.shape[0], len(model.classes_)))
    for j, categories in enumerate(model.categories_):
        for i, value in enumerate(X[:, j]):
            if value is not None and value == value:
                code = list(categories).index(value)
                terms[i] += model.feature_log_prob_[j][:, code]
    return terms


FAMILIES = {
    "MultinomialNB": multinomial_terms,
    "ComplementNB": multinomial_terms,
    "BernoulliNB": bernoulli_terms,
    "PoissonNB": poisson_terms,
}


def family_jll(name, model, X):
    """The joint log-likelihood the family's model gives X, by its formula."""
    terms = FAMILIES[name](model, X)
    return terms if name == "ComplementNB" else log_prior(model) + terms


# The families whose statistics are sums: a missing value is a 0.
SUMS = ("MultinomialNB", "ComplementNB")
# The families whose parameters are per sample: each feature's come from the
# rows where it was seen.
PER_SAMPLE = {
    "BernoulliNB": "feature_log_prob_",
    "PoissonNB": "rate_",
}


def ignoring(name, **params):
    return getattr(fastnb, name)(missing="ignore", **params)


@pytest.mark.parametrize("name", FAMILIES)
def test_nan_is_refused_unless_ignored(name):
    X, y = count_data()
    with pytest.raises(ValueError, match="Input X contains NaN.*missing='ignore'"):
        getattr(fastnb, name)().fit(X, y)
    model = ignoring(name).fit(X, y)
    assert np.isfinite(model.predict_joint_log_proba(X)).all()


REFUSED = [
    (name, bad)
    for name in FAMILIES
    for bad in (np.inf, -np.inf, -1.0)
    # BernoulliNB takes any finite value.
    if not (bad == -1.0 and name == "BernoulliNB")
]


@pytest.mark.parametrize(("name", "bad"), REFUSED)
def test_ignoring_still_refuses_infinity_and_negative_counts(name, bad):
    X, y = count_data()
    X[5, 2] = bad
    model = ignoring(name).fit(*count_data())
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="row 5, column 2"):
        model.partial_fit(X, y)
    assert pickle.dumps(model) == before
    # Scoring refuses negative counts only where they have no probability.
    if bad != -1.0 or name == "PoissonNB":
        with pytest.raises(ValueError, match="row 5, column 2"):
            model.predict(X)


@pytest.mark.parametrize("container", ["dense_c", "dense_f", "csr", "csc"])
@pytest.mark.parametrize("name", FAMILIES)
def test_scores_leave_out_the_missing_features(name, container):
    X, y = count_data()
    model = ignoring(name).fit(as_container(X, container), y)
    expected = family_jll(name, model, X)
    for scored in ("dense_c", "csr"):
        actual = model.predict_joint_log_proba(as_container(X, scored))
        assert_allclose(actual, expected, rtol=RTOL, atol=1e-9)


@pytest.mark.parametrize("name", FAMILIES)
def test_a_row_with_every_value_missing_scores_its_intercept(name):
    X, y = count_data()
    model = ignoring(name).fit(X, y)
    blank = np.full((1, X.shape[1]), np.nan)
    expected = np.zeros(3) if name == "ComplementNB" else log_prior(model)
    assert_allclose(model.predict_joint_log_proba(blank)[0], expected, rtol=RTOL)


@pytest.mark.parametrize("name", SUMS)
def test_sum_families_count_a_missing_value_as_zero(name):
    X, y = count_data()
    model = ignoring(name).fit(X, y)
    zeros = getattr(fastnb, name)().fit(np.nan_to_num(X), y)
    assert_array_equal(model.feature_count_, zeros.feature_count_)
    assert_array_equal(model.feature_log_prob_, zeros.feature_log_prob_)
    assert set(model._statistics) == {"class_count", "feature_count"}


@pytest.mark.parametrize("name", PER_SAMPLE)
def test_each_feature_is_fitted_on_the_rows_where_it_was_seen(name):
    X, y = count_data()
    model = ignoring(name).fit(X, y)
    attribute = PER_SAMPLE[name]
    params = {"alpha": 0.7}
    model = ignoring(name, **params).fit(X, y)
    for j in range(X.shape[1]):
        seen = ~np.isnan(X[:, j])
        alone = getattr(fastnb, name)(**params).fit(X[seen][:, [j]], y[seen])
        assert_allclose(
            getattr(model, attribute)[:, j],
            getattr(alone, attribute)[:, 0],
            rtol=RTOL,
        )
        assert_allclose(
            model._statistics["class_count"] - model._statistics["missing_count"][:, j],
            alone.class_count_,
            rtol=RTOL,
        )


@pytest.mark.parametrize("name", FAMILIES)
def test_partial_fit_in_parts_merge_and_weights_agree_with_one_fit(name):
    X, y = count_data()
    whole = ignoring(name).fit(X, y)
    parts = ignoring(name)
    for rows in np.array_split(np.arange(len(y)), 3):
        parts.partial_fit(X[rows], y[rows], classes=[0, 1, 2])
    merged = fastnb.merge(
        [ignoring(name).fit(X[:100], y[:100]), ignoring(name).fit(X[100:], y[100:])]
    )
    for model in (parts, merged):
        for key, value in whole._statistics.items():
            assert_allclose(model._statistics[key], value, rtol=RTOL)
        assert_allclose(
            model.predict_joint_log_proba(X),
            whole.predict_joint_log_proba(X),
            rtol=RTOL,
        )
    # An integer weight counts as that many copies of the row.
    weights = np.random.default_rng(3).integers(0, 4, len(y))
    weighted = ignoring(name).fit(X, y, sample_weight=weights)
    repeated = ignoring(name).fit(np.repeat(X, weights, axis=0), np.repeat(y, weights))
    for key, value in repeated._statistics.items():
        assert_allclose(weighted._statistics[key], value, rtol=RTOL)


@pytest.mark.parametrize("name", FAMILIES)
def test_float32_input_has_its_missing_values_too(name):
    X, y = count_data()
    model = ignoring(name).fit(X.astype(np.float32), y)
    expected = ignoring(name).fit(X, y).predict_proba(X)
    proba = model.predict_proba(X.astype(np.float32))
    assert_allclose(proba, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", FAMILIES)
def test_contributions_of_a_missing_value_keep_the_sum(name):
    X, y = count_data()
    model = ignoring(name).fit(X, y)
    for container in ("dense_c", "csr"):
        terms, intercept = model.contributions(as_container(X, container))
        if sp.issparse(terms[0]) if isinstance(terms, list) else False:
            terms = np.stack([matrix.toarray() for matrix in terms], axis=2)
        total = np.asarray(terms).sum(axis=1) + intercept
        assert_allclose(total, model.predict_joint_log_proba(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", FAMILIES)
def test_the_reference_agrees(name):
    X, y = count_data()
    model = ignoring(name).fit(X, y)
    oracle = getattr(reference, name)(missing="ignore").fit(X, y)
    assert_allclose(
        model.predict_joint_log_proba(X), oracle.predict_joint_log_proba(X), rtol=RTOL
    )


@pytest.mark.parametrize("name", FAMILIES)
def test_model_files_and_pickles_keep_the_missing_counts(name, tmp_path):
    X, y = count_data()
    model = ignoring(name).fit(X, y)
    fastnb.save(model, tmp_path / "model.fnb")
    for copy in (
        fastnb.load(tmp_path / "model.fnb"),
        pickle.loads(pickle.dumps(model)),
    ):
        assert copy.missing == "ignore"
        assert copy._statistics.keys() == model._statistics.keys()
        assert_array_equal(
            copy.predict_joint_log_proba(X), model.predict_joint_log_proba(X)
        )


@pytest.mark.parametrize("name", PER_SAMPLE)
def test_from_state_checks_the_missing_counts(name):
    X, y = count_data()
    state = fastnb.get_state(ignoring(name).fit(X, y))

    def edited(**changes):
        return fastnb.ModelState(**{**state.__dict__, **changes})

    statistics = state.statistics
    negative = {**statistics, "missing_count": -statistics["missing_count"] - 1}
    too_many = {**statistics, "missing_count": statistics["missing_count"] + 1e6}
    absent = {k: v for k, v in statistics.items() if k != "missing_count"}
    for bad, message in [
        (negative, "negative"),
        (too_many, "more than class_count"),
        (absent, "'missing_count' is lacking"),
    ]:
        with pytest.raises(ValueError, match=message):
            fastnb.from_state(edited(statistics=bad))
    with pytest.raises(ValueError, match="'missing_count' is not one of them"):
        fastnb.from_state(edited(params={**state.params, "missing": "error"}))


def test_bernoulli_certain_features_need_only_the_values_seen():
    # Unsmoothed, feature 0 is on in every sample of class 0: a row of class
    # 0 without it is impossible, but a row missing it is not.
    X = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1], [1, 0, 0]], dtype=float)
    y = np.array([0, 0, 1, 1])
    model = ignoring("BernoulliNB", alpha=0.0, force_alpha=True).fit(X, y)
    rows = np.array([[0, 1, 0], [np.nan, 1, 0]])
    jll = model.predict_joint_log_proba(rows)
    assert jll[0, 0] == -np.inf
    assert np.isfinite(jll[1, 0])


# ---------------------------------------------------------------------------
# MixedNB: each family's estimator leaves its own columns' missing values out
# ---------------------------------------------------------------------------

MIXED_FAMILIES = {
    "gaussian": ["height"],
    "categorical": ["colour"],
    "bernoulli": ["member"],
    "poisson": ["visits"],
}


def mixed_frame(n_samples=300, seed=0):
    """A DataFrame of four kinds of column, each with missing values (NaN,
    None among the strings), and labels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n_samples)
    frame = pd.DataFrame(
        {
            "height": rng.normal(170 + 8 * y, 7),
            "colour": np.array(["red", "green", "blue"], dtype=object)[
                (rng.integers(0, 2, n_samples) + y) % 3
            ],
            "member": (rng.random(n_samples) < 0.3 + 0.4 * y).astype(float),
            "visits": rng.poisson(1 + 2 * y).astype(float),
        }
    )
    for column in frame:
        holes = rng.random(n_samples) < 0.2
        frame.loc[holes, column] = None if column == "colour" else np.nan
    return frame, y


def test_mixed_scores_leave_out_the_missing_values():
    X, y = mixed_frame()
    with pytest.raises(ValueError, match=r"in columns \['height', 'colour'.*'ignore'"):
        fastnb.MixedNB(families=MIXED_FAMILIES).fit(X, y)
    model = fastnb.MixedNB(families=MIXED_FAMILIES, missing="ignore").fit(X, y)
    assert all(e.missing == "ignore" for e in model.estimators_.values())
    estimators = model.estimators_
    expected = (
        model.class_log_prior_
        + gaussian_terms(estimators["gaussian"], X[["height"]].to_numpy())
        + categorical_terms(estimators["categorical"], X[["colour"]].to_numpy())
        + bernoulli_terms(estimators["bernoulli"], X[["member"]].to_numpy())
        + poisson_terms(estimators["poisson"], X[["visits"]].to_numpy())
    )
    assert_allclose(model.predict_joint_log_proba(X), expected, rtol=RTOL)
    # Each family's estimator is fitted as that family alone would be.
    alone = fastnb.GaussianNB(missing="ignore").fit(X[["height"]].to_numpy(), y)
    assert_allclose(estimators["gaussian"].theta_, alone.theta_, rtol=RTOL)


def test_mixed_partial_fit_and_merge_agree_with_one_fit():
    X, y = mixed_frame()
    params = {"families": MIXED_FAMILIES, "missing": "ignore"}
    whole = fastnb.MixedNB(**params).fit(X, y)
    parts = fastnb.MixedNB(**params)
    for rows in np.array_split(np.arange(len(y)), 3):
        parts.partial_fit(X.iloc[rows], y[rows], classes=[0, 1])
    halves = [
        fastnb.MixedNB(**params).fit(X.iloc[rows], y[rows])
        for rows in (slice(0, 150), slice(150, None))
    ]
    expected = whole.predict_joint_log_proba(X)
    for model in (parts, fastnb.merge(halves)):
        assert_allclose(model.predict_joint_log_proba(X), expected, rtol=1e-9)


def test_mixed_sets_missing_for_every_family():
    X, y = mixed_frame()
    model = fastnb.MixedNB(
        families=MIXED_FAMILIES, missing="ignore", gaussian_params={"missing": "error"}
    )
    with pytest.raises(ValueError, match="gaussian_params sets 'missing'"):
        model.fit(X, y)
