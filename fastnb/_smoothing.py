"""Smoothing rules as small pure functions.

Every rule turns counts into probabilities by adding pseudo-counts:

* additive (Lidstone) smoothing, ``alpha`` virtual occurrences of every
  value, ``P(a | c) = (n_ac + alpha) / (n_c + alpha * V)`` over V values;
  ``alpha = 1`` is Laplace's add-one rule. ``alpha`` is a scalar or one
  value per feature.
* the m-estimate, :class:`MEstimate`, ``m`` virtual examples spread over
  the values by a prior ``p``: ``P(a | c) = (n_ac + m p_a) / (n_c + m)``.

Lidstone is the m-estimate with ``m = alpha * V`` and a uniform prior.
"""

from __future__ import annotations

import warnings
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

ALPHA_FLOOR = 1e-10


class MEstimate:
    """The m-estimate of a probability: ``(n_ac + m p_a) / (n_c + m)``.

    Pass it as ``alpha`` to :class:`~fastnb.MultinomialNB`,
    :class:`~fastnb.BernoulliNB` or :class:`~fastnb.CategoricalNB`: ``m``
    virtual examples are spread over the values of a feature in the
    proportions ``prior``.

    Parameters
    ----------
    m : float or array-like of shape (n_features,)
        Weight of the prior, in examples; one value, or one per feature
        (BernoulliNB and CategoricalNB).
    prior : None or array-like, default=None
        The prior ``p``; None means uniform over the values. Its shape
        depends on the model:

        - MultinomialNB: (n_features,), a distribution over the features;
        - BernoulliNB: (n_features,), the prior probability that each
          feature is on;
        - CategoricalNB: a list with, for each feature, the probabilities
          of its categories (codes ``0 .. n_categories_[i] - 1``).

    Examples
    --------
    >>> import numpy as np
    >>> from fastnb import BernoulliNB, MEstimate
    >>> X = np.array([[1, 0], [1, 1], [0, 0], [0, 1]])
    >>> y = [0, 0, 1, 1]
    >>> lidstone = BernoulliNB(alpha=0.5).fit(X, y)
    >>> m_estimate = BernoulliNB(alpha=MEstimate(m=1.0, prior=[0.5, 0.5])).fit(X, y)
    >>> bool(np.allclose(lidstone.feature_log_prob_, m_estimate.feature_log_prob_))
    True
    """

    def __init__(self, m: float | ArrayLike, prior: ArrayLike | None = None) -> None:
        self.m = m
        self.prior = prior

    def __repr__(self):
        return f"MEstimate(m={self.m!r}, prior={self.prior!r})"

    def __eq__(self, other):
        return (
            isinstance(other, MEstimate)
            and np.array_equal(self.m, other.m)
            and _same_prior(self.prior, other.prior)
        )

    def __hash__(self):
        # Equal m-estimates hash alike (__eq__ compares values).
        return hash((_frozen(self.m), _frozen(self.prior)))


def _frozen(value):
    """A hashable copy of a number, an array or a list of them: nested tuples.

    An array and a list of the same numbers freeze alike, as they compare.
    """
    if value is None:
        return None
    if np.ndim(value) == 0:
        return float(value)
    return tuple(_frozen(item) for item in value)


def _same_prior(a, b):
    if a is None or b is None:
        return a is b
    if isinstance(a, list) or isinstance(b, list):
        return len(a) == len(b) and all(
            np.array_equal(x, y) for x, y in zip(a, b, strict=True)
        )
    return np.array_equal(a, b)


def check_m(estimate, n_features):
    """Return the m-estimate weight as a float or an (n_features,) array."""
    m = estimate.m
    if isinstance(m, Real):
        if not np.isfinite(m) or m < 0:
            raise ValueError(f"MEstimate m must be finite and >= 0, got {m!r}.")
        return float(m)
    m = np.asarray(m, dtype=np.float64)
    if m.shape != (n_features,):
        raise ValueError(
            f"MEstimate m must be a number or have one value per feature "
            f"({n_features}); got shape {m.shape}."
        )
    if not np.isfinite(m).all() or (m < 0).any():
        raise ValueError("All values of MEstimate m must be finite and >= 0.")
    return m


def check_probabilities(prior, shape, what):
    """Return ``prior`` as a float64 array of the given shape with entries in [0, 1]."""
    try:
        prior = np.asarray(prior, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"MEstimate prior ({what}) must be numeric.") from exc
    if prior.shape != shape:
        raise ValueError(
            f"MEstimate prior ({what}) must have shape {shape}; got {prior.shape}."
        )
    if not np.isfinite(prior).all() or (prior < 0).any() or (prior > 1).any():
        raise ValueError(f"MEstimate prior ({what}) must hold probabilities in [0, 1].")
    return prior


def check_alpha(alpha, n_features, force_alpha):
    """Return the additive smoothing parameter, checked against the features.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,)
        Non-negative pseudo-count(s).
    n_features : int
        Number of features the model was fitted on.
    force_alpha : bool
        If False, values below 1e-10 are raised to 1e-10 (with a warning) so
        that unseen events never get probability zero.

    Returns
    -------
    alpha : float or ndarray of shape (n_features,)
    """
    if not isinstance(alpha, Real):
        alpha = np.asarray(alpha, dtype=np.float64)
        if alpha.shape != (n_features,):
            got = (
                f"{alpha.shape[0]} elements"
                if alpha.ndim == 1
                else f"an array of shape {alpha.shape}"
            )
            raise ValueError(
                "When alpha is an array, it should contains `n_features`. "
                f"Got {got} instead of {n_features}."
            )
        bad = np.flatnonzero(~np.isfinite(alpha) | (alpha < 0))
        if len(bad):
            raise ValueError(
                "All values in alpha must be greater than 0. Got "
                f"{float(alpha[bad[0]])!r} for feature {bad[0]}; each value must be "
                "finite and >= 0."
            )
    lowest = alpha if isinstance(alpha, Real) else alpha.min()
    if lowest < ALPHA_FLOOR and not force_alpha:
        warnings.warn(
            f"alpha too small will result in numeric errors, setting alpha = "
            f"{ALPHA_FLOOR:.1e}. Use `force_alpha=True` to keep alpha unchanged.",
            UserWarning,
            stacklevel=3,
        )
        return np.maximum(alpha, ALPHA_FLOOR)
    return alpha


def pseudo_counts(alpha, uniform):
    """The pseudo-count of each value and their total, for a checked ``alpha``.

    ``uniform`` is each value's share under a uniform prior (1 / V for V
    values). Additive smoothing adds ``alpha`` to every value (in all
    ``alpha V``); the m-estimate adds ``m p``, with p the prior or else
    ``uniform`` (in all ``m``).
    """
    if isinstance(alpha, MEstimate):
        share = uniform if alpha.prior is None else alpha.prior
        return alpha.m * share, alpha.m
    return alpha, alpha / uniform


def check_smoothing(alpha, n_features, force_alpha, prior_shape):
    """Return ``alpha`` checked: additive pseudo-counts, or a checked MEstimate.

    ``prior_shape`` is the shape the model needs for an m-estimate prior: a
    tuple, or for CategoricalNB the number of categories of each feature
    (an int array), whose prior is a list of one array per feature. The
    returned MEstimate has ``m`` as a float or (n_features,) array and
    ``prior`` as None (uniform), an array, or a list of arrays.
    """
    if not isinstance(alpha, MEstimate):
        return check_alpha(alpha, n_features, force_alpha)
    m = check_m(alpha, n_features)
    if alpha.prior is None:
        return MEstimate(m)
    if isinstance(prior_shape, np.ndarray):
        if len(alpha.prior) != len(prior_shape):
            raise ValueError(
                f"MEstimate prior must be a list with one array per feature "
                f"({len(prior_shape)}); got {len(alpha.prior)}."
            )
        prior = [
            check_probabilities(p, (n,), f"feature {j}")
            for j, (p, n) in enumerate(
                zip(alpha.prior, prior_shape.tolist(), strict=True)
            )
        ]
    else:
        prior = check_probabilities(alpha.prior, prior_shape, "per feature")
    return MEstimate(m, prior)
