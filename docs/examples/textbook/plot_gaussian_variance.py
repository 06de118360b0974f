r"""
Gaussian Naive Bayes: which variances?
======================================

:class:`fastnb.GaussianNB` models each feature :math:`i` within class
:math:`c` as a normal distribution with mean :math:`\theta_{ci}` and
variance :math:`\sigma^2_{ci}`. Besides scikit-learn's estimate (one
maximum-likelihood variance per class and feature), it offers the other
textbook choices: ``var_estimator="unbiased"`` divides by :math:`N_c - 1`
instead of :math:`N_c`; ``var_type="tied"`` pools one variance per feature
over the classes; ``var_type="spherical"`` keeps one variance per class for
all features. This example computes the variances of one class by hand on a
nine-point data set, checks them against ``theta_`` and ``var_``, and draws
the decision regions of the options side by side.
"""

# %%
# The data
# --------
#
# Two classes in two dimensions: class "a", five points spread along
# :math:`x_1`, and class "b", four points in a small diamond above it.

import matplotlib.pyplot as plt
import numpy as np

from fastnb import GaussianNB

X_a = np.array([[1, 2], [2, 2], [3, 3], [4, 2], [5, 1]], dtype=float)
X_b = np.array([[4, 4], [4, 6], [3, 5], [5, 5]], dtype=float)
X = np.vstack([X_a, X_b])
y = np.array(["a"] * 5 + ["b"] * 4)

# %%
# The variances of class "a" by hand
# ----------------------------------
#
# The mean of class "a" is :math:`\theta_a = (15/5, 10/5) = (3, 2)`. The
# deviations from it are :math:`(-2, -1, 0, 1, 2)` for :math:`x_1` and
# :math:`(0, 0, 1, 0, -1)` for :math:`x_2`, so the sums of squared
# deviations are :math:`\text{ssd}_{a1} = 4 + 1 + 0 + 1 + 4 = 10` and
# :math:`\text{ssd}_{a2} = 0 + 0 + 1 + 0 + 1 = 2`.
#
# * ``var_estimator="mle"`` (the default, as scikit-learn) divides by
#   :math:`N_a = 5`: :math:`\sigma^2_a = (10/5, 2/5) = (2, 0.4)`.
# * ``var_estimator="unbiased"`` divides by :math:`N_a - 1 = 4`:
#   :math:`(10/4, 2/4) = (2.5, 0.5)`.

theta_a = X_a.mean(axis=0)
ssd_a = ((X_a - theta_a) ** 2).sum(axis=0)
print("theta_a:", theta_a, " ssd_a:", ssd_a)
print("mle variances:", ssd_a / 5, " unbiased:", ssd_a / 4)

default = GaussianNB().fit(X, y)
unbiased = GaussianNB(var_estimator="unbiased").fit(X, y)
print("theta_:\n", default.theta_)
print("var_ (mle):\n", default.var_)
print("var_ (unbiased):\n", unbiased.var_)

# %%
# ``var_`` includes a small amount ``epsilon_`` added to every variance
# (see `Variance smoothing`_ below), here :math:`2.7 \times 10^{-9}`:

np.testing.assert_allclose(default.theta_[0], [3, 2])
np.testing.assert_allclose(default.var_[0], np.array([2, 0.4]) + default.epsilon_)
np.testing.assert_allclose(unbiased.var_[0], np.array([2.5, 0.5]) + unbiased.epsilon_)

# %%
# Tied and spherical variances
# ----------------------------
#
# Class "b" has mean :math:`(4, 5)` and sums of squared deviations
# :math:`(2, 2)` (two points at distance 1 from the mean along each
# axis).
#
# * ``var_type="tied"`` pools the classes, one variance per feature:
#   :math:`\sigma^2_i = \sum_c \text{ssd}_{ci} / N`, with :math:`N = 9`
#   samples: :math:`((10 + 2)/9, (2 + 2)/9) = (1.333, 0.444)` for both
#   classes. The unbiased version divides by :math:`N - C = 7`, with
#   :math:`C = 2` classes.
# * ``var_type="spherical"`` keeps one variance per class, pooled over the
#   :math:`d = 2` features: :math:`\sigma^2_c = \sum_i \text{ssd}_{ci} /
#   (d N_c)`; for class "a" :math:`(10 + 2) / (2 \cdot 5) = 1.2`, for class
#   "b" :math:`(2 + 2) / (2 \cdot 4) = 0.5`.

tied = GaussianNB(var_type="tied").fit(X, y)
spherical = GaussianNB(var_type="spherical").fit(X, y)
print("var_ (tied):\n", tied.var_)
print("var_ (spherical):\n", spherical.var_)

np.testing.assert_allclose(tied.var_, [[12 / 9, 4 / 9]] * 2, rtol=1e-7)
np.testing.assert_allclose(spherical.var_, [[1.2, 1.2], [0.5, 0.5]], rtol=1e-7)
tied_unbiased = GaussianNB(var_type="tied", var_estimator="unbiased").fit(X, y)
np.testing.assert_allclose(tied_unbiased.var_, [[12 / 7, 4 / 7]] * 2, rtol=1e-7)

# %%
# With tied variances the quadratic terms :math:`x_i^2 / \sigma^2_i` are
# the same for every class and cancel, so the decision function is linear:
# the model exposes it as ``coef_`` :math:`= \theta_{ci} / \sigma^2_i` and
# ``intercept_``. For class "a": :math:`3 / 1.333 = 2.25` and
# :math:`2 / 0.444 = 4.5`.

print("coef_:\n", tied.coef_.round(4))
np.testing.assert_allclose(tied.coef_[0], [2.25, 4.5], rtol=1e-7)

# %%
# Variance smoothing
# ------------------
#
# Every variance gets ``epsilon_ = var_smoothing * max_i var(X[:, i])``
# added, the largest variance of a feature over all nine samples. Here
# :math:`\text{var}(x_1) = 1.580` and :math:`\text{var}(x_2) =
# 24/9 = 2.667`; the default ``var_smoothing=1e-9`` adds
# :math:`2.7 \times 10^{-9}`, while ``var_smoothing=1`` adds 2.667 to every
# variance, which makes the classes rounder and wider.

print("variance of each feature:", X.var(axis=0))
smooth = GaussianNB(var_smoothing=1.0).fit(X, y)
print("epsilon_:", smooth.epsilon_)
print("var_ (var_smoothing=1):\n", smooth.var_.round(4))
np.testing.assert_allclose(smooth.epsilon_, 24 / 9)
np.testing.assert_allclose(smooth.var_[0], [2 + 24 / 9, 0.4 + 24 / 9])

# %%
# Decision regions
# ----------------
#
# The posterior :math:`P(b \mid x)` over the plane for each option, with
# the decision boundary :math:`P(b \mid x) = 0.5` in black. Separate
# variances per class and feature (``diag``) give a quadratic boundary,
# here a parabola: class "a" is four times wider than "b" along
# :math:`x_1`, so far to the left and right it wins higher up. Tied
# variances give a straight line; spherical variances a circle around
# class "b", the class with the smaller variance. The unbiased estimates
# move the boundaries only a little: with five and four samples, they
# scale the variances by 5/4 and 4/3 (``diag``), or both by 9/7
# (``tied``). A large ``var_smoothing`` makes both classes wide and the
# posterior less certain near the boundary, where (3, 3) and (4, 4) lie.

models = {
    'var_type="diag" (default)': default,
    'var_estimator="unbiased"': unbiased,
    'var_type="tied"': tied,
    'var_type="tied", "unbiased"': tied_unbiased,
    'var_type="spherical"': spherical,
    "var_smoothing=1": smooth,
}

x1, x2 = np.meshgrid(np.linspace(-1, 8, 300), np.linspace(-1, 8, 300))
grid = np.column_stack([x1.ravel(), x2.ravel()])

fig, axes = plt.subplots(2, 3, figsize=(12, 8), sharex=True, sharey=True)
for (title, model), ax in zip(models.items(), axes.ravel(), strict=True):
    proba_b = model.predict_proba(grid)[:, 1].reshape(x1.shape)
    ax.contourf(x1, x2, proba_b, levels=np.linspace(0, 1, 11), cmap="RdBu_r")
    ax.contour(x1, x2, proba_b, levels=[0.5], colors="black")
    ax.scatter(*X_a.T, c="tab:blue", edgecolor="white", label="a")
    ax.scatter(*X_b.T, c="tab:red", edgecolor="white", label="b")
    ax.set_title(title)
    ax.set_aspect("equal")
for ax in axes[1]:
    ax.set_xlabel("$x_1$")
for ax in axes[:, 0]:
    ax.set_ylabel("$x_2$")
axes[0, 0].legend(loc="upper left")
fig.suptitle("GaussianNB: P(b | x) and the decision boundary")
fig.tight_layout()
plt.show()
