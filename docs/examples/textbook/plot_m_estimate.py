r"""
The m-estimate against Laplace smoothing
========================================

With few examples, a relative frequency :math:`n_{ac} / n_c` is a poor
estimate of :math:`P(a \mid c)`: a value never seen gets probability 0,
which vetoes the class. Laplace smoothing adds one virtual example of
every value; the m-estimate adds :math:`m` virtual examples spread over
the values in the proportions of a prior :math:`p`:

.. math::

    P(a \mid c) = \frac{n_{ac} + m \, p_a}{n_c + m}

This example computes both by hand on a twelve-fruit sample, checks them
against :class:`fastnb.CategoricalNB` with :class:`fastnb.MEstimate` passed
as ``alpha``, and shows how the estimate moves from the raw frequency
(:math:`m = 0`) to the prior (:math:`m \to \infty`).
"""

# %%
# A small sample
# --------------
#
# Twelve fruits, described by one feature, their colour: five apples (3
# red, 2 green) and seven bananas (5 yellow, 2 green). No apple in the
# sample is yellow.

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from fastnb import CategoricalNB, MEstimate

colour = ["red"] * 3 + ["green"] * 2 + ["yellow"] * 5 + ["green"] * 2
fruit = ["apple"] * 5 + ["banana"] * 7
X = pd.DataFrame({"colour": colour})
y = pd.Series(fruit, name="fruit")
counts = pd.crosstab(y, X["colour"])
print(counts)

# %%
# Without smoothing, :math:`P(\text{yellow} \mid \text{apple}) = 0/5 = 0`,
# so a yellow fruit can never be an apple, whatever other features might say.
#
# Laplace smoothing
# -----------------
#
# Laplace's rule adds one virtual example of each of the :math:`k = 3`
# colours: :math:`P(a \mid c) = (n_{ac} + 1) / (n_c + 3)`. For the apples,
# the denominator is :math:`5 + 3 = 8`:
#
# * green: :math:`(2 + 1) / 8 = 0.375`
# * red: :math:`(3 + 1) / 8 = 0.5`
# * yellow: :math:`(0 + 1) / 8 = 0.125`
#
# fastnb encodes the strings itself and sorts the categories (green, red,
# yellow); ``feature_log_prob_`` holds one array per feature, with one row
# per class (apple, banana).

laplace = CategoricalNB(alpha=1).fit(X, y)
print("categories:", laplace.categories_[0])
print("P(colour | apple), Laplace:", np.exp(laplace.feature_log_prob_[0][0]))
np.testing.assert_allclose(
    np.exp(laplace.feature_log_prob_[0][0]), [3 / 8, 4 / 8, 1 / 8]
)

# %%
# Laplace is the m-estimate with :math:`m = k` and a uniform prior
# :math:`p_a = 1/k`: :math:`(n_{ac} + 3 \cdot \tfrac{1}{3}) / (n_c + 3)`.
# ``MEstimate(m)`` without a prior is uniform:

uniform = CategoricalNB(alpha=MEstimate(m=3)).fit(X, y)
np.testing.assert_allclose(uniform.feature_log_prob_[0], laplace.feature_log_prob_[0])

# %%
# The m-estimate with an informed prior
# -------------------------------------
#
# Laplace assumes every colour equally likely before seeing the data. A
# better prior is often the colour's frequency over the whole sample,
# whatever the class: green 4/12, red 3/12, yellow 5/12. With
# :math:`m = 4` virtual examples, the denominator for the apples is
# :math:`5 + 4 = 9` and
#
# * green: :math:`(2 + 4 \cdot \tfrac{4}{12}) / 9 = 3.333 / 9 = 0.370`
# * red: :math:`(3 + 4 \cdot \tfrac{3}{12}) / 9 = 4 / 9 = 0.444`
# * yellow: :math:`(0 + 4 \cdot \tfrac{5}{12}) / 9 = 1.667 / 9 = 0.185`
#
# ``MEstimate``'s prior for :class:`~fastnb.CategoricalNB` is a list with,
# for each feature, the probabilities of its categories in the order of
# ``categories_``.

prior = counts.sum(axis=0) / len(y)  # green, red, yellow: sorted like categories_
print("prior p:", prior.round(4).to_dict())

m = 4
hand = (counts + m * prior) / (counts.sum(axis=1).to_numpy()[:, None] + m)
print("m-estimate by hand, m = 4:")
print(hand.round(4))

m_estimate = CategoricalNB(alpha=MEstimate(m=4, prior=[prior.to_numpy()])).fit(X, y)
print("fastnb:")
print(np.exp(m_estimate.feature_log_prob_[0]).round(4))
np.testing.assert_allclose(np.exp(m_estimate.feature_log_prob_[0]), hand.to_numpy())

# %%
# The posterior of a yellow fruit
# -------------------------------
#
# The class prior is not smoothed: :math:`P(\text{apple}) = 5/12`,
# :math:`P(\text{banana}) = 7/12`. With :math:`m = 4`,
# :math:`P(\text{yellow} \mid \text{banana}) = (5 + 4 \cdot \tfrac{5}{12})
# / (7 + 4) = 0.606`, and
#
# .. math::
#
#     P(\text{apple} \mid \text{yellow}) =
#     \frac{\tfrac{5}{12} \cdot 0.185}
#     {\tfrac{5}{12} \cdot 0.185 + \tfrac{7}{12} \cdot 0.606} = 0.179
#
# where the unsmoothed estimate gives exactly 0.

yellow = pd.DataFrame({"colour": ["yellow"]})
apple_score = 5 / 12 * (5 / 3) / 9
banana_score = 7 / 12 * (5 + 5 / 3) / 11
print(f"by hand: P(apple | yellow) = {apple_score / (apple_score + banana_score):.4f}")
print("fastnb (apple, banana):", m_estimate.predict_proba(yellow)[0].round(4))
np.testing.assert_allclose(
    m_estimate.predict_proba(yellow)[0, 0], apple_score / (apple_score + banana_score)
)

# %%
# From the frequency to the prior
# -------------------------------
#
# :math:`m` weighs the prior against the data, in examples: the estimate
# is a weighted average of the frequency :math:`n_{ac}/n_c` (weight
# :math:`n_c`) and the prior :math:`p_a` (weight :math:`m`),
#
# .. math::
#
#     \frac{n_{ac} + m p_a}{n_c + m} = \frac{n_c}{n_c + m}
#     \frac{n_{ac}}{n_c} + \frac{m}{n_c + m} p_a
#
# At :math:`m = 0` it is the raw frequency; at :math:`m = n_c = 5` it is
# halfway between the frequency and the prior; as :math:`m` grows it
# tends to the prior. The same prior for both classes makes the classes
# alike in the limit: the colour stops telling apples from bananas, and the
# posterior of a yellow fruit tends to the class prior 5/12.

ms = np.concatenate([[0], np.geomspace(0.1, 1000, 60)])
estimates = []
posteriors = []
for m in ms:
    model = CategoricalNB(alpha=MEstimate(m=m, prior=[prior.to_numpy()])).fit(X, y)
    estimates.append(np.exp(model.feature_log_prob_[0][0]))
    posteriors.append(model.predict_proba(yellow)[0, 0])
estimates = np.array(estimates)

# At m = n_c = 5 the estimate is the mean of frequency and prior.
frequency = (counts.loc["apple"] / 5).to_numpy()
halfway = CategoricalNB(alpha=MEstimate(m=5, prior=[prior.to_numpy()])).fit(X, y)
np.testing.assert_allclose(
    np.exp(halfway.feature_log_prob_[0][0]), (frequency + prior.to_numpy()) / 2
)

fig, (ax_est, ax_post) = plt.subplots(1, 2, figsize=(10, 4))
# A symlog axis: linear up to 0.1, so that m = 0 has a place at the left edge.
for j, name in enumerate(laplace.categories_[0]):
    line = ax_est.plot(ms, estimates[:, j], label=f"{name}")[0]
    ax_est.axhline(prior.iloc[j], color=line.get_color(), linestyle=":")
    ax_est.plot(
        3,
        np.exp(laplace.feature_log_prob_[0][0, j]),
        "o",
        color=line.get_color(),
        markerfacecolor="none",
    )
ax_est.axvline(5, color="grey", linewidth=0.8)
ax_est.text(5.5, 0.02, "m = n_c = 5", color="grey")
ax_est.set_xscale("symlog", linthresh=0.1)
ax_est.set_xlim(0, 1000)
ax_est.set_xlabel("m (virtual examples)")
ax_est.set_ylabel("P(colour | apple)")
ax_est.set_title("m-estimate for the apples\n(dotted: prior p; circles: Laplace)")
ax_est.legend(title="colour", loc="upper right")

ax_post.plot(ms, posteriors)
ax_post.axhline(5 / 12, color="black", linestyle=":", label="P(apple) = 5/12")
ax_post.set_xscale("symlog", linthresh=0.1)
ax_post.set_xlim(0, 1000)
ax_post.set_xlabel("m (virtual examples)")
ax_post.set_ylabel("P(apple | yellow)")
ax_post.set_title("Posterior of a yellow fruit")
ax_post.legend()
fig.tight_layout()
plt.show()
