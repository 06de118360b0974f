"""
A table of mixed columns, with missing values
=============================================

:class:`~fastnb.MixedNB` fits one Naive Bayes model to a table whose columns
are of different kinds: measurements, categories, yes/no flags and counts,
each column modelled by its own family (Gaussian, kernel density,
categorical, Poisson, ...) over the same classes. With ``missing="ignore"``
a missing value is left out of its column's statistics when fitting and
out of its column's term when scoring, so a row is scored on the values it
has. This example generates a customer table with holes in every column,
fits MixedNB with families inferred from the dtypes and with families
given, fits the same table as a polars DataFrame, reads one prediction
column by column, and follows the accuracy as the share of missing values
grows.
"""

# %%
# A generated table
# -----------------
# Three customer segments (the classes 0, 1, 2) and six columns: ``age``
# (normal within a segment), ``income`` (log-normal: skewed), ``plan`` (a
# pandas categorical), ``region`` (strings), ``member`` (pandas' nullable
# booleans) and ``visits`` (Poisson counts). A share of each column's
# values is then removed: NaN in the number columns, ``None`` among the
# strings, ``pd.NA`` among the booleans and categories.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import polars as pl

from fastnb import MixedNB
from fastnb.plot import plot_contributions

rng = np.random.default_rng(0)
PLAN_PROBABILITY = np.array([[0.6, 0.3, 0.1], [0.3, 0.5, 0.2], [0.1, 0.3, 0.6]])
REGION_PROBABILITY = np.array(
    [[0.4, 0.2, 0.2, 0.2], [0.2, 0.4, 0.2, 0.2], [0.25, 0.25, 0.25, 0.25]]
)


def draw(probability, names, y):
    """One of ``names`` a row, drawn from its class's row of ``probability``."""
    cumulative = probability.cumsum(axis=1)[y]
    return np.asarray(names)[(rng.random(len(y))[:, None] > cumulative).sum(axis=1)]


def make_table(n_rows, missing_share):
    """A DataFrame of n_rows customers, ``missing_share`` of each column
    removed at random, and their segments."""
    y = rng.integers(0, 3, n_rows)
    table = pd.DataFrame(
        {
            "age": rng.normal(np.array([45.0, 35.0, 28.0])[y], 8.0),
            "income": rng.lognormal(np.array([10.8, 10.5, 10.2])[y], 0.4),
            "plan": pd.Categorical(draw(PLAN_PROBABILITY, ["basic", "plus", "pro"], y)),
            "region": draw(REGION_PROBABILITY, ["north", "south", "east", "west"], y),
            "member": pd.array(
                rng.random(n_rows) < np.array([0.7, 0.4, 0.2])[y], dtype="boolean"
            ),
            "visits": rng.poisson(np.array([2.0, 4.0, 7.0])[y]).astype(float),
        }
    )
    for name in table.columns:
        holes = rng.random(n_rows) < missing_share
        if table[name].dtype.kind == "f":
            table.loc[holes, name] = np.nan
        else:
            table[name] = table[name].astype(object).where(~holes, None)
            if name == "plan":
                table[name] = table[name].astype("category")
            elif name == "member":
                table[name] = table[name].astype("boolean")
    return table, y


X_train, y_train = make_table(5_000, missing_share=0.1)
X_test, y_test = make_table(2_000, missing_share=0.1)
print(X_train.head())
print(X_train.isna().mean().round(3).to_dict())

# %%
# Families inferred from the dtypes
# ---------------------------------
# With ``families=None`` MixedNB reads each column's dtype: float columns
# are Gaussian; categorical, string, object and boolean columns are
# categorical. ``visits`` is stored as floats, so that it can hold NaN,
# and is taken as Gaussian.
inferred = MixedNB(missing="ignore").fit(X_train, y_train)
print({family: X_train.columns[c].tolist() for family, c in inferred.families_.items()})
assert inferred.families_["gaussian"].tolist() == [0, 1, 5]
print(f"accuracy, families inferred: {inferred.score(X_test, y_test):.3f}")

# %%
# Families given
# --------------
# We know better: ``income`` is skewed (a kernel density models its shape)
# and ``visits`` are counts (Poisson). The categorical family takes the
# remaining columns.
families = {
    "gaussian": ["age"],
    "kde": ["income"],
    "poisson": ["visits"],
    "categorical": "remaining",
}
model = MixedNB(families=families, missing="ignore").fit(X_train, y_train)
print({family: X_train.columns[c].tolist() for family, c in model.families_.items()})
print(f"accuracy, families given: {model.score(X_test, y_test):.3f}")

# %%
# The same table in polars
# ------------------------
# Any data frame narwhals reads is taken as pandas' is: the same table as a
# polars DataFrame (its nulls the missing values, ``plan`` a polars
# Categorical) gives the same model, families and all, bit for bit.
train_polars = pl.from_pandas(X_train)
print(train_polars.schema)
from_polars = MixedNB(families=families, missing="ignore").fit(train_polars, y_train)
assert np.array_equal(
    from_polars.predict_proba(pl.from_pandas(X_test)), model.predict_proba(X_test)
)
print(f"accuracy, from polars: {from_polars.score(pl.from_pandas(X_test), y_test):.3f}")

# %%
# One prediction, column by column
# --------------------------------
# ``contributions`` with a pair of classes ``(a, b)`` gives each column's
# term in the log-odds ``log P(a | x) - log P(b | x)``: its log-likelihood
# ratio, whatever its family. The terms and the intercept (the prior's log
# ratio) add up to the log-odds, and a missing value's term is 0. We take a
# test row with a hole and check both. For a DataFrame the terms come as
# one, named by its columns.
row = X_test[X_test.isna().any(axis=1)].iloc[[0]]
print(row)
a = model.predict(row)[0]
b = next(c for c in model.classes_ if c != a)
terms, intercept = model.contributions(row, classes=(a, b))
joint = model.predict_joint_log_proba(row)[0]
terms = terms.iloc[0]
np.testing.assert_allclose(intercept + terms.sum(), joint[a] - joint[b], rtol=1e-9)
assert (terms[row.columns[row.isna().to_numpy()[0]]] == 0).all()
for name, term in terms.items():
    print(f"{name:>7} {term:+.3f}")

# %%
# Accuracy as values go missing
# -----------------------------
# The same model fitted and scored on tables with a growing share of each
# column removed. As the values are removed at random, the model loses
# information, not correctness: the accuracy falls towards the share of
# the most frequent class as rows keep fewer values.
shares = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
accuracy = []
for share in shares:
    train, y_fit = make_table(5_000, share)
    test, y_score = make_table(2_000, share)
    fitted = MixedNB(families=families, missing="ignore").fit(train, y_fit)
    accuracy.append(fitted.score(test, y_score))
for share, score in zip(shares, accuracy, strict=True):
    print(f"{share:.0%} missing: accuracy {score:.3f}")

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
plot_contributions(model, row, classes=(a, b), ax=left)
right.plot(shares, accuracy, marker="o")
majority = np.bincount(y_test).max() / len(y_test)
right.axhline(majority, color="grey", linestyle="--")
right.annotate(
    "most frequent class",
    (0.0, majority),
    textcoords="offset points",
    xytext=(0, 4),
    color="grey",
)
right.set_ylim(0.3, 0.85)
right.set_xlabel("share of each column missing")
right.set_ylabel("held-out accuracy")
right.set_title('MixedNB(missing="ignore")')
fig.tight_layout()
plt.show()
