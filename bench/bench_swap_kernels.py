"""Time the scoring kernels of two builds in one process, in turns.

Two builds of fastnb cannot both be imported, but the compiled module of
another build (the variant this CPU runs, say ``_vectorised_avx2``) can be
loaded beside the installed one and its kernels swapped in on the
estimators. Each case's prediction is then timed with one build and the
other in turns (the order alternating each round), checked to be the same
bit for bit, and the medians' ratio printed: other / installed, above 1
where the installed build is faster.

    python bench/bench_swap_kernels.py /path/to/other/build/fastnb [--rounds 21]

(``OMP_NUM_THREADS=1`` gives the steadiest figures on a shared machine.)
"""

import argparse
import importlib.machinery
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import fastnb
from fastnb import _simd

SCORING = (
    "discrete_score_csr",
    "discrete_score_dense",
    "gaussian_score_dense",
    "gaussian_score_csr",
    "categorical_score_dense",
    "categorical_score_csr",
    "kde_score_dense",
)


def load_beside(folder, name):
    """The compiled module ``name`` of the build in ``folder``, loaded
    without replacing the installed one."""
    path = next(Path(folder).glob(f"{name.rsplit('.', 1)[1]}.*so"))
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def use(module):
    for name in SCORING:
        setattr(_simd.kernels, name, getattr(module, name))


def cases(n_samples=200_000):
    rng = np.random.default_rng(0)
    counts = sp.random(
        n_samples,
        5_000,
        density=0.003,
        format="csr",
        random_state=0,
        data_rvs=lambda k: rng.integers(1, 4, k),
    ).astype(np.float64)
    many, two = rng.integers(0, 20, n_samples), rng.integers(0, 2, n_samples)
    dense = rng.normal(size=(n_samples, 30)) + two[:, None] * 0.3
    codes = rng.integers(0, 5, size=(n_samples, 20))
    sparse = sp.random(n_samples, 2_000, density=0.01, format="csr", random_state=1)
    single = dense.astype(np.float32)
    yield (
        "MultinomialNB CSR, 20 classes",
        fastnb.MultinomialNB().fit(counts, many),
        counts,
    )
    yield (
        "MultinomialNB CSR, 2 classes",
        fastnb.MultinomialNB().fit(counts, two),
        counts,
    )
    binary = (dense > 0).astype(np.float64)
    yield "BernoulliNB dense", fastnb.BernoulliNB().fit(binary, two), binary
    yield "GaussianNB dense, 20 classes", fastnb.GaussianNB().fit(dense, many), dense
    yield "GaussianNB dense float32", fastnb.GaussianNB().fit(single, two), single
    yield "GaussianNB CSR", fastnb.GaussianNB().fit(sparse, two), sparse
    yield (
        "CategoricalNB dense, 20 classes",
        fastnb.CategoricalNB().fit(codes, many),
        codes,
    )
    codes_csr = sp.csr_matrix(codes)
    yield "CategoricalNB CSR", fastnb.CategoricalNB().fit(codes_csr, two), codes_csr
    kde = fastnb.KernelDensityNB().fit(dense[:, :8], two)
    yield "KernelDensityNB", kde, dense[: n_samples // 4, :8]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", help="the other build's fastnb folder")
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    name = _simd.kernels.__name__
    installed, other = sys.modules[name], load_beside(args.other, name)
    print(f"{name}: installed {installed.__file__}, other {other.__file__}")
    for case, model, X in cases():
        for method in ("predict_proba", "predict"):
            predict = getattr(model, method)
            use(installed)
            expected = predict(X)
            use(other)
            if not np.array_equal(predict(X), expected):
                raise SystemExit(f"{case} {method}: the builds disagree")
            times = {installed: [], other: []}
            for round_ in range(args.rounds):
                order = (installed, other) if round_ % 2 else (other, installed)
                for module in order:
                    use(module)
                    start = time.perf_counter()
                    predict(X)
                    times[module].append(time.perf_counter() - start)
            seconds = {module: np.median(t) for module, t in times.items()}
            print(
                f"{case:32s} {method:14s} installed {seconds[installed] * 1e3:7.2f} ms"
                f"  other {seconds[other] * 1e3:7.2f} ms"
                f"  other / installed {seconds[other] / seconds[installed]:5.3f}",
                flush=True,
            )
    use(installed)


if __name__ == "__main__":
    main()
