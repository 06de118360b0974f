"""KernelDensityNB: what is particular to kernel densities.

The oracle is scipy.stats.gaussian_kde, fitted on each class's values of one
feature with the same weights and bandwidth: binned log densities within
1e-3 where the density is not in its far tails, exact ones within 1e-9
everywhere. (The invariants of every estimator, and the NumPy reference,
are in test_invariants.py, test_state.py and test_against_reference.py.)
"""

import doctest

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import gaussian_kde

import fastnb
from fastnb import KernelDensityNB, _kde, from_state, get_state
from fastnb._state import ModelState

from _helpers import scores_tol

LABELS = np.array(["a", "b"])


def skewed_data(seed=0, n_samples=600):
    """Two classes of one feature each kind: normal, skewed, bimodal."""
    rng = np.random.default_rng(seed)
    y = LABELS[rng.permutation(np.arange(n_samples) % 2)]
    b = y == "b"
    normal = rng.normal(np.where(b, 1.0, -1.0), 1.0)
    skewed = rng.gamma(np.where(b, 1.0, 3.0), 2.0)
    side = rng.choice([-3.0, 3.0], size=n_samples)
    bimodal = np.where(b, rng.normal(side, 0.6), rng.normal(0.0, 1.5, n_samples))
    return (
        np.column_stack([normal, skewed, bimodal]),
        y,
        rng.uniform(0.2, 3.0, n_samples),
    )


def scipy_kdes(X, y, weights, model):
    """gaussian_kde of each class and feature with the model's bandwidths."""
    kdes = {}
    for k, label in enumerate(model.classes_):
        rows = y == label
        w = None if weights is None else weights[rows]
        for j in range(X.shape[1]):
            kde = gaussian_kde(X[rows, j], weights=w)
            # bw_method is a factor of the data's standard deviation.
            kde.set_bandwidth(
                model.bandwidth_[k, j] / np.sqrt(kde._data_covariance[0, 0])
            )
            kdes[k, j] = kde
    return kdes


def log_densities(model, X):
    """log f_kj(x) of each row, class and feature: (n_samples, n_classes,
    n_features), from one-feature views of the model's joint log-likelihood."""
    jll = np.empty((X.shape[0], len(model.classes_), X.shape[1]))
    state = get_state(model)
    for j in range(X.shape[1]):
        one = from_state(feature_state(state, j))
        jll[:, :, j] = one.predict_joint_log_proba(X[:, [j]]) - np.log(one.class_prior_)
    return jll


def feature_state(state, j):
    """The state of the model of feature j alone (its statistics' columns)."""
    statistics = dict(state.statistics)
    n_features = state.n_features_in
    for key in ("mean", "ssd"):
        statistics[key] = statistics[key][:, [j]]
    for key in ("low", "high"):
        statistics[key] = statistics[key][[j]]
    if "grid" in statistics:
        n_grid = statistics["grid"].shape[1] // n_features
        statistics["grid"] = statistics["grid"][:, j * n_grid : (j + 1) * n_grid]
    else:
        statistics["points"] = statistics["points"][:, [j]]
        statistics["points"], statistics["point_weight"] = _kde.canonical_order(
            statistics["points"], statistics["point_weight"]
        )
    params = dict(state.params)
    if not isinstance(params["bandwidth"], str):
        params["bandwidth"] = np.broadcast_to(params["bandwidth"], n_features)[j]
    return ModelState("KernelDensityNB", params, state.classes, 1, None, statistics)


def evaluation_points(X, model):
    """Values of each feature across its data, reaching two bandwidths out."""
    reach = 2 * model.bandwidth_.max(axis=0)
    return np.linspace(X.min(axis=0) - reach, X.max(axis=0) + reach, 301)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"bandwidth": "silverman", "adjust": 0.7},
        {"bandwidth": [0.3, 0.8, 0.4]},
    ],
    ids=["scott", "silverman-adjust", "per-feature"],
)
def test_binned_log_densities_match_gaussian_kde(params, weighted):
    # The grid's step is within about 1/16 of the least bandwidth here.
    X, y, weights = skewed_data()
    weights = weights if weighted else None
    model = KernelDensityNB(n_grid=2048, **params).fit(X, y, sample_weight=weights)
    kdes = scipy_kdes(X, y, weights, model)
    points = evaluation_points(X, model)
    ours = log_densities(model, points)
    for (k, j), kde in kdes.items():
        expected = kde.logpdf(points[:, j])
        # Where the density is within e**-8 of its peak: beyond, the binning
        # error grows as ((x - nearest sample) step / h**2)**2 (relative
        # error in the density, not its log, stays small).
        shown = expected > expected.max() - 8
        assert_allclose(ours[shown, k, j], expected[shown], rtol=0, atol=1e-3)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("bandwidth", ["scott", "silverman", 0.4])
def test_exact_log_densities_match_gaussian_kde(bandwidth, weighted):
    X, y, weights = skewed_data(n_samples=200)
    weights = weights if weighted else None
    model = KernelDensityNB(algorithm="exact", bandwidth=bandwidth, adjust=1.3)
    model.fit(X, y, sample_weight=weights)
    kdes = scipy_kdes(X, y, weights, model)
    # Far into the tails too.
    points = np.linspace(X.min(axis=0) - 10, X.max(axis=0) + 10, 101)
    ours = log_densities(model, points)
    for (k, j), kde in kdes.items():
        assert_allclose(ours[:, k, j], kde.logpdf(points[:, j]), rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("rule", ["scott", "silverman"])
def test_bandwidth_rules_are_gaussian_kde_s(rule, weighted):
    X, y, weights = skewed_data()
    weights = weights if weighted else None
    model = KernelDensityNB(bandwidth=rule, adjust=1.7).fit(X, y, sample_weight=weights)
    for k, label in enumerate(model.classes_):
        rows = y == label
        for j in range(X.shape[1]):
            kde = gaussian_kde(
                X[rows, j],
                bw_method=rule,
                weights=None if weights is None else weights[rows],
            )
            assert_allclose(
                model.bandwidth_[k, j], 1.7 * np.sqrt(kde.covariance[0, 0]), rtol=1e-12
            )


def test_a_degenerate_class_takes_the_feature_s_spread():
    # A class of one sample, and a feature constant in a class: the rule's
    # sigma is the feature's over all classes; constant everywhere, 1.
    X = np.array([[0.0, 5.0, 2.0], [1.0, 5.0, 2.0], [3.0, 7.0, 2.0], [9.0, 1.0, 2.0]])
    y = np.array(["a", "a", "a", "b"])
    model = KernelDensityNB().fit(X, y)
    overall = X.std(axis=0, ddof=1)
    a_sigma = X[:3].std(axis=0, ddof=1)
    n_a = 3**-0.2
    assert_allclose(
        model.bandwidth_[0, :2],
        n_a * np.where(a_sigma[:2] > 0, a_sigma[:2], overall[:2]),
    )
    assert_allclose(model.bandwidth_[1, :2], overall[:2])
    assert_array_equal(model.bandwidth_[:, 2], [n_a, 1.0])
    assert np.isfinite(model.predict_joint_log_proba(X + 100)).all()


def test_far_values_score_as_the_gaussian_tail_of_the_nearest_mass():
    # Beyond the table the log density goes on as one Gaussian: continuous
    # at the table's end, finite however far, falling as -x**2 / 2h**2.
    X, y, _ = skewed_data()
    model = KernelDensityNB().fit(X[:, :1], y)
    h = model.bandwidth_[:, 0]
    far = np.array([[1e3], [1e4], [-1e5]])
    jll = model.predict_joint_log_proba(far)
    assert np.isfinite(jll).all()
    slope = (jll[1] - jll[0]) / (far[1, 0] ** 2 - far[0, 0] ** 2)
    assert_allclose(slope, -0.5 / h**2, rtol=1e-2)
    scoring = model._final_tables()[1]
    end = (scoring.origin[0] + scoring.n_points[0] - 1) / scoring.inv_step[0]
    edge = model.predict_joint_log_proba([[end - 1e-9], [end + 1e-9]])
    # (The slope there is about PAD / h: 2e-9 apart, a few 1e-8.)
    assert_allclose(edge[0], edge[1], rtol=0, atol=1e-6)


def test_partial_fit_far_beyond_the_first_range_equals_fit():
    # A second batch a million times wider: the grid's step grows by 2**20,
    # the first batch's masses move onto it exactly.
    rng = np.random.default_rng(5)
    first = rng.normal(size=(100, 2))
    second = rng.normal(scale=1e6, size=(100, 2))
    y = np.tile(LABELS, 100)
    model = KernelDensityNB().partial_fit(first, y[:100], classes=LABELS)
    model.partial_fit(second, y[100:])
    whole = KernelDensityNB().fit(np.vstack([first, second]), y)
    got, expected = get_state(model).statistics, get_state(whole).statistics
    for key in ("grid", "low", "high", "class_count"):
        assert_allclose(got[key], expected[key], rtol=1e-12, atol=1e-12, err_msg=key)
    X = np.vstack([first, second])
    assert_allclose(
        model.predict_joint_log_proba(X), whole.predict_joint_log_proba(X), rtol=1e-12
    )


def test_lattice_is_the_least_power_of_two_step():
    low, high = np.array([0.0, -3.0, 5.0, 0.0]), np.array([10.0, 1e6, 5.0, 0.0])
    step, origin, n_points = _kde.lattice(low, high, 64)
    assert (n_points <= 64).all()
    assert_array_equal(np.log2(step), np.round(np.log2(step)))
    # Halving the step would need more than 64 points (or indices beyond 2**50).
    half = step / 2
    wider = np.ceil(high / half) - np.floor(low / half) + 1
    big = np.maximum(np.ceil(high / half), -np.floor(low / half)) > _kde.MAX_INDEX
    assert ((wider > 64) | big | (np.log2(step) == _kde.MIN_EXPONENT)).all()
    assert (origin * step <= low).all() and (
        (origin + n_points - 1) * step >= high
    ).all()


def test_float32_input_stays_float32():
    X, y, _ = skewed_data()
    model = KernelDensityNB().fit(X.astype(np.float32), y)
    assert model.bandwidth_.dtype == model.class_prior_.dtype == np.float32
    assert model.predict_proba(X.astype(np.float32)).dtype == np.float32
    assert model.predict_proba(X).dtype == np.float64


def test_sparse_input_is_refused():
    import scipy.sparse as sp

    X, y, _ = skewed_data()
    with pytest.raises(TypeError, match="dense data is required"):
        KernelDensityNB().fit(sp.csr_matrix(X), y)


@pytest.mark.parametrize(
    ("algorithm", "change", "message"),
    [
        ("binned", lambda s: {"grid": s["grid"] * 1.5}, "does not add up"),
        ("binned", lambda s: {"low": s["low"] + 0.5}, "grid|mean"),
        ("binned", lambda s: {"weight_squares": s["class_count"] ** 2 * 2}, "exceeds"),
        ("exact", lambda s: {"points": s["points"][::-1].copy()}, "order|range"),
        ("exact", lambda s: {"point_weight": s["point_weight"] * 2}, "add up"),
        ("binned", lambda s: {"points": np.zeros((1, 3))}, "keeps the statistics"),
    ],
)
def test_from_state_refuses_statistics_no_fit_makes(algorithm, change, message):
    X, y, _ = skewed_data(n_samples=60)
    state = get_state(KernelDensityNB(algorithm=algorithm).fit(X, y))
    statistics = {**state.statistics, **change(state.statistics)}
    with pytest.raises(ValueError, match=message):
        from_state(ModelState(**{**vars(state), "statistics": statistics}))


LARGEST = np.finfo(np.float64).max


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("missing", ["error", "ignore"])
@pytest.mark.parametrize("algorithm", ["binned", "exact"])
@pytest.mark.parametrize(
    ("count", "squares", "message"),
    [
        # sum w**2 / sum w overflows for a tiny count and large squares
        (1e-300, 1e10, "weight_squares' exceeds class_count squared|counts more"),
        # (sum w)**2, or sum w times a slack, overflows for a count this large
        (LARGEST, 1.0, "add up|exceeds"),
        (LARGEST, LARGEST, "add up|exceeds"),
    ],
    ids=["tiny count", "largest count", "largest count and squares"],
)
def test_extreme_counts_are_refused_without_overflow(
    algorithm, missing, count, squares, message
):
    """Changed statistics (a damaged model file) of the most extreme finite
    values are refused, and checking them warns of no overflow (with missing
    values, their weight squares are checked against these too)."""
    X, y, _ = skewed_data(n_samples=60)
    if missing == "ignore":
        X[::7, 0] = np.nan
    model = KernelDensityNB(algorithm=algorithm, missing=missing).fit(X, y)
    state = get_state(model)
    statistics = dict(state.statistics)
    for key, value in (("class_count", count), ("weight_squares", squares)):
        statistics[key] = statistics[key].copy()
        statistics[key][0] = value
    with pytest.raises(ValueError, match=message):
        from_state(ModelState(**{**vars(state), "statistics": statistics}))


def test_a_changed_n_grid_is_refused():
    X, y, _ = skewed_data(n_samples=60)
    model = KernelDensityNB(n_grid=64).fit(X, y)
    model.set_params(n_grid=128)
    with pytest.raises(ValueError, match="shape"):
        model.partial_fit(X, y)


def test_kde_beats_gaussian_on_bimodal_classes():
    # The synthetic bimodal set of bench/README.md, small.
    X, y, _ = skewed_data(seed=1, n_samples=2000)
    train, test = slice(0, 1500), slice(1500, None)
    kde = KernelDensityNB().fit(X[train], y[train]).score(X[test], y[test])
    gauss = fastnb.GaussianNB().fit(X[train], y[train]).score(X[test], y[test])
    assert kde > gauss + 0.02


def test_docstring_examples():
    failed, attempted = doctest.testmod(_kde, optionflags=doctest.ELLIPSIS)
    assert attempted and not failed


# ---------------------------------------------------------------------------
# missing="ignore": NaN is a missing value, marginalised out
# ---------------------------------------------------------------------------

ALGORITHMS = ["binned", "exact"]


def missing_data(seed=0, n_samples=500, share=0.2):
    """skewed_data with NaN at random, a feature class "b" never has, and a
    row of NaN."""
    X, y, weights = skewed_data(seed, n_samples)
    rng = np.random.default_rng(seed + 100)
    X[rng.random(X.shape) < share] = np.nan
    X[y == "b", 1] = np.nan
    X[4] = np.nan
    return X, y, weights


def feature_log_densities(model, values, j, n_features):
    """Each class's log density of feature j at values, read from the model's
    scores of rows where every other feature is missing."""
    rows = np.full((len(values), n_features), np.nan)
    rows[:, j] = values
    # (A class without samples has prior 0 and a flat density: 0 there.)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num(
            model.predict_joint_log_proba(rows) - np.log(model.class_prior_), nan=0.0
        )


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("weighted", [False, True])
def test_missing_fit_equals_fits_of_each_features_observed_rows(algorithm, weighted):
    X, y, weights = missing_data()
    weights = weights if weighted else None
    model = KernelDensityNB(missing="ignore", algorithm=algorithm)
    model.fit(X, y, sample_weight=weights)
    values = np.linspace(-8, 12, 41)
    for j in range(X.shape[1]):
        observed = ~np.isnan(X[:, j])
        alone = KernelDensityNB(algorithm=algorithm).partial_fit(
            X[observed, j : j + 1],
            y[observed],
            classes=LABELS,
            sample_weight=None if weights is None else weights[observed],
        )
        seen = alone.class_count_ > 0
        assert_allclose(model.bandwidth_[seen, j], alone.bandwidth_[seen, 0])
        assert_allclose(
            model.class_count_ - model._statistics["missing_count"][:, j],
            alone.class_count_,
        )
        ours = feature_log_densities(model, values, j, X.shape[1])
        theirs = feature_log_densities(alone, values, 0, 1)
        assert_allclose(ours[:, seen], theirs[:, seen], rtol=1e-12, atol=1e-12)
        # A class without a value of the feature: a flat log density, 0.
        assert_array_equal(ours[:, ~seen], 0.0)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_missing_scores_leave_out_the_missing_features(algorithm):
    X, y, _ = missing_data(seed=1)
    model = KernelDensityNB(missing="ignore", algorithm=algorithm).fit(X, y)
    X_test, _, _ = missing_data(seed=2, n_samples=40)
    n_features = X.shape[1]
    # The reference that drops the missing features row by row: the log
    # prior plus each observed feature's own log density.
    expected = np.tile(np.log(model.class_prior_), (len(X_test), 1))
    for i, row in enumerate(X_test):
        for j in np.flatnonzero(~np.isnan(row)):
            expected[i] += feature_log_densities(model, row[[j]], j, n_features)[0]
    jll = model.predict_joint_log_proba(X_test)
    rtol = scores_tol(model, 1e-12)
    assert_allclose(jll, expected, rtol=rtol)
    assert_allclose(jll[4], np.log(model.class_prior_))  # a row of NaN
    # ... and the densities are those of scipy's gaussian_kde of the
    # observed values (exact algorithm), with the model's bandwidths.
    if algorithm == "exact":
        for c, label in enumerate(LABELS):
            values = X[(y == label) & ~np.isnan(X[:, 0]), 0]
            kde = gaussian_kde(values, bw_method=1.0)
            kde.set_bandwidth(model.bandwidth_[c, 0] / np.sqrt(kde.covariance[0, 0]))
            test = X_test[~np.isnan(X_test[:, 0]), 0]
            assert_allclose(
                feature_log_densities(model, test, 0, n_features)[:, c],
                kde.logpdf(test),
                rtol=1e-9,
            )
    # contributions add up to the joint log-likelihood less a number of each
    # row, the same in every class; a missing value's terms are 0.
    terms, intercept = model.contributions(X_test)
    rest = jll - terms.sum(axis=1) - intercept
    assert_allclose(rest - rest[:, :1], 0.0, atol=max(rtol, 1e-10) * np.abs(jll).max())
    assert_allclose(terms[np.isnan(X_test)], 0.0, atol=1e-12)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_missing_partial_fit_weights_and_merge_agree_with_fit(algorithm):
    X, y, _ = missing_data(seed=3)
    params = {"missing": "ignore", "algorithm": algorithm}
    model = KernelDensityNB(**params).fit(X, y)
    X_test, _, _ = missing_data(seed=4, n_samples=60)
    expected = model.predict_joint_log_proba(X_test)

    def same(other):
        assert_allclose(other.bandwidth_, model.bandwidth_, rtol=1e-10)
        assert_allclose(
            other._statistics["missing_count"], model._statistics["missing_count"]
        )
        assert_allclose(
            other.predict_joint_log_proba(X_test), expected, rtol=1e-9, atol=1e-9
        )

    parts = KernelDensityNB(**params)
    for rows in np.array_split(np.arange(len(y)), 3):
        parts.partial_fit(X[rows], y[rows], classes=LABELS)
    same(parts)
    half = len(y) // 2
    same(
        fastnb.merge(
            [
                KernelDensityNB(**params).fit(X[:half], y[:half]),
                KernelDensityNB(**params).fit(X[half:], y[half:]),
            ]
        )
    )
    # An integer weight is the row repeated (with a given bandwidth: the
    # rules' effective sample sizes differ).
    weights = np.random.default_rng(5).integers(0, 4, len(y))
    repeated = np.repeat(np.arange(len(y)), weights)
    params["bandwidth"] = 0.4
    weighted = KernelDensityNB(**params).fit(X, y, sample_weight=weights)
    model = KernelDensityNB(**params).fit(X[repeated], y[repeated])
    expected = model.predict_joint_log_proba(X_test)
    same(weighted)
    # float32 stays float32.
    small = KernelDensityNB(**params).fit(X.astype(np.float32), y)
    assert small.bandwidth_.dtype == small.class_count_.dtype == np.float32
    assert small.predict_proba(X_test.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_missing_feature_without_values(algorithm):
    X, y, _ = missing_data(seed=6)
    X[:, 2] = np.nan
    model = KernelDensityNB(missing="ignore", algorithm=algorithm).fit(X, y)
    statistics = model._statistics
    assert_array_equal(statistics["missing_count"][:, 2], model.class_count_)
    assert statistics["low"][2] == statistics["high"][2] == 0
    assert_array_equal(model.bandwidth_[:, 2], 1.0)
    # Its values score nothing (flat densities), missing or not.
    rows = np.full((3, 3), np.nan)
    rows[:, 2] = [-5.0, 0.0, 7.0]
    assert_allclose(
        model.predict_joint_log_proba(rows), np.tile(np.log(model.class_prior_), (3, 1))
    )
    assert np.isfinite(model.predict_joint_log_proba(X)).all()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_missing_error_refuses_nan_and_ignore_refuses_infinity(algorithm):
    X, y, _ = missing_data(seed=7)
    row, column = np.argwhere(np.isnan(X))[0]
    with pytest.raises(
        ValueError,
        match=f"Input X contains NaN. The first is nan in row {row}, column {column}; "
        "KernelDensityNB does not accept missing values encoded as NaN natively. "
        "Pass missing='ignore'",
    ):
        KernelDensityNB(algorithm=algorithm).fit(X, y)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        KernelDensityNB(algorithm=algorithm).fit(np.nan_to_num(X), y).predict(X)
    model = KernelDensityNB(missing="ignore", algorithm=algorithm).fit(X, y)
    before = get_state(model)
    infinite = X.copy()
    infinite[3, 2] = -np.inf
    for call in (
        lambda: model.fit(infinite, y),
        lambda: model.partial_fit(infinite, y),
        lambda: model.predict(infinite),
    ):
        with pytest.raises(ValueError, match="Input X contains infinity"):
            call()
    after = get_state(model)
    for key, value in before.statistics.items():
        assert_array_equal(after.statistics[key], value)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_missing_statistics_round_trip_and_are_checked(algorithm, tmp_path):
    import pickle
    from dataclasses import replace

    X, y, weights = missing_data(seed=8)
    model = KernelDensityNB(missing="ignore", algorithm=algorithm)
    model.fit(X, y, sample_weight=weights)
    X_test, _, _ = missing_data(seed=9, n_samples=30)
    expected = model.predict_joint_log_proba(X_test)
    path = tmp_path / "model.fastnb"
    fastnb.save(model, path)
    for copy in (fastnb.load(path), pickle.loads(pickle.dumps(model))):
        assert_array_equal(copy.predict_joint_log_proba(X_test), expected)
    state = get_state(model)

    missing = state.statistics["missing_count"]
    for value, message in (
        (-np.ones_like(missing), "negative"),
        (missing + 1000, "counts more than class_count"),
    ):
        with pytest.raises(ValueError, match=message):
            from_state(
                replace(state, statistics={**state.statistics, "missing_count": value})
            )
    without = {k: v for k, v in state.statistics.items() if k != "missing_count"}
    with pytest.raises(ValueError, match="keeps the statistics"):
        from_state(replace(state, statistics=without))
    with pytest.raises(ValueError, match="keeps the statistics"):
        from_state(replace(state, params={**state.params, "missing": "error"}))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("bandwidth", ["scott", "silverman", 0.5])
@pytest.mark.parametrize("weighted", [False, True])
def test_missing_matches_the_reference(algorithm, bandwidth, weighted):
    from fastnb import reference

    X, y, weights = missing_data(seed=10)
    weights = weights if weighted else None
    params = {"missing": "ignore", "algorithm": algorithm, "bandwidth": bandwidth}
    ours = KernelDensityNB(**params).fit(X, y, sample_weight=weights)
    oracle = reference.KernelDensityNB(**params).fit(X, y, sample_weight=weights)
    # A second batch reaching past the first's range.
    ours.partial_fit(X[:100] * 1.5, y[:100])
    oracle.partial_fit(X[:100] * 1.5, y[:100])
    for key in ("missing_count", "missing_weight_squares", "low", "high"):
        assert_allclose(ours._statistics[key], oracle.statistics_[key], rtol=1e-12)
    assert_allclose(ours.bandwidth_, oracle.bandwidth_, rtol=1e-12)
    X_test, _, _ = missing_data(seed=11, n_samples=50)
    assert_allclose(
        ours.predict_joint_log_proba(X_test),
        oracle.predict_joint_log_proba(X_test),
        rtol=scores_tol(ours, 1e-10),
    )
