"""Malformed sparse matrices and changed fitted models: a clear error, never a crash.

A sparse matrix's index arrays and a fitted model's attributes are the
user's to write to. fastnb checks a matrix's structure before scipy or a
kernel reads it, and a model's ``classes_``, ``n_features_in_`` and
statistics before it scores or learns. A regression there corrupts memory,
so everything below runs in child processes: a child goes through a list of
entries and prints the outcome of each, and the tests assert the outcomes. A
child that dies costs its entry a "crash" outcome (its exit status and
stderr, which the test shows), and a new child goes on from the next entry.

1. Each matrix of a catalogue of malformed ones (CSR, CSC, COO, BSR and LIL)
   is refused by fit, partial_fit and predict_proba of every estimator that
   takes sparse input, with a ValueError that says that X is malformed, and
   where.
2. A refused call leaves the model as it was, bit for bit (the count
   families' partial_fit counts into the model's own arrays), and the model
   goes on learning as one that never saw the call.
3. A random change to the arrays of a valid CSR matrix is refused, or, where
   the arrays still make a valid matrix, gives the results of that matrix
   (hypothesis).
4. Every array a user reaches from a fitted model is read-only, and a model
   whose ``classes_``, ``n_features_in_`` or any other public fitted
   attribute is set to another value (an array of another shape, length or
   dtype) refuses it, or gives a clear error or valid probabilities in
   predict_proba, then partial_fit, then predict_proba (hypothesis).
"""

import copy
import functools
import json
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _helpers import (
    CASES,
    N_FEATURES,
    assert_same_model,
    assert_same_outputs,
    assert_same_state,
    public_attributes,
    run_child,
    take_rows,
    tol,
    with_index_dtype,
)

TESTS = Path(__file__).resolve().parent
CASE_BY_ID = {case.id: case for case in CASES}
SPARSE_CASES = [case for case in CASES if case.sparse]
LABELS = np.array(["a", "b", "c"])
# Rows of the data every model is fitted on (even: BSR blocks are 2 x 2).
N_ROWS = 40
BLOCK = (2, 2)
CALLS = ("fit", "partial_fit", "predict_proba")
PROPERTY_SETTINGS = settings(
    max_examples=30,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)


# ---------------------------------------------------------------------------
# Child processes
# ---------------------------------------------------------------------------

# The memory a child may take (RLIMIT_DATA): a runaway allocation raises
# MemoryError instead of taking the machine's memory (the children need a
# few hundred MiB).
CHILD_MEMORY = 4 * 2**30

CHILD = """
    import faulthandler, json, resource, sys
    faulthandler.enable()
    hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
    if hard == resource.RLIM_INFINITY or hard > {memory}:
        resource.setrlimit(resource.RLIMIT_DATA, ({memory}, {memory}))
    sys.path.insert(0, {tests!r})
    import test_tampering
    print("READY", flush=True)
    for outcome in test_tampering.{function}(*{arguments!r}, {start}):
        print("OUTCOME", json.dumps(outcome), flush=True)
"""


# Children that may die for one list of entries (each costs a new child, a
# few seconds): past that, the entries left are not tried, so that a
# regression that crashes on everything fails in minutes, not the hour the
# catalogue of malformed matrices would take.
MAX_DEATHS = 40


def outcomes_in_children(function, entries, folder, arguments=()):
    """entry -> outcome, from ``function(*arguments, start)`` of this module
    run in children.

    ``function`` yields the outcome (a dict) of each entry from ``start`` on.
    When a child dies, its next entry gets ``{"crash": exit status,
    "stderr": ...}`` and a new child starts from the entry after, up to
    MAX_DEATHS times.
    """
    outcomes, deaths = [], 0
    while len(outcomes) < len(entries):
        if deaths == MAX_DEATHS:
            left = {"crash": None, "stderr": f"not tried: {deaths} children died"}
            outcomes += [left] * (len(entries) - len(outcomes))
            break
        code = CHILD.format(
            tests=str(TESTS),
            memory=CHILD_MEMORY,
            function=function,
            arguments=tuple(arguments),
            start=len(outcomes),
        )
        result = run_child(code, folder, timeout=600)
        lines = result.stdout.splitlines()
        if "READY" not in lines:
            pytest.fail(
                f"the child did not start (exit status {result.returncode}):\n"
                + result.stderr
            )
        outcomes += [
            json.loads(line.removeprefix("OUTCOME "))
            for line in lines
            if line.startswith("OUTCOME ")
        ]
        if len(outcomes) < len(entries):
            outcomes.append({"crash": result.returncode, "stderr": result.stderr})
            deaths += 1
    return dict(zip(entries, outcomes, strict=True))


def died(outcome):
    """What to say of an outcome whose child died, or None."""
    if "crash" not in outcome:
        return None
    if outcome["crash"] is None:
        return outcome["stderr"]
    return (
        f"the child died (exit status {outcome['crash']}); the end of its "
        f"stderr:\n{outcome['stderr'][-3000:]}"
    )


def failure_of(check, *args):
    """The traceback (with hypothesis' notes) of ``check(*args)``, or None.

    pytest.raises and pytest.fail raise an exception that is not an Exception.
    """
    try:
        check(*args)
    except (Exception, pytest.fail.Exception) as exc:
        return "".join(traceback.format_exception(exc))
    return None


def failures(check, keys, start):
    """In a child: how ``check`` (a function of this module) failed for each
    of ``keys`` from ``start`` on (None if it did not)."""
    for key in keys[start:]:
        yield {"failure": failure_of(globals()[check], key)}


def failures_in_children(check, keys, tmp_path_factory):
    """key -> how ``check(key)`` failed, in child processes."""
    folder = tmp_path_factory.mktemp(check)
    return outcomes_in_children("failures", keys, folder, (check, keys))


def assert_no_failure(outcome):
    assert not died(outcome), died(outcome)
    assert not outcome["failure"], outcome["failure"]


def difference(actual, expected):
    """Where ``actual`` differs from ``expected`` (assert_same_state), or None."""
    try:
        assert_same_state(actual, expected)
    except AssertionError as exc:
        return str(exc)
    return None


# ---------------------------------------------------------------------------
# Data and models (each child makes its own)
# ---------------------------------------------------------------------------


@functools.cache
def case_data(case_id, seed=11):
    """X (dense, N_ROWS rows) and y of a case; another seed for a further batch."""
    X, y, _ = CASE_BY_ID[case_id].make(N_ROWS, LABELS, seed=seed)
    return X, y


@functools.cache
def fitted(case_id):
    """The case's model fitted on case_data, tables built (copy it to change it)."""
    X, y = case_data(case_id)
    model = CASE_BY_ID[case_id].estimator().fit(X, y)
    model.predict_proba(X)
    return model


def call(model, method, X, y):
    """``model.<method>`` of X (and y, but for predict_proba)."""
    if method == "predict_proba":
        return model.predict_proba(X)
    return getattr(model, method)(X, y)


# ---------------------------------------------------------------------------
# 1, 2. A catalogue of malformed matrices
# ---------------------------------------------------------------------------


def as_format(X, sparse_format):
    """Dense X as a new scipy matrix of ``sparse_format``."""
    if sparse_format == "bsr":
        return sp.bsr_matrix(X, blocksize=BLOCK)
    return getattr(sp, f"{sparse_format}_matrix")(X)


def changed(name, change):
    """A corruption that sets ``X.<name>`` to ``change(a copy of it)``."""

    def corrupt(X):
        setattr(X, name, change(getattr(X, name).copy()))

    return corrupt


def middle_set_to(value, dtype=None):
    """An array change: the middle entry set to ``value`` (in ``dtype``)."""

    def change(array):
        array = array.astype(dtype or array.dtype)
        array[len(array) // 2] = value
        return array

    return change


def decreasing(indptr):
    """indptr with its middle offset past the next one."""
    k = len(indptr) // 2
    indptr[k] = indptr[k + 1] + 1
    return indptr


def past_the_end(indptr):
    """indptr with its last offset one past the stored values."""
    indptr[-1] += 1
    return indptr


def first_offset_past_a_bad_index(X):
    """indptr[0] = 1, past X.indices[0] = 10**9, which no row then holds.

    scipy requires indptr[0] to be 0: its conversions (CSC to CSR) and
    sum_duplicates read every index up to indptr[-1].
    """
    indices = X.indices.astype(np.int64)
    indices[0] = 10**9
    indptr = X.indptr.astype(np.int64)
    indptr[0] = 1
    X.indices, X.indptr = indices, indptr


def compressed_defects(sparse_format, major, minor, n_major, n_minor):
    """Defects of a CSR, CSC or BSR matrix: name -> (corruption, message)."""
    prefix = f"^X is a malformed {sparse_format.upper()} matrix: "

    def outside(value):
        return (
            prefix + rf"{major} \d+ has {minor} index {value}, outside 0 \.\. "
            rf"{n_minor - 1}\.$"
        )

    offsets = (
        prefix + rf"{major} \d+ has offsets X\.indptr\[\d+:\d+\] = \[-?\d+, -?\d+\]; "
        "offsets must be non-decreasing"
    )

    def offsets_count(n):
        return (
            prefix + rf"X\.indptr has {n} entries; X has {n_major} {major}s, so it "
            rf"must have {n_major + 1}\.$"
        )

    def not_integers(name):
        return prefix + rf"X\.{name} must be a 1-D integer array; got float64\.$"

    lengths = prefix + r"X\.indices and X\.data differ in length\.$"
    return {
        "an index of n_minor": (
            changed("indices", middle_set_to(n_minor)),
            outside(n_minor),
        ),
        "an index of 10**9": (
            changed("indices", middle_set_to(10**9, np.int64)),
            outside(10**9),
        ),
        "an index of -1": (changed("indices", middle_set_to(-1)), outside(-1)),
        "a uint64 index of 2**63": (
            changed("indices", middle_set_to(2**63, np.uint64)),
            outside(2**63),
        ),
        "decreasing offsets": (changed("indptr", decreasing), offsets),
        "an offset past the stored values": (changed("indptr", past_the_end), offsets),
        "an offset of 10**9": (changed("indptr", middle_set_to(10**9)), offsets),
        "an offset too few": (
            changed("indptr", lambda indptr: indptr[:-1]),
            offsets_count(n_major),
        ),
        "an offset too many": (
            changed("indptr", lambda indptr: np.append(indptr, indptr[-1])),
            offsets_count(n_major + 2),
        ),
        "indices of floats": (
            changed("indices", lambda indices: indices.astype(np.float64)),
            not_integers("indices"),
        ),
        "offsets of floats": (
            changed("indptr", lambda indptr: indptr.astype(np.float64)),
            not_integers("indptr"),
        ),
        "a value fewer than indices": (changed("data", lambda a: a[:-1]), lengths),
        "an index fewer than values": (changed("indices", lambda a: a[:-1]), lengths),
        "a first offset of 1, past an index of 10**9": (
            first_offset_past_a_bad_index,
            prefix,
        ),
    }


def coordinate(axis, change):
    """A corruption of a COO matrix's rows (axis 0) or columns (axis 1)."""

    def corrupt(X):
        coords = [X.row.copy(), X.col.copy()]
        coords[axis] = change(coords[axis])
        if hasattr(X, "coords"):
            # scipy >= 1.13: setting X.row or X.col casts to the old dtype.
            X.coords = tuple(coords)
        else:
            X.row, X.col = coords

    return corrupt


def coo_defects():
    """Defects of a COO matrix: name -> (corruption, message)."""
    prefix = "^X is a malformed COO matrix: "

    def outside(what, value, n):
        return (
            prefix + rf"stored value \d+ has {what} index {value}, outside 0 \.\. "
            rf"{n - 1}\.$"
        )

    return {
        "a row of n_rows": (
            coordinate(0, middle_set_to(N_ROWS)),
            outside("row", N_ROWS, N_ROWS),
        ),
        "a column of n_columns": (
            coordinate(1, middle_set_to(N_FEATURES)),
            outside("column", N_FEATURES, N_FEATURES),
        ),
        "a column of 10**9": (
            coordinate(1, middle_set_to(10**9, np.int64)),
            outside("column", 10**9, N_FEATURES),
        ),
        "a row of -1": (coordinate(0, middle_set_to(-1)), outside("row", -1, N_ROWS)),
        "a uint64 column of 2**63": (
            coordinate(1, middle_set_to(2**63, np.uint64)),
            outside("column", 2**63, N_FEATURES),
        ),
        "columns of floats": (
            coordinate(1, lambda col: col.astype(np.float64)),
            prefix + r"X\.col must be a 1-D integer array; got float64\.$",
        ),
        "a value fewer than coordinates": (
            changed("data", lambda a: a[:-1]),
            prefix + r"X\.row and X\.data differ in length\.$",
        ),
    }


def lil_column(value):
    """A corruption of a LIL matrix: the last column of its fullest row set."""

    def corrupt(X):
        row = max(range(X.shape[0]), key=lambda i: len(X.rows[i]))
        X.rows[row] = [*X.rows[row][:-1], value]

    return corrupt


def lil_values(change):
    """A corruption of a LIL matrix: the values of its fullest row changed."""

    def corrupt(X):
        row = max(range(X.shape[0]), key=lambda i: len(X.rows[i]))
        X.data[row] = change(list(X.data[row]))

    return corrupt


def lil_defects():
    """Defects of a LIL matrix: name -> (corruption, message).

    A column out of range is refused once scipy has converted the matrix:
    the message names the CSR matrix scipy made of it. scipy's conversion
    trusts each row to have as many values as columns.
    """

    def outside(value):
        return (
            rf"^X is a malformed CSR matrix: row \d+ has column index {value}, "
            rf"outside 0 \.\. {N_FEATURES - 1}\.$"
        )

    defects = {
        f"a column of {name}": (lil_column(value), outside(value))
        for name, value in [("n_columns", N_FEATURES), ("10**9", 10**9), ("-1", -1)]
    }
    malformed = "^X is a malformed (LIL|CSR) matrix: "
    defects["a row with 1000 values more than columns"] = (
        lil_values(lambda values: values + [1.0] * 1000),
        malformed,
    )
    defects["a row with a value fewer than columns"] = (
        lil_values(lambda values: values[:-1]),
        malformed,
    )
    return defects


MALFORMED = {
    "csr": compressed_defects("csr", "row", "column", N_ROWS, N_FEATURES),
    "csc": compressed_defects("csc", "column", "row", N_FEATURES, N_ROWS),
    "coo": coo_defects(),
    "bsr": compressed_defects(
        "bsr",
        "block row",
        "block column",
        N_ROWS // BLOCK[0],
        N_FEATURES // BLOCK[1],
    ),
    "lil": lil_defects(),
}
MALFORMED_ENTRIES = [
    (case.id, sparse_format, defect, method)
    for case in SPARSE_CASES
    for sparse_format, defects in MALFORMED.items()
    for defect in defects
    for method in CALLS
]


def malformed_outcomes(start):
    """In a child: the outcome of each of MALFORMED_ENTRIES from ``start`` on.

    Each call is made on a copy of the fitted model: the error it raised,
    how the model changed, and for partial_fit how it differs from its copy
    once both have learnt a further (valid) batch.
    """
    for case_id, sparse_format, defect, method in MALFORMED_ENTRIES[start:]:
        X, y = case_data(case_id)
        matrix = as_format(X, sparse_format)
        MALFORMED[sparse_format][defect][0](matrix)
        model = copy.deepcopy(fitted(case_id))
        before = copy.deepcopy(model)
        outcome = {"error": None, "message": None}
        try:
            call(model, method, matrix, y)
        except Exception as exc:
            outcome = {"error": type(exc).__name__, "message": str(exc)}
        outcome["change"] = difference(model, before)
        if method == "partial_fit":
            X_more, y_more = case_data(case_id, seed=12)
            outcome["change after a batch"] = difference(
                model.partial_fit(X_more, y_more), before.partial_fit(X_more, y_more)
            )
        yield outcome


@pytest.fixture(scope="module")
def malformed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("malformed")
    return outcomes_in_children("malformed_outcomes", MALFORMED_ENTRIES, folder)


def catalogue_problems(outcomes, case, sparse_format, problem):
    """The entries of one case and format for which ``problem(outcome, message)``
    says something, or whose child died: one line each."""
    problems = []
    for defect, (_, message) in MALFORMED[sparse_format].items():
        for method in CALLS:
            outcome = outcomes[case.id, sparse_format, defect, method]
            said = died(outcome) or problem(outcome, message)
            if said:
                problems.append(f"{method} of a {sparse_format} with {defect}: {said}")
    return problems


@pytest.mark.parametrize("sparse_format", MALFORMED)
@pytest.mark.parametrize("case", SPARSE_CASES, ids=lambda case: case.id)
def test_a_malformed_matrix_is_refused(case, sparse_format, malformed):
    def problem(outcome, message):
        if outcome["error"] != "ValueError":
            return f"{outcome['error'] or 'no error'}: {outcome['message']}"
        if not re.search(message, outcome["message"]):
            return f"{outcome['message']!r} does not match {message!r}"
        return None

    problems = catalogue_problems(malformed, case, sparse_format, problem)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("sparse_format", MALFORMED)
@pytest.mark.parametrize("case", SPARSE_CASES, ids=lambda case: case.id)
def test_a_refused_call_changes_nothing(case, sparse_format, malformed):
    def problem(outcome, message):
        changes = [outcome["change"], outcome.get("change after a batch")]
        return "; ".join(f"the model differs: {c}" for c in changes if c) or None

    problems = catalogue_problems(malformed, case, sparse_format, problem)
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------
# 3. Random changes to a valid CSR matrix
# ---------------------------------------------------------------------------


# The first offset a change may touch: indptr[0] too, which must be 0.
FIRST_CHANGED_OFFSET = 0


@st.composite
def changed_arrays(draw, arrays, shape):
    """(what changed, the arrays): one change to a valid CSR matrix's arrays.

    An index or an offset set to a value near or far out of range, two
    indices swapped (within a row: the same matrix), or an array a value
    shorter or longer.
    """
    data, indices, indptr = (
        arrays[name].copy() for name in ("data", "indices", "indptr")
    )
    n_rows, n_columns = shape
    nnz = len(indices)
    limits = np.iinfo(indices.dtype)
    kind = draw(st.sampled_from(["index", "offset", "swap", "length"]))
    if kind == "index":
        p = draw(st.integers(0, nnz - 1))
        indices[p] = draw(
            st.one_of(
                st.sampled_from([-1, n_columns, 10**9, limits.min, limits.max]),
                st.integers(-2 * n_columns, 2 * n_columns),
            )
        )
        what = f"indices[{p}] = {indices[p]}"
    elif kind == "offset":
        # The first and last offsets as often as the rest together.
        k = draw(
            st.one_of(
                st.sampled_from([FIRST_CHANGED_OFFSET, n_rows]),
                st.integers(FIRST_CHANGED_OFFSET, n_rows),
            )
        )
        indptr[k] = draw(
            st.one_of(
                st.sampled_from([-1, 0, nnz, nnz + 1, 10**9, limits.max]),
                st.sampled_from([indptr[k] - 1, indptr[k] + 1]),
                st.integers(-2, nnz + 2),
            )
        )
        what = f"indptr[{k}] = {indptr[k]}"
    elif kind == "swap":
        p, q = draw(st.integers(0, nnz - 1)), draw(st.integers(0, nnz - 1))
        indices[[p, q]] = indices[[q, p]]
        what = f"indices[{p}] and indices[{q}] swapped"
    arrays = {"data": data, "indices": indices, "indptr": indptr}
    if kind == "length":
        name = draw(st.sampled_from(["data", "indices"]))
        array = arrays[name]
        if draw(st.booleans()):
            arrays[name], what = array[:-1], f"{name} a value shorter"
        else:
            arrays[name] = np.concatenate([array, array[-1:]])
            what = f"{name} a value longer"
    return what, arrays


def csr_reading(arrays, shape):
    """The dense matrix that CSR ``arrays`` stand for, or None if they are malformed.

    By the rules scipy documents (and its check_format applies): 1-D integer
    index arrays, as many indices as values, n_rows + 1 offsets, the first
    0, non-decreasing, the last at most the number of values; the indices of
    each row's values in 0 .. n_columns - 1. (scipy's own check_format is not
    the oracle: it accepts decreasing offsets that end at 0, which its
    toarray then reads out of bounds.)
    """
    data, indices, indptr = (arrays[name] for name in ("data", "indices", "indptr"))
    n_rows, n_columns = shape
    if not all(a.ndim == 1 and a.dtype.kind in "iu" for a in (indices, indptr)):
        return None
    if len(indices) != len(data) or len(indptr) != n_rows + 1:
        return None
    indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
    if indptr[0] != 0 or (np.diff(indptr) < 0).any() or indptr[-1] > len(indices):
        return None
    stored = indices[: indptr[-1]]
    if ((stored < 0) | (stored >= n_columns)).any():
        return None
    dense = np.zeros(shape)
    rows = np.repeat(np.arange(n_rows), np.diff(indptr))
    np.add.at(dense, (rows, stored), data[: indptr[-1]])
    # And scipy reads it so.
    read = sp.csr_matrix(
        (arrays["data"], arrays["indices"], arrays["indptr"]), shape=shape, copy=True
    )
    np.testing.assert_array_equal(read.toarray(), dense)
    return dense


def unchecked_csr(arrays, shape):
    """A new CSR matrix of ``arrays`` (copies) as they are, unchecked.

    scipy has recorded nothing about them yet (sorted, canonical): fastnb
    works out what it needs from the arrays themselves.
    """
    X = sp.csr_matrix(shape)
    X.data, X.indices, X.indptr = (
        arrays[name].copy() for name in ("data", "indices", "indptr")
    )
    assert not {"_has_sorted_indices", "_has_canonical_format"} & set(vars(X))
    return X


def assert_same_result(actual, expected, compare):
    """``actual()`` gives what ``expected()`` gives: results that ``compare``
    finds equal, or the same ValueError."""
    try:
        result = expected()
    except ValueError as exc:
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            actual()
        return
    compare(actual(), result)


def corrupted_csr_property(case_id):
    case = CASE_BY_ID[case_id]
    rtol = tol(np.float64)
    model = fitted(case.id)

    @PROPERTY_SETTINGS
    @given(draw=st.data())
    def check(draw):
        n_rows = draw.draw(st.integers(9, 30), label="rows")
        seed = draw.draw(st.integers(0, 2**32 - 1), label="seed")
        X, y, _ = case.make(n_rows, LABELS, seed=seed)
        index_dtype = draw.draw(st.sampled_from([np.int32, np.int64]), label="index")
        valid = with_index_dtype(sp.csr_matrix(X), index_dtype)
        arrays = {name: getattr(valid, name) for name in ("data", "indices", "indptr")}
        what, arrays = draw.draw(changed_arrays(arrays, valid.shape), label="change")
        print(f"{case.id}: {n_rows} rows, {seed=}, {what}", file=sys.stderr, flush=True)
        read = csr_reading(arrays, valid.shape)

        def given_matrix():
            return unchecked_csr(arrays, valid.shape)

        if read is None:
            for method in CALLS:
                changed_model = copy.deepcopy(model)
                with pytest.raises(ValueError, match="^X is a malformed CSR matrix: "):
                    call(changed_model, method, given_matrix(), y)
                assert_same_state(changed_model, model, where=f"after {method}")
            return
        canonical = sp.csr_matrix(read)

        def same_model(actual, expected):
            assert_same_model(actual, expected, canonical, rtol)

        assert_same_result(
            lambda: case.estimator().fit(given_matrix(), y),
            lambda: case.estimator().fit(canonical, y),
            same_model,
        )
        assert_same_result(
            lambda: copy.deepcopy(model).partial_fit(given_matrix(), y),
            lambda: copy.deepcopy(model).partial_fit(canonical, y),
            same_model,
        )
        assert_same_outputs(model, model, given_matrix(), rtol, X_expected=canonical)

    check()


@pytest.fixture(scope="module")
def corrupted_csr(tmp_path_factory):
    ids = [case.id for case in SPARSE_CASES]
    return failures_in_children("corrupted_csr_property", ids, tmp_path_factory)


@pytest.mark.parametrize("case", SPARSE_CASES, ids=lambda case: case.id)
def test_a_changed_csr_matrix_is_refused_or_read_as_a_matrix(case, corrupted_csr):
    assert_no_failure(corrupted_csr[case.id])


@pytest.mark.parametrize("case", SPARSE_CASES, ids=lambda case: case.id)
def test_values_past_the_last_offset_are_not_part_of_the_matrix(case):
    # The index pointers end before the last stored value, a NaN (refused,
    # were it read): the matrix is the values they point to. scipy's column
    # indexing (MixedNB's columns of each family) wrote past the arrays it
    # made for such a matrix, which corrupted the heap now and then.
    X, y, _ = case.make(N_ROWS, LABELS, seed=5)
    valid = sp.csr_matrix(X)
    arrays = {
        "data": np.append(valid.data, np.nan),
        "indices": np.append(valid.indices, valid.indices[:1]),
        "indptr": valid.indptr,
    }
    rtol = tol(np.float64)
    model = case.estimator().fit(unchecked_csr(arrays, valid.shape), y)
    assert_same_model(model, case.estimator().fit(valid, y), valid, rtol)
    given = unchecked_csr(arrays, valid.shape)
    assert_same_outputs(model, model, given, rtol, X_expected=valid)
    assert len(given.data) == len(valid.data) + 1  # the caller's arrays kept


# ---------------------------------------------------------------------------
# 4. Random changes to a fitted model
# ---------------------------------------------------------------------------


class Tampering(NamedTuple):
    """A change to a fitted model: what it is, and a function making it."""

    what: str
    apply: Callable

    def __repr__(self):
        return self.what


CLASSES_REBOUND = {
    "one class fewer": lambda classes: classes[:-1],
    "one class more": lambda classes: np.concatenate([classes, classes[:1]]),
    "no classes": lambda classes: classes[:0],
    "None": lambda classes: None,
    "a list": list,
    "a column": lambda classes: classes[:, np.newaxis],
    "a row": lambda classes: classes[np.newaxis],
    "a string": lambda classes: "".join(map(str, classes)),
    # Valid answers: other labels, or the same ones in another order.
    "other labels": lambda classes: np.arange(len(classes)) * 10,
    "reversed": lambda classes: classes[::-1],
}


def rebound_classes():
    def rebind(name):
        def apply(model):
            model.classes_ = CLASSES_REBOUND[name](model.classes_)

        return Tampering(f"classes_ = {name}", apply)

    return st.sampled_from(sorted(CLASSES_REBOUND)).map(rebind)


def rebound_to(name, value):
    """The tampering that sets ``model.<name> = value``."""

    def apply(model):
        setattr(model, name, value)

    return Tampering(f"{name} = {value!r}", apply)


def rebound_n_features(n_features):
    # Integers near the number of features, as Python and NumPy integers,
    # and far from it.
    integers = st.integers(-3, 3 * n_features + 3)
    values = st.one_of(
        integers,
        st.integers(-(2**63), 2**63 - 1),
        integers.map(np.int64),
        integers.map(np.int32),
        st.none(),
        st.booleans(),
        st.floats(),
        st.just(float(n_features)),
        st.just(str(n_features)),
    )
    return values.map(lambda value: rebound_to("n_features_in_", value))


def rebound_public_attribute(model):
    """Any fitted attribute a user reads (or feature_names_in_) set to an
    array of another shape, length or dtype, or to a list of one."""
    names = sorted({*public_attributes(model), "feature_names_in_"})
    shapes = st.lists(st.integers(0, 12), min_size=0, max_size=3)
    dtypes = st.sampled_from([np.float64, np.float32, np.int64, np.uint8, object, str])

    def tampering(name, shape, dtype, as_list):
        value = np.ones(shape, dtype=dtype)
        if as_list:
            value = [value]
        return rebound_to(name, value)

    return st.builds(tampering, st.sampled_from(names), shapes, dtypes, st.booleans())


def reachable_arrays(model, path=""):
    """The float arrays a user reaches from a model's public attributes, by path.

    Arrays, arrays in a list (CategoricalNB's category_count_), and those of
    the estimators in a dict (MixedNB's estimators_).
    """
    arrays = {}
    for name, value in public_attributes(model).items():
        items = {"": value}
        if isinstance(value, list):
            items = {f"[{i}]": item for i, item in enumerate(value)}
        elif isinstance(value, dict):
            for key, estimator in value.items():
                if hasattr(estimator, "get_params"):
                    arrays.update(
                        reachable_arrays(estimator, f"{path}{name}[{key!r}].")
                    )
            continue
        for suffix, item in items.items():
            if isinstance(item, np.ndarray) and item.dtype.kind == "f" and item.size:
                arrays[f"{path}{name}{suffix}"] = item
    return arrays


def test_every_array_a_user_reaches_is_read_only():
    """Writing into a fitted model goes through fitting only: the arrays of
    its public attributes, of lists in them and of MixedNB's estimators_
    cannot be written to, so a model cannot be changed behind its checks."""
    for case in CASES:
        arrays = reachable_arrays(fitted(case.id))
        assert arrays, case.id
        writable = [path for path, array in arrays.items() if array.flags.writeable]
        assert not writable, f"{case.id}: writable {writable}"


CLEAN_ERRORS = (ValueError, TypeError, AttributeError)
# Messages of errors raised by Cython's or NumPy's checks, not by fastnb's.
RAW_MESSAGES = re.compile(
    "Buffer dtype mismatch|Buffer has wrong number of dimensions|not C-contiguous"
    "|read-only|array is too big|Unable to allocate|could not be broadcast"
    "|out of bounds|Cannot cast"
)


class Refused(NamedTuple):
    """A clean error a call raised: its type and message."""

    error: str
    message: str


def outcome_of(method, *args):
    """What ``method(*args)`` returns, or the clean error it raises (Refused).

    Any other exception propagates; a clean error must say something that
    is not one of RAW_MESSAGES. (Not the exception itself: its traceback
    holds the call's frames, and the arrays in them, until it is collected.)
    """
    try:
        return method(*args)
    except CLEAN_ERRORS as exc:
        refused = Refused(type(exc).__name__, str(exc))
    assert refused.message.strip(), f"{refused.error} without a message"
    assert not RAW_MESSAGES.search(refused.message), f"{refused}"
    return refused


def assert_valid_probabilities(outcome, n_rows):
    if isinstance(outcome, Refused):
        return
    assert outcome.shape == (n_rows, len(LABELS)), outcome.shape
    assert np.isfinite(outcome).all(), "probabilities not finite"
    assert (outcome >= 0).all(), "negative probabilities"
    np.testing.assert_allclose(outcome.sum(axis=1), 1.0, rtol=1e-9)


def assert_tampering_is_handled(case, tampering):
    """After ``tampering`` with the case's fitted model, predict_proba, then
    partial_fit, then predict_proba give a clear error or valid answers."""
    X, y = case_data(case.id)
    tampered = copy.deepcopy(fitted(case.id))
    # Attributes computed from the statistics refuse to be set (AttributeError).
    outcome_of(tampering.apply, tampered)
    assert_valid_probabilities(outcome_of(tampered.predict_proba, X), len(y))
    outcome_of(tampered.partial_fit, take_rows(X, slice(0, 20)), y[:20])
    assert_valid_probabilities(outcome_of(tampered.predict_proba, X), len(y))


def tampered_state_property(case_id):
    case = CASE_BY_ID[case_id]
    model = fitted(case.id)

    @PROPERTY_SETTINGS
    @given(draw=st.data())
    def check(draw):
        tampering = draw.draw(
            st.one_of(
                rebound_classes(),
                rebound_n_features(model.n_features_in_),
                rebound_public_attribute(model),
            ),
            label="tampering",
        )
        print(f"{case.id}: {tampering}", file=sys.stderr, flush=True)
        assert_tampering_is_handled(case, tampering)

    check()


@pytest.fixture(scope="module")
def tampered_state(tmp_path_factory):
    ids = [case.id for case in CASES]
    return failures_in_children("tampered_state_property", ids, tmp_path_factory)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_a_changed_model_gives_a_clear_error_or_valid_probabilities(
    case, tampered_state
):
    assert_no_failure(tampered_state[case.id])


# Tamperings that give NaN probabilities or worse (the property finds them
# now and then): each tried every time.
FOUND = {
    "MixedNB: n_features_in_ = 10**10": (
        "MixedNB-array",
        rebound_to("n_features_in_", 10**10),
    ),
    # scikit-learn compared the names with the DataFrame's element-wise.
    "MixedNB: feature_names_in_ of shape (5, 0)": (
        "MixedNB-frame",
        rebound_to("feature_names_in_", np.ones((5, 0))),
    ),
}


def found_tampering_is_handled(name):
    case_id, tampering = FOUND[name]
    assert_tampering_is_handled(CASE_BY_ID[case_id], tampering)


@pytest.fixture(scope="module")
def found_tamperings(tmp_path_factory):
    return failures_in_children(
        "found_tampering_is_handled", list(FOUND), tmp_path_factory
    )


@pytest.mark.parametrize("name", FOUND)
def test_a_tampering_found_gives_a_clear_error_or_valid_probabilities(
    name, found_tamperings
):
    assert_no_failure(found_tamperings[name])
