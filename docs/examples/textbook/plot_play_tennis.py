"""
Play Tennis: categorical Naive Bayes by hand
============================================

The 14-day Play Tennis table (Quinlan's weather data, worked through in
Mitchell's *Machine Learning*, chapter 6) is the classic exercise in
categorical Naive Bayes: four weather attributes, a yes/no answer, and a
new day to classify. This example counts the table by hand, reproduces the
textbook's numbers for the day (Sunny, Cool, High, Strong), and checks them
against :class:`fastnb.CategoricalNB` fitted directly on the strings, first
without smoothing (``alpha=0``, the textbook's estimates) and then with
Laplace smoothing (``alpha=1``).
"""

# %%
# The data
# --------
#
# A pandas DataFrame of strings. :class:`~fastnb.CategoricalNB` encodes
# columns of strings itself: no ordinal encoder is needed, and the
# categories of each feature, sorted, are kept in ``categories_``.

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from fastnb import CategoricalNB
from fastnb.plot import plot_feature

days = [
    ("Sunny", "Hot", "High", "Weak", "No"),
    ("Sunny", "Hot", "High", "Strong", "No"),
    ("Overcast", "Hot", "High", "Weak", "Yes"),
    ("Rain", "Mild", "High", "Weak", "Yes"),
    ("Rain", "Cool", "Normal", "Weak", "Yes"),
    ("Rain", "Cool", "Normal", "Strong", "No"),
    ("Overcast", "Cool", "Normal", "Strong", "Yes"),
    ("Sunny", "Mild", "High", "Weak", "No"),
    ("Sunny", "Cool", "Normal", "Weak", "Yes"),
    ("Rain", "Mild", "Normal", "Weak", "Yes"),
    ("Sunny", "Mild", "Normal", "Strong", "Yes"),
    ("Overcast", "Mild", "High", "Strong", "Yes"),
    ("Overcast", "Hot", "Normal", "Weak", "Yes"),
    ("Rain", "Mild", "High", "Strong", "No"),
]
columns = ["Outlook", "Temperature", "Humidity", "Wind", "PlayTennis"]
table = pd.DataFrame(days, columns=columns, index=range(1, 15))
print(table)

X = table.drop(columns="PlayTennis")
y = table["PlayTennis"]

# %%
# Counting by hand
# ----------------
#
# Of the 14 days, 9 are "Yes" and 5 are "No", so the priors are
# :math:`P(\text{Yes}) = 9/14 = 0.643` and :math:`P(\text{No}) = 5/14 =
# 0.357`. A cross-tabulation of each attribute against the class gives the
# counts :math:`n_{ac}` of value :math:`a` among the days of class
# :math:`c`.

print(y.value_counts())
for feature in X.columns:
    print(pd.crosstab(y, X[feature]), "\n")

# %%
# Without smoothing each conditional probability is a relative frequency,
# :math:`P(a \mid c) = n_{ac} / n_c`. The textbook's query is the day
#
# .. math::
#
#     x = (\text{Outlook} = \text{Sunny}, \text{Temperature} = \text{Cool},
#     \text{Humidity} = \text{High}, \text{Wind} = \text{Strong})
#
# For "Yes": Sunny on 2 of the 9 "Yes" days, Cool on 3, High on 3, Strong
# on 3. For "No": Sunny on 3 of the 5 "No" days, Cool on 1, High on 4,
# Strong on 3. Naive Bayes multiplies the prior by the four conditional
# probabilities:
#
# .. math::
#
#     P(\text{Yes}) \prod_i P(x_i \mid \text{Yes})
#     = \frac{9}{14} \cdot \frac{2}{9} \cdot \frac{3}{9} \cdot \frac{3}{9}
#     \cdot \frac{3}{9} = 0.0053
#
# .. math::
#
#     P(\text{No}) \prod_i P(x_i \mid \text{No})
#     = \frac{5}{14} \cdot \frac{3}{5} \cdot \frac{1}{5} \cdot \frac{4}{5}
#     \cdot \frac{3}{5} = 0.0206
#
# "No" has the larger score. Normalised, :math:`P(\text{No} \mid x) =
# 0.0206 / (0.0206 + 0.0053) = 0.795`.

query = pd.DataFrame([("Sunny", "Cool", "High", "Strong")], columns=X.columns)

score_yes = 9 / 14 * 2 / 9 * 3 / 9 * 3 / 9 * 3 / 9
score_no = 5 / 14 * 3 / 5 * 1 / 5 * 4 / 5 * 3 / 5
print(f"Yes: {score_yes:.4f}  No: {score_no:.4f}")
print(f"P(No | x) = {score_no / (score_no + score_yes):.3f}")

# %%
# The same with fastnb
# --------------------
#
# ``alpha=0`` turns smoothing off. The classes are sorted, "No" before
# "Yes", and so are the categories of each feature. ``category_count_``
# holds the counts above, ``feature_log_prob_`` the logarithms of the
# relative frequencies, and ``predict_joint_log_proba`` the logarithm of
# the two scores.

textbook = CategoricalNB(alpha=0).fit(X, y)
print("classes:", textbook.classes_)
for feature, categories, count in zip(
    X.columns, textbook.categories_, textbook.category_count_, strict=True
):
    print(feature, list(categories))
    print(count)

joint = np.exp(textbook.predict_joint_log_proba(query))[0]
print("scores (No, Yes):", joint.round(4))
print("predict_proba (No, Yes):", textbook.predict_proba(query)[0].round(3))
print("prediction:", textbook.predict(query)[0])

np.testing.assert_allclose(joint, [score_no, score_yes])
np.testing.assert_allclose(textbook.category_count_[0], [[0, 2, 3], [4, 3, 2]])
np.testing.assert_allclose(np.exp(textbook.class_log_prior_), [5 / 14, 9 / 14])

# %%
# The class-conditional tables, :math:`P(a \mid c)` for every value of
# every attribute, drawn by :func:`fastnb.plot.plot_feature`:

fig, axes = plt.subplots(2, 2, figsize=(9, 6))
for feature, ax in zip(X.columns, axes.ravel(), strict=True):
    plot_feature(textbook, feature, ax=ax)
    ax.set_ylim(0, 1)
    ax.legend(title="class", loc="upper center", ncol=2)
fig.suptitle("Play Tennis: P(value | class) without smoothing")
fig.tight_layout()

# %%
# The zero-count problem
# ----------------------
#
# Outlook was never Overcast on a "No" day, so without smoothing
# :math:`P(\text{Overcast} \mid \text{No}) = 0/5 = 0` and every Overcast
# day is "Yes" with probability 1, whatever the other attributes say.

overcast = pd.DataFrame([("Overcast", "Cool", "High", "Strong")], columns=X.columns)
print("unsmoothed P(No), P(Yes):", textbook.predict_proba(overcast)[0])

# %%
# Laplace smoothing
# -----------------
#
# With ``alpha=1`` each count gets one virtual observation of every value:
# :math:`P(a \mid c) = (n_{ac} + 1) / (n_c + k)`, with :math:`k` the number
# of values of the attribute (3 for Outlook and Temperature, 2 for
# Humidity and Wind). The priors are not smoothed. For the query:
#
# .. math::
#
#     \text{Yes:} \quad \frac{9}{14} \cdot \frac{2 + 1}{9 + 3} \cdot
#     \frac{3 + 1}{9 + 3} \cdot \frac{3 + 1}{9 + 2} \cdot
#     \frac{3 + 1}{9 + 2} = 0.0071
#
# .. math::
#
#     \text{No:} \quad \frac{5}{14} \cdot \frac{3 + 1}{5 + 3} \cdot
#     \frac{1 + 1}{5 + 3} \cdot \frac{4 + 1}{5 + 2} \cdot
#     \frac{3 + 1}{5 + 2} = 0.0182
#
# The answer is still "No", now with :math:`P(\text{No} \mid x) = 0.720`:
# smoothing pulls every estimate towards uniform, and the small class "No"
# (5 days) moves more than "Yes" (9 days).

laplace_yes = 9 / 14 * 3 / 12 * 4 / 12 * 4 / 11 * 4 / 11
laplace_no = 5 / 14 * 4 / 8 * 2 / 8 * 5 / 7 * 4 / 7
print(f"Yes: {laplace_yes:.4f}  No: {laplace_no:.4f}")

laplace = CategoricalNB(alpha=1).fit(X, y)
laplace_joint = np.exp(laplace.predict_joint_log_proba(query))[0]
print("scores (No, Yes):", laplace_joint.round(4))
print("predict_proba (No, Yes):", laplace.predict_proba(query)[0].round(3))
np.testing.assert_allclose(laplace_joint, [laplace_no, laplace_yes])

# %%
# The Overcast day is no longer certain:

print("Laplace P(No), P(Yes):", laplace.predict_proba(overcast)[0].round(3))

# %%
# The two joint scores of the query, and the posteriors, under both
# estimates:

fig, (ax_joint, ax_post) = plt.subplots(1, 2, figsize=(9, 3.5))
width = 0.35
positions = np.arange(2)
for shift, (name, model) in zip(
    (-width / 2, width / 2),
    (("alpha=0", textbook), ("alpha=1", laplace)),
    strict=True,
):
    scores = np.exp(model.predict_joint_log_proba(query))[0]
    ax_joint.bar(positions + shift, scores, width, label=name)
    posterior = model.predict_proba(query)[0]
    ax_post.bar(positions + shift, posterior, width, label=name)
    for i in range(2):
        ax_joint.text(
            i + shift, scores[i], f"{scores[i]:.4f}", ha="center", va="bottom"
        )
        ax_post.text(
            i + shift, posterior[i], f"{posterior[i]:.3f}", ha="center", va="bottom"
        )
for ax in (ax_joint, ax_post):
    ax.set_xticks(positions, textbook.classes_)
    ax.set_xlabel("PlayTennis")
    ax.legend()
ax_joint.set_ylabel(r"$P(c)\,\prod_i P(x_i \mid c)$")
ax_joint.set_title("Joint scores of (Sunny, Cool, High, Strong)")
ax_post.set_ylabel("P(c | x)")
ax_joint.set_ylim(0, 0.024)
ax_post.set_ylim(0, 1)
ax_post.set_title("Posteriors")
fig.tight_layout()
plt.show()
