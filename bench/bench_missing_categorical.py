"""CategoricalNB with missing values: accuracy on Adult, and speed.

Accuracy: CategoricalNB on Adult's eight categorical columns (its own
adult.data / adult.test split), its ``?`` entries taken as missing, three
ways: ``missing="ignore"`` (every row trained on and scored, a missing
value's feature left out); dropping the rows with any ``?`` (in training,
and in testing too, since such a row cannot be scored: accuracy over the
complete test rows only, beside "ignore"'s on the same rows); and imputing
each column's most frequent training value (train and test).

Speed (with ``--main DIR``, a checkout with a built fastnb to compare
with): fit and predict of CategoricalNB, missing="error", this tree's
against DIR's, both imported in this one process, the calls interleaved
and their order rotating, the ratio of medians printed; on float codes
(500,000 x 20, 5 classes) and on string columns; then missing="ignore"
with 10% of the codes missing against "error" on the complete codes.

Usage::

    python bench/bench_missing_categorical.py [--data-dir DIR] [--main DIR]
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

ADULT_CATEGORICAL = [1, 3, 5, 6, 7, 8, 9, 13]  # workclass ... native-country


def read_adult(path, skiprows):
    """Adult's categorical columns (objects, None where '?') and labels."""
    frame = pd.read_csv(
        path,
        header=None,
        skiprows=skiprows,
        skipinitialspace=True,
        dtype=str,
        keep_default_na=False,
    )
    X = frame.iloc[:, ADULT_CATEGORICAL].to_numpy(dtype=object)
    X[X == "?"] = None
    return X, frame.iloc[:, -1].str.rstrip(".").to_numpy()


def adult_accuracies(fastnb, data_dir):
    """{strategy: (accuracy, test rows scored)} on Adult (see the module)."""
    X_train, y_train = read_adult(data_dir / "adult" / "adult.data", 0)
    X_test, y_test = read_adult(data_dir / "adult" / "adult.test", 1)
    ignore = fastnb.CategoricalNB(missing="ignore").fit(X_train, y_train)
    complete_train = ~(X_train == None).any(axis=1)  # noqa: E711 (element-wise)
    complete_test = ~(X_test == None).any(axis=1)  # noqa: E711
    dropped = fastnb.CategoricalNB().fit(
        X_train[complete_train], y_train[complete_train]
    )
    modes = [
        pd.Series(column[column != None]).mode()[0]  # noqa: E711
        for column in X_train.T
    ]
    imputed = fastnb.CategoricalNB().fit(impute(X_train, modes), y_train)
    as_category = fastnb.CategoricalNB().fit(question_marks(X_train), y_train)
    return {
        "'?' a category of its own, all test rows": (
            as_category.score(question_marks(X_test), y_test),
            len(y_test),
        ),
        'missing="ignore", all test rows': (
            ignore.score(X_test, y_test),
            len(y_test),
        ),
        "rows with '?' dropped, complete test rows": (
            dropped.score(X_test[complete_test], y_test[complete_test]),
            int(complete_test.sum()),
        ),
        'missing="ignore", complete test rows': (
            ignore.score(X_test[complete_test], y_test[complete_test]),
            int(complete_test.sum()),
        ),
        "missing=\"ignore\", test rows with a '?'": (
            ignore.score(X_test[~complete_test], y_test[~complete_test]),
            int((~complete_test).sum()),
        ),
        "mode imputed, all test rows": (
            imputed.score(impute(X_test, modes), y_test),
            len(y_test),
        ),
    }


def question_marks(X):
    """X with its missing values back as the category '?'."""
    return impute(X, ["?"] * X.shape[1])


def impute(X, modes):
    """X with each column's missing values replaced by its mode."""
    X = X.copy()
    for j, mode in enumerate(modes):
        X[X[:, j] == None, j] = mode  # noqa: E711
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


def speed(ours, theirs, n_rows, repeats):
    """Ratios of median times (this tree / the other), and of "ignore" with
    10% missing / "error"."""
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 8, size=(n_rows, 20)).astype(np.float64)
    y = rng.integers(0, 5, size=n_rows)
    strings = np.array(["red", "green", "blue", "amber"], dtype=object)[
        rng.integers(0, 4, size=(n_rows // 10, 5))
    ]
    y_strings = y[: n_rows // 10]
    with_missing = np.where(rng.random(codes.shape) < 0.1, np.nan, codes)
    rows = []
    for name, X, labels in (
        ("float codes", codes, y),
        ("string columns", strings, y_strings),
    ):
        models = {
            "ours": ours.CategoricalNB().fit(X, labels),
            "theirs": theirs.CategoricalNB().fit(X, labels),
        }
        times = interleaved(
            {
                (who, "fit"): (lambda m=m, X=X, y=labels: type(m)().fit(X, y))
                for who, m in models.items()
            }
            | {
                (who, "predict"): (lambda m=m, X=X: m.predict(X))
                for who, m in models.items()
            },
            repeats,
        )
        for method in ("fit", "predict"):
            rows.append(
                (
                    f"{name}, {method}: this tree / main",
                    times["ours", method] / times["theirs", method],
                )
            )
    error = ours.CategoricalNB().fit(codes, y)
    ignore = ours.CategoricalNB(missing="ignore").fit(with_missing, y)
    times = interleaved(
        {
            "error fit": lambda: ours.CategoricalNB().fit(codes, y),
            "ignore fit": lambda: ours.CategoricalNB(missing="ignore").fit(
                with_missing, y
            ),
            "error predict": lambda: error.predict(codes),
            "ignore predict": lambda: ignore.predict(with_missing),
        },
        repeats,
    )
    for method in ("fit", "predict"):
        rows.append(
            (
                f'float codes, {method}: "ignore" (10% NaN) / "error"',
                times[f"ignore {method}"] / times[f"error {method}"],
            )
        )
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--main", type=Path, default=None)
    parser.add_argument("--rows", type=int, default=500_000)
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
        print("Adult, categorical columns, '?' as missing:")
        for strategy, (accuracy, n) in adult_accuracies(ours, data_dir).items():
            print(f"  {strategy:45s} {accuracy:.4f}  ({n} rows)")
    else:
        print(f"Adult not found under {data_dir}: no accuracies")
    if theirs is not None:
        print(f"against {theirs.__file__}, {args.rows} rows, {args.repeats} repeats:")
        for name, ratio in speed(ours, theirs, args.rows, args.repeats):
            print(f"  {name:50s} {ratio:.3f}")


if __name__ == "__main__":
    main()
