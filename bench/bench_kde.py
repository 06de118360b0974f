"""KernelDensityNB against GaussianNB: predict speed and accuracy.

Speed: predict and predict_proba of fastnb.KernelDensityNB (binned, the
defaults) against fastnb.GaussianNB on the dense workload of
bench_naive_bayes.py (Gaussian blobs, 10 classes, 50 features), both fitted
on the same rows; the calls interleaved, their order rotating, the ratio of
medians printed. Accuracy: held-out accuracy of GaussianNB and
KernelDensityNB (Scott, Silverman; exact where the training set is small)
on Adult's six numeric columns (its own train/test files), Spambase
(stratified ``train_test_split(test_size=0.25, random_state=42)``, as the
data README), and a synthetic set of bimodal and skewed features.

Usage::

    python bench/bench_kde.py [--quick] [--repeats N] [--data-dir DIR]
"""

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
from corpus import make_gaussian_blobs
from real_data import ADULT_NUMERIC, read_adult
from sklearn.model_selection import train_test_split

import fastnb

FULL_ROWS, QUICK_ROWS = 1_000_000, 100_000
# Exact densities cost O(training rows) a value: only on small sets.
EXACT_MOST_ROWS = 5_000


def time_predict(n_rows, repeats):
    """Median seconds of predict and predict_proba, KDE and Gaussian."""
    X, y = make_gaussian_blobs(n_rows)
    models = {
        "GaussianNB": fastnb.GaussianNB().fit(X, y),
        "KernelDensityNB": fastnb.KernelDensityNB().fit(X, y),
    }
    times = {(name, m): [] for name in models for m in ("predict", "predict_proba")}
    keys = list(times)
    for repeat in range(repeats):
        shift = repeat % len(keys)
        for name, method in keys[shift:] + keys[:shift]:
            start = time.perf_counter()
            getattr(models[name], method)(X)
            times[name, method].append(time.perf_counter() - start)
    fit = {}
    for name, model in models.items():
        start = time.perf_counter()
        type(model)().fit(X, y)
        fit[name] = time.perf_counter() - start
    return {key: statistics.median(value) for key, value in times.items()}, fit


def adult(data_dir):
    """Adult's numeric columns: (X_train, y_train, X_test, y_test)."""
    X_train, y_train = read_adult(data_dir / "adult" / "adult.data", 0)
    X_test, y_test = read_adult(data_dir / "adult" / "adult.test", 1)
    return (
        X_train[:, ADULT_NUMERIC].astype(np.float64),
        y_train,
        X_test[:, ADULT_NUMERIC].astype(np.float64),
        y_test,
    )


def spambase(data_dir):
    """Spambase, split as the data README says."""
    data = np.loadtxt(data_dir / "spambase" / "spambase.data", delimiter=",")
    X, y = data[:, :-1], data[:, -1].astype(int)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, random_state=42, stratify=y
    )
    return X_train, y_train, X_test, y_test


def bimodal(seed=0, n_samples=20_000, n_features=6):
    """Two classes; per feature one is bimodal, the other normal or skewed,
    with equal means: GaussianNB sees classes that differ in shape only."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n_samples)
    X = np.empty((n_samples, n_features))
    for j in range(n_features):
        side = rng.choice([-1.0, 1.0], n_samples)
        two_modes = rng.normal(2.0 * side, 0.7)
        other = (
            rng.normal(0.0, 2.1, n_samples)
            if j % 2
            else rng.gamma(2.0, 1.5, n_samples) - 3.0
        )
        X[:, j] = np.where(y == 1, two_modes, other)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, random_state=42, stratify=y
    )
    return X_train, y_train, X_test, y_test


def accuracies(X_train, y_train, X_test, y_test):
    """Held-out accuracy of each model."""
    models = {
        "GaussianNB": fastnb.GaussianNB(),
        "KDE scott": fastnb.KernelDensityNB(),
        "KDE silverman": fastnb.KernelDensityNB(bandwidth="silverman"),
    }
    if len(y_train) <= EXACT_MOST_ROWS:
        models["KDE exact"] = fastnb.KernelDensityNB(algorithm="exact")
    return {
        name: model.fit(X_train, y_train).score(X_test, y_test)
        for name, model in models.items()
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="100,000 rows")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(
            os.environ.get("FASTNB_DATA_DIR")
            or Path(__file__).resolve().parents[2] / "shared" / "data"
        ),
    )
    args = parser.parse_args()
    n_rows = QUICK_ROWS if args.quick else FULL_ROWS
    print(
        f"fastnb {fastnb.__version__}, {os.cpu_count()} CPUs, OMP_NUM_THREADS="
        f"{os.environ.get('OMP_NUM_THREADS', 'unset')}"
    )
    medians, fit = time_predict(n_rows, args.repeats)
    print(f"\nDense workload: {n_rows:,} x 50, 10 classes (median of {args.repeats})")
    print(f"{'method':<15}{'GaussianNB':>12}{'KDE':>12}{'KDE / Gaussian':>16}")
    for method in ("predict", "predict_proba"):
        g, k = medians["GaussianNB", method], medians["KernelDensityNB", method]
        print(f"{method:<15}{g:>11.3f}s{k:>11.3f}s{k / g:>16.2f}")
    g, k = fit["GaussianNB"], fit["KernelDensityNB"]
    print(f"{'fit (once)':<15}{g:>11.3f}s{k:>11.3f}s{k / g:>16.2f}")
    sets = {"synthetic bimodal": bimodal()}
    for name, load in (("Adult, numeric columns", adult), ("Spambase", spambase)):
        try:
            sets[name] = load(args.data_dir)
        except OSError as exc:
            print(f"\n{name}: skipped ({exc})")
    print("\nHeld-out accuracy")
    for name, data in sets.items():
        scores = accuracies(*data)
        shown = ", ".join(f"{model} {score:.4f}" for model, score in scores.items())
        print(f"{name} ({len(data[1]):,} train / {len(data[3]):,} test): {shown}")


if __name__ == "__main__":
    main()
