"""Input from other array-API libraries (PyTorch, CuPy, array-api-strict).

The kernels read NumPy arrays in the CPU's memory, so an array of another
library is copied to one (or viewed, where the library shares its memory
through DLPack) before anything reads it, whether or not scikit-learn's
``array_api_dispatch`` is on. With it on, fastnb follows scikit-learn's
rules for what comes out: a prediction is given back in the namespace and
on the device of its X, and a fitted model refuses X of another namespace
or device than the one it was fitted on (ValueError, scikit-learn's
message). The fitted attributes stay NumPy arrays: the statistics are
computed and kept by the CPU kernels. The fit's namespace is not part of a
model's state: a model rebuilt by from_state, load or merge takes NumPy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from sklearn import get_config
from sklearn.externals import array_api_compat
from sklearn.utils._array_api import get_namespace_and_device, move_to

from fastnb._frames import refuse_lazy

if TYPE_CHECKING:
    from fastnb._base import BaseNB


class Namespace(NamedTuple):
    """Where an input array lives: its array-API namespace and device."""

    xp: Any
    device: Any


def is_foreign(value: object) -> bool:
    """Whether ``value`` is an array of an array-API library other than NumPy.

    Dask's arrays are left out: scikit-learn's checks compute them, and
    fastnb.dask hands the estimators NumPy blocks.
    """
    if value is None or (type(value) is np.ndarray and value.dtype.kind != "V"):
        # Most inputs, without array_api_compat's checks (a tenth of a
        # small partial_fit). (A void dtype may be JAX's float0.)
        return False
    return (
        array_api_compat.is_array_api_obj(value)
        and not array_api_compat.is_numpy_array(value)
        and not array_api_compat.is_dask_array(value)
    )


def as_numpy(value: Any) -> Any:
    """``value`` as a NumPy array on the CPU if it is another library's array
    (is_foreign); anything else (NumPy arrays, lists, sparse matrices,
    DataFrames, None) as it is, but a lazy frame (TypeError: refuse_lazy)."""
    if not is_foreign(value):
        refuse_lazy(value)
        return value
    return move_to(value, xp=np, device="cpu")


def input_namespace(X: object) -> Namespace | None:
    """The namespace and device the outputs for X go back to: X's own where
    ``array_api_dispatch`` is on and X is another library's array; None
    (NumPy) otherwise."""
    if not get_config()["array_api_dispatch"] or not is_foreign(X):
        return None
    xp, _, device = get_namespace_and_device(X)
    return Namespace(xp, device)


def in_namespace(result: np.ndarray, namespace: Namespace | None) -> Any:
    """A NumPy ``result`` moved to X's ``namespace`` and device; as it is for
    NumPy X (None), and for labels the namespace has no dtype for (strings,
    objects), which stay NumPy arrays."""
    if namespace is None or result.dtype.kind not in "biuf":
        return result
    return move_to(result, xp=namespace.xp, device=namespace.device)


def namespace_key(namespace: Namespace | None) -> tuple[str, str] | None:
    """What a model keeps of the namespace it was fitted in: None for NumPy,
    else the namespace's name and the device's repr (strings, so that a
    pickle or a skops file of the model holds no object of the library)."""
    if namespace is None:
        return None
    return namespace.xp.__name__, repr(namespace.device)


def keep_fit_namespace(estimator: BaseNB, namespace: Namespace | None) -> None:
    """Record the namespace of the X a model was fitted on (nothing for NumPy)."""
    key = namespace_key(namespace)
    if key is not None:
        estimator._fit_namespace = key
    elif hasattr(estimator, "_fit_namespace"):
        del estimator._fit_namespace


def check_fit_namespace(
    estimator: BaseNB, namespace: Namespace | None, method: str
) -> None:
    """With ``array_api_dispatch`` on, raise ValueError if X's namespace or
    device (``namespace``) is not the one the model was fitted on, as
    scikit-learn's estimators do."""
    if not get_config()["array_api_dispatch"]:
        return
    fitted = vars(estimator).get("_fit_namespace")
    given = namespace_key(namespace)
    if fitted == given:
        return
    raise ValueError(
        f"Inputs passed to {type(estimator).__name__}.{method}() must use the "
        "same namespace and the same device as those passed to fit(): the "
        f"model was fitted on {described(fitted)}, and {method} was given "
        f"{described(given)}."
    )


def described(key: tuple[str, str] | None) -> str:
    """A namespace_key in words, for error messages."""
    if key is None:
        return "NumPy or array-like input"
    name, device = key
    return f"{name} arrays on device {device}"
