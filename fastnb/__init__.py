"""fastnb: fast Naive Bayes, drop-in compatible with scikit-learn."""

from fastnb._categorical import CategoricalNB
from fastnb._config import show_config
from fastnb._discrete import BernoulliNB, ComplementNB, MultinomialNB, PoissonNB
from fastnb._files import SKOPS_TRUSTED_TYPES, ModelFileError, load, save
from fastnb._gaussian import GaussianNB
from fastnb._kde import KernelDensityNB
from fastnb._mixed import MixedNB
from fastnb._smoothing import MEstimate
from fastnb._state import ModelState, combine_states, from_state, get_state, merge

__version__ = "0.1.0.dev0"

__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "ComplementNB",
    "GaussianNB",
    "KernelDensityNB",
    "MEstimate",
    "MixedNB",
    "ModelFileError",
    "ModelState",
    "MultinomialNB",
    "PoissonNB",
    "SKOPS_TRUSTED_TYPES",
    "__version__",
    "combine_states",
    "from_state",
    "get_state",
    "load",
    "merge",
    "save",
    "show_config",
]
