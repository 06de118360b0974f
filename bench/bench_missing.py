"""Missing values: accuracy on Adult, and what missing="ignore" costs.

Accuracy: Adult (its own adult.data / adult.test split), its ``?`` entries
(all in the categorical columns workclass, occupation and native-country)
taken as missing, by two models: CategoricalNB on the eight categorical
columns, and MixedNB on all fourteen (the six numeric ones Gaussian). Each
is fitted four ways: ``?`` as a category of its own (what a model without
missing values does with the file as it is); ``missing="ignore"`` (every row
trained on and scored, a missing value's feature left out); dropping the
rows with any ``?`` (in training, and in testing too, since such a row
cannot be scored: accuracy over the complete test rows only, beside
"ignore"'s on the same rows); and imputing each column's most frequent
training value (train and test).

Speed, for every family, on synthetic data (``--rows`` rows, 20 features,
5 classes): fit and predict with missing="ignore" and 10% of the values
missing, against missing="error" on the complete data, in one process, the
calls interleaved in rotating order, the ratio of medians printed. With
``--main DIR`` (a checkout with a built fastnb), also missing="error"'s fit
and predict against DIR's, both packages imported in this one process.

Usage::

    python bench/bench_missing.py [--data-dir DIR] [--main DIR]
        [--rows N] [--repeats N]
"""

import argparse
import importlib
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from real_data import ADULT_CATEGORICAL, ADULT_NUMERIC, read_adult


def models(fastnb, missing):
    """The two models compared, by name: (estimator, columns of X)."""
    mixed = fastnb.MixedNB(
        families={"gaussian": ADULT_NUMERIC, "categorical": ADULT_CATEGORICAL},
        missing=missing,
    )
    return {
        "CategoricalNB, 8 categorical columns": (
            fastnb.CategoricalNB(missing=missing),
            ADULT_CATEGORICAL,
        ),
        "MixedNB, all 14 columns": (mixed, sorted(ADULT_NUMERIC + ADULT_CATEGORICAL)),
    }


def adult_accuracies(fastnb, data_dir):
    """{(model, strategy): (accuracy, test rows scored)} on Adult."""
    X_train, y_train = read_adult(data_dir / "adult" / "adult.data", 0)
    X_test, y_test = read_adult(data_dir / "adult" / "adult.test", 1)
    complete_train = ~pd.isna(X_train).any(axis=1)
    complete_test = ~pd.isna(X_test).any(axis=1)
    modes = [pd.Series(column).mode()[0] for column in X_train.T]
    results = {}
    for name, (error, columns) in models(fastnb, "error").items():
        ignore = models(fastnb, "ignore")[name][0]

        def fitted(model, X, y, columns=columns):
            return model.fit(X[:, columns], y)

        def score(model, X, y, columns=columns):
            return model.score(X[:, columns], y), len(y)

        ignore = fitted(ignore, X_train, y_train)
        as_category = fitted(error, impute(X_train, "?"), y_train)
        results[name, "'?' a category of its own, all test rows"] = score(
            as_category, impute(X_test, "?"), y_test
        )
        results[name, 'missing="ignore", all test rows'] = score(ignore, X_test, y_test)
        imputed = fitted(
            models(fastnb, "error")[name][0], impute(X_train, modes), y_train
        )
        results[name, "mode imputed, all test rows"] = score(
            imputed, impute(X_test, modes), y_test
        )
        dropped = fitted(
            models(fastnb, "error")[name][0],
            X_train[complete_train],
            y_train[complete_train],
        )
        results[name, "rows with '?' dropped, complete test rows"] = score(
            dropped, X_test[complete_test], y_test[complete_test]
        )
        results[name, 'missing="ignore", complete test rows'] = score(
            ignore, X_test[complete_test], y_test[complete_test]
        )
        results[name, "missing=\"ignore\", test rows with a '?'"] = score(
            ignore, X_test[~complete_test], y_test[~complete_test]
        )
    return results


def impute(X, values):
    """X with each column's missing values replaced by its value in
    ``values`` (one for all columns, or one each)."""
    X = X.copy()
    for j in range(X.shape[1]):
        value = values if isinstance(values, str) else values[j]
        X[pd.isna(X[:, j]), j] = value
    return X


def import_fastnb(folder):
    """The fastnb package of a checkout, imported afresh (any other fastnb
    already imported keeps working through its own modules)."""
    for name in [name for name in sys.modules if name.split(".")[0] == "fastnb"]:
        del sys.modules[name]
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module("fastnb")
    finally:
        sys.path.remove(str(folder))


def interleaved(calls, repeats):
    """Median seconds of each call, run in rotating order."""
    times = {name: [] for name in calls}
    names = list(calls)
    for repeat in range(repeats):
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(value) for name, value in times.items()}


def family_data(n_rows):
    """{estimator name: (X, y)}: data each family models, 20 features."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, n_rows)
    counts = rng.poisson(rng.uniform(0.5, 3.0, (5, 20))[y]).astype(np.float64)
    normal = rng.normal(size=(n_rows, 20)) + y[:, None] * 0.3
    codes = rng.integers(0, 8, (n_rows, 20)).astype(np.float64)
    return {
        "MultinomialNB": (counts, y),
        "BernoulliNB": (counts, y),
        "PoissonNB": (counts, y),
        "GaussianNB": (normal, y),
        "KernelDensityNB": (normal, y),
        "CategoricalNB": (codes, y),
    }


def ignore_against_error(fastnb, n_rows, repeats):
    """(row name, ratio) of "ignore" with 10% missing / "error"."""
    rng = np.random.default_rng(1)
    rows = []
    for name, (X, y) in family_data(n_rows).items():
        holes = np.where(rng.random(X.shape) < 0.1, np.nan, X)
        estimator = getattr(fastnb, name)
        error = estimator().fit(X, y)
        ignore = estimator(missing="ignore").fit(holes, y)
        times = interleaved(
            {
                "error fit": lambda e=estimator, X=X, y=y: e().fit(X, y),
                "ignore fit": lambda e=estimator, X=holes, y=y: e(missing="ignore").fit(
                    X, y
                ),
                "error predict": lambda m=error, X=X: m.predict_proba(X),
                "ignore predict": lambda m=ignore, X=holes: m.predict_proba(X),
            },
            repeats,
        )
        for method in ("fit", "predict"):
            rows.append(
                (
                    f'{name} {method}: "ignore" (10% NaN) / "error"',
                    times[f"ignore {method}"] / times[f"error {method}"],
                )
            )
    return rows


def error_against_main(ours, theirs, n_rows, repeats):
    """(row name, ratio) of missing="error" here / in the other checkout."""
    rows = []
    for name, (X, y) in family_data(n_rows).items():
        fitted = {
            who: getattr(package, name)().fit(X, y)
            for who, package in (("ours", ours), ("theirs", theirs))
        }
        times = interleaved(
            {
                (who, "fit"): (lambda m=m, X=X, y=y: type(m)().fit(X, y))
                for who, m in fitted.items()
            }
            | {
                (who, "predict"): (lambda m=m, X=X: m.predict_proba(X))
                for who, m in fitted.items()
            },
            repeats,
        )
        for method in ("fit", "predict"):
            rows.append(
                (
                    f'{name} {method}, "error": this tree / main',
                    times["ours", method] / times["theirs", method],
                )
            )
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--main", type=Path, default=None)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1]
    theirs = import_fastnb(args.main) if args.main else None
    ours = import_fastnb(here)
    print(f"fastnb {ours.__file__}")
    data_dir = args.data_dir or Path(
        os.environ.get("FASTNB_DATA_DIR") or here.parent / "shared" / "data"
    )
    if (data_dir / "adult" / "adult.data").exists():
        print("Adult, '?' as missing:", file=sys.stderr)
        for (model, strategy), (accuracy, n) in adult_accuracies(
            ours, data_dir
        ).items():
            print(f"  {model:38s} {strategy:45s} {accuracy:.4f}  ({n} rows)")
    else:
        print(f"Adult not found under {data_dir}: no accuracies")
    print(f"{args.rows} rows, {args.repeats} repeats:", file=sys.stderr)
    for name, ratio in ignore_against_error(ours, args.rows, args.repeats):
        print(f"  {name:55s} {ratio:.3f}")
    if theirs is not None:
        print(f"against {theirs.__file__}:", file=sys.stderr)
        for name, ratio in error_against_main(ours, theirs, args.rows, args.repeats):
            print(f"  {name:55s} {ratio:.3f}")


if __name__ == "__main__":
    main()
