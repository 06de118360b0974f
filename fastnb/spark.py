"""fastnb's estimators as Spark ML estimators, over Spark DataFrames.

Install the extra: ``pip install fastnb[spark]`` (pyspark and pyarrow).

Every estimator of fastnb has a class here of the same name, a
``pyspark.ml`` Estimator with Spark's column parameters (``featuresCol``,
``labelCol``, ``weightCol``, ``predictionCol``, ``probabilityCol``,
``rawPredictionCol``, and ``inputCols`` for columns taken as a table) and
the estimator's own parameters under their scikit-learn names::

    >>> from fastnb.spark import MultinomialNB  # doctest: +SKIP
    >>> model = MultinomialNB(alpha=0.5).fit(train)  # doctest: +SKIP
    >>> model.transform(test).select("prediction", "probability")  # doctest: +SKIP

``fit`` gives a Model whose ``transform`` adds the prediction, the
probability of each class and the raw prediction (the joint
log-likelihood, as MLlib's NaiveBayesModel gives it), so Spark's
Pipelines, evaluators and CrossValidator take it. The Model holds the
fitted fastnb estimator (``model.fastnb_estimator``), and Spark ML's
persistence writes it as a fastnb model file (no pickle).

How it runs: each partition's Arrow batches (``mapInArrow``) are read
straight into the arrays fastnb takes (a column of Spark ML vectors, dense
or sparse, into a dense array or a CSR matrix; a column of arrays into a
dense array; ``inputCols`` as an Arrow table, strings and nulls included);
batches are stacked into parts that outweigh the state they make, and each
part gives its state (``fastnb._state.batch_state``); a partition's states
are combined in order, and the partitions' on the driver, in a tree. A
partition's state depends on its rows alone, so a task that fails and runs
again gives the same model. ``transform`` scores the batches of the
columns it reads in an Arrow UDF, once a batch, the model sent as its file
and loaded once a Python worker. Narrow vectors (at most DENSE_WIDTH wide,
by their column's metadata, as VectorAssembler writes it) go to Python as
arrays, which Spark converts far faster. No RDD and no JVM object is used:
the same classes run on a classic session and over Spark Connect.
"""

from __future__ import annotations

import io
import zlib

import numpy as np
import scipy.sparse as sp

try:
    import pyarrow as pa
    from pyspark.ml import Estimator, Model
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError(
        "fastnb.spark needs pyspark and pyarrow: pip install 'fastnb[spark]'."
    ) from exc
from pyspark.ml.functions import array_to_vector, vector_to_array
from pyspark.ml.linalg import VectorUDT
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import (
    HasFeaturesCol,
    HasInputCols,
    HasLabelCol,
    HasPredictionCol,
    HasProbabilityCol,
    HasRawPredictionCol,
    HasWeightCol,
)
from pyspark.ml.util import (
    DefaultParamsReader,
    DefaultParamsWriter,
    MLReadable,
    MLReader,
    MLWritable,
    MLWriter,
)
from pyspark.sql import SparkSession, is_remote
from pyspark.sql.functions import arrow_udf
from pyspark.sql.types import (
    ArrayType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

import fastnb
from fastnb._base import finish_scores
from fastnb._files import read_state, state_bytes
from fastnb._registry import ESTIMATORS
from fastnb._simd import kernels as _kernels
from fastnb._state import (
    batch_state,
    combine_states,
    combined_in_order,
    from_state,
    in_fit_order,
)

__all__ = list(ESTIMATORS) + [f"{name}Model" for name in ESTIMATORS]

# A Spark ML vector's kind, in its Arrow struct (VectorUDT's SQL type):
# sparse (size, indices, values), or dense (values).
SPARSE = 0
# Vectors at most this wide (by their column's metadata) go to Python as
# arrays, dense (sent_column).
DENSE_WIDTH = 256
# A part of a partition's batches, which gives one state, takes batches until
# their bytes reach this many times the state's (partition_states): a
# 10,000-row batch of text is 12 MB, its 20 classes' counts of 262,144 words
# 42 MB, and a state a batch took 10 times as long as the counting.
GATHERED_BYTES = 4


# ---------------------------------------------------------------------------
# Arrow batches in, fastnb's arrays out
# ---------------------------------------------------------------------------


def list_parts(column, what):
    """``(lengths, flat values)`` of an Arrow list column, nulls refused."""
    if column.null_count:
        raise ValueError(f"{what} holds a null row.")
    offsets = column.offsets.to_numpy()
    return np.diff(offsets), column.flatten()


def vector_matrix(column, name):
    """A column of Spark ML vectors (sparse or dense) or of arrays of numbers
    as fastnb takes it: a dense array where every row is dense, else a CSR
    matrix; no Python object a row."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    what = f"Column {name!r}"
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        lengths, flat = list_parts(column, what)
        width = int(lengths[0]) if len(lengths) else 0
        if (lengths != width).any():
            raise ValueError(f"{what} holds arrays of different lengths.")
        values = flat.to_numpy(zero_copy_only=False)
        return values.astype(np.float64, copy=False).reshape(len(column), width)
    if not pa.types.is_struct(column.type) or column.type.num_fields != 4:
        raise TypeError(
            f"{what} must hold Spark ML vectors or arrays of numbers; got "
            f"Arrow type {column.type}."
        )
    if column.null_count:
        raise ValueError(f"{what} holds a null row.")
    # (flatten: the fields of the struct's own rows, where it is a slice.)
    kinds, sizes, indices, values = column.flatten()
    kinds = kinds.to_numpy(zero_copy_only=False)
    lengths, flat = list_parts(values, what)
    values = flat.to_numpy(zero_copy_only=False)
    sparse = kinds == SPARSE
    sizes = sizes.to_numpy(zero_copy_only=False)
    widths = np.where(sparse, np.nan_to_num(sizes.astype(np.float64)), lengths)
    width = int(widths[0]) if len(widths) else 0
    if (widths != width).any():
        raise ValueError(f"{what} holds vectors of different sizes.")
    n_rows = len(column)
    if not sparse.any():
        return values.reshape(n_rows, width)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    stored = indices.flatten().to_numpy(zero_copy_only=False)
    if sparse.all():  # (text: the vectors' own indices, as they are)
        return sp.csr_matrix((values, stored, indptr), shape=(n_rows, width))
    # Each stored value's column: a sparse row's indices, a dense row's
    # positions.
    row_of = np.repeat(np.arange(n_rows), lengths)
    columns = np.arange(len(values)) - indptr[row_of]
    columns[sparse[row_of]] = stored
    return sp.csr_matrix((values, columns, indptr), shape=(n_rows, width))


def batch_features(batch, features_col, input_cols):
    """X of a batch: its features column, or its input columns as a table."""
    if input_cols:
        return pa.Table.from_batches([batch.select(input_cols)])
    return vector_matrix(batch.column(features_col), features_col)


def column_values(column, name):
    """A column of labels or weights as a NumPy array, nulls refused."""
    if column.null_count:
        raise ValueError(f"Column {name!r} holds a null value.")
    return column.to_numpy(zero_copy_only=False)


def arrays(rows):
    """An Arrow column of arrays of doubles, a row of ``rows`` (n, k) each
    (made into vectors in the JVM: array_to_vector, far faster than Spark's
    conversion of vectors from Arrow)."""
    n_rows, width = rows.shape
    offsets = pa.array(np.arange(n_rows + 1, dtype=np.int32) * width)
    return pa.ListArray.from_arrays(
        offsets, pa.array(np.ascontiguousarray(rows, dtype=np.float64).reshape(-1))
    )


def sent_column(dataset, name):
    """Column ``name`` of ``dataset`` as it is sent to Python: a column of
    vectors that its metadata says are at most DENSE_WIDTH wide (as
    VectorAssembler's) as arrays of numbers, made in the JVM; any other as
    it is. Spark's conversion of vectors to Arrow is slow where an array's
    is not: 1,000,000 dense vectors of 50 values took 4-6 s to reach
    Python, as arrays 0.5-0.8 s."""
    field = dataset.schema[name]
    if isinstance(field.dataType, VectorUDT):
        width = field.metadata.get("ml_attr", {}).get("num_attrs")
        if width is not None and width <= DENSE_WIDTH:
            return vector_to_array(dataset[name]).alias(name)
    return dataset[name]


# ---------------------------------------------------------------------------
# Fitting: a state a partition, combined on the driver
# ---------------------------------------------------------------------------


def partition_states(estimator, features_col, label_col, weight_col, input_cols):
    """The function mapInArrow runs on a partition's batches: one row of the
    partition's state (its model file's bytes, compressed: sent_state), or
    none for no rows. Its batches are stacked into parts, a state a part,
    combined in order."""

    def rows_of(batch):
        X = batch_features(batch, features_col, input_cols)
        y = column_values(batch.column(label_col), label_col)
        weight = None
        if weight_col:
            weight = column_values(batch.column(weight_col), weight_col)
        return X, y, weight

    def with_part(state, part):
        return combined_in_order([state, batch_state(estimator, *stacked(part))])

    def states(batches):
        # A part's batches give one state; a state costs about its tables
        # (made, then combined) whatever its rows, so a part takes batches
        # until their bytes reach GATHERED_BYTES times the state's (the
        # first part is the first batch).
        state, part, part_bytes, limit = None, [], 0, 0
        for batch in batches:
            if not batch.num_rows:
                continue
            rows = rows_of(batch)
            part.append(rows)
            part_bytes += batch_bytes(rows[0])
            if part_bytes >= limit:
                state = with_part(state, part)
                limit = GATHERED_BYTES * statistics_bytes(state)
                part, part_bytes = [], 0
        if part:
            state = with_part(state, part)
        if state is not None:
            yield pa.RecordBatch.from_arrays(
                [pa.array([sent_state(state)], pa.binary())], names=["state"]
            )

    return states


def batch_bytes(X):
    """The bytes of a batch's X (an array, CSR matrix or Arrow table)."""
    if sp.issparse(X):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return X.nbytes


def statistics_bytes(state):
    """The bytes of a state's arrays of statistics."""
    return sum(
        value.nbytes for value in state.statistics.values() if hasattr(value, "nbytes")
    )


def stacked(part):
    """One ``(X, y, weight)`` of a part's batches, in order."""
    if len(part) == 1:
        return part[0]
    Xs, ys, weights = zip(*part, strict=True)
    if isinstance(Xs[0], pa.Table):
        X = pa.concat_tables(Xs)
    elif any(sp.issparse(X) for X in Xs):
        X = sp.vstack(Xs, format="csr")
    else:
        X = np.concatenate(Xs)
    weight = None if weights[0] is None else np.concatenate(weights)
    return X, np.concatenate(ys), weight


def sent_state(state):
    """A partition's state as it goes to the driver: its model file's bytes,
    compressed (zlib's fastest level). Spark moves a state's bytes at about
    200 MB/s, and a count family's tables are mostly zeros and small whole
    numbers: 20 Newsgroups' half, 20.8 MB of counts, is 0.76 MB so, and
    200,000 synthetic documents' half, 42 MB, 6 MB in 0.16 s (a fit of
    them 1.10 s, against 1.26 s with only the zero words left out)."""
    return zlib.compress(state_bytes(state), 1)


def received_state(data):
    """The state that sent_state sent."""
    return read_state(zlib.decompress(data))


def tree_combined(states):
    """The states combined pairwise, a level at a time (a tree)."""
    while len(states) > 1:
        states = [
            combine_states(*states[i : i + 2]) if i + 1 < len(states) else states[i]
            for i in range(0, len(states), 2)
        ]
    return states[0]


# ---------------------------------------------------------------------------
# Scoring: the model's columns added to each batch
# ---------------------------------------------------------------------------


def spark_type(classes):
    """The Spark type of a prediction column holding ``classes``."""
    if classes.dtype.kind == "f":
        return DoubleType()
    if classes.dtype.kind in "iub":
        return LongType()
    return StringType()


def batch_scores(model_file, input_cols, names):
    """The function of the Arrow UDF that scores a batch: from its columns
    (the features, or the input columns in order), a struct of the
    prediction, probability and raw prediction that have a name (``names``)."""
    state = {}

    def scores(*columns):
        if "model" not in state:  # once a Python worker, not once a batch
            state["model"] = fastnb.load(io.BytesIO(model_file))
        model = state["model"]
        if input_cols:
            X = pa.Table.from_arrays(list(columns), names=input_cols)
        else:
            X = vector_matrix(columns[0], "features")
        if X.shape[0]:
            raw = model.predict_joint_log_proba(X)
        else:  # (an estimator refuses 0 rows)
            raw = np.empty((0, len(model.classes_)))
        # Only the columns that have a name are made.
        outputs = (
            lambda: pa.array(model.classes_[np.argmax(raw, axis=1)]),
            lambda: arrays(posteriors(raw)),
            lambda: arrays(raw),
        )
        kept = [name for name in names if name]
        return pa.StructArray.from_arrays(
            [output() for name, output in zip(names, outputs, strict=True) if name],
            names=kept,
        )

    return scores


def model_file(estimator):
    """The bytes of a fitted fastnb estimator's model file (fastnb.save)."""
    file = io.BytesIO()
    fastnb.save(estimator, file)
    return file.getvalue()


def posteriors(raw):
    """Each row's probabilities from its joint log-likelihoods (one
    scoring of a batch, not two), finished by the kernel that finishes
    predict_proba's (fastnb._base.finish_scores)."""
    jll = np.ascontiguousarray(raw, dtype=np.float64)
    probability = np.empty_like(jll)
    finish_scores(jll, _kernels.Output.PROBA, probability, np.empty(0, dtype=np.intp))
    return probability


# ---------------------------------------------------------------------------
# The Spark ML classes
# ---------------------------------------------------------------------------


class SparkNBParams(
    HasFeaturesCol,
    HasLabelCol,
    HasWeightCol,
    HasPredictionCol,
    HasProbabilityCol,
    HasRawPredictionCol,
    HasInputCols,
):
    """Spark's column parameters, with MLlib's defaults."""

    def __init__(self):
        super().__init__()
        self._setDefault(
            featuresCol="features",
            labelCol="label",
            predictionCol="prediction",
            probabilityCol="probability",
            rawPredictionCol="rawPrediction",
        )

    def _input_cols(self):
        return self.getInputCols() if self.isDefined(self.inputCols) else None

    def _weight_col(self):
        return self.getWeightCol() if self.isDefined(self.weightCol) else None


class SparkNB(SparkNBParams, Estimator, MLWritable, MLReadable):
    """The estimators' base: subclasses name their fastnb estimator
    (``_fastnb_class``) and declare its parameters as Params."""

    _fastnb_class: type

    def __init__(self, **params):
        super().__init__()
        defaults = self._fastnb_class().get_params()
        self._setDefault(**defaults)
        self._set(**params)

    def fastnb_params(self):
        """The fastnb estimator's parameters, as set."""
        return {
            name: self.getOrDefault(name) for name in self._fastnb_class().get_params()
        }

    def _fit(self, dataset):
        estimator = self._fastnb_class(**self.fastnb_params())
        input_cols = self._input_cols()
        weight_col = self._weight_col()
        columns = [*(input_cols or [self.getFeaturesCol()]), self.getLabelCol()]
        if weight_col:
            columns.append(weight_col)
        states = (
            dataset.select(*[sent_column(dataset, name) for name in columns])
            .mapInArrow(
                partition_states(
                    estimator,
                    self.getFeaturesCol(),
                    self.getLabelCol(),
                    weight_col,
                    input_cols,
                ),
                "state binary",
            )
            .toArrow()  # (bytes come faster so than as Rows: collect)
            .column("state")
            .to_pylist()
        )
        if not states:
            raise ValueError(f"{type(self).__name__} cannot fit a DataFrame of 0 rows.")
        state = tree_combined([received_state(data) for data in states])
        fitted = from_state(in_fit_order(estimator, state))
        model = MODELS[type(self).__name__](fitted)
        return self._copyValues(model)

    def write(self):
        return ParamsWriter(self)

    @classmethod
    def read(cls):
        return ParamsReader(cls)


class SparkNBModel(SparkNBParams, Model, MLWritable, MLReadable):
    """A fitted model: the fastnb estimator (``fastnb_estimator``) and the
    columns it reads and writes."""

    def __init__(self, fastnb_estimator=None):
        super().__init__()
        self.fastnb_estimator = fastnb_estimator

    def _transform(self, dataset):
        model = self.fastnb_estimator
        names = (
            self.getPredictionCol(),
            self.getProbabilityCol(),
            self.getRawPredictionCol(),
        )
        vector = ArrayType(DoubleType(), containsNull=False)
        kinds = (spark_type(model.classes_), vector, vector)
        fields = [
            StructField(name, kind)
            for name, kind in zip(names, kinds, strict=True)
            if name
        ]
        input_cols = self._input_cols()
        columns = [
            sent_column(dataset, name)
            for name in (input_cols or [self.getFeaturesCol()])
        ]
        score = arrow_udf(
            batch_scores(model_file(model), input_cols, names), StructType(fields)
        )
        # (The scores go into one struct column, whose fields are then
        # taken out: the UDF runs once a row.)
        struct = f"{self.uid}_scores"
        scored = dataset.withColumn(struct, score(*columns))
        outputs = [scored[struct][field.name] for field in fields]
        return scored.select(
            *[scored[name] for name in dataset.columns],
            *[
                (output if field.name == names[0] else array_to_vector(output)).alias(
                    field.name
                )
                for output, field in zip(outputs, fields, strict=True)
            ],
        )

    @property
    def numClasses(self):
        """The number of classes."""
        return len(self.fastnb_estimator.classes_)

    @property
    def numFeatures(self):
        """The number of features."""
        return self.fastnb_estimator.n_features_in_

    def write(self):
        return ModelWriter(self)

    @classmethod
    def read(cls):
        return ModelReader(cls)


# ---------------------------------------------------------------------------
# Persistence: Spark ML's metadata, and the model as its fastnb file
# ---------------------------------------------------------------------------


class ParamsWriter(MLWriter):
    """Writes an estimator's metadata (its Params) as Spark ML does."""

    def __init__(self, instance):
        super().__init__()
        self.instance = instance

    def save(self, path):
        if self.shouldOverwrite and is_remote():
            # MLWriter's overwrite deletes the folder through the JVM, which
            # a Spark Connect client has not: each part is overwritten.
            self.saveImpl(path, mode="overwrite")
        else:
            super().save(path)

    def saveImpl(self, path, mode="error"):
        session = SparkSession.active()
        # (DefaultParamsWriter.saveMetadata's JSON, written in ``mode``.)
        metadata = DefaultParamsWriter._get_metadata_to_save(self.instance, session)
        frame = session.createDataFrame([(metadata,)], "value string")
        frame.coalesce(1).write.mode(mode).text(f"{path}/metadata")


class ParamsReader(MLReader):
    """Reads an estimator written by ParamsWriter."""

    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def load(self, path):
        metadata = DefaultParamsReader.loadMetadata(path, self.sparkSession)
        instance = self.cls()
        instance._resetUid(metadata["uid"])
        DefaultParamsReader.getAndSetParams(instance, metadata)
        return instance


class ModelWriter(ParamsWriter):
    """Writes a model's metadata, and its fastnb estimator as a model file in
    ``path/data`` (a one-row Parquet table: it goes wherever Spark writes)."""

    def saveImpl(self, path, mode="error"):
        super().saveImpl(path, mode)
        data = model_file(self.instance.fastnb_estimator)
        session = SparkSession.active()
        frame = session.createDataFrame([(data,)], "model binary")
        frame.coalesce(1).write.mode(mode).parquet(f"{path}/data")


class ModelReader(ParamsReader):
    """Reads a model written by ModelWriter."""

    def load(self, path):
        instance = super().load(path)
        session = SparkSession.active()
        data = session.read.parquet(f"{path}/data").head()
        instance.fastnb_estimator = fastnb.load(io.BytesIO(data.model))
        return instance


# ---------------------------------------------------------------------------
# One class an estimator of the registry, and its Model
# ---------------------------------------------------------------------------


def estimator_param(name):
    """A Param of a fastnb estimator's parameter, of its name."""
    return Param(
        Params._dummy(),
        name,
        f"fastnb's {name} (see the fastnb estimator).",
        typeConverter=TypeConverters.identity,
    )


ESTIMATOR_DOC = """:class:`fastnb.{name}` as a Spark ML Estimator over a DataFrame.

``fit(dataset)`` gives a :class:`{name}Model`. The parameters are
Spark's column parameters, with MLlib's defaults, and those of
:class:`fastnb.{name}` under their scikit-learn names, as Params
(``getOrDefault``, ``set``, ``copy``, a ParamGridBuilder's grids).

Parameters
----------
featuresCol : str, default="features"
    A column of Spark ML vectors, dense or sparse (as CountVectorizer,
    HashingTF and VectorAssembler make them), or of arrays of numbers.
labelCol : str, default="label"
    The labels, of any type; the classes are ordered as fastnb orders them.
weightCol : str, optional
    The samples' weights.
inputCols : list of str, optional
    Columns read together as a table instead of ``featuresCol`` (strings,
    numbers and nulls: CategoricalNB's and MixedNB's columns).
predictionCol : str, default="prediction"
    The column of predicted labels that the model's ``transform`` adds
    ("" adds none).
probabilityCol : str, default="probability"
    The column of each class's probability, a vector ("" adds none).
rawPredictionCol : str, default="rawPrediction"
    The column of the joint log-likelihoods, a vector ("" adds none).
**params
    :class:`fastnb.{name}`'s parameters: {params}.
"""

MODEL_DOC = """The fitted model of :class:`fastnb.spark.{name}`.

``transform(dataset)`` adds the prediction (of the labels' type), the
probability of each class and the raw prediction (the joint
log-likelihood, as MLlib's NaiveBayesModel gives it) as vectors, in the
columns its Params name. ``write().save(path)`` and ``{name}Model.load(path)``
use Spark ML's persistence: the Params' metadata and the fastnb model file
(no pickle).

Attributes
----------
fastnb_estimator : fastnb.{name}
    The fitted fastnb estimator.
numClasses : int
    The number of classes.
numFeatures : int
    The number of features.
"""


def spark_classes(name, estimator):
    """``(Estimator, Model)`` classes of a fastnb estimator class."""
    defaults = estimator().get_params()
    params = {key: estimator_param(key) for key in defaults}
    listed = ", ".join(f"``{key}={value!r}``" for key, value in defaults.items())
    spark_estimator = type(
        name,
        (SparkNB,),
        {
            **params,
            "__doc__": ESTIMATOR_DOC.format(name=name, params=listed),
            "__module__": __name__,
            "__qualname__": name,
            "_fastnb_class": estimator,
        },
    )
    model_name = f"{name}Model"
    spark_model = type(
        model_name,
        (SparkNBModel,),
        {
            "__doc__": MODEL_DOC.format(name=name),
            "__module__": __name__,
            "__qualname__": model_name,
        },
    )
    return spark_estimator, spark_model


MODELS = {}
for _name, _estimator in ESTIMATORS.items():
    globals()[_name], MODELS[_name] = spark_classes(_name, _estimator)
    globals()[f"{_name}Model"] = MODELS[_name]
del _name, _estimator
