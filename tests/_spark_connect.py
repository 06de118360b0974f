"""Run by test_spark.py in a process of its own (a Spark Connect session
cannot share a process with the tests' classic one): fits and transforms
over a local Spark Connect server, ``python _spark_connect.py FOLDER``.

Reads FOLDER/data.npz (``X``, ``y``, and ``colour`` and ``size`` columns of
strings with None), and writes there what the test compares with
in-memory fastnb: the fitted models' fastnb files (``counts.fnb``,
``categories.fnb``), the counts model's transform (``prediction.npy``,
``probability.npy``, in the rows' order) and the model written with Spark
ML's persistence (twice, the second time over the first) and read back
(``loaded.fnb``).
"""

import sys
from pathlib import Path

import numpy as np
from pyspark.ml.linalg import Vectors, VectorUDT
from pyspark.sql import SparkSession, is_remote
from pyspark.sql.types import LongType, StringType, StructField, StructType

import fastnb
import fastnb.spark


def main(folder):
    data = np.load(folder / "data.npz", allow_pickle=True)
    X, y = data["X"], data["y"]
    spark = (
        SparkSession.builder.remote("local[2]")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    if not is_remote():
        raise SystemExit("not a Spark Connect session")
    rows = [
        (
            i,
            Vectors.sparse(len(row), np.flatnonzero(row), row[row != 0])
            if i % 2
            else Vectors.dense(row),
            str(label),
            colour,
            size,
        )
        for i, (row, label, colour, size) in enumerate(
            zip(X, y, data["colour"], data["size"], strict=True)
        )
    ]
    schema = StructType(
        [
            StructField("index", LongType()),
            StructField("features", VectorUDT()),
            *(StructField(name, StringType()) for name in ("label", "colour", "size")),
        ]
    )
    df = spark.createDataFrame(rows, schema).repartition(3)
    counts = fastnb.spark.MultinomialNB(alpha=0.5).fit(df)
    fastnb.save(counts.fastnb_estimator, folder / "counts.fnb")
    out = counts.transform(df).orderBy("index").collect()
    np.save(folder / "prediction.npy", np.array([row.prediction for row in out]))
    np.save(
        folder / "probability.npy", np.stack([row.probability.toArray() for row in out])
    )
    for _ in range(2):
        counts.write().overwrite().save(str(folder / "spark_model"))
    loaded = fastnb.spark.MultinomialNBModel.load(str(folder / "spark_model"))
    fastnb.save(loaded.fastnb_estimator, folder / "loaded.fnb")
    categories = fastnb.spark.CategoricalNB(
        inputCols=["colour", "size"], missing="ignore"
    ).fit(df)
    fastnb.save(categories.fastnb_estimator, folder / "categories.fnb")
    spark.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
