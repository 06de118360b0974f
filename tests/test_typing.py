"""The public API is annotated in full, and says so (the py.typed marker).

mypy checks the annotations themselves (``mypy``, configured in
pyproject.toml, in CI's lint step); this module checks that none of the
public API is left out of them: every parameter and every return of the
estimators' constructors and public methods and of the public functions.
"""

import importlib
import importlib.resources
import inspect

import pytest
from sklearn.base import clone

import fastnb

from _helpers import ESTIMATOR_NAMES

# Also run on the wheel built from the sdist (.ci/run step 3).
pytestmark = pytest.mark.wheel

METHODS = (
    "__init__",
    "fit",
    "partial_fit",
    "predict",
    "predict_proba",
    "predict_log_proba",
    "predict_joint_log_proba",
    "score",
)
# Every public function of fastnb: those its __all__ names (as of the extras'
# modules below), so that a new one cannot be left out.
FUNCTIONS = [
    name for name in fastnb.__all__ if inspect.isfunction(getattr(fastnb, name))
]


def missing_annotations(function):
    """The names of the parameters (and "return") of ``function`` that have
    no annotation."""
    signature = inspect.signature(function)
    missing = [
        name
        for name, parameter in signature.parameters.items()
        if name != "self" and parameter.annotation is inspect.Parameter.empty
    ]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def estimator_classes():
    classes = [getattr(fastnb, name) for name in ESTIMATOR_NAMES]
    try:
        dask = importlib.import_module("fastnb.dask")
    except ImportError:  # the extra fastnb[dask] is not installed
        return classes
    return classes + [getattr(dask, name) for name in dask.__all__]


@pytest.mark.parametrize(
    "cls", estimator_classes(), ids=lambda cls: f"{cls.__module__}.{cls.__name__}"
)
def test_estimators_are_annotated(cls):
    for name in METHODS:
        assert not missing_annotations(getattr(cls, name)), f"{cls.__name__}.{name}"


def test_public_functions_are_annotated():
    assert {"save", "load", "merge"} <= set(FUNCTIONS)
    modules = {"fastnb": (fastnb, FUNCTIONS)}
    for extra in ("onnx", "plot"):
        module = pytest.importorskip(f"fastnb.{extra}")
        modules[module.__name__] = (module, module.__all__)
    for module_name, (module, names) in modules.items():
        for name in names:
            function = getattr(module, name)
            where = f"{module_name}.{name}"
            assert not missing_annotations(function), where
    assert not missing_annotations(fastnb.MEstimate.__init__)


def test_the_typing_marker_is_installed():
    # PEP 561: without it, type checkers ignore the annotations of an
    # installed package.
    assert importlib.resources.files("fastnb").joinpath("py.typed").is_file()


def test_annotations_leave_the_parameters_scikit_learn_reads():
    # get_params (so clone and the estimator checks) reads the constructor's
    # signature; the annotations are strings, never evaluated.
    model = fastnb.MultinomialNB(alpha=0.5, missing="ignore")
    expected = {
        "alpha": 0.5,
        "class_prior": None,
        "fit_prior": True,
        "force_alpha": True,
        "missing": "ignore",
    }
    assert model.get_params() == clone(model).get_params() == expected
