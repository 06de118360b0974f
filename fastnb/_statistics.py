"""Sufficient statistics as the families declare them (``Statistic``), and
the checks a state from outside (a file, a pickle, ``fastnb.from_state``)
must pass before a model adopts it: the classes, each statistic's dtype,
shape and values, and the rows of counts against the class counts.

A leaf of the package: it imports nothing of fastnb.
"""

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

# The float dtypes X is kept in (others are converted to float64), and
# that a model records as the dtype of the data it was first fitted on.
FLOAT_DTYPES = (np.float64, np.float32)
# The dtypes the count families' kernels read X in as it is: the floats,
# the integer counts that text vectorizers make (CountVectorizer's default
# is int64), and bytes (booleans are read as uint8: booleans_as_bytes);
# others are converted to float64.
COUNT_DTYPES = (np.float64, np.float32, np.int64, np.int32, np.uint8)


@dataclass(frozen=True)
class Statistic:
    """One sufficient statistic a family keeps, declared once.

    ``shape`` names each axis: "classes", "features", or a size the family
    derives from the statistics (``BaseNB._statistic_sizes``: CategoricalNB's
    "categories", KernelDensityNB's "grid" and "points"). ``kind`` is
    "array" (a float64 ndarray, checked here), "dtype" (the dtype of the
    data first fitted, float32 or float64) or "own" (checked by the family,
    as CategoricalNB's list of categories). Two states' values ``combine``
    by "sum", as "first" (the first state's), or by the family's "own" rule
    (moments merged, categories united, grids moved onto one lattice).
    ``signed`` values may be negative; ``bounded`` ones are at most their
    class's count; ``allow_nan`` ones hold NaN where a value was missing.
    """

    name: str
    shape: tuple[str, ...] = ()
    kind: Literal["array", "dtype", "own"] = "array"
    combine: Literal["sum", "first", "own"] = "sum"
    signed: bool = False
    bounded: bool = False
    allow_nan: bool = False

    # The axis that runs over classes, or None.
    class_axis: int | None = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        axis = self.shape.index("classes") if "classes" in self.shape else None
        object.__setattr__(self, "class_axis", axis)

    def sized(self, sizes):
        """The shape, each axis's size taken from ``sizes``."""
        return tuple([sizes[axis] for axis in self.shape])


# What every family keeps: each class's weight; and what the families whose
# parameters are per sample keep with missing="ignore": the weight of each
# class's samples missing each feature.
CLASS_COUNT = Statistic("class_count", ("classes",))
MISSING_COUNT = Statistic("missing_count", ("classes", "features"), bounded=True)
# The dtype of the data a model was first fitted on (GaussianNB,
# KernelDensityNB), which it keeps.
DTYPE = Statistic("dtype", kind="dtype", combine="first")


def check_declared(statistics, declared, sizes, values=True):
    """Check each declared statistic of kind "array" or "dtype": its dtype,
    its shape (each axis's size from ``sizes``) and, if ``values``, its
    values; then that a class of no weight has rows of zeros, and that
    ``bounded`` rows do not pass the class counts."""
    for statistic in declared:
        if statistic.kind == "array":
            check_statistic(
                statistics,
                statistic.name,
                statistic.sized(sizes),
                non_negative=not statistic.signed,
                values=values,
                allow_nan=statistic.allow_nan,
            )
        elif statistic.kind == "dtype" and statistics[statistic.name] not in (
            FLOAT_DTYPES
        ):
            raise ValueError(
                f"Statistic {statistic.name!r} must be float32 or float64; got "
                f"{statistics[statistic.name]!r}."
            )
    if not values:
        return
    for statistic in declared:
        if statistic.shape[:1] == ("classes",) and len(statistic.shape) == 2:
            check_rows_agree(statistics, statistic.name, upper_bound=statistic.bounded)


def empty_statistics(declared, sizes, dtype, zeros=np.zeros):
    """Zeroed statistics of the declared arrays (those of kind "own" left
    out), which a family's batch statistics fill; ``zeros`` makes each."""
    statistics = {}
    for statistic in declared:
        if statistic.kind == "array":
            statistics[statistic.name] = zeros(statistic.sized(sizes))
        elif statistic.kind == "dtype":
            statistics[statistic.name] = dtype
    return statistics


def combined_by_rule(first, second, declared):
    """The declared statistics two states combine by "sum" and "first", in
    new arrays (a sum of 0-d arrays is a 0-d array)."""
    combined = {}
    for statistic in declared:
        name = statistic.name
        if statistic.combine == "sum":
            combined[name] = np.asarray(first[name] + second[name])
        elif statistic.combine == "first":
            combined[name] = first[name]
    return combined


def check_classes(classes):
    """The class labels as a 1-D array; ValueError unless unique and sorted."""
    classes = np.asarray(classes)
    if classes.ndim != 1 or len(classes) == 0:
        raise ValueError(f"classes must be a non-empty 1-D array; got {classes!r}.")
    if classes.dtype.kind not in "biufUSO":
        raise ValueError(f"classes of dtype {classes.dtype} are not labels.")
    try:
        ordered = np.unique(classes)
    except TypeError as exc:
        raise ValueError("classes must be labels of one comparable kind.") from exc
    if len(ordered) != len(classes) or not np.array_equal(ordered, classes):
        raise ValueError(f"classes must be unique and sorted; got {classes!r}.")
    return classes


def check_statistic(
    statistics, key, shape, non_negative=True, values=True, allow_nan=False
):
    """Check one float64 statistic: present, of that shape and, if ``values``,
    finite (NaN too if ``allow_nan``) and, if ``non_negative``, >= 0."""
    if key not in statistics:
        raise ValueError(f"The statistics have no {key!r}.")
    value = statistics[key]
    if not isinstance(value, np.ndarray) or value.dtype != np.float64:
        raise ValueError(
            f"Statistic {key!r} must be a float64 ndarray; got "
            f"{getattr(value, 'dtype', type(value).__name__)}."
        )
    if value.shape != tuple(shape):
        raise ValueError(
            f"Statistic {key!r} has shape {value.shape}; expected {tuple(shape)}."
        )
    if not values:
        return
    if allow_nan and np.isinf(value).any():
        raise ValueError(f"Statistic {key!r} contains infinity.")
    if not allow_nan and not np.isfinite(value).all():
        raise ValueError(f"Statistic {key!r} contains NaN or infinity.")
    if non_negative and (value < 0).any():
        raise ValueError(f"Statistic {key!r} contains negative values.")


# How far two sums of the same weights, added in different orders, may differ.
SUM_RTOL = 1e-9


def check_rows_agree(statistics, key, upper_bound=None, plus=None):
    """Check a statistic whose rows (axis 0) are classes against the class
    counts: a class of no weight has a row of zeros, and, with
    ``upper_bound``, no value exceeds its class's count (to rounding), nor,
    with ``plus`` (the name of another such statistic), the sum of the two."""
    count = statistics[CLASS_COUNT.name]
    rows = statistics[key]
    if (rows[count == 0] != 0).any():
        raise ValueError(
            f"Statistic {key!r} has non-zero values for a class of zero class_count."
        )
    if plus is not None:
        rows = rows + statistics[plus]
    # (the slack divides the rows: a count near the largest float times
    # 1 + SUM_RTOL would overflow)
    if upper_bound and (rows / (1 + SUM_RTOL) > count[:, None]).any():
        counted = key if plus is None else f"{key} + {plus}"
        raise ValueError(
            f"Statistic {counted!r} counts more than class_count for some class."
        )
