"""fastnb's estimators as ONNX graphs, through skl2onnx.

Importing this module registers a converter for each of fastnb's
estimators with skl2onnx (``skl2onnx.update_registered_converter``), so
that ``skl2onnx.to_onnx`` converts them as it converts scikit-learn's
classifiers, alone or as the last step of a Pipeline (after a
``CountVectorizer`` or ``TfidfVectorizer``, say); :func:`to_onnx` converts
one estimator (fastnb.dask's too), with a default input. Needs the extra
``fastnb[onnx]`` (skl2onnx, onnx and onnxruntime).

The graph's outputs are a scikit-learn classifier's in skl2onnx: the label
(int64 for integer or boolean classes, else string) and the probability of
each class, as a list of dicts (ZipMap) unless the option ``zipmap`` is
False; the options ``zipmap``, ``nocl`` and ``output_class_labels`` work as
they do for scikit-learn's classifiers. The probabilities are float64
where the input (the first, for one input a column) is float64, else
float32, as skl2onnx types a classifier's; ZipMap's are float32 always:
ONNX's ZipMap takes no other type, so a graph of float64 input gives it
its probabilities as float32 (skl2onnx's graphs of scikit-learn's
classifiers give it float64 ones, which onnxruntime refuses as an invalid
graph). A model is converted one of two
ways, decided for each model when it is converted (:func:`sklearn_twin`):

- by skl2onnx's own converter of the scikit-learn estimator, given the
  model's fitted attributes (which are scikit-learn's), where that
  converter computes what fastnb computes: GaussianNB with
  ``var_type="diag"`` (either ``var_estimator``). Its graph computes in
  the input's float type.
- by fastnb's own graph: MultinomialNB (skl2onnx's converter sums the
  log-likelihood in float32 for float32 input, which moves probabilities
  by up to 7.7e-4 on 20 Newsgroups' counts), BernoulliNB (skl2onnx's
  converter computes ``log(1 - p)`` in float32, which moves probabilities
  by up to 2e-4 on SMS spam), ComplementNB (skl2onnx's converter stores
  the class log prior, which a ComplementNB of two classes or more does
  not add, as an initializer that no node reads, and onnxruntime warns of
  it), PoissonNB, CategoricalNB (skl2onnx's converter takes no strings and
  fails on a code past the table, which fastnb scores as an unseen
  category), MixedNB, and GaussianNB with tied or spherical variances
  (whose large terms, summed in float32, move probabilities by more than
  1e-5 on spambase). These graphs read the tables fastnb's kernels score
  with and, as the kernels do, compute the class scores in float64
  whatever the input's type (float32 input is cast to float64 before it
  meets a table); they leave out PoissonNB's ``-sum_i log(x_i!)``, the same
  for every class, on which neither the labels nor the probabilities
  depend.

Inputs are dense tensors (onnxruntime has no sparse input: make a sparse X
dense, a batch of rows at a time): one tensor of all the columns,
``(N, n_features)``, of float, double, int64 or bool; or, for a
CategoricalNB or MixedNB, one tensor a column, ``(N, 1)`` each, in the
order of X's columns and named as them (what ``skl2onnx.to_onnx(model,
X=dataframe)`` declares for a DataFrame), which lets numbers and strings
be given together. CategoricalNB's columns hold category codes (integers,
or floats holding whole numbers) or, where it was fitted on strings, the
strings; a code or string never seen in training scores as fastnb scores
an unseen category, and so does a negative code (which fastnb refuses).

KernelDensityNB, alone or as a MixedNB family, is not converted yet (its
interpolated log-density tables have no graph here), nor is a model with
``missing="ignore"`` (the graphs have no way yet to leave a NaN's feature
out of the score): both are refused with an error saying so. Also
refused with an error naming the case: a count family's log table holding
-inf, which the graph would multiply by X (``alpha=0`` and a feature some
class never had), and raw categories that are not strings (booleans,
numbers in an object column: encode them as strings or codes). The graphs
do not check their input as fastnb does: NaN, negative counts or
fractional codes give numbers, not an error.

Examples
--------
>>> import numpy as np
>>> import onnxruntime as ort
>>> from fastnb import MultinomialNB
>>> from fastnb.onnx import to_onnx
>>> X = np.array([[2, 1, 0], [3, 0, 0], [0, 1, 4], [0, 0, 3]], dtype=np.float32)
>>> model = MultinomialNB().fit(X, ["ham", "ham", "spam", "spam"])
>>> onx = to_onnx(model, options={"zipmap": False})
>>> session = ort.InferenceSession(
...     onx.SerializeToString(), providers=["CPUExecutionProvider"]
... )
>>> labels, probabilities = session.run(None, {"X": X[[0, 3]]})
>>> labels
array(['ham', 'spam'], dtype=object)
>>> bool(np.allclose(probabilities, model.predict_proba(X[[0, 3]]), atol=1e-5))
True
"""

from __future__ import annotations

try:
    import skl2onnx
    from onnx import TensorProto
    from skl2onnx.algebra.onnx_operator import OnnxSubEstimator
    from skl2onnx.algebra.onnx_ops import (
        OnnxAdd,
        OnnxArgMax,
        OnnxCast,
        OnnxConcat,
        OnnxExp,
        OnnxGather,
        OnnxGreater,
        OnnxIdentity,
        OnnxLabelEncoder,
        OnnxLess,
        OnnxLog,
        OnnxMatMul,
        OnnxMul,
        OnnxOr,
        OnnxReduceMaxApi18,
        OnnxReduceSumApi11,
        OnnxReshapeApi13,
        OnnxSub,
        OnnxSum,
        OnnxWhere,
    )
    from skl2onnx.common.data_types import (
        BooleanTensorType,
        DoubleTensorType,
        FloatTensorType,
        Int64TensorType,
        StringTensorType,
        guess_proto_type,
    )
    from skl2onnx.common.utils_classifier import get_label_classes
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError(
        "fastnb.onnx needs skl2onnx and onnx: pip install 'fastnb[onnx]' "
        "(skl2onnx, onnx and onnxruntime)."
    ) from exc
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import scipy.sparse as sp
from sklearn import naive_bayes

from fastnb._base import BaseNB
from fastnb._categorical import CategoricalNB
from fastnb._discrete import BernoulliNB, ComplementNB, MultinomialNB, PoissonNB
from fastnb._gaussian import GaussianNB
from fastnb._kde import KernelDensityNB
from fastnb._mixed import MixedNB
from fastnb._registry import ESTIMATOR_NAMES, ESTIMATORS
from fastnb._validation import ignores_missing

if TYPE_CHECKING:
    from onnx import ModelProto
    from sklearn.base import BaseEstimator

    from fastnb._typing import MatrixLike

__all__ = ["sklearn_twin", "to_onnx"]

# The input types of a numeric column (skl2onnx's classifiers take these).
NUMBER_TYPES = (FloatTensorType, DoubleTensorType, Int64TensorType, BooleanTensorType)

# The estimators whose graphs multiply X by a log table.
COUNT_FAMILIES = (BernoulliNB, ComplementNB, MultinomialNB, PoissonNB)

# The scikit-learn estimator whose skl2onnx converter can serve each fastnb
# estimator (see sklearn_twin).
SKLEARN_TWINS: dict[type, Any] = {GaussianNB: naive_bayes.GaussianNB}

# The version of ai.onnx.ml's LabelEncoder used, the first with keys_strings
# and values_int64s (as skl2onnx's OrdinalEncoder uses).
LABEL_ENCODER_VERSION = 2

# What the converters accept, as skl2onnx's classifiers do.
OPTIONS = {
    "zipmap": [True, False, "columns"],
    "nocl": [True, False],
    "output_class_labels": [False, True],
}


def to_onnx(
    model: BaseNB,
    X: MatrixLike | None = None,
    *,
    initial_types: list[tuple[str, Any]] | None = None,
    target_opset: int | dict[str, int] | None = None,
    options: dict[Any, Any] | None = None,
) -> ModelProto:
    """Convert a fitted fastnb estimator to an ONNX model.

    A thin wrapper over ``skl2onnx.to_onnx`` with a default input, for
    any fastnb estimator but KernelDensityNB (see the module's description
    for the graph each gets).

    Parameters
    ----------
    model : fastnb estimator
        A fitted estimator (for a Pipeline, import :mod:`fastnb.onnx` and
        call ``skl2onnx.to_onnx``).
    X : array-like, sparse matrix or DataFrame, default=None
        Data of the kind the model will be given, whose first row sets the
        input's type (a sparse matrix: its dense type; a DataFrame: one
        input a column, named as the columns, as skl2onnx declares it).
        None, with ``initial_types`` None too: one input ``"X"`` of shape
        ``(None, n_features)``, float32 (int64 for a CategoricalNB of
        codes, string for one of strings), or, for a model whose columns
        hold both numbers and strings, one input a column, ``(None, 1)``
        each, named as ``feature_names_in_`` (else ``"x0"``, ``"x1"``,
        ...).
    initial_types : list of (str, skl2onnx type), default=None
        The inputs, as skl2onnx takes them; overrides ``X``.
    target_opset : int or dict, default=None
        The opset, as skl2onnx takes it (None: skl2onnx's latest).
    options : dict, default=None
        Converter options, as skl2onnx takes them, for example
        ``{"zipmap": False}`` for a probability tensor (float64 for float64
        input) instead of a list of dicts (whose probabilities are float32,
        the only type ONNX's ZipMap takes).

    Returns
    -------
    onx : onnx.ModelProto
        The graph's outputs are the label and the probabilities.

    Raises
    ------
    TypeError
        If ``model`` is not a fastnb estimator, or an input's type does
        not fit its column.
    sklearn.exceptions.NotFittedError
        If ``model`` is not fitted.
    ValueError
        If the model cannot be expressed as fastnb scores it (see the
        module's description).

    Examples
    --------
    >>> import numpy as np
    >>> import onnxruntime as ort
    >>> from fastnb import GaussianNB
    >>> from fastnb.onnx import to_onnx
    >>> X = np.array([[180, 75], [165, 61], [167, 62], [160, 55.0]])
    >>> model = GaussianNB(var_type="tied").fit(X, [1, 1, 2, 2])
    >>> session = ort.InferenceSession(
    ...     to_onnx(model).SerializeToString(), providers=["CPUExecutionProvider"]
    ... )
    >>> [output.name for output in session.get_outputs()]
    ['output_label', 'output_probability']
    >>> labels, probabilities = session.run(None, {"X": np.float32([[175, 70]])})
    >>> labels.tolist(), {c: round(p, 4) for c, p in probabilities[0].items()}
    ([1], {1: 0.9808, 2: 0.0192})
    """
    check_model(model)
    register(type(model))
    if initial_types is None and X is None:
        initial_types = default_inputs(model)
    elif initial_types is None and sp.issparse(X):
        X = cast("Any", X)[:1].toarray()  # (issparse narrows nothing for mypy)
    return skl2onnx.to_onnx(
        model,
        X=X if initial_types is None else None,
        initial_types=initial_types,
        target_opset=target_opset,
        # skl2onnx adds the options of the graphs it delegates to into the
        # dict it is given: a copy leaves the caller's as it was.
        options=None if options is None else dict(options),
    )


def default_inputs(model):
    """The inputs :func:`to_onnx` declares for ``model`` when given none."""
    kinds = column_kinds(model)
    if len(set(kinds)) == 1:
        if kinds[0] == "string":
            return [("X", StringTensorType([None, len(kinds)]))]
        if isinstance(model, CategoricalNB):
            return [("X", Int64TensorType([None, len(kinds)]))]
        return [("X", FloatTensorType([None, len(kinds)]))]
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        names = [f"x{j}" for j in range(len(kinds))]
    types = {"string": StringTensorType, "number": FloatTensorType}
    return [
        (str(name), types[kind]([None, 1]))
        for name, kind in zip(names, kinds, strict=True)
    ]


# ---------------------------------------------------------------------------
# What converts
# ---------------------------------------------------------------------------


def check_model(model):
    """Raise unless ``model`` is a fitted fastnb estimator an ONNX graph can
    score as fastnb does."""
    if not isinstance(model, BaseNB):
        raise TypeError(
            f"fastnb.onnx converts fastnb's estimators ({', '.join(ESTIMATOR_NAMES)});"
            f" got {type(model).__name__}. For a Pipeline, import fastnb.onnx and "
            "call skl2onnx.to_onnx."
        )
    model._check_fitted_state()
    if ignores_missing(model):
        raise ValueError(
            f"fastnb.onnx does not convert a {type(model).__name__} with "
            "missing='ignore' yet: its graph would score a NaN instead of "
            "leaving its feature out. Keep the model with fastnb.save, skops or "
            "pickle instead, or fit it with missing='error'."
        )
    for estimator, where in family_estimators(model):
        if isinstance(estimator, KernelDensityNB):
            raise ValueError(
                f"fastnb.onnx does not convert {where} yet: KernelDensityNB's "
                "interpolated log-density tables have no ONNX graph. Keep the "
                "model with fastnb.save, skops or pickle instead."
            )
        if not isinstance(estimator, COUNT_FAMILIES):
            continue
        tables = scoring_tables(estimator)
        if not np.isfinite(tables.table).all() or tables.certain is not None:
            raise ValueError(
                f"{where} gives some feature a log-probability of -inf in some "
                "class (alpha=0 and a count of zero), which fastnb takes as "
                "that class being impossible only where the feature is present "
                "(or absent); the ONNX graph multiplies X by the log table, and "
                "0 x -inf is NaN. Fit with alpha > 0 to convert it."
            )
    column_kinds(model)  # (raw categories other than strings raise)


def family_estimators(model):
    """``(estimator, name)`` for the model, or for each family of a MixedNB."""
    if isinstance(model, MixedNB):
        return [
            (estimator, f"MixedNB's {family!r} family")
            for family, estimator in model.estimators_.items()
        ]
    return [(model, type(model).__name__)]


def scoring_tables(estimator):
    """The arrays fastnb's kernels score ``estimator`` with (the state
    protocol's ``_tables`` hook): the graphs compute what the kernels do.

    The tables are feature-major with the classes padded to whole blocks
    (the first ``n_classes`` columns are the classes').
    """
    return estimator._final_tables()[1]


def column_kinds(model):
    """What each column of the model's input holds: "number" or "string"."""
    if isinstance(model, CategoricalNB):
        return category_kinds(model, range(model.n_features_in_))
    kinds = ["number"] * model.n_features_in_
    if isinstance(model, MixedNB) and "categorical" in model.estimators_:
        positions = model.families_["categorical"]
        estimator = model.estimators_["categorical"]
        for position, kind in zip(
            positions, category_kinds(estimator, positions), strict=True
        ):
            kinds[position] = kind
    return kinds


def category_kinds(estimator, positions):
    """For each feature of a CategoricalNB, whether it reads codes ("number")
    or strings; ``positions``: the features' columns, for error messages."""
    kinds = []
    for position, categories in zip(positions, estimator.categories_, strict=True):
        if categories.dtype.kind in "iu":
            kinds.append("number")
            continue
        other = [v for v in categories.tolist() if not isinstance(v, str)]
        if other:
            raise ValueError(
                f"Column {position} holds raw categories that are not strings (such "
                f"as {other[0]!r}); the ONNX graph reads category codes or strings: "
                "fit on the codes, or on the values as strings."
            )
        kinds.append("string")
    return kinds


def label_classes(classes):
    """The labels the graph outputs for ``classes``, as skl2onnx's
    classifiers give them: strings, or else int64 (scikit-learn takes no
    class labels but strings and whole numbers)."""
    if all(isinstance(c, str) for c in classes.tolist()):
        return classes.astype(str)
    return classes.astype(np.int64)


def sklearn_twin(model: BaseNB) -> BaseEstimator | None:
    """The scikit-learn estimator skl2onnx's converter converts for
    ``model``, or None where fastnb's own graph does.

    Parameters
    ----------
    model : fastnb estimator
        A fitted estimator.

    Returns
    -------
    twin : scikit-learn estimator or None
        For GaussianNB with ``var_type="diag"``: an unfitted scikit-learn
        GaussianNB holding the model's fitted attributes, the only thing
        its converter reads (``classes_`` as the graph labels them). None
        for the rest, whose graphs are fastnb's (see the module's
        description).
    """
    twins = [
        twin
        for fastnb_estimator, twin in SKLEARN_TWINS.items()
        if isinstance(model, fastnb_estimator)
    ]
    if not twins or (isinstance(model, GaussianNB) and model.var_type != "diag"):
        return None
    twin = twins[0]()
    for name in dir(model):
        if name.endswith("_") and not name.startswith("_"):
            try:
                setattr(twin, name, getattr(model, name))
            except AttributeError:  # coef_ of a GaussianNB without tied variances
                continue
    twin.classes_ = label_classes(model.classes_)
    return twin


# ---------------------------------------------------------------------------
# skl2onnx's hooks
# ---------------------------------------------------------------------------


def calculate_shapes(operator):
    """skl2onnx's shape calculator for a fastnb estimator: checks the model
    and its inputs, sets the label's type and the outputs' shapes."""
    model = operator.raw_operator
    check_model(model)
    check_inputs(model, operator.inputs)
    n_samples = operator.inputs[0].get_first_dimension()
    labels = label_classes(get_label_classes(operator.scope_inst, model))
    label_type = StringTensorType if labels.dtype.kind == "U" else Int64TensorType
    operator.outputs[0].type = label_type([n_samples])
    operator.outputs[1].type.shape = [n_samples, len(labels)]
    # ai.onnx.ml's ZipMap takes float probabilities only: a graph of double
    # input gives its ZipMap float ones (skl2onnx declares the probabilities
    # in the input's type, which onnxruntime then refuses).
    zipmap = operator.scope_inst.get_options(model, {"zipmap": True})["zipmap"]
    if zipmap is True and isinstance(operator.outputs[1].type, DoubleTensorType):
        operator.outputs[1].type = FloatTensorType([n_samples, len(labels)])


def check_inputs(model, inputs):
    """TypeError or ValueError unless ``inputs`` (skl2onnx variables) give
    the model's columns: one input of them all, or (CategoricalNB, MixedNB)
    one input a column."""
    kinds = column_kinds(model)
    n_features = len(kinds)
    name = type(model).__name__
    if len(inputs) == 1:
        width = inputs[0].type.shape[1] if len(inputs[0].type.shape) == 2 else -1
        if width not in (None, n_features):
            raise ValueError(
                f"{name} takes {n_features} columns; its input "
                f"{inputs[0].raw_name!r} has shape {inputs[0].type.shape}."
            )
        given = [inputs[0]] * n_features
    elif not isinstance(model, CategoricalNB | MixedNB):
        raise ValueError(
            f"{name} takes one input of its {n_features} columns; got "
            f"{len(inputs)} inputs (one input a column is for CategoricalNB and "
            "MixedNB). For a DataFrame, give X.to_numpy(np.float32)."
        )
    elif len(inputs) == n_features:
        names = getattr(model, "feature_names_in_", None)
        if names is not None and [i.raw_name for i in inputs] != names.tolist():
            raise ValueError(
                f"{name} takes one input a column, in the order of its columns "
                f"{names.tolist()}; got inputs {[i.raw_name for i in inputs]}."
            )
        given = inputs
    else:
        raise ValueError(
            f"{name} takes one input of its {n_features} columns or one input a "
            f"column; got {len(inputs)} inputs."
        )
    for position, (kind, variable) in enumerate(zip(kinds, given, strict=True)):
        expected = StringTensorType if kind == "string" else NUMBER_TYPES
        if not isinstance(variable.type, expected):
            raise TypeError(
                f"Column {position} of {name} holds {kind}s: its input "
                f"{variable.raw_name!r} must be a "
                f"{'string' if kind == 'string' else 'float, double, int64 or bool'} "
                f"tensor; got {type(variable.type).__name__}."
            )


def convert(scope, operator, container):
    """skl2onnx's converter for a fastnb estimator: skl2onnx's graph of the
    scikit-learn twin where there is one, else fastnb's graph."""
    model = operator.raw_operator
    op_version = container.target_opset
    labels, probabilities = operator.outputs[:2]
    twin = sklearn_twin(model)
    if twin is not None:
        nocl = scope.get_options(model, {"nocl": False})["nocl"]
        twin_graph = OnnxSubEstimator(
            twin,
            operator.inputs[0],
            op_version=op_version,
            options={"zipmap": False, "nocl": nocl},
        )
        OnnxIdentity(
            twin_graph[0], op_version=op_version, output_names=[labels]
        ).add_to(scope, container)
        # In the input's type, which ZipMap may not take (calculate_shapes).
        OnnxCast(
            twin_graph[1],
            to=guess_proto_type(probabilities.type),
            op_version=op_version,
            output_names=[probabilities],
        ).add_to(scope, container)
        return
    columns = Columns(operator.inputs, model.n_features_in_, op_version)
    scores = class_scores(model, columns)
    classes = label_classes(get_label_classes(scope, model))
    best = OnnxArgMax(scores, axis=1, keepdims=0, op_version=op_version)
    OnnxGather(
        classes,
        best,
        op_version=op_version,
        output_names=[labels],
    ).add_to(scope, container)
    # Normalised as fastnb's kernels do: the row's largest score taken out
    # before exp, so that the sum cannot overflow or underflow to 0.
    shifted = OnnxSub(
        scores,
        OnnxReduceMaxApi18(scores, axes=[1], keepdims=1, op_version=op_version),
        op_version=op_version,
    )
    log_total = OnnxLog(
        OnnxReduceSumApi11(
            OnnxExp(shifted, op_version=op_version),
            axes=[1],
            keepdims=1,
            op_version=op_version,
        ),
        op_version=op_version,
    )
    OnnxCast(
        OnnxExp(
            OnnxSub(shifted, log_total, op_version=op_version), op_version=op_version
        ),
        to=guess_proto_type(probabilities.type),
        op_version=op_version,
        output_names=[probabilities],
    ).add_to(scope, container)


# ---------------------------------------------------------------------------
# fastnb's graphs
# ---------------------------------------------------------------------------


class Columns:
    """The model's input columns as a graph reads them: from one input of all
    the columns, or from one input a column."""

    def __init__(self, inputs, n_features, op_version):
        self.inputs = inputs
        self.n_features = n_features
        self.op_version = op_version

    def block(self, positions, to=None):
        """The columns at ``positions`` as one (N, len(positions)) tensor,
        cast to ``to`` (a TensorProto type; None: as given)."""
        positions = np.asarray(positions, dtype=np.int64)
        if len(self.inputs) > 1:
            pieces = [
                self.cast(self.inputs[p], self.inputs[p].type, to) for p in positions
            ]
            if len(pieces) == 1:
                return pieces[0]
            return OnnxConcat(*pieces, axis=1, op_version=self.op_version)
        X = self.inputs[0]
        if not np.array_equal(positions, np.arange(self.n_features)):
            X = OnnxGather(X, positions, axis=1, op_version=self.op_version)
        return self.cast(X, self.inputs[0].type, to)

    def cast(self, tensor, given, to):
        """``tensor`` (of skl2onnx type ``given``) cast to ``to``, if need be."""
        if to is None or guess_proto_type(given) == to:
            return tensor
        return OnnxCast(tensor, to=to, op_version=self.op_version)


def class_scores(model, columns):
    """The graph of each class's joint log-likelihood, (N, n_classes) doubles,
    up to a term the same for every class."""
    if not isinstance(model, MixedNB):
        part, intercept = likelihood(model, columns, np.arange(model.n_features_in_))
        if not intercept.any():
            return part  # (ComplementNB of two classes or more: no prior)
        return OnnxAdd(part, intercept, op_version=columns.op_version)
    # The mixed model's prior, plus each family's log-likelihood of its
    # columns: its joint log-likelihood less the prior it adds.
    scoring = scoring_tables(model)
    intercept = scoring.log_prior.copy()
    parts = []
    for family, estimator in scoring.estimators.items():
        part, family_intercept = likelihood(estimator, columns, model.families_[family])
        parts.append(part)
        intercept += family_intercept - scoring_tables(estimator).log_prior
    total = (
        parts[0] if len(parts) == 1 else OnnxSum(*parts, op_version=columns.op_version)
    )
    return OnnxAdd(total, intercept, op_version=columns.op_version)


def likelihood(estimator, columns, positions):
    """``(part, intercept)``: the graph of the estimator's class scores of
    its columns at ``positions`` less their intercept, (N, n_classes)
    doubles, and the intercept, (n_classes,)."""
    scoring = scoring_tables(estimator)
    intercept = classes_of(scoring, scoring.intercept)
    op_version = columns.op_version
    if isinstance(estimator, GaussianNB):
        part = gaussian_part(scoring, columns, positions)
    elif isinstance(estimator, CategoricalNB):
        rows = categorical_rows(estimator, scoring, columns, positions)
        part = OnnxReduceSumApi11(
            OnnxGather(
                classes_of(scoring, scoring.table), rows, axis=0, op_version=op_version
            ),
            axes=[1],
            keepdims=0,
            op_version=op_version,
        )
    else:
        X = columns.block(positions, TensorProto.DOUBLE)
        threshold = estimator._counts_binarize()
        if threshold is not None:
            # A value counts as 1 above the threshold, else 0 (BernoulliNB).
            X = OnnxCast(
                OnnxGreater(
                    X, np.array([threshold], dtype=np.float64), op_version=op_version
                ),
                to=TensorProto.DOUBLE,
                op_version=op_version,
            )
        part = OnnxMatMul(X, classes_of(scoring, scoring.table), op_version=op_version)
    return part, intercept


def classes_of(scoring, table):
    """A table of ``scoring`` without the padding classes (its last axis
    runs over the classes, padded to whole blocks)."""
    n_classes = len(scoring.log_prior)
    return np.ascontiguousarray(table[..., :n_classes])


def gaussian_part(scoring, columns, positions):
    """``-0.5 sum_i (x_i - theta_ci)^2 / var_ci`` for each class: the
    deviations from each class's means, not the square expanded (whose terms
    cancel)."""
    op_version = columns.op_version
    theta = classes_of(scoring, scoring.theta).T
    half_inv_var = -0.5 * classes_of(scoring, scoring.inv_var).T
    X = columns.block(positions, TensorProto.DOUBLE)
    # (N, 1, F) less (K, F): (N, K, F).
    rows = OnnxReshapeApi13(
        X, np.array([-1, 1, len(positions)], dtype=np.int64), op_version=op_version
    )
    deviations = OnnxSub(rows, theta, op_version=op_version)
    squares = OnnxMul(deviations, deviations, op_version=op_version)
    return OnnxReduceSumApi11(
        OnnxMul(squares, half_inv_var, op_version=op_version),
        axes=[2],
        keepdims=0,
        op_version=op_version,
    )


def categorical_rows(estimator, scoring, columns, positions):
    """The row of the log table each value reads, (N, n_features) int64:
    its category's, or its feature's row for unseen categories.

    Codes are checked against each feature's categories (past them, or
    negative: unseen); strings are looked up in its categories (others:
    unseen).
    """
    op_version = columns.op_version
    offsets = scoring.offsets.astype(np.int64)
    # Each feature's unseen row comes after its categories' rows.
    unseen = offsets[1:] - 1
    kinds = category_kinds(estimator, positions)
    codes = np.array(
        [j for j, kind in enumerate(kinds) if kind == "number"], dtype=np.int64
    )
    pieces = []
    if len(codes):
        values = columns.block(positions[codes], TensorProto.INT64)
        limit = unseen[codes] - offsets[codes]
        outside = OnnxOr(
            OnnxLess(values, np.array([0], dtype=np.int64), op_version=op_version),
            OnnxGreater(values, limit, op_version=op_version),
            op_version=op_version,
        )
        pieces.append(
            OnnxAdd(
                OnnxWhere(outside, limit, values, op_version=op_version),
                offsets[codes],
                op_version=op_version,
            )
        )
    for j, kind in enumerate(kinds):
        if kind == "string":
            categories = estimator.categories_[j]
            pieces.append(
                OnnxLabelEncoder(
                    columns.block([positions[j]]),
                    keys_strings=categories.tolist(),
                    values_int64s=(offsets[j] + np.arange(len(categories))).tolist(),
                    default_int64=int(unseen[j]),
                    op_version=LABEL_ENCODER_VERSION,
                )
            )
    if len(pieces) == 1:
        return pieces[0]
    return OnnxConcat(*pieces, axis=1, op_version=op_version)


def register(estimator):
    """Register a fastnb estimator class with skl2onnx (done at import for
    fastnb's; :func:`to_onnx` does it for subclasses, such as fastnb.dask's)."""
    skl2onnx.update_registered_converter(
        estimator,
        f"Fastnb{estimator.__name__}",
        calculate_shapes,
        convert,
        options=OPTIONS,
    )


for _estimator in ESTIMATORS.values():
    register(_estimator)
