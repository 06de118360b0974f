"""Names for the types of fastnb's public API, for annotations only.

Every module that uses them starts with ``from __future__ import
annotations`` and imports them under ``typing.TYPE_CHECKING``: annotations
are never evaluated at run time, so these names cost nothing there and may
name what only a type checker has (SciPy's ``sparray``, new in 1.11,
pandas, onnx, matplotlib).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, BinaryIO, Literal, TypeAlias

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from scipy.sparse import sparray, spmatrix

# X as the estimators take it: whatever scikit-learn's check_array takes
# (NumPy arrays, nested lists, pandas DataFrames, arrays of array-API
# libraries) and SciPy's sparse matrices and arrays.
MatrixLike: TypeAlias = "ArrayLike | spmatrix | sparray"

# Where a model file is written or read: a path, or a binary file object.
ModelFile: TypeAlias = str | os.PathLike[str] | BinaryIO

# The `missing` parameter every estimator takes.
Missing: TypeAlias = Literal["error", "ignore"]
