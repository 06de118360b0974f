r"""
Cost-sensitive decisions: MAP against minimum expected cost
===========================================================

A classifier's usual rule predicts the most probable class (the maximum a
posteriori, or MAP, rule). When errors have different costs, the Bayes
decision rule predicts instead the class of least expected cost under the
posterior. fastnb's ``predict`` takes the cost matrix as a keyword,
``model.predict(X, cost=C)``. This example fits
:class:`fastnb.GaussianNB` on two features of the breast cancer data set,
works out one sample's expected costs by hand from ``predict_proba``, and
compares the two rules' confusion matrices and total costs.
"""

# %%
# The data and the model
# ----------------------
#
# scikit-learn's breast cancer data set (bundled, no download) labels 569
# tumours as malignant (0) or benign (1). Two features, the mean radius
# and the mean texture of the cell nuclei, leave the model uncertain about
# enough tumours for the decision rule to matter. Half the samples train
# the model, half test it.

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import ConfusionMatrixDisplay, confusion_matrix
from sklearn.model_selection import train_test_split

from fastnb import GaussianNB

data = load_breast_cancer(as_frame=True)
features = ["mean radius", "mean texture"]
X_train, X_test, y_train, y_test = train_test_split(
    data.data[features],
    data.target,
    test_size=0.5,
    stratify=data.target,
    random_state=0,
)
model = GaussianNB().fit(X_train, y_train)
print("classes:", model.classes_, "=", data.target_names.tolist())

# %%
# The cost matrix
# ---------------
#
# ``cost[i, j]`` is the cost of predicting ``classes_[j]`` when the truth is
# ``classes_[i]``: rows are the truth, columns the prediction. Here missing
# a malignant tumour (truth 0, predicted 1) costs 10, a false alarm on a
# benign one (truth 1, predicted 0) costs 1, and a correct answer nothing:
#
# .. math::
#
#     C = \begin{pmatrix} 0 & 10 \\ 1 & 0 \end{pmatrix}
#
# The expected cost of predicting class :math:`j` for a sample :math:`x` is
# :math:`\sum_i P(i \mid x) \, C_{ij}`:
#
# * predict malignant: :math:`P(\text{benign} \mid x) \cdot 1`,
# * predict benign: :math:`P(\text{malignant} \mid x) \cdot 10`.
#
# Predicting malignant is cheaper as soon as :math:`1 - P(\text{malignant}
# \mid x) < 10 \, P(\text{malignant} \mid x)`, that is, when
# :math:`P(\text{malignant} \mid x) > 1/11 = 0.091`, instead of 0.5 for
# the MAP rule.

cost = np.array([[0, 10], [1, 0]])
map_prediction = model.predict(X_test)
cost_prediction = model.predict(X_test, cost=cost)

# %%
# One sample by hand
# ------------------
#
# Take the first test sample on which the two rules disagree.

proba = model.predict_proba(X_test)
i = np.flatnonzero(map_prediction != cost_prediction)[0]
p_malignant, p_benign = proba[i]
print(X_test.iloc[i].to_dict(), "truth:", data.target_names[y_test.iloc[i]])
print(f"P(malignant | x) = {p_malignant:.4f}, P(benign | x) = {p_benign:.4f}")

expected = proba[i] @ cost  # sum over the truth i of P(i | x) cost[i, j]
print(f"expected cost of predicting malignant: {p_benign:.4f} x 1 = {expected[0]:.4f}")
print(f"expected cost of predicting benign: {p_malignant:.4f} x 10 = {expected[1]:.4f}")
print("MAP rule predicts:", data.target_names[map_prediction[i]])
print("minimum expected cost predicts:", data.target_names[cost_prediction[i]])

np.testing.assert_allclose(expected, [p_benign, 10 * p_malignant])
assert cost_prediction[i] == np.argmin(expected)

# %%
# This tumour (radius 13.98, texture 19.62, in truth malignant) is benign
# with probability 0.760 and malignant with probability 0.240. The MAP rule
# says benign. But predicting benign risks the cost 10 with probability
# 0.240, an expected cost of 2.401, while predicting malignant risks the
# cost 1 with probability 0.760, an expected cost of 0.760: the cost rule
# says malignant.
#
# For every test sample, the cost rule is the threshold 1/11 on
# :math:`P(\text{malignant} \mid x)`, and the 0-1 cost matrix gives back
# the MAP rule:

np.testing.assert_array_equal(cost_prediction, np.where(proba[:, 0] > 1 / 11, 0, 1))
np.testing.assert_array_equal(
    model.predict(X_test, cost=[[0, 1], [1, 0]]), map_prediction
)

# %%
# Confusion matrices and total cost
# ---------------------------------
#
# The total cost of a set of predictions is the sum over the confusion
# matrix of count times cost. The cost rule trades many more false alarms
# for far fewer missed cancers, and costs less in total.

totals = {}
for name, prediction in [
    ("MAP", map_prediction),
    ("min. expected cost", cost_prediction),
]:
    matrix = confusion_matrix(y_test, prediction)
    totals[name] = int((matrix * cost).sum())
    print(
        f"{name}: missed cancers {matrix[0, 1]}, false alarms {matrix[1, 0]}, "
        f"total cost {totals[name]}"
    )

# %%
# The total cost of every threshold
# ---------------------------------
#
# Sweeping the threshold :math:`t` of the rule "malignant when
# :math:`P(\text{malignant} \mid x) > t`" shows where the two rules lie.
# On this test set the Bayes threshold 1/11 (cost 97) is close to the
# cheapest threshold, 0.115 (cost 85). 1/11 is the best threshold when the
# posteriors are calibrated, which a Naive Bayes model's are only roughly;
# and a threshold picked on the test set itself is an optimistic choice.

thresholds = np.linspace(0, 1, 201)
missed = np.array([((proba[:, 0] <= t) & (y_test == 0)).sum() for t in thresholds])
alarms = np.array([((proba[:, 0] > t) & (y_test == 1)).sum() for t in thresholds])
total_cost = 10 * missed + alarms
best = np.argmin(total_cost)
print(f"cheapest threshold {thresholds[best]:.3f}, total cost {total_cost[best]}")

fig = plt.figure(figsize=(12, 4))
ax_map, ax_cost, ax_sweep = fig.subplots(
    1, 3, gridspec_kw={"width_ratios": [1, 1, 1.4]}
)
for ax, (name, prediction) in zip(
    (ax_map, ax_cost),
    [("MAP", map_prediction), ("min. expected cost", cost_prediction)],
    strict=True,
):
    ConfusionMatrixDisplay.from_predictions(
        y_test, prediction, display_labels=data.target_names, ax=ax, colorbar=False
    )
    ax.set_title(f"{name}: total cost {totals[name]}")
ax_sweep.plot(thresholds, total_cost, color="black")
ax_sweep.axvline(0.5, color="tab:blue", linestyle="--", label="MAP, t = 0.5")
ax_sweep.axvline(1 / 11, color="tab:red", linestyle="--", label="cost rule, t = 1/11")
ax_sweep.set_xlabel("threshold t on P(malignant | x)")
ax_sweep.set_ylabel("total cost on the test set")
ax_sweep.set_title("10 x missed + 1 x false alarms")
ax_sweep.legend()
fig.tight_layout()

# %%
# With all 30 features
# --------------------
#
# On all 30 features, GaussianNB's posteriors are nearly always close to 0
# or 1 (the features are strongly correlated, and the model counts their
# evidence as independent), so few samples fall between 1/11 and 1/2 and
# the cost rule changes few predictions: 3 of the 285 test samples have
# :math:`1/11 < P(\text{malignant} \mid x) \le 1/2`, and the total cost
# falls only from 119 to 111.

X_train_all, X_test_all = train_test_split(
    data.data, test_size=0.5, stratify=data.target, random_state=0
)
full = GaussianNB().fit(X_train_all, y_train)
for name, prediction in [
    ("MAP", full.predict(X_test_all)),
    ("min. expected cost", full.predict(X_test_all, cost=cost)),
]:
    matrix = confusion_matrix(y_test, prediction)
    print(
        f"{name}: missed cancers {matrix[0, 1]}, false alarms {matrix[1, 0]}, "
        f"total cost {int((matrix * cost).sum())}"
    )
p_all = full.predict_proba(X_test_all)[:, 0]
print(
    "test samples with 1/11 < P(malignant | x) <= 1/2:",
    int(((p_all > 1 / 11) & (p_all <= 0.5)).sum()),
    "of",
    len(p_all),
)

plt.show()
