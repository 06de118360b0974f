"""pandas DataFrames of any mix of column dtypes (issue 33).

A DataFrame is converted column by column, each by its own dtype: columns of
numbers hold category codes, any other column raw values, which are encoded
as the same values in an object array are. So CategoricalNB fitted on a
frame is the model fitted on the frame's values as an object array, whatever
the mix of dtypes (booleans beside categoricals, pandas' nullable and string
dtypes), and MixedNB, which hands each family its columns as a frame, is
the model fitted on that array with the families by position. Missing values
(pandas' NA, None, NaN) follow ``missing`` as in object arrays; a fit that
fails leaves the model as it was.

The same frames converted to polars and to pyarrow (issue 56) give the
pandas frame's models, bit for bit, and its errors.

Oracle: the same data as an object array of Python values (None where
missing). Codes are drawn dense (0 .. k - 1, each seen), so that encoding
them as values gives the same categories.
"""

import copy
import importlib.util
import itertools
import re
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import fastnb

from _helpers import assert_same_outputs, assert_same_state

HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None

# Out of order, so that a category's code cannot pass for its place in the
# sorted values; the categoricals declare their categories in yet another
# order, with one never seen.
WORDS = ("pear", "fig", "apple")


class Kind(NamedTuple):
    """A column dtype: what a draw (0, 1 or 2) is in it, as an object array
    holds it, and whether the column holds codes or can hold missing values."""

    dtype: object
    value: object
    codes: bool = False
    nullable: bool = True


KINDS = {
    "bool": Kind(bool, lambda d: d == 1, nullable=False),
    "int": Kind(np.int64, int, codes=True, nullable=False),
    "float": Kind(np.float64, float, codes=True),
    "str": Kind("str", WORDS.__getitem__),
    "object": Kind(object, WORDS.__getitem__),
    "category[str]": Kind(
        pd.CategoricalDtype(["plum", "apple", "pear", "fig"]), WORDS.__getitem__
    ),
    "category[int]": Kind(pd.CategoricalDtype([13, 12, 10, 11]), lambda d: 10 + d),
    "Int64": Kind("Int64", int, codes=True),
    "boolean": Kind("boolean", lambda d: d == 1),
    "string[python]": Kind("string[python]", WORDS.__getitem__),
    "string[pyarrow]": Kind("string[pyarrow]", WORDS.__getitem__),
}
try:
    # pandas 3's "str", NaN where missing, stored in Python objects (pandas
    # 2.3 and later).
    KINDS["str[python]"] = Kind(
        pd.StringDtype("python", na_value=np.nan), WORDS.__getitem__
    )
except TypeError:
    pass
NEEDS_PYARROW = {"string[pyarrow]"}
AVAILABLE = [name for name in KINDS if HAS_PYARROW or name not in NEEDS_PYARROW]
LABELS = ("no", "yes")


def column_values(kind, draws):
    """A column's Python values, None where a draw is None (missing); the
    codes of a column of codes renumbered 0 .. k - 1 in order."""
    if kind.codes:
        seen = sorted({d for d in draws if d is not None})
        dense = {d: i for i, d in enumerate(seen)}
        draws = [None if d is None else dense[d] for d in draws]
    return [None if d is None else kind.value(d) for d in draws]


def frame_of(kinds, draws):
    """A DataFrame with a column of each kind (named c0, c1, ...) made from
    its draws, and the same values in an object array."""
    columns = [column_values(KINDS[k], d) for k, d in zip(kinds, draws, strict=True)]
    frame = pd.DataFrame(
        {
            f"c{j}": pd.Series(values, dtype=KINDS[kind].dtype)
            for j, (kind, values) in enumerate(zip(kinds, columns, strict=True))
        }
    )
    plain = np.empty(frame.shape, dtype=object)
    for j, values in enumerate(columns):
        plain[:, j] = values
    return frame, plain


def inferred_gaussian(kind, column):
    """Whether MixedNB infers a column of this kind gaussian, by the rule its
    docstring states: floats are, integers too unless they look like codes
    (none negative, at most 50 distinct values and one for every 10 rows)."""
    if kind == "float":
        return True
    if kind not in ("int", "Int64"):
        return False
    codes = column.dropna()
    n_codes = len(set(codes.tolist()))
    return n_codes > min(50, len(column) // 10) or bool((codes < 0).any())


def mixed_families(kinds, frame):
    """MixedNB's inferred families, by name, and by position."""
    gaussian = [
        j for j, kind in enumerate(kinds) if inferred_gaussian(kind, frame.iloc[:, j])
    ]
    by_position = {"gaussian": gaussian, "categorical": "remaining"}
    names = {"gaussian": frame.columns[gaussian].tolist(), "categorical": "remaining"}
    return names, by_position


def check_mix(kinds, draws, y, missing):
    """Fit and predict a frame of these kinds with CategoricalNB and MixedNB,
    as the object array of its values, as the object array is fitted."""
    frame, plain = frame_of(kinds, draws)
    absent = frame.isna().any()
    if missing == "error" and absent.any():
        names = re.escape(f"in columns {absent.index[absent].tolist()}")
        for model in (fastnb.CategoricalNB(), fastnb.MixedNB()):
            with pytest.raises(ValueError, match=names):
                model.fit(frame, y)
        return
    # CategoricalNB: the object array's model, bit for bit.
    ours = fastnb.CategoricalNB(missing=missing).fit(frame, y)
    expected = fastnb.CategoricalNB(missing=missing).fit(plain, y)
    assert_same_outputs(ours, expected, frame, X_expected=plain)
    for j, kind in enumerate(kinds):
        if KINDS[kind].codes:
            # Codes are their own categories, 0 .. k - 1.
            assert ours.categories_[j].dtype == np.int64
            assert ours.categories_[j].tolist() == expected.categories_[j].tolist()
        else:
            # The values themselves (Python bool, str, int), sorted.
            assert_same_state(ours.categories_[j], expected.categories_[j])
    assert_array_equal(ours.feature_names_in_, frame.columns)
    # partial_fit in two batches scores as fit.
    half = len(y) // 2
    parts = fastnb.CategoricalNB(missing=missing)
    parts.partial_fit(frame.iloc[:half], y[:half], classes=np.unique(y))
    parts.partial_fit(frame.iloc[half:], y[half:])
    assert_allclose(parts.predict_proba(frame), ours.predict_proba(frame), rtol=1e-12)
    # MixedNB: the families inferred from the dtypes, given by name, and
    # by position on the object array, all the same model.
    names, by_position = mixed_families(kinds, frame)
    inferred = fastnb.MixedNB(missing=missing).fit(frame, y)
    named = fastnb.MixedNB(families=names, missing=missing).fit(frame, y)
    on_array = fastnb.MixedNB(families=by_position, missing=missing).fit(plain, y)
    assert_same_outputs(named, inferred, frame)
    assert_same_outputs(inferred, on_array, frame, X_expected=plain)
    parts = fastnb.MixedNB(missing=missing)
    parts.partial_fit(frame.iloc[:half], y[:half], classes=np.unique(y))
    parts.partial_fit(frame.iloc[half:], y[half:])
    assert_allclose(
        parts.predict_proba(frame), inferred.predict_proba(frame), rtol=1e-12
    )


# ---------------------------------------------------------------------------
# Every pair of dtypes, and random mixes
# ---------------------------------------------------------------------------

PAIR_DRAWS = (
    [0, 1, 2, 1, 0, 2, 2, 1, 0, 1],
    [1, 1, 0, 2, 0, 2, 1, 0, 0, 2],
)
PAIR_Y = np.array(LABELS)[[0, 1, 1, 0, 1, 0, 0, 1, 1, 0]]
MISSING_ROWS = (1, 6)


def pair_draws(kinds, missing):
    """PAIR_DRAWS for two columns of these kinds; with missing="ignore", a
    missing value in each column that can hold one, in other rows."""
    draws = [list(d) for d in PAIR_DRAWS]
    if missing == "ignore":
        for j, kind in enumerate(kinds):
            if KINDS[kind].nullable:
                draws[j][MISSING_ROWS[j]] = None
    return draws


@pytest.mark.parametrize("missing", ["error", "ignore"])
@pytest.mark.parametrize(
    "kinds", list(itertools.combinations_with_replacement(KINDS, 2)), ids="+".join
)
def test_every_pair_of_dtypes(kinds, missing):
    if set(kinds) & NEEDS_PYARROW:
        pytest.importorskip("pyarrow")
    check_mix(kinds, pair_draws(kinds, missing), PAIR_Y, missing)


# ---------------------------------------------------------------------------
# The same frames in polars and pyarrow: the pandas frame's model
# ---------------------------------------------------------------------------

# polars holds categoricals of strings only: pandas' categorical of ints
# becomes a polars column of the ints (codes to CategoricalNB), other data.
NOT_IN = {"polars": {"category[int]"}, "pyarrow": set()}


def converted(frame, library):
    """The pandas frame as a frame of ``library``, as that library converts
    it (nulls where pandas has NA, None or NaN)."""
    if library == "polars":
        pl = pytest.importorskip("polars")
        return pl.from_pandas(frame)
    pa = pytest.importorskip("pyarrow")
    return pa.Table.from_pandas(frame, preserve_index=False)


def check_library(kinds, draws, y, missing, library):
    """CategoricalNB and MixedNB (families inferred) on the frame of these
    kinds in ``library``: the pandas frame's model, bit for bit, and its
    predictions; or, with missing="error" and missing values, its error."""
    frame, _ = frame_of(kinds, draws)
    other = converted(frame, library)
    for make in (fastnb.CategoricalNB, fastnb.MixedNB):
        try:
            expected = make(missing=missing).fit(frame, y)
        except ValueError as error:
            with pytest.raises(ValueError, match=re.escape(str(error))):
                make(missing=missing).fit(other, y)
            continue
        model = make(missing=missing).fit(other, y)
        assert_same_state(model, expected)
        assert_same_outputs(model, expected, other, X_expected=frame)


@pytest.mark.parametrize("missing", ["error", "ignore"])
@pytest.mark.parametrize(
    "kinds, library",
    [
        (kinds, library)
        for library in NOT_IN
        for kinds in itertools.combinations_with_replacement(KINDS, 2)
        if not set(kinds) & NOT_IN[library]
    ],
    ids=lambda value: "+".join(value) if isinstance(value, tuple) else value,
)
def test_every_pair_of_dtypes_in_polars_and_pyarrow(kinds, library, missing):
    pytest.importorskip("pyarrow")  # (polars converts pandas through Arrow)
    check_library(kinds, pair_draws(kinds, missing), PAIR_Y, missing, library)


@st.composite
def mixes(draw):
    """(kinds, draws, y): 1 to 5 columns of random dtypes and small data,
    missing values in some columns that can hold them."""
    n_samples = draw(st.integers(2, 10))
    kinds = draw(st.lists(st.sampled_from(AVAILABLE), min_size=1, max_size=5))
    codes = st.lists(st.integers(0, 2), min_size=n_samples, max_size=n_samples)
    gaps = st.lists(st.booleans(), min_size=n_samples, max_size=n_samples)
    draws = []
    for kind in kinds:
        column = draw(codes)
        if KINDS[kind].nullable and draw(st.booleans()):
            column = [
                None if gap else d for d, gap in zip(column, draw(gaps), strict=True)
            ]
        draws.append(column)
    y = draw(st.lists(st.sampled_from(LABELS), min_size=n_samples, max_size=n_samples))
    return kinds, draws, np.array(y)


@settings(max_examples=60, deadline=None)
@given(mix=mixes(), missing=st.sampled_from(["error", "ignore"]))
def test_any_mix_of_dtypes_is_the_object_array_model(mix, missing):
    check_mix(*mix, missing)


@pytest.mark.parametrize("library", ["polars", "pyarrow"])
@settings(max_examples=40, deadline=None)
@given(mix=mixes(), missing=st.sampled_from(["error", "ignore"]))
def test_any_mix_of_dtypes_in_polars_and_pyarrow_is_the_pandas_model(
    library, mix, missing
):
    pytest.importorskip("pyarrow")
    kinds, draws, y = mix
    keep = [j for j, kind in enumerate(kinds) if kind not in NOT_IN[library]]
    if keep:
        check_library(
            [kinds[j] for j in keep], [draws[j] for j in keep], y, missing, library
        )


# ---------------------------------------------------------------------------
# The case, and what a frame's categories are
# ---------------------------------------------------------------------------


def test_category_of_strings_beside_booleans():
    # Issue 33: this frame failed with "Cannot cast str dtype to float64"
    # (scikit-learn cast the whole frame to float64, for the boolean column).
    frame = pd.DataFrame(
        {
            "fruit": pd.Categorical(["pear", "fig", "pear", "apple", "fig", "fig"]),
            "ripe": [True, False, True, True, False, False],
        }
    )
    y = ["a", "b", "a", "a", "b", "b"]
    model = fastnb.CategoricalNB().fit(frame, y)
    assert_same_state(
        model.categories_,
        [
            np.array(["apple", "fig", "pear"], dtype=object),
            np.array([False, True], dtype=object),
        ],
    )
    assert_array_equal(model.predict(frame), y)
    expected = fastnb.CategoricalNB().fit(frame.to_numpy(dtype=object), y)
    assert_same_outputs(model, expected, frame, X_expected=frame.to_numpy(dtype=object))
    mixed = fastnb.MixedNB().fit(frame, y)
    assert_array_equal(mixed.families_["categorical"], [0, 1])
    assert_same_outputs(mixed, expected, frame, X_expected=frame.to_numpy(dtype=object))


def test_missing_values_of_every_kind_are_left_out_with_ignore():
    # None, NaN and pandas' NA, in an object column, a categorical and the
    # nullable dtypes: no category, and counted nowhere.
    frame = pd.DataFrame(
        {
            "word": pd.Series(
                ["fig", None, "pear", np.nan, pd.NA, "fig"], dtype=object
            ),
            "kind": pd.Categorical(["x", "y", None, "x", "y", "y"]),
            "flag": pd.array([True, None, False, True, False, None], dtype="boolean"),
            "code": pd.array([0, 1, None, 1, 2, 0], dtype="Int64"),
        }
    )
    y = ["a", "b", "a", "b", "a", "b"]
    model = fastnb.CategoricalNB(missing="ignore").fit(frame, y)
    assert_same_state(
        model.categories_[:3],
        [
            np.array(["fig", "pear"], dtype=object),
            np.array(["x", "y"], dtype=object),
            np.array([False, True], dtype=object),
        ],
    )
    assert_array_equal(model.categories_[3], [0, 1, 2])
    # Per class (a, b): the observed values' counts.
    assert_allclose(model.category_count_[0], [[1, 1], [1, 0]])
    assert_allclose(model.category_count_[1], [[1, 1], [1, 2]])
    assert_allclose(model.category_count_[2], [[2, 1], [0, 1]])
    assert_allclose(model.category_count_[3], [[1, 0, 1], [1, 2, 0]])
    # A row of nothing but missing values scores as the prior.
    empty = frame.iloc[[1]].copy()
    empty.loc[:, :] = None
    empty = empty.astype(frame.dtypes)
    assert_allclose(model.predict_proba(empty), [[0.5, 0.5]])


# ---------------------------------------------------------------------------
# Bad input: a clear error, and the model as it was
# ---------------------------------------------------------------------------

GOOD = pd.DataFrame(
    {
        "c0": pd.Categorical(["fig", "pear", "fig", "pear"]),
        "c1": pd.array([0, 1, 2, 1], dtype="Int64"),
    }
)
GOOD_Y = ["a", "b", "a", "b"]


def with_column(name, values):
    frame = GOOD.copy()
    frame[name] = values
    return frame


BAD_FRAMES = {
    "missing value": (
        with_column("c0", pd.Categorical(["fig", None, "fig", "pear"])),
        r"missing values \(NaN or None\) in columns \['c0'\]",
    ),
    "values that cannot be ordered": (
        with_column("c0", pd.Series(["fig", 1, "fig", 2], dtype=object)),
        "feature 0 mixes values that cannot be compared",
    ),
    "unhashable values": (
        with_column("c0", pd.Series([["fig"], ["pear"], ["fig"], ["fig"]])),
        r"feature 0 holds values that cannot be categories \(unhashable",
    ),
    "negative code": (
        with_column("c1", pd.array([0, 1, -1, 1], dtype="Int64")),
        "feature 1 has code -1 in row 2",
    ),
    "fractional code": (
        with_column("c1", pd.array([0, 1, 0.5, 1], dtype="Float64")),
        r"feature 1 has non-integer codes \(0.5 in row 2\)",
    ),
    "other column names": (
        GOOD.rename(columns={"c1": "size"}),
        "The feature names should match those that were passed during fit",
    ),
}


# MixedNB's families given, so that a fit does not infer other ones from
# the bad frame's dtypes.
MODELS = {
    "CategoricalNB": fastnb.CategoricalNB,
    "MixedNB": lambda: fastnb.MixedNB(families={"categorical": ["c0", "c1"]}),
}


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("bad", BAD_FRAMES)
def test_a_failed_fit_leaves_the_model_as_it_was(bad, name):
    X, message = BAD_FRAMES[bad]
    model = MODELS[name]().fit(GOOD, GOOD_Y)
    before = copy.deepcopy(model)
    proba = model.predict_proba(GOOD)
    if bad != "other column names":
        # (A new fit learns the names again.)
        with pytest.raises(ValueError, match=message):
            model.fit(X, GOOD_Y)
        assert_same_state(model, before)
    with pytest.raises(ValueError, match=message):
        model.partial_fit(X, GOOD_Y)
    assert_same_state(model, before)
    assert_array_equal(model.predict_proba(GOOD), proba)
    if bad in ("missing value", "negative code", "other column names"):
        # What predict refuses (a code never seen is an unseen category).
        with pytest.raises(ValueError, match=message):
            model.predict(X)
    # An unfitted model stays unfitted.
    fresh = MODELS[name]()
    if bad != "other column names":
        with pytest.raises(ValueError, match=message):
            fresh.fit(X, GOOD_Y)
        assert_same_state(fresh, MODELS[name]())
