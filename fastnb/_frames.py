"""Data frames, read in one place: pandas, polars, pyarrow, and any other
frame that narwhals takes (scikit-learn's own dependency).

A frame is read column by column, each by its own dtype, into NumPy:
columns of numbers hold numbers (their own dtype; float64 with NaN where a
value is missing), any other column (booleans, strings, categoricals) the
Python values an object array of the same data holds. Categorical columns
(pandas' category, polars' Categorical and Enum, Arrow's dictionary) are
read from their integer codes and categories, not a value at a time.

A column of strings that Arrow holds (pyarrow's, polars', pandas'
pyarrow-backed ``str``) is handed to fastnb.text's kernels as its UTF-8
buffers (``string_chunks``).

pandas frames are read through pandas itself: narwhals costs about 14 us a
column to hand one over, and 25 us a column for its null count, twice the
whole conversion of a small frame (a one-row prediction). narwhals reads
the others, and gives every frame's column dtypes (``frame_dtypes``).

A leaf of the package: it imports nothing of fastnb.
"""

import sys
from typing import NamedTuple

import narwhals.stable.v2 as nw
import numpy as np
import scipy.sparse as sp

# The dtypes of columns whose values MixedNB infers categorical (integers:
# where they look like codes).
CATEGORICAL_DTYPES = (nw.Boolean, nw.String, nw.Categorical, nw.Enum, nw.Object)


def as_frame(X):
    """X as a narwhals DataFrame, or None if X is not a data frame.

    NumPy arrays, scipy matrices and lists are told apart first, without
    asking narwhals (22 us a call, most of a small prediction's time).
    """
    if X is None or isinstance(X, (np.ndarray, list, tuple)) or sp.issparse(X):
        return None
    if is_pandas(X) and not X.columns.is_unique:
        # (narwhals takes unique names; the values are read by position.)
        X = X.set_axis(range(X.shape[1]), axis=1)
    frame = nw.from_native(X, eager_only=True, pass_through=True)
    return frame if isinstance(frame, nw.DataFrame) else None


def refuse_lazy(X):
    """TypeError for a lazy frame (a polars LazyFrame, a DuckDB relation,
    ...), whose data are not computed: fastnb fits and scores data in
    memory. Dask's collections are left to scikit-learn's checks (which
    compute them) and to fastnb.dask."""
    if (
        X is None
        or isinstance(X, (np.ndarray, list, tuple))
        or sp.issparse(X)
        # Data in memory (arrays, series and frames) converts to NumPy; a
        # lazy frame does not (narwhals' check costs 30 us).
        or hasattr(X, "__array__")
        or hasattr(X, "__dask_graph__")
    ):
        return
    lazy = nw.from_native(X, pass_through=True)
    if isinstance(lazy, nw.LazyFrame):
        kind = f"{type(X).__module__.split('.')[0]}.{type(X).__name__}"
        raise TypeError(
            f"Got a lazy frame ({kind}), whose data are not computed yet; "
            "fastnb fits and predicts on data in memory: collect it first (a "
            "polars LazyFrame's .collect()), or, for data larger than memory, "
            "use fastnb.dask."
        )


def is_pandas(X):
    """Whether X is a pandas DataFrame (without importing pandas)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(X, pandas.DataFrame)


class CategoryCodes(NamedTuple):
    """A categorical column by its codes: ``codes`` (intp, -1 where missing)
    into ``categories`` (an object array of Python values)."""

    codes: np.ndarray
    categories: np.ndarray


class FrameColumns(NamedTuple):
    """A frame read once: ``values`` (n_samples, n_features), of the
    columns' common number dtype when every column holds numbers, else
    object; ``numbers`` says which columns hold numbers; ``coded`` gives
    each categorical column's CategoryCodes (None for the others), which
    CategoricalNB encodes without a value a row: in ``values`` those
    columns are left empty (None), and ``filled`` gives them their values.
    ``frame``: the frame read (pandas', or narwhals' of another library;
    None for columns taken from it), for its dtypes. ``missing``: the
    positions of the columns that hold a missing value, where the reading
    was asked to find them (read_frame's ``find_missing``; None otherwise,
    and for a pandas frame: see missing_columns)."""

    values: np.ndarray
    numbers: np.ndarray
    coded: tuple
    frame: object
    missing: tuple | None = None

    @property
    def shape(self):
        return self.values.shape

    def take(self, positions):
        """The columns at ``positions``, as a FrameColumns."""
        return FrameColumns(
            self.values[:, positions],
            self.numbers[positions],
            tuple(self.coded[p] for p in positions),
            None,
            None,
        )

    def filled(self):
        """``values`` with the categorical columns' values, NaN where missing,
        taken by their codes (no new object a row)."""
        if all(coded is None for coded in self.coded):
            return self.values
        values = self.values.copy(order="F")
        for j, coded in enumerate(self.coded):
            if coded is not None:
                table = np.empty(len(coded.categories) + 1, dtype=object)
                table[:-1] = coded.categories
                table[-1] = np.nan
                # mode="wrap": code -1 (missing) takes the last entry, and
                # is written straight into the column (no buffer).
                np.take(table, coded.codes, out=values[:, j], mode="wrap")
        return values


def read_frame(X, find_missing=False):
    """A frame's columns as a FrameColumns (see the module's docstring), or
    None if X is not a data frame: the one conversion of a frame. With
    ``find_missing`` (a model that refuses missing values), the columns
    holding one are noted as they are read, null or NaN (a pass over the
    float columns, which a model that takes missing values skips).

    Converting the frame as a whole would cast every column to one dtype,
    float64 beside a boolean or nullable column: strings would fail, and
    booleans or categories of integers would be encoded as floats.
    """
    if is_pandas(X):
        return FrameColumns(*read_pandas(X), X)
    frame = as_frame(X)
    if frame is None:
        return None
    dtypes = list(frame.schema.values())
    numbers = np.array([dtype.is_numeric() for dtype in dtypes], dtype=bool)
    columns = Columns(frame.shape, numbers)
    missing = []
    for j, (series, dtype) in enumerate(zip(frame.iter_columns(), dtypes, strict=True)):
        has_nulls = series.null_count() > 0
        if find_missing and (has_nulls or (dtype.is_float() and series.is_nan().any())):
            missing.append(j)
        if numbers[j]:
            # float64 where missing (nulls as NaN), else the column's own.
            if has_nulls:
                columns.put(j, np.asarray(series.to_numpy(), dtype=np.float64))
            else:
                columns.put(j, series.to_numpy())
        elif isinstance(dtype, (nw.Categorical, nw.Enum)):
            columns.put_categorical(j, series.to_native())
        else:
            columns.put(j, series.to_list())
    return FrameColumns(
        *columns.read(), frame, tuple(missing) if find_missing else None
    )


def read_pandas(frame):
    """``(values, numbers, coded)`` of a pandas DataFrame, as read_frame reads
    any."""
    numbers = np.array([dtype.kind in "iuf" for dtype in frame.dtypes], dtype=bool)
    dtypes = set(frame.dtypes)
    if frame.shape[1] and numbers.all() and len(dtypes) == 1:
        (dtype,) = dtypes
        if isinstance(dtype, np.dtype):
            # Numbers of one NumPy dtype: pandas' own array, as it is (a view,
            # in F order, where pandas keeps the columns in one block;
            # stacking the columns took three times a fit's time).
            return frame.to_numpy(), numbers, (None,) * frame.shape[1]
    columns = Columns(frame.shape, numbers)
    for j, is_number in enumerate(numbers.tolist()):
        column = frame.iloc[:, j]
        if is_number and column.hasnans:
            columns.put(j, column.to_numpy(dtype=np.float64, na_value=np.nan))
        elif is_number:
            # (pandas' nullable dtypes: their NumPy dtype.)
            dtype = getattr(column.dtype, "numpy_dtype", column.dtype)
            columns.put(j, column.to_numpy(dtype=dtype))
        elif column.dtype.name == "category":
            columns.put_categorical(j, column)
        else:
            columns.put(j, column.tolist())
    return columns.read()


class Columns:
    """A frame's columns as they are read, into one 2-D array: of the
    numbers' common dtype where every column holds numbers, else object,
    in F order (a column's values together), written as each is read."""

    def __init__(self, shape, numbers):
        self.numbers = numbers
        self.coded = [None] * shape[1]
        if shape[1] and numbers.all():
            self.values, self.stack = None, []
        else:
            self.values, self.stack = np.empty(shape, dtype=object, order="F"), None

    def put(self, j, column):
        """Column j: an array of numbers, or a list of Python values."""
        if self.stack is not None:
            self.stack.append(column)
        elif isinstance(column, list):
            # (fromiter: values that are tuples stay one value each.)
            self.values[:, j] = np.fromiter(column, dtype=object, count=len(column))
        else:
            self.values[:, j] = column

    def put_categorical(self, j, native):
        """Column j, categorical (``native``: the library's own column): by
        its codes, its values left to FrameColumns.filled; a value at a
        time where category_codes cannot read it."""
        self.coded[j] = category_codes(native)
        if self.coded[j] is None:
            self.put(j, nw.from_native(native, series_only=True).to_list())

    def read(self):
        """``(values, numbers, coded)``."""
        values = self.values if self.stack is None else np.column_stack(self.stack)
        return values, self.numbers, tuple(self.coded)


def category_codes(native):
    """A categorical column's CategoryCodes: a pandas categorical, a polars
    Categorical or Enum (polars_codes), or an Arrow dictionary array; None
    for a column of another library, or whose categories repeat a value or
    cannot be hashed, read a value at a time."""
    pandas = sys.modules.get("pandas")
    pyarrow = sys.modules.get("pyarrow")
    polars = sys.modules.get("polars")
    coded = None
    if pandas is not None and isinstance(native, pandas.Series):
        coded = (
            native.cat.codes.to_numpy().astype(np.intp),
            native.cat.categories.to_list(),
        )
    elif polars is not None and isinstance(native, polars.Series):
        coded = polars_codes(native)
        if coded is None:
            native = native.to_arrow()
    if coded is None:
        if pyarrow is None or not isinstance(
            native, (pyarrow.Array, pyarrow.ChunkedArray)
        ):
            return None
        if isinstance(native, pyarrow.ChunkedArray):
            # One dictionary for all chunks, then one array.
            native = native.unify_dictionaries().combine_chunks()
        indices = native.indices
        codes = indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.intp)
        if indices.null_count:
            codes[indices.is_null().to_numpy(zero_copy_only=False)] = -1
        coded = codes, native.dictionary.to_pylist()
    codes, categories = coded
    try:
        distinct = len(set(categories)) == len(categories)
    except TypeError:  # unhashable: the value's own error, a value at a time
        distinct = False
    if not distinct:
        # (An Arrow dictionary may repeat a value: read a value at a time.)
        return None
    return CategoryCodes(codes, np.fromiter(categories, dtype=object))


def polars_codes(series):
    """``(codes, categories)`` of a polars Enum, or of a Categorical whose
    dtype maps its ids to their strings (polars 2's Categories): the
    column's physical ids as codes (-1 where null), and the strings of ids
    0 .. the greatest (a Categorical's ids are global: other columns' too);
    None for a Categorical of polars 1, read through Arrow."""
    categories = getattr(series.dtype, "categories", None)
    if hasattr(categories, "to_series"):
        categories = categories.to_series()
    elif not hasattr(categories, "to_list"):
        return None
    physical = series.to_physical()
    highest = physical.max()
    if physical.null_count():
        int64 = sys.modules["polars"].Int64
        codes = physical.cast(int64).fill_null(-1).to_numpy()
    else:
        codes = physical.to_numpy()
    n_categories = 0 if highest is None else highest + 1
    return codes.astype(np.intp, copy=False), categories[:n_categories].to_list()


def missing_columns(columns):
    """The positions of the columns of a frame read (FrameColumns, with
    ``find_missing`` where not pandas') that hold a missing value: null, or
    NaN in a float column (as pandas counts NaN missing)."""
    if columns.missing is not None:
        return list(columns.missing)
    return np.flatnonzero(columns.frame.isna().to_numpy().any(axis=0)).tolist()


def columns_at(X, positions):
    """A frame's columns at ``positions``, as a frame of its own library
    (pandas', Dask's and modin's by ``iloc``, any other through narwhals),
    or None if X is not a frame."""
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        return X.iloc[:, positions]
    frame = as_frame(X)
    if frame is None:
        return None
    return frame[:, [int(p) for p in positions]].to_native()


def frame_dtypes(X):
    """``(dtypes, names)``: each column's narwhals dtype, and its name for
    errors (the library's own where narwhals knows it not, as an Arrow
    column's type)."""
    dtypes, names = [], []
    for series in as_frame(X).iter_columns():
        dtypes.append(series.dtype)
        if isinstance(series.dtype, nw.Unknown):
            native = series.to_native()
            names.append(str(getattr(native, "dtype", getattr(native, "type", None))))
        else:
            names.append(str(series.dtype))
    return dtypes, names


def string_chunks(documents):
    """A column of strings that Arrow holds, as a list of pyarrow arrays of
    valid UTF-8 with no null: a pyarrow string Array or ChunkedArray, a
    polars Series of strings, or a pandas Series of pyarrow-backed strings
    (pandas 3's ``str`` where pyarrow is installed), none of them copied.
    None for anything else (which is read value by value: a null then gets
    scikit-learn's error)."""
    library = type(documents).__module__.split(".")[0]
    if library == "polars" and hasattr(documents, "to_arrow"):
        documents = documents.to_arrow()
    elif library == "pandas" and is_arrow_backed(documents):
        import pyarrow as pa  # (installed: the column's values are its arrays)

        # (Its arrays, as they are: narwhals' to_arrow copies the strings.)
        documents = pa.array(documents.array)
    elif library != "pyarrow":
        return None
    import pyarrow as pa  # (installed: documents is one of its columns)

    chunks = documents.chunks if isinstance(documents, pa.ChunkedArray) else [documents]
    columns = []
    for chunk in chunks:
        if not isinstance(chunk, pa.Array) or chunk.null_count:
            return None
        if pa.types.is_string_view(chunk.type):
            chunk = chunk.cast(pa.large_string())
        if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)):
            return None
        try:
            chunk.validate(full=True)
        except pa.ArrowInvalid:
            return None
        columns.append(chunk)
    return columns


def utf8_buffers(column):
    """``(data, offsets)`` of an Arrow string array: its UTF-8 (uint8) and
    where each value starts, and the end (int64), without a copy of the
    data."""
    import pyarrow as pa  # (installed: column is one of its arrays)

    _, offsets, data = column.buffers()[:3]
    width = np.int64 if pa.types.is_large_string(column.type) else np.int32
    start = column.offset
    offsets = np.frombuffer(offsets, dtype=width)[start : start + len(column) + 1]
    if data is None:
        return np.empty(0, dtype=np.uint8), offsets.astype(np.int64)
    return np.frombuffer(data, dtype=np.uint8), offsets.astype(np.int64)


def is_arrow_backed(series):
    """Whether a pandas Series holds its values in pyarrow arrays."""
    dtype = getattr(series, "dtype", None)
    return getattr(dtype, "storage", None) == "pyarrow" and hasattr(series, "array")


# ---------------------------------------------------------------------------
# pandas as a tool: faster hashing and NA detection of object arrays when it
# is loaded, and labelled output (contributions, rankings) when X is its.
# ---------------------------------------------------------------------------


def factorized(values):
    """``(first_seen, distinct)``: the distinct values of a 1-D object
    array in the order they first occur (a list), and each row's index in
    them; each value hashed once (pandas' factorize where pandas is
    loaded, a dict otherwise). TypeError for a value that cannot be
    hashed."""
    pandas = sys.modules.get("pandas")
    if pandas is not None:
        first_seen, distinct = pandas.factorize(values, use_na_sentinel=False)
        return first_seen, distinct.tolist()
    index = {}
    first_seen = np.fromiter(
        (index.setdefault(value, len(index)) for value in values.tolist()),
        dtype=np.intp,
        count=len(values),
    )
    return first_seen, list(index)


def missing_objects(values):
    """Where an object array holds a missing value: None, NaN, or (pandas
    loaded) anything ``pandas.isna`` takes for one, pandas' NA among them.

    Element-wise NumPy (or pandas) comparisons, no Python loop: without
    pandas there is no NA, and NaN is the one value unequal to itself.
    """
    pandas = sys.modules.get("pandas")
    if pandas is not None:
        return np.asarray(pandas.isna(values), dtype=bool)
    return np.equal(values, None) | np.not_equal(values, values)


def pandas_frame(values, index=None, columns=None, column_levels=None):
    """A pandas DataFrame of ``values`` (a 2-D array, a sparse matrix: a
    frame of sparse columns, or a dict of columns). ``column_levels``: a
    dict of level name to values, whose product names the columns (a
    MultiIndex), instead of ``columns``. ImportError without pandas."""
    import pandas as pd

    if column_levels is not None:
        columns = pd.MultiIndex.from_product(
            list(column_levels.values()), names=list(column_levels)
        )
    if sp.issparse(values):
        return pd.DataFrame.sparse.from_spmatrix(values, index=index, columns=columns)
    return pd.DataFrame(values, index=index, columns=columns)


def pandas_series(values, index, index_name):
    """A pandas Series of ``values`` by ``index`` (its name ``index_name``)."""
    import pandas as pd

    return pd.Series(values, index=pd.Index(index, name=index_name))
