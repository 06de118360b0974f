# Included by _vectorised.pyx: each stored value's term of the joint log-likelihood
# (explanations).

# ---------------------------------------------------------------------------
# Terms of the joint log-likelihood, one per stored value (fastnb._explain).
# Each is the value's term less the term of a 0 in its place, combined over
# the classes by the columns of a weight matrix that Python folds into the
# tables (a class: one column of the identity; a pair: +1 and -1; every
# class: the identity), so a term of 0 is never stored.  As the scoring
# kernels, they check X's values as they read them and return the first
# row holding a refused one, or -1.
#
# Linear families (count families, Gaussian): v coef[j, m] + v^2
# square_coef[j, m], v the value as counted (binarized or as it is), the
# square only for the Gaussian (`quadratic`; square_coef may be empty
# otherwise).  A value counted as 0 has term 0, even where coef holds -inf
# (x log p is 0 for x = 0).  A model with missing="ignore" passes
# missing_term (n_features, n_out), the term of a NaN (a missing value: its
# feature's term is left out of the score, so it is minus the term of a 0);
# missing_term is empty otherwise, and NaN is refused.
# ---------------------------------------------------------------------------

cdef inline double _linear_term(
    double x,
    double coef,
    double square_coef,
    double threshold,
    bint binarize,
    bint quadratic,
) noexcept nogil:
    """The term of value x for coefficients coef and square_coef (see above)."""
    cdef double v = fastnb_counted(x, threshold, binarize)
    if v == 0.0:
        return 0.0
    if quadratic:
        return v * coef + v * v * square_coef
    return v * coef


def linear_terms_csr(
    const count_t[::1] X_data,
    const index_t[::1] X_indices,
    const index_t[::1] X_indptr,
    const double[:, ::1] coef,
    const double[:, ::1] square_coef,
    const double[:, ::1] missing_term,
    double threshold,
    bint binarize,
    bint quadratic,
    bint non_negative,
    double[:, ::1] out,
    int n_threads,
):
    """out[p, m]: the term of stored value p of CSR X in column m; a task a row.

    Returns the first row with a refused value, or -1.
    """
    cdef Py_ssize_t n_samples = X_indptr.shape[0] - 1
    cdef Py_ssize_t n_out = out.shape[1]
    cdef bint allow_nan = missing_term.shape[0] > 0
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t i, p, m, t
    cdef double x
    for i in prange(
        n_samples,
        nogil=True,
        schedule="dynamic",
        chunksize=ROW_CHUNK,
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        for p in range(X_indptr[i], X_indptr[i + 1]):
            x = X_data[p]
            if fastnb_refused(x, non_negative, allow_nan):
                first_bad[t] = i
                break
            if x != x:
                for m in range(n_out):
                    out[p, m] = missing_term[X_indices[p], m]
                continue
            for m in range(n_out):
                out[p, m] = _linear_term(
                    x, coef[X_indices[p], m],
                    square_coef[X_indices[p], m] if quadratic else 0.0,
                    threshold, binarize, quadratic,
                )
    return first_flagged(first_bad, n_samples)


def linear_terms_dense(
    const count_t[:, :] X,
    const double[:, ::1] coef,
    const double[:, ::1] square_coef,
    const double[:, ::1] missing_term,
    double threshold,
    bint binarize,
    bint quadratic,
    bint non_negative,
    double[:, :, ::1] out,
    int n_threads,
):
    """out[i, j, m]: the term of X[i, j] in column m; a task a row.

    Returns the first row with a refused value, or -1.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t n_out = out.shape[2]
    cdef bint allow_nan = missing_term.shape[0] > 0
    cdef intp_t[::1] first_bad = np.full(n_threads, n_samples, dtype=np.intp)
    cdef Py_ssize_t i, j, m, t
    cdef double x
    for i in prange(
        n_samples,
        nogil=True,
        schedule="dynamic",
        chunksize=ROW_CHUNK,
        num_threads=n_threads,
    ):
        t = threadid()
        if first_bad[t] < n_samples:
            continue
        for j in range(n_features):
            x = X[i, j]
            if fastnb_refused(x, non_negative, allow_nan):
                first_bad[t] = i
                break
            if x != x:
                for m in range(n_out):
                    out[i, j, m] = missing_term[j, m]
                continue
            for m in range(n_out):
                out[i, j, m] = _linear_term(
                    x, coef[j, m], square_coef[j, m] if quadratic else 0.0,
                    threshold, binarize, quadratic,
                )
    return first_flagged(first_bad, n_samples)
