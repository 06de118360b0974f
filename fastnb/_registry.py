"""The estimators, by name: the one list the rest of fastnb reads them from.

A state, a model file or a Dask or ONNX wrapper names an estimator by its
class name; only the classes here are ever constructed from such a name.
Above the families (it imports them), below the modules that look
estimators up by name (fastnb._state, fastnb._files, fastnb.dask,
fastnb.onnx) and the package's face.
"""

from fastnb._categorical import CategoricalNB
from fastnb._discrete import BernoulliNB, ComplementNB, MultinomialNB, PoissonNB
from fastnb._gaussian import GaussianNB
from fastnb._kde import KernelDensityNB
from fastnb._mixed import MixedNB

# Class name -> class, in alphabetical order.
ESTIMATORS = {
    cls.__name__: cls
    for cls in (
        BernoulliNB,
        CategoricalNB,
        ComplementNB,
        GaussianNB,
        KernelDensityNB,
        MixedNB,
        MultinomialNB,
        PoissonNB,
    )
}
ESTIMATOR_NAMES = tuple(ESTIMATORS)
