"""The README's examples run and print what the README says they print."""

from pathlib import Path

import numpy as np
import pytest

import fastnb

from _helpers import require_data

README = Path(__file__).parents[1] / "README.md"


def example(heading, index=0):
    """The ``index``-th Python block of the README section under ``heading``."""
    if not README.exists():
        pytest.skip(f"{README} is not beside the tests (tests copied elsewhere)")
    section = README.read_text().split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```python")[index + 1].split("```", 1)[0]


def run(code, capsys):
    """What the code prints."""
    exec(compile(code, str(README), "exec"), {})
    return capsys.readouterr().out.strip()


def test_example_runs_offline(capsys):
    code = example("Example")
    assert "fetch_" not in code
    assert run(code, capsys) == "['spam' 'ham']"


def test_model_state_example(capsys):
    expected = (
        fastnb.MultinomialNB()
        .fit(np.array([[2, 1, 0], [3, 0, 0], [0, 1, 4], [0, 0, 3]]), [0, 0, 1, 1])
        .predict([[1, 0, 2]])
    )
    assert run(example("A model's state"), capsys) == str(expected)


def test_dask_example(capsys):
    pytest.importorskip("dask")
    assert run(example("More than one machine"), capsys) == "[0 1] 1.0"


def test_saving_example(capsys, tmp_path, monkeypatch):
    assert run(example("Saving and deploying"), capsys) == "['spam'] [2. 3.]"
    pytest.importorskip("skops")
    monkeypatch.chdir(tmp_path)
    run(example("Saving and deploying") + example("Saving and deploying", 1), capsys)
    assert (tmp_path / "spam.skops").exists()


def test_onnx_example(capsys):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("skl2onnx")
    assert run(example("Saving and deploying", 2), capsys) == "['spam' 'ham']"


SMS_PATH = "../shared/data/sms_spam/SMSSpamCollection"


def test_reading_a_model_example(capsys, tmp_path, monkeypatch):
    path = require_data("sms_spam/SMSSpamCollection")
    code = example("Reading a model")
    assert SMS_PATH in code
    printed = run(code.replace(SMS_PATH, str(path)), capsys)
    section = README.read_text().split("## Reading a model\n", 1)[1]
    shown = section.split("prints\n\n```\n", 1)[1].split("```", 1)[0]
    assert printed == shown.strip()
    # The plot, drawn with the Agg backend where the README's figure was made.
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    run(code.replace(SMS_PATH, str(path)) + example("Reading a model", 1), capsys)
    assert (tmp_path / "reading-a-model.png").exists()
    assert (README.parent / "docs" / "reading-a-model.png").exists()


def test_missing_values_example(capsys):
    # A row is scored on the values it has: each of these has the one that
    # tells its class.
    assert run(example("Missing values"), capsys) == "[0 1]"
