"""modin DataFrames (issue 56): read through narwhals as pandas' are, to the
same models bit for bit.

modin pins pandas below 2.4, so it is not in the test extras (which take
pandas 3); these tests run where it is installed, on modin's in-process
"python" engine.
"""

import os

import numpy as np
import pandas as pd
import pytest

import fastnb

from _helpers import assert_same_state

os.environ.setdefault("MODIN_ENGINE", "python")
mpd = pytest.importorskip("modin.pandas")


def table(n_samples=300, seed=0):
    """A pandas frame of a float, a str, a categorical and an int column."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "weight": rng.normal(size=n_samples),
            "colour": rng.choice(["red", "green", "blue"], n_samples),
            "shape": pd.Categorical(rng.choice(["round", "long"], n_samples)),
            "grade": rng.integers(0, 3, n_samples),
        }
    ), rng.integers(0, 2, n_samples)


@pytest.mark.parametrize(
    "make, columns",
    [
        (fastnb.MixedNB, ["weight", "colour", "shape", "grade"]),
        (fastnb.CategoricalNB, ["colour", "shape", "grade"]),
        (fastnb.GaussianNB, ["weight", "grade"]),
    ],
)
def test_a_modin_frame_gives_the_pandas_frames_model(make, columns):
    frame, y = table()
    frame = frame[columns]
    expected = make().fit(frame, y)
    model = make().fit(mpd.DataFrame(frame), y)
    assert_same_state(model, expected)
    np.testing.assert_array_equal(
        model.predict_proba(mpd.DataFrame(frame)), expected.predict_proba(frame)
    )


def test_missing_values_in_a_modin_frame():
    frame, y = table()
    frame.loc[3, "colour"] = None
    frame.loc[5, "weight"] = np.nan
    expected = fastnb.MixedNB(missing="ignore").fit(frame, y)
    model = fastnb.MixedNB(missing="ignore").fit(mpd.DataFrame(frame), y)
    assert_same_state(model, expected)
    refused = fastnb.MixedNB()
    with pytest.raises(ValueError, match=r"in columns \['weight', 'colour'\]"):
        refused.fit(mpd.DataFrame(frame), y)
    assert not hasattr(refused, "classes_")
