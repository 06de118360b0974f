"""
Exporting a model to ONNX
=========================

:mod:`fastnb.onnx` turns a fitted fastnb model into an ONNX graph, which
onnxruntime (or any ONNX runtime, in any language) runs without Python,
fastnb or scikit-learn. This example exports two models, a
:class:`~fastnb.GaussianNB` on float32 measurements and a
:class:`~fastnb.MixedNB` on a pandas table of numbers and strings, writes
each to an ``.onnx`` file, runs the files with onnxruntime, and compares
the labels and probabilities with fastnb's.
"""

# %%
# A GaussianNB on float32 data
# ----------------------------
# The breast cancer data set bundled with scikit-learn: 569 tumours, 30
# measurements each. :func:`fastnb.onnx.to_onnx` declares one input
# ``"X"`` of shape ``(None, 30)``, float32 by default. The option
# ``zipmap=False`` makes the probabilities a tensor (rather than a list of
# dicts). A GaussianNB with the default diagonal variances is converted by
# skl2onnx's own converter of scikit-learn's GaussianNB, which computes in
# the input's float type, here float32.
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np
import onnxruntime as ort
import pandas as pd
from sklearn.datasets import load_breast_cancer

from fastnb import GaussianNB, MixedNB
from fastnb.onnx import to_onnx

X, y = load_breast_cancer(return_X_y=True)
X = X.astype(np.float32)
gaussian = GaussianNB().fit(X, y)
gaussian_graph = to_onnx(gaussian, options={"zipmap": False})

# %%
# Writing and running the file
# ----------------------------
# The graph is written to a file in a temporary directory, as it would be
# shipped, and an onnxruntime session reads it back. The session's outputs
# are the label and the probabilities of each class.
directory = tempfile.TemporaryDirectory()
path = os.path.join(directory.name, "gaussian_nb.onnx")
with open(path, "wb") as file:
    file.write(gaussian_graph.SerializeToString())
print(f"{os.path.basename(path)}: {os.path.getsize(path)} bytes")

session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
print("inputs:", [(i.name, i.type, i.shape) for i in session.get_inputs()])
print("outputs:", [o.name for o in session.get_outputs()])
labels, onnx_gaussian = session.run(None, {"X": X})

fastnb_gaussian = gaussian.predict_proba(X)
np.testing.assert_array_equal(labels, gaussian.predict(X))
np.testing.assert_allclose(onnx_gaussian, fastnb_gaussian, atol=1e-5)
gaussian_difference = np.abs(onnx_gaussian - fastnb_gaussian).max(axis=1)
print(f"largest probability difference: {gaussian_difference.max():.1e}")

# %%
# Every label is fastnb's, and the probabilities differ by about float32's
# rounding.
#
# A MixedNB on a table of numbers and strings
# -------------------------------------------
# A generated table: a temperature (Gaussian), a city (a string category)
# and a number of visits (Poisson counts). Given the DataFrame as ``X``,
# ``to_onnx`` declares one input a column, ``(None, 1)`` each, named as the
# columns, so that numbers and strings go in side by side. MixedNB is
# converted by fastnb's own graph, which computes the class scores in
# float64.
rng = np.random.default_rng(0)
n_rows = 3_000
segment = rng.integers(0, 2, n_rows)
table = pd.DataFrame(
    {
        "temperature": rng.normal(20.0 + 3.0 * segment, 4.0),
        "city": np.where(
            rng.random(n_rows) < 0.3 + 0.3 * segment,
            "oslo",
            rng.choice(["rome", "lima"], n_rows),
        ),
        "visits": rng.poisson(2.0 + 1.5 * segment).astype(float),
    }
)
mixed = MixedNB(
    families={
        "gaussian": ["temperature"],
        "categorical": ["city"],
        "poisson": ["visits"],
    }
).fit(table, segment)
mixed_graph = to_onnx(mixed, X=table, options={"zipmap": False})

path = os.path.join(directory.name, "mixed_nb.onnx")
with open(path, "wb") as file:
    file.write(mixed_graph.SerializeToString())
session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
print("inputs:", [(i.name, i.type, i.shape) for i in session.get_inputs()])

feeds = {
    "temperature": table[["temperature"]].to_numpy(),
    "city": table[["city"]].to_numpy(dtype=object),
    "visits": table[["visits"]].to_numpy(),
}
labels, onnx_mixed = session.run(None, feeds)
fastnb_mixed = mixed.predict_proba(table)
np.testing.assert_array_equal(labels, mixed.predict(table))
np.testing.assert_allclose(onnx_mixed, fastnb_mixed, atol=1e-10)
mixed_difference = np.abs(onnx_mixed - fastnb_mixed).max(axis=1)
print(f"largest probability difference: {mixed_difference.max():.1e}")
directory.cleanup()

# %%
# Probabilities side by side
# --------------------------
# Left, each row's probability of class 1 from onnxruntime against
# fastnb's: every point lies on the diagonal. Right, each row's largest
# difference over the classes, on a log scale, against fastnb's
# probability (a difference of exactly 0 is drawn at 1e-18). The table's
# float columns make the MixedNB graph's inputs float64, and its
# differences are float64's rounding.
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
for name, onnx_proba, fastnb_proba in [
    ("GaussianNB, float32", onnx_gaussian, fastnb_gaussian),
    ("MixedNB, float64", onnx_mixed, fastnb_mixed),
]:
    left.scatter(fastnb_proba[:, 1], onnx_proba[:, 1], s=6, label=name)
left.plot([0, 1], [0, 1], color="grey", linewidth=0.8)
left.set_xlabel("fastnb: P(class 1)")
left.set_ylabel("onnxruntime: P(class 1)")
left.legend()

for name, fastnb_proba, difference in [
    ("GaussianNB, float32", fastnb_gaussian, gaussian_difference),
    ("MixedNB, float64", fastnb_mixed, mixed_difference),
]:
    right.scatter(fastnb_proba[:, 1], np.maximum(difference, 1e-18), s=4, label=name)
right.set_yscale("log")
right.set_xlabel("fastnb: P(class 1)")
right.set_ylabel("|onnxruntime - fastnb|, largest over the classes")
right.legend()
fig.tight_layout()
plt.show()
