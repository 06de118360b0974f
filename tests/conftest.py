"""Settings for every test module.

Property tests draw the same examples on every run, so that a run (in CI
too) fails or passes by the code, not by the draw; nothing is kept between
runs. ``HYPOTHESIS_PROFILE=explore`` draws new random examples instead, to
look for failures.

``pytest -n auto`` (pytest-xdist) starts a worker a core, at most
MAX_WORKERS: each worker imports scikit-learn, Dask and onnxruntime, and the
kernels in each already use every core.
"""

import os

import pytest
from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

# The most workers `pytest -n auto` starts.
MAX_WORKERS = 8


# Optional: pytest-xdist defines this hook, and the suite runs without it.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """The number of workers for ``-n auto``: a core this process may run on
    each, at most MAX_WORKERS."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return min(cores, MAX_WORKERS)
