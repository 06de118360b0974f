"""Settings for every test module.

Property tests draw the same examples on every run, so that a run (in CI
too) fails or passes by the code, not by the draw; nothing is kept between
runs. ``HYPOTHESIS_PROFILE=explore`` draws new random examples instead, to
look for failures.

``pytest -n auto`` (pytest-xdist) starts the workers xdist counts, a core
each, but at most MAX_WORKERS: each worker imports scikit-learn, Dask and
onnxruntime, and the kernels in each already use every core. A number set
in PYTEST_XDIST_AUTO_NUM_WORKERS is taken as it is.

With workers, an idle one takes tests queued for a busy one (xdist's
"worksteal" scheduling) unless the command line names a ``--dist``: a few
tests take 10-20 s, and with "load" the other worker waited for them at
the end (the suite on 2 workers: 194.5 s against 211 s).

``SCIPY_ARRAY_API=1`` is set here, before any test module imports SciPy
(SciPy reads it once, at import), unless the environment sets it: without
it, scikit-learn's array-API checks skip, and its ``array_api_dispatch``
refuses to turn on. pytest itself has no setting for environment
variables (that takes the pytest-env plugin), and pytest-xdist's workers
inherit it from the process that starts them.
"""

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import pytest  # noqa: E402 (after SCIPY_ARRAY_API is set)
from hypothesis import settings  # noqa: E402

settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

# The most workers `pytest -n auto` starts.
MAX_WORKERS = 8


# Optional: pytest-xdist defines this hook, and the suite runs without it.
@pytest.hookimpl(optionalhook=True, hookwrapper=True)
def pytest_xdist_auto_num_workers(config):
    """xdist's own count of workers for ``-n auto``, at most MAX_WORKERS
    unless PYTEST_XDIST_AUTO_NUM_WORKERS asks for a number."""
    outcome = yield
    if not os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        outcome.force_result(min(outcome.get_result(), MAX_WORKERS))


def pytest_configure(config):
    """xdist's "worksteal" scheduling for ``-n`` without a ``--dist`` (its
    default is "load": each worker's share of the tests fixed up front)."""
    named = any(
        arg == "-d" or arg.startswith("--dist") for arg in config.invocation_params.args
    )
    if getattr(config.option, "dist", "no") == "load" and not named:
        config.option.dist = "worksteal"
