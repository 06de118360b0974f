"""fastnb: fast Naive Bayes, drop-in compatible with scikit-learn."""

from fastnb._discrete import BernoulliNB, ComplementNB, MultinomialNB

__version__ = "0.1.0.dev0"

__all__ = ["BernoulliNB", "ComplementNB", "MultinomialNB", "__version__"]
