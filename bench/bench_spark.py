"""fastnb.spark against Spark MLlib's NaiveBayes, on the same cached DataFrame.

    python bench/bench_spark.py [--master local[2]] [--repeats 3]
        [--partitions 2] [--gaussian-rows 1000000]

Two data sets, each cached in Spark before anything is timed: 20
Newsgroups' training posts as scikit-learn's ``CountVectorizer()`` counts
them (the shared data; skipped, naming the file, without it), a column of
sparse Spark ML vectors; and Gaussian rows of 50 features in 10 classes,
made in Spark (``randn`` columns through ``VectorAssembler``), dense
vectors. Each: MLlib's NaiveBayes (``modelType`` "multinomial" or
"gaussian") and fastnb.spark's MultinomialNB or GaussianNB fitted, and
their models' ``transform`` written to Spark's "noop" sink (every row
scored, its prediction and probability made), the two libraries in turns,
medians of ``--repeats``. Prints the seconds and MLlib's time over
fastnb's. Needs the extra (``pip install fastnb[spark]``) and Java.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_data import NEWSGROUPS_ARCHIVE, read_newsgroups, shared_data_dir  # noqa: E402


def timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def scored(model, df):
    """Every row's prediction and probability made (Spark's noop sink)."""
    model.transform(df).select("prediction", "probability").write.format("noop").mode(
        "overwrite"
    ).save()


def newsgroups_frame(spark, partitions):
    from pyspark.ml.linalg import Vectors
    from sklearn.feature_extraction.text import CountVectorizer

    archive = shared_data_dir() / NEWSGROUPS_ARCHIVE
    if not archive.exists():
        print(f"20 Newsgroups: skipped, no {archive}")
        return None
    (posts, labels), _ = read_newsgroups(archive)
    X = CountVectorizer().fit_transform(posts).tocsr()
    X.sort_indices()  # (a SparseVector takes its indices increasing)
    rows = [
        (
            Vectors.sparse(X.shape[1], X.indices[a:b], X.data[a:b].astype(float)),
            float(label),
        )
        for a, b, label in zip(X.indptr[:-1], X.indptr[1:], labels, strict=True)
    ]
    df = spark.createDataFrame(rows, ["features", "label"]).repartition(partitions)
    return df, f"20 Newsgroups, {X.shape[0]:,} x {X.shape[1]:,}"


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
    return df.select("features", "label"), f"Gaussian, {n_rows:,} x {n_features}"


def compare(df, what, mllib, ours, repeats):
    df = df.cache()
    df.count()
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--gaussian-rows", type=int, default=1_000_000)
    args = parser.parse_args()

    from pyspark.ml.classification import NaiveBayes
    from pyspark.sql import SparkSession

    import fastnb.spark

    spark = (
        SparkSession.builder.master(args.master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
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
    compare(
        *gaussian_frame(spark, args.gaussian_rows, args.partitions),
        NaiveBayes(modelType="gaussian"),
        fastnb.spark.GaussianNB(),
        args.repeats,
    )
    spark.stop()


if __name__ == "__main__":
    main()
