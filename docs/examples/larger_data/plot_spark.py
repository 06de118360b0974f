"""
Fitting on a Spark DataFrame
============================

Naive Bayes adds up sufficient statistics, so a model can be fitted where
a Spark DataFrame's partitions are: ``fastnb.spark`` (``pip install
"fastnb[spark]"``; Spark needs Java) has fastnb's estimators as Spark ML
estimators. Each partition's Arrow batches are read straight into the
arrays fastnb's compiled kernels take, each partition's statistics are
added up where it is, and only the statistics reach the driver. This
example starts a local Spark session, makes a DataFrame of rows in Spark,
fits :class:`fastnb.GaussianNB`'s Spark estimator in a Pipeline,
transforms, and checks the model against the one in-memory fastnb fits on
the same rows.
"""

# %%
# A local session and a DataFrame
# -------------------------------
# Two cores (``local[2]``); on a cluster, the session is the cluster's.
# The rows are made in Spark: three classes, four features whose means
# depend on the class, assembled into a column of Spark ML vectors.
import matplotlib.pyplot as plt
import numpy as np
from pyspark.ml import Pipeline
from pyspark.ml.evaluation import MulticlassClassificationEvaluator
from pyspark.ml.feature import VectorAssembler
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import fastnb
import fastnb.spark

spark = (
    SparkSession.builder.master("local[2]")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")

rows = spark.range(30_000, numPartitions=4).withColumn(
    "label", (F.col("id") % 3).cast("double")
)
columns = [f"x{j}" for j in range(4)]
for j, name in enumerate(columns):
    rows = rows.withColumn(name, F.randn(seed=j) + (j + 1) * 0.5 * F.col("label"))
rows = rows.cache()

# %%
# Fit and transform in a Pipeline
# -------------------------------
# The estimator takes Spark's column parameters and GaussianNB's own; the
# model's ``transform`` adds the prediction, the probability of each class
# and the raw prediction (the joint log-likelihood), as MLlib's models do,
# so Spark's evaluators read them.
assembler = VectorAssembler(inputCols=columns, outputCol="features")
pipeline = Pipeline(stages=[assembler, fastnb.spark.GaussianNB(var_smoothing=1e-9)])
fitted = pipeline.fit(rows)
scored = fitted.transform(rows)
accuracy = MulticlassClassificationEvaluator(metricName="accuracy").evaluate(scored)
print(f"accuracy on the training rows: {accuracy:.3f}")

# %%
# The same model as in memory
# ---------------------------
# The Spark model holds the fitted fastnb estimator. Fitted in memory on the
# same rows, GaussianNB gives the same model (its moments to rounding: the
# partitions' moments are merged by the pairwise formula).
model = fitted.stages[-1].fastnb_estimator
local = rows.select(*columns, "label").collect()
X = np.array([[row[c] for c in columns] for row in local])
y = np.array([row.label for row in local])
in_memory = fastnb.GaussianNB().fit(X, y)
print("class counts:", model.class_count_, "in memory:", in_memory.class_count_)
print("largest difference of the means:", np.abs(model.theta_ - in_memory.theta_).max())

# %%
# What the model learned
# ----------------------
# Each class's mean of each feature, from the statistics the partitions
# added up.
fig, ax = plt.subplots(figsize=(6, 3.5))
for k, name in enumerate(model.classes_):
    ax.plot(columns, model.theta_[k], marker="o", label=f"class {name:g}")
ax.set_ylabel("mean")
ax.set_title("GaussianNB fitted on a Spark DataFrame")
ax.legend()
fig.tight_layout()

spark.stop()
