"""Write the golden model files of this fastnb's format versions into tests/golden/.

Each case fits one estimator with notable parameters on small data made
here from a fixed seed, saves it with ``fastnb.save`` to
``tests/golden/v<FORMAT_VERSION>/<case>.fastnb``, and records in
``expected.npz`` the rows to score and the probabilities the file must
give, as an independent implementation computes them: scikit-learn for the
estimators it has, with the parameters it has; fastnb's NumPy reference
(``fastnb.reference``) for the rest. The file is written only if fastnb's
model agrees with that oracle. ``cases.json`` lists each case: estimator,
parameters, oracle, and the key of a signed file. A single estimator's
files go to ``v<MODEL_FORMAT_VERSION>``; text models (fastnb.text's
vectorizers and Pipelines of them, format 2) to ``v<FORMAT_VERSION>``, with
the documents to transform and what scikit-learn's own vectorizers and
estimators of the same parameters give for them.

The files of a released format version are never rewritten: a change that
cannot load them is a break of the promise in the user guide
(docs/user_guide/files.md, "Files stay loadable"), and
tests/test_golden_files.py fails on it. Run this only for a new format
version, whose files go to a new folder (a folder that exists is left as
it is)::

    python tools/make_golden_files.py
"""

import json
import pathlib

import numpy as np
import pandas as pd
import sklearn.feature_extraction.text as sklearn_text
import sklearn.naive_bayes as sklearn_nb
from sklearn.pipeline import make_pipeline

import fastnb
import fastnb.reference
import fastnb.text
from fastnb._files import FORMAT_VERSION, MODEL_FORMAT_VERSION

FOLDER = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden"
SIGNING_KEY = b"fastnb golden files"
N_TRAIN, N_PROBE = 60, 20
# The oracle's probabilities and fastnb's agree to this before a file is kept
# (float32 models give float32 probabilities).
RTOL = {np.dtype(np.float64): 1e-9, np.dtype(np.float32): 1e-5}


def counts(rng, n):
    return rng.poisson(2.0, (n, 6)).astype(np.float64)


def normal(rng, n, dtype=np.float64):
    return (rng.normal(size=(n, 4)) * [1.0, 2.0, 0.5, 3.0]).astype(dtype)


def codes(rng, n):
    return rng.integers(0, [3, 4, 2, 5], size=(n, 4)).astype(np.int64)


def words(rng, n):
    return rng.choice(np.array(["fig", "kiwi", "pear", "plum"]), size=(n, 3))


def mixed(rng, n):
    return np.column_stack([rng.normal(size=(n, 2)), rng.integers(0, 3, (n, 2))])


def with_missing(rng, n):
    X = counts(rng, n)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X


# case: (estimator, its parameters, make X, options: "oracle": "reference"
# for fastnb.reference, else scikit-learn; "key": signed; "frame": fitted on
# a DataFrame with column names; "rtol": the agreement asked of the oracle)
CASES = {
    "multinomial": ("MultinomialNB", {"alpha": 0.5, "fit_prior": False}, counts),
    "multinomial_signed": ("MultinomialNB", {}, counts, {"key": True}),
    "multinomial_missing": (
        "MultinomialNB",
        {"missing": "ignore"},
        with_missing,
        {"oracle": "reference"},
    ),
    "complement": ("ComplementNB", {"norm": True}, counts),
    "bernoulli": ("BernoulliNB", {"alpha": 2.0, "binarize": 1.5}, counts),
    "gaussian": ("GaussianNB", {"priors": [0.2, 0.3, 0.5]}, normal),
    "gaussian_float32": (
        "GaussianNB",
        {"var_smoothing": 1e-6},
        lambda rng, n: normal(rng, n, np.float32),
    ),
    "gaussian_tied": (
        "GaussianNB",
        {"var_type": "tied", "var_estimator": "unbiased"},
        normal,
        {"oracle": "reference"},
    ),
    "categorical": (
        "CategoricalNB",
        {"alpha": 0.5, "min_categories": [3, 6, 2, 5]},
        codes,
    ),
    "categorical_strings": (
        "CategoricalNB",
        {},
        words,
        {"oracle": "reference", "frame": True},
    ),
    "poisson": ("PoissonNB", {"alpha": 0.1}, counts, {"oracle": "reference"}),
    "kde_exact": (
        "KernelDensityNB",
        {"algorithm": "exact", "bandwidth": "silverman"},
        normal,
        {"oracle": "reference"},
    ),
    "kde_binned": (
        "KernelDensityNB",
        {"n_grid": 256, "adjust": 1.5},
        normal,
        # The reference interpolates the grid's log densities its own way.
        {"oracle": "reference", "rtol": 1e-5},
    ),
    "mixed": (
        "MixedNB",
        {"families": {"gaussian": [0, 1], "categorical": [2, 3]}},
        mixed,
        {"oracle": "reference"},
    ),
}
LABELS = np.array(["eggs", "ham", "spam"])


def oracle_probabilities(estimator, params, oracle, X, y, X_probe):
    """predict_proba of the oracle's estimator fitted on X, y."""
    module = fastnb.reference if oracle == "reference" else sklearn_nb
    model = getattr(module, estimator)(**params).fit(X, y)
    return model.predict_proba(X_probe)


# Text cases: (the steps, each (class name, its parameters), the name of
# fastnb's and scikit-learn's module of each step, options as CASES').
TEXT_CASES = {
    "count_vectorizer": (
        [("CountVectorizer", {"ngram_range": (1, 2), "max_features": 40})],
    ),
    "tfidf_vectorizer": (
        [("TfidfVectorizer", {"analyzer": "char_wb", "ngram_range": (2, 3)})],
    ),
    "hashing_vectorizer": (
        [("HashingVectorizer", {"n_features": 64, "alternate_sign": False})],
    ),
    "pipeline": (
        [("TfidfVectorizer", {"stop_words": "english"}), ("MultinomialNB", {})],
    ),
    "pipeline_signed": (
        [
            ("CountVectorizer", {"min_df": 2, "dtype": np.float32}),
            ("TfidfTransformer", {"sublinear_tf": True}),
            ("ComplementNB", {"norm": True}),
        ],
        {"key": True},
    ),
}
WORDS = np.array(
    ["ham", "spam", "the", "naïve", "café", "ΣΑΣ", "σας", "прием", "中文", "free", "of"]
)


def documents(rng, n):
    return [" ".join(rng.choice(WORDS, rng.integers(1, 12))) for _ in range(n)]


def text_model(steps, library):
    """The steps made of fastnb's classes, or of scikit-learn's."""
    made = []
    for name, params in steps:
        if name == "TfidfTransformer":
            module = sklearn_text
        elif name.endswith("Vectorizer"):
            module = fastnb.text if library == "fastnb" else sklearn_text
        else:
            module = fastnb if library == "fastnb" else sklearn_nb
        made.append(getattr(module, name)(**params))
    return made[0] if len(made) == 1 else make_pipeline(*made)


def write_text_cases():
    """The golden files of text models, format 2."""
    folder = FOLDER / f"v{FORMAT_VERSION}"
    if folder.exists():
        print(f"{folder} exists: the files of a format version are never rewritten")
        return
    folder.mkdir(parents=True)
    rng = np.random.default_rng(20261206)
    expected, listed = {}, {}
    for case, (steps, *rest) in TEXT_CASES.items():
        options = rest[0] if rest else {}
        docs, probe = documents(rng, N_TRAIN), documents(rng, N_PROBE)
        y = LABELS[rng.integers(0, len(LABELS), N_TRAIN)]
        model = text_model(steps, "fastnb").fit(docs, y)
        oracle = text_model(steps, "scikit-learn").fit(docs, y)
        if hasattr(model, "predict_proba"):
            found, output = model.predict_proba(probe), oracle.predict_proba(probe)
            np.testing.assert_allclose(found, output, rtol=RTOL[found.dtype])
        else:
            found, output = model.transform(probe), oracle.transform(probe)
            found, output = found.toarray(), output.toarray()
            np.testing.assert_array_equal(found, output)
        key = SIGNING_KEY if options.get("key") else None
        fastnb.save(model, folder / f"{case}.fastnb", key=key)
        expected[f"{case}.documents"] = np.array(probe)
        expected[f"{case}.output"] = output
        listed[case] = {
            "kind": "pipeline" if len(steps) > 1 else "vectorizer",
            # Each step's parameters as a Python literal (ast.literal_eval
            # reads it), a dtype by its name.
            "steps": [
                [
                    name,
                    repr(
                        {
                            k: np.dtype(v).name if k == "dtype" else v
                            for k, v in params.items()
                        }
                    ),
                ]
                for name, params in steps
            ],
            "oracle": "scikit-learn",
            "rtol": RTOL[np.dtype(np.float64)],
            "key": None if key is None else key.decode(),
            "fastnb": fastnb.__version__,
        }
    np.savez(folder / "expected.npz", **expected)
    (folder / "cases.json").write_text(json.dumps(listed, indent=1) + "\n")
    print(f"{len(TEXT_CASES)} golden files in {folder}")


def main():
    write_text_cases()
    folder = FOLDER / f"v{MODEL_FORMAT_VERSION}"
    if folder.exists():
        print(f"{folder} exists: the files of a format version are never rewritten")
        return
    folder.mkdir(parents=True)
    rng = np.random.default_rng(20261127)
    expected, listed = {}, {}
    for case, (estimator, params, make, *rest) in CASES.items():
        options = rest[0] if rest else {}
        oracle = options.get("oracle", "scikit-learn")
        X, X_probe = make(rng, N_TRAIN), make(rng, N_PROBE)
        y = LABELS[rng.integers(0, len(LABELS), N_TRAIN)]
        fit_X = X
        if options.get("frame"):
            fit_X = pd.DataFrame(X, columns=[f"word{j}" for j in range(X.shape[1])])
        model = getattr(fastnb, estimator)(**params).fit(fit_X, y)
        probe = X_probe
        if options.get("frame"):
            probe = pd.DataFrame(X_probe, columns=fit_X.columns)
        proba = oracle_probabilities(estimator, params, oracle, X, y, X_probe)
        found = model.predict_proba(probe)
        rtol = options.get("rtol", RTOL[found.dtype])
        np.testing.assert_allclose(found, proba, rtol=rtol)
        key = SIGNING_KEY if options.get("key") else None
        fastnb.save(model, folder / f"{case}.fastnb", key=key)
        expected[f"{case}.X"] = X_probe
        expected[f"{case}.proba"] = proba
        listed[case] = {
            "estimator": estimator,
            "params": params,
            "oracle": oracle,
            "frame": bool(options.get("frame")),
            "rtol": rtol,
            "key": None if key is None else key.decode(),
            "fastnb": fastnb.__version__,
        }
    np.savez(folder / "expected.npz", **expected)
    (folder / "cases.json").write_text(json.dumps(listed, indent=1) + "\n")
    print(f"{len(CASES)} golden files in {folder}")


if __name__ == "__main__":
    main()
