"""fastnb.spark on a real Spark session: Spark fits and transforms equal
in-memory fastnb's.

One ``local[2, 3]`` session (module-scoped: two cores, a task tried up to
three times) runs every test; Spark needs Java, which CI installs. The
cases are the invariant tests' (``_helpers.CASES``), their float values
rounded to multiples of 1/8 so that sums are exact in any order: a Spark
fit's counts and category tables must equal one in-memory fit's exactly,
and its Gaussian moments to rounding. Numbers go in as a column of Spark
ML vectors (every other row sparse, where the family takes sparse X),
strings and frames as columns of their own (``inputCols``).
"""

import gc
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastnb
from fastnb._files import state_bytes

from _helpers import CASES, assert_same_fit, exact

pytest.importorskip("pyspark")
if shutil.which("java") is None and "JAVA_HOME" not in os.environ:
    pytest.skip(
        "Spark needs Java (java on the PATH, or JAVA_HOME)", allow_module_level=True
    )

from pyspark.ml import Pipeline, PipelineModel
from pyspark.ml.evaluation import MulticlassClassificationEvaluator
from pyspark.ml.feature import StringIndexer, VectorAssembler
from pyspark.ml.linalg import Vectors, VectorUDT
from pyspark.ml.tuning import CrossValidator, ParamGridBuilder
from pyspark.sql import SparkSession
from pyspark.sql.types import (
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

import fastnb.spark

# pyspark warns on every Arrow or pandas conversion under pandas 3.
pytestmark = pytest.mark.filterwarnings(
    "ignore:PySpark does not yet fully support pandas:FutureWarning"
)

CASE = {case.id: case for case in CASES}
N_SAMPLES = 240
N_PARTITIONS = 3


@pytest.fixture(scope="module")
def spark():
    # Spark starts its Python workers with `python -m`, which puts the
    # working folder first on sys.path: run from a checkout, they would
    # import its fastnb/ (no kernels built there) rather than the installed
    # one. PYTHONSAFEPATH leaves it out; the JVM and the workers inherit it.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONSAFEPATH", "1")
        session = (
            SparkSession.builder.master("local[2, 3]")
            .appName("fastnb-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .getOrCreate()
        )
        session.sparkContext.setLogLevel("ERROR")
        yield session
        session.stop()


def vector_rows(X, sparse):
    """Spark ML vectors of X's rows: every other one sparse if ``sparse``."""
    rows = []
    for i, row in enumerate(X):
        if sparse and i % 2:
            stored = np.flatnonzero(row)
            rows.append(Vectors.sparse(len(row), stored, row[stored]))
        else:
            rows.append(Vectors.dense(row))
    return rows


def spark_data(spark, case, seed=0):
    """``(DataFrame, inputCols, (X, y, w))``: the case's data as Spark's
    (partitioned, each row with its ``index`` in memory) and as in memory."""
    X, y, w = case.make(n_samples=N_SAMPLES, seed=seed)
    w = exact(w)
    # (Spark's strings come as Python str objects, as pandas' do.)
    y = np.asarray(y).astype(str).astype(object)
    if isinstance(X, pd.DataFrame) or X.dtype.kind in "OU":
        if not isinstance(X, pd.DataFrame):
            X = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        frame = X.reset_index(drop=True)
        columns = {"label": y, "sample_weight": w, "index": np.arange(len(y))}
        with_labels = frame.assign(**columns)
        df = spark.createDataFrame(with_labels).repartition(N_PARTITIONS)
        return df, list(frame.columns), (frame, y, w)
    X = exact(np.asarray(X, dtype=np.float64))
    schema = StructType(
        [
            StructField("features", VectorUDT()),
            StructField("label", StringType()),
            StructField("sample_weight", DoubleType()),
            StructField("index", LongType()),
        ]
    )
    rows = zip(
        vector_rows(X, case.sparse), y.tolist(), w.tolist(), range(len(y)), strict=True
    )
    df = spark.createDataFrame(list(rows), schema).repartition(N_PARTITIONS)
    return df, None, (X, y, w)


def spark_estimator(case, input_cols, **params):
    """The case's estimator in fastnb.spark, with its parameters."""
    estimator = case.estimator(**params)
    cls = getattr(fastnb.spark, type(estimator).__name__)
    spark_params = dict(estimator.get_params(), weightCol="sample_weight")
    if input_cols:
        spark_params["inputCols"] = input_cols
    return cls(**spark_params)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_fit_and_transform_equal_in_memory(spark, case):
    df, input_cols, (X, y, w) = spark_data(spark, case)
    model = spark_estimator(case, input_cols).fit(df)
    expected = case.estimator().fit(X, y, sample_weight=w)
    assert isinstance(model, getattr(fastnb.spark, f"{type(expected).__name__}Model"))
    assert_same_fit(model.fastnb_estimator, expected)
    # Each row's outputs, in the rows' order in memory.
    out = model.transform(df).orderBy("index").collect()
    prediction = np.array([row.prediction for row in out], dtype=object)
    assert_array_equal(prediction, expected.predict(X))
    probability = np.stack([row.probability.toArray() for row in out])
    raw = np.stack([row.rawPrediction.toArray() for row in out])
    assert_allclose(probability, expected.predict_proba(X), rtol=1e-10, atol=1e-12)
    assert_allclose(raw, expected.predict_joint_log_proba(X), rtol=1e-10)


@pytest.mark.parametrize(
    "case_id",
    ["MultinomialNB", "GaussianNB", "KernelDensityNB", "CategoricalNB-strings"],
)
def test_many_batches_a_partition_fit_as_one(spark, case_id):
    # Batches of 7 rows: a partition's batches are stacked into parts (dense
    # and sparse rows, weights, Arrow tables of string columns), a state a
    # part, combined in order; the model is still the in-memory one.
    case = CASE[case_id]
    df, input_cols, (X, y, w) = spark_data(spark, case)
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    spark.conf.set(key, "7")
    try:
        model = spark_estimator(case, input_cols).fit(df)
    finally:
        spark.conf.unset(key)
    assert_same_fit(model.fastnb_estimator, case.estimator().fit(X, y, sample_weight=w))


def test_a_state_goes_to_the_driver_compressed():
    # Counts that are mostly zero travel in a fraction of their bytes, and
    # every state comes back as it was.
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(50, 4001)) * (rng.random(4001) < 0.2)
    counts = fastnb.MultinomialNB().fit(X, rng.integers(0, 3, 50))
    gaussian = fastnb.GaussianNB().fit(rng.normal(size=(9, 3)), np.arange(9) % 3)
    for model in (counts, gaussian):
        state = fastnb.get_state(model)
        received = fastnb.spark.received_state(fastnb.spark.sent_state(state))
        assert_same_fit(fastnb.from_state(received), model)
    state = fastnb.get_state(counts)
    assert len(fastnb.spark.sent_state(state)) < len(state_bytes(state)) / 3


def test_labels_of_any_type_and_column_names(spark):
    # Integer labels give a column of integers; fastnb orders the classes.
    X, _, _ = CASE["GaussianNB"].make(n_samples=N_SAMPLES)
    X = exact(X)
    y = np.where(np.arange(N_SAMPLES) % 3 == 0, 7, -2)
    df = spark.createDataFrame(
        [(v, int(c)) for v, c in zip(vector_rows(X, False), y, strict=True)],
        ["x", "y"],
    )
    model = fastnb.spark.GaussianNB(
        featuresCol="x", labelCol="y", predictionCol="p", probabilityCol=""
    ).fit(df)
    assert_array_equal(model.fastnb_estimator.classes_, [-2, 7])
    out = model.transform(df)
    assert "probability" not in out.columns
    assert dict(out.dtypes)["p"] == "bigint"
    expected = fastnb.GaussianNB().fit(X, y)
    assert_array_equal(np.array([r.p for r in out.collect()]), expected.predict(X))


def test_array_columns_and_string_input_columns_with_nulls(spark):
    # A column of arrays reads as dense rows; CategoricalNB's string
    # columns with nulls as missing values (missing="ignore").
    rng = np.random.default_rng(3)
    colours = rng.choice(np.array(["red", "blue", None], dtype=object), N_SAMPLES)
    sizes = rng.choice(np.array(["S", "M", "L"], dtype=object), N_SAMPLES)
    y = np.where(rng.random(N_SAMPLES) < 0.5, "yes", "no").astype(object)
    frame = pd.DataFrame({"colour": colours, "size": sizes})
    df = spark.createDataFrame(frame.assign(label=y)).repartition(N_PARTITIONS)
    model = fastnb.spark.CategoricalNB(
        inputCols=["colour", "size"], missing="ignore"
    ).fit(df)
    expected = fastnb.CategoricalNB(missing="ignore").fit(frame, y)
    assert_same_fit(model.fastnb_estimator, expected)
    values = exact(rng.normal(size=(N_SAMPLES, 3)))
    arrays = spark.createDataFrame(
        [(row.tolist(), label) for row, label in zip(values, y, strict=True)],
        ["features", "label"],
    )
    gaussian = fastnb.spark.GaussianNB().fit(arrays)
    assert_same_fit(gaussian.fastnb_estimator, fastnb.GaussianNB().fit(values, y))


# pyspark's CrossValidator leaves its thread pool to the garbage collector.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_pipeline_evaluator_cross_validation_and_files(spark, tmp_path):
    X, y, _ = CASE["MultinomialNB"].make(n_samples=N_SAMPLES)
    X = exact(np.asarray(X))
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    df = spark.createDataFrame(frame.assign(kind=np.asarray(y).astype(str)))
    assembler = VectorAssembler(inputCols=list(frame.columns), outputCol="features")
    indexer = StringIndexer(inputCol="kind", outputCol="label")
    nb = fastnb.spark.MultinomialNB()
    pipeline = Pipeline(stages=[assembler, indexer, nb])
    grid = ParamGridBuilder().addGrid(nb.getParam("alpha"), [0.5, 2.0]).build()
    evaluator = MulticlassClassificationEvaluator(metricName="accuracy")
    search = CrossValidator(
        estimator=pipeline, estimatorParamMaps=grid, evaluator=evaluator, numFolds=2
    ).fit(df)
    best = search.bestModel
    fitted = best.stages[-1]
    assert fitted.fastnb_estimator.alpha in (0.5, 2.0)
    accuracy = evaluator.evaluate(best.transform(df))
    assert accuracy > 0.5
    # The whole pipeline to files and back: the same predictions.
    best.write().overwrite().save(str(tmp_path / "pipeline"))
    loaded = PipelineModel.load(str(tmp_path / "pipeline"))
    assert isinstance(loaded.stages[-1], fastnb.spark.MultinomialNBModel)
    assert_same_fit(loaded.stages[-1].fastnb_estimator, fitted.fastnb_estimator)
    before = [r.prediction for r in best.transform(df).collect()]
    after = [r.prediction for r in loaded.transform(df).collect()]
    assert before == after
    # An estimator, unfitted, with its parameters.
    estimator = fastnb.spark.BernoulliNB(binarize=0.5, alpha=2.0)
    estimator.write().overwrite().save(str(tmp_path / "estimator"))
    read = fastnb.spark.BernoulliNB.load(str(tmp_path / "estimator"))
    assert read.fastnb_params() == estimator.fastnb_params()
    assert read.uid == estimator.uid
    del search
    gc.collect()


def test_model_file_is_fastnbs_own(spark, tmp_path):
    # The data of a written model is its fastnb model file, which
    # fastnb.load reads without Spark.
    df, _, (X, y, w) = spark_data(spark, CASE["PoissonNB-alpha-per-feature"])
    model = spark_estimator(CASE["PoissonNB-alpha-per-feature"], None).fit(df)
    path = str(tmp_path / "model")
    model.write().save(path)
    data = spark.read.parquet(f"{path}/data").head().model
    import io

    assert_same_fit(fastnb.load(io.BytesIO(data)), model.fastnb_estimator)


def test_a_failed_task_retried_gives_the_same_model(spark):
    # The first attempt of partition 0's task fails after reading its rows;
    # Spark runs it again (local[2, 3]) and the model is the in-memory one.
    df, _, (X, y, w) = spark_data(spark, CASE["GaussianNB"])

    def flaky(batches):
        from pyspark import TaskContext

        context = TaskContext.get()
        yield from batches
        if context.partitionId() == 0 and context.attemptNumber() == 0:
            raise RuntimeError("a lost executor")

    model = spark_estimator(CASE["GaussianNB"], None).fit(
        df.mapInArrow(flaky, df.schema)
    )
    expected = CASE["GaussianNB"].estimator().fit(X, y, sample_weight=w)
    assert_same_fit(model.fastnb_estimator, expected)


def test_spark_connect_fits_transforms_and_persists_as_classic(tmp_path):
    # No RDD, no JVM object: the same estimators run over a Spark Connect
    # session (a local server, in a process of its own: _spark_connect.py).
    pytest.importorskip("grpc", reason="Spark Connect needs pyspark[connect]")
    rng = np.random.default_rng(5)
    X = exact(rng.poisson(1.0, size=(N_SAMPLES, 7)).astype(np.float64))
    y = rng.choice(np.array(["ham", "spam", "eggs"], dtype=object), N_SAMPLES)
    colour = rng.choice(np.array(["red", "blue", None], dtype=object), N_SAMPLES)
    size = rng.choice(np.array(["S", "M", "L"], dtype=object), N_SAMPLES)
    np.savez(tmp_path / "data.npz", X=X, y=y, colour=colour, size=size)
    script = Path(__file__).with_name("_spark_connect.py")
    run = subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        env={**os.environ, "PYTHONSAFEPATH": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    expected = fastnb.MultinomialNB(alpha=0.5).fit(X, y)
    assert_same_fit(fastnb.load(tmp_path / "counts.fnb"), expected)
    assert_same_fit(fastnb.load(tmp_path / "loaded.fnb"), expected)
    assert_array_equal(np.load(tmp_path / "prediction.npy"), expected.predict(X))
    assert_allclose(
        np.load(tmp_path / "probability.npy"),
        expected.predict_proba(X),
        rtol=1e-10,
        atol=1e-12,
    )
    frame = pd.DataFrame({"colour": colour, "size": size})
    assert_same_fit(
        fastnb.load(tmp_path / "categories.fnb"),
        fastnb.CategoricalNB(missing="ignore").fit(frame, y),
    )


def test_bad_input_is_refused_with_a_clear_error(spark):
    schema = StructType(
        [StructField("features", VectorUDT()), StructField("label", StringType())]
    )
    sizes = spark.createDataFrame(
        [(Vectors.dense([1.0, 2.0]), "a"), (Vectors.dense([1.0]), "b")], schema
    ).coalesce(1)
    with pytest.raises(Exception, match="vectors of different sizes"):
        fastnb.spark.MultinomialNB().fit(sizes)
    nulls = spark.createDataFrame(
        [(Vectors.dense([1.0, 2.0]), "a"), (Vectors.dense([1.0, 0.0]), None)], schema
    ).coalesce(1)
    with pytest.raises(Exception, match="Column 'label' holds a null value"):
        fastnb.spark.MultinomialNB().fit(nulls)
    with pytest.raises(ValueError, match="cannot fit a DataFrame of 0 rows"):
        fastnb.spark.MultinomialNB().fit(spark.createDataFrame([], schema))


def test_vectors_are_read_from_arrow_as_fastnb_takes_them():
    # Dense and sparse rows together make a CSR matrix, dense rows alone an
    # array, and a slice of a batch its own rows; arrays of numbers too.
    import pyarrow as pa

    vector = pa.struct(
        [
            ("type", pa.int8()),
            ("size", pa.int32()),
            ("indices", pa.list_(pa.int32())),
            ("values", pa.list_(pa.float64())),
        ]
    )
    rows = [
        {"type": 1, "size": None, "indices": None, "values": [1.0, 2.0, 3.0]},
        {"type": 0, "size": 3, "indices": [2], "values": [5.0]},
        {"type": 0, "size": 3, "indices": [0, 1], "values": [7.0, 8.0]},
        {"type": 1, "size": None, "indices": None, "values": [0.0, 0.0, 9.0]},
    ]
    column = pa.array(rows, type=vector)
    expected = np.array([[1, 2, 3], [0, 0, 5], [7, 8, 0], [0, 0, 9]], dtype=float)
    read = fastnb.spark.vector_matrix(column, "f")
    assert read.format == "csr"
    assert_array_equal(read.toarray(), expected)
    assert_array_equal(
        fastnb.spark.vector_matrix(column.slice(1, 2), "f").toarray(), expected[1:3]
    )
    dense = fastnb.spark.vector_matrix(column.slice(3, 1), "f")
    assert isinstance(dense, np.ndarray)
    assert_array_equal(dense, expected[3:])
    arrays = pa.array([[1.0, 2.0], [3.0, 4.0]])
    assert_array_equal(fastnb.spark.vector_matrix(arrays, "f"), [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="arrays of different lengths"):
        fastnb.spark.vector_matrix(pa.array([[1.0], [2.0, 3.0]]), "f")
    with pytest.raises(ValueError, match="'f' holds a null row"):
        fastnb.spark.vector_matrix(pa.array([rows[0], None], type=vector), "f")
    with pytest.raises(TypeError, match="Spark ML vectors or arrays of numbers"):
        fastnb.spark.vector_matrix(pa.array(["a"]), "f")
