"""fastnb.spark against Spark MLlib's NaiveBayes, on the same cached DataFrame.

    python bench/bench_spark.py [--master local[2]] [--repeats 3]
        [--partitions 2] [--gaussian-rows 1000000] [--text-rows 200000]
    python bench/bench_spark.py --scaling [--masters local[1],local[2]]
        [--partition-counts 1,2,4,8]

Three data sets, each cached in Spark before anything is timed: 20
Newsgroups' training posts as scikit-learn's ``CountVectorizer()`` counts
them (the shared data; skipped, naming the file, without it), a column of
sparse Spark ML vectors; the benchmark's synthetic text corpus
(``corpus.make_bag_of_words``: ``--text-rows`` documents of 2**18 words in
20 classes, about 100 distinct words a document; 0 skips it), sparse
vectors too; and Gaussian rows of 50 features in 10 classes, made in Spark
(``randn`` columns through ``VectorAssembler``), dense vectors. Each:
MLlib's NaiveBayes (``modelType`` "multinomial" or "gaussian") and
fastnb.spark's MultinomialNB or GaussianNB fitted, and
their models' ``transform`` written to Spark's "noop" sink (every row
scored, its prediction and probability made), the two libraries in turns,
medians of ``--repeats``. Prints the seconds and MLlib's time over
fastnb's.

``--scaling`` times fastnb.spark alone, on 20 Newsgroups and the Gaussian
rows, in a session of each of ``--masters`` (executor threads) and over
each of ``--partition-counts``, and prints the share of its fit's time
spent outside fastnb's kernels: the kernels' time is taken as the
in-memory fit of the same rows on one thread (the tasks' work, in sum),
its median of ``--repeats``, spread over the cores a fit can use (the
master's, at most the partitions); the rest of the Spark fit's time is
outside them.

Needs the extra (``pip install fastnb[spark]``) and Java.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import make_bag_of_words  # noqa: E402
from real_data import NEWSGROUPS_ARCHIVE, read_newsgroups, shared_data_dir  # noqa: E402


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - start, result


def scored(model, df):
    """Every row's prediction and probability made (Spark's noop sink)."""
    model.transform(df).select("prediction", "probability").write.format("noop").mode(
        "overwrite"
    ).save()


def newsgroups_frame(spark, partitions, in_memory=False):
    """20 Newsgroups' training counts as a DataFrame and its name, and with
    ``in_memory`` the same ``(X, y)`` as SciPy's and NumPy's; None without
    the data."""
    from sklearn.feature_extraction.text import CountVectorizer

    archive = shared_data_dir() / NEWSGROUPS_ARCHIVE
    if not archive.exists():
        print(f"20 Newsgroups: skipped, no {archive}")
        return None
    (posts, labels), _ = read_newsgroups(archive)
    X = CountVectorizer().fit_transform(posts)
    df = sparse_frame(spark, X, labels, partitions)
    if in_memory:
        return df, "20 Newsgroups", (X, np.asarray(labels, dtype=np.float64))
    return df, "20 Newsgroups"


def synthetic_text_frame(spark, n_rows, partitions):
    X, y = make_bag_of_words(n_documents=n_rows)
    return sparse_frame(spark, X, y, partitions), "synthetic text"


def sparse_frame(spark, X, labels, partitions):
    """A DataFrame of X's rows as sparse Spark ML vectors, and labels."""
    from pyspark.ml.linalg import Vectors

    X = X.tocsr()
    X.sort_indices()  # (a SparseVector takes its indices increasing)
    rows = [
        (
            Vectors.sparse(X.shape[1], X.indices[a:b], X.data[a:b].astype(float)),
            float(label),
        )
        for a, b, label in zip(X.indptr[:-1], X.indptr[1:], labels, strict=True)
    ]
    df = spark.createDataFrame(rows, ["features", "label"]).repartition(partitions)
    return df


def gaussian_frame(spark, n_rows, partitions):
    from pyspark.ml.feature import VectorAssembler
    from pyspark.sql import functions as F

    n_features, n_classes = 50, 10
    df = spark.range(n_rows, numPartitions=partitions).withColumn(
        "label", (F.col("id") % n_classes).cast("double")
    )
    columns = [f"x{j}" for j in range(n_features)]
    for j, name in enumerate(columns):
        df = df.withColumn(name, F.randn(seed=j) + 0.3 * F.col("label") * (j % 3))
    df = VectorAssembler(inputCols=columns, outputCol="features").transform(df)
    return df.select("features", "label"), "Gaussian"


def compare(df, what, mllib, ours, repeats):
    df = df.cache()
    n_rows = df.count()
    width = df.schema["features"].metadata.get("ml_attr", {}).get("num_attrs")
    if width is None:
        width = df.first().features.size
    what = f"{what}, {n_rows:,} x {width:,}"
    times = {
        "mllib fit": [],
        "fastnb fit": [],
        "mllib transform": [],
        "fastnb transform": [],
    }
    for repeat in range(repeats):
        order = (("mllib", mllib), ("fastnb", ours))
        for name, estimator in order if repeat % 2 == 0 else order[::-1]:
            seconds, model = timed(lambda estimator=estimator: estimator.fit(df))
            times[f"{name} fit"].append(seconds)
            seconds, _ = timed(lambda model=model: scored(model, df))
            times[f"{name} transform"].append(seconds)
    medians = {key: statistics.median(values) for key, values in times.items()}
    for step in ("fit", "transform"):
        mllib_s, ours_s = medians[f"mllib {step}"], medians[f"fastnb {step}"]
        print(
            f"| {what} | {step} | {mllib_s:.3f} s | {ours_s:.3f} s | "
            f"{mllib_s / ours_s:.1f}x |"
        )
    df.unpersist()


def in_memory(df):
    """``(X, y)`` of a cached DataFrame of features and labels, as NumPy (the
    features dense: the Gaussian rows)."""
    from pyspark.ml.functions import vector_to_array

    table = df.select(vector_to_array("features").alias("x"), "label").toArrow()
    rows = table.column("x").combine_chunks()
    width = len(rows[0]) if len(rows) else 0
    X = rows.flatten().to_numpy().reshape(len(rows), width)
    return X, table.column("label").to_numpy()


def kernel_seconds(estimator, X, y, repeats):
    """The in-memory fit of X, y on one thread: median seconds."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return statistics.median(timed(estimator.fit, X, y)[0] for _ in range(repeats))


def scaling(args):
    """fastnb.spark's fit and transform over partitions and masters, and
    the share of the fit spent outside fastnb's kernels."""
    import fastnb
    import fastnb.spark

    print("| master | data | partitions | fit | transform | kernels | outside |")
    print("|---|---|---|---|---|---|---|")
    for master in args.masters.split(","):
        cores = int(master.split("[")[1].split("]")[0].split(",")[0])
        spark = session(master)
        data = []
        text = newsgroups_frame(spark, 1, in_memory=True)
        if text is not None:
            data.append((*text, fastnb.MultinomialNB, fastnb.spark.MultinomialNB))
        df, what = gaussian_frame(spark, args.gaussian_rows, 1)
        df = df.cache()
        data.append(
            (df, what, in_memory(df), fastnb.GaussianNB, fastnb.spark.GaussianNB)
        )
        for df, what, (X, y), fast, ours in data:
            kernels = kernel_seconds(fast(), X, y, args.repeats)
            for partitions in map(int, args.partition_counts.split(",")):
                parted = df.repartition(partitions).cache()
                parted.count()
                fits, transforms = [], []
                for _ in range(args.repeats):
                    seconds, model = timed(ours().fit, parted)
                    fits.append(seconds)
                    transforms.append(timed(scored, model, parted)[0])
                fit = statistics.median(fits)
                ideal = kernels / min(cores, partitions)
                print(
                    f"| {master} | {what}, {X.shape[0]:,} x {X.shape[1]:,} | "
                    f"{partitions} | {fit:.3f} s | "
                    f"{statistics.median(transforms):.3f} s | "
                    f"{ideal / fit:.0%} | {1 - ideal / fit:.0%} |"
                )
                parted.unpersist()
        spark.stop()


def session(master):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--gaussian-rows", type=int, default=1_000_000)
    parser.add_argument("--text-rows", type=int, default=200_000)
    parser.add_argument("--scaling", action="store_true")
    parser.add_argument("--masters", default="local[1],local[2]")
    parser.add_argument("--partition-counts", default="1,2,4,8")
    args = parser.parse_args()
    if args.scaling:
        scaling(args)
        return

    from pyspark.ml.classification import NaiveBayes

    import fastnb.spark

    spark = session(args.master)
    print(f"{args.master}, {args.partitions} partitions, medians of {args.repeats}")
    print("| data | step | MLlib | fastnb.spark | MLlib / fastnb |")
    print("|---|---|---|---|---|")
    text = newsgroups_frame(spark, args.partitions)
    if text is not None:
        compare(
            *text,
            NaiveBayes(modelType="multinomial"),
            fastnb.spark.MultinomialNB(),
            args.repeats,
        )
    if args.text_rows:
        compare(
            *synthetic_text_frame(spark, args.text_rows, args.partitions),
            NaiveBayes(modelType="multinomial"),
            fastnb.spark.MultinomialNB(),
            args.repeats,
        )
    compare(
        *gaussian_frame(spark, args.gaussian_rows, args.partitions),
        NaiveBayes(modelType="gaussian"),
        fastnb.spark.GaussianNB(),
        args.repeats,
    )
    spark.stop()


if __name__ == "__main__":
    main()
