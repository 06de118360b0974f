"""
Thread scaling, from the benchmark's records
============================================

fastnb's kernels run on every core the process may use (OpenMP threads,
set by ``OMP_NUM_THREADS`` or ``threadpoolctl``), and its results do not
depend on the number of threads. This example plots figures that the
benchmark recorded: how much faster each operation ran on two threads
than on one, how far Amdahl's law lets each go on more cores given the
share of its time spent outside the parallel kernels, and how many times
faster than scikit-learn it was at one and at two threads. It runs no
benchmark: the figures are copied from ``bench/README.md``.
"""

# %%
# The recorded figures
# --------------------
# From ``bench/README.md``, record "2026-11-24, every core: serial share,
# thread scaling, against a parallel read": the output of
#
# .. code-block:: bash
#
#    python bench/bench_naive_bayes.py --threads 1,2 \
#        --estimators multinomial,complement,bernoulli
#
# (full data: 200,000 documents x 2**18 words in 20 classes for
# MultinomialNB, 1,000,000 x 50 dense values in 10 classes for GaussianNB,
# 1,000,000 x 20 category codes in 5 classes for CategoricalNB; 3 repeats,
# medians) on the 2-core development machine (a Xeon with AVX-512; fastnb's
# baseline build, scikit-learn 1.9.1). Two threads are all that machine
# has. For each operation: the median seconds at one and at two threads,
# the speedup the record gives, the ratio of scikit-learn's time to
# fastnb's at one and at two threads (scikit-learn's Naive Bayes runs on
# one thread), and the share of the one-thread time spent outside the
# parallel kernels (the serial share), with the cap on 16 cores that the
# record derives from it.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

columns = [
    "estimator",
    "operation",
    "seconds_1",
    "seconds_2",
    "speedup",
    "sklearn_ratio_1",
    "sklearn_ratio_2",
    "serial_share",
    "cap_16",
]
records = [
    ("MultinomialNB", "fit", 0.188, 0.111, 1.69, 5.8, 9.7, 0.019, 12.5),
    ("MultinomialNB", "partial_fit", 0.247, 0.148, 1.67, 7.6, 12.6, 0.059, 8.5),
    ("MultinomialNB", "predict", 0.479, 0.237, 2.02, 2.0, 4.1, 0.002, 15.6),
    ("MultinomialNB", "predict_proba", 0.544, 0.259, 2.10, 2.1, 4.3, 0.001, 15.7),
    ("GaussianNB", "fit", 0.043, 0.027, 1.59, 14.6, 23.3, 0.022, 12.1),
    ("GaussianNB", "partial_fit", 0.047, 0.037, 1.28, 11.1, 14.1, 0.163, 4.6),
    ("GaussianNB", "predict", 0.233, 0.122, 1.91, 11.1, 21.2, 0.007, 14.4),
    ("GaussianNB", "predict_proba", 0.379, 0.198, 1.91, 6.7, 12.7, 0.003, 15.4),
    ("CategoricalNB", "fit", 0.040, 0.023, 1.72, 28.9, 49.6, 0.040, 10.0),
    ("CategoricalNB", "partial_fit", 0.043, 0.029, 1.48, 28.3, 41.9, 0.233, 3.6),
    ("CategoricalNB", "predict", 0.045, 0.027, 1.66, 11.3, 18.8, 0.035, 10.5),
    ("CategoricalNB", "predict_proba", 0.142, 0.078, 1.82, 5.9, 10.8, 0.006, 14.8),
]
table = pd.DataFrame(records, columns=columns)
print(table.to_string(index=False))

# %%
# Two checks that the figures were copied consistently: the speedups are
# the ratios of the times (to the rounding of the times to milliseconds),
# and the caps are Amdahl's law, ``1 / (s + (1 - s) / n)`` for a serial
# share s on n = 16 cores (to the rounding of the shares).


def amdahl(serial_share, n_threads):
    """The speedup on n_threads of work whose serial share is serial_share."""
    return 1.0 / (serial_share + (1.0 - serial_share) / n_threads)


np.testing.assert_allclose(table.seconds_1 / table.seconds_2, table.speedup, rtol=0.03)
np.testing.assert_allclose(amdahl(table.serial_share, 16), table.cap_16, rtol=0.02)

# %%
# Speedup against threads
# -----------------------
# Left, the measured speedups: each operation's time at one thread over its
# time at one and at two threads, against the ideal (as many times faster
# as there are threads). Middle, the bound Amdahl's law sets from each
# operation's serial share, out to 16 threads: a calculation, not a
# measurement (on more cores the memory bandwidth, not the serial share,
# may limit first). Right, how many times faster than scikit-learn each
# operation was, at one thread and at two. MultinomialNB's predict and
# predict_proba came out a little above the ideal (2.02 and 2.10 times);
# the record does not say why.
threads = np.arange(1, 17)
colours = {"MultinomialNB": "C0", "GaussianNB": "C1", "CategoricalNB": "C2"}
styles = {"fit": "-", "partial_fit": "--", "predict": ":", "predict_proba": "-."}

fig, (measured, bound, ratio) = plt.subplots(
    1, 3, figsize=(15, 5), gridspec_kw={"width_ratios": [1, 1.3, 1.3]}
)
for axes, top in ((measured, 2), (bound, 16)):
    axes.plot([1, top], [1, top], color="black", linewidth=0.8, label="ideal")
for row in table.itertuples():
    style = {"color": colours[row.estimator], "linestyle": styles[row.operation]}
    measured.plot([1, 2], [1.0, row.speedup], marker="o", **style)
    bound.plot(threads, amdahl(row.serial_share, threads), **style)
measured.set_xticks([1, 2])
measured.set_xlabel("threads")
measured.set_ylabel("speedup over one thread")
measured.set_title("Measured (2-core machine)")
bound.set_xlabel("threads")
bound.set_ylabel("largest speedup Amdahl's law allows")
bound.set_title("Bound from the serial share (calculated)")
handles = (
    [
        plt.Line2D([], [], color=colour, label=estimator)
        for estimator, colour in colours.items()
    ]
    + [
        plt.Line2D([], [], color="grey", linestyle=style, label=operation)
        for operation, style in styles.items()
    ]
    + [plt.Line2D([], [], color="black", linewidth=0.8, label="ideal")]
)
bound.legend(handles=handles, fontsize="small", loc="upper left")

labels = [f"{r.estimator} {r.operation}" for r in table.itertuples()]
positions = np.arange(len(table))
ratio.barh(positions - 0.2, table.sklearn_ratio_1, height=0.4, label="1 thread")
ratio.barh(positions + 0.2, table.sklearn_ratio_2, height=0.4, label="2 threads")
ratio.set_yticks(positions, labels, fontsize="small")
ratio.invert_yaxis()
ratio.set_xlabel("scikit-learn's time / fastnb's")
ratio.set_title("Times faster than scikit-learn 1.9.1")
ratio.legend(loc="lower right")
fig.tight_layout()
plt.show()
