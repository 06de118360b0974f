"""Fixtures shared by the test modules.

Tests run with ``--import-mode=importlib``, so this module cannot be imported
by them: the helpers are handed out as session-scoped fixtures (which also
keeps them usable inside hypothesis tests).
"""

from pathlib import Path

import numpy as np
import pytest

# The shared data folder sits beside the repository: /work/shared/data for a
# checkout at /work/main.
DATA_DIR = Path(__file__).parents[1].parent / "shared" / "data"

# Relative tolerance against scikit-learn and the reference, by input dtype.
RTOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}


@pytest.fixture(scope="session")
def tol():
    """``tol(dtype)``: the relative tolerance for results from input of that dtype."""

    def tolerance(dtype):
        return RTOL[np.dtype(dtype)]

    return tolerance


@pytest.fixture(scope="session")
def make_counts():
    """``make_counts(labels, n_samples=80, n_features=12, seed=0)``: X, y, weights.

    X holds non-negative counts, with fractional values in a third of the
    columns (as tf-idf gives) so that no two classes score exactly alike;
    every row has a nonzero and every label of ``labels`` occurs. The weights
    are positive floats.
    """

    def make(labels, n_samples=80, n_features=12, seed=0):
        labels = np.asarray(labels)
        rng = np.random.default_rng(seed)
        X = rng.poisson(1.2, size=(n_samples, n_features)).astype(np.float64)
        X *= rng.random((n_samples, n_features)) < 0.6
        X[np.arange(n_samples), rng.integers(n_features, size=n_samples)] += 1.0
        n_fractional = max(1, n_features // 3)
        X[:, :n_fractional] *= rng.uniform(0.3, 1.7, size=(n_samples, n_fractional))
        y = labels[rng.permutation(np.arange(n_samples) % len(labels))]
        sample_weight = rng.uniform(0.2, 3.0, size=n_samples)
        return X, y, sample_weight

    return make


@pytest.fixture(scope="session")
def require_data():
    """``require_data(relative_path)``: the path of a shared data file, or skip."""

    def require(relative_path):
        path = DATA_DIR / relative_path
        if not path.exists():
            pytest.skip(f"shared data file {path} is not available")
        return path

    return require
