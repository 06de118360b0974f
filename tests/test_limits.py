"""fastnb's memory bound: a fit whose table would pass max_table_bytes is
refused before it allocates, with the size in the message, and the model is
left as it was; set_config, get_config and config_context hold the bound.

Each case's table size is known exactly (8 bytes a value), so a bound of
that size lets the fit through and one byte less refuses it.
"""

import threading

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import fastnb
from fastnb import _config

from _helpers import assert_same_state

RNG = np.random.default_rng(0)

# name: (estimator, X, y, the largest table's bytes, the message's start)
CASES = {
    "classes x features": (
        fastnb.MultinomialNB(),
        np.ones((6, 1000)),
        np.arange(6) % 3,
        3 * 1000 * 8,
        "MultinomialNB: a table of 3 classes by 1000 features would take 23.4 KiB, ",
    ),
    "categories x classes": (
        fastnb.CategoricalNB(),
        np.array([[0, 4999], [1, 0], [2, 7]]),
        np.array([0, 1, 1]),
        (3 + 5000) * 2 * 8,
        "CategoricalNB: a count table of 5003 categories (of 2 features) by 2 "
        "classes would take 78.2 KiB, ",
    ),
    "kde grids": (
        fastnb.KernelDensityNB(n_grid=64),
        RNG.normal(size=(20, 5)),
        np.arange(20) % 4,
        2 * 64 * 4 * 5 * 8,
        "KernelDensityNB: density tables of 4 classes by 5 features by up to "
        "128 grid points would take 20.0 KiB, ",
    ),
    "kde samples": (
        fastnb.KernelDensityNB(algorithm="exact"),
        RNG.normal(size=(50, 2)),
        np.arange(50) % 7,
        50 * 7 * 8,
        "KernelDensityNB: the samples kept, 50 by 2 features and 7 classes would "
        "take 2.7 KiB, ",
    ),
    "mixed family": (
        fastnb.MixedNB(),
        pd.DataFrame(
            {"x": np.arange(4.0), "z": np.ones(4), "w": np.ones(4), "c": list("abab")}
        ),
        np.array([0, 1, 2, 3]),
        4 * 3 * 8,
        "MixedNB: a table of 4 classes by 3 features, of its 'gaussian' family, "
        "would take 96 bytes, ",
    ),
}


def refused(bound):
    """pytest.raises for the MemoryError of a table over ``bound``."""
    return pytest.raises(MemoryError, match=rf"more than max_table_bytes={bound} \(")


@pytest.mark.parametrize("case", CASES)
def test_fit_passes_at_the_bound_and_is_refused_one_byte_under(case):
    model, X, y, n_bytes, message = CASES[case]
    with fastnb.config_context(max_table_bytes=n_bytes):
        fitted = clone(model).fit(X, y)
    before = fastnb.get_state(fitted)
    with fastnb.config_context(max_table_bytes=n_bytes - 1):
        for fit in (clone(model).fit, fitted.fit):
            with refused(n_bytes - 1) as info:
                fit(X, y)
            assert str(info.value).startswith(message)
            assert "Nothing was allocated" in str(info.value)
        with refused(n_bytes - 1):
            clone(model).partial_fit(X, y, classes=np.unique(y))
    assert_same_state(fastnb.get_state(fitted), before)


def test_categories_a_partial_fit_adds_are_bounded_too():
    model = fastnb.CategoricalNB().partial_fit([[0], [1]], [0, 1], classes=[0, 1])
    before = fastnb.get_state(model)
    # Codes up to 999 make a table of 1000 categories by 2 classes.
    with fastnb.config_context(max_table_bytes=1000 * 2 * 8 - 1):
        with pytest.raises(MemoryError, match="1000 categories .* by 2 classes"):
            model.partial_fit([[999], [3]], [1, 0])
    assert_same_state(fastnb.get_state(model), before)
    with fastnb.config_context(max_table_bytes=1000 * 2 * 8):
        model.partial_fit([[999], [3]], [1, 0])
    assert model.category_count_[0].shape == (2, 1000)


def test_merge_over_more_classes_is_bounded():
    # Two models of 2 classes each over 500 features, merged over 4 classes:
    # feature_count is laid out over 4 classes (16,000 bytes).
    X = np.ones((2, 500))
    first = fastnb.MultinomialNB().fit(X, [0, 1])
    second = fastnb.MultinomialNB().fit(X, [2, 3])
    with fastnb.config_context(max_table_bytes=4 * 500 * 8 - 1):
        with pytest.raises(
            MemoryError, match=r"statistic '\w+' over 4 classes, of shape \(4, 500\),"
        ):
            fastnb.merge([first, second])
    with fastnb.config_context(max_table_bytes=4 * 500 * 8):
        assert list(fastnb.merge([first, second]).classes_) == [0, 1, 2, 3]


def test_the_default_bound_is_the_physical_memory(monkeypatch):
    assert fastnb.get_config()["max_table_bytes"] is None
    monkeypatch.setattr(_config, "physical_memory", lambda: 3 * 1000 * 8 - 1)
    model, X, y, _, message = CASES["classes x features"]
    with pytest.raises(MemoryError) as info:
        clone(model).fit(X, y)
    assert str(info.value).startswith(
        message + "more than this machine's physical memory (23.4 KiB)."
    )
    monkeypatch.setattr(_config, "physical_memory", lambda: 3 * 1000 * 8)
    clone(model).fit(X, y)


def test_physical_memory_is_known_here():
    memory = _config.physical_memory()
    assert memory is not None and memory > 2**28


def test_set_config_holds_for_the_process_and_config_context_for_its_block():
    try:
        fastnb.set_config(max_table_bytes=5000)
        assert fastnb.get_config() == {"max_table_bytes": 5000}
        with fastnb.config_context(max_table_bytes=7000):
            assert fastnb.get_config() == {"max_table_bytes": 7000}
            with fastnb.config_context():
                assert fastnb.get_config() == {"max_table_bytes": 7000}
        assert fastnb.get_config() == {"max_table_bytes": 5000}
        with pytest.raises(MemoryError, match=r"max_table_bytes=5000 \(4.9 KiB\)"):
            fastnb.MultinomialNB().fit(np.ones((2, 400)), [0, 1])
    finally:
        fastnb.set_config(max_table_bytes=None)
    assert fastnb.get_config() == {"max_table_bytes": None}
    fastnb.MultinomialNB().fit(np.ones((2, 400)), [0, 1])


def test_config_context_is_the_current_threads_only():
    seen = {}
    inside, done = threading.Event(), threading.Event()

    def other_thread():
        inside.wait(10)
        seen["other"] = fastnb.get_config()["max_table_bytes"]
        done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with fastnb.config_context(max_table_bytes=1234):
        inside.set()
        done.wait(10)
        seen["this"] = fastnb.get_config()["max_table_bytes"]
    thread.join()
    assert seen == {"other": None, "this": 1234}


@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        ({"max_memory": 10}, TypeError, "'max_memory' is not a fastnb setting"),
        ({"max_table_bytes": 0}, ValueError, "positive number of bytes or None"),
        ({"max_table_bytes": -5}, ValueError, "got -5"),
        ({"max_table_bytes": 1.5e9}, ValueError, "got 1500000000.0"),
        ({"max_table_bytes": True}, ValueError, "got True"),
        ({"max_table_bytes": "1GiB"}, ValueError, "got '1GiB'"),
    ],
)
def test_bad_settings_are_refused_and_change_nothing(settings, error, message):
    with pytest.raises(error, match=message):
        with fastnb.config_context(**settings):
            pass  # pragma: no cover - refused on entry
    if "max_table_bytes" in settings:
        with pytest.raises(error, match=message):
            fastnb.set_config(**settings)
    assert fastnb.get_config() == {"max_table_bytes": None}
