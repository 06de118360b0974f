"""A short version of bench/soak.py: a stream of small partial_fit batches
keeps Python's memory flat and ends at the model of all its rows.

(The time per batch is watched by the bench, not here: timing goals live in
bench/.)
"""

import importlib.util
import pathlib

import pytest

SOAK = pathlib.Path(__file__).resolve().parent.parent / "bench" / "soak.py"


@pytest.fixture(scope="module")
def soak():
    spec = importlib.util.spec_from_file_location("soak", SOAK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("kind", ["text", "gaussian"])
def test_a_stream_keeps_memory_flat_and_ends_at_one_fit(soak, kind):
    samples, same, model = soak.stream(kind, 400, progress=False)
    assert same, "the streamed model differs from the statistics of all its rows"
    traced = [sample[2] for sample in samples]
    # After the first window (warm-up), Python's memory stays within slack.
    assert max(traced) - traced[0] <= soak.TRACED_SLACK_MIB, traced
    assert model.class_count_.sum() == 400 * (
        soak.TEXT_ROWS if kind == "text" else soak.GAUSSIAN_ROWS
    )
