"""
Spam or ham, worked by hand
===========================

Six short messages, three spam and three ham, are enough to fit a
multinomial and a Bernoulli Naive Bayes model with Laplace smoothing
(``alpha=1``). This example computes every word probability and the
posterior of a new message by hand, checks that fastnb's fitted attributes
and ``predict_proba`` give the same numbers, and shows a message on which
the two models disagree: the multinomial model counts how often a word
occurs, the Bernoulli model only whether it occurs, and also scores the
words that are absent.
"""

# %%
# The training messages
# ---------------------
#
# :class:`~sklearn.feature_extraction.text.CountVectorizer` turns each
# message into a row of word counts, one column per word of the
# vocabulary (lower-cased, sorted alphabetically).

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer

from fastnb import BernoulliNB, MultinomialNB

messages = [
    "Win cash now",
    "Free cash prize",
    "Win free prize now",
    "Lunch meeting today",
    "Project meeting notes",
    "Cash for lunch",
]
labels = ["spam", "spam", "spam", "ham", "ham", "ham"]

vectorizer = CountVectorizer()
X = vectorizer.fit_transform(messages)
words = vectorizer.get_feature_names_out()
counts = pd.DataFrame(X.toarray(), columns=words, index=labels)
print(counts)

# %%
# Word counts per class
# ---------------------
#
# The multinomial model needs, for each class, how many times each word
# occurs in that class's messages, and the total number of words of the
# class. The three spam messages hold 10 words, the three ham messages 9,
# and the vocabulary has :math:`V = 11` words.

spam_counts = counts.loc["spam"].sum()
ham_counts = counts.loc["ham"].sum()
table = pd.DataFrame({"spam": spam_counts, "ham": ham_counts})
print(table.T)
print("words in spam:", spam_counts.sum(), " words in ham:", ham_counts.sum())
print("vocabulary size V =", len(words))

# %%
# Multinomial Naive Bayes with Laplace smoothing
# ----------------------------------------------
#
# Laplace smoothing adds one virtual occurrence of every word to every
# class, so that a word never seen in a class keeps a small probability:
#
# .. math::
#
#     P(w \mid c) = \frac{\text{count}(w, c) + 1}{N_c + V}
#
# with :math:`N_c` the number of words in class :math:`c`. For spam the
# denominator is :math:`10 + 11 = 21`, for ham :math:`9 + 11 = 20`. The
# word "cash" occurs twice in spam and once in ham, so
# :math:`P(\text{cash} \mid \text{spam}) = 3/21 = 0.143` and
# :math:`P(\text{cash} \mid \text{ham}) = 2/20 = 0.100`; "free" occurs
# twice in spam and never in ham: :math:`3/21` and :math:`1/20`.

V = len(words)
p_spam_hand = (spam_counts + 1) / (spam_counts.sum() + V)
p_ham_hand = (ham_counts + 1) / (ham_counts.sum() + V)
multinomial_table = pd.DataFrame({"P(w | spam)": p_spam_hand, "P(w | ham)": p_ham_hand})
print(multinomial_table.round(4))

# %%
# fastnb's :class:`~fastnb.MultinomialNB` keeps the same numbers as
# logarithms in ``feature_log_prob_``, one row per class in the order of
# ``classes_`` (sorted: ham before spam). The class priors are the class
# frequencies, 3/6 each, kept in ``class_log_prior_``.

multinomial = MultinomialNB(alpha=1.0).fit(X, labels)
print("classes:", multinomial.classes_)
print("feature counts:\n", multinomial.feature_count_)
print("priors:", np.exp(multinomial.class_log_prior_))

np.testing.assert_allclose(
    np.exp(multinomial.feature_log_prob_), np.vstack([p_ham_hand, p_spam_hand])
)
np.testing.assert_allclose(np.exp(multinomial.class_log_prior_), [0.5, 0.5])

# %%
# The posterior of a new message
# ------------------------------
#
# The new message is "Free lunch, totally free!". "totally" is not in the
# vocabulary, so the vectorizer drops it; what remains is "free" twice and
# "lunch" once.

new_message = ["Free lunch, totally free!"]
x_new = vectorizer.transform(new_message)
print({w: int(n) for w, n in zip(words, x_new.toarray()[0], strict=True) if n})

# %%
# The multinomial model multiplies the prior by the probability of each
# word, once per occurrence (the multinomial coefficient is the same for
# both classes and cancels):
#
# .. math::
#
#     P(\text{spam}) \, P(\text{free} \mid \text{spam})^2 \,
#     P(\text{lunch} \mid \text{spam})
#     = \frac{1}{2} \cdot \left(\frac{3}{21}\right)^2 \cdot \frac{1}{21}
#     = 4.859 \times 10^{-4}
#
# .. math::
#
#     P(\text{ham}) \, P(\text{free} \mid \text{ham})^2 \,
#     P(\text{lunch} \mid \text{ham})
#     = \frac{1}{2} \cdot \left(\frac{1}{20}\right)^2 \cdot \frac{3}{20}
#     = 1.875 \times 10^{-4}
#
# Dividing each score by their sum gives the posterior:
# :math:`P(\text{spam} \mid x) = 4.859 / (4.859 + 1.875) = 0.722`.

score_spam = 0.5 * (3 / 21) ** 2 * (1 / 21)
score_ham = 0.5 * (1 / 20) ** 2 * (3 / 20)
posterior_multinomial = np.array([score_ham, score_spam]) / (score_ham + score_spam)
print(f"scores: spam {score_spam:.4e}, ham {score_ham:.4e}")
print("hand posterior (ham, spam):", posterior_multinomial.round(4))
print("fastnb predict_proba:      ", multinomial.predict_proba(x_new)[0].round(4))
print("prediction:", multinomial.predict(x_new)[0])

np.testing.assert_allclose(multinomial.predict_proba(x_new)[0], posterior_multinomial)

# %%
# Bernoulli Naive Bayes with Laplace smoothing
# --------------------------------------------
#
# The Bernoulli model describes a message by which words it contains, not
# how often. For each class it estimates the probability that a message
# contains the word, from the number of the class's messages that do:
#
# .. math::
#
#     P(w \text{ present} \mid c) = \frac{\text{docs}(w, c) + 1}{D_c + 2}
#
# with :math:`D_c = 3` messages per class; the 2 counts the two outcomes,
# present and absent. "free" is in 2 of the 3 spam messages and in no ham
# message: :math:`3/5 = 0.6` and :math:`1/5 = 0.2`.

documents = (counts > 0).astype(int)
docs_spam = documents.loc["spam"].sum()
docs_ham = documents.loc["ham"].sum()
q_spam_hand = (docs_spam + 1) / (3 + 2)
q_ham_hand = (docs_ham + 1) / (3 + 2)
bernoulli_table = pd.DataFrame(
    {
        "docs in spam": docs_spam,
        "docs in ham": docs_ham,
        "P(present | spam)": q_spam_hand,
        "P(present | ham)": q_ham_hand,
    }
)
print(bernoulli_table)

bernoulli = BernoulliNB(alpha=1.0).fit(X, labels)
np.testing.assert_allclose(
    np.exp(bernoulli.feature_log_prob_), np.vstack([q_ham_hand, q_spam_hand])
)

# %%
# The Bernoulli posterior of the same message multiplies, over all 11 words
# of the vocabulary, :math:`P(\text{present} \mid c)` for the two words the
# message contains and :math:`1 - P(\text{present} \mid c)` for the nine it
# does not. The second "free" adds nothing. For spam, "free" gives 3/5,
# "lunch" 1/5; the absence of the four other words seen in two spam
# messages (cash, now, prize, win) gives :math:`(2/5)^4`, and the absence
# of the five words never seen in spam (for, meeting, notes, project,
# today) gives :math:`(4/5)^5`:
#
# .. math::
#
#     \frac{1}{2} \cdot \frac{3}{5} \cdot \frac{1}{5} \cdot
#     \left(\frac{2}{5}\right)^4 \cdot \left(\frac{4}{5}\right)^5
#     = 5.033 \times 10^{-4}
#
# For ham, "free" gives 1/5 and "lunch" 3/5; the absence of "meeting" (in
# two ham messages) gives 2/5, that of the five words seen in one ham
# message (cash, for, notes, project, today) :math:`(3/5)^5`, and that of
# the three words never seen in ham (now, prize, win) :math:`(4/5)^3`:
#
# .. math::
#
#     \frac{1}{2} \cdot \frac{1}{5} \cdot \frac{3}{5} \cdot \frac{2}{5}
#     \cdot \left(\frac{3}{5}\right)^5 \cdot \left(\frac{4}{5}\right)^3
#     = 9.555 \times 10^{-4}
#
# so :math:`P(\text{spam} \mid x) = 5.033 / (5.033 + 9.555) = 0.345`. The
# code below does the same product word by word.

present = x_new.toarray()[0] > 0
bernoulli_spam = 0.5 * np.prod(np.where(present, q_spam_hand, 1 - q_spam_hand))
bernoulli_ham = 0.5 * np.prod(np.where(present, q_ham_hand, 1 - q_ham_hand))
posterior_bernoulli = np.array([bernoulli_ham, bernoulli_spam]) / (
    bernoulli_ham + bernoulli_spam
)
print(f"scores: spam {bernoulli_spam:.4e}, ham {bernoulli_ham:.4e}")
print("hand posterior (ham, spam):", posterior_bernoulli.round(4))
print("fastnb predict_proba:      ", bernoulli.predict_proba(x_new)[0].round(4))
print("prediction:", bernoulli.predict(x_new)[0])

np.testing.assert_allclose(bernoulli.predict_proba(x_new)[0], posterior_bernoulli)

# %%
# The two models disagree. The multinomial model sees "free" twice, and
# each occurrence multiplies the odds for spam by
# :math:`(3/21) / (1/20) = 2.86`. The Bernoulli model counts "free" once
# (a factor :math:`(3/5) / (1/5) = 3` for spam) and also notices that the
# message lacks "now", "prize" and "win", words of two of the three spam
# messages: each of these absences multiplies the odds for ham by
# :math:`(4/5) / (2/5) = 2`.
#
# Which words push towards which class
# ------------------------------------
#
# The log-ratio :math:`\log P(w \mid \text{spam}) - \log P(w \mid
# \text{ham})` of each word is what one occurrence adds to the log-odds of
# spam under the multinomial model (and what the word's presence adds under
# the Bernoulli model, before the absent words are counted).

multinomial_ratio = multinomial.feature_log_prob_[1] - multinomial.feature_log_prob_[0]
bernoulli_ratio = bernoulli.feature_log_prob_[1] - bernoulli.feature_log_prob_[0]
order = np.argsort(multinomial_ratio)

fig, (ax_words, ax_post) = plt.subplots(
    1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [2, 1]}
)
positions = np.arange(V)
ax_words.barh(positions - 0.2, multinomial_ratio[order], 0.4, label="MultinomialNB")
ax_words.barh(positions + 0.2, bernoulli_ratio[order], 0.4, label="BernoulliNB")
ax_words.set_yticks(positions, words[order])
ax_words.axvline(0, color="black", linewidth=0.8)
ax_words.set_xlabel("log P(w | spam) - log P(w | ham)")
ax_words.set_title("Evidence of each word (> 0: spam)")
ax_words.legend(loc="lower right")

models = ["MultinomialNB", "BernoulliNB"]
spam_posteriors = [posterior_multinomial[1], posterior_bernoulli[1]]
ax_post.bar(models, spam_posteriors, color=["tab:blue", "tab:orange"])
ax_post.axhline(0.5, color="black", linestyle="--", linewidth=0.8)
ax_post.set_ylim(0, 1)
ax_post.set_ylabel("P(spam | message)")
ax_post.set_title('"Free lunch, totally free!"')
for i, value in enumerate(spam_posteriors):
    ax_post.text(i, value + 0.02, f"{value:.3f}", ha="center")
fig.tight_layout()
plt.show()
