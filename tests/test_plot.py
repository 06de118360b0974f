"""fastnb.plot: what is drawn is the model's tables (Agg backend)."""

import builtins
import doctest

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import gaussian_kde, norm, poisson

from _helpers import CASES

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from fastnb import KernelDensityNB, plot  # noqa: E402

# Also run on the wheel built from the sdist (.ci/run step 3).
pytestmark = pytest.mark.wheel

CASE_BY_ID = {case.id: case for case in CASES}


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def fitted(case_id, seed=0):
    case = CASE_BY_ID[case_id]
    X, y, _ = case.make(seed=seed)
    return case.estimator().fit(X, y), X


def bar_heights(ax):
    """Heights of each bar container, (bars, containers), and their labels."""
    heights = [[patch.get_height() for patch in bars] for bars in ax.containers]
    return np.array(heights).T, [bars.get_label() for bars in ax.containers]


def test_gaussian_feature_is_each_class_density():
    model, _ = fitted("GaussianNB")
    ax = plot.plot_feature(model, 3)
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == list(model.classes_)
    for c, line in enumerate(lines):
        x, density = line.get_xdata(), line.get_ydata()
        expected = norm.pdf(x, model.theta_[c, 3], np.sqrt(model.var_[c, 3]))
        np.testing.assert_allclose(density, expected, rtol=1e-12)


def test_categorical_feature_is_each_category_probability():
    model, _ = fitted("CategoricalNB-strings")
    ax = plot.plot_feature(model, 2)
    heights, labels = bar_heights(ax)
    assert labels == list(model.classes_)
    np.testing.assert_allclose(heights, np.exp(model.feature_log_prob_[2]).T)
    ticks = [label.get_text() for label in ax.get_xticklabels()]
    assert ticks == list(model.categories_[2])


@pytest.mark.parametrize(
    ("case_id", "expected"),
    [
        ("MultinomialNB", lambda m: np.exp(m.feature_log_prob_[:, 5])),
        ("BernoulliNB", lambda m: np.exp(m.feature_log_prob_[:, 5])),
        ("ComplementNB-norm", lambda m: m.feature_log_prob_[:, 5]),
    ],
)
def test_count_feature_is_a_bar_a_class(case_id, expected):
    model, _ = fitted(case_id)
    heights, labels = bar_heights(plot.plot_feature(model, 5))
    assert labels == list(model.classes_)
    np.testing.assert_allclose(heights[0], expected(model), rtol=1e-12)


def test_poisson_feature_is_each_class_count_distribution():
    model, _ = fitted("PoissonNB-alpha-per-feature")
    heights, _ = bar_heights(plot.plot_feature(model, 1))
    counts = np.arange(len(heights))
    np.testing.assert_allclose(heights, poisson.pmf(counts[:, None], model.rate_[:, 1]))
    assert heights[-1].max() < 0.05  # past most of the mass


def test_kernel_density_feature_is_each_class_density():
    # The exact algorithm's density of a class is scipy's gaussian_kde of the
    # class's values (the same Scott bandwidth), over the range seen widened.
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=60), rng.exponential(size=60)])
    y = np.repeat(["a", "b"], 30)
    model = KernelDensityNB(algorithm="exact").fit(X, y)
    lines = plot.plot_feature(model, 1).get_lines()
    assert [line.get_label() for line in lines] == ["a", "b"]
    for c, line in enumerate(lines):
        x = line.get_xdata()
        assert x.min() < X[:, 1].min() and x.max() > X[:, 1].max()
        expected = gaussian_kde(X[y == model.classes_[c], 1])(x)
        np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-9)


def test_mixed_feature_by_name_is_its_family_table():
    model, _ = fitted("MixedNB-frame")
    gaussian = model.estimators_["gaussian"]
    lines = plot.plot_feature(model, "weight").get_lines()
    x = lines[1].get_xdata()
    expected = norm.pdf(x, gaussian.theta_[1, 1], np.sqrt(gaussian.var_[1, 1]))
    np.testing.assert_allclose(lines[1].get_ydata(), expected, rtol=1e-12)
    heights, _ = bar_heights(plot.plot_feature(model, "colour"))
    categorical = model.estimators_["categorical"]
    np.testing.assert_allclose(heights, np.exp(categorical.feature_log_prob_[0]).T)
    with pytest.raises(ValueError, match="'width' is not a feature name"):
        plot.plot_feature(model, "width")
    with pytest.raises(ValueError, match="outside the model's 5 features"):
        plot.plot_feature(model, 5)


def test_contributions_are_the_largest_terms():
    model, X = fitted("MultinomialNB", seed=1)
    x = sp.csr_matrix(X[:1])
    _, ax = plt.subplots()
    assert plot.plot_contributions(model, x, n=3, ax=ax) is ax
    jll = model.predict_joint_log_proba(x)[0]
    first, second = model.classes_[np.argsort(-jll)[:2]]
    terms = model.contributions(x, classes=(first, second)).terms.toarray()[0]
    largest = np.argsort(-np.abs(terms))[:3]
    widths = [patch.get_width() for patch in ax.containers[0]]
    np.testing.assert_allclose(widths, terms[largest][::-1], rtol=1e-12)
    labels = [label.get_text() for label in ax.get_yticklabels()]
    assert labels[-1].startswith(f"x{largest[0]} = ")
    log_odds = np.sort(jll)[-1] - np.sort(jll)[-2]
    assert ax.get_title().startswith(f"log-odds {log_odds:.3g} = intercept")


def test_contributions_of_a_frame_row_name_the_columns():
    model, X = fitted("MixedNB-frame", seed=2)
    ax = plot.plot_contributions(model, X.iloc[[0]], classes=("a", "b"))
    labels = {label.get_text().split(" = ")[0] for label in ax.get_yticklabels()}
    assert labels <= set(X.columns)
    terms = model.contributions(X.iloc[[0]], classes=("a", "b")).terms.iloc[0]
    widths = sorted(patch.get_width() for patch in ax.containers[0])
    np.testing.assert_allclose(widths, sorted(terms[terms != 0]), rtol=1e-12)
    with pytest.raises(ValueError, match="one sample; got 2 rows"):
        plot.plot_contributions(model, X.iloc[:2])


def test_without_matplotlib_the_error_says_what_to_install(monkeypatch):
    model, _ = fitted("GaussianNB")
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ImportError, match="pip install 'fastnb\\[plot\\]'"):
        plot.plot_feature(model, 0)


def test_docstring_examples():
    failed, attempted = doctest.testmod(plot, optionflags=doctest.ELLIPSIS)
    assert attempted and not failed
