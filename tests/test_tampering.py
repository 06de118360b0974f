"""Malformed sparse matrices: a clear error, never a crash.

A sparse matrix's index arrays are the user's to write to. fastnb checks a
matrix's structure before scipy or a kernel reads it. A regression there
corrupts memory, so everything below runs in child processes: a child goes
through a list of entries and prints the outcome of each, and the tests
assert the outcomes. A child that dies costs its entry a "crash" outcome
(its exit status and stderr, which the test shows), and a new child goes on
from the next entry.

1. Each matrix of a catalogue of malformed ones (CSR, CSC, COO, BSR and LIL)
   is refused by fit, partial_fit and predict_proba of every estimator that
   takes sparse input, with a ValueError that says that X is malformed, and
   where.
2. A refused call leaves the model as it was, bit for bit (the count
   families' partial_fit counts into the model's own arrays), and the model
   goes on learning as one that never saw the call.
"""

import copy
import functools
import json
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from _helpers import CASES, N_FEATURES, assert_same_state, run_child

TESTS = Path(__file__).resolve().parent
CASE_BY_ID = {case.id: case for case in CASES}
SPARSE_CASES = [case for case in CASES if case.sparse]
LABELS = np.array(["a", "b", "c"])
# Rows of the data every model is fitted on (even: BSR blocks are 2 x 2).
N_ROWS = 40
BLOCK = (2, 2)
CALLS = ("fit", "partial_fit", "predict_proba")


# ---------------------------------------------------------------------------
# Child processes
# ---------------------------------------------------------------------------

CHILD = """
    import faulthandler, json, sys
    faulthandler.enable()
    sys.path.insert(0, {tests!r})
    import test_tampering
    print("READY", flush=True)
    for outcome in test_tampering.{function}({start}):
        print("OUTCOME", json.dumps(outcome), flush=True)
"""


# Children that may die for one list of entries: past that, the entries left
# are not tried (a regression that crashes on everything fails fast).
MAX_DEATHS = 8


def outcomes_in_children(function, entries, folder):
    """entry -> outcome, from ``function(start)`` of this module run in children.

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
        code = CHILD.format(tests=str(TESTS), function=function, start=len(outcomes))
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


def lil_defects():
    """Defects of a LIL matrix: name -> (corruption, message).

    LIL is checked once scipy has converted it: the message names the CSR
    matrix scipy made of it.
    """

    def outside(value):
        return (
            rf"^X is a malformed CSR matrix: row \d+ has column index {value}, "
            rf"outside 0 \.\. {N_FEATURES - 1}\.$"
        )

    return {
        f"a column of {name}": (lil_column(value), outside(value))
        for name, value in [("n_columns", N_FEATURES), ("10**9", 10**9), ("-1", -1)]
    }


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
