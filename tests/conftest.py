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

The ``newsgroups_data`` fixture builds scikit-learn's 20 Newsgroups cache
once for the whole run, whatever the number of workers: building it takes
about 11 s, and test_documents.py, test_real_data.py and test_onnx.py read
it (the last two through ``newsgroups`` and ``newsgroups_counts``).
"""

import os
import shutil
import subprocess
import sys
import time

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import pytest  # noqa: E402 (after SCIPY_ARRAY_API is set)
from hypothesis import settings  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402

from _helpers import data_dir, fetch_newsgroups, require_data  # noqa: E402

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


# The shared folder's 20 Newsgroups archive, and where make_sklearn_cache.py
# (beside it) writes scikit-learn's cache of it when run without arguments
# (what the user guide's example reads).
NEWSGROUPS_ARCHIVE = "20newsgroups/20news-bydate.tar.gz"
NEWSGROUPS_CACHE = "20newsgroups/sklearn_data/20news-bydate_py3.pkz"
# The longest a worker waits for another to build something for the run.
BUILD_WAIT_SECONDS = 600


def run_folder(tmp_path_factory):
    """A temporary folder of this run that every xdist worker shares (a
    worker's own base folder is inside the run's)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(folder, build):
    """Run ``build(folder)`` once for the run: the first worker to get here
    builds, the others wait for it (a lock folder, made atomically), then
    find ``folder`` built. A build that raises is tried again by the next."""
    done = folder.with_name(folder.name + ".done")
    lock = folder.with_name(folder.name + ".lock")
    deadline = time.monotonic() + BUILD_WAIT_SECONDS
    while not done.exists():
        try:
            lock.mkdir()
        except FileExistsError:
            if time.monotonic() > deadline:
                message = f"{lock} was held for {BUILD_WAIT_SECONDS} s"
                raise TimeoutError(message) from None
            time.sleep(0.1)
            continue
        try:
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                build(folder)
                done.touch()
        finally:
            lock.rmdir()
    return folder


def build_newsgroups_cache(folder):
    """scikit-learn's 20 Newsgroups cache, built as the user guide says
    (make_sklearn_cache.py run without arguments, beside the archive), in
    ``folder/20newsgroups`` (the shared folder may be read-only)."""
    archive = data_dir() / NEWSGROUPS_ARCHIVE
    copy = folder / "20newsgroups"
    copy.mkdir()
    (copy / archive.name).symlink_to(archive)
    shutil.copy(archive.parent / "make_sklearn_cache.py", copy)
    subprocess.run(
        [sys.executable, "make_sklearn_cache.py"],
        cwd=copy,
        check=True,
        capture_output=True,
        timeout=BUILD_WAIT_SECONDS,
    )
    assert (folder / NEWSGROUPS_CACHE).exists()


@pytest.fixture(scope="session")
def newsgroups_data(tmp_path_factory):
    """A data folder holding scikit-learn's 20 Newsgroups cache under
    ``20newsgroups/sklearn_data``: the shared folder where it has one, else a
    copy built once for the run. Skips where the data set is absent."""
    if (data_dir() / NEWSGROUPS_CACHE).exists():
        return data_dir()
    require_data(NEWSGROUPS_ARCHIVE)
    require_data("20newsgroups/make_sklearn_cache.py")
    folder = run_folder(tmp_path_factory) / "newsgroups-data"
    return build_once(folder, build_newsgroups_cache)


@pytest.fixture(scope="session")
def newsgroups_home(newsgroups_data):
    """A scikit-learn data home holding the 20 Newsgroups cache."""
    return newsgroups_data / "20newsgroups" / "sklearn_data"


@pytest.fixture(scope="session")
def newsgroups(newsgroups_home):
    """Train and test bunches, as they are."""
    return fetch_newsgroups(newsgroups_home)


@pytest.fixture(scope="session")
def newsgroups_counts(newsgroups):
    """Word counts of the train and test posts (the vocabulary of the train)."""
    train, test = newsgroups
    assert (len(train.data), len(test.data)) == (11314, 7532)
    vectorizer = CountVectorizer()
    return vectorizer.fit_transform(train.data), vectorizer.transform(test.data)
