"""Text vectorizers with scikit-learn's output, analyzed in compiled code on
every core: :class:`CountVectorizer`, :class:`HashingVectorizer` and
:class:`TfidfVectorizer`.

Each is scikit-learn's class (a subclass of it: the same parameters,
attributes, methods and checks, in Pipelines, ``clone``, ``set_output`` and
``GridSearchCV``), whose analysis of the documents (tokens, stop words,
n-grams, counting or hashing) runs natively for the settings users set:

- ``analyzer`` "word", "char" or "char_wb";
- for "word", no ``tokenizer`` and ``token_pattern`` scikit-learn's default
  ``(?u)\\b\\w\\w+\\b`` or ``(?u)\\b\\w+\\b``;
- no ``preprocessor``, and ``strip_accents`` None, "ascii" or "unicode".

Any other setting (a callable analyzer, tokenizer, preprocessor or
strip_accents, another token pattern) takes scikit-learn's own code path,
so every setting scikit-learn takes is taken, with its result.

The native path gives scikit-learn's output exactly: each document is
decoded, lowercased and stripped of accents in Python, by scikit-learn's
own functions (``str.lower()``'s full mapping, NFKD), then read as UTF-8;
a word character is one Python's ``re`` takes for ``\\w`` and whitespace
one it takes for ``\\s``, read from the running Python once. The terms are
counted a run of documents a thread, and the threads' vocabularies added in
the documents' order, so the output does not depend on the number of
threads. The matrix is scikit-learn's, array for array (its indices in
the order scikit-learn leaves them: a fitted CountVectorizer's each row's
terms in the order the vocabulary first met them, not sorted), the kind of
sparse container as scikit-learn's ``sparse_interface`` setting says. A
document that has no UTF-8 form (a lone surrogate) is read as Python's
"surrogatepass" encodes it, its terms as scikit-learn makes them.

Documents come as scikit-learn takes them (``input`` "content", "file" or
"filename"; str or bytes; a list, a generator, a NumPy array of strings, a
pandas Series); an iterator is read in batches of ``BATCH_DOCUMENTS``.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
import warnings
import weakref
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.base import _fit_context
from sklearn.feature_extraction import text as _text
from sklearn.preprocessing import normalize

from fastnb._frames import string_chunks, utf8_buffers
from fastnb._simd import kernels as _kernels
from fastnb._threads import effective_n_threads

__all__ = ["CountVectorizer", "HashingVectorizer", "TfidfVectorizer"]

# The token patterns analyzed natively, and a token's least code points:
# (?u)\b\w\w+\b's tokens are the runs of word characters of two or more,
# (?u)\b\w+\b's every run.
NATIVE_PATTERNS = {r"(?u)\b\w\w+\b": 2, r"(?u)\b\w+\b": 1}
ANALYZERS = {"word": 0, "char": 1, "char_wb": 2}
# What text_analyze does with a term (fastnb/_text.h).
COUNT, LOOKUP, HASH = 0, 1, 2
# Documents read at a time from an iterator.
BATCH_DOCUMENTS = 8192
CODE_POINTS = 0x110000
PLANE = 0x10000


def _bitmap(pattern):
    """A bit a code point: whether Python's re matches ``pattern`` (a
    character class) there, little-endian bits in bytes. Made a plane of
    code points at a time: the whole range as one str took 35 MB."""
    runs = re.compile(pattern + "+")
    bits = np.zeros(CODE_POINTS, dtype=bool)
    for start in range(0, CODE_POINTS, PLANE):
        points = np.arange(start, start + PLANE, dtype="<u4")
        text = points.tobytes().decode("utf-32-le", "surrogatepass")
        for match in runs.finditer(text):
            bits[start + match.start() : start + match.end()] = True
    return np.packbits(bits, bitorder="little")


_CLASSES: dict[str, np.ndarray] = {}


def character_classes():
    """``(word, space)``: the bitmaps of Python's ``\\w`` and ``\\s`` in this
    Python (its Unicode database), made once (about 20 ms)."""
    if not _CLASSES:
        _CLASSES["word"] = _bitmap(r"\w")
        _CLASSES["space"] = _bitmap(r"\s")
    return _CLASSES["word"], _CLASSES["space"]


def utf8_terms(terms):
    """Terms (str) as ``(bytes as uint8, starts)`` for text_vocabulary, each
    encoded as Python's "surrogatepass" encodes it."""
    encoded = [term.encode("utf-8", "surrogatepass") for term in terms]
    starts = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(term) for term in encoded], out=starts[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), starts


def refuse_a_str(raw_documents):
    """scikit-learn's error for one str where documents are expected."""
    if isinstance(raw_documents, str):
        raise ValueError(
            "Iterable over raw text documents expected, string object received."
        )


def batches(raw_documents):
    """An iterable of documents as batches: lists of at most
    BATCH_DOCUMENTS (a list or tuple in one batch); a string column of
    Arrow (pyarrow, or polars through Arrow, with no null) as slices of
    its Arrow arrays (fastnb._frames.string_chunks), whose UTF-8 is read
    where the column holds it."""
    columns = string_chunks(raw_documents)
    if columns is not None:
        for column in columns:
            for start in range(0, len(column), BATCH_DOCUMENTS):
                yield column.slice(start, BATCH_DOCUMENTS)
        return
    if isinstance(raw_documents, list | tuple):
        yield list(raw_documents)
        return
    if type(raw_documents).__module__.startswith("pyarrow"):
        # (Other pyarrow columns: their values, as scikit-learn would fail
        # on the scalars iterating gives.)
        raw_documents = raw_documents.to_pylist()
    iterator = iter(raw_documents)
    while batch := list(itertools.islice(iterator, BATCH_DOCUMENTS)):
        yield batch


class _NativeAnalysis:
    """What the three vectorizers share: whether the native path takes the
    settings, and the documents prepared for it."""

    def _native_settings(self):
        """The settings of the native analysis, or None to take
        scikit-learn's path: ``(analyzer, min_chars, stop_words)``."""
        analyzer = self.analyzer
        if not isinstance(analyzer, str) or analyzer not in ANALYZERS:
            return None
        if self.preprocessor is not None or self.strip_accents not in (
            None,
            "ascii",
            "unicode",
        ):
            return None
        min_n, max_n = self.ngram_range
        if not (
            isinstance(min_n, Integral) and isinstance(max_n, Integral) and 1 <= min_n
        ):
            return None
        if analyzer != "word":
            return ANALYZERS[analyzer], 1, None
        if self.tokenizer is not None or self.token_pattern not in NATIVE_PATTERNS:
            return None
        stop_words = self.get_stop_words()
        if stop_words:
            stop_words = _kernels.text_vocabulary(*utf8_terms(stop_words))
        return (
            ANALYZERS["word"],
            NATIVE_PATTERNS[self.token_pattern],
            stop_words or None,
        )

    def _analyze_natively(self, raw_documents, settings, action, **kinds):
        """Entries of each batch of documents, as text_analyze gives them:
        a list of ``(doc_ptr, keys, values)``. The documents are decoded
        and preprocessed by scikit-learn's own functions first (with their
        errors); its analyzer is built first too, for its checks and
        warnings."""
        analyze = self.build_analyzer()
        analyzer, min_chars, stop_words = settings
        word, space = character_classes()
        min_n, max_n = self.ngram_range
        parts = []
        for batch in batches(raw_documents):
            if isinstance(batch, list):
                documents, lower = self._preprocessed(batch, analyze)
                size = sum(map(len, documents))
            else:
                documents, lower = self._preprocessed_utf8(batch, analyze)
                size = len(documents[0])
            doc_ptr, entries, surrogates = _kernels.text_analyze(
                documents,
                lower,
                analyzer,
                action,
                min_chars,
                min_n,
                max_n,
                word,
                space,
                stop_words,
                kinds.get("fixed"),
                kinds.get("fixed_index", np.empty(0, dtype=np.int64)),
                kinds.get("n_features", 0),
                kinds.get("alternate_sign", False),
                kinds.get("vocabulary"),
                effective_n_threads(size),
            )
            if surrogates and action == HASH:
                # scikit-learn hashes a term's UTF-8, which a lone surrogate
                # has not: its error, where a term holds one.
                for place in surrogates:
                    for term in analyze(batch[place]):
                        term.encode("utf-8")
            parts.append((doc_ptr, entries))
        return parts

    def _preprocessed(self, batch, analyze):
        """Raw documents as scikit-learn's analyzer preprocesses them
        (decoded, lowercased, stripped of accents), each a str, and a flag
        a document to lowercase it natively (or an empty array); a document
        of another type raises the error ``analyze`` raises for it.

        str contents take a quicker path: a document of ASCII is lowercased
        by the kernels, in parallel (A-Z to a-z, all that str.lower() does
        to ASCII), with no copy made here; another by str.lower(). (Accents
        stripped by "unicode" take one too: see strip_accents_unicode.)
        """
        lower = self.lowercase
        if (
            self.input == "content"
            and self.strip_accents is None
            and all(type(raw) is str for raw in batch)
        ):
            if not lower:
                return list(batch), np.empty(0, dtype=np.uint8)
            ascii_only = np.fromiter(
                (raw.isascii() for raw in batch), dtype=np.uint8, count=len(batch)
            )
            documents = [
                raw if plain else raw.lower()
                for raw, plain in zip(batch, ascii_only.tolist(), strict=True)
            ]
            return documents, ascii_only
        accents = {
            None: None,
            "ascii": _text.strip_accents_ascii,
            "unicode": strip_accents_unicode,
        }[self.strip_accents]
        documents = []
        for raw in batch:
            document = self.decode(raw)
            if lower and isinstance(document, str):
                document = document.lower()
            if accents is not None and isinstance(document, str):
                document = accents(document)
            if not isinstance(document, str):
                # scikit-learn's own error for it.
                analyze(raw)
                raise TypeError(
                    f"a document must be str or bytes; got {type(raw).__name__}"
                )
            documents.append(document)
        return documents, np.empty(0, dtype=np.uint8)

    def _preprocessed_utf8(self, column, analyze):
        """An Arrow string column's documents as text_analyze takes them,
        and the flags to lowercase them natively (as _preprocessed): read
        from the column's UTF-8, but for a document of other than ASCII to
        lowercase (str.lower()'s, from its str). Settings that do more to a
        document (strip_accents, another input) take its values."""
        if self.input != "content" or self.strip_accents is not None:
            return self._preprocessed(column.to_pylist(), analyze)
        data, offsets = utf8_buffers(column)
        if not self.lowercase:
            return (data, offsets, {}), np.empty(0, dtype=np.uint8)
        # The documents that hold a byte past ASCII (few bytes, in most
        # text): each such byte's document, by where the documents start.
        start, stop = offsets[0], offsets[-1]
        high = np.flatnonzero(data[start:stop] >= 0x80) + start
        others = np.unique(np.searchsorted(offsets, high, side="right") - 1)
        ascii_only = np.ones(len(offsets) - 1, dtype=np.uint8)
        ascii_only[others] = 0
        lowered = [text.lower() for text in column.take(others).to_pylist()]
        return (
            data,
            offsets,
            dict(zip(others.tolist(), lowered, strict=True)),
        ), ascii_only


_COMBINING: dict[int, None] = {}


def strip_accents_unicode(text):
    """scikit-learn's strip_accents_unicode, the same str: NFKD, then each
    combining character left out, by a table of them (str.translate) where
    scikit-learn joins the others one by one in Python."""
    if text.isascii():
        return text
    if not _COMBINING:
        _COMBINING.update(
            (point, None)
            for point in range(CODE_POINTS)
            if unicodedata.combining(chr(point))
        )
    return unicodedata.normalize("NFKD", text).translate(_COMBINING)


def joined_entries(parts):
    """One ``(indptr, entries)`` of the batches' entries."""
    if not parts:
        return np.zeros(1, dtype=np.int64), np.empty(0, dtype=np.uint64)
    if len(parts) == 1:
        return parts[0]
    ends = np.cumsum([0] + [ptr[-1] for ptr, _ in parts])
    indptr = np.concatenate(
        [[0]] + [ptr[1:] + end for (ptr, _), end in zip(parts, ends[:-1], strict=True)]
    )
    return indptr, np.concatenate([entries for _, entries in parts])


def keys_and_values(entries):
    """The keys and values of text_analyze's entries (views, int32: its key
    is the high half of an entry, its value the low one, on the
    little-endian machines fastnb is built for)."""
    halves = entries.view(np.int32).reshape(-1, 2)
    return halves[:, 1], halves[:, 0]


def entries_matrix(indptr, keys, values, n_features, dtype, sorted_indices=True):
    """A CSR matrix of the entries (sorted in each row, or not), its values
    in dtype, its indices int32 unless the entries are more than an int32
    holds (as scikit-learn's vectorizers choose them), of the kind of
    container scikit-learn's ``sparse_interface`` setting asks for (made
    so at once, where converting one took as long as making it)."""
    index_dtype = np.int64 if indptr[-1] > np.iinfo(np.int32).max else np.int32
    container = (
        sp.csr_array if get_config()["sparse_interface"] == "sparray" else sp.csr_matrix
    )
    X = container(
        (
            values.astype(dtype, copy=False),
            np.ascontiguousarray(keys, dtype=index_dtype),
            indptr.astype(index_dtype, copy=False),
        ),
        shape=(len(indptr) - 1, n_features),
    )
    X.has_sorted_indices = sorted_indices
    return X


# Each vectorizer's fixed vocabulary as the native lookup reads it, with the
# vocabulary it was made from (a copy), rebuilt when that changes.
_LOOKUPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class CountVectorizer(_NativeAnalysis, _text.CountVectorizer):
    """Convert text documents to a matrix of token counts: scikit-learn's
    CountVectorizer, its documents analyzed in compiled code on every core.

    The parameters, attributes and methods of
    :class:`sklearn.feature_extraction.text.CountVectorizer`, and its
    output, array for array. The settings :mod:`fastnb.text` lists are
    analyzed natively; any other takes scikit-learn's own code path.

    Parameters
    ----------
    input, encoding, decode_error, strip_accents, lowercase, preprocessor, \
tokenizer, stop_words, token_pattern, ngram_range, analyzer, max_df, min_df, \
max_features, vocabulary, binary, dtype
        As scikit-learn's (``dtype`` int64 by default: counts).

    Attributes
    ----------
    vocabulary_ : dict
        Each term's column.
    fixed_vocabulary_ : bool
        Whether the vocabulary was given (``vocabulary``).

    Examples
    --------
    >>> from fastnb.text import CountVectorizer
    >>> vectorizer = CountVectorizer()
    >>> X = vectorizer.fit_transform(["The cat sat.", "The cat ran!"])
    >>> vectorizer.get_feature_names_out().tolist()
    ['cat', 'ran', 'sat', 'the']
    >>> X.toarray().tolist()
    [[1, 0, 1, 1], [1, 1, 0, 1]]
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, raw_documents, y=None):
        """Learn the vocabulary of the documents, and return their
        document-term matrix (as scikit-learn's, and ``fit`` calls it).

        Parameters
        ----------
        raw_documents : iterable
            Documents: str, bytes, files or file names, as ``input`` says.
        y : None
            Ignored.

        Returns
        -------
        X : sparse matrix of shape (n_samples, n_features)
            The count of each term in each document.
        """
        settings = self._native_settings()
        if settings is None:
            return super().fit_transform(raw_documents, y)
        refuse_a_str(raw_documents)
        self._validate_ngram_range()
        self._warn_for_unused_params()
        self._validate_vocabulary()
        if self.fixed_vocabulary_:
            if self.lowercase and any(
                any(map(str.isupper, term)) for term in self.vocabulary
            ):
                warnings.warn(
                    "Upper case characters found in vocabulary while 'lowercase' "
                    "is True. These entries will not be matched with any documents",
                    stacklevel=2,
                )
            X = self._looked_up(raw_documents, settings)
            if self.binary:
                X.data.fill(1)
            return X
        vocabulary = _kernels.text_vocabulary(
            np.empty(0, np.uint8), np.zeros(1, np.int64)
        )
        parts = self._analyze_natively(
            raw_documents, settings, COUNT, vocabulary=vocabulary
        )
        indptr, entries = joined_entries(parts)
        n_threads = effective_n_threads(len(entries))
        order = _kernels.text_order(vocabulary, n_threads)
        if not len(order):
            raise ValueError(
                "empty vocabulary; perhaps the documents only contain stop words"
            )
        # Each row's terms in the order the vocabulary first met them, then
        # each term's id made its column (its place among the terms in
        # order): scikit-learn's own layout, entry for entry.
        _kernels.sort_row_entries(indptr, entries, len(order), n_threads)
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        indices = np.empty(len(entries), dtype=np.int32)
        # The entries become the counts, as int64, in place.
        _kernels.entries_to_columns(entries, rank, indices, n_threads)
        counts = entries.view(np.int64)
        if np.dtype(self.dtype) == np.float64:
            # (TfidfVectorizer's counts.) In place too, where astype made a
            # second array of their size.
            np.copyto(entries.view(np.float64), counts, casting="safe")
            counts = entries.view(np.float64)
        X = entries_matrix(indptr, indices, counts, len(order), self.dtype, False)
        if self.binary:
            X.data.fill(1)
        X, new_index = self._kept_features(X)
        kept = np.flatnonzero(new_index >= 0)
        terms = _kernels.text_term_strs(vocabulary, order[kept])
        # The indices as scikit-learn leaves them: NumPy's integers where
        # max_features is set (its _limit_features runs last), else
        # Python's (its _sort_features does).
        indices = new_index[kept] if self.max_features is not None else range(len(kept))
        self.vocabulary_ = dict(zip(terms, indices, strict=True))
        return X

    def _kept_features(self, X):
        """The terms within max_df, min_df and max_features, as
        scikit-learn's _limit_features keeps them (the same ties) on X,
        whose columns are the terms in order: ``(X of those columns, each
        column's new index, or -1)``."""
        n_doc = X.shape[0]
        max_df, min_df = self.max_df, self.min_df
        high = max_df if isinstance(max_df, Integral) else max_df * n_doc
        low = min_df if isinstance(min_df, Integral) else min_df * n_doc
        if high < low:
            raise ValueError("max_df corresponds to < documents than min_df")
        dfs = np.bincount(X.indices, minlength=X.shape[1])
        mask = (dfs <= high) & (dfs >= low)
        limit = self.max_features
        if limit is not None and mask.sum() > limit:
            tfs = np.asarray(X.sum(axis=0)).ravel()
            mask_inds = (-tfs[mask]).argsort()[:limit]
            new_mask = np.zeros(len(dfs), dtype=bool)
            new_mask[np.where(mask)[0][mask_inds]] = True
            mask = new_mask
        if not mask.any():
            raise ValueError(
                "After pruning, no terms remain. Try a lower min_df or a higher max_df."
            )
        new_index = np.cumsum(mask) - 1
        new_index[~mask] = -1
        if mask.all():
            return X, new_index
        stored = mask[X.indices]
        before = np.concatenate([[0], np.cumsum(stored)])
        kept = type(X)(
            (
                X.data[stored],
                new_index[X.indices[stored]].astype(X.indices.dtype),
                before[X.indptr].astype(X.indptr.dtype),
            ),
            shape=(X.shape[0], int(mask.sum())),
        )
        kept.has_sorted_indices = X.has_sorted_indices
        return kept, new_index

    def transform(self, raw_documents):
        """The document-term matrix of the documents over the fitted (or
        given) vocabulary, as scikit-learn's.

        Parameters
        ----------
        raw_documents : iterable
            Documents: str, bytes, files or file names, as ``input`` says.

        Returns
        -------
        X : sparse matrix of shape (n_samples, n_features)
            The count of each term of the vocabulary in each document.
        """
        settings = self._native_settings()
        if settings is None:
            return super().transform(raw_documents)
        refuse_a_str(raw_documents)
        self._check_vocabulary()
        X = self._looked_up(raw_documents, settings)
        if self.binary:
            X.data.fill(1)
        return X

    def _looked_up(self, raw_documents, settings):
        """The counts of vocabulary_'s terms in the documents (a CSR array)."""
        fixed, fixed_index = self._lookup()
        parts = self._analyze_natively(
            raw_documents, settings, LOOKUP, fixed=fixed, fixed_index=fixed_index
        )
        indptr, entries = joined_entries(parts)
        keys, values = keys_and_values(entries)
        return entries_matrix(indptr, keys, values, len(self.vocabulary_), self.dtype)

    def _lookup(self):
        """vocabulary_ as the native lookup reads it: ``(vocabulary,
        columns)``, made again only when vocabulary_ has changed."""
        known = _LOOKUPS.get(self)
        if known is not None and known[0] == self.vocabulary_:
            return known[1:]
        terms = list(self.vocabulary_)
        lookup = (
            _kernels.text_vocabulary(*utf8_terms(terms)),
            np.fromiter(self.vocabulary_.values(), dtype=np.int64, count=len(terms)),
        )
        _LOOKUPS[self] = (dict(self.vocabulary_), *lookup)
        return lookup


class TfidfVectorizer(_text.TfidfVectorizer, CountVectorizer):
    """Convert text documents to a matrix of TF-IDF features: scikit-learn's
    TfidfVectorizer, its documents counted by :class:`CountVectorizer`'s
    native analysis.

    The parameters, attributes and methods of
    :class:`sklearn.feature_extraction.text.TfidfVectorizer`, and its output
    (the counts array for array, so the TF-IDF values bit for bit); its
    weighting is scikit-learn's ``TfidfTransformer``.

    Parameters
    ----------
    input, encoding, decode_error, strip_accents, lowercase, preprocessor, \
tokenizer, analyzer, stop_words, token_pattern, ngram_range, max_df, min_df, \
max_features, vocabulary, binary, dtype, norm, use_idf, smooth_idf, sublinear_tf
        As scikit-learn's.

    Attributes
    ----------
    vocabulary_ : dict
        Each term's column.
    fixed_vocabulary_ : bool
        Whether the vocabulary was given (``vocabulary``).
    idf_ : ndarray of shape (n_features,)
        Each term's inverse document frequency (with ``use_idf``).

    Examples
    --------
    >>> from fastnb.text import TfidfVectorizer
    >>> vectorizer = TfidfVectorizer().fit(["the cat sat", "the cat ran"])
    >>> vectorizer.idf_.round(3).tolist()
    [1.0, 1.405, 1.405, 1.0]
    """


class HashingVectorizer(_NativeAnalysis, _text.HashingVectorizer):
    """Convert text documents to a matrix of hashed token counts:
    scikit-learn's HashingVectorizer, its documents analyzed and hashed in
    compiled code on every core.

    The parameters and methods of
    :class:`sklearn.feature_extraction.text.HashingVectorizer`, and its
    output, array for array: a term's column and sign from the MurmurHash3
    (32 bits, seed 0) of its UTF-8 bytes, as scikit-learn's. It keeps no
    state: ``fit`` only checks the parameters.

    Parameters
    ----------
    input, encoding, decode_error, strip_accents, lowercase, preprocessor, \
tokenizer, stop_words, token_pattern, ngram_range, analyzer, n_features, \
binary, norm, alternate_sign, dtype
        As scikit-learn's.

    Examples
    --------
    >>> from fastnb.text import HashingVectorizer
    >>> X = HashingVectorizer(n_features=8, norm=None).transform(["the cat sat"])
    >>> X.shape, X.dtype, int(abs(X).sum())
    ((1, 8), dtype('float64'), 3)
    """

    def transform(self, X):
        """The hashed document-term matrix of the documents, as
        scikit-learn's.

        Parameters
        ----------
        X : iterable
            Documents: str, bytes, files or file names, as ``input`` says.

        Returns
        -------
        X : sparse matrix of shape (n_samples, n_features)
            Each document's terms' signs (or counts) summed in their columns,
            then normalised as ``norm`` says.
        """
        settings = self._native_settings()
        if settings is None:
            return super().transform(X)
        refuse_a_str(X)
        self._validate_ngram_range()
        parts = self._analyze_natively(
            X,
            settings,
            HASH,
            n_features=self.n_features,
            alternate_sign=self.alternate_sign,
        )
        indptr, entries = joined_entries(parts)
        if len(indptr) == 1:
            raise ValueError("Cannot vectorize empty sequence.")
        keys, values = keys_and_values(entries)
        matrix = entries_matrix(indptr, keys, values, self.n_features, self.dtype)
        if self.binary:
            matrix.data.fill(1)
        if self.norm is not None:
            matrix = normalize(matrix, norm=self.norm, copy=False)
        return matrix
