"""Predictions during partial_fit: every answer comes from one model.

One thread streams partial_fit batches into an estimator while 8 others
call predict_proba and predict on it, with CPU-bound processes beside
them (on a quiet machine a torn answer is rare). Each answer must be the
answer of one of the models the batches passed through, up to the one the
stream had reached when the call returned: computed beforehand by the same
batches fed to another estimator, one at a time.
"""

import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import fastnb

N_READERS = 8
N_BATCHES = 300
SECONDS = 4.0
BATCH_ROWS = 200


def counts(rng, n):
    return rng.poisson(1.0, (n, 300)).astype(np.float64)


def normal(rng, n):
    return rng.normal(size=(n, 40)) * rng.uniform(0.5, 3.0, 40)


def codes(rng, n):
    # Rare codes up to 200: later batches bring categories earlier ones did
    # not have, and the tables widen.
    rare = rng.random((n, 30)) < 0.001
    return np.where(rare, rng.integers(8, 200, (n, 30)), rng.integers(0, 8, (n, 30)))


CASES = {
    "MultinomialNB": (fastnb.MultinomialNB, counts),
    "GaussianNB": (fastnb.GaussianNB, normal),
    "CategoricalNB": (fastnb.CategoricalNB, codes),
}


@pytest.fixture(scope="module")
def loaded_machine():
    """Two processes that keep CPUs busy while the module's tests run."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)
    ]
    yield
    for burner in burners:
        burner.kill()
        burner.wait()


@pytest.mark.parametrize("name", CASES)
def test_predictions_during_partial_fit_come_from_one_model(name, loaded_machine):
    estimator, make = CASES[name]
    rng = np.random.default_rng(7)
    classes = np.arange(4)
    batches = [
        (make(rng, BATCH_ROWS), rng.integers(0, 4, BATCH_ROWS))
        for _ in range(N_BATCHES)
    ]
    probe = make(rng, 64)
    # The answers of the model after each batch.
    replay = estimator().partial_fit(*batches[0], classes=classes)
    expected = [replay.predict_proba(probe)]
    for batch in batches[1:]:
        expected.append(replay.partial_fit(*batch).predict_proba(probe))
    expected = np.array(expected)
    assert len({e.tobytes() for e in expected}) == N_BATCHES  # all distinct

    model = estimator().partial_fit(*batches[0], classes=classes)
    done = [1]  # batches in the model
    stop = threading.Event()
    answers, errors = [], []

    def stream():
        try:
            for batch in batches[1:]:
                if stop.is_set():
                    return
                model.partial_fit(*batch)
                done[0] += 1
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    def read():
        try:
            while not stop.is_set():
                proba = model.predict_proba(probe)
                labels = model.predict(probe)
                answers.append((proba, labels, done[0]))
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    writer = threading.Thread(target=stream)
    readers = [threading.Thread(target=read) for _ in range(N_READERS)]
    for thread in (*readers, writer):
        thread.start()
    deadline = time.monotonic() + SECONDS
    while writer.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    for thread in (writer, *readers):
        thread.join()
    assert not errors, errors
    assert answers
    # The model each answer is of: bit for bit (the replay computes the same
    # sums in the same order), else the closest to rounding.
    index = {e.tobytes(): k for k, e in enumerate(expected)}
    labels_index = {
        model.classes_[np.argmax(e, axis=1)].tobytes(): k
        for k, e in reversed(list(enumerate(expected)))
    }
    torn = 0
    for proba, labels, reached in answers:
        # A model up to the one the stream had reached when the call
        # returned (or the next, swapped in before the count moved on).
        last = min(reached, N_BATCHES - 1)
        k = index.get(proba.tobytes())
        if k is None:
            close = [
                j
                for j in range(last + 1)
                if np.allclose(proba, expected[j], rtol=1e-12, atol=0)
            ]
            k = close[0] if close else None
        label_k = labels_index.get(labels.tobytes())
        torn += k is None or k > last or label_k is None or label_k > last
    assert torn == 0, f"{torn} of {len(answers)} answers match no model"
    # The answers came while the stream ran, not only after it.
    assert sum(reached < done[0] for _, _, reached in answers) >= 100
