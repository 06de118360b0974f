"""Reading a model: decisions by a cost matrix (``predict(X, cost=...)``)."""

import numpy as np


def check_cost(cost, classes):
    """The cost matrix C as the kernels read it: float64, C-contiguous, a copy.

    C[i, j] is the cost of predicting class j when the truth is class i
    (classes in the order of ``classes_``): it must be (n_classes,
    n_classes), finite and non-negative.
    """
    n_classes = len(classes)
    try:
        matrix = np.array(cost, dtype=np.float64, order="C", copy=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cost must be a matrix of numbers; got {cost!r}.") from exc
    if matrix.shape != (n_classes, n_classes):
        raise ValueError(
            f"cost must have shape (n_classes, n_classes) = ({n_classes}, "
            f"{n_classes}), C[i, j] the cost of predicting classes_[j] when the "
            f"truth is classes_[i]; got shape {matrix.shape}."
        )
    if not np.isfinite(matrix).all():
        raise ValueError("cost must be finite; it holds NaN or infinity.")
    if (matrix < 0).any():
        i, j = np.argwhere(matrix < 0)[0]
        raise ValueError(
            f"cost must be non-negative; C[{i}, {j}] = {matrix[i, j]} (predicting "
            f"{classes[j]!r} when the truth is {classes[i]!r})."
        )
    return matrix
