"""fastnb.dask when workers die: a fit, partial_fit or prediction whose worker
is killed mid-way equals the in-memory one, and one whose every retry dies
fails naming the block, the estimator as it was.

Each test has a ``LocalCluster`` of its own, of two worker processes, each
under a nanny that restarts it, with ``distributed.scheduler.allowed-failures``
at 1: a task is tried on at most two workers. (A cluster shared by the module
hung the suite twice, the killed block run once and no worker process left: a
restarted worker can take the killing task before its nanny has heard that it
started, and a nanny whose restart fails so does not try again, so a later
test could find no worker and wait for one forever.)

X is a Dask array whose blocks pass through ``worker_killer``'s function: the
task of one block SIGKILLs the worker running it, the first time it runs (a
marker file, made atomically, says it has) or every time. Each run of that
block's task is logged to a file, so a test can see that the block was
computed again. The worker's blocks computed until then
are lost with it and recomputed by Dask; the model must count each block once.
"""

import os
import re
import signal

import numpy as np
import pytest

import fastnb

from _helpers import CASES, assert_same_fit, assert_same_state, exact, local_client

pytest.importorskip("dask")
pytest.importorskip("distributed")

import dask
import dask.array as da
from distributed import KilledWorker

import fastnb.dask

CASE = {case.id: case for case in CASES}
# Counts, moments and category tables.
CASE_IDS = ["MultinomialNB", "GaussianNB", "CategoricalNB-codes"]
N_BLOCKS = 12
ROWS = 60
KILLED_BLOCK = 9
# The longest a test waits for the cluster's workers, or for a prediction
# whose workers die: a failure, not a hang, if Dask never answers.
WAIT_S = 120


@pytest.fixture
def client():
    """A Client of two worker processes under nannies, both running; a task is
    retried once."""
    with local_client(**{"distributed.scheduler.allowed-failures": 1}) as client:
        client.wait_for_workers(2, timeout=WAIT_S)
        yield client


def worker_killer(folder, every_time=False):
    """A function of a block that returns it, once its task has killed the
    worker process running it (for block KILLED_BLOCK only: the first time
    it runs, or ``every_time``), each run logged in ``folder``.

    A local function: the workers cannot import this module, and distributed
    sends what pickle cannot by reference by value (cloudpickle).
    """

    def kill_worker(block, block_id=None):
        if block_id[0] != KILLED_BLOCK:
            return block
        with open(os.path.join(folder, "runs"), "a") as log:
            log.write("run\n")
        if not every_time:
            marker = os.path.join(folder, "killed")
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return block
        os.kill(os.getpid(), signal.SIGKILL)
        return block  # pragma: no cover - the process is gone

    return kill_worker


def runs_of_killed_block(folder):
    """How many times the killed block's task started."""
    with open(os.path.join(folder, "runs")) as log:
        return len(log.readlines())


def data(case_id, seed=0):
    """The case's X and y in memory, N_BLOCKS x ROWS rows, floats exact in sums."""
    X, y, _ = CASE[case_id].make(n_samples=N_BLOCKS * ROWS, seed=seed)
    return exact(np.asarray(X, dtype=float)), y


def killing(X, y, folder, every_time=False):
    """X and y as Dask arrays of ROWS-row blocks, X's block KILLED_BLOCK
    killing its worker."""
    dask_X = da.from_array(X, chunks=(ROWS, -1)).map_blocks(
        worker_killer(folder, every_time), dtype=X.dtype
    )
    return dask_X, da.from_array(y, chunks=ROWS)


def dask_estimator(case_id):
    case = CASE[case_id]
    return getattr(fastnb.dask, case.name)(**case.params)


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_fit_with_a_worker_killed_equals_the_in_memory_fit(client, case_id, tmp_path):
    X, y = data(case_id)
    model = dask_estimator(case_id).fit(*killing(X, y, tmp_path))
    assert runs_of_killed_block(tmp_path) == 2
    assert_same_fit(model, CASE[case_id].estimator().fit(X, y))


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_partial_fit_with_a_worker_killed_equals_the_in_memory_one(
    client, case_id, tmp_path
):
    X, y = data(case_id)
    X_first, y_first = data(case_id, seed=1)
    classes = np.unique(np.concatenate([y, y_first]))
    model = dask_estimator(case_id).partial_fit(X_first, y_first, classes=classes)
    model.partial_fit(*killing(X, y, tmp_path))
    assert runs_of_killed_block(tmp_path) == 2
    expected = CASE[case_id].estimator().partial_fit(X_first, y_first, classes=classes)
    assert_same_fit(model, expected.partial_fit(X, y))


def test_predict_proba_with_a_worker_killed_equals_the_in_memory_one(client, tmp_path):
    X, y = data("GaussianNB")
    model = fastnb.dask.GaussianNB().fit(X, y)
    proba = model.predict_proba(killing(X, y, tmp_path)[0]).compute()
    assert runs_of_killed_block(tmp_path) == 2
    assert_same_state(proba, model.predict_proba(X))


@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_block_whose_every_worker_dies_is_named_and_the_model_kept(
    client, method, tmp_path
):
    X, y = data("MultinomialNB")
    model = fastnb.dask.MultinomialNB().fit(X[:5], y[:5])
    before, proba = fastnb.get_state(model), model.predict_proba(X)
    with pytest.raises(KilledWorker) as info:
        getattr(model, method)(*killing(X, y, tmp_path, every_time=True))
    assert runs_of_killed_block(tmp_path) == 2
    # The task Dask gave up on: the killing one, or one that was running or
    # queued beside it on both dead workers (all of a block's X, its state, or
    # a combining of states already summed).
    key = info.value.task
    (note,) = info.value.__notes__
    assert f"each of the 2 workers that ran task {key!r} died while running it" in note
    if isinstance(key, tuple):
        index = key[1]
        assert note.startswith(
            f"Raised for block {index} of X (rows are counted from the block's "
            f"first, row {index * ROWS} of X): "
        )
    else:
        assert re.match(
            r"Raised for (block \d+ of X |the combining of the blocks' statistics:)",
            note,
        )
    assert note.endswith("the estimator is as it was.")
    assert_same_state(fastnb.get_state(model), before)
    assert_same_state(model.predict_proba(X), proba)


def test_prediction_whose_every_worker_dies_names_the_block(client, tmp_path):
    X, y = data("GaussianNB")
    model = fastnb.dask.GaussianNB().fit(X, y)
    # The killing block's task, or one beside it on both dead workers: fused
    # with the prediction's, named by it.
    key = r"\('GaussianNB\.predict_proba-\w+', \d+, 0\)"
    proba = model.predict_proba(killing(X, y, tmp_path, every_time=True)[0])
    with pytest.raises(KilledWorker, match=key):
        client.compute(proba).result(timeout=WAIT_S)
    assert runs_of_killed_block(tmp_path) == 2


def test_lost_task_note_names_what_the_task_was_computing():
    # No worker dies here: the note of a task key some blocks need (or none).
    X, y = data("MultinomialNB")
    scale = da.from_delayed(dask.delayed(float)(1), shape=(), dtype=float)
    dask_X = da.from_array(X, chunks=(ROWS, -1))
    dask_y = da.from_array(y, chunks=ROWS)
    blocks = fastnb.dask.Blocks(dask_X * scale, dask_y)
    states = [dask.delayed(len)(block) for block in blocks.X]

    def note(key):
        return fastnb.dask.lost_task_note(key, 2, blocks, states)

    assert note(states[4].key).startswith(
        "Raised for block 4 of X (rows are counted from the block's first, row "
        f"{4 * ROWS} of X): each of the 3 workers that ran task "
    )
    assert note((dask_y.name, 7)).startswith("Raised for block 7 of X ")
    assert note(scale.__dask_keys__()[0]).startswith(
        f"Raised for blocks 0, 1, 2, ... of X ({N_BLOCKS} blocks need the task): "
    )
    assert note("combined-0").startswith(
        "Raised for the combining of the blocks' statistics: "
    )
