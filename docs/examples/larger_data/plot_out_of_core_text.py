"""
Learning from a stream of documents
===================================

When documents arrive in batches, or do not fit in memory at once, a
Naive Bayes model can learn them one batch at a time with ``partial_fit``:
its statistics are sums over the documents, so the batches add up to the
model of all of them. This example streams generated documents through
scikit-learn's ``HashingVectorizer``, which needs no vocabulary fitted in
advance, into fastnb's :class:`~fastnb.MultinomialNB`; checks that the
streamed model equals one fitted on all the documents at once; and draws
the held-out accuracy as the batches arrive.
"""

# %%
# A stream of generated documents
# -------------------------------
# Three topics, each with its own words, and words common to all. A
# document of 3 to 15 words takes each word from its topic's list with
# probability 0.15 and from the common list otherwise, the k-th word of a
# list in proportion to 1/k. ``stream`` yields batches of documents and
# their topics, as a queue or a file read in pieces would.
import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer

from fastnb import MultinomialNB

TOPICS = {
    "weather": "rain storm wind cloud sunny forecast snow cold warm flood "
    "thunder humid frost drizzle breeze",
    "music": "song band guitar album concert drum singer tour lyrics piano "
    "chorus melody stage vinyl rhythm",
    "health": "doctor patient clinic vaccine therapy sleep diet virus nurse "
    "fever dose symptom hospital cure pulse",
}
COMMON = (
    "the of and to in is it that for on was with as at by this from be have "
    "new more about said people time year day week"
).split()
CLASSES = np.array(sorted(TOPICS))
rng = np.random.default_rng(0)


def zipf(n):
    """Probabilities in proportion to 1, 1/2, ..., 1/n."""
    weights = 1.0 / np.arange(1, n + 1)
    return weights / weights.sum()


def make_documents(n_documents):
    """Documents (strings) and their topics."""
    labels = rng.choice(CLASSES, size=n_documents)
    documents = []
    for label in labels:
        words = TOPICS[label].split()
        length = rng.integers(3, 16)
        drawn = np.where(
            rng.random(length) < 0.15,
            rng.choice(words, size=length, p=zipf(len(words))),
            rng.choice(COMMON, size=length, p=zipf(len(COMMON))),
        )
        documents.append(" ".join(drawn))
    return documents, labels


def stream(n_batches, batch_size):
    """Batches of (documents, topics)."""
    for _ in range(n_batches):
        yield make_documents(batch_size)


# %%
# Hashing words into columns
# --------------------------
# ``HashingVectorizer`` maps each word to one of ``n_features`` columns by
# a hash: no vocabulary to learn, so every batch is vectorised on its own,
# into the same columns. ``alternate_sign=False`` keeps the counts
# non-negative, as MultinomialNB needs them.
vectorizer = HashingVectorizer(n_features=2**18, alternate_sign=False, norm=None)
test_documents, y_test = make_documents(3_000)
X_test = vectorizer.transform(test_documents)

# %%
# Learning batch by batch
# -----------------------
# The first ``partial_fit`` is given every class the stream may hold.
# After each batch the model scores the held-out documents. The batches
# are kept here only to check the result below; a real stream would let
# them go.
model = MultinomialNB()
seen, accuracy, batches = [], [], []
for documents, labels in stream(n_batches=50, batch_size=100):
    X = vectorizer.transform(documents)
    model.partial_fit(X, labels, classes=CLASSES)
    batches.append((X, labels))
    seen.append(model.class_count_.sum())
    accuracy.append(model.score(X_test, y_test))
print(f"after {seen[0]:.0f} documents: accuracy {accuracy[0]:.3f}")
print(f"after {seen[-1]:.0f} documents: accuracy {accuracy[-1]:.3f}")

# %%
# The streamed model is the model of all the data
# -----------------------------------------------
# A MultinomialNB fitted once on all the batches together has the same
# counts, exactly (they are sums of whole numbers), and so the same
# probabilities.
X_all = sp.vstack([X for X, _ in batches])
y_all = np.concatenate([labels for _, labels in batches])
whole = MultinomialNB().fit(X_all, y_all)
np.testing.assert_array_equal(model.class_count_, whole.class_count_)
np.testing.assert_array_equal(model.feature_count_, whole.feature_count_)
np.testing.assert_allclose(
    model.predict_proba(X_test), whole.predict_proba(X_test), rtol=1e-12
)
print("streamed model == one fit on all the batches")

# %%
# Held-out accuracy as the batches arrive
# ---------------------------------------
# The first batches teach the most; the accuracy then levels off at what
# this corpus allows (short documents with few topic words).
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(seen, accuracy, marker="o", markersize=3, label="after each batch")
ax.axhline(
    whole.score(X_test, y_test),
    color="grey",
    linestyle="--",
    linewidth=1,
    label="one fit on all the batches",
)
ax.legend(loc="lower right")
ax.set_xscale("log")
ax.set_xlabel("documents seen (log scale)")
ax.set_ylabel("held-out accuracy")
ax.set_title("MultinomialNB.partial_fit over a stream of 100-document batches")
fig.tight_layout()
plt.show()
