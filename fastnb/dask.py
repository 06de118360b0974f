"""fastnb's estimators over Dask collections, on one machine or a cluster.

The classes here are fastnb's estimators, and behave as they do on NumPy,
SciPy and pandas input; given Dask collections (``dask.array`` with dense or
``scipy.sparse`` chunks, ``dask.dataframe``), they fit and predict on the
workers, as dask-ml's estimators do:

- ``fit`` and ``partial_fit`` compute each block of rows' sufficient
  statistics on its worker with the compiled kernels, combine them by a tree
  reduction and finalise the model once, on the client: what reaches the
  client is O(classes x features), X is never gathered. The classes are
  found in the same pass (those of every block, united).
- ``predict``, ``predict_proba``, ``predict_log_proba`` and
  ``predict_joint_log_proba`` return Dask arrays computed blockwise, the
  fitted model sent to the workers once (one task of the graph); ``score``
  returns a float.

Work runs on the current Dask scheduler: a ``dask.distributed`` Client if
one is active, else Dask's threads. Needs the extra ``fastnb[dask]``.

Examples
--------
>>> import dask.array as da
>>> from fastnb.dask import GaussianNB
>>> X = da.random.default_rng(0).normal(size=(10_000, 4), chunks=(2_500, 4))
>>> y = (X[:, 0] > 0).astype(int)
>>> model = GaussianNB().fit(X, y)
>>> model.classes_
array([0, 1])
>>> model.predict(X).chunks  # a Dask array, computed block by block
((2500, 2500, 2500, 2500),)
>>> float(model.score(X, y)) > 0.9
True
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
from typing import TYPE_CHECKING, Any, Self

try:
    import dask
    import dask.array as da
    from dask.system import CPU_COUNT
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError(
        "fastnb.dask needs Dask: pip install 'fastnb[dask]' (dask and distributed)."
    ) from exc
import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

try:
    from distributed import KilledWorker, get_worker

    # The errors of a task whose every worker died while running it.
    LOST_WORKER_ERRORS: tuple[type[Exception], ...] = (KilledWorker,)
except ImportError:  # pragma: no cover - Dask's local schedulers lose no worker
    LOST_WORKER_ERRORS = ()
    get_worker = None

import fastnb
from fastnb._base import unchanged_on_error
from fastnb._explain import check_cost
from fastnb._labels import column_classes, sorted_classes
from fastnb._registry import ESTIMATOR_NAMES, ESTIMATORS
from fastnb._state import (
    adopt_state,
    batch_state,
    combined_in_order,
    expand_classes,
    in_fit_order,
)
from fastnb._statistics import CLASS_COUNT
from fastnb._threads import THREAD_CAP, usable_cpus
from fastnb._validation import (
    check_sample_weight,
    partial_fit_classes,
    unknown_labels_error,
)

if TYPE_CHECKING:
    import dask.dataframe as dd
    from numpy.typing import ArrayLike, NDArray

    from fastnb._base import BaseNB
    from fastnb._typing import MatrixLike

    # What the mixin is mixed into, for the type checker.
    MixedInto = BaseNB
else:
    MixedInto = object

__all__ = list(ESTIMATOR_NAMES)

# How many states one task of the tree reduction combines.
SPLIT_EVERY = 8


def is_dask(value):
    """Whether ``value`` is a Dask collection."""
    return dask.is_dask_collection(value)


def is_frame(value):
    """Whether ``value`` is a Dask DataFrame or Series (partitions, not chunks)."""
    return hasattr(value, "npartitions") and not isinstance(value, da.Array)


def compute(collection):
    """Compute one Dask collection on the current scheduler."""
    (value,) = dask.compute(collection)
    return value


class Blocks:
    """X's blocks of rows, each with all of X's columns, and y's, the
    weights' and the class probabilities' cut alike, as Delayed objects
    (``X``, ``y``, ``sample_weight``, ``class_proba``: lists of one per
    block, None for values not given), with the first row of each block
    when X's chunk sizes are known.

    Dask arrays are cut from their graphs as they are, not each optimised
    on its own (which fuses X's making into y's tasks when y is derived
    from X, so X would be made twice): the blocks they share are computed
    once. A DataFrame's partitions are cut from each collection's own
    optimised graph, which reads only the columns each needs.
    """

    # Set by name in __init__, as X's blocks are cut.
    y: list[Any]
    sample_weight: list[Any]
    class_proba: list[Any]

    def __init__(self, X, y=None, sample_weight=None, class_proba=None):
        X = in_whole_rows(X)
        self.row_chunks = X.chunks[0] if isinstance(X, da.Array) else None
        self.n_blocks = X.numblocks[0] if self.row_chunks else X.npartitions
        self.n_rows = X.shape[0]
        known = self.row_chunks is not None and not any(
            math.isnan(n) for n in self.row_chunks
        )
        self.starts = (
            np.concatenate([[0], np.cumsum(self.row_chunks)[:-1]]).astype(int)
            if known
            else None
        )
        values = {
            "X": X,
            "y": self._aligned(y, "y"),
            "sample_weight": self._aligned(sample_weight, "sample_weight"),
            "class_proba": self._aligned(class_proba, "class_proba", ndim=2),
        }
        arrays = all(isinstance(v, da.Array) for v in values.values() if is_dask(v))
        self.X = blocks_of(values["X"], optimize=not arrays)
        for name in ("y", "sample_weight", "class_proba"):
            value = values[name]
            cut = value if isinstance(value, list) else blocks_of(value, not arrays)
            if len(cut) != len(self.X):
                raise ValueError(
                    f"{name} has {len(cut)} blocks of rows and X {len(self.X)}: a "
                    f"Dask DataFrame's {name} must be partitioned as X."
                )
            setattr(self, name, cut)

    def __len__(self):
        return len(self.X)

    def where(self, index):
        """Where block ``index`` is in X, for error messages."""
        if self.starts is None:
            return (
                f"partition {index} of X (rows are counted from the partition's first)"
            )
        return (
            f"block {index} of X (rows are counted from the block's first, row "
            f"{self.starts[index]} of X)"
        )

    def _aligned(self, values, name, ndim=1):
        """``values`` (y, sample_weight: ``ndim`` 1; class_proba: 2) as a
        Dask collection of X's blocks of rows where they can be, or a list of
        its blocks, one None a block if ``values`` is None."""
        if values is None:
            return [None] * self.n_blocks
        if is_dask(values):
            if isinstance(values, da.Array):
                if values.ndim != ndim:
                    raise ValueError(
                        f"{name} must be {ndim}-D; got a Dask array of shape "
                        f"{values.shape}."
                    )
                if ndim == 2 and values.numblocks[1] != 1:
                    values = values.rechunk({1: -1})
                if (
                    self.starts is not None
                    and not any(math.isnan(n) for n in values.chunks[0])
                    and values.chunks[0] != self.row_chunks
                ):
                    if values.shape[0] != self.n_rows:
                        raise ValueError(
                            "Found input variables with inconsistent numbers of "
                            f"samples: [{self.n_rows}, {values.shape[0]}] (X and "
                            f"{name})."
                        )
                    values = values.rechunk({0: self.row_chunks})
            elif not (is_frame(values) and values.ndim == ndim):
                kinds = "a 1-D Dask array or a Dask Series"
                if ndim == 2:
                    kinds = "a 2-D Dask array or a Dask DataFrame"
                raise TypeError(f"{name} must be {kinds}; got {type(values).__name__}.")
            return values
        if self.starts is None:
            raise TypeError(
                f"{name} must be a Dask collection partitioned as X when X's "
                "partition sizes are unknown."
            )
        values = values if sp.issparse(values) else np.asarray(values)
        if values.ndim != ndim:
            raise ValueError(f"{name} must be {ndim}-D; got shape {values.shape}.")
        if values.shape[0] != self.n_rows:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{self.n_rows}, {values.shape[0] if values.ndim else 1}] (X "
                f"and {name})."
            )
        return [
            dask.delayed(values[start : start + n])
            for start, n in zip(self.starts, self.row_chunks, strict=True)
        ]


def in_whole_rows(X):
    """X, a 2-D Dask array (rechunked so each block holds whole rows) or a
    Dask DataFrame; TypeError or ValueError for anything else."""
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(
                f"Expected a 2-D Dask array for X; got {X.ndim} dimension(s)."
            )
        return X.rechunk({1: -1}) if X.numblocks[1] != 1 else X
    if is_frame(X) and X.ndim == 2:
        return X
    raise TypeError(
        "X must be a 2-D Dask array or a Dask DataFrame when y is a Dask "
        f"collection; got {type(X).__name__}."
    )


def blocks_of(collection, optimize):
    """A Dask array's (rows of) blocks or a DataFrame's partitions as Delayed
    objects, from the collection's graph optimised on its own or as it is."""
    blocks = collection.to_delayed(optimize_graph=optimize)
    if isinstance(collection, da.Array) and collection.ndim == 2:
        return list(blocks[:, 0])
    return list(np.ravel(blocks)) if isinstance(collection, da.Array) else list(blocks)


def task_threads():
    """The threads a task's kernels may use: the usable CPUs shared out among
    the threads that run tasks in this process, so that together they do
    not start more threads than there are CPUs.

    Those threads are a dask.distributed worker's ``nthreads``; outside a
    worker, in a thread other than the main one (the pool of Dask's local
    threaded scheduler), Dask's ``num_workers`` setting, by default one a
    CPU. None (no cap) in the main thread: the synchronous scheduler, or a
    process-based scheduler's processes. (A worker process started by a
    nanny has ``OMP_NUM_THREADS=1`` already, Dask's default.)
    """
    worker = None
    if get_worker is not None:
        try:
            worker = get_worker()
        except ValueError:  # not in a task of a worker
            pass
    if worker is not None:
        n_task_threads = worker.state.nthreads
    elif threading.current_thread() is threading.main_thread():
        return None
    else:
        n_task_threads = dask.config.get("num_workers", None) or CPU_COUNT
    return max(1, usable_cpus() // max(1, n_task_threads))


@contextlib.contextmanager
def task_share():
    """Within the block: the kernels use at most ``task_threads()`` threads."""
    token = THREAD_CAP.set(task_threads())
    try:
        yield
    finally:
        THREAD_CAP.reset(token)


def block_state(model, X, y, sample_weight, class_proba, classes, where, settings):
    """The state of one block of rows (see fastnb._state.batch_state), or None
    for a block without rows; under fastnb's ``settings`` (the client's), its
    kernels on the task's share of the threads (``task_share``)."""
    if X.shape[0] == 0:
        return None
    try:
        with fastnb.config_context(**settings), task_share():
            return batch_state(
                model,
                X,
                y,
                sample_weight,
                class_proba=class_proba,
                classes=classes,
            )
    except ValueError as exc:
        exc.add_note(f"Raised for {where}.")
        raise


def combined(states, settings):
    """The states combined in order, the empty blocks' (None) left out, under
    fastnb's ``settings`` (the client's), on the task's share of the threads."""
    with fastnb.config_context(**settings), task_share():
        return combined_in_order(states)


def soft_classes(classes, class_proba):
    """``(classes, class_proba)`` for a fit on soft labels: the classes of
    class_proba's columns (by default 0 .. n - 1) sorted, its columns in
    their order (fastnb._labels.sorted_classes), without computing it."""
    classes = column_classes(class_proba) if classes is None else classes
    return sorted_classes(classes, class_proba)


def tree_combine(states, settings):
    """One Delayed state combining ``states``, by a tree of SPLIT_EVERY-way tasks."""
    combine = dask.delayed(combined, pure=True)
    while len(states) > 1:
        states = [
            combine(states[i : i + SPLIT_EVERY], settings)
            for i in range(0, len(states), SPLIT_EVERY)
        ]
    return combine(states, settings)


def fitted_blocks_state(model, X, y, sample_weight, class_proba=None, classes=None):
    """The combined state of the blocks of X, y (or class_proba, its columns
    the ``classes``) and sample_weight, computed on the workers; ``model``
    is unfitted (fit) or fitted (partial_fit)."""
    blocks = Blocks(X, y, sample_weight, class_proba)
    sent = dask.delayed(model, traverse=False)
    task = dask.delayed(block_state, pure=True)
    settings = fastnb.get_config()
    states = [
        task(sent, *parts, classes, blocks.where(index), settings)
        for index, parts in enumerate(
            zip(
                blocks.X,
                blocks.y,
                blocks.sample_weight,
                blocks.class_proba,
                strict=True,
            )
        )
    ]
    try:
        state = compute(tree_combine(states, settings))
    except LOST_WORKER_ERRORS as exc:
        exc.add_note(lost_task_note(exc.task, exc.allowed_failures, blocks, states))
        raise
    if state is None:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 "
            f"is required by {type(model).__name__}."
        )
    return state


def lost_task_note(key, allowed_failures, blocks, states):
    """What the task ``key``, whose every worker died while running it, was
    computing for a fit: a note for the error (Dask recomputes a lost task on
    another worker ``allowed_failures`` times, then gives up)."""
    users = [
        index
        for index, state in enumerate(states)
        if key == state.key
        or any(
            part is not None and key in needed_keys(part)
            for part in (
                blocks.X[index],
                blocks.y[index],
                blocks.sample_weight[index],
                blocks.class_proba[index],
            )
        )
    ]
    if len(users) == 1:
        part = blocks.where(users[0])
    elif users:
        listed = ", ".join(str(index) for index in users[:3])
        more = ", ..." if len(users) > 3 else ""
        part = f"blocks {listed}{more} of X ({len(users)} blocks need the task)"
    else:
        part = "the combining of the blocks' statistics"
    return (
        f"Raised for {part}: each of the {allowed_failures + 1} workers that ran "
        f"task {key!r} died while running it (Dask's "
        "distributed.scheduler.allowed-failures is "
        f"{allowed_failures}). No block's statistics were kept: the estimator is "
        "as it was."
    )


def needed_keys(collection):
    """The keys of the tasks that computing ``collection`` runs (its graph
    culled to them: a block cut from an array holds the whole array's graph)."""
    graph = collection.__dask_graph__()
    return graph.cull(set(collection.__dask_keys__())).keys()


def apply_method(X, model, method, cost=None):
    """``model.method(X)`` on one block of rows (an empty one too), on the
    task's share of the threads; ``cost`` (checked) for ``predict``'s."""
    if X.shape[0] == 0:
        shape = (0,) if method == "predict" else (0, len(model.classes_))
        return np.empty(shape, dtype=output_dtype(model, method, X))
    with task_share():
        if cost is not None:
            return model.predict(X, cost=cost)
        return getattr(model, method)(X)


def output_dtype(model, method, X):
    """The dtype of ``model.method(X)``."""
    if method == "predict":
        return model.classes_.dtype
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None:
        kinds = {np.dtype(d).kind if isinstance(d, np.dtype) else "O" for d in dtypes}
        dtype = np.result_type(*dtypes) if kinds <= set("biuf") else np.float64
    else:
        dtype = X.dtype
    return np.dtype(model._output_dtype(np.empty(0, dtype=dtype)))


def block_accuracy(model, X, y, sample_weight):
    """(weight of the rows predicted right, weight of all rows) of one block,
    predicted on the task's share of the threads."""
    if X.shape[0] == 0:
        return 0.0, 0.0
    with task_share():
        right = model.predict(X) == np.asarray(y)
    if sample_weight is None:
        return float(right.sum()), float(len(right))
    weights = check_sample_weight(sample_weight, len(right), allow_all_zero=True)
    return float(weights[right].sum()), float(weights.sum())


class DaskNBMixin(MixedInto):
    """Fit, partial_fit, the predictions and score over Dask collections;
    anything else goes to the fastnb estimator."""

    @unchanged_on_error
    def fit(
        self,
        X: MatrixLike | da.Array | dd.DataFrame,
        y: ArrayLike | da.Array | dd.Series | None = None,
        sample_weight: ArrayLike | da.Array | dd.Series | None = None,
        *,
        class_proba: MatrixLike | da.Array | dd.DataFrame | None = None,
        classes: ArrayLike | None = None,
    ) -> Self:
        if not any(is_dask(v) for v in (X, y, sample_weight, class_proba)):
            return super().fit(
                X,
                y,
                sample_weight=sample_weight,
                class_proba=class_proba,
                classes=classes,
            )
        self._validate_params()
        if class_proba is not None:
            classes, class_proba = soft_classes(classes, class_proba)
        state = fitted_blocks_state(
            clone(self), X, y, sample_weight, class_proba, classes
        )
        if not state.statistics[CLASS_COUNT.name].any():
            raise ValueError("sample_weight is zero for every sample: nothing to fit.")
        adopt_state(self, in_fit_order(self, state))
        self._final_tables()
        return self

    @unchanged_on_error
    def partial_fit(
        self,
        X: MatrixLike | da.Array | dd.DataFrame,
        y: ArrayLike | da.Array | dd.Series | None = None,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | da.Array | dd.Series | None = None,
        *,
        class_proba: MatrixLike | da.Array | dd.DataFrame | None = None,
    ) -> Self:
        if not any(is_dask(v) for v in (X, y, sample_weight, class_proba)):
            return super().partial_fit(
                X,
                y,
                classes=classes,
                sample_weight=sample_weight,
                class_proba=class_proba,
            )
        self._validate_params()
        if hasattr(self, "classes_"):
            self._check_fitted_state()
            partial_fit_classes(self, classes)
            state = fitted_blocks_state(self, X, y, sample_weight, class_proba)
            batch = self._in_fit_order(state.statistics)
            self._set_state(
                self.classes_, self._combine_statistics(self._statistics, batch)
            )
            return self
        classes = partial_fit_classes(self, classes)
        state = fitted_blocks_state(
            clone(self),
            X,
            y,
            sample_weight,
            class_proba,
            None if class_proba is None else classes,
        )
        unknown = np.setdiff1d(state.classes, classes)
        if len(unknown):
            raise unknown_labels_error(unknown, classes)
        state = dataclasses.replace(
            state,
            classes=classes,
            statistics=expand_classes(self, state.statistics, state.classes, classes),
        )
        adopt_state(self, in_fit_order(self, state))
        return self

    def _dask_output(self, method, X, cost=None):
        """``method``'s output for a Dask collection X, as a Dask array
        (``predict``'s by the cost matrix ``cost``, if given)."""
        self._check_fitted_state()
        if cost is not None:
            cost = check_cost(cost, self.classes_)
        sent = dask.delayed(self, traverse=False)
        n_classes = len(self.classes_)
        dtype = output_dtype(self, method, X)
        X = in_whole_rows(X)
        if isinstance(X, da.Array):
            # Its tasks' keys, (token-hash, block's index, ...), say whose
            # method computes which block of rows, as in a lost worker's error.
            token = f"{type(self).__name__}.{method}"
            if method == "predict":
                return X.map_blocks(
                    apply_method,
                    sent,
                    method,
                    cost,
                    token=token,
                    drop_axis=1,
                    dtype=dtype,
                    meta=np.empty((0,), dtype=dtype),
                )
            return X.map_blocks(
                apply_method,
                sent,
                method,
                token=token,
                chunks=(X.chunks[0], (n_classes,)),
                dtype=dtype,
                meta=np.empty((0, 0), dtype=dtype),
            )
        shape = (math.nan,) if method == "predict" else (math.nan, n_classes)
        task = dask.delayed(apply_method, pure=True)
        return da.concatenate(
            [
                da.from_delayed(
                    task(block, sent, method, cost), shape=shape, dtype=dtype
                )
                for block in X.to_delayed()
            ]
        )

    def predict(
        self, X: MatrixLike | da.Array | dd.DataFrame, *, cost: ArrayLike | None = None
    ) -> NDArray[Any] | da.Array:
        if is_dask(X):
            return self._dask_output("predict", X, cost=cost)
        return super().predict(X, cost=cost)

    def predict_proba(
        self, X: MatrixLike | da.Array | dd.DataFrame
    ) -> NDArray[np.floating] | da.Array:
        if is_dask(X):
            return self._dask_output("predict_proba", X)
        return super().predict_proba(X)

    def predict_log_proba(
        self, X: MatrixLike | da.Array | dd.DataFrame
    ) -> NDArray[np.floating] | da.Array:
        if is_dask(X):
            return self._dask_output("predict_log_proba", X)
        return super().predict_log_proba(X)

    def predict_joint_log_proba(
        self, X: MatrixLike | da.Array | dd.DataFrame
    ) -> NDArray[np.floating] | da.Array:
        if is_dask(X):
            return self._dask_output("predict_joint_log_proba", X)
        return super().predict_joint_log_proba(X)

    def score(
        self,
        X: MatrixLike | da.Array | dd.DataFrame,
        y: ArrayLike | da.Array | dd.Series,
        sample_weight: ArrayLike | da.Array | dd.Series | None = None,
    ) -> float:
        if not any(is_dask(v) for v in (X, y, sample_weight)):
            return super().score(X, y, sample_weight=sample_weight)
        self._check_fitted_state()
        blocks = Blocks(X, y, sample_weight)
        sent = dask.delayed(self, traverse=False)
        task = dask.delayed(block_accuracy, pure=True)
        parts = [
            task(sent, X_block, y_block, w_block)
            for X_block, y_block, w_block in zip(
                blocks.X, blocks.y, blocks.sample_weight, strict=True
            )
        ]
        right, total = np.sum(compute(parts), axis=0)
        return float(right / total)


def dask_class(estimator):
    """fastnb.dask's class of a fastnb estimator class: the estimator with
    DaskNBMixin, of the same name."""
    name = estimator.__name__
    doc = f":class:`fastnb.{name}` that also takes Dask collections."
    if estimator._combining:
        doc = f"{doc}\n\n{estimator._combining}"
    namespace = {"__doc__": doc, "__module__": __name__, "__qualname__": name}
    return type(name, (DaskNBMixin, estimator), namespace)


# One class an estimator of the registry.
for _name, _estimator in ESTIMATORS.items():
    globals()[_name] = dask_class(_estimator)
