"""fastnb: fast Naive Bayes, drop-in compatible with scikit-learn."""

from fastnb._categorical import CategoricalNB
from fastnb._config import show_config
from fastnb._discrete import BernoulliNB, ComplementNB, MultinomialNB, PoissonNB
from fastnb._gaussian import GaussianNB
from fastnb._mixed import MixedNB
from fastnb._smoothing import MEstimate
from fastnb._state import ModelState, combine_states, from_state, get_state, merge

__version__ = "0.1.0.dev0"


def to_onnx(model, X=None, **kwargs):
    """Convert a fitted fastnb estimator to ONNX: :func:`fastnb.onnx.to_onnx`.

    Imports :mod:`fastnb.onnx` when called, so that fastnb imports without
    the extra ``fastnb[onnx]`` (skl2onnx, onnx, onnxruntime); raises
    ImportError, naming the extra, if it is not installed.
    """
    from fastnb.onnx import to_onnx as convert

    return convert(model, X, **kwargs)


__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "ComplementNB",
    "GaussianNB",
    "MEstimate",
    "MixedNB",
    "ModelState",
    "MultinomialNB",
    "PoissonNB",
    "__version__",
    "combine_states",
    "from_state",
    "get_state",
    "merge",
    "show_config",
    "to_onnx",
]
