"""Model files of every released format version load, and predict as they must.

tests/golden/v<N>/ holds files written by fastnb.save in format version N
(tools/make_golden_files.py, which says how they were made), one an
estimator and notable parameter setting, with the rows to score and the
probabilities that scikit-learn or fastnb's NumPy reference computed for
the same fits. A change that cannot read them, or reads them into other
models, breaks the compatibility promised in the user guide
(docs/user_guide/files.md, "Files stay loadable").
"""

import ast
import json
import pathlib

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastnb
import fastnb.text
from fastnb._files import FORMAT_VERSION, MODEL_FORMAT_VERSION

# Also run on the wheel built from the sdist (.ci/run step 3).
pytestmark = pytest.mark.wheel

GOLDEN = pathlib.Path(__file__).parent / "golden"
VERSIONS = sorted(GOLDEN.glob("v*"))
EVERY_CASE = [
    (folder, case, spec)
    for folder in VERSIONS
    for case, spec in json.loads((folder / "cases.json").read_text()).items()
]
# A single estimator's files; and text models' (format 2: vectorizers and
# Pipelines), with the documents they transform or predict.
CASES = [(f, case, spec) for f, case, spec in EVERY_CASE if "estimator" in spec]
IDS = [f"{folder.name}-{case}" for folder, case, _ in CASES]
TEXT_CASES = [(f, case, spec) for f, case, spec in EVERY_CASE if "kind" in spec]
TEXT_IDS = [f"{folder.name}-{case}" for folder, case, _ in TEXT_CASES]


def load_case(folder, case, spec):
    key = None if spec["key"] is None else spec["key"].encode()
    return fastnb.load(folder / f"{case}.fastnb", key=key)


def probe_rows(folder, case, spec, model):
    with np.load(folder / "expected.npz") as expected:
        X, proba = expected[f"{case}.X"], expected[f"{case}.proba"]
    if spec["frame"]:
        X = pd.DataFrame(X, columns=model.feature_names_in_)
    return X, proba


def test_every_estimator_has_golden_files_of_the_current_version():
    current = GOLDEN / f"v{MODEL_FORMAT_VERSION}"
    assert current in VERSIONS
    estimators = {spec["estimator"] for folder, _, spec in CASES if folder == current}
    assert estimators == set(fastnb._registry.ESTIMATOR_NAMES)


def test_every_text_model_has_golden_files_of_the_current_version():
    current = GOLDEN / f"v{FORMAT_VERSION}"
    assert current in VERSIONS
    steps = {
        name
        for folder, _, spec in TEXT_CASES
        if folder == current
        for name, _ in spec["steps"]
    }
    assert set(fastnb.text.__all__) <= steps
    kinds = {spec["kind"] for folder, _, spec in TEXT_CASES if folder == current}
    assert kinds == {"vectorizer", "pipeline"}


def load_text_case(folder, case, spec):
    key = None if spec["key"] is None else spec["key"].encode()
    model = fastnb.load(folder / f"{case}.fastnb", key=key)
    with np.load(folder / "expected.npz") as expected:
        documents = expected[f"{case}.documents"].tolist()
        output = expected[f"{case}.output"]
    return model, documents, output


@pytest.mark.parametrize(("folder", "case", "spec"), TEXT_CASES, ids=TEXT_IDS)
def test_a_golden_text_model_loads_and_does_as_it_must(folder, case, spec):
    model, documents, expected = load_text_case(folder, case, spec)
    steps = model.steps if spec["kind"] == "pipeline" else [(None, model)]
    assert [type(step).__name__ for _, step in steps] == [
        name for name, _ in spec["steps"]
    ]
    for (_, step), (_, params) in zip(steps, spec["steps"], strict=True):
        for name, value in ast.literal_eval(params).items():
            given = step.get_params()[name]
            if name == "dtype":  # (by its name in cases.json)
                given = np.dtype(given).name
            assert given == value, name
    if spec["kind"] == "pipeline":
        assert_allclose(model.predict_proba(documents), expected, rtol=spec["rtol"])
        assert_array_equal(
            model.predict(documents), model.classes_[np.argmax(expected, axis=1)]
        )
    else:
        assert_array_equal(model.transform(documents).toarray(), expected)


@pytest.mark.parametrize(("folder", "case", "spec"), CASES, ids=IDS)
def test_a_golden_file_loads_and_predicts_as_it_must(folder, case, spec):
    model = load_case(folder, case, spec)
    assert type(model).__name__ == spec["estimator"]
    params = model.get_params()
    for name, value in spec["params"].items():
        assert np.array_equal(np.asarray(params[name]), np.asarray(value)) or (
            params[name] == value
        ), name
    X, expected = probe_rows(folder, case, spec, model)
    proba = model.predict_proba(X)
    assert_allclose(proba, expected, rtol=spec["rtol"])
    assert_array_equal(model.predict(X), model.classes_[np.argmax(expected, axis=1)])


@pytest.mark.parametrize(("folder", "case", "spec"), CASES, ids=IDS)
def test_a_loaded_golden_model_goes_on_learning(folder, case, spec):
    model = load_case(folder, case, spec)
    X, _ = probe_rows(folder, case, spec, model)
    before = model.class_count_.copy()
    y = model.predict(X)
    model.partial_fit(X, y)
    assert_allclose(model.class_count_.sum(), before.sum() + len(y))
    assert model.predict_proba(X).shape == (len(y), len(model.classes_))


@pytest.mark.parametrize(
    ("folder", "case", "spec"),
    [(folder, case, spec) for folder, case, spec in EVERY_CASE if spec["key"]],
    ids=[f"{folder.name}-{case}" for folder, case, spec in EVERY_CASE if spec["key"]],
)
def test_a_signed_golden_file_verifies_with_its_key_only(folder, case, spec):
    path = folder / f"{case}.fastnb"
    kind = spec.get("estimator") or ("Pipeline" if spec["kind"] == "pipeline" else "")
    assert type(fastnb.load(path, key=spec["key"].encode())).__name__ == kind
    with pytest.raises(fastnb.ModelFileError, match="signed"):
        fastnb.load(path)
    with pytest.raises(fastnb.ModelFileError, match="signature"):
        fastnb.load(path, key=b"another key")
