"""Model files: fastnb.save and fastnb.load, pickle and skops.

1. A saved model loads as the same model, for every case: the same outputs,
   parameters and state, going on with partial_fit and merge as the model
   itself does; from a path, a file object and a stream that cannot seek.
2. The file is laid out as documented (fastnb/_files.py): the tests read
   and write it with their own code, from the documentation, to change it
   as an attacker or a damaged disk would, with valid checksums.
3. Every damaged or changed file is refused with ModelFileError, naming the
   problem: truncated, bit-flipped, a header edited to another version,
   class, shape, dtype or value, sizes larger than the file, code where a
   value should be; signed files with the wrong key or none (hypothesis).
4. A changed pickle or skops file of a fitted model is refused as
   from_state refuses a state; skops loads every case with
   fastnb.SKOPS_TRUSTED_TYPES.
5. A text model (fastnb.text's vectorizers, and Pipelines of them,
   TfidfTransformer and fastnb estimators) saves and loads as the same
   model, refusing what a file cannot hold; its damaged or changed files
   are refused, or load as a model that predicts.
"""

import copy
import hashlib
import hmac
import io
import json
import math
import pickle
import re
import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from sklearn.exceptions import NotFittedError

import fastnb
from fastnb import ModelFileError

from _helpers import (
    CASE_IDS,
    CASES,
    assert_same_model,
    assert_same_state,
    require_data,
    take_rows,
)

# Also run on the wheel built from the sdist (.ci/run step 3).
pytestmark = pytest.mark.wheel

CASE = {case.id: case for case in CASES}
N_SAMPLES = 90
KEY = b"a secret shared by whoever saves and loads"

# The layout, from fastnb/_files.py's documentation.
PREAMBLE = struct.Struct("<8sQ32s32s")
MAGIC = b"\x89fastnb\n"

FUZZ = settings(
    max_examples=25,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)


def fitted(case_id, seed=0):
    """The case's model fitted on its data, and the data."""
    case = CASE[case_id]
    X, y, _ = case.make(n_samples=N_SAMPLES, seed=seed)
    return case.estimator().fit(X, y), X, y


def saved(model, **kwargs):
    file = io.BytesIO()
    fastnb.save(model, file, **kwargs)
    return file.getvalue()


def loaded(content, **kwargs):
    return fastnb.load(io.BytesIO(content), **kwargs)


class Stream(io.RawIOBase):
    """A file object that cannot seek or tell its size, as a pipe."""

    def __init__(self, content):
        self._content = io.BytesIO(content)

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self._content.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


# ---------------------------------------------------------------------------
# The documented layout, read and written by the tests
# ---------------------------------------------------------------------------


def split_file(content):
    """(header dict, [bytes of each array]) of a file, read as documented."""
    magic, length, _, _ = PREAMBLE.unpack_from(content)
    assert magic == MAGIC
    header = json.loads(content[PREAMBLE.size : PREAMBLE.size + length])
    chunks, offset = [], PREAMBLE.size + length
    for spec in header["arrays"]:
        size = math.prod(spec["shape"]) * np.dtype(spec["dtype"]).itemsize
        chunks.append(content[offset : offset + size])
        offset += size
    assert offset == len(content)
    return header, chunks


def join_file(header, chunks, key=None):
    """The file of a header and arrays, its checksums (and signature) made anew."""
    header = copy.deepcopy(header)
    for spec, chunk in zip(header["arrays"], chunks, strict=True):
        spec["sha256"] = hashlib.sha256(chunk).hexdigest()
    return with_header(header, chunks, key)


def with_header(header, chunks, key=None):
    """The file of a header as it is and arrays, the header's checksum (and
    signature) made anew."""
    header_bytes = json.dumps(header, separators=(",", ":")).encode()
    signature = (
        bytes(32)
        if key is None
        else hmac.new(key, header_bytes, hashlib.sha256).digest()
    )
    preamble = PREAMBLE.pack(
        MAGIC, len(header_bytes), hashlib.sha256(header_bytes).digest(), signature
    )
    return preamble + header_bytes + b"".join(chunks)


def array_of(header, chunks, index):
    spec = header["arrays"][index]
    return np.frombuffer(chunks[index], dtype=spec["dtype"]).reshape(spec["shape"])


def statistic_index(header, key):
    return header["statistics"]["dict"][key]["array"]


# ---------------------------------------------------------------------------
# 1. A saved model is the same model
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASE_IDS)
def test_a_loaded_model_is_the_model(case, tmp_path):
    model, X, y = fitted(case)
    path = tmp_path / "model.fastnb"
    fastnb.save(model, path)
    content = path.read_bytes()
    for reloaded in (
        fastnb.load(path),
        fastnb.load(str(path)),
        loaded(content),
        fastnb.load(io.BufferedReader(Stream(content))),
    ):
        assert type(reloaded) is type(model)
        assert_same_model(reloaded, model, X)
    assert saved(model) == content


@pytest.mark.parametrize("case", CASE_IDS)
def test_a_loaded_model_goes_on_learning_and_merges(case):
    model, X, y = fitted(case)
    half = np.arange(N_SAMPLES) < N_SAMPLES // 2
    first = (
        CASE[case]
        .estimator()
        .partial_fit(take_rows(X, half), y[half], classes=np.unique(y))
    )
    reloaded = loaded(saved(first))
    reloaded.partial_fit(take_rows(X, ~half), y[~half])
    first.partial_fit(take_rows(X, ~half), y[~half])
    assert_same_model(reloaded, first, X)
    other, _, _ = fitted(case, seed=1)
    assert_same_model(
        fastnb.merge([loaded(saved(model)), other]), fastnb.merge([model, other]), X
    )


@pytest.mark.parametrize(
    "labels",
    [
        np.array([3, 1, 2]),
        np.array([2.0, -1.0, 4.0]),
        np.array([True, False, True]),
        np.array(["b", "a", "c"], dtype=object),
        np.array(["spam", "ham", "eggs"]),
    ],
    ids=["int", "float", "bool", "object str", "str"],
)
def test_labels_keep_their_dtype(labels):
    rng = np.random.default_rng(0)
    y = labels[rng.integers(0, len(labels), 40)]
    X = rng.poisson(2.0, (40, 5))
    model = fastnb.MultinomialNB().fit(X, y)
    reloaded = loaded(saved(model))
    assert reloaded.classes_.dtype == model.classes_.dtype
    assert_array_equal(reloaded.predict(X), model.predict(X), strict=True)


def test_float32_gaussian_model_stays_float32():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4)).astype(np.float32)
    model = fastnb.GaussianNB().fit(X, rng.integers(0, 2, 50))
    reloaded = loaded(saved(model))
    assert reloaded.predict_proba(X).dtype == np.float32
    assert_same_model(reloaded, model, X)


def test_a_model_of_real_data_loads(tmp_path):
    """CategoricalNB on the Car data, raw strings: the loaded model predicts
    every row as the saved one."""
    rows = np.loadtxt(require_data("car/car.data"), dtype=str, delimiter=",")
    X, y = rows[:, :-1].astype(object), rows[:, -1]
    model = fastnb.CategoricalNB().fit(X, y)
    fastnb.save(model, tmp_path / "car.fastnb", key=KEY)
    reloaded = fastnb.load(tmp_path / "car.fastnb", key=KEY)
    assert_array_equal(reloaded.predict(X), model.predict(X), strict=True)
    assert_array_equal(reloaded.predict_proba(X), model.predict_proba(X))


def test_save_refuses_what_it_cannot_save():
    X, y = np.array([[1, 2], [3, 0]]), [0, 1]
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        fastnb.save(fastnb.MultinomialNB(), io.BytesIO())
    from sklearn.naive_bayes import MultinomialNB

    with pytest.raises(TypeError, match="fastnb.save takes a fastnb estimator"):
        fastnb.save(MultinomialNB().fit(X, y), io.BytesIO())
    model = fastnb.MultinomialNB(class_prior=np.array([0.5, 0.5], np.float16))
    with pytest.raises(TypeError, match=r"params\['class_prior'\] has dtype float16"):
        fastnb.save(model.fit(X, y), io.BytesIO())
    with pytest.raises(TypeError, match="key must be None or non-empty bytes"):
        fastnb.save(fastnb.MultinomialNB().fit(X, y), io.BytesIO(), key="text")


# ---------------------------------------------------------------------------
# 2. The layout is the documented one
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASE_IDS)
def test_the_file_is_laid_out_as_documented(case):
    model, _, _ = fitted(case)
    content = saved(model)
    header, chunks = split_file(content)
    assert join_file(header, chunks) == content
    assert join_file(header, chunks, KEY) == saved(model, key=KEY)
    assert header["format_version"] == 1
    assert header["fastnb_version"] == fastnb.__version__
    assert header["estimator"] == type(model).__name__
    assert header["n_features_in"] == model.n_features_in_
    assert_array_equal(
        array_of(header, chunks, statistic_index(header, "class_count")),
        model.class_count_,
    )


# ---------------------------------------------------------------------------
# 3. Damaged and changed files are refused
# ---------------------------------------------------------------------------


def refused(content, match, **kwargs):
    with pytest.raises(ModelFileError, match=match):
        loaded(content, **kwargs)


def edited(content, edit):
    """The file with ``edit(header, chunks)`` applied, checksums made anew."""
    header, chunks = split_file(content)
    edit(header, chunks)
    return join_file(header, chunks)


@pytest.fixture(scope="module")
def multinomial_file():
    model, _, _ = fitted("MultinomialNB")
    return saved(model)


def test_truncated_files_are_refused(multinomial_file):
    content = multinomial_file
    header_end = PREAMBLE.size + PREAMBLE.unpack_from(content)[1]
    refused(b"", "ends within its first bytes")
    refused(content[:40], "ends within its first bytes")
    refused(content[: header_end - 1], "declares a header of")
    refused(content[:-1], "declares .* bytes of arrays, but the file holds")
    stream = io.BufferedReader(Stream(content[:-1]))
    with pytest.raises(
        ModelFileError, match=r"ends within its array 'feature_count' \(2\)"
    ):
        fastnb.load(stream)
    refused(content + b"\0", "data after the model")


def test_other_files_are_refused_and_never_run(tmp_path):
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    refused(pickle.dumps(Payload()), "(?i)not a fastnb model file")
    assert not marker.exists()
    refused(
        b"PK\x03\x04 a zip, as skops writes" + bytes(100), "Not a fastnb model file"
    )


def test_damaged_bytes_are_refused(multinomial_file):
    content = bytearray(multinomial_file)
    header_end = PREAMBLE.size + PREAMBLE.unpack_from(content)[1]
    in_header = bytearray(content)
    in_header[PREAMBLE.size + 5] ^= 1
    refused(bytes(in_header), "header does not match its checksum")
    in_array = bytearray(content)
    in_array[header_end + 3] ^= 1
    refused(bytes(in_array), r"array 'classes' \(0\) does not match its checksum")


def named_arrays(header):
    """(name, index) of the arrays that the header's classes and statistics
    refer to directly or in a list, named as messages name them."""
    named = [("classes", header["classes"]["array"])]
    for key, value in header["statistics"]["dict"].items():
        if isinstance(value, list):
            named += [(f"{key}[{i}]", item["array"]) for i, item in enumerate(value)]
        elif "array" in value:
            named.append((key, value["array"]))
    return named


@pytest.mark.parametrize("case", CASE_IDS)
def test_messages_name_the_damaged_array(case, files):
    """A damaged array is named by the statistic it holds, not by its index alone."""
    content, _, _ = files[case]
    header, chunks = split_file(content)
    named = named_arrays(header)
    assert len(named) > 2
    header_end = len(content) - sum(map(len, chunks))
    starts = np.cumsum([header_end] + [len(chunk) for chunk in chunks])
    for name, index in named:
        if not chunks[index]:
            continue
        damaged = bytearray(content)
        damaged[starts[index]] ^= 1
        with pytest.raises(ModelFileError) as raised:
            loaded(bytes(damaged))
        assert str(raised.value) == (
            f"The file's array '{name}' ({index}) does not match its checksum: "
            "it is damaged or was changed."
        )
    # An array's description is named too, and one that nothing refers to
    # by its index alone.
    name, index = named[-1]
    header["arrays"][index]["dtype"] = "|O"
    refused(join_file(header, chunks), rf"^The file's array '{re.escape(name)}' ")
    header["params"] = header["statistics"] = {"dict": {}}
    header["classes"] = header["feature_names_in"] = None
    header["arrays"][0]["shape"] = [-1]
    refused(join_file(header, chunks), r"^The file's array 0 has shape \[-1\]")


def test_other_format_versions_are_refused(multinomial_file):
    def newer(header, chunks):
        header["format_version"] = 3
        header["fastnb_version"] = "9.0"

    refused(
        edited(multinomial_file, newer),
        r"format version 3 \(written by fastnb '9.0'\); this fastnb reads "
        "format versions 1 to 2",
    )

    def as_format_2(header, chunks):
        header["format_version"] = 2

    # A model's fields under format 2's number are not format 2's header.
    refused(edited(multinomial_file, as_format_2), "header lacks \\['content'\\]")


@pytest.mark.parametrize(
    "name", ["LogisticRegression", "os.system", "BaseNB", "__import__"]
)
def test_other_estimators_are_refused(multinomial_file, name):
    def other(header, chunks):
        header["estimator"] = name

    refused(edited(multinomial_file, other), "Unknown estimator")


def set_value(path, value):
    """An edit setting the header's value at ``path`` (keys and indices)."""

    def edit(header, chunks):
        node = header
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value

    return edit


def header_value(path, value):
    """The change of a file setting its header's value at ``path``."""
    return lambda content: edited(content, set_value(path, value))


def header_text(old, new):
    """The change of a file replacing ``old`` by ``new`` in its header's
    JSON text (for text json.dumps does not write), checksum made anew."""

    def change(content):
        length = PREAMBLE.unpack_from(content)[1]
        header_bytes = content[PREAMBLE.size : PREAMBLE.size + length]
        assert old in header_bytes
        header_bytes = header_bytes.replace(old, new)
        preamble = PREAMBLE.pack(
            MAGIC, len(header_bytes), hashlib.sha256(header_bytes).digest(), bytes(32)
        )
        return preamble + header_bytes + content[PREAMBLE.size + length :]

    return change


COUNTS = ("statistics", "dict", "feature_count")
FEATURES = b'"n_features_in":8'
HEADER_EDITS = {
    "an unknown key": (header_value(("extra",), 1), "has unknown \\['extra'\\]"),
    "a dtype a file cannot hold": (
        header_value(("arrays", 0, "dtype"), "|O"),
        "dtype '\\|O', which a file cannot hold",
    ),
    "a big-endian dtype": (header_value(("arrays", 0, "dtype"), ">U1"), "dtype '>U1'"),
    "a three-dimensional shape": (
        header_value(("arrays", 0, "shape"), [3, 1, 1]),
        "shape \\[3, 1, 1\\], which a file cannot hold",
    ),
    "a negative shape": (header_value(("arrays", 0, "shape"), [-3]), "shape \\[-3\\]"),
    "code where a value should be": (
        header_value(COUNTS, {"__reduce__": ["os.system", ["echo"]]}),
        "is not a value a model file holds",
    ),
    "an array used twice": (
        header_value(COUNTS, {"array": 1}),
        "is not a value a model file holds",
    ),
    "an array used by nothing": (
        header_value(COUNTS, [1.0]),
        "arrays that its model does not use",
    ),
    "NaN as a JSON constant": (
        header_text(FEATURES, b'"n_features_in":NaN'),
        "header is not JSON: NaN is not JSON",
    ),
    "too deep": (
        header_text(FEATURES, b'"n_features_in":' + b"[" * 10**5 + b"]" * 10**5),
        "header is not JSON: maximum recursion depth",
    ),
    "a huge integer": (
        header_text(FEATURES, b'"n_features_in":' + b"9" * 5000),
        "header is not JSON: Exceeds the limit",
    ),
    "features that disagree with the counts": (
        header_value(("n_features_in",), 3),
        "is not a model that fit could make: Statistic 'feature_count' has shape",
    ),
    "a parameter out of range": (
        header_value(("params", "dict", "alpha"), -1.0),
        "'alpha' parameter of MultinomialNB must be",
    ),
}


@pytest.mark.parametrize("edit", HEADER_EDITS)
def test_edited_headers_are_refused(multinomial_file, edit):
    change, match = HEADER_EDITS[edit]
    refused(change(multinomial_file), match)


ARRAY_EDITS = {
    "a negative count": (-1.0, "contains negative values"),
    "NaN": (np.nan, "contains NaN or infinity"),
    "infinity": (np.inf, "contains NaN or infinity"),
}


@pytest.mark.parametrize("edit", ARRAY_EDITS)
def test_edited_statistics_are_refused(multinomial_file, edit):
    value, match = ARRAY_EDITS[edit]

    def change(header, chunks):
        index = statistic_index(header, "feature_count")
        counts = array_of(header, chunks, index).copy()
        counts[1, 2] = value
        chunks[index] = counts.tobytes()

    refused(edited(multinomial_file, change), match)


def test_characters_beyond_unicode_are_refused(multinomial_file):
    def change(header, chunks):
        chunks[0] = np.array([0x110000, 98, 99], dtype="<u4").tobytes()

    refused(edited(multinomial_file, change), "holds invalid characters")


@pytest.mark.parametrize("seekable", [True, False], ids=["file", "stream"])
def test_sizes_larger_than_the_file_allocate_nothing(multinomial_file, seekable):
    """A small file declaring a terabyte array is refused having read only
    what the file holds."""

    def huge(header, chunks):
        index = statistic_index(header, "feature_count")
        header["arrays"][index]["shape"] = [10**6, 10**6]

    content = edited(multinomial_file, huge)
    file = io.BytesIO(content) if seekable else io.BufferedReader(Stream(content))
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match="bytes of arrays|ends within"):
            fastnb.load(file)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20, peak

    declared = bytearray(multinomial_file)
    declared[8:16] = struct.pack("<Q", 2**62)
    refused(bytes(declared), "declares a header of 4611686018427387904 bytes")


def test_signed_files_need_their_key(multinomial_file):
    model = loaded(multinomial_file)
    signed = saved(model, key=KEY)
    assert_same_state(loaded(signed, key=KEY), model)
    refused(signed, "The file is signed: pass its key")
    refused(signed, "signature does not match the key", key=b"another key")
    refused(multinomial_file, "not signed, and a key was given", key=KEY)
    # Checksums made anew after a change do not make a signature.
    header, chunks = split_file(signed)
    header["params"]["dict"]["alpha"] = 2.0
    refused(
        join_file(header, chunks, b"another key"), "signature does not match", key=KEY
    )
    with pytest.raises(TypeError, match="key must be None or non-empty bytes"):
        loaded(signed, key="")


# Hypothesis: bit flips, truncation, header values, array values.


@pytest.fixture(scope="module")
def files():
    """case id -> (its model's file, signed file, X)."""
    result = {}
    for case in CASE_IDS:
        model, X, _ = fitted(case)
        result[case] = saved(model), saved(model, key=KEY), X
    return result


@pytest.mark.parametrize("case", CASE_IDS)
def test_every_flipped_bit_and_truncation_is_refused(case, files):
    content, signed, _ = files[case]
    # A flipped bit in the magic, the header's length, a checksum, the header
    # or an array; one in the signature fails the signature's check.
    damaged = "Not a fastnb model file|declares a header of|does not match its checksum"

    @FUZZ
    @given(
        position=st.integers(0, len(content) * 8 - 1),
        length=st.integers(0, len(content) - 1),
    )
    def check(position, length):
        flipped = bytearray(content)
        flipped[position // 8] ^= 1 << (position % 8)
        refused(bytes(flipped), damaged + "|The file is signed: pass its key")
        refused(content[:length], "ends within its first bytes|declares .* bytes")
        flipped = bytearray(signed)
        flipped[position * len(signed) // len(content) // 8] ^= 1
        refused(bytes(flipped), damaged + "|signature does not match", key=KEY)

    check()


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=5)
    | st.sampled_from(["<f8", "<U1", "|b1", "float32", "nan", "MultinomialNB"]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["array", "dict", "tuple", "float", "dtype", "MEstimate"]),
            children,
            max_size=2,
        )
    ),
    max_leaves=6,
)


def header_paths(node, path=()):
    """Every path to a value in a header."""
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from header_paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from header_paths(value, (*path, index))


def assert_loads_as_a_model_or_is_refused(content, X):
    """ModelFileError, or a model that scores X with valid probabilities."""
    try:
        model = loaded(content)
    except ModelFileError as exc:
        assert str(exc)
        return
    try:
        probabilities = model.predict_proba(X)
    except (ValueError, TypeError) as exc:  # X no longer fits the model
        assert str(exc)
        return
    assert probabilities.shape == (X.shape[0], len(model.classes_))
    # Statistics as extreme as fit allows may overflow (as scikit-learn's
    # do): rows whose scores are not finite are the model's answer.
    with np.errstate(all="ignore"):
        finite = np.isfinite(model.predict_joint_log_proba(X)).all(axis=1)
    assert np.isfinite(probabilities[finite]).all()
    np.testing.assert_allclose(probabilities[finite].sum(axis=1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("case", CASE_IDS)
def test_changed_headers_are_refused_or_load_as_a_model(case, files):
    """A header edited anywhere, its checksums made anew: refused with
    ModelFileError, or a model that fit could have made."""
    content, _, X = files[case]
    header, chunks = split_file(content)
    paths = [path for path in header_paths(header) if path]

    @FUZZ
    @given(path=st.sampled_from(paths), value=JSON_VALUES)
    def check(path, value):
        changed = copy.deepcopy(header)
        set_value(path, value)(changed, chunks)
        assert_loads_as_a_model_or_is_refused(with_header(changed, chunks), X)

    check()


@pytest.mark.parametrize("case", CASE_IDS)
def test_changed_arrays_are_refused_or_load_as_a_model(case, files):
    """An array's values changed, checksums made anew: refused with
    ModelFileError, or a model that fit could have made."""
    content, _, X = files[case]
    header, chunks = split_file(content)
    indices = [i for i, chunk in enumerate(chunks) if chunk]

    @FUZZ
    @given(index=st.sampled_from(indices), data=st.data())
    def check(index, data):
        size = len(chunks[index])
        start = data.draw(st.integers(0, size - 1), label="start")
        new = data.draw(st.binary(min_size=1, max_size=8), label="bytes")
        changed = list(chunks)
        changed[index] = (chunks[index][:start] + new + chunks[index][start:])[:size]
        assert_loads_as_a_model_or_is_refused(join_file(header, changed), X)

    check()


# ---------------------------------------------------------------------------
# 4. pickle and skops
# ---------------------------------------------------------------------------


def with_statistic(model, key, value):
    """A copy of ``model`` whose statistic ``key`` is ``value``, as a changed
    pickle or skops file would make it (no check)."""
    changed = copy.deepcopy(model)
    statistics = dict(vars(changed)["_statistics"])
    statistics[key] = value
    vars(changed)["_statistics"] = statistics
    return changed


def test_a_changed_pickle_is_refused():
    model, X, _ = fitted("MultinomialNB")
    restored = pickle.loads(pickle.dumps(model))
    assert_same_model(restored, model, X)
    counts = model.feature_count_.copy()
    counts[0, 0] = -5.0
    with pytest.raises(ValueError, match="'feature_count' contains negative values"):
        pickle.loads(pickle.dumps(with_statistic(model, "feature_count", counts)))
    with pytest.raises(ValueError, match="'feature_count' has shape \\(3, 2\\)"):
        pickle.loads(
            pickle.dumps(with_statistic(model, "feature_count", counts[:, :2]))
        )


skops_io = pytest.importorskip("skops.io")


@pytest.mark.parametrize("case", CASE_IDS)
def test_skops_loads_every_model_with_the_trusted_types(case, tmp_path):
    model, X, _ = fitted(case)
    path = tmp_path / "model.skops"
    skops_io.dump(model, path)
    untrusted = skops_io.get_untrusted_types(file=path)
    assert set(untrusted) <= set(fastnb.SKOPS_TRUSTED_TYPES), untrusted
    reloaded = skops_io.load(path, trusted=list(fastnb.SKOPS_TRUSTED_TYPES))
    assert_same_outputs_and_statistics(reloaded, model, X)


@pytest.mark.parametrize("name", ["OneVsRestNB", "SemiSupervisedNB"])
def test_skops_loads_the_wrapping_estimators_with_the_trusted_types(name, tmp_path):
    model, X, y = fitted("MultinomialNB")
    wrapper = getattr(fastnb, name)(fastnb.MultinomialNB())
    if name == "OneVsRestNB":
        wrapper.fit(X, np.column_stack([y == label for label in np.unique(y)]))
    else:
        partly = y.astype(object)
        partly[np.arange(len(y)) % 3 > 0] = -1  # unlabelled
        wrapper.fit(X, partly)
    path = tmp_path / "model.skops"
    skops_io.dump(wrapper, path)
    untrusted = skops_io.get_untrusted_types(file=path)
    assert set(untrusted) <= set(fastnb.SKOPS_TRUSTED_TYPES), untrusted
    reloaded = skops_io.load(path, trusted=list(fastnb.SKOPS_TRUSTED_TYPES))
    for method in ("predict", "predict_proba"):
        assert_array_equal(getattr(reloaded, method)(X), getattr(wrapper, method)(X))


def test_skops_loads_a_text_model_with_the_trusted_types(tmp_path):
    model = text_models()["pipeline_transformer"]
    path = tmp_path / "model.skops"
    skops_io.dump(model, path)
    untrusted = skops_io.get_untrusted_types(file=path)
    assert set(untrusted) <= set(fastnb.SKOPS_TRUSTED_TYPES), untrusted
    reloaded = skops_io.load(path, trusted=list(fastnb.SKOPS_TRUSTED_TYPES))
    assert_same_text_model(reloaded, model)


def assert_same_outputs_and_statistics(actual, expected, X):
    for method in ("predict", "predict_proba", "predict_joint_log_proba"):
        assert_array_equal(getattr(actual, method)(X), getattr(expected, method)(X))
    assert_same_state(
        fastnb.get_state(actual).statistics, fastnb.get_state(expected).statistics
    )


def test_a_changed_skops_file_is_refused(tmp_path):
    model, _, _ = fitted("GaussianNB")
    path = tmp_path / "model.skops"
    skops_io.dump(with_statistic(model, "ssd", -model._statistics["ssd"]), path)
    with pytest.raises(ValueError, match="'ssd' contains negative values"):
        skops_io.load(path, trusted=list(fastnb.SKOPS_TRUSTED_TYPES))


# ---------------------------------------------------------------------------
# 5. Text models
# ---------------------------------------------------------------------------

DOCUMENTS = [
    "the cat sat on the mat",
    "a dog barks at the cat",
    "cats and dogs, naïve café",
    "the loud dog sat",
    "ΣΑΣ σας ünïcode",
    "mat mat mat",
] * 4
TEXT_LABELS = ["pets", "noise", "pets", "noise", "other", "pets"] * 4


def text_models():
    """Name -> a fitted text model of each kind a file holds."""
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.pipeline import make_pipeline

    import fastnb.text as text

    models = {
        "count": text.CountVectorizer(ngram_range=(1, 2), max_features=12),
        "count_fixed": text.CountVectorizer(vocabulary={"cat": 1, "dog": 0}),
        "tfidf": text.TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 3)),
        "tfidf_no_idf": text.TfidfVectorizer(use_idf=False, dtype=np.float32),
        "hashing": text.HashingVectorizer(n_features=2**8, alternate_sign=False),
        "pipeline": make_pipeline(
            text.TfidfVectorizer(stop_words="english"), fastnb.MultinomialNB()
        ),
        "pipeline_transformer": make_pipeline(
            text.CountVectorizer(min_df=2),
            TfidfTransformer(sublinear_tf=True),
            fastnb.ComplementNB(norm=True),
        ),
        "pipeline_hashing": make_pipeline(
            text.HashingVectorizer(n_features=64, norm=None, alternate_sign=False),
            fastnb.BernoulliNB(),
        ),
    }
    for model in models.values():
        model.fit(DOCUMENTS, TEXT_LABELS)
    return models


@pytest.fixture(scope="module")
def text_files():
    return {name: (model, saved(model)) for name, model in text_models().items()}


def assert_same_text_model(loaded_model, model):
    assert type(loaded_model) is type(model)
    assert repr(loaded_model.get_params()) == repr(model.get_params())
    if hasattr(model, "predict_proba"):
        assert_array_equal(
            loaded_model.predict_proba(DOCUMENTS), model.predict_proba(DOCUMENTS)
        )
        return
    if hasattr(model, "vocabulary_"):
        assert loaded_model.vocabulary_ == model.vocabulary_
        assert [type(i) for i in loaded_model.vocabulary_.values()] == [
            type(i) for i in model.vocabulary_.values()
        ]
    ours, theirs = loaded_model.transform(DOCUMENTS), model.transform(DOCUMENTS)
    assert type(ours) is type(theirs) and ours.dtype == theirs.dtype
    for part in ("indptr", "indices", "data"):
        assert_array_equal(getattr(ours, part), getattr(theirs, part))


@pytest.mark.parametrize("name", list(text_models()))
def test_a_loaded_text_model_is_the_model(name, text_files, tmp_path):
    model, content = text_files[name]
    assert_same_text_model(loaded(content), model)
    path = tmp_path / "model.fastnb"
    fastnb.save(model, path, key=KEY)
    assert_same_text_model(fastnb.load(path, key=KEY), model)
    with pytest.raises(ModelFileError, match="signed"):
        fastnb.load(path)
    header, _ = split_file(content)
    assert header["format_version"] == 2
    assert header.keys() == {"format_version", "fastnb_version", "content", "arrays"}


def test_save_refuses_text_models_it_cannot_hold():
    import sklearn.feature_extraction.text as sk_text
    from sklearn.pipeline import make_pipeline

    import fastnb.text as text

    fitted_code = text.CountVectorizer(tokenizer=str.split, token_pattern=None)
    with pytest.raises(TypeError, match=r"params\['tokenizer'\] is a .*holds no code"):
        fastnb.save(fitted_code.fit(DOCUMENTS), io.BytesIO())
    with pytest.raises(TypeError, match="got CountVectorizer at content.steps"):
        fastnb.save(
            make_pipeline(sk_text.CountVectorizer(), fastnb.MultinomialNB()).fit(
                DOCUMENTS, TEXT_LABELS
            ),
            io.BytesIO(),
        )
    cached = make_pipeline(text.CountVectorizer(), fastnb.MultinomialNB(), memory="x")
    with pytest.raises(TypeError, match="Pipeline with memory"):
        fastnb.save(cached, io.BytesIO())
    with pytest.raises(NotFittedError):
        fastnb.save(text.TfidfVectorizer(), io.BytesIO())


def text_edit(path, value):
    """An edit setting the header's content at ``path`` (keys and indices)."""

    def edit(header, chunks):
        node = header["content"]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


@pytest.mark.parametrize(
    ("name", "path", "value", "message"),
    [
        ("count", ("vectorizer", "class"), "os.system", "unknown vectorizer"),
        ("count", ("vectorizer", "fitted", "fixed"), True, "fixed exactly"),
        ("count", ("vectorizer", "params", "dict", "ngram_range"), [2, 1], "ngram"),
        ("count", ("vectorizer", "params", "dict", "analyzer"), "bytes", "analyzer"),
        ("count", ("vectorizer", "params", "dict", "dtype"), {"dtype": "x"}, "value"),
        ("hashing", ("vectorizer", "fitted"), {"terms": None}, "no fitted"),
        ("pipeline", ("pipeline", "steps"), [], "list of steps"),
        ("pipeline", ("pipeline", "steps", 0, 0), "a__b", "__"),
        ("pipeline", ("pipeline", "kind"), 1, "pipeline"),
        ("count", ("zip",), {"x": 1}, "is not a model's"),
    ],
)
def test_changed_text_models_are_refused(name, path, value, message, text_files):
    _, content = text_files[name]
    refused(edited(content, text_edit(path, value)), message)


def test_changed_text_arrays_are_refused(text_files):
    _, content = text_files["tfidf"]
    header, chunks = split_file(content)
    terms_index = header["content"]["vectorizer"]["fitted"]["terms"]["array"]
    idf_index = header["content"]["vectorizer"]["fitted"]["idf"]["array"]
    terms = array_of(header, chunks, terms_index).copy()
    terms[1] = terms[0]
    repeated = list(chunks)
    repeated[terms_index] = terms.tobytes()
    refused(join_file(header, repeated), "distinct strings")
    idf = array_of(header, chunks, idf_index).copy()
    idf[0] = 0.5
    low = list(chunks)
    low[idf_index] = idf.tobytes()
    refused(join_file(header, low), "idf_ must be")


def assert_loads_as_a_text_model_or_is_refused(content):
    """ModelFileError, or a text model that predicts (or transforms) the
    documents."""
    try:
        model = loaded(content)
    except ModelFileError as exc:
        assert str(exc)
        return
    try:
        if hasattr(model, "predict_proba"):
            probabilities = model.predict_proba(DOCUMENTS)
            np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-6)
        else:
            assert model.transform(DOCUMENTS).shape[0] == len(DOCUMENTS)
    except (ValueError, TypeError) as exc:  # the documents no longer fit it
        assert str(exc)


@pytest.mark.parametrize("name", ["pipeline", "pipeline_transformer", "count"])
def test_changed_text_files_are_refused_or_load_as_a_model(name, text_files):
    _, content = text_files[name]
    header, chunks = split_file(content)
    paths = [path for path in header_paths(header) if path]
    indices = [i for i, chunk in enumerate(chunks) if chunk]

    @FUZZ
    @given(path=st.sampled_from(paths), value=JSON_VALUES, data=st.data())
    def check(path, value, data):
        changed = copy.deepcopy(header)
        set_value(path, value)(changed, chunks)
        assert_loads_as_a_text_model_or_is_refused(with_header(changed, chunks))
        index = data.draw(st.sampled_from(indices), label="array")
        start = data.draw(st.integers(0, len(chunks[index]) - 1), label="start")
        changed_chunks = list(chunks)
        changed_chunks[index] = (
            chunks[index][:start] + b"\xff\x00" + chunks[index][start:]
        )[: len(chunks[index])]
        assert_loads_as_a_text_model_or_is_refused(join_file(header, changed_chunks))
        flipped = bytearray(content)
        position = data.draw(st.integers(0, len(content) * 8 - 1), label="bit")
        flipped[position // 8] ^= 1 << (position % 8)
        refused(bytes(flipped), "Not a fastnb|declares|checksum|is signed")

    check()


def test_a_batch_state_travels_as_a_model_files_bytes():
    # fastnb.spark sends each partition's state to the driver so: a state
    # that from_state would refuse alone (a class prior of two classes, a
    # batch of one) is read back as it was, its arrays checked as load
    # checks them; only once combined is it a model.
    from fastnb._files import read_state, state_bytes
    from fastnb._state import batch_state

    model = fastnb.MultinomialNB(class_prior=[0.25, 0.75])
    first = batch_state(model, np.array([[1.0, 2.0]]), np.array(["a"]))
    second = batch_state(model, np.array([[0.0, 3.0]]), np.array(["b"]))
    data = state_bytes(first)
    with pytest.raises(ValueError, match="prior"):
        fastnb.load(io.BytesIO(data))
    read = read_state(data)
    assert_same_state(read, first)
    combined = fastnb.from_state(fastnb.combine_states(read, second))
    assert_array_equal(combined.feature_count_, [[1.0, 2.0], [0.0, 3.0]])
    damaged = bytearray(data)
    damaged[-1] ^= 1
    with pytest.raises(ModelFileError, match="checksum"):
        read_state(bytes(damaged))
    text = io.BytesIO()
    fastnb.save(fastnb.text.CountVectorizer().fit(["apple pear", "pear fig"]), text)
    with pytest.raises(ModelFileError, match="holds no model state"):
        read_state(text.getvalue())
