"""Time the fastnb build that Python imports, for comparing two builds.

Two builds of the same source (say, the stable-ABI build and one for this
CPython only, or two compiler flags) cannot be imported into one process,
so this script times whichever ``fastnb`` is importable, on fixed
workloads, and prints one JSON line of median seconds. Run it alternately
under each build's ``PYTHONPATH`` and compare the medians of the runs
(see bench/README.md, "The stable ABI").

    PYTHONPATH=/path/to/build-a python bench/bench_builds.py
"""

import json
import time

import numpy as np
import scipy.sparse as sp

import fastnb
from fastnb._simd import kernels


def median_seconds(call, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    rng = np.random.default_rng(0)
    counts = sp.random(
        20_000, 5_000, density=0.01, format="csr", random_state=0, dtype=np.float64
    )
    counts.data = rng.integers(1, 5, counts.nnz).astype(np.float64)
    labels = rng.integers(0, 5, counts.shape[0])
    dense = rng.normal(size=(100_000, 20))
    dense_labels = rng.integers(0, 3, dense.shape[0])
    one_row = dense[:1]
    multinomial = fastnb.MultinomialNB().fit(counts, labels)
    gaussian = fastnb.GaussianNB().fit(dense, dense_labels)
    times = {
        "kernels": kernels.__file__,
        "MultinomialNB fit, CSR 20,000 x 5,000": median_seconds(
            lambda: fastnb.MultinomialNB().fit(counts, labels), 7
        ),
        "MultinomialNB predict_proba": median_seconds(
            lambda: multinomial.predict_proba(counts), 7
        ),
        "GaussianNB fit, dense 100,000 x 20": median_seconds(
            lambda: fastnb.GaussianNB().fit(dense, dense_labels), 7
        ),
        "GaussianNB predict_proba": median_seconds(
            lambda: gaussian.predict_proba(dense), 7
        ),
        "GaussianNB predict_proba of one row, 200 calls": median_seconds(
            lambda: [gaussian.predict_proba(one_row) for _ in range(200)], 5
        ),
    }
    print(json.dumps(times))


if __name__ == "__main__":
    main()
