"""What the test modules share: the estimators with valid data, comparisons, data.

Import it (``import _helpers`` or ``from _helpers import ...``): pytest puts
this folder on ``sys.path`` (``pythonpath`` in pyproject.toml).

- ``Case``: an estimator in one configuration, with a maker of data it
  models and what its input may be (dtypes, containers); ``CASES``: every
  fastnb estimator, some in two or three configurations, with small valid
  data and how each must refuse bad input. ``ESTIMATOR_NAMES``: the public
  estimators, which every list of cases covers (test_against_reference.py
  crosses its own grid of ``Case`` variants with the reference).
  ``case_params``: pytest parameters over cases and their inputs.
- The containers X is given in (``DENSE``, ``SPARSE``, ``as_container``,
  ``sparse_with_zeros``) and the data makers (``counts_data``,
  ``codes_data``, ``random_counts``, ...).
- ``assert_same_state``: two values equal all the way down (a fitted model's
  ``vars``, its sub-estimators, dicts, lists, arrays, scalars), exactly or to
  rounding. It walks whatever the model holds, so it needs no list of
  attributes and keeps working when the internals change.
- ``assert_same_model``: the same outputs on some X, then the same state.
- ``assert_same_fit``: two fits of the same rows (one of them by blocks, in
  another order) hold the same statistics, exactly but for Gaussian moments
  (``MOMENTS``, to rounding); ``exact`` rounds floats so their sums are exact.
- ``tol``: the relative tolerance of results from input of a float dtype
  (float64's for other input: raw values, DataFrames).
- ``require_data``: a file of the shared data folder, or a skip naming it;
  ``read_adult``, ``read_uci`` and ``split_uci`` read its data sets.
- ``run_child``: Python code run in a fresh interpreter, for what could
  crash one; ``local_client``: a Dask cluster of two worker processes.
- ``runnable_variants``: the instruction-set variants of the kernels that
  were built and that this CPU runs.
"""

import contextlib
import dataclasses
import math
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import fetch_20newsgroups
from sklearn.model_selection import train_test_split

import fastnb
import fastnb._registry
from fastnb import reference
from fastnb._base import Deferred

# ---------------------------------------------------------------------------
# The shared data folder
# ---------------------------------------------------------------------------

REPOSITORY = Path(__file__).resolve().parents[1]


def data_dir():
    """``$FASTNB_DATA_DIR``, else ``shared/data`` in the folder beside the checkout."""
    configured = os.environ.get("FASTNB_DATA_DIR", "").strip()
    return Path(configured) if configured else REPOSITORY.parent / "shared" / "data"


def require_data(relative_path):
    """The path of a file of the shared data folder, or skip naming the missing path."""
    path = data_dir() / relative_path
    if not path.exists():
        pytest.skip(
            f"shared data file {path} is not available "
            "(set FASTNB_DATA_DIR to the shared data folder)"
        )
    return path


# ---------------------------------------------------------------------------
# Child processes
# ---------------------------------------------------------------------------


def run_child(code, folder, timeout=120):
    """Run Python ``code`` in a fresh interpreter in ``folder``; its CompletedProcess.

    For calls that could crash the interpreter: a regression then fails a
    test instead of ending the run. ``folder`` should be outside the
    checkout, so that the child imports the installed fastnb (or the one
    ``PYTHONPATH`` names: the child inherits the environment). Raises
    subprocess.TimeoutExpired after ``timeout`` seconds.
    """
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=folder,
    )


def fetch_newsgroups(data_home, **options):
    """20 Newsgroups' train and test bunches, through scikit-learn's loader
    on the cache in ``data_home`` (nothing downloaded)."""
    return [
        fetch_20newsgroups(
            subset=subset, data_home=data_home, download_if_missing=False, **options
        )
        for subset in ("train", "test")
    ]


# The columns of the UCI Adult files, adult/adult.data and adult/adult.test.
ADULT_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
ADULT_NUMERIC = [
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
]


def read_adult(path, skiprows=0, na_values=None):
    """Features and labels; labels lose a final '.'. '?' stays a category of
    its own, or with ``na_values="?"`` is a missing value (NaN)."""
    frame = pd.read_csv(
        path,
        header=None,
        names=ADULT_COLUMNS,
        skipinitialspace=True,
        skiprows=skiprows,
        keep_default_na=False,
        na_values=na_values,
    )
    labels = frame.pop("income").str.rstrip(".").to_numpy()
    return frame, labels


def read_uci(path, label_column):
    """A UCI data file of categories: X (strings, as objects) and y."""
    frame = pd.read_csv(path, header=None, dtype=str, keep_default_na=False)
    y = frame.pop(label_column).to_numpy()
    return frame.to_numpy(dtype=object), y


def split_uci(path, label_column):
    """read_uci's X and y, split as the data README's figures are."""
    X, y = read_uci(path, label_column)
    return train_test_split(X, y, test_size=0.25, random_state=42, stratify=y)


# ---------------------------------------------------------------------------
# A Dask cluster
# ---------------------------------------------------------------------------


# The scheduler's HTTP server (its health and metrics pages: the dashboard
# is off) on a free port of the loopback interface: on the default, 8787,
# it warned and moved where another cluster on the machine held that port.
SCHEDULER_HTTP = {"dashboard_address": "127.0.0.1:0"}


@contextlib.contextmanager
def local_client(**dask_config):
    """A Client (the default scheduler while it is open) of a LocalCluster of
    two worker processes of one thread, each under a nanny that restarts it,
    the scheduler made under ``dask_config`` (Dask's settings, by name)."""
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set(dask_config):
        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            scheduler_kwargs=SCHEDULER_HTTP,
        )
    with cluster, Client(cluster) as client:
        yield client


# ---------------------------------------------------------------------------
# Tolerances
# ---------------------------------------------------------------------------

FLOAT_DTYPES = (np.float64, np.float32)
# Relative tolerance of results from input of a float dtype: two computations
# of the same model (another order of summation, chunks, another oracle).
RTOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}


def tol(dtype):
    """The relative tolerance for results from input of ``dtype``.

    Input that is not a float array (``None``, as a case's "native" input
    has, or object) holds float64 numbers, if any.
    """
    if dtype is None or np.dtype(dtype) == object:
        dtype = np.float64
    return RTOL[np.dtype(dtype)]


def scores_tol(model, rtol):
    """The relative tolerance of ``model``'s scores where its attributes take
    ``rtol``: at least float32's for a binned KernelDensityNB, alone or as a
    MixedNB family (fastnb or its reference), which interpolates and sums
    log densities kept in single precision (fastnb._kde)."""
    name = type(model).__name__
    if name == "MixedNB" and "kde" in (model.families or {}):
        binned = (model.kde_params or {}).get("algorithm", "binned") == "binned"
    else:
        binned = name == "KernelDensityNB" and model.algorithm == "binned"
    return max(rtol, RTOL[np.dtype(np.float32)]) if binned else rtol


# The absolute tolerance of a value compared to rounding, as a fraction of
# rtol times the magnitude it comes from (the largest of its array, or of its
# row of joint log-likelihoods), by the dtype of the value: float64 values
# computed another way agree far better than the rtol of their input allows,
# float32 ones only to their own rounding.
ATOL_FRACTION = {np.dtype(np.float64): 1e-3, np.dtype(np.float32): 1.0}


OUTPUTS = ("predict_joint_log_proba", "predict_log_proba", "predict_proba")


# ---------------------------------------------------------------------------
# Comparisons
# ---------------------------------------------------------------------------


def public_attributes(model):
    """The fitted attributes a user reads (names ending in one "_"), by name."""
    names = [
        name
        for name in dir(model)
        if name.endswith("_") and not name.startswith("_") and not name.endswith("__")
    ]
    return {name: getattr(model, name) for name in names if hasattr(model, name)}


def _assert_same_array(actual, expected, rtol, where):
    assert isinstance(actual, np.ndarray), f"{where}: {type(actual).__name__}"
    assert actual.dtype == expected.dtype, f"{where}: {actual.dtype} {expected.dtype}"
    assert actual.shape == expected.shape, f"{where}: {actual.shape} {expected.shape}"
    if expected.dtype.kind == "O":
        for i, (a, e) in enumerate(zip(actual.ravel(), expected.ravel(), strict=True)):
            assert_same_state(a, e, rtol, f"{where}.flat[{i}]")
    elif expected.dtype.kind not in "fc":
        assert_array_equal(actual, expected, err_msg=where, strict=True)
    elif rtol is None:
        # Bit for bit, but for the payload of NaNs: the sign of zeros counts.
        assert np.array_equal(actual, expected, equal_nan=True), where
        assert np.array_equal(np.signbit(actual), np.signbit(expected)), where
    else:
        finite = np.abs(expected[np.isfinite(expected)])
        scale = finite.max() if finite.size else 0.0
        atol = ATOL_FRACTION.get(expected.dtype, 1.0) * rtol * scale
        assert_allclose(
            actual,
            expected,
            rtol=rtol,
            atol=atol,
            equal_nan=True,
            err_msg=where,
        )


def built(value):
    """``value``, or what it builds if it is a fitted attribute not built yet."""
    if isinstance(value, Deferred):
        return value.function(*value.arguments)
    return value


def assert_same_state(actual, expected, rtol=None, where="model", attributes=vars):
    """Assert that two values are equal all the way down.

    Estimators (and any object with a ``__dict__``) are compared through
    ``attributes`` (``vars``: everything they hold; ``public_attributes``:
    what a user reads), recursively, so nested estimators are walked too.
    Dicts by keys (in order, but for attribute dicts) and values, lists and
    tuples item by item, arrays by dtype, shape and values, scalars by value
    with NaN equal to NaN. Float values are compared bit for bit when
    ``rtol`` is None, else to ``rtol`` (absolute: ATOL_FRACTION of ``rtol``
    times the largest finite magnitude of the array); integers, strings and
    the rest exactly. A fitted attribute not built yet (fastnb._base.Deferred)
    is compared as what it builds.
    """
    actual, expected = built(actual), built(expected)
    assert type(actual) is type(expected), (
        f"{where}: {type(actual).__name__} is not {type(expected).__name__}"
    )
    if isinstance(expected, np.ndarray):
        _assert_same_array(actual, expected, rtol, where)
    elif sp.issparse(expected):
        assert actual.format == expected.format, where
        _assert_same_array(actual.toarray(), expected.toarray(), rtol, where)
    elif isinstance(expected, dict):
        assert list(actual) == list(expected), f"{where}: {list(actual)}"
        for key in expected:
            assert_same_state(
                actual[key], expected[key], rtol, f"{where}[{key!r}]", attributes
            )
    elif isinstance(expected, list | tuple):
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same_state(a, e, rtol, f"{where}[{i}]", attributes)
    elif isinstance(expected, float | np.floating):
        if rtol is None or not math.isfinite(expected):
            same = actual == expected or (math.isnan(actual) and math.isnan(expected))
            assert same and np.signbit(actual) == np.signbit(expected), (
                f"{where}: {actual!r} != {expected!r}"
            )
        else:
            assert math.isclose(actual, expected, rel_tol=rtol), (
                f"{where}: {actual!r} != {expected!r}"
            )
    elif hasattr(expected, "__dict__") and not isinstance(expected, type):
        # An estimator, or any other object (an MEstimate): its attributes,
        # in any order (fit and partial_fit may set them in another order).
        state, expected_state = attributes(actual), attributes(expected)
        assert sorted(state) == sorted(expected_state), (
            f"{where}: {sorted(state)} != {sorted(expected_state)}"
        )
        for key in sorted(expected_state):
            assert_same_state(
                state[key], expected_state[key], rtol, f"{where}.{key}", attributes
            )
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


def assert_same_outputs(
    model, expected, X, rtol=None, X_expected=None, methods=OUTPUTS
):
    """Assert the same outputs on X: predict equal, the rest as ``assert_same_state``.

    To rounding, the absolute tolerance of every output is ATOL_FRACTION of
    ``rtol`` times the largest joint log-likelihood of the row:
    log-probabilities and probabilities are normalised from those, and carry
    their rounding error; predictions are compared where no two classes tie
    to ``rtol``. A binned KernelDensityNB's outputs take ``scores_tol``.
    ``expected`` may be another kind of model (scikit-learn's, the reference)
    reading ``X_expected`` (X if None); then dtypes are not compared.
    ``methods``: the outputs compared besides predict (predict_joint_log_proba
    among them).
    """
    X_expected = X if X_expected is None else X_expected
    same_kind = type(model) is type(expected)
    if rtol is not None:
        rtol = scores_tol(model, rtol)
    outputs = {method: getattr(model, method)(X) for method in methods}
    desired_outputs = {
        method: getattr(expected, method)(X_expected) for method in methods
    }
    jll = desired_outputs["predict_joint_log_proba"]
    scale = np.maximum(1.0, np.abs(np.where(np.isfinite(jll), jll, 0.0)).max(axis=1))
    predicted, expected_predicted = model.predict(X), expected.predict(X_expected)
    if rtol is not None and jll.shape[1] > 1:
        # To rounding, two classes that (nearly) tie may come either way.
        top = np.sort(jll, axis=1)[:, -2:]
        clear = ~(top[:, 1] - top[:, 0] <= 4 * rtol * scale)
        predicted, expected_predicted = predicted[clear], expected_predicted[clear]
    assert_array_equal(predicted, expected_predicted, strict=True)
    for method in methods:
        actual, desired = outputs[method], desired_outputs[method]
        atol_scale = ATOL_FRACTION[np.result_type(actual, desired)] * scale
        if not same_kind:
            actual, desired = actual.astype(np.float64), desired.astype(np.float64)
        if rtol is None:
            assert_same_state(actual, desired, None, method)
        else:
            assert actual.dtype == desired.dtype, method
            _assert_close_by_row(actual, desired, rtol, atol_scale, method)


def _assert_close_by_row(actual, desired, rtol, atol_scale, where):
    """|actual - desired| <= rtol * (|desired| + atol_scale of the row)."""
    assert actual.shape == desired.shape, where
    both_inf = np.isinf(desired) & (actual == desired)
    # Equal infinities differ by 0, not by inf - inf (NaN, and a warning).
    error = np.zeros(desired.shape, dtype=np.result_type(actual, desired))
    np.abs(np.subtract(actual, desired, out=error, where=~both_inf), out=error)
    limit = rtol * (np.abs(np.where(both_inf, 0.0, desired)) + atol_scale[:, None])
    bad = ~(error <= limit)
    assert not bad.any(), (
        f"{where}: {bad.sum()} values differ by more than rtol={rtol}; first at "
        f"{np.argwhere(bad)[0].tolist()}: {actual[bad][0]!r} != {desired[bad][0]!r}"
    )


def assert_same_model(model, expected, X, rtol=None, attributes=vars):
    """Assert the same outputs on X, then the same state (``assert_same_state``).

    The outputs come first: they build any table a model keeps for scoring,
    so that both models hold their tables when their states are compared.
    """
    assert_same_outputs(model, expected, X, rtol)
    assert_same_state(model, expected, rtol, type(model).__name__, attributes)


# Statistics merged by the pairwise formula (GaussianNB's, MixedNB's gaussian
# family's), and what is computed from them: two fits of the same rows whose
# blocks were merged in another order give them equal to rounding.
MOMENTS = ("mean", "ssd", "sample_mean", "sample_ssd")
MOMENTS_RTOL = 1e-12


def exact(values):
    """Float arrays rounded to multiples of 1/8 (their sums are exact in any
    order); anything else as it is."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":
        return np.round(values * 8) / 8
    return values


def has_moments(model):
    """Whether the fitted model holds Gaussian moments."""
    keys = fastnb.get_state(model).statistics
    return any(key.rsplit("/", 1)[-1] in MOMENTS for key in keys)


def assert_same_fit(model, expected):
    """The same statistics as ``expected`` (exactly, but moments to
    MOMENTS_RTOL), the same parameters and fitted attributes."""
    state, expected_state = fastnb.get_state(model), fastnb.get_state(expected)
    statistics = expected_state.statistics
    assert sorted(state.statistics) == sorted(statistics)
    for key, value in statistics.items():
        rtol = MOMENTS_RTOL if key.rsplit("/", 1)[-1] in MOMENTS else None
        assert_same_state(state.statistics[key], value, rtol, f"statistics[{key!r}]")
    assert_same_state(
        dataclasses.replace(state, statistics={}),
        dataclasses.replace(expected_state, statistics={}),
    )
    # classes_, categories_, the tables: to rounding if made of moments.
    rtol = MOMENTS_RTOL if has_moments(expected) else None
    assert_same_state(public_attributes(model), public_attributes(expected), rtol)


def _as_float64(value):
    """Floats as float64 (arrays) or float (scalars), in lists too; ints as int."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.astype(np.float64)
    if isinstance(value, list | tuple):
        return type(value)(_as_float64(item) for item in value)
    if isinstance(value, float | np.floating):
        return float(value)
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return int(value)
    return value


def assert_matches_reference(model, oracle, X, rtol, X_oracle=None):
    """Scores of X and every fitted attribute of the NumPy reference, to ``rtol``.

    Predictions and joint log-likelihoods (from which the rest follows); the
    reference computes in float64: values are compared as float64.
    """
    assert_same_outputs(model, oracle, X, rtol, X_oracle, ["predict_joint_log_proba"])
    for name, expected in public_attributes(oracle).items():
        # The reference's statistics_ are fastnb.get_state(model).statistics.
        actual = (
            fastnb.get_state(model).statistics
            if name == "statistics_"
            else getattr(model, name)
        )
        assert_same_state(_as_float64(actual), _as_float64(expected), rtol, name)


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


def random_counts(rng, rates):
    """Poisson counts of ``rates`` (samples x features), 40% of them zeroed.

    Every row gets one count more in a random column, so that no row is
    empty; a third of the columns (at least one) are multiplied by factors
    between 0.3 and 1.7, so that no two classes score exactly alike.
    """
    n_samples, n_features = rates.shape
    X = rng.poisson(rates).astype(np.float64)
    X *= rng.random((n_samples, n_features)) < 0.6
    X[np.arange(n_samples), rng.integers(n_features, size=n_samples)] += 1.0
    n_fractional = max(1, n_features // 3)
    X[:, :n_fractional] *= rng.uniform(0.3, 1.7, size=(n_samples, n_fractional))
    return X


def make_counts(labels, n_samples=80, n_features=12, seed=0):
    """X, y, weights: non-negative counts, every label of ``labels``, weights > 0.

    A third of the columns hold fractional values (as tf-idf gives), so that
    no two classes score exactly alike; every row has a nonzero. The labels
    do not depend on X.
    """
    labels = np.asarray(labels)
    rng = np.random.default_rng(seed)
    X = random_counts(rng, np.full((n_samples, n_features), 1.2))
    y = labels[rng.permutation(np.arange(n_samples) % len(labels))]
    sample_weight = rng.uniform(0.2, 3.0, size=n_samples)
    return X, y, sample_weight


# Every data maker below takes (rng, class_index, n_classes, scale) and returns
# X with N_FEATURES columns whose distribution depends on the class.
N_FEATURES = 8
# Distinct values of each categorical feature: 2, 3 or 4; the words behind
# the codes, in an order unlike their sorted one.
N_CODES = [2 + j % 3 for j in range(N_FEATURES)]
WORDS = np.array(["red", "green", "blue", "amber"])


def counts_data(rng, index, n_classes, scale=1.0, n_features=N_FEATURES):
    """Counts, a third of the columns fractional; every row has a nonzero."""
    rates = rng.gamma(2.0, 1.0, size=(n_classes, n_features)) + 0.1
    return random_counts(rng, rates[index]) * scale


def continuous_data(rng, index, n_classes, scale=1.0, n_features=N_FEATURES):
    """Normal values around class centres, about a third of them zero."""
    centres = rng.normal(scale=2.0, size=(n_classes, n_features))
    spreads = rng.uniform(0.5, 2.0, size=(n_classes, n_features))
    X = centres[index] + spreads[index] * rng.normal(size=(len(index), n_features))
    kept = rng.random(X.shape) < 0.7
    # The first row of each class keeps all its values: a class of two rows
    # or more has no constant feature (no zero variance, even unsmoothed).
    kept[np.unique(index, return_index=True)[1]] = True
    return X * kept * scale


def codes_data(rng, index, n_classes, scale=1.0):
    """Category codes (feature j has N_CODES[j]), each class favouring its own.

    The first rows hold every code of every feature, so that any batch that
    starts at row 0 and has max(N_CODES) rows sees every category.
    """
    X = np.empty((len(index), N_FEATURES), dtype=np.int64)
    first = min(len(index), max(N_CODES))
    for j, n_codes in enumerate(N_CODES):
        favourite = (index + j) % n_codes
        anything = rng.integers(0, n_codes, size=len(index))
        X[:, j] = np.where(rng.random(len(index)) < 0.5, favourite, anything)
        X[:first, j] = np.arange(first) % n_codes
    return X


def strings_data(rng, index, n_classes, scale=1.0):
    """codes_data as words (a fixed-width string array)."""
    return WORDS[codes_data(rng, index, n_classes)]


def frame_data(rng, index, n_classes, scale=1.0):
    """A DataFrame: two normal columns, words, codes and counts (FRAME_FAMILIES).

    ``scale`` multiplies the normal columns.
    """
    codes = codes_data(rng, index, n_classes)
    return pd.DataFrame(
        {
            "height": scale * rng.normal(165 + 6 * index, 7),
            "weight": scale * rng.normal(60 + 4 * index, 9),
            "colour": WORDS[codes[:, 3]].astype(object),
            "size": codes[:, 1],
            "visits": rng.poisson(1.0 + index).astype(np.int64),
        }
    )


FRAME_FAMILIES = {
    "gaussian": ["height", "weight"],
    "categorical": ["colour", "size"],
    "poisson": ["visits"],
}


def mixed_array_data(rng, index, n_classes, scale=1.0):
    """Two normal columns (gaussian), then counts (bernoulli, multinomial)."""
    return np.hstack(
        [
            continuous_data(rng, index, n_classes, scale, n_features=2),
            counts_data(rng, index, n_classes, scale, n_features=N_FEATURES - 2),
        ]
    )


ARRAY_FAMILIES = {"gaussian": [0, 1], "bernoulli": [2], "multinomial": "remaining"}


def class_index(rng, n_samples, n_classes):
    """A class index per row: every class as often as the others (give or take 1)."""
    return rng.permutation(np.arange(n_samples) % n_classes)


# Rows enough for the kernels to use several threads: they use one thread per
# 65,536 values of work, and 40,000 rows of N_FEATURES are 320,000 values
# dense, about 160,000 nonzero counts sparse (test_kernels checks this).
THREADED_ROWS = 40_000


# ---------------------------------------------------------------------------
# Input containers
# ---------------------------------------------------------------------------

DENSE = ("dense_c", "dense_f")
SPARSE = ("csr", "csc")


def dense_c(X):
    """X as a C-ordered ndarray."""
    return np.ascontiguousarray(X)


def dense_f(X):
    """X as an F-ordered ndarray, not C-ordered as well (but for a row or column)."""
    X = np.asfortranarray(X)
    assert min(X.shape) <= 1 or not X.flags.c_contiguous
    return X


def with_index_dtype(X, index_dtype):
    """Set a sparse matrix's index arrays to ``index_dtype`` (scipy may downcast)."""
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    assert X.indices.dtype == index_dtype and X.indptr.dtype == index_dtype
    return X


def as_container(X, container, dtype=None):
    """X (an ndarray or a DataFrame) as ``container`` holds it, in ``dtype``.

    "native" leaves X as it is (a DataFrame, an array of strings); an
    object ``dtype`` keeps raw values (words, booleans) in the dense layouts.
    """
    if container == "native":
        return X
    X = np.asarray(X, dtype=dtype)
    if container == "dense_c":
        return dense_c(X)
    if container == "dense_f":
        return dense_f(X)
    if container == "csr":
        return sp.csr_matrix(X)
    if container == "csc":
        return sp.csc_matrix(X)
    raise ValueError(f"unknown container {container!r}")


def sparse_with_zeros(X, container, index_dtype=np.int32, share=0.3, seed=0):
    """Dense X as a CSR or CSC matrix that also stores some of its zeros.

    About ``share`` of the zeros are stored explicitly (scipy keeps them),
    so that a model must read a stored 0 as it reads a zero not stored.
    The index arrays get ``index_dtype``.
    """
    rng = np.random.default_rng(seed)
    stored = (X != 0) | (rng.random(X.shape) < share)
    rows, columns = np.nonzero(stored)
    coo = sp.coo_matrix((X[rows, columns], (rows, columns)), shape=X.shape)
    matrix = coo.tocsr() if container == "csr" else coo.tocsc()
    return with_index_dtype(matrix, index_dtype)


def take_rows(X, rows):
    """Rows of X (an ndarray, a sparse matrix or a DataFrame): a slice or indices."""
    return X.iloc[rows] if isinstance(X, pd.DataFrame) else X[rows]


def stack_rows(top, bottom):
    """The rows of ``top`` then those of ``bottom`` (ndarrays or DataFrames)."""
    if isinstance(top, pd.DataFrame):
        return pd.concat([top, bottom], ignore_index=True)
    return np.concatenate([top, bottom])


def shuffled_rows(X, n_rows, rng):
    """New rows whose column j holds values drawn from column j of X.

    No column gets a value it did not have: no new category, no new value
    out of a family's range.
    """
    picks = [rng.integers(X.shape[0], size=n_rows) for _ in range(X.shape[1])]
    if isinstance(X, pd.DataFrame):
        return pd.DataFrame(
            {c: X[c].to_numpy()[p] for c, p in zip(X.columns, picks, strict=True)}
        )
    return np.column_stack([X[p, j] for j, p in enumerate(picks)])


def set_cell(X, row, column, value):
    """A copy of X (an ndarray or a DataFrame) with one cell set to ``value``."""
    X = X.copy()
    if isinstance(X, pd.DataFrame):
        X[column] = X[column].astype(object if value is None else X[column].dtype)
        X.loc[X.index[row], column] = value
    else:
        X = X.astype(np.result_type(X.dtype, np.asarray(value).dtype))
        X[row, column] = value
    return X


def frozen_input(X, how, folder):
    """X as read-only input: "read-only" arrays, or "memmap" files in ``folder``.

    A sparse matrix gets read-only (or memory-mapped) data, indices and
    indptr. The arrays of the result are checked to be read-only.
    """

    def freeze(array, name):
        if how == "memmap":
            path = folder / f"{name}.npy"
            np.save(path, array)
            array = np.load(path, mmap_mode="r")
            assert isinstance(array, np.memmap)
        else:
            array = array.copy(order="K")
            array.setflags(write=False)
        return array

    if sp.issparse(X):
        parts = [freeze(X.data, "data"), freeze(X.indices, "indices")]
        parts.append(freeze(X.indptr, "indptr"))
        X = type(X)(tuple(parts), shape=X.shape, copy=False)
        arrays = [X.data, X.indices, X.indptr]
    else:
        X = freeze(X, "X")
        arrays = [X]
    assert not any(array.flags.writeable for array in arrays)
    return X


def drop_last_column(X):
    return X.iloc[:, :-1] if isinstance(X, pd.DataFrame) else X[:, :-1]


# ---------------------------------------------------------------------------
# The estimators
# ---------------------------------------------------------------------------

# The public estimator classes: every list of cases has each of them.
# The families (SemiSupervisedNB wraps them: test_semi_supervised.py).
ESTIMATOR_NAMES = fastnb._registry.ESTIMATOR_NAMES
ALPHA_PER_FEATURE = np.linspace(0.2, 2.5, N_FEATURES)


@dataclass(frozen=True)
class Case:
    """An estimator in one configuration, with data it takes and input it refuses.

    ``data(rng, class_index, n_classes, scale)`` makes X for those classes;
    ``scale`` multiplies its counts and continuous values (not codes).
    ``dtypes`` and ``containers`` are what X may be given as (a float dtype
    and a container of ``as_container``; ``None`` and "native" for X that is
    not a float array, or object for raw values in an ndarray of either
    layout). ``bad_cells`` maps a fault to (column, value, error
    message pattern) that fit must refuse; ``bad_params`` maps a fault to
    parameters fit must refuse, with the message pattern ("{name}" in a
    pattern stands for the estimator's class name).
    ``repeat_params``: parameters under which integer weights act exactly
    as repeated rows (GaussianNB's variance smoothing is a fraction of the
    variance of the rows as given, unweighted, as in scikit-learn).
    ``first_batch``: rows a first batch needs for partial_fit to give the
    model of fit (raw categories are coded in the order batches bring them).
    ``small_data``: the model scores a value in O(training samples) (exact
    kernel densities): the tests on tens of thousands of rows leave it out.
    """

    id: str
    name: str
    params: dict
    data: object
    dtypes: tuple = FLOAT_DTYPES
    containers: tuple = DENSE + SPARSE
    bad_cells: dict = field(default_factory=dict)
    bad_params: dict = field(default_factory=dict)
    repeat_params: dict = field(default_factory=dict)
    first_batch: int = 1
    oracle: bool = True
    small_data: bool = False

    def estimator(self, **params):
        """A new estimator of this configuration, ``params`` set on top."""
        return getattr(fastnb, self.name)(**{**self.params, **params})

    def reference(self):
        """The NumPy reference estimator of this configuration, or None."""
        if not self.oracle or not hasattr(reference, self.name):
            return None
        return getattr(reference, self.name)(**self.params)

    def message(self, pattern):
        """An error message pattern, "{name}" replaced by the class name."""
        return pattern.replace("{name}", self.name)

    @property
    def sparse(self):
        return any(container in SPARSE for container in self.containers)

    def inputs(self, containers=None):
        """(dtype, container) pairs X of this case may be given as."""
        return [
            (dtype, container)
            for dtype in self.dtypes
            for container in self.containers
            if containers is None or container in containers
        ]

    def make(self, n_samples=60, labels=("a", "b", "c"), seed=0, scale=1.0):
        """X (as ``data`` makes it), y of every label, positive weights."""
        rng = np.random.default_rng(seed)
        labels = np.asarray(labels)
        index = class_index(rng, n_samples, len(labels))
        X = self.data(rng, index, len(labels), scale)
        return X, labels[index], rng.uniform(0.2, 3.0, size=n_samples)


# The error messages below are patterns; "{name}" stands for the class name.
NON_FINITE = {
    "NaN": (1, np.nan, "Input X contains NaN"),
    "infinity": (1, np.inf, "Input X contains infinity"),
}
NEGATIVE_COUNTS = {
    "negative count": (2, -1.0, "Negative values in data passed to {name}"),
    "negative fraction": (4, -0.5, "Negative values in data passed to {name}"),
}
PRIOR_OF_WRONG_LENGTH = {
    "class_prior of wrong length": (
        {"class_prior": np.full(7, 1 / 7)},
        "Number of priors must match number of classes",
    )
}
BAD_ALPHA = {
    **PRIOR_OF_WRONG_LENGTH,
    "negative alpha": (
        {"alpha": -0.5},
        "'alpha' parameter of {name} must be a float in the range \\[0.0, inf\\)",
    ),
    "alpha of wrong length": (
        {"alpha": np.ones(2)},
        "it should contains `n_features`. Got 2 elements instead of 8",
    ),
    "negative value in alpha": (
        {"alpha": np.where(np.arange(N_FEATURES) == 3, -1.0, 1.0)},
        "All values in alpha must be greater than 0. Got -1.0 for feature 3",
    ),
}
COUNT_FAULTS = {"bad_cells": {**NON_FINITE, **NEGATIVE_COUNTS}, "bad_params": BAD_ALPHA}
# GaussianNB's fit checks for NaN, infinity and values whose squares overflow
# in one pass, with one message: "Input X contains NaN or infinity (...)".
GAUSSIAN_INFINITY = "Input X contains (NaN or )?infinity"
GAUSSIAN_FAULTS = {
    "bad_cells": {
        "NaN": (1, np.nan, "Input X contains NaN"),
        "infinity": (1, np.inf, GAUSSIAN_INFINITY),
        "minus infinity": (5, -np.inf, GAUSSIAN_INFINITY),
    },
    "bad_params": {
        "priors of wrong length": (
            {"priors": np.full(7, 1 / 7)},
            "Number of priors must match number of classes",
        ),
        "negative var_smoothing": (
            {"var_smoothing": -1.0},
            "'var_smoothing' parameter of GaussianNB must be a float",
        ),
    },
    # The variance of the rows as given sets the smoothing: none, for weights.
    "repeat_params": {"var_smoothing": 0.0},
}
# KernelDensityNB refuses NaN and infinity in one pass that names the first;
# integer weights act as repeated rows under a given bandwidth (a rule's
# bandwidth depends on the effective sample size, sum(w)**2 / sum(w**2), as
# scipy's gaussian_kde defines it).
KDE_FAULTS = {
    "bad_cells": NON_FINITE,
    "bad_params": {
        "priors of wrong length": (
            {"priors": np.full(7, 1 / 7)},
            "Number of priors must match number of classes",
        ),
        "negative adjust": (
            {"adjust": -1.0},
            "'adjust' parameter of KernelDensityNB must be a float in the range",
        ),
        "bandwidth of wrong length": (
            {"bandwidth": np.ones(3)},
            "bandwidth has 3 values; one per feature is 8",
        ),
    },
    "repeat_params": {"bandwidth": 0.7},
}
CODE_FAULTS = {
    "bad_cells": {
        "negative code": (2, -1, "Negative values in data passed to CategoricalNB"),
        "fractional code": (1, 1.5, "feature 1 has non-integer codes"),
        "NaN": (1, np.nan, "Input X contains NaN"),
    },
    "bad_params": {
        **BAD_ALPHA,
        "min_categories of wrong length": (
            {"min_categories": np.array([2, 3])},
            "'min_categories' should have shape \\(8,\\)",
        ),
    },
}

CASES = [
    Case("MultinomialNB", "MultinomialNB", {}, counts_data, **COUNT_FAULTS),
    Case(
        "ComplementNB-norm",
        "ComplementNB",
        {"norm": True, "alpha": 0.5},
        counts_data,
        **COUNT_FAULTS,
    ),
    Case(
        "BernoulliNB",
        "BernoulliNB",
        {},
        counts_data,
        bad_cells=NON_FINITE,
        bad_params=BAD_ALPHA,
    ),
    Case(
        "BernoulliNB-binarize-1",
        "BernoulliNB",
        {"binarize": 1.0, "alpha": 0.5},
        counts_data,
        bad_cells=NON_FINITE,
        bad_params=BAD_ALPHA,
    ),
    Case(
        "PoissonNB-alpha-per-feature",
        "PoissonNB",
        {"alpha": ALPHA_PER_FEATURE, "fit_prior": False},
        counts_data,
        **COUNT_FAULTS,
    ),
    Case("GaussianNB", "GaussianNB", {}, continuous_data, **GAUSSIAN_FAULTS),
    Case(
        "GaussianNB-tied",
        "GaussianNB",
        {"var_type": "tied", "var_smoothing": 1e-4},
        continuous_data,
        **GAUSSIAN_FAULTS,
    ),
    Case(
        "GaussianNB-spherical-unbiased",
        "GaussianNB",
        {"var_type": "spherical", "var_estimator": "unbiased"},
        continuous_data,
        **GAUSSIAN_FAULTS,
    ),
    Case(
        "KernelDensityNB",
        "KernelDensityNB",
        {},
        continuous_data,
        containers=DENSE,
        **KDE_FAULTS,
    ),
    Case(
        "KernelDensityNB-exact",
        "KernelDensityNB",
        {"algorithm": "exact", "bandwidth": "silverman", "adjust": 1.5},
        continuous_data,
        containers=DENSE,
        small_data=True,
        **KDE_FAULTS,
    ),
    Case(
        "CategoricalNB-codes",
        "CategoricalNB",
        {"min_categories": 3},
        codes_data,
        **CODE_FAULTS,
    ),
    Case(
        "CategoricalNB-strings",
        "CategoricalNB",
        {"alpha": fastnb.MEstimate(m=2.0)},
        strings_data,
        dtypes=(None,),
        containers=("native",),
        bad_params=PRIOR_OF_WRONG_LENGTH,
        first_batch=max(N_CODES),
        oracle=False,
    ),
    Case(
        "MixedNB-frame",
        "MixedNB",
        {"families": FRAME_FAMILIES},
        frame_data,
        dtypes=(None,),
        containers=("native",),
        bad_cells={
            "gaussian NaN": ("height", np.nan, "missing values .* \\['height'\\]"),
            "gaussian infinity": ("weight", np.inf, GAUSSIAN_INFINITY),
            "categorical missing": ("colour", None, "missing values .* \\['colour'\\]"),
            "categorical negative code": (
                "size",
                -1,
                "Negative values in data passed to CategoricalNB",
            ),
            "poisson negative count": (
                "visits",
                -2,
                "Negative values in data passed to PoissonNB",
            ),
        },
        bad_params={
            **PRIOR_OF_WRONG_LENGTH,
            "a family's bad parameter": (
                {"poisson_params": {"alpha": -1.0}},
                "'alpha' parameter of PoissonNB",
            ),
            "a prior in a family's parameters": (
                {"categorical_params": {"fit_prior": False}},
                "prior belongs to MixedNB",
            ),
            "a middle family's bad parameter": (
                {"categorical_params": {"min_categories": -3}},
                "'min_categories' parameter of CategoricalNB must be",
            ),
        },
        repeat_params={"gaussian_params": {"var_smoothing": 0.0}},
        first_batch=max(N_CODES),
        # The reference MixedNB takes families by position only, without
        # "remaining": test_against_reference.py crosses it on its own cases.
        oracle=False,
    ),
    Case(
        "MixedNB-array",
        "MixedNB",
        {"families": ARRAY_FAMILIES, "bernoulli_params": {"binarize": 1.0}},
        mixed_array_data,
        bad_cells={
            "gaussian NaN": (0, np.nan, "Input X contains NaN"),
            "multinomial negative count": (
                5,
                -1.0,
                "Negative values in data passed to MultinomialNB",
            ),
        },
        bad_params={
            **PRIOR_OF_WRONG_LENGTH,
            "a family's bad parameter": (
                {"multinomial_params": {"alpha": -1.0}},
                "'alpha' parameter of MultinomialNB",
            ),
        },
        repeat_params={"gaussian_params": {"var_smoothing": 0.0}},
        oracle=False,
    ),
]
CASE_IDS = [case.id for case in CASES]
# The cases whose kernels get THREADED_ROWS rows of work for several threads:
# raw strings are coded in Python first (the codes are CategoricalNB-codes'
# work), and the DataFrame's families each get too few columns (the array's
# multinomial columns do get enough). GaussianNB's variance types change no
# kernel's work: its first configuration stands for all. Nor do cases of
# small data only.
THREADED_CASES = [
    case
    for case in CASES
    if not case.small_data
    and case.id
    not in (
        "CategoricalNB-strings",
        "MixedNB-frame",
        "GaussianNB-tied",
        "GaussianNB-spherical-unbiased",
    )
]
# Every public estimator class has a case.
assert {case.name for case in CASES} == set(ESTIMATOR_NAMES)


def case_params(cases=CASES, containers=None, other_dtypes_in=("dense_c", "csr")):
    """pytest params (case, dtype, container) over cases and the input they take.

    ``containers`` limits the containers (a case that takes none of them
    keeps its first). Each case's first dtype (float64) is given in every
    container, its other dtypes (float32) only in ``other_dtypes_in``: the
    kernels take each float type, and each layout, but not each pair of them.
    """
    params = []
    for case in cases:
        inputs = case.inputs(containers) or case.inputs()[:1]
        for dtype, container in inputs:
            if dtype != case.dtypes[0] and container not in other_dtypes_in:
                continue
            suffix = "" if dtype is None else f"-{np.dtype(dtype).name}"
            suffix += "" if container == "native" else f"-{container}"
            params.append(pytest.param(case, dtype, container, id=case.id + suffix))
    return params


def runnable_variants():
    """The kernels (``fastnb._simd.kernel_set``) of each instruction-set
    variant that was built and that this CPU runs, the baseline left out.

    The CPU is asked first: a variant's module may use its instructions as
    it loads (an AVX-512 build stops an AVX2-only CPU with an illegal
    instruction).
    """
    return [
        kernels
        for variant in fastnb._simd.VARIANTS
        if fastnb._kernels.cpu_runs(variant)
        and (kernels := fastnb._simd.kernel_set(variant)) is not None
    ]
