"""Checks of sufficient statistics, as a state from outside (a file, a
pickle, ``fastnb.from_state``) must pass them before a model adopts it: the
classes, each statistic's dtype, shape and values, and the rows of counts
against the class counts.

A leaf of the package: it imports nothing of fastnb.
"""

import numpy as np


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


def check_statistic(statistics, key, shape, non_negative=True, values=True):
    """Check one float64 statistic: present, of that shape and, if ``values``,
    finite (and >= 0)."""
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
    if not np.isfinite(value).all():
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
    count = statistics["class_count"]
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
