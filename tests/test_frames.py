"""polars and pyarrow frames, read as pandas frames are (issue 56).

Every frame goes through one door, fastnb._frames, which reads its columns
through narwhals: numbers as numbers (NaN where null), other columns as
the Python values an object array holds, categoricals (polars' Categorical
and Enum, Arrow's dictionary) from their codes and categories. So a
CategoricalNB or MixedNB fitted on a polars DataFrame or a pyarrow Table
is, bit for bit, the model of the same data as a pandas DataFrame, and the
model of its values as an object array (None where missing); MixedNB
infers the same families from any of their schemas.
"""

import copy
import itertools
import re

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

import fastnb

from _helpers import assert_same_outputs, assert_same_state, run_child

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")

# Out of order, so that a category's place in the sorted values is not
# its code; the enum and the categorical of integers declare their
# categories in yet another order, with one never seen.
WORDS = ("pear", "fig", "apple")
ENUM = ("plum", "apple", "pear", "fig")
NUMBERS = (13, 12, 10, 11)

# A column kind: how a draw (0, 1 or 2) reads as a Python value, whether
# the column holds numbers (codes to CategoricalNB), and its dtype in
# pandas, polars and pyarrow (None: the library has no such column).
KINDS = {
    "bool": (lambda d: d == 1, False, "boolean", pl.Boolean, pa.bool_()),
    "int": (int, True, "Int64", pl.Int64, pa.int64()),
    "uint8": (int, True, "UInt8", pl.UInt8, pa.uint8()),
    "float": (float, True, "float64", pl.Float64, pa.float64()),
    "str": (WORDS.__getitem__, False, object, pl.String, pa.string()),
    "large_str": (WORDS.__getitem__, False, object, None, pa.large_string()),
    "categorical": (
        WORDS.__getitem__,
        False,
        "category",
        pl.Categorical,
        pa.dictionary(pa.int32(), pa.string()),
    ),
    "enum": (
        WORDS.__getitem__,
        False,
        pd.CategoricalDtype(ENUM),
        pl.Enum(ENUM),
        None,
    ),
    "categorical[int]": (
        lambda d: 10 + d,
        False,
        pd.CategoricalDtype(NUMBERS),
        None,
        pa.dictionary(pa.int8(), pa.int64()),
    ),
}
LIBRARIES = ("polars", "pyarrow")
LABELS = ("no", "yes")


def kinds_of(library):
    """The kinds a library has a column of."""
    slot = 3 if library == "polars" else 4
    return [name for name, kind in KINDS.items() if kind[slot] is not None]


def column_values(kind, draws):
    """A column's Python values, None where a draw is None (missing); the
    numbers of a column of numbers renumbered 0 .. k - 1 in order (codes
    that are their own categories)."""
    value, numbers = KINDS[kind][:2]
    if numbers:
        seen = sorted({d for d in draws if d is not None})
        dense = {d: i for i, d in enumerate(seen)}
        draws = [None if d is None else dense[d] for d in draws]
    return [None if d is None else value(d) for d in draws]


def frames_of(kinds, draws, library):
    """The same columns (named c0, c1, ...) as a frame of ``library``, as a
    pandas DataFrame, and as an object array."""
    columns = [column_values(k, d) for k, d in zip(kinds, draws, strict=True)]
    names = [f"c{j}" for j in range(len(kinds))]
    if library == "polars":
        frame = pl.DataFrame(
            [
                pl.Series(name, values, dtype=KINDS[kind][3])
                for name, kind, values in zip(names, kinds, columns, strict=True)
            ]
        )
    else:
        frame = pa.table(
            {
                name: pa.array(values, type=KINDS[kind][4])
                for name, kind, values in zip(names, kinds, columns, strict=True)
            }
        )
    pandas = pd.DataFrame(
        {
            name: pd.Series(values, dtype=KINDS[kind][2])
            for name, kind, values in zip(names, kinds, columns, strict=True)
        }
    )
    plain = np.empty((len(draws[0]), len(kinds)), dtype=object)
    for j, values in enumerate(columns):
        plain[:, j] = values
    return frame, pandas, plain


def rows(frame, start, stop):
    """Rows start .. stop - 1 of a polars DataFrame or a pyarrow Table."""
    return frame.slice(start, stop - start)


def check_mix(kinds, draws, y, missing, library):
    """CategoricalNB and MixedNB on a frame of these kinds: the pandas
    frame's model, bit for bit, and the object array's."""
    frame, pandas, plain = frames_of(kinds, draws, library)
    holes = [f"c{j}" for j, d in enumerate(draws) if None in d]
    if missing == "error" and holes:
        message = re.escape(f"in columns {holes}")
        for model in (fastnb.CategoricalNB(), fastnb.MixedNB()):
            with pytest.raises(ValueError, match=message):
                model.fit(frame, y)
        return
    ours = fastnb.CategoricalNB(missing=missing).fit(frame, y)
    assert_same_state(ours, fastnb.CategoricalNB(missing=missing).fit(pandas, y))
    expected = fastnb.CategoricalNB(missing=missing).fit(plain, y)
    assert_same_outputs(ours, expected, frame, X_expected=plain)
    assert_array_equal(ours.feature_names_in_, [f"c{j}" for j in range(len(kinds))])
    half = len(y) // 2
    parts = fastnb.CategoricalNB(missing=missing)
    parts.partial_fit(rows(frame, 0, half), y[:half], classes=np.unique(y))
    parts.partial_fit(rows(frame, half, len(y)), y[half:])
    assert_same_outputs(parts, ours, frame, rtol=1e-12)
    inferred = fastnb.MixedNB(missing=missing).fit(frame, y)
    from_pandas = fastnb.MixedNB(missing=missing).fit(pandas, y)
    assert_same_state(inferred, from_pandas)
    assert_same_outputs(inferred, from_pandas, frame, X_expected=pandas)


PAIR_DRAWS = (
    [0, 1, 2, 1, 0, 2, 2, 1, 0, 1],
    [1, 1, 0, 2, 0, 2, 1, 0, 0, 2],
)
PAIR_Y = np.array(LABELS)[[0, 1, 1, 0, 1, 0, 0, 1, 1, 0]]
MISSING_ROWS = (1, 6)


def pairs():
    for library in LIBRARIES:
        for kinds in itertools.combinations_with_replacement(kinds_of(library), 2):
            yield pytest.param(kinds, library, id=f"{library}-{'+'.join(kinds)}")


@pytest.mark.parametrize("missing", ["error", "ignore"])
@pytest.mark.parametrize(("kinds", "library"), list(pairs()))
def test_every_pair_of_dtypes_is_the_pandas_model(kinds, library, missing):
    draws = [list(d) for d in PAIR_DRAWS]
    check_mix(kinds, draws, PAIR_Y, "error", library)
    # Nulls in other rows of each column: missing values.
    for j in range(len(kinds)):
        draws[j][MISSING_ROWS[j]] = None
    check_mix(kinds, draws, PAIR_Y, missing, library)


@pytest.mark.parametrize("library", LIBRARIES)
def test_mixed_families_inferred_from_the_schema(library):
    rng = np.random.default_rng(0)
    n = 200
    columns = {
        "height": rng.normal(170, 10, n),
        "visits": rng.integers(0, 1000, n),  # numbers, not codes
        "grade": rng.integers(0, 4, n),  # codes
        "flag": rng.random(n) < 0.5,
        "colour": np.array(WORDS)[rng.integers(0, 3, n)],
    }
    y = np.array(LABELS)[rng.integers(0, 2, n)]
    pandas = pd.DataFrame(columns)
    pandas["colour_cat"] = pd.Categorical(pandas["colour"])
    if library == "polars":
        frame = pl.from_pandas(pandas)
    else:
        frame = pa.Table.from_pandas(pandas, preserve_index=False)
    model = fastnb.MixedNB().fit(frame, y)
    assert {f: c.tolist() for f, c in model.families_.items()} == {
        "gaussian": [0, 1],
        "categorical": [2, 3, 4, 5],
    }
    assert_same_state(model, fastnb.MixedNB().fit(pandas, y))
    assert_array_equal(model.predict(frame), model.predict(pandas))


@pytest.mark.parametrize(
    ("column", "dtype"),
    [
        (pl.Series("when", [1, 2, 3], dtype=pl.Datetime), "Datetime"),
        (pl.Series("tags", [[1], [2], [3]]), "List"),
        (pl.Series("blob", [b"a", b"b", b"c"]), "(Binary|large_binary)"),
    ],
    ids=["datetime", "list", "binary"],
)
def test_a_column_no_family_takes_is_named(column, dtype):
    frame = pl.DataFrame([pl.Series("x", [1.0, 2.0, 3.0]), column])
    for X in (frame, frame.to_arrow()):
        model = fastnb.MixedNB()
        with pytest.raises(
            ValueError,
            match=rf"cannot infer the family of column '{column.name}' \(dtype {dtype}",
        ):
            model.fit(X, [0, 1, 0])
        assert not hasattr(model, "classes_")


def test_a_chunked_dictionary_column_is_read_by_its_codes():
    # Each chunk has a dictionary of its own.
    chunks = pa.chunked_array(
        [
            pa.array(["fig", "pear"]).dictionary_encode(),
            pa.array(["apple", None, "fig", "pear"]).dictionary_encode(),
        ]
    )
    table = pa.table({"fruit": chunks})
    y = ["a", "b", "a", "b", "a", "b"]
    model = fastnb.CategoricalNB(missing="ignore").fit(table, y)
    plain = np.array(
        [["fig"], ["pear"], ["apple"], [None], ["fig"], ["pear"]], dtype=object
    )
    expected = fastnb.CategoricalNB(missing="ignore").fit(plain, y)
    assert_same_outputs(model, expected, table, X_expected=plain)
    assert model.categories_[0].tolist() == ["apple", "fig", "pear"]


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_failed_fit_leaves_the_model_as_it_was(library):
    good = pd.DataFrame({"c0": pd.Categorical(["fig", "pear", "fig", "pear"])})
    bad = pd.DataFrame({"c0": pd.Categorical(["fig", None, "fig", "pear"])})
    convert = pl.from_pandas if library == "polars" else pa.Table.from_pandas
    y = ["a", "b", "a", "b"]
    for make in (fastnb.CategoricalNB, fastnb.MixedNB):
        model = make().fit(convert(good), y)
        before = copy.deepcopy(model)
        with pytest.raises(ValueError, match=r"missing values \(NaN or None\)"):
            model.partial_fit(convert(bad), y)
        assert_same_state(model, before)


def test_a_dictionary_that_repeats_a_value_is_read_a_value_at_a_time():
    # Arrow lets a dictionary hold a value twice: codes 0 and 1 are both "fig".
    column = pa.DictionaryArray.from_arrays(
        pa.array([0, 1, 2, 0, 1, 2]), pa.array(["fig", "fig", "pear"])
    )
    table = pa.table({"fruit": column})
    y = ["a", "b", "a", "b", "a", "b"]
    model = fastnb.CategoricalNB().fit(table, y)
    assert model.categories_[0].tolist() == ["fig", "pear"]
    plain = np.array([["fig"], ["fig"], ["pear"]] * 2, dtype=object)
    assert_same_outputs(
        model, fastnb.CategoricalNB().fit(plain, y), table, X_expected=plain
    )


@pytest.mark.parametrize("library", ["pandas", *LIBRARIES])
def test_categories_are_coded_from_the_codes(library, monkeypatch):
    # No value of a categorical column is hashed: distinct_values, which
    # hashes each row's value, is never called.
    words = np.array(["plum", "fig", "pear", "apple"], dtype=object)
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 3, 500)  # "apple" never seen
    pandas = pd.DataFrame({"fruit": pd.Categorical.from_codes(codes, categories=words)})
    frame = {
        "pandas": pandas,
        "polars": pl.from_pandas(pandas) if library == "polars" else None,
        "pyarrow": pa.Table.from_pandas(pandas) if library == "pyarrow" else None,
    }[library]
    y = rng.integers(0, 2, 500)
    expected = fastnb.CategoricalNB().fit(words[codes][:, None], y)

    def hashed(*args):
        raise AssertionError("a categorical column was read a value at a time")

    monkeypatch.setattr("fastnb._categorical.distinct_values", hashed)
    model = fastnb.CategoricalNB().fit(frame, y)
    assert_same_state(model.categories_, expected.categories_)
    assert_same_state(model.category_count_, expected.category_count_)


@pytest.mark.parametrize("dtype", ["Categorical", "Enum"])
def test_polars_categories_are_read_by_their_ids(dtype, monkeypatch):
    # A polars Categorical's ids are global (other columns' strings come
    # first here) and an Enum's index its categories; both are read from
    # the column's ids, not through Arrow, nulls missing.
    pl.Series(["kiwi", "lime", "date"], dtype=pl.Categorical)
    words = ["plum", None, "fig", "pear", "fig", None, "plum", "fig"] * 25
    kind = {
        "Categorical": pl.Categorical,
        "Enum": pl.Enum(["pear", "fig", "plum", "apple"]),
    }[dtype]
    frame = pl.DataFrame({"fruit": pl.Series(words, dtype=kind)})
    y = np.arange(len(words)) % 3

    def through_arrow(*args):
        raise AssertionError("a polars categorical was converted to Arrow")

    monkeypatch.setattr(pl.Series, "to_arrow", through_arrow)
    model = fastnb.CategoricalNB(missing="ignore").fit(frame, y)
    plain = np.array(words, dtype=object)[:, None]
    expected = fastnb.CategoricalNB(missing="ignore").fit(plain, y)
    assert_same_state(model.categories_, expected.categories_)
    assert_same_state(model.category_count_, expected.category_count_)
    np.testing.assert_array_equal(
        model.predict_proba(frame), expected.predict_proba(plain)
    )


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_frame_through_partial_fit_merge_and_a_model_file(library, tmp_path):
    pandas = pd.DataFrame(
        {
            "height": [1.0, 2.0, np.nan, 4.0, 5.0, 6.0, 2.5, 3.5],
            "fruit": pd.Categorical(
                ["fig", "pear", "fig", None, "pear", "fig", "pear", "fig"]
            ),
            "ripe": [True, False, True, False, True, False, False, True],
        }
    )
    convert = pl.from_pandas if library == "polars" else pa.Table.from_pandas
    X = convert(pandas)
    y = np.array(LABELS)[[0, 1, 0, 1, 0, 1, 1, 0]]
    whole = fastnb.MixedNB(missing="ignore").fit(X, y)
    assert_same_state(whole, fastnb.MixedNB(missing="ignore").fit(pandas, y))
    first = fastnb.MixedNB(missing="ignore")
    first.partial_fit(rows(X, 0, 4), y[:4], classes=list(LABELS))
    second = fastnb.MixedNB(missing="ignore")
    second.partial_fit(rows(X, 4, 8), y[4:], classes=list(LABELS))
    assert_same_outputs(fastnb.merge([first, second]), whole, X, rtol=1e-12)
    first.partial_fit(rows(X, 4, 8), y[4:])
    assert_same_outputs(first, whole, X, rtol=1e-12)
    path = tmp_path / "model.fnb"
    fastnb.save(whole, path)
    loaded = fastnb.load(path)
    assert_array_equal(loaded.feature_names_in_, ["height", "fruit", "ripe"])
    assert_same_outputs(loaded, whole, X)


def test_pandas_frames_without_polars_or_pyarrow(tmp_path):
    # polars and pyarrow stay optional: fastnb imports and reads pandas
    # frames (and arrays) where neither can be imported.
    result = run_child(
        """
        import sys
        sys.modules["polars"] = None
        sys.modules["pyarrow"] = None
        import numpy as np
        import pandas as pd
        import fastnb
        X = pd.DataFrame({"h": [1.0, 2.0, 3.0, 4.0],
                          "c": pd.Categorical(["a", "b", None, "b"])})
        y = ["x", "y", "x", "y"]
        model = fastnb.MixedNB(missing="ignore").fit(X, y)
        plain = np.array(
            [[1.0, "a"], [2.0, "b"], [3.0, None], [4.0, "b"]], dtype=object
        )
        families = {"gaussian": [0], "categorical": [1]}
        expected = fastnb.MixedNB(families=families, missing="ignore").fit(plain, y)
        print(model.families_["categorical"].tolist())
        print(np.array_equal(model.predict_proba(X), expected.predict_proba(plain)))
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["[1]", "True"]


@pytest.mark.parametrize("library", LIBRARIES)
def test_soft_labels_of_a_frame_with_classes_out_of_order(library):
    # class_proba's columns are the classes given, sorted by fit as it
    # sorts the classes: a frame's columns are taken in that order.
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 3))
    proba = rng.dirichlet(np.ones(3), size=30)
    names = {"c": proba[:, 0], "a": proba[:, 1], "b": proba[:, 2]}
    frame = pl.DataFrame(names) if library == "polars" else pa.table(names)
    classes = ["c", "a", "b"]
    model = fastnb.GaussianNB().fit(X, class_proba=frame, classes=classes)
    expected = fastnb.GaussianNB().fit(X, class_proba=proba, classes=classes)
    assert_same_state(model, expected)
    assert model.classes_.tolist() == ["a", "b", "c"]


@pytest.mark.parametrize("estimator", ["GaussianNB", "CategoricalNB", "MixedNB"])
def test_a_lazy_frame_is_refused(estimator):
    # A polars LazyFrame holds a plan, not data: scikit-learn's checks made
    # a 0-d array of its plan's text ("Expected 2D array, got scalar").
    frame = pl.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [0, 1, 0, 1]})
    y = [0, 1, 0, 1]
    model = getattr(fastnb, estimator)()
    message = r"Got a lazy frame \(polars.LazyFrame\).*collect\(\)"
    with pytest.raises(TypeError, match=message):
        model.fit(frame.lazy(), y)
    assert not hasattr(model, "classes_")
    model.fit(frame, y)
    before = copy.deepcopy(model)
    with pytest.raises(TypeError, match=message):
        model.partial_fit(frame.lazy(), y)
    with pytest.raises(TypeError, match=message):
        model.predict_proba(frame.lazy())
    assert_same_state(model, before)
