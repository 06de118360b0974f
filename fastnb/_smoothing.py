"""Smoothing rules as small pure functions.

Additive (Lidstone) smoothing adds ``alpha`` virtual occurrences to every
count; ``alpha = 1`` is Laplace's add-one rule. ``alpha`` may be a scalar or
one value per feature.
"""

import warnings
from numbers import Real

import numpy as np

ALPHA_FLOOR = 1e-10


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
            raise ValueError(
                "When alpha is an array, it should contain n_features "
                f"({n_features}) values; got shape {alpha.shape}."
            )
        if not np.isfinite(alpha).all() or (alpha < 0).any():
            raise ValueError("All values in alpha must be finite and >= 0.")
    if np.min(alpha) < ALPHA_FLOOR and not force_alpha:
        warnings.warn(
            f"alpha too small will result in numeric errors, setting alpha = "
            f"{ALPHA_FLOOR:.1e}. Use `force_alpha=True` to keep alpha unchanged.",
            UserWarning,
            stacklevel=3,
        )
        return np.maximum(alpha, ALPHA_FLOOR)
    return alpha
