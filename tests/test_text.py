"""fastnb.text: scikit-learn's vectorizers, output for output.

Every comparison is array for array (the matrix's index pointers, indices,
values and their dtypes, the container's type; the vocabulary, its
indices' types, the feature names; TfidfVectorizer's idf_), against
scikit-learn's own vectorizer of the same parameters: on the shared
corpora (skipping without them), on random text of many scripts, and on
input made to break a native tokenizer.
"""

import io
import pickle
import re
import unicodedata

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import clone
from sklearn.feature_extraction import text as sk_text
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_limits

import fastnb
import fastnb.text

from _helpers import require_data

VECTORIZERS = ("CountVectorizer", "TfidfVectorizer", "HashingVectorizer")


def pair(name, **params):
    """scikit-learn's vectorizer and fastnb's, of the same parameters."""
    return getattr(sk_text, name)(**params), getattr(fastnb.text, name)(**params)


def assert_same_matrix(ours, theirs):
    assert type(ours) is type(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    for part in ("indptr", "indices", "data"):
        a, b = getattr(ours, part), getattr(theirs, part)
        assert a.dtype == b.dtype, part
        np.testing.assert_array_equal(a, b, err_msg=part, strict=True)


def assert_same_vocabulary(ours, theirs):
    assert ours.vocabulary_ == theirs.vocabulary_
    assert [type(i) for i in ours.vocabulary_.values()] == [
        type(i) for i in theirs.vocabulary_.values()
    ]
    np.testing.assert_array_equal(
        ours.get_feature_names_out(), theirs.get_feature_names_out()
    )


def assert_same_output(name, params, fit_docs, transform_docs=None):
    """fit_transform and transform of scikit-learn's vectorizer and
    fastnb's, compared; scikit-learn's error if it raises one."""
    theirs, ours = pair(name, **params)
    try:
        expected = theirs.fit_transform(fit_docs)
    except Exception as error:  # noqa: BLE001 - the same error, whatever it is
        with pytest.raises(type(error), match=re.escape(str(error))):
            ours.fit_transform(fit_docs)
        return
    assert_same_matrix(ours.fit_transform(fit_docs), expected)
    if name != "HashingVectorizer":
        assert_same_vocabulary(ours, theirs)
    if name == "TfidfVectorizer":
        np.testing.assert_array_equal(ours.idf_, theirs.idf_, strict=True)
    if transform_docs is not None:
        assert_same_matrix(
            ours.transform(transform_docs), theirs.transform(transform_docs)
        )


# ---------------------------------------------------------------------------
# The shared corpora
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpora():
    """A part of each shared corpus: 20 Newsgroups' posts (the archive, as
    fetch_20newsgroups holds them), SMS spam, rt-polarity (latin-1)."""
    import tarfile

    archive = require_data("20newsgroups/20news-bydate.tar.gz")
    posts = []
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if member.isfile() and len(posts) < 1500:
                posts.append(tar.extractfile(member).read().decode("latin-1"))
    sms = require_data("sms_spam/SMSSpamCollection").read_text(encoding="utf-8")
    polarity = require_data("rt_polarity/rt-polarity.pos").read_text(encoding="latin-1")
    return {
        "20newsgroups": posts,
        "sms_spam": [line.split("\t", 1)[1] for line in sms.splitlines() if line],
        "rt_polarity": polarity.splitlines(),
    }


GRID = [
    {},
    {"binary": True, "dtype": np.float32},
    {"lowercase": False},
    {"token_pattern": r"(?u)\b\w+\b"},
    {"stop_words": "english", "ngram_range": (1, 3)},
    {"stop_words": ["the", "a", "ok"], "ngram_range": (2, 2)},
    {"strip_accents": "ascii"},
    {"strip_accents": "unicode", "lowercase": False},
    {"analyzer": "char", "ngram_range": (1, 3)},
    {"analyzer": "char", "ngram_range": (3, 5), "lowercase": False},
    {"analyzer": "char_wb", "ngram_range": (2, 4)},
    {"analyzer": "char_wb", "ngram_range": (1, 6), "strip_accents": "unicode"},
    {"min_df": 2, "max_df": 0.7},
    {"min_df": 0.01, "max_df": 40},
    {"max_features": 300},
    {"max_features": 50, "ngram_range": (1, 2), "binary": True},
    {"vocabulary": ["free", "call", "the", "film", "zzz"]},
    {"vocabulary": {"good": 1, "bad": 0, "movie": 2}},
]
HASHING_GRID = [
    {},
    {"alternate_sign": False, "norm": None},
    {"n_features": 2**6, "binary": True},
    {"n_features": 1, "norm": "l1"},
    {"analyzer": "char_wb", "ngram_range": (2, 3), "dtype": np.float32},
    {"stop_words": "english", "ngram_range": (1, 2), "strip_accents": "unicode"},
]


@pytest.mark.parametrize("corpus", ["20newsgroups", "sms_spam", "rt_polarity"])
@pytest.mark.parametrize("params", GRID, ids=[str(p) for p in GRID])
@pytest.mark.parametrize("name", ["CountVectorizer", "TfidfVectorizer"])
def test_the_output_of_scikit_learn_on_the_shared_corpora(
    name, params, corpus, corpora
):
    docs = corpora[corpus]
    half = len(docs) // 2
    if name == "TfidfVectorizer" and "dtype" in params:
        params = {**params, "dtype": np.float32}
    assert_same_output(name, params, docs[:half], docs[half:])


@pytest.mark.parametrize("corpus", ["20newsgroups", "sms_spam", "rt_polarity"])
@pytest.mark.parametrize("params", HASHING_GRID, ids=[str(p) for p in HASHING_GRID])
def test_hashing_output_of_scikit_learn_on_the_shared_corpora(params, corpus, corpora):
    assert_same_output("HashingVectorizer", params, corpora[corpus])


# ---------------------------------------------------------------------------
# Random text of many scripts
# ---------------------------------------------------------------------------

# Characters that tokenizers and case mappings get wrong: accents and
# combining marks, Greek with its final sigma, Cyrillic, CJK, other
# scripts' digits, full-width forms, ligatures, titlecase digraphs, the
# dotted capital I, the sharp s, underscores, emoji, NUL and every kind of
# whitespace Python knows.
ALPHABET = (
    "aAzZ09_-.,'éÉèñÑçüÜ\u0301\u0308\u0327ΣσςΑΩάΐЖжЁёЯ中文字日本語한국어"
    "٣٤٥५६٠０１Ａｚ𝔘𝕏ﬁﬂŉǅǈǋİıßẞ😀👍🏽\U0001f1eb\U0001f1f7\x00"
    + "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
)
WHITESPACE = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
documents = st.lists(
    st.text(alphabet=ALPHABET, max_size=40) | st.sampled_from(["", " ", "ΣΑΣ σας"]),
    min_size=1,
    max_size=12,
)
analyzers = st.sampled_from(
    [
        {},
        {"token_pattern": r"(?u)\b\w+\b", "ngram_range": (1, 3)},
        {"lowercase": False, "stop_words": ["of", "ab"]},
        {"strip_accents": "unicode"},
        {"strip_accents": "ascii", "token_pattern": r"(?u)\b\w+\b"},
        {"analyzer": "char", "ngram_range": (1, 3)},
        {"analyzer": "char_wb", "ngram_range": (1, 4)},
        {"analyzer": "char_wb", "ngram_range": (3, 3), "lowercase": False},
    ]
)


@settings(max_examples=150, deadline=None)
@given(docs=documents, params=analyzers, name=st.sampled_from(VECTORIZERS))
def test_random_text_of_many_scripts(docs, params, name):
    assert_same_output(name, params, docs, docs[::-1])


def test_the_characters_are_those_of_pythons_re():
    # \w and \s as the running Python's re sees them, every code point.
    word, space = fastnb.text.character_classes()
    every = "".join(map(chr, range(0x110000)))
    expected_word = np.array([bool(re.match(r"\w", c)) for c in every[:0x3000]])
    bits = np.unpackbits(word, bitorder="little").astype(bool)
    np.testing.assert_array_equal(bits[:0x3000], expected_word)
    assert bits.sum() == sum(1 for c in every if c.isalnum() or c == "_")
    spaces = np.unpackbits(space, bitorder="little").astype(bool)
    assert set(np.flatnonzero(spaces)) == {ord(c) for c in WHITESPACE}


def test_accents_stripped_as_scikit_learn_strips_them():
    text = "".join(chr(c) for c in range(0x20, 0x3000)) + "İ Σ ǅ ﬁ é ñ"
    assert fastnb.text.strip_accents_unicode(text) == sk_text.strip_accents_unicode(
        text
    )
    assert all(
        not unicodedata.combining(c) for c in fastnb.text.strip_accents_unicode(text)
    )


# ---------------------------------------------------------------------------
# Threads, batches, inputs
# ---------------------------------------------------------------------------


def newsgroup_like(n_docs, seed=0):
    rng = np.random.default_rng(seed)
    words = ["alpha", "beta", "gamma", "Δέλτα", "naïve", "x", "the", "of", "été", "中"]
    return [" ".join(rng.choice(words, rng.integers(0, 60))) for _ in range(n_docs)]


@pytest.mark.parametrize("name", VECTORIZERS)
def test_the_same_output_at_1_2_and_8_threads(name):
    docs = newsgroup_like(3000)
    params = {"ngram_range": (1, 2)}
    outputs = []
    for n_threads in (1, 2, 8):
        with threadpool_limits(limits=n_threads, user_api="openmp"):
            vectorizer = getattr(fastnb.text, name)(**params)
            outputs.append((vectorizer.fit_transform(docs), vectorizer))
    for matrix, vectorizer in outputs[1:]:
        assert_same_matrix(matrix, outputs[0][0])
        if name != "HashingVectorizer":
            assert vectorizer.vocabulary_ == outputs[0][1].vocabulary_


@pytest.mark.parametrize("name", VECTORIZERS)
def test_an_iterator_read_in_batches_gives_the_list_output(name, monkeypatch):
    docs = newsgroup_like(1000)
    monkeypatch.setattr(fastnb.text, "BATCH_DOCUMENTS", 37)
    theirs, ours = pair(name)
    assert_same_matrix(ours.fit_transform(iter(docs)), theirs.fit_transform(docs))
    assert_same_matrix(ours.transform(d for d in docs), theirs.transform(docs))


@pytest.mark.parametrize(
    "make",
    [
        lambda docs: np.array(docs),
        lambda docs: pd.Series(docs),
        lambda docs: tuple(docs),
        lambda docs: [d.encode("utf-8") for d in docs],
    ],
    ids=["numpy", "pandas", "tuple", "bytes"],
)
def test_documents_as_scikit_learn_takes_them(make):
    docs = newsgroup_like(200)
    for name in VECTORIZERS:
        assert_same_output(name, {}, make(docs), make(docs[:50]))


def arrow_columns(docs):
    """The documents as each kind of Arrow string column fastnb.text reads
    from its UTF-8: pyarrow's string and large_string arrays, a chunked
    array, a slice, a polars Series, pandas Series of pyarrow-backed
    strings (pandas 3's str where pyarrow is installed)."""
    pa = pytest.importorskip("pyarrow")
    pl = pytest.importorskip("polars")
    return {
        "string": pa.array(docs),
        "large_string": pa.array(docs, type=pa.large_string()),
        "chunked": pa.chunked_array([docs[:7], docs[7:]]),
        "slice": pa.array(["x"] + docs + ["y"]).slice(1, len(docs)),
        "polars": pl.Series(docs),
        "pandas string[pyarrow]": pd.Series(docs, dtype=pd.StringDtype("pyarrow")),
        "pandas ArrowDtype": pd.Series(docs, dtype=pd.ArrowDtype(pa.string())),
    }


@pytest.mark.parametrize("lowercase", [True, False])
def test_arrow_string_columns_give_the_output_of_their_values(lowercase, monkeypatch):
    docs = newsgroup_like(300) + ["ÜNÏCODE İstanbul ΣΑΣ", "", "a b"]
    monkeypatch.setattr(fastnb.text, "BATCH_DOCUMENTS", 64)
    for kind, column in arrow_columns(docs).items():
        for name in VECTORIZERS:
            theirs, ours = pair(name, lowercase=lowercase, ngram_range=(1, 2))
            expected = theirs.fit_transform(docs)
            assert_same_matrix(ours.fit_transform(column), expected)
            assert_same_matrix(ours.transform(column), theirs.transform(docs)), kind


@pytest.mark.parametrize("container", ["pyarrow", "pandas"])
@pytest.mark.parametrize("lowercase", [True, False])
def test_an_arrow_column_is_read_without_a_python_object_a_document(
    lowercase, container, monkeypatch
):
    # The kernels get the column's own UTF-8 and offsets, and a str only for
    # a document that str.lower() must lowercase (one of other than ASCII).
    pa = pytest.importorskip("pyarrow")
    docs = ["Plain ASCII words"] * 50 + ["Ünïcode ΣΑΣ"] + ["more ASCII"] * 49
    given = []
    analyze = fastnb.text._kernels.text_analyze

    def spy(documents, *args):
        given.append(documents)
        return analyze(documents, *args)

    monkeypatch.setattr(fastnb.text._kernels, "text_analyze", spy)
    column = {
        "pyarrow": pa.array(docs),
        "pandas": pd.Series(docs, dtype=pd.StringDtype("pyarrow")),
    }[container]
    # (Not read a value at a time.)
    monkeypatch.setattr(pd.Series, "__iter__", None)
    fastnb.text.CountVectorizer(lowercase=lowercase).fit(column)
    ((data, offsets, replaced),) = given
    assert (
        np.shares_memory(data, np.frombuffer(pa.array(docs).buffers()[2], np.uint8))
        is False
    )
    assert data.tobytes() == "".join(docs).encode("utf-8")
    np.testing.assert_array_equal(
        offsets, np.cumsum([0] + [len(doc.encode("utf-8")) for doc in docs])
    )
    assert replaced == ({50: "ünïcode σας"} if lowercase else {})


def test_an_arrow_column_with_nulls_gets_scikit_learns_error():
    pl = pytest.importorskip("polars")
    docs = ["aa bb", None]
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute"):
        sk_text.CountVectorizer().fit(docs)
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute"):
        fastnb.text.CountVectorizer().fit(pl.Series(docs))


@pytest.mark.parametrize("decode_error", ["strict", "ignore", "replace"])
def test_bytes_of_another_encoding(decode_error):
    docs = [d.encode("latin-1", "replace") for d in newsgroup_like(100)]
    docs.append(bytes(range(256)) * 3)
    for name in VECTORIZERS:
        assert_same_output(
            name, {"encoding": "utf-8", "decode_error": decode_error}, docs
        )
        assert_same_output(name, {"encoding": "latin-1"}, docs)


@pytest.mark.parametrize("input", ["file", "filename"])
def test_files_and_file_names(input, tmp_path):
    docs = newsgroup_like(20)
    paths = []
    for i, doc in enumerate(docs):
        paths.append(tmp_path / f"{i}.txt")
        paths[-1].write_text(doc, encoding="utf-8")
    for name in VECTORIZERS:
        theirs, ours = pair(name, input=input)
        given = (
            (lambda: [io.BytesIO(p.read_bytes()) for p in paths])
            if input == "file"
            else (lambda: [str(p) for p in paths])
        )
        assert_same_matrix(ours.fit_transform(given()), theirs.fit_transform(given()))


# ---------------------------------------------------------------------------
# Input made to break a tokenizer
# ---------------------------------------------------------------------------

HOSTILE = {
    "lone surrogates": ["ab\ud800cd ef", "\udfff", "x\ud83d\ude00y zz\udc00zz"],
    "NUL characters": ["ab\x00cd", "\x00\x00", "word\x00 word"],
    "a 1 MB token": ["a" * 1_000_000, "b" + "é" * 500_000],
    "empty documents": ["", "", "only words here", ""],
    "only separators": ["... ,,, !!!", "\t\n \u3000"],
}


@pytest.mark.parametrize("case", list(HOSTILE))
@pytest.mark.parametrize(
    "params",
    [{}, {"analyzer": "char", "ngram_range": (1, 2)}, {"analyzer": "char_wb"}],
    ids=["word", "char", "char_wb"],
)
@pytest.mark.parametrize("name", VECTORIZERS)
def test_hostile_documents(name, params, case):
    assert_same_output(name, params, HOSTILE[case], HOSTILE[case][::-1])


def test_a_million_one_character_documents():
    docs = [chr(97 + i % 26) for i in range(1_000_000)]
    assert_same_output("CountVectorizer", {"token_pattern": r"(?u)\b\w+\b"}, docs)
    assert_same_output("HashingVectorizer", {"analyzer": "char"}, docs)


@pytest.mark.parametrize("seed", range(4))
def test_random_bytes_with_each_decode_error(seed):
    rng = np.random.default_rng(seed)
    docs = [rng.bytes(int(n)) for n in rng.integers(0, 300, 30)]
    for decode_error in ("strict", "ignore", "replace"):
        for name in VECTORIZERS:
            assert_same_output(
                name, {"decode_error": decode_error, "analyzer": "char_wb"}, docs
            )


# ---------------------------------------------------------------------------
# Bad input, and what a failure leaves
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", VECTORIZERS)
def test_a_str_for_the_documents_is_refused_as_scikit_learn_refuses_it(name):
    assert_same_output(name, {}, "one document")


@pytest.mark.parametrize(
    ("params", "docs"),
    [
        ({}, ["a b c", "! ?"]),
        ({"stop_words": "english"}, ["the of and", "a an"]),
        ({"min_df": 3}, ["aa bb", "cc dd"]),
        ({"max_df": 1, "min_df": 2}, ["aa bb", "aa cc"]),
        ({}, [None, "aa bb"]),
        ({"lowercase": False}, [42, "aa bb"]),
        ({}, [np.nan, "aa"]),
    ],
)
def test_bad_documents_get_scikit_learns_error(params, docs):
    for name in VECTORIZERS:
        if set(params) <= set(getattr(sk_text, name)().get_params()):
            assert_same_output(name, params, docs)


def test_a_failed_fit_leaves_the_vectorizer_as_it_was():
    vectorizer = fastnb.text.CountVectorizer().fit(["aa bb", "cc"])
    before = pickle.dumps(vectorizer)
    with pytest.raises(ValueError, match="empty vocabulary"):
        vectorizer.fit(["! ?", "a"])
    assert vectorizer.vocabulary_ == {"aa": 0, "bb": 1, "cc": 2}
    assert pickle.dumps(vectorizer) == before


def test_stop_word_warnings_as_scikit_learns():
    params = {"stop_words": ["don't", "aa"]}
    docs = ["aa bb don't"]
    theirs, ours = pair("CountVectorizer", **params)
    with pytest.warns(UserWarning, match="stop_words may be inconsistent") as caught:
        ours.fit(docs)
    with pytest.warns(UserWarning) as expected:
        theirs.fit(docs)
    assert [str(w.message) for w in caught] == [str(w.message) for w in expected]


def test_upper_case_vocabulary_warns_as_scikit_learn():
    theirs, ours = pair("CountVectorizer", vocabulary=["Aa", "bb"])
    with pytest.warns(UserWarning, match="Upper case characters"):
        matrix = ours.fit_transform(["aa bb Aa"])
    with pytest.warns(UserWarning, match="Upper case characters"):
        assert_same_matrix(matrix, theirs.fit_transform(["aa bb Aa"]))


def test_a_changed_vocabulary_is_looked_up_again():
    vectorizer = fastnb.text.CountVectorizer().fit(["aa bb cc"])
    assert vectorizer.transform(["aa"]).toarray().tolist() == [[1, 0, 0]]
    vectorizer.vocabulary_["aa"], vectorizer.vocabulary_["cc"] = 2, 0
    assert vectorizer.transform(["aa"]).toarray().tolist() == [[0, 0, 1]]


# ---------------------------------------------------------------------------
# scikit-learn's machinery
# ---------------------------------------------------------------------------


def test_settings_not_native_take_scikit_learns_path():
    docs = newsgroup_like(100)
    for params in (
        {"analyzer": str.split},
        {"tokenizer": str.split, "token_pattern": None},
        {"preprocessor": str.upper},
        {"token_pattern": r"\b\w\w\w+\b"},
        {"strip_accents": str.casefold},
    ):
        for name in VECTORIZERS:
            assert_same_output(name, params, docs, docs[:10])


def test_pipelines_clone_pickle_and_grid_search():
    docs = newsgroup_like(300)
    y = np.arange(300) % 3
    pipeline = make_pipeline(fastnb.text.TfidfVectorizer(), fastnb.MultinomialNB())
    search = GridSearchCV(
        pipeline,
        {"tfidfvectorizer__ngram_range": [(1, 1), (1, 2)]},
        cv=2,
    ).fit(docs, y)
    expected = GridSearchCV(
        make_pipeline(sk_text.TfidfVectorizer(), fastnb.MultinomialNB()),
        {"tfidfvectorizer__ngram_range": [(1, 1), (1, 2)]},
        cv=2,
    ).fit(docs, y)
    np.testing.assert_array_equal(
        search.cv_results_["mean_test_score"], expected.cv_results_["mean_test_score"]
    )
    copy = clone(pipeline)
    assert copy.get_params()["tfidfvectorizer__ngram_range"] == (1, 1)
    fitted = pickle.loads(pickle.dumps(search.best_estimator_))
    np.testing.assert_array_equal(
        fitted.predict(docs), search.best_estimator_.predict(docs)
    )
    assert isinstance(fastnb.text.CountVectorizer(), sk_text.CountVectorizer)


def test_the_sparse_interface_setting_is_followed():
    import sklearn

    docs = newsgroup_like(50)
    for interface in ("sparray", "spmatrix"):
        with sklearn.config_context(sparse_interface=interface):
            for name in VECTORIZERS:
                theirs, ours = pair(name)
                assert_same_matrix(ours.fit_transform(docs), theirs.fit_transform(docs))
                assert sp.issparse(ours.transform(docs))


def test_native_settings_do_not_take_scikit_learns_path(monkeypatch):
    # scikit-learn's counting and hashing are not called for what the
    # native path takes (a test of the dispatch: the comparisons above
    # would pass on scikit-learn's own path too).
    def refused(*args, **kwargs):
        raise AssertionError("scikit-learn's path taken")

    monkeypatch.setattr(sk_text.CountVectorizer, "_count_vocab", refused)
    monkeypatch.setattr(sk_text.HashingVectorizer, "_get_hasher", refused)
    docs = newsgroup_like(50)
    for params in GRID[:12]:
        fastnb.text.CountVectorizer(**params).fit(docs).transform(docs)
        fastnb.text.TfidfVectorizer(**params).fit_transform(docs)
    for params in HASHING_GRID:
        fastnb.text.HashingVectorizer(**params).transform(docs)
