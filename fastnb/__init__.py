"""fastnb: fast Naive Bayes, drop-in compatible with scikit-learn."""

from fastnb._discrete import BernoulliNB, ComplementNB, MultinomialNB
from fastnb._gaussian import GaussianNB

__version__ = "0.1.0.dev0"

__all__ = [
    "BernoulliNB",
    "ComplementNB",
    "GaussianNB",
    "MultinomialNB",
    "__version__",
]
