"""Reading a model: contributions, most informative features, cost decisions.

That contributions add up to the joint log-likelihood, and that 0-1 costs
give predict, are invariants (test_invariants.py). Here: each term against
an independent computation, the cost rule against NumPy, the informative
features against the fitted tables, and the errors.
"""

import builtins

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq
from scipy.special import gammaln
from scipy.stats import norm
from sklearn.datasets import load_iris
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline

import fastnb

from _helpers import CASES, as_container, case_params, scores_tol

ARRAY_CASES = [case for case in CASES if "native" not in case.containers]


def feature_log_likelihoods(model, X, fitted_on=None):
    """log p(X[i, j] | class c), (n_samples, n_features, n_classes), by hand
    from the model's public attributes (dense, numeric X); a KernelDensityNB's
    from the NumPy reference fitted on ``fitted_on``, (X, y, sample_weight)."""
    X = np.asarray(X, dtype=np.float64)
    name = type(model).__name__
    if name == "MixedNB":
        out = np.empty((*X.shape, len(model.classes_)))
        for family, columns in model.families_.items():
            out[:, columns] = feature_log_likelihoods(
                model.estimators_[family], X[:, columns]
            )
        return out
    if name == "GaussianNB":
        return norm.logpdf(X[:, :, None], model.theta_.T, np.sqrt(model.var_.T))
    if name in ("MultinomialNB", "ComplementNB"):
        return X[:, :, None] * model.feature_log_prob_.T
    if name == "BernoulliNB":
        on = (X > (model.binarize or 0.0))[:, :, None]
        log_p = model.feature_log_prob_.T
        return np.where(on, log_p, np.log1p(-np.exp(log_p)))
    if name == "PoissonNB":
        # Counts may be real: log Gamma(x + 1) in place of log x!.
        rate = model.rate_.T
        return X[:, :, None] * np.log(rate) - rate - gammaln(X + 1)[:, :, None]
    if name == "CategoricalNB":
        codes = X.astype(np.intp)
        return np.stack(
            [table.T[codes[:, j]] for j, table in enumerate(model.feature_log_prob_)],
            axis=1,
        )
    assert name == "KernelDensityNB", name
    X_fit, y_fit, w_fit = fitted_on
    oracle = fastnb.reference.KernelDensityNB(**model.get_params()).fit(
        X_fit, y_fit, sample_weight=w_fit
    )
    return np.stack(
        [
            np.stack(
                [
                    oracle._log_density(X[:, j], k, j, oracle.statistics_)
                    for k in range(len(model.classes_))
                ],
                axis=1,
            )
            for j in range(X.shape[1])
        ],
        axis=1,
    )


def count_family(model, j):
    """Whether feature j's terms of a class are taken against a 0."""
    if type(model).__name__ == "MixedNB":
        family = next(f for f, cols in model.families_.items() if j in cols)
        return family in ("multinomial", "bernoulli", "poisson")
    return type(model).__name__ in (
        "MultinomialNB",
        "ComplementNB",
        "BernoulliNB",
        "PoissonNB",
    )


@pytest.mark.parametrize(
    ("case", "dtype", "container"),
    case_params(ARRAY_CASES, containers=("dense_c", "csr"), other_dtypes_in=()),
)
def test_terms_are_hand_computed_log_likelihood_ratios(case, dtype, container):
    X, y, w = case.make(seed=1)
    model = case.estimator().fit(as_container(X, container, dtype), y, sample_weight=w)
    fitted_on = (X, y, w)
    X = X[:12]
    ll = feature_log_likelihoods(model, X, fitted_on)
    zero = feature_log_likelihoods(model, np.zeros((1, X.shape[1])), fitted_on)
    rtol = scores_tol(model, 1e-9)
    atol = rtol * max(1.0, np.abs(ll).max())
    jll = model.predict_joint_log_proba(X)
    # A pair: each feature's log-likelihood ratio, and the prior's ratio.
    pair = model.contributions(as_container(X, container, dtype), classes=("c", "a"))
    pair_terms = pair.terms.toarray() if sp.issparse(pair.terms) else pair.terms
    np.testing.assert_allclose(
        pair_terms, ll[:, :, 2] - ll[:, :, 0], rtol=rtol, atol=atol
    )
    np.testing.assert_allclose(
        pair.intercept + pair_terms.sum(axis=1),
        jll[:, 2] - jll[:, 0],
        rtol=rtol,
        atol=atol,
    )
    # Every class: counts against a 0, the others against their class mean.
    terms, intercept = model.contributions(as_container(X, container, dtype))
    counts = np.array([count_family(model, j) for j in range(X.shape[1])])
    expected = np.where(
        counts[None, :, None], ll - zero, ll - ll.mean(axis=2, keepdims=True)
    )
    np.testing.assert_allclose(terms, expected, rtol=rtol, atol=atol)
    # The intercept holds the rest: the scores less the same number in every
    # class of a row.
    rest = jll - intercept - terms.sum(axis=1)
    np.testing.assert_allclose(rest - rest[:, :1], 0.0, atol=atol * X.shape[1])
    one = model.contributions(as_container(X, container, dtype), classes="b")
    one_terms = one.terms.toarray() if sp.issparse(one.terms) else one.terms
    np.testing.assert_allclose(one_terms, terms[:, :, 1], rtol=1e-12, atol=1e-12)
    assert one.intercept == intercept[1]


def test_iris_row_60_terms_favour_the_class_the_value_favours():
    # The case: petal length 3.5 of row 60 is far likelier for
    # versicolor than for virginica (+5.88 nats), though it is nearer 0.
    X, y = load_iris(return_X_y=True)
    model = fastnb.GaussianNB().fit(X, y)
    terms, intercept = model.contributions(X[[60]], classes=(1, 2))
    mean, sd = model.theta_, np.sqrt(model.var_)
    by_hand = [
        norm.logpdf(X[60, j], mean[1, j], sd[1, j])
        - norm.logpdf(X[60, j], mean[2, j], sd[2, j])
        for j in range(4)
    ]
    np.testing.assert_allclose(terms[0], by_hand, rtol=1e-12)
    assert terms[0, 2] == pytest.approx(5.879, abs=1e-3)
    assert terms[0, 0] == pytest.approx(1.713, abs=1e-3)
    assert intercept == pytest.approx(0.0, abs=1e-12)  # equal priors
    every, _ = model.contributions(X[[60]])
    assert every[0, 2].argmax() == 1  # petal length favours versicolor


def test_kernel_density_terms_are_the_reference_log_densities_about_their_mean():
    rng = np.random.default_rng(4)
    X = np.c_[rng.normal(size=80), rng.gamma(2.0, size=80), rng.normal(3, 2, 80)]
    y = rng.integers(0, 2, 80)
    for algorithm in ("binned", "exact"):
        model = fastnb.KernelDensityNB(algorithm=algorithm).fit(X, y)
        oracle = fastnb.reference.KernelDensityNB(algorithm=algorithm).fit(X, y)
        terms, intercept = model.contributions(X[:10])
        tol = scores_tol(model, 1e-9)
        ll = np.stack(
            [
                np.stack(
                    [
                        oracle._log_density(X[:10, j], k, j, oracle.statistics_)
                        for k in range(2)
                    ],
                    axis=1,
                )
                for j in range(3)
            ],
            axis=1,
        )
        np.testing.assert_allclose(
            terms, ll - ll.mean(axis=2, keepdims=True), rtol=tol, atol=tol
        )
        np.testing.assert_allclose(intercept, np.log(model.class_prior_), rtol=tol)


def test_multinomial_terms_are_counts_times_log_probabilities():
    X, y, _ = CASES[0].make(seed=2)
    model = fastnb.MultinomialNB().fit(X, y)
    terms, intercept = model.contributions(sp.csr_matrix(X), classes="b")
    np.testing.assert_allclose(
        terms.toarray(), X * model.feature_log_prob_[1], rtol=1e-13
    )
    assert intercept == model.class_log_prior_[1]


def test_contributions_of_a_mixed_frame_place_each_family_in_its_columns():
    case = next(case for case in CASES if case.id == "MixedNB-frame")
    X, y, _ = case.make(seed=3)
    model = case.estimator().fit(X, y)
    terms, _ = model.contributions(X.iloc[:5], classes="a")
    # Measurements against their mean over the classes.
    gaussian = model.estimators_["gaussian"]
    frame = X.iloc[:5][["height", "weight"]].to_numpy()
    ll = norm.logpdf(frame[:, :, None], gaussian.theta_.T, np.sqrt(gaussian.var_.T))
    expected = ll[:, :, 0] - ll.mean(axis=2)
    np.testing.assert_allclose(
        terms[["height", "weight"]], expected, rtol=1e-12, atol=1e-12
    )
    # Counts against a 0.
    poisson = model.estimators_["poisson"]
    visits = X.iloc[:5]["visits"].to_numpy()
    expected = visits * np.log(poisson.rate_[0, 0]) - gammaln(visits + 1)
    np.testing.assert_allclose(terms["visits"], expected, rtol=1e-12)


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        ("z", "'z' is not one of the classes"),
        (("a", "z"), "'z' is not one of the classes"),
        (("a", "b", "c"), "one class, or a pair"),
        (1, "1 is not one of the classes"),
    ],
)
def test_contributions_refuse_unknown_classes(classes, message):
    X, y, _ = CASES[0].make()
    model = fastnb.MultinomialNB().fit(X, y)
    with pytest.raises(ValueError, match=message):
        model.contributions(X, classes=classes)


def test_contributions_take_classes_of_any_type():
    X, y, _ = CASES[0].make(labels=[-3, 8, 11])
    model = fastnb.MultinomialNB().fit(X, y)
    jll = model.predict_joint_log_proba(X)
    for label in (8, np.int64(8), 8.0):
        terms, intercept = model.contributions(X, classes=label)
        np.testing.assert_allclose(intercept + terms.sum(axis=1), jll[:, 1])
    with pytest.raises(ValueError, match="'8' is not one of the classes"):
        model.contributions(X, classes="8")
    words = fastnb.MultinomialNB().fit(
        X, np.array(["x", "y", "z"], object)[np.searchsorted(model.classes_, y)]
    )
    terms, intercept = words.contributions(X, classes=("z", "x"))
    jll = words.predict_joint_log_proba(X)
    np.testing.assert_allclose(intercept + terms.sum(axis=1), jll[:, 2] - jll[:, 0])


def test_contributions_refuse_what_predict_refuses():
    X, y, _ = CASES[0].make()
    bad = X.copy()
    bad[7, 3] = np.nan
    for model in (fastnb.MultinomialNB(), fastnb.GaussianNB()):
        model.fit(X, y)
        for container in ("dense_c", "csr"):
            with pytest.raises(ValueError, match="row 7, column 3"):
                model.contributions(as_container(bad, container))
    negative = X.copy()
    negative[4, 1] = -1.0
    with pytest.raises(ValueError, match="Negative values .* row 4, column 1"):
        fastnb.PoissonNB().fit(X, y).contributions(negative)
    codes = np.array([[0, 1], [1, 0], [1, 1]])
    model = fastnb.CategoricalNB().fit(codes, [0, 1, 1])
    for container in ("dense_c", "csr"):
        for code, message in ((1.5, "1.5 in row 2"), (-1, "Negative values")):
            bad_codes = as_container([[0, 1], [1, 0], [1, code]], container)
            with pytest.raises(ValueError, match=message):
                model.predict(bad_codes)
            with pytest.raises(ValueError, match=message):
                model.contributions(bad_codes)
    # A code past a feature's categories is an unseen category, as in predict.
    terms, intercept = model.contributions(np.array([[0, 5]]), classes=(0, 1))
    jll = model.predict_joint_log_proba(np.array([[0, 5]]))
    assert intercept + terms.sum() == pytest.approx(jll[0, 0] - jll[0, 1], rel=1e-12)


def test_contributions_refuse_an_impossible_zero():
    X = np.array([[1, 0], [1, 1], [0, 1]])
    model = fastnb.BernoulliNB(alpha=0.0).fit(X, [0, 0, 1])
    with pytest.raises(ValueError, match="fit with alpha > 0"):
        model.contributions(X)
    model = fastnb.CategoricalNB(alpha=0.0).fit(X, [0, 0, 1])
    with pytest.raises(ValueError, match="fit with alpha > 0"):
        model.contributions(X)


# ---------------------------------------------------------------------------
# Decisions by a cost matrix
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "dtype", "container"),
    case_params(containers=("dense_c", "csr"), other_dtypes_in=()),
)
def test_cost_picks_the_least_expected_cost(case, dtype, container):
    X, y, w = case.make(seed=4)
    X = as_container(X, container, dtype)
    model = case.estimator().fit(X, y, sample_weight=w)
    rng = np.random.default_rng(0)
    cost = rng.uniform(0.0, 5.0, size=(3, 3))
    expected_cost = model.predict_proba(X).astype(np.float64) @ cost
    ordered = np.sort(expected_cost, axis=1)
    clear = ordered[:, 1] - ordered[:, 0] > 1e-9 * ordered[:, 1]
    assert clear.mean() > 0.9
    predicted = model.predict(X, cost=cost)
    assert predicted.dtype == model.classes_.dtype
    np.testing.assert_array_equal(
        predicted[clear], model.classes_[np.argmin(expected_cost, axis=1)][clear]
    )
    # A cost only for missing one class moves predictions towards it.
    towards_c = np.ones((3, 3)) - np.eye(3)
    towards_c[2, :2] = 50.0
    assert (model.predict(X, cost=towards_c) == "c").sum() > (
        model.predict(X) == "c"
    ).sum()


def test_cost_ties_go_to_the_most_probable_then_the_first():
    X = np.array([[4, 0, 0], [0, 4, 0], [0, 0, 4], [2, 2, 1]])
    model = fastnb.MultinomialNB().fit(X, [0, 1, 2, 2])
    # Every class costs the same: the most probable.
    np.testing.assert_array_equal(
        model.predict(X, cost=np.ones((3, 3))), model.predict(X)
    )
    # Class 1 is never best and 0, 2 tie (equal columns): the most
    # probable of them if it is one, else the first.
    cost = np.array([[0.0, 9, 0], [0, 9, 0], [0, 9, 0]])
    np.testing.assert_array_equal(model.predict(X, cost=cost), [0, 0, 2, 2])


@pytest.mark.parametrize(
    ("cost", "message"),
    [
        (np.zeros((2, 2)), "shape \\(n_classes, n_classes\\) = \\(3, 3\\)"),
        (np.zeros(3), "got shape \\(3,\\)"),
        (np.where(np.eye(3), 0, np.nan), "finite"),
        (np.where(np.eye(3), 0, np.inf), "finite"),
        (np.where(np.eye(3), -1.0, 1.0), "non-negative; C\\[0, 0\\] = -1.0"),
        ([["a", "b", "c"]] * 3, "a matrix of numbers"),
    ],
)
def test_cost_is_checked(cost, message):
    X, y, _ = CASES[0].make()
    model = fastnb.MultinomialNB().fit(X, y)
    with pytest.raises(ValueError, match=message):
        model.predict(X, cost=cost)


def test_cost_is_not_changed_and_passes_through_a_pipeline():
    texts = ["cheap pills now", "meeting at noon", "win cash now", "lunch at noon"]
    labels = ["spam", "ham", "spam", "ham"]
    pipe = make_pipeline(CountVectorizer(), fastnb.MultinomialNB()).fit(texts, labels)
    cost = np.array([[0.0, 100.0], [1.0, 0.0]])  # losing a ham costs 100
    kept = cost.copy()
    message = ["cash now at noon now"]
    assert 0.5 < pipe.predict_proba(message)[0, 1] < 100 / 101
    np.testing.assert_array_equal(pipe.predict(message), ["spam"])
    np.testing.assert_array_equal(pipe.predict(message, cost=cost), ["ham"])
    np.testing.assert_array_equal(cost, kept)


def test_cost_with_dense_blocks_of_sparse_gaussian_rows():
    # Sparse rows whose zeros' terms overflow are scored in dense blocks: the
    # cost matrix is read whole by each.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300_000 // 4, 4))
    X[:, 0] += 1e160
    y = rng.integers(0, 3, size=len(X))
    model = fastnb.GaussianNB().fit(X, y)
    X_test = sp.csr_matrix(np.vstack([np.zeros((300_000, 4)), X[:10]]))
    zero_one = 1.0 - np.eye(3)
    np.testing.assert_array_equal(
        model.predict(X_test, cost=zero_one), model.predict(X_test)
    )


# ---------------------------------------------------------------------------
# Most informative features
# ---------------------------------------------------------------------------


def test_most_informative_count_features_are_nltks():
    X, y, _ = CASES[0].make(seed=6)
    model = fastnb.MultinomialNB().fit(X, y)
    table = model.most_informative_features(n=5)
    log_p = model.feature_log_prob_
    spread = log_p.max(axis=0) - log_p.min(axis=0)
    order = np.argsort(-spread, kind="stable")[:5]
    assert list(table["feature"]) == [f"x{j}" for j in order]
    np.testing.assert_allclose(table["ratio"], np.exp(spread[order]), rtol=1e-12)
    np.testing.assert_array_equal(
        table["most_likely"], model.classes_[log_p.argmax(axis=0)[order]]
    )
    np.testing.assert_array_equal(
        table["least_likely"], model.classes_[log_p.argmin(axis=0)[order]]
    )
    assert list(table.columns) == [
        "feature",
        "value",
        "most_likely",
        "least_likely",
        "ratio",
        "log_ratio",
    ]
    assert len(model.most_informative_features(n=None)) == X.shape[1]


def test_most_informative_bernoulli_values_count_absence():
    # Feature 0 is on in every "a" sample and in one "b" sample of four.
    X = np.array([[1, 0], [1, 1], [1, 0], [1, 1], [0, 1], [0, 0], [0, 1], [1, 0]])
    y = ["a"] * 4 + ["b"] * 4
    model = fastnb.BernoulliNB().fit(X, y)
    table = model.most_informative_features(feature_names=["f", "g"])
    # P(absent | b) = 4/6, P(absent | a) = 1/6: absence is the strong value.
    assert table.loc[0, "feature"] == "f" and table.loc[0, "value"] == 0
    assert table.loc[0, "most_likely"] == "b"
    assert table.loc[0, "ratio"] == pytest.approx(4.0)


def test_most_informative_categories():
    case = next(case for case in CASES if case.id == "CategoricalNB-strings")
    X, y, _ = case.make(seed=7)
    model = case.estimator().fit(X, y)
    table = model.most_informative_features(n=None)
    for row in table.itertuples():
        j = int(row.feature[1:])
        k = list(model.categories_[j]).index(row.value)
        log_p = model.feature_log_prob_[j]
        spread = log_p.max(axis=0) - log_p.min(axis=0)
        assert row.log_ratio == pytest.approx(spread.max(), rel=1e-12)
        assert spread[k] == spread.max()


def deciles_by_hand(mean, sd, share):
    """The cut points of a Gaussian mixture's ten shares of equal mass."""
    cdf = lambda x: (share * norm.cdf(x, mean, sd)).sum()  # noqa: E731
    low, high = (mean - 10 * sd).min(), (mean + 10 * sd).max()
    return np.array(
        [brentq(lambda x, q=q: cdf(x) - q / 10, low, high) for q in range(1, 10)]
    )


def test_most_informative_gaussian_values_are_smoothed_deciles():
    # Each feature is ranked as CategoricalNB (alpha=1) would rank it cut at
    # the deciles of the fitted mixture: computed here with scipy's normal
    # distribution and a root finder.
    rng = np.random.default_rng(9)
    X = np.r_[
        rng.normal([0.0, 5.0], [1.0, 3.0], (30, 2)),
        rng.normal([3.0, 5.5], [0.5, 1.0], (20, 2)),
    ]
    y = np.r_[np.zeros(30), np.ones(20)]
    model = fastnb.GaussianNB().fit(X, y)
    table = model.most_informative_features()
    share, count = model.class_prior_, model.class_count_
    for row in table.itertuples():
        j = int(row.feature[1:])
        mean, sd = model.theta_[:, j], np.sqrt(model.var_[:, j])
        edges = np.r_[-np.inf, deciles_by_hand(mean, sd, share), np.inf]
        mass = np.diff(norm.cdf(edges[:, None], mean, sd), axis=0)  # (10, classes)
        log_p = np.log((count * mass + 1) / (count + 10))
        spread = log_p.max(axis=1) - log_p.min(axis=1)
        best = spread.argmax()
        # The grid puts each cut within a 2049th of the range it reads.
        step = 10 * (mean + 5 * sd).max() / 2048
        assert row.value[0] == pytest.approx(edges[best], abs=step)
        assert row.value[1] == pytest.approx(edges[best + 1], abs=step)
        assert row.log_ratio == pytest.approx(spread[best], rel=0.02)
        assert row.most_likely == model.classes_[log_p[best].argmax()]
    # Feature 0 separates the classes; feature 1 hardly.
    assert list(table["feature"]) == ["x0", "x1"]
    # No ratio past what the smoothing allows: (n_c + 1) / 1 over n_c + 10.
    assert table["ratio"].max() < (count.max() + 1) * (count.max() + 10) / (
        count.min() + 10
    )


def test_continuous_and_categorical_ratios_share_one_scale():
    # A measurement with two classes far apart in its tails, beside a
    # category that separates them well: the category ranks first, and the
    # measurement's ratio is no tail's.
    rng = np.random.default_rng(3)
    n = 200
    y = np.arange(n) % 2
    colour = np.where(rng.random(n) < 0.97, y, 1 - y)
    wide = rng.normal(0.0, np.where(y == 0, 1.0, 6.0))
    frame = pd.DataFrame({"colour": colour.astype(str), "size": wide})
    model = fastnb.MixedNB().fit(frame, y)
    table = model.most_informative_features()
    assert table.loc[0, "feature"] == "colour"
    assert table.set_index("feature").loc["size", "ratio"] < 100


def test_kernel_density_values_are_binned_as_gaussian_ones():
    rng = np.random.default_rng(4)
    X = np.c_[rng.normal(size=300), rng.normal(size=300)]
    y = np.arange(300) % 2
    X[y == 1, 0] += 3.0
    model = fastnb.KernelDensityNB().fit(X, y)
    table = model.most_informative_features()
    assert list(table["feature"]) == ["x0", "x1"]
    first = table.iloc[0]
    assert len(first["value"]) == 2 and first["value"][0] < first["value"][1]
    # A bin all of one class: about a fifth of the class's weight in it.
    assert 20 < first["ratio"] < 151 + 10


def test_most_informative_features_take_names(monkeypatch):
    texts = ["cheap pills now", "meeting at noon", "win cash now", "lunch at noon"]
    vectorizer = CountVectorizer()
    model = fastnb.MultinomialNB().fit(
        vectorizer.fit_transform(texts), ["spam", "ham", "spam", "ham"]
    )
    table = model.most_informative_features(n=2, feature_names=vectorizer)
    assert set(table["feature"]) <= set(vectorizer.get_feature_names_out())
    assert table.loc[0, "feature"] in ("at", "noon")
    with pytest.raises(ValueError, match="name the model's 9 features; got 2"):
        model.most_informative_features(feature_names=["a", "b"])
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        model.most_informative_features(n=-1)
    frame = pd.DataFrame({"height": [1.0, 2.0, 5.0, 6.0], "age": [3.0, 1.0, 2.0, 9.0]})
    gaussian = fastnb.GaussianNB().fit(frame, [0, 0, 1, 1])
    assert set(gaussian.most_informative_features()["feature"]) == {"height", "age"}
    # Without pandas, a list of named tuples.
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("no pandas")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    rows = model.most_informative_features(n=2, feature_names=vectorizer)
    assert [row.feature for row in rows] == list(table["feature"])
    assert rows[0]._fields[:4] == ("feature", "value", "most_likely", "least_likely")


def test_most_informative_features_of_mixed_columns():
    case = next(case for case in CASES if case.id == "MixedNB-frame")
    X, y, _ = case.make(seed=8)
    model = case.estimator().fit(X, y)
    table = model.most_informative_features(n=None)
    assert sorted(table["feature"]) == sorted(X.columns)
    colour = table.set_index("feature").loc["colour"]
    assert colour["value"] in model.estimators_["categorical"].categories_[0]


def test_docstring_examples():
    import doctest

    from fastnb import _base

    failed, attempted = doctest.testmod(_base, optionflags=doctest.ELLIPSIS)
    assert attempted and not failed


# ---------------------------------------------------------------------------
# A DataFrame's terms, named
# ---------------------------------------------------------------------------


def test_terms_of_a_dataframe_are_named_by_its_columns():
    # Issue 54: a frame's column names belong with its terms; an array's
    # terms stay arrays.
    X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 0, 4], [0, 1, 2]])
    y = np.array(["ham", "ham", "spam", "spam", "spam"])
    frame = pd.DataFrame(X, columns=["free", "lunch", "call"], index=list("pqrst"))
    named = fastnb.MultinomialNB().fit(frame, y)
    plain = fastnb.MultinomialNB().fit(X, y)
    for classes in ("spam", ("spam", "ham")):
        terms, intercept = named.contributions(frame, classes=classes)
        expected, expected_intercept = plain.contributions(X, classes=classes)
        assert isinstance(expected, np.ndarray)
        assert isinstance(terms, pd.DataFrame)
        assert terms.columns.tolist() == ["free", "lunch", "call"]
        assert terms.index.tolist() == list("pqrst")
        np.testing.assert_array_equal(terms.to_numpy(), expected)
        assert intercept == expected_intercept
    # Every class: a column a class and feature, terms["spam"] the class's.
    terms, intercept = named.contributions(frame)
    expected, expected_intercept = plain.contributions(X)
    assert terms.columns.names == ["class", "feature"]
    assert terms.columns.tolist() == [
        (c, f) for c in ("ham", "spam") for f in ("free", "lunch", "call")
    ]
    for k, c in enumerate(("ham", "spam")):
        np.testing.assert_array_equal(terms[c].to_numpy(), expected[:, :, k])
        assert terms[c].columns.tolist() == ["free", "lunch", "call"]
        assert intercept[c] == expected_intercept[k]
    np.testing.assert_allclose(
        intercept["spam"] + terms["spam"].sum(axis=1),
        named.predict_joint_log_proba(frame)[:, 1],
        rtol=1e-12,
    )


def test_terms_of_a_mixed_or_sparse_dataframe_are_named():
    rng = np.random.default_rng(5)
    y = np.arange(60) % 2
    frame = pd.DataFrame(
        {
            "height": rng.normal(170 + 5 * y, 6),
            "colour": np.array(["red", "blue"])[(y + (rng.random(60) < 0.2)) % 2],
        }
    )
    model = fastnb.MixedNB().fit(frame, y)
    terms, _ = model.contributions(frame.iloc[:3], classes=(1, 0))
    assert terms.columns.tolist() == ["height", "colour"]
    assert terms.index.tolist() == [0, 1, 2]
    # A frame of sparse columns: its terms a frame of sparse columns.
    X = sp.random(20, 4, density=0.4, random_state=0, format="csr") * 5
    sparse_frame = pd.DataFrame.sparse.from_spmatrix(X, columns=list("abcd"))
    labels = np.arange(20) % 2
    model = fastnb.MultinomialNB().fit(sparse_frame, labels)
    terms, _ = model.contributions(sparse_frame, classes=1)
    expected, _ = fastnb.MultinomialNB().fit(X, labels).contributions(X, classes=1)
    assert all(isinstance(dtype, pd.SparseDtype) for dtype in terms.dtypes)
    assert terms.columns.tolist() == list("abcd")
    np.testing.assert_array_equal(terms.to_numpy(), expected.toarray())
