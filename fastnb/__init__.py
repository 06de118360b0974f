"""fastnb: fast Naive Bayes, drop-in compatible with scikit-learn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastnb._categorical import CategoricalNB
from fastnb._config import config_context, get_config, set_config, show_config
from fastnb._discrete import BernoulliNB, ComplementNB, MultinomialNB, PoissonNB
from fastnb._files import SKOPS_TRUSTED_TYPES, ModelFileError, load, save
from fastnb._gaussian import GaussianNB
from fastnb._kde import KernelDensityNB
from fastnb._mixed import MixedNB
from fastnb._multilabel import OneVsRestNB
from fastnb._semi_supervised import SemiSupervisedNB
from fastnb._smoothing import MEstimate
from fastnb._state import ModelState, combine_states, from_state, get_state, merge
from fastnb._version import __version__

if TYPE_CHECKING:
    from onnx import ModelProto

    from fastnb._base import BaseNB
    from fastnb._typing import MatrixLike


def to_onnx(model: BaseNB, X: MatrixLike | None = None, **kwargs: Any) -> ModelProto:
    """Convert a fitted fastnb estimator to ONNX: :func:`fastnb.onnx.to_onnx`.

    Imports :mod:`fastnb.onnx` when called, so that fastnb imports without
    the extra ``fastnb[onnx]`` (skl2onnx, onnx, onnxruntime).

    Parameters
    ----------
    model : fastnb estimator
        A fitted estimator.
    X : array-like, sparse matrix or DataFrame, default=None
        Data whose type the graph's input takes (see
        :func:`fastnb.onnx.to_onnx`).
    **kwargs
        ``initial_types``, ``target_opset``, ``options``: as
        :func:`fastnb.onnx.to_onnx` takes them.

    Returns
    -------
    onx : onnx.ModelProto

    Raises
    ------
    ImportError
        If the extra ``fastnb[onnx]`` is not installed.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import PoissonNB, to_onnx
    >>> model = PoissonNB().fit(np.array([[5, 0], [0, 3]]), ["a", "b"])
    >>> [i.name for i in to_onnx(model).graph.input]
    ['X']
    """
    from fastnb.onnx import to_onnx as convert

    return convert(model, X, **kwargs)


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
    "OneVsRestNB",
    "PoissonNB",
    "SKOPS_TRUSTED_TYPES",
    "SemiSupervisedNB",
    "__version__",
    "combine_states",
    "config_context",
    "from_state",
    "get_config",
    "get_state",
    "load",
    "merge",
    "save",
    "set_config",
    "show_config",
    "to_onnx",
]


def __dir__() -> list[str]:
    """The public names, for ``dir(fastnb)`` and completion: what ``__all__``
    names, without the names this module imports for its own use."""
    return sorted(__all__)
