"""
From raw text to a model, and one file
======================================

Most of a text model's time goes into its vectorizer, not into Naive
Bayes. This example builds the same spam filter twice, from the raw
messages of the SMS Spam Collection: with scikit-learn's
``CountVectorizer`` and ``MultinomialNB``, and with
:class:`fastnb.text.CountVectorizer` and :class:`fastnb.MultinomialNB`,
changing only the imports. It checks that both give the same matrix and
the same predictions, times each step, and saves the whole fastnb
pipeline, vectorizer and model, to one file that loads without running
code (:func:`fastnb.save`).

The messages are read from the shared data folder (``$FASTNB_DATA_DIR``,
else ``shared/data`` beside the checkout); where it is absent, a generated
corpus of the same size stands in for them.
"""

# %%
# The messages
# ------------
import io
import os
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import sklearn.feature_extraction.text as sk_text
import sklearn.naive_bayes as sk_naive_bayes
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

import fastnb
import fastnb.text


def shared_data():
    """The shared data folder: $FASTNB_DATA_DIR, else shared/data in a
    folder above this one (beside the checkout), or None."""
    if os.environ.get("FASTNB_DATA_DIR"):
        return Path(os.environ["FASTNB_DATA_DIR"])
    for folder in [Path.cwd(), *Path.cwd().parents]:
        if (folder / "shared" / "data").is_dir():
            return folder / "shared" / "data"
    return None


def generated_messages(rng, n):
    """Messages of two kinds of words, labelled by the kind most of theirs are."""
    spam = "free win prize cash claim call now txt mobile urgent offer".split()
    ham = "ok lunch later see you home love sorry going tonight work".split()
    labels = rng.choice(np.array(["ham", "spam"]), n, p=[0.87, 0.13])
    messages = []
    for label in labels:
        own, other = (spam, ham) if label == "spam" else (ham, spam)
        words = [
            rng.choice(own) if rng.random() < 0.7 else rng.choice(other)
            for _ in range(rng.integers(3, 20))
        ]
        messages.append(" ".join(words))
    return messages, labels


data = shared_data()
path = data / "sms_spam" / "SMSSpamCollection" if data else None
if path is not None and path.exists():
    lines = path.read_text(encoding="utf-8").splitlines()
    pairs = [line.split("\t", 1) for line in lines if line]
    labels = np.array([label for label, _ in pairs])
    messages = [message for _, message in pairs]
    source = "the SMS Spam Collection"
else:
    messages, labels = generated_messages(np.random.default_rng(0), 5574)
    source = "generated messages (the shared data folder is absent)"
train, test, y_train, y_test = train_test_split(
    list(messages), labels, test_size=0.25, random_state=42, stratify=labels
)
print(f"{len(train):,} training and {len(test):,} test messages, from {source}")

# %%
# The same model, twice
# ---------------------
# The pipelines differ in their imports only.


def pipeline(text, naive_bayes):
    return make_pipeline(text.CountVectorizer(), naive_bayes.MultinomialNB())


theirs = pipeline(sk_text, sk_naive_bayes).fit(train, y_train)
ours = pipeline(fastnb.text, fastnb).fit(train, y_train)
matrix, expected = ours[0].transform(test), theirs[0].transform(test)
same = all(
    np.array_equal(getattr(matrix, part), getattr(expected, part))
    for part in ("indptr", "indices", "data")
)
print(f"the same matrix, array for array: {same}")
print(
    f"the same predictions: {bool((ours.predict(test) == theirs.predict(test)).all())}"
)
print(f"accuracy: {(ours.predict(test) == y_test).mean():.4f}")

# %%
# Where the time goes
# -------------------
# Each step is timed as the median of five calls.


def seconds(call, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


steps = {}
for name, model, text, naive_bayes in [
    ("scikit-learn", theirs, sk_text, sk_naive_bayes),
    ("fastnb", ours, fastnb.text, fastnb),
]:
    X = model[0].transform(train)
    steps[name] = {
        "vectorize": seconds(
            lambda text=text: text.CountVectorizer().fit_transform(train)
        ),
        "fit": seconds(lambda nb=naive_bayes, X=X: nb.MultinomialNB().fit(X, y_train)),
        "predict": seconds(lambda model=model: model.predict(test)),
    }
for step in ("vectorize", "fit", "predict"):
    ratio = steps["scikit-learn"][step] / steps["fastnb"][step]
    print(
        f"{step:>9}: scikit-learn {1e3 * steps['scikit-learn'][step]:7.1f} ms, "
        f"fastnb {1e3 * steps['fastnb'][step]:6.1f} ms ({ratio:.1f}x)"
    )

figure, axes = plt.subplots(figsize=(6, 2.4))
left = np.zeros(2)
for step, colour in zip(
    ("vectorize", "fit", "predict"), ("C0", "C1", "C2"), strict=True
):
    widths = np.array([1e3 * steps[name][step] for name in ("scikit-learn", "fastnb")])
    axes.barh(["scikit-learn", "fastnb"], widths, left=left, color=colour, label=step)
    left += widths
axes.set_xlabel("milliseconds")
axes.legend(frameon=False, ncol=3, loc="lower right")
axes.set_title("A spam filter from raw messages")
figure.tight_layout()

# %%
# One file for the whole model
# ----------------------------
# The pipeline, vectorizer and all, saves to a file that holds data only:
# loading it runs no code from it (unlike pickle), and checks it first.
file = io.BytesIO()
fastnb.save(ours, file)
print(f"the file: {len(file.getvalue()):,} bytes")
file.seek(0)
loaded = fastnb.load(file)
print(
    loaded.predict(
        ["Congratulations! You won a free prize, call now", "see you at lunch"]
    )
)
