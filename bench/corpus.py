"""Synthetic data for the benchmarks: bag-of-words, dense counts, Gaussian blobs,
categories."""

import numpy as np
import scipy.sparse as sp
from scipy import special

# Probability that a word is drawn through the map shared by all classes rather
# than through its class's own map: the classes overlap on the shared part.
_SHARED_WEIGHT = 0.7
# Fraction of the Zipf ranks that each class's map sends to other words.
_MOVED_FRACTION = 0.5
# Gamma shape of the document lengths (coefficient of variation 1 / sqrt(4)).
_LENGTH_SHAPE = 4.0
# Documents generated at a time, which bounds the size of the temporaries.
_BLOCK = 16384
# Standard deviation of the class means of the Gaussian blobs, per feature.
_MEAN_SPREAD = 0.3
# The blobs' standard deviations are log-uniform between 1 / this and this.
_STD_RANGE = np.sqrt(2.0)
# Dense rows generated at a time, which bounds the size of the temporaries.
_DENSE_BLOCK = 65536
# Gamma shape of the dense counts' Poisson rates (their mean is 1).
_RATE_SHAPE = 2.0
# Fewest and most categories of a categorical feature.
_CATEGORY_RANGE = (2, 50)
# Weight of a class's own category distribution, mixed with the shared one.
_OWN_WEIGHT = 0.5


def make_bag_of_words(
    n_documents=200_000,
    n_features=2**18,
    n_classes=20,
    nnz_per_document=100,
    zipf_a=1.1,
    seed=0,
):
    """Make a labelled bag-of-words corpus with Zipf-distributed words.

    Each document draws a class uniformly, then a negative-binomial number of
    words. Each word is a Zipf rank (exponent `zipf_a`, ranks beyond the
    vocabulary folded back into it modulo `n_features`) turned into a word id
    through either a map shared by all classes or the class's own map, a
    partial permutation of the shared one. The classes thus share their common
    words but differ in a part of their vocabulary, as topics do. The mean
    number of draws is solved for so that, after repeated words are merged,
    documents hold `nnz_per_document` distinct words on average. Each stored
    count is drawn uniformly from 1 to 5.

    Generation is vectorised over blocks of documents; the default corpus
    takes a few seconds.

    Parameters
    ----------
    n_documents : int, default=200_000
        Number of rows.
    n_features : int, default=2**18
        Vocabulary size, the number of columns.
    n_classes : int, default=20
        Number of classes.
    nnz_per_document : float, default=100
        Expected number of distinct words per document. Must be well below
        `n_features`.
    zipf_a : float, default=1.1
        Exponent of the Zipf distribution of word ranks, greater than 1.
    seed : int, default=0
        Seed of the `numpy.random.Generator`; equal seeds give equal corpora.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_documents, n_features)
        Word counts, int64 (as scikit-learn's CountVectorizer makes them)
        with int32 indices, in canonical format (sorted indices, no
        duplicates).
    y : ndarray of shape (n_documents,)
        Class labels, int64 in ``0 .. n_classes - 1``, roughly balanced.

    Notes
    -----
    Ranks are drawn from the exact folded Zipf distribution, whose
    probabilities are Hurwitz zeta values, by inverse transform sampling. This
    is the distribution of ``(rng.zipf(zipf_a) - 1) % n_features``, sampled
    several times faster than with `numpy.random.Generator.zipf`.

    Examples
    --------
    >>> X, y = make_bag_of_words(n_documents=1000, n_features=2**14, seed=1)
    >>> X.shape, X.dtype, X.indices.dtype, y.dtype
    ((1000, 16384), dtype('int64'), dtype('int32'), dtype('int64'))
    >>> bool(95 < X.nnz / X.shape[0] < 105)
    True
    """
    if not 0 < nnz_per_document < n_features / 2:
        raise ValueError("nnz_per_document must be positive and below n_features / 2")
    if not zipf_a > 1:
        raise ValueError("zipf_a must be greater than 1")
    rng = np.random.default_rng(seed)
    rank_pmf = _folded_zipf_pmf(zipf_a, n_features)
    sampler = _RankSampler(rank_pmf)
    maps = _rank_to_word_maps(rng, n_features, n_classes)
    mean_draws = _mean_draws(rank_pmf, maps, nnz_per_document)
    flat_maps = maps.ravel()

    y = rng.integers(0, n_classes, n_documents)
    p_length = _LENGTH_SHAPE / (_LENGTH_SHAPE + mean_draws)
    lengths = rng.negative_binomial(_LENGTH_SHAPE, p_length, n_documents)
    indices, row_nnz = [], []
    for start in range(0, n_documents, _BLOCK):
        block_lengths = lengths[start : start + _BLOCK]
        ranks = sampler.sample(rng, block_lengths.sum())
        # Each draw goes through the shared map (the last row of `maps`) or
        # through the map of its document's class.
        row = np.where(
            rng.random(ranks.size) < _SHARED_WEIGHT,
            n_classes,
            np.repeat(y[start : start + _BLOCK], block_lengths),
        )
        words = flat_maps[row * n_features + ranks]
        indptr = np.concatenate(([0], np.cumsum(block_lengths)))
        block = sp.csr_matrix(
            (np.ones(words.size), words, indptr),
            shape=(block_lengths.size, n_features),
        )
        block.sum_duplicates()
        indices.append(block.indices)
        row_nnz.append(np.diff(block.indptr))
    indptr = np.concatenate(([0], np.cumsum(np.concatenate(row_nnz))))
    indices = np.concatenate(indices)
    data = rng.integers(1, 6, indices.size, dtype=np.int8).astype(np.int64)
    X = sp.csr_matrix((data, indices, indptr), shape=(n_documents, n_features))
    X.has_canonical_format = True  # every block went through sum_duplicates
    return X, y


def make_gaussian_blobs(n_samples=1_000_000, n_features=50, n_classes=10, seed=0):
    """Make labelled dense data, normal within each class, for GaussianNB.

    Each sample draws a class uniformly, then every feature independently
    from a normal distribution whose mean and standard deviation depend on
    both the class and the feature: the model GaussianNB assumes. The class
    means are drawn from N(0, 0.3^2) and the standard deviations
    log-uniformly between 1/sqrt(2) and sqrt(2), so the classes overlap:
    GaussianNB reaches about 87% held-out accuracy on the default data set.

    Generation is vectorised over blocks of rows; the default data set, 400
    MB, takes about two seconds.

    Parameters
    ----------
    n_samples : int, default=1_000_000
        Number of rows.
    n_features : int, default=50
        Number of columns.
    n_classes : int, default=10
        Number of classes.
    seed : int, default=0
        Seed of the `numpy.random.Generator`; equal seeds give equal data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Samples, float64, C-contiguous.
    y : ndarray of shape (n_samples,)
        Class labels, int64 in ``0 .. n_classes - 1``, roughly balanced.

    Examples
    --------
    >>> X, y = make_gaussian_blobs(n_samples=1000, n_features=5, n_classes=3, seed=1)
    >>> X.shape, X.dtype, X.flags.c_contiguous, y.dtype
    ((1000, 5), dtype('float64'), True, dtype('int64'))
    >>> np.bincount(y).tolist()
    [320, 347, 333]
    """
    rng = np.random.default_rng(seed)
    means = rng.normal(0.0, _MEAN_SPREAD, (n_classes, n_features))
    log_range = np.log(_STD_RANGE)
    stds = np.exp(rng.uniform(-log_range, log_range, (n_classes, n_features)))
    y = rng.integers(0, n_classes, n_samples)
    X = np.empty((n_samples, n_features))
    for start in range(0, n_samples, _DENSE_BLOCK):
        block = X[start : start + _DENSE_BLOCK]
        block_y = y[start : start + _DENSE_BLOCK]
        rng.standard_normal(out=block)
        block *= stds[block_y]
        block += means[block_y]
    return X, y


def make_dense_counts(n_samples=500_000, n_features=100, n_classes=5, seed=0):
    """Make labelled dense counts, Poisson within each class, for the count
    families on a dense table (counts of events, histograms).

    Each sample draws a class uniformly, then every feature independently
    from a Poisson distribution whose rate depends on the class and the
    feature, drawn from a gamma distribution of mean 1 (shape 2): about
    40% of the counts are 0, mixed with the others at random, row by row.

    Generation is vectorised over blocks of rows; the default data set, 400
    MB, takes a few seconds.

    Parameters
    ----------
    n_samples : int, default=500_000
        Number of rows.
    n_features : int, default=100
        Number of columns.
    n_classes : int, default=5
        Number of classes.
    seed : int, default=0
        Seed of the `numpy.random.Generator`; equal seeds give equal data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Counts, float64 (whole numbers), C-contiguous.
    y : ndarray of shape (n_samples,)
        Class labels, int64 in ``0 .. n_classes - 1``, roughly balanced.

    Examples
    --------
    >>> X, y = make_dense_counts(n_samples=1000, n_features=5, n_classes=3, seed=1)
    >>> X.shape, X.dtype, X.flags.c_contiguous, y.dtype
    ((1000, 5), dtype('float64'), True, dtype('int64'))
    >>> bool((X == np.round(X)).all() and (X >= 0).all())
    True
    """
    rng = np.random.default_rng(seed)
    rates = rng.gamma(_RATE_SHAPE, 1.0 / _RATE_SHAPE, (n_classes, n_features))
    y = rng.integers(0, n_classes, n_samples)
    X = np.empty((n_samples, n_features))
    for start in range(0, n_samples, _DENSE_BLOCK):
        block_y = y[start : start + _DENSE_BLOCK]
        X[start : start + _DENSE_BLOCK] = rng.poisson(rates[block_y])
    return X, y


def make_categorical(n_samples=1_000_000, n_features=20, n_classes=5, seed=0):
    """Make labelled category codes, with class-dependent distributions.

    Feature j has ``n_j`` categories, coded ``0 .. n_j - 1``, the ``n_j``
    spread evenly from 2 to 50 over the features (``np.linspace(2, 50,
    n_features)`` rounded). Each sample draws a class uniformly, then every
    feature independently from its class's category distribution: the model
    CategoricalNB assumes. That distribution is an even mix of one shared by
    all classes and the class's own, both drawn from the flat Dirichlet
    distribution over the feature's categories, so the classes overlap:
    CategoricalNB reaches about 81% held-out accuracy on the default data set.

    Generation is vectorised over blocks of rows; the default data set, 160
    MB, takes about two seconds.

    Parameters
    ----------
    n_samples : int, default=1_000_000
        Number of rows.
    n_features : int, default=20
        Number of columns.
    n_classes : int, default=5
        Number of classes.
    seed : int, default=0
        Seed of the `numpy.random.Generator`; equal seeds give equal data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Category codes, int64, C-contiguous; column j holds codes below
        ``n_j``. A category of low probability may not occur in a small
        data set.
    y : ndarray of shape (n_samples,)
        Class labels, int64 in ``0 .. n_classes - 1``, roughly balanced.

    Examples
    --------
    >>> X, y = make_categorical(n_samples=1000, n_features=4, n_classes=3, seed=1)
    >>> X.shape, X.dtype, X.flags.c_contiguous, y.dtype
    ((1000, 4), dtype('int64'), True, dtype('int64'))
    >>> (X.max(axis=0) + 1).tolist()
    [2, 18, 34, 50]
    >>> np.bincount(y).tolist()
    [330, 303, 367]
    """
    rng = np.random.default_rng(seed)
    n_categories = np.linspace(*_CATEGORY_RANGE, n_features).round().astype(np.int64)
    cdfs = []  # per feature, the cumulative distributions of the classes
    for n in n_categories:
        shared = rng.dirichlet(np.ones(n))
        own = rng.dirichlet(np.ones(n), size=n_classes)
        cdf = np.cumsum((1 - _OWN_WEIGHT) * shared + _OWN_WEIGHT * own, axis=1)
        cdf[:, -1] = 1.0
        cdfs.append(cdf)
    # The cumulative distribution of (class c, feature j) is shifted up by its
    # group number g = c * n_features + j, and all of them are concatenated in
    # the order of g, so that one sorted array serves every group.
    shifted = np.concatenate(
        [
            cdfs[j][c] + (c * n_features + j)
            for c in range(n_classes)
            for j in range(n_features)
        ]
    )
    group_start = np.concatenate(([0], np.cumsum(np.tile(n_categories, n_classes))))
    y = rng.integers(0, n_classes, n_samples)
    X = np.empty((n_samples, n_features), dtype=np.int64)
    for start in range(0, n_samples, _DENSE_BLOCK):
        group = y[start : start + _DENSE_BLOCK, np.newaxis] * n_features
        group = group + np.arange(n_features)
        # Inverse transform sampling: the code is the number of the group's
        # cumulative probabilities at or below a uniform variate.
        u = rng.random(group.shape)
        u += group
        codes = np.searchsorted(shifted, u, side="right")
        codes -= group_start[group]
        # Rounding in u + g can reach the next group; such a code is the last.
        np.minimum(codes, n_categories - 1, out=codes)
        X[start : start + _DENSE_BLOCK] = codes
    return X, y


# Adult's shape (UCI census income): 32,561 training and 16,281 test rows,
# two classes (24% earn over $50K), six numeric columns (age, fnlwgt,
# education-num, capital-gain, capital-loss, hours-per-week: their means and
# standard deviations in the training file) and eight categorical ones
# (workclass, education, marital-status, occupation, relationship, race,
# sex, native-country: their numbers of categories, a recorded "?" one).
ADULT_ROWS = (32_561, 16_281)
ADULT_POSITIVE = 0.24
ADULT_NUMERIC_MOMENTS = (
    (38.6, 13.6),
    (189_778.0, 105_550.0),
    (10.1, 2.6),
    (1_078.0, 7_385.0),
    (87.3, 403.0),
    (40.4, 12.3),
)
ADULT_CATEGORIES = (9, 16, 7, 15, 6, 5, 2, 42)


def make_adult_like(seed=0):
    """Make data of Adult's shape and types, in the layout of the peer
    mixed-naive-bayes: one float64 matrix, the numeric columns first.

    Each numeric column is normal around Adult's mean and standard
    deviation, shifted by a quarter of a deviation in the positive class;
    each categorical one holds codes from a distribution per class, as
    make_categorical draws them.

    Returns
    -------
    X_train, y_train, X_test, y_test
        X: float64 (rows, 14), C-contiguous, columns 0-5 numeric, 6-13 codes
        ``0 .. n - 1``; y: int64 labels 0 and 1.

    Examples
    --------
    >>> X_train, y_train, X_test, y_test = make_adult_like()
    >>> X_train.shape, X_test.shape, X_train.dtype
    ((32561, 14), (16281, 14), dtype('float64'))
    >>> (X_train[:, 6:].max(axis=0) + 1).astype(int).tolist()
    [9, 16, 7, 15, 6, 5, 2, 42]
    """
    rng = np.random.default_rng(seed)
    n_rows = sum(ADULT_ROWS)
    y = (rng.random(n_rows) < ADULT_POSITIVE).astype(np.int64)
    means, stds = np.array(ADULT_NUMERIC_MOMENTS).T
    numeric = rng.standard_normal((n_rows, len(means)))
    numeric += 0.25 * y[:, np.newaxis]
    numeric *= stds
    numeric += means
    codes = []
    for n in ADULT_CATEGORIES:
        distributions = rng.dirichlet(np.ones(n), size=2)
        cdf = np.cumsum(distributions, axis=1)
        cdf[:, -1] = 1.0
        u = rng.random(n_rows)
        column = np.where(
            y == 1,
            np.searchsorted(cdf[1], u, side="right"),
            np.searchsorted(cdf[0], u, side="right"),
        )
        codes.append(np.minimum(column, n - 1))
    X = np.ascontiguousarray(np.column_stack([numeric, *codes]), dtype=np.float64)
    train = ADULT_ROWS[0]
    return X[:train], y[:train], X[train:], y[train:]


def _folded_zipf_pmf(a, n):
    """Probabilities of the ranks ``0 .. n - 1`` of a Zipf(a) value folded mod n."""
    # Rank r collects the values r + 1 + m * n for m = 0, 1, ..., whose weights
    # sum to n**-a * zeta(a, (r + 1) / n), a Hurwitz zeta function.
    pmf = special.zeta(a, np.arange(1, n + 1) / n)
    return pmf / pmf.sum()


class _RankSampler:
    """Inverse transform sampling of ranks, the search started from a guide table.

    Uniform variates are 53-bit integers and the cumulative probabilities are
    scaled to match, so the search is exact. A variate's top bits pick a bucket
    of the guide table, which holds the first rank whose cumulative probability
    passes the bucket's start; a few more steps, rarely more than one, finish.
    """

    _BITS = 53

    def __init__(self, pmf):
        cdf = np.cumsum(pmf)
        scaled = np.ldexp(cdf / cdf[-1], self._BITS)
        self.cdf = np.ceil(scaled).astype(np.int64)
        # At least 4 buckets per rank, a power of two so that buckets are bit
        # prefixes of the variates.
        guide_bits = (4 * pmf.size - 1).bit_length()
        self.shift = self._BITS - guide_bits
        starts = np.arange(1 << guide_bits, dtype=np.int64) << self.shift
        self.guide = np.searchsorted(self.cdf, starts, side="right").astype(np.int32)

    def sample(self, rng, size):
        """Draw `size` ranks, an int32 array."""
        u = rng.integers(0, 1 << self._BITS, size)
        ranks = self.guide[u >> self.shift]
        todo = np.flatnonzero(self.cdf[ranks] <= u)
        while todo.size:
            ranks[todo] += 1
            todo = todo[self.cdf[ranks[todo]] <= u[todo]]
        return ranks


def _rank_to_word_maps(rng, n_features, n_classes):
    """Rank-to-word maps: one per class, then the shared map as the last row.

    A class's map is the shared map with a random `_MOVED_FRACTION` of its
    ranks shuffled among themselves, so that each class has its own frequent
    words.
    """
    shared = rng.permutation(n_features).astype(np.int32)
    maps = np.tile(shared, (n_classes + 1, 1))
    n_moved = int(_MOVED_FRACTION * n_features)
    for row in maps[:-1]:
        moved = rng.choice(n_features, n_moved, replace=False)
        row[moved] = shared[rng.permutation(moved)]
    return maps


def _mean_draws(rank_pmf, maps, nnz_per_document):
    """Mean document length, in draws, giving the wanted mean of distinct words."""
    word_pmf = np.empty(maps.shape)
    np.put_along_axis(word_pmf, maps, rank_pmf[np.newaxis, :], axis=1)
    q = _SHARED_WEIGHT * word_pmf[-1] + (1 - _SHARED_WEIGHT) * word_pmf[:-1]
    # With a gamma-Poisson length of mean m and shape k, word w is absent with
    # probability (1 + m q_w / k)**-k. The expected number of distinct words,
    # averaged over the classes, is increasing and concave in m, so Newton's
    # method started below the root climbs to it monotonically.
    k = _LENGTH_SHAPE
    m = float(nnz_per_document)
    for _ in range(50):
        base = 1 + m * q / k
        absent = base**-k
        distinct = (1 - absent).sum(axis=1).mean()
        slope = (q * absent / base).sum(axis=1).mean()
        step = (nnz_per_document - distinct) / slope
        m += step
        if step < 1e-6 * m:
            break
    return m


def make_sparse_categorical(
    n_samples=1_000_000, n_features=200, n_classes=5, density=0.05, seed=0
):
    """Make labelled sparse category codes: code 0 unless stored, as hashed data.

    Each sample draws a class uniformly, then about ``density * n_features``
    features to store (a fifth of the draws from its class's own block of
    features, the rest from all; repeats are dropped), each with a code
    from 1 to 8: with probability one half ``1 + (class + feature) % 8``,
    else any. Everything else is code 0.

    Parameters
    ----------
    n_samples : int, default=1_000_000
        Number of rows.
    n_features : int, default=200
        Number of columns.
    n_classes : int, default=5
        Number of classes.
    density : float, default=0.05
        Share of the codes stored (before repeated features are dropped).
    seed : int, default=0
        Seed of the `numpy.random.Generator`; equal seeds give equal data.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Category codes 1 to 8 where stored, int32, int32 indices, canonical.
    y : ndarray of shape (n_samples,)
        Class labels, int64 in ``0 .. n_classes - 1``, roughly balanced.

    Examples
    --------
    >>> X, y = make_sparse_categorical(n_samples=1000, n_features=50, seed=1)
    >>> X.shape, X.dtype, X.has_canonical_format, int(X.data.min()), int(X.data.max())
    ((1000, 50), dtype('int32'), True, 1, 8)
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n_samples)
    per_row = rng.binomial(n_features, density, n_samples)
    rows = np.repeat(np.arange(n_samples), per_row)
    columns = rng.integers(0, n_features, rows.size)
    block = max(1, n_features // n_classes)
    own = rng.random(rows.size) < 0.2
    columns[own] = (y[rows[own]] * block + rng.integers(0, block, own.sum())) % (
        n_features
    )
    # One value per (row, feature): the first draw of each pair.
    _, first = np.unique(rows * n_features + columns, return_index=True)
    rows, columns = rows[first], columns[first]
    favourite = 1 + (y[rows] + columns) % 8
    anything = rng.integers(1, 9, rows.size)
    codes = np.where(rng.random(rows.size) < 0.5, favourite, anything)
    X = sp.csr_matrix(
        (codes.astype(np.int32), (rows, columns)), shape=(n_samples, n_features)
    )
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    X.sort_indices()
    return X, y
