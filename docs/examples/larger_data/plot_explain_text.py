"""
Explaining a text classifier
============================

A Naive Bayes prediction is a sum of one term per feature, so it can be
read. This example generates a corpus of a few thousand documents on four
topics, fits a bag-of-words :class:`~fastnb.MultinomialNB`, and reads it
three ways: the words that separate the topics most
(``most_informative_features``), each word's term in one document's
prediction (``contributions``), and a figure of those terms
(:func:`fastnb.plot.plot_contributions`).
"""

# %%
# A generated corpus
# ------------------
# Four topics, each with its own words, and words common to all of them.
# A document draws 5 to 30 words: each is a word of its topic with
# probability 0.25, a word of one other topic (drawn once for the
# document) with probability 0.1, and a common word otherwise; the words of
# each list are drawn with Zipf-like probabilities (the k-th word in
# proportion to 1/k), so that a few words of each list are frequent and the
# rest rare. Some topic words belong to two topics ("market" to finance and
# cooking, "launch" to space and finance, "team" to sports and space).
import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import MultinomialNB as SklearnMultinomialNB

from fastnb import MultinomialNB
from fastnb.plot import plot_contributions

TOPICS = {
    "sports": "match team goal season coach league player score win referee "
    "stadium fans transfer injury final",
    "cooking": "recipe oven flour butter sauce garlic bake market taste onion "
    "pepper simmer dough salt kitchen",
    "space": "orbit rocket launch moon satellite mission planet telescope "
    "astronaut gravity crew team solar probe comet",
    "finance": "market stock bank shares investor rate launch profit bond "
    "earnings fund inflation price dividend loan",
}
COMMON = (
    "the of and to a in is it that for on was with as at by this from "
    "be have new more about said people time year day first last week"
).split()

rng = np.random.default_rng(0)


def zipf(n_words):
    """Probabilities in proportion to 1, 1/2, ..., 1/n_words."""
    weights = 1.0 / np.arange(1, n_words + 1)
    return weights / weights.sum()


def make_corpus(n_documents):
    """Documents (strings) and their topics."""
    names = list(TOPICS)
    labels = rng.choice(names, size=n_documents)
    documents = []
    for label in labels:
        words = TOPICS[label].split()
        other = TOPICS[rng.choice([name for name in names if name != label])].split()
        length = rng.integers(5, 31)
        kind = rng.random(length)
        drawn = np.where(
            kind < 0.25,
            rng.choice(words, size=length, p=zipf(len(words))),
            np.where(
                kind < 0.35,
                rng.choice(other, size=length, p=zipf(len(other))),
                rng.choice(COMMON, size=length, p=zipf(len(COMMON))),
            ),
        )
        documents.append(" ".join(drawn))
    return documents, labels


documents, labels = make_corpus(4_000)
train_docs, test_docs, y_train, y_test = train_test_split(
    documents, labels, test_size=0.25, random_state=0
)
print(test_docs[0][:120], "...")

# %%
# The model
# ---------
# ``CountVectorizer`` turns the documents into a sparse matrix of word
# counts; fastnb's MultinomialNB fits it as scikit-learn's does (the same
# parameters, attributes and probabilities, which we check).
vectorizer = CountVectorizer()
X_train = vectorizer.fit_transform(train_docs)
X_test = vectorizer.transform(test_docs)
model = MultinomialNB().fit(X_train, y_train)
print(f"{X_train.shape[0]} documents, {X_train.shape[1]} words")
print(f"held-out accuracy: {model.score(X_test, y_test):.3f}")

reference = SklearnMultinomialNB().fit(X_train, y_train)
np.testing.assert_allclose(
    model.predict_proba(X_test), reference.predict_proba(X_test), rtol=1e-10
)

# %%
# The words that separate the topics most
# ---------------------------------------
# ``most_informative_features`` ranks each word by the ratio of its
# probability in the topic where it is most likely to that in the topic
# where it is least likely (as NLTK ranks features). Topic words rank
# first; the common words, as likely in every topic, rank last, with
# ratios close to 1.
table = model.most_informative_features(n=None, feature_names=vectorizer)
print(table.head(8).round(1).to_string())
print(table.tail(3).round(2).to_string())
last = table.feature[-(len(COMMON) - 1) :]
assert set(last) == set(COMMON) - {"a"}

# %%
# ``a`` is not among the words: CountVectorizer's default token pattern
# keeps words of two letters or more.
#
# One document's terms
# --------------------
# With one class, ``contributions`` gives each word's term in the joint
# log-likelihood of that class: its count times the class's log
# probability of the word (a word absent from the document contributes
# nothing, and the terms of a sparse X are sparse). The terms plus the
# intercept are exactly ``predict_joint_log_proba``.
x = X_test[[1]]
predicted = model.predict(x)[0]
terms, intercept = model.contributions(x, classes=predicted)
assert sp.issparse(terms)
column = list(model.classes_).index(predicted)
np.testing.assert_allclose(
    intercept + terms.sum(), model.predict_joint_log_proba(x)[0, column], rtol=1e-12
)
print(f"document: {test_docs[1]}")
print(f"true topic {y_test[1]}, predicted {predicted}")

# %%
# With a pair of classes the terms are the log-odds of one against the
# other: each word's log-likelihood ratio between the two topics. That is
# what the figure draws, the predicted topic against the runner-up, the
# largest terms first: words in blue pull towards the predicted topic,
# words in red away from it. The common words' terms are small next to
# the topic words'.
proba = model.predict_proba(x)[0]
runner_up = model.classes_[np.argsort(proba)[-2]]
pair_terms, pair_intercept = model.contributions(x, classes=(predicted, runner_up))
log_odds = np.log(proba[column]) - np.log(proba[list(model.classes_).index(runner_up)])
np.testing.assert_allclose(pair_intercept + pair_terms.sum(), log_odds, rtol=1e-9)

ax = plot_contributions(model, x, n=12, feature_names=vectorizer)
ax.figure.set_size_inches(7, 4.5)
ax.figure.tight_layout()
plt.show()
