"""Model files: a fitted model saved as plain arrays and a JSON header.

A file is a model's state (fastnb._state): its estimator's name, its
parameters, its classes, features and sufficient statistics; or (format
version 2) a fastnb.text vectorizer's parameters and vocabulary, or a
Pipeline of vectorizers, scikit-learn's TfidfTransformer and fastnb
estimators. Loading reads numbers and strings and never runs code from the
file; every size is checked against the file before anything is read,
every byte against a SHA-256 checksum, and the model against every check
``from_state`` makes (a vectorizer's parameters against scikit-learn's
constraints, its vocabulary for distinct terms), before any kernel sees it.

The layout (all integers little-endian)::

    offset  size  field
         0     8  MAGIC, b"\\x89fastnb\\n"
         8     8  the header's length in bytes (uint64)
        16    32  SHA-256 of the header
        48    32  HMAC-SHA256 of the header with the saver's key, or zeros
        80     n  the header: JSON, UTF-8
      80+n   ...  the arrays' bytes, one after the other, in the header's order

The header is one JSON object::

    {"format_version": 1, "fastnb_version": "0.1.0",
     "estimator": "MultinomialNB", "params": ..., "classes": ...,
     "n_features_in": 4, "feature_names_in": ..., "statistics": ...,
     "arrays": [{"dtype": "<f8", "shape": [2, 4], "object": false,
                 "sha256": "..."}, ...]}

Values are JSON's null, booleans, numbers, strings and lists, and objects
of one key that say what they hold: ``{"array": i}`` (the header's i-th
array), ``{"dict": {...}}``, ``{"tuple": [...]}``, ``{"float": "nan"}``
(also "inf", "-inf"), ``{"dtype": "float32"}``, ``{"scalar_type":
"int64"}`` (a NumPy number type, as a vectorizer's dtype) and
``{"MEstimate": {"m": ..., "prior": ...}}``. An array's dtype
is a boolean, integer, floating, or fixed-width string dtype; ``"object":
true`` makes it an object array of those values when loaded (labels and
names of Python strings).

A file of format version 2 holds, in place of the model's fields, one
``"content"``: ``{"model": {the fields above}}``, ``{"vectorizer": {"class":
"CountVectorizer", "params": ..., "fitted": {"terms": ..., "fixed": ...,
"idf": ...} or null}}``, ``{"tfidf_transformer": {"params": ..., "idf":
..., "n_features_in": ...}}`` or ``{"pipeline": {"steps": [[name,
content], ...]}}``. A single estimator is still written in format 1, which
every fastnb reads.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import math
import os
import re
import struct
from typing import TYPE_CHECKING

import numpy as np
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from fastnb import text as _text
from fastnb._base import BaseNB
from fastnb._multilabel import OneVsRestNB
from fastnb._registry import ESTIMATORS
from fastnb._semi_supervised import SemiSupervisedNB
from fastnb._smoothing import MEstimate
from fastnb._state import ModelState, from_state, get_state
from fastnb._version import __version__

if TYPE_CHECKING:
    from fastnb._typing import ModelFile

# The newest format this fastnb reads; a single estimator is written in
# MODEL_FORMAT_VERSION (which fastnb releases before format 2 read too),
# vectorizers and pipelines in format 2.
FORMAT_VERSION = 2
MODEL_FORMAT_VERSION = 1
MAGIC = b"\x89fastnb\n"
PREAMBLE = struct.Struct("<8sQ32s32s")
UNSIGNED = bytes(32)
# A header this long is not a model's: refused before it is read.
MAX_HEADER_BYTES = 1 << 26
# Files are read this much at a time, so that memory grows with the bytes
# really read, not with the sizes a header declares.
READ_CHUNK = 1 << 20
# Little-endian booleans, integers, floats, and strings of up to a million
# characters.
ARRAY_DTYPE = re.compile(r"\|b1|\|[iu]1|<[iu][248]|<f[48]|<U[1-9][0-9]{0,5}")
MAX_DIMENSIONS = 2
# Messages cut an array's name (from the header, so of any length) to this.
MAX_NAME_CHARS = 80
HEADER_KEYS = {
    "format_version",
    "fastnb_version",
    "estimator",
    "params",
    "classes",
    "n_features_in",
    "feature_names_in",
    "statistics",
    "arrays",
}
CONTENT_HEADER_KEYS = {"format_version", "fastnb_version", "content", "arrays"}
# What a file of format 2 may hold beside fastnb's estimators, by name.
VECTORIZERS = {
    cls.__name__: cls
    for cls in (_text.CountVectorizer, _text.HashingVectorizer, _text.TfidfVectorizer)
}
# The NumPy number types a vectorizer's dtype may be.
SCALAR_TYPES = {
    np.dtype(name).name
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")
    + ("uint64", "float16", "float32", "float64", "bool")
}


def skops_type_name(cls):
    """A type's name as skops lists it in a file's untrusted types."""
    return f"{cls.__module__}.{cls.__qualname__}"


# The types of fastnb's models in a skops file beyond skops' own (fastnb.text's
# vectorizers too): pass as
# ``skops.io.load(file, trusted=fastnb.SKOPS_TRUSTED_TYPES)``. Loading a
# fastnb estimator checks its fitted state as fastnb.from_state does (the
# models inside OneVsRestNB and SemiSupervisedNB too); numpy.dtype is
# GaussianNB's and KernelDensityNB's data type (a name; loading refuses any
# other than float32 and float64).
SKOPS_TRUSTED_TYPES = (
    *sorted(
        skops_type_name(cls)
        for cls in (
            *ESTIMATORS.values(),
            MEstimate,
            OneVsRestNB,
            SemiSupervisedNB,
            *VECTORIZERS.values(),
        )
    ),
    "numpy.dtype",
)


class ModelFileError(ValueError):
    """A file that ``fastnb.load`` refuses: not a fastnb model file, damaged,
    changed, of an unknown format version, or holding a model that no fit
    could have made. The message names the problem."""


def save(
    model: BaseNB | Pipeline | _text.CountVectorizer | _text.HashingVectorizer,
    file: ModelFile,
    *,
    key: bytes | bytearray | None = None,
) -> None:
    """Save a fitted fastnb estimator (or text model) to a file that loading
    cannot run code from.

    The file holds the model's parameters and sufficient statistics as
    plain arrays and a JSON header (see "Files, skops and ONNX" in the
    user guide, docs/user_guide/files.md), each array with a SHA-256
    checksum. :func:`fastnb.load` gives
    back a model that predicts identically and goes on with ``partial_fit``
    and :func:`fastnb.merge`. A :mod:`fastnb.text` vectorizer, and a
    scikit-learn ``Pipeline`` of them, scikit-learn's ``TfidfTransformer``
    and fastnb estimators (a whole text model, from raw text to
    predictions), are saved the same way: their parameters, vocabularies
    and statistics.

    Parameters
    ----------
    model : fastnb estimator, fastnb.text vectorizer, or Pipeline of them
        A fitted estimator (every step of a Pipeline fitted).
    file : str, os.PathLike or binary file object
        Where to write (the whole file is encoded before anything is written).
    key : bytes, default=None
        A secret key: the file is signed with HMAC-SHA256, and
        ``fastnb.load(file, key=key)`` refuses it if anything in it changed
        since (checksums alone find damage, not deliberate changes).

    Raises
    ------
    TypeError
        If ``model`` is not a fastnb estimator, vectorizer or a Pipeline of
        them, or a parameter holds a value that a model file cannot hold
        (a function: a file holds no code).
    NotFittedError
        If ``model`` is not fitted.

    Examples
    --------
    >>> import io
    >>> import numpy as np
    >>> import fastnb
    >>> model = fastnb.MultinomialNB().fit(np.array([[2, 1], [0, 3]]), ["a", "b"])
    >>> file = io.BytesIO()
    >>> fastnb.save(model, file)
    >>> _ = file.seek(0)
    >>> fastnb.load(file).predict([[3, 0]])
    array(['a'], dtype='<U1')
    """
    key = check_key(key)
    if isinstance(model, BaseNB):
        check_is_fitted(model)
        content = encode_model(get_state(model), key)
    else:
        content = encode_content_file(model, key)
    if hasattr(file, "write"):
        file.write(content)
    else:
        with open(file, "wb") as opened:
            opened.write(content)


def load(
    file: ModelFile, *, key: bytes | bytearray | None = None
) -> BaseNB | Pipeline | _text.CountVectorizer | _text.HashingVectorizer:
    """Load a model saved by :func:`fastnb.save`, checking all of it first.

    Nothing in the file is executed. Before the model is built, the file's
    sizes are checked against its length (a small file cannot make a large
    allocation), its bytes against their checksums (and its signature,
    with ``key``), and the model against every check of
    :func:`fastnb.from_state`: dtypes, shapes, finite non-negative counts,
    statistics that agree with each other, parameters the estimator accepts.

    Parameters
    ----------
    file : str, os.PathLike or binary file object
        The file to read (read to its end: nothing may follow the model).
    key : bytes, default=None
        The key the file was signed with, to check its signature: a file
        that is unsigned, or signed with another key, or changed since it
        was signed, is refused. A signed file needs its key.

    Returns
    -------
    model : fastnb estimator, fastnb.text vectorizer or Pipeline
        The fitted model the file holds.

    Raises
    ------
    ModelFileError
        If the file is not a fastnb model file, is truncated, damaged or
        changed, has an unknown format version, fails its signature, or
        holds a model no fit could have made.
    """
    key = check_key(key)
    if hasattr(file, "read"):
        return decode_model(file, key)
    with open(file, "rb") as opened:
        return decode_model(opened, key)


def check_key(key):
    if key is None:
        return None
    if not isinstance(key, bytes | bytearray) or not key:
        raise TypeError(f"key must be None or non-empty bytes; got {key!r}.")
    return bytes(key)


# -- writing ---------------------------------------------------------------------


def model_fields(state, arrays, path=""):
    """A model's fields of the header: a state's values encoded."""
    return {
        "estimator": state.estimator,
        "params": encode_value(state.params, arrays, path + "params"),
        "classes": encode_value(state.classes, arrays, path + "classes"),
        "n_features_in": state.n_features_in,
        "feature_names_in": encode_value(
            state.feature_names_in, arrays, path + "feature_names_in"
        ),
        "statistics": encode_value(state.statistics, arrays, path + "statistics"),
    }


def encode_model(state, key):
    """The bytes of the file holding ``state`` (format 1), signed with
    ``key`` if given."""
    arrays = []
    header = {
        "format_version": MODEL_FORMAT_VERSION,
        "fastnb_version": __version__,
        **model_fields(state, arrays),
    }
    return encode_file(header, arrays, key)


def state_bytes(state):
    """A model file's bytes holding ``state``, which need not be one a fit
    could make alone (fastnb.spark sends a partition's state so, to be
    combined with the others' before its parameters are checked)."""
    return encode_model(state, None)


def read_state(data):
    """The ModelState in ``data`` (state_bytes), checked as load checks a
    file, but not against its parameters."""
    return decode_model(io.BytesIO(data), None, adopt=False)


def encode_content_file(model, key):
    """The bytes of the file (format 2) holding a vectorizer or a Pipeline."""
    arrays = []
    header = {
        "format_version": FORMAT_VERSION,
        "fastnb_version": __version__,
        "content": encode_content(model, arrays, "content"),
    }
    return encode_file(header, arrays, key)


def encode_content(model, arrays, path):
    """A vectorizer, TfidfTransformer, fastnb estimator or Pipeline of them
    as the "content" of a file of format 2."""
    if isinstance(model, BaseNB):
        check_is_fitted(model)
        return {"model": model_fields(get_state(model), arrays, path + ".")}
    if type(model) in VECTORIZERS.values():
        fitted = None
        if not isinstance(model, _text.HashingVectorizer):
            check_is_fitted(model, "vocabulary_")
            order = sorted(model.vocabulary_, key=model.vocabulary_.__getitem__)
            idf = getattr(model, "_tfidf", None)
            fitted = {
                "terms": encode_value(
                    np.array(order, dtype=object), arrays, path + ".terms"
                ),
                "fixed": bool(model.fixed_vocabulary_),
                "idf": None
                if idf is None or not hasattr(idf, "idf_")
                else encode_value(np.asarray(idf.idf_), arrays, path + ".idf"),
            }
        return {
            "vectorizer": {
                "class": type(model).__name__,
                "params": encode_value(
                    model.get_params(deep=False), arrays, path + ".params"
                ),
                "fitted": fitted,
            }
        }
    if type(model) is TfidfTransformer:
        check_is_fitted(model)
        return {
            "tfidf_transformer": {
                "params": encode_value(
                    model.get_params(deep=False), arrays, path + ".params"
                ),
                "idf": encode_value(
                    np.asarray(model.idf_) if model.use_idf else None,
                    arrays,
                    path + ".idf",
                ),
                "n_features_in": int(model.n_features_in_),
            }
        }
    if type(model) is Pipeline:
        if model.memory is not None:
            raise TypeError(
                f"{path}: a Pipeline with memory (a cache of its steps) cannot "
                "be saved; set memory=None first."
            )
        return {
            "pipeline": {
                "steps": [
                    [name, encode_content(step, arrays, f"{path}.steps[{name!r}]")]
                    for name, step in model.steps
                ]
            }
        }
    raise TypeError(
        f"fastnb.save takes a fastnb estimator, a fastnb.text vectorizer, "
        f"scikit-learn's TfidfTransformer or a Pipeline of them; got "
        f"{type(model).__name__}" + (f" at {path}" if path != "content" else "") + "."
    )


def encode_file(header, arrays, key):
    """The bytes of a file: its preamble, the header (with its arrays'
    descriptions), the arrays; signed with ``key`` if given."""
    data = [array.tobytes() for array, _ in arrays]
    header["arrays"] = [
        {
            "dtype": array.dtype.str,
            "shape": list(array.shape),
            "object": is_object,
            "sha256": hashlib.sha256(chunk).hexdigest(),
        }
        for (array, is_object), chunk in zip(arrays, data, strict=True)
    ]
    header_bytes = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    signature = UNSIGNED if key is None else sign(key, header_bytes)
    preamble = PREAMBLE.pack(
        MAGIC, len(header_bytes), hashlib.sha256(header_bytes).digest(), signature
    )
    return b"".join([preamble, header_bytes, *data])


def sign(key, header_bytes):
    return hmac.new(key, header_bytes, hashlib.sha256).digest()


def encode_value(value, arrays, path):
    """``value`` as JSON, its arrays appended to ``arrays`` as (array, is_object)."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | np.integer) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else {"float": repr(float(value))}
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, list):
        return [encode_value(v, arrays, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, tuple):
        return {
            "tuple": [
                encode_value(v, arrays, f"{path}[{i}]") for i, v in enumerate(value)
            ]
        }
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError(f"{path}: a model file holds dicts with string keys only.")
        return {
            "dict": {
                k: encode_value(v, arrays, f"{path}[{k!r}]") for k, v in value.items()
            }
        }
    if isinstance(value, np.ndarray):
        arrays.append(savable_array(value, path))
        return {"array": len(arrays) - 1}
    if isinstance(value, np.dtype):
        return {"dtype": value.name}
    if isinstance(value, type) and issubclass(value, np.generic | bool | int | float):
        name = np.dtype(value).name
        if name not in SCALAR_TYPES:
            raise TypeError(f"{path} is {name}, which a model file cannot hold.")
        return {"scalar_type": name}
    if isinstance(value, MEstimate):
        return {
            "MEstimate": {
                "m": encode_value(value.m, arrays, f"{path}.m"),
                "prior": encode_value(value.prior, arrays, f"{path}.prior"),
            }
        }
    raise TypeError(
        f"{path} is a {type(value).__name__}, which a model file cannot hold: "
        "parameters are numbers, strings, booleans, None, arrays, lists, dicts, "
        "NumPy types and MEstimate (a file holds no code)."
    )


def savable_array(array, path):
    """(array in a dtype a file holds, whether it was an object array)."""
    if array.ndim > MAX_DIMENSIONS:
        raise TypeError(f"{path}: a model file holds arrays of at most 2 dimensions.")
    is_object = array.dtype == object
    if is_object:
        kinds = {type(item) for item in array.flat}
        if all(issubclass(kind, str) for kind in kinds):
            array = array.astype(str)
        elif kinds and not any(issubclass(kind, str | bytes) for kind in kinds):
            array = np.asarray(array.tolist())
        if array.dtype == object:
            raise TypeError(
                f"{path} is an object array of {sorted(k.__name__ for k in kinds)}: "
                "a model file holds arrays of numbers or of strings."
            )
    # (not ascontiguousarray: it makes 0-d arrays 1-d)
    array = array.astype(array.dtype.newbyteorder("<"), order="C", copy=False)
    if not ARRAY_DTYPE.fullmatch(array.dtype.str):
        raise TypeError(
            f"{path} has dtype {array.dtype}: a model file holds boolean, "
            "integer, float and string arrays."
        )
    return array, bool(is_object)


# -- reading ---------------------------------------------------------------------


def remaining_size(file):
    """How many bytes ``file`` holds from where it is, or None if it cannot
    tell (a pipe, a socket): then sizes are checked as the file is read."""
    try:
        if not file.seekable():
            return None
        start = file.tell()
        end = file.seek(0, os.SEEK_END)
        file.seek(start)
    except (AttributeError, OSError):
        return None
    return end - start


def decode_model(file, key, adopt=True):
    """The model in ``file``, checked; with ``adopt`` False, the ModelState
    of a model file (format 1) as it is, unchecked by from_state."""
    size = remaining_size(file)
    preamble = read_exactly(file, PREAMBLE.size, "its first bytes")
    magic, header_length, header_sha256, signature = PREAMBLE.unpack(preamble)
    if magic != MAGIC:
        raise ModelFileError("Not a fastnb model file: it does not start as one.")
    if header_length > MAX_HEADER_BYTES or (
        size is not None and PREAMBLE.size + header_length > size
    ):
        raise ModelFileError(
            f"The file declares a header of {header_length} bytes, which it "
            "does not hold: it is truncated or damaged."
        )
    header_bytes = read_exactly(file, header_length, "its header")
    if hashlib.sha256(header_bytes).digest() != header_sha256:
        raise ModelFileError(
            "The file's header does not match its checksum: it is damaged or "
            "was changed."
        )
    check_signature(signature, header_bytes, key)
    header = parse_header(header_bytes)
    names = array_names(header)
    labels = [array_label(i, names.get(i)) for i in range(len(header["arrays"]))]
    specs = [
        array_spec(spec, label)
        for spec, label in zip(header["arrays"], labels, strict=True)
    ]
    data_size = sum(spec[2] for spec in specs)
    if size is not None and PREAMBLE.size + header_length + data_size != size:
        raise ModelFileError(
            f"The header declares {data_size} bytes of arrays, but the file "
            f"holds {size - PREAMBLE.size - header_length}: it is truncated, "
            "damaged, or has data after the model."
        )
    arrays = [
        read_array(file, spec, label) for spec, label in zip(specs, labels, strict=True)
    ]
    if file.read(1):
        raise ModelFileError("The file has data after the model's arrays.")
    used = set()
    if header["format_version"] == MODEL_FORMAT_VERSION:
        state = decoded_state(header, arrays, used)
        check_all_used(used, arrays)
        return adopted(state) if adopt else state
    if not adopt:
        raise ModelFileError("The file holds no model state.")
    model = decode_content(header["content"], arrays, used, "content")
    check_all_used(used, arrays)
    return model


def check_all_used(used, arrays):
    if len(used) != len(arrays):
        raise ModelFileError("The file holds arrays that its model does not use.")


def decoded_state(fields, arrays, used):
    """The ModelState of a header's model fields (not yet checked)."""
    try:
        return ModelState(
            estimator=fields["estimator"],
            params=decode_value(fields["params"], arrays, used),
            classes=decode_value(fields["classes"], arrays, used),
            n_features_in=fields["n_features_in"],
            feature_names_in=decode_value(fields["feature_names_in"], arrays, used),
            statistics=decode_value(fields["statistics"], arrays, used),
        )
    except (KeyError, IndexError, TypeError, ValueError, RecursionError) as exc:
        raise ModelFileError(f"The file's header is not a model's: {exc}") from exc


def adopted(state):
    """The fastnb estimator of a state, checked by from_state."""
    try:
        return from_state(state)
    except (TypeError, ValueError) as exc:
        raise ModelFileError(
            f"The file's {state.estimator} is not a model that fit could make: {exc}"
        ) from exc


def decode_content(content, arrays, used, path):
    """The vectorizer, TfidfTransformer, estimator or Pipeline a file of
    format 2 holds, checked: only those classes are made, from parameters
    their constraints take (scikit-learn's validation) and fitted values
    that fit could make."""
    if not isinstance(content, dict) or len(content) != 1:
        raise ModelFileError(f"The file's {path} is not a model's.")
    ((kind, fields),) = content.items()
    if not isinstance(fields, dict):
        raise ModelFileError(f"The file's {path} is not a model's.")
    if kind == "model":
        if fields.keys() != HEADER_KEYS - {
            "format_version",
            "fastnb_version",
            "arrays",
        }:
            raise ModelFileError(f"The file's {path} is not a model's.")
        return adopted(decoded_state(fields, arrays, used))
    try:
        if kind == "vectorizer":
            return decoded_vectorizer(fields, arrays, used)
        if kind == "tfidf_transformer":
            return decoded_tfidf_transformer(fields, arrays, used)
        if kind == "pipeline" and fields.keys() == {"steps"}:
            steps = fields["steps"]
            if not isinstance(steps, list) or not steps:
                raise ValueError("a Pipeline has a list of steps")
            decoded = []
            for step in steps:
                if not (isinstance(step, list) and len(step) == 2):
                    raise ValueError("a step is a name and a model")
                name, step_content = step
                if not isinstance(name, str):
                    raise ValueError("a step's name is a str")
                decoded.append(
                    (
                        name,
                        decode_content(
                            step_content, arrays, used, f"{path}.steps[{name!r}]"
                        ),
                    )
                )
            pipeline = Pipeline(decoded)
            pipeline._validate_params()
            pipeline._validate_steps()
            return pipeline
    except ModelFileError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, RecursionError) as exc:
        raise ModelFileError(
            f"The file's {path} is not a {kind} that fit could make: {exc}"
        ) from exc
    raise ModelFileError(f"The file's {path} holds an unknown kind {kind!r}.")


def decoded_params(cls, fields, arrays, used):
    """An instance of cls with the file's parameters, checked by
    scikit-learn's constraints of the class (callables are not among what
    a file holds)."""
    params = decode_value(fields["params"], arrays, used)
    if not isinstance(params, dict):
        raise ValueError("its parameters are a dict")
    made = cls(**params)
    made._validate_params()
    return made


def checked_idf(idf, n_terms):
    """An idf_ array as fit makes it: 1-D float64 (or float32, of float32
    counts), a value a term, each finite and at least 1."""
    if not (
        isinstance(idf, np.ndarray)
        and idf.dtype in (np.float64, np.float32)
        and idf.shape == (n_terms,)
        and np.all(np.isfinite(idf))
        and np.all(idf >= 1.0)
    ):
        raise ValueError(f"idf_ must be {n_terms} finite floats of 1 or more")
    return idf


def decoded_vectorizer(fields, arrays, used):
    """A fastnb.text vectorizer of a file's fields, checked."""
    if fields.keys() != {"class", "params", "fitted"}:
        raise ValueError("a vectorizer has a class, parameters and fitted values")
    cls = VECTORIZERS.get(fields["class"])
    if cls is None:
        raise ValueError(
            f"unknown vectorizer {str(fields['class'])[:MAX_NAME_CHARS]!r}"
        )
    vectorizer = decoded_params(cls, fields, arrays, used)
    vectorizer._validate_ngram_range()
    fitted = fields["fitted"]
    if cls is _text.HashingVectorizer:
        if fitted is not None:
            raise ValueError("a HashingVectorizer has no fitted values")
        return vectorizer
    if not isinstance(fitted, dict) or fitted.keys() != {"terms", "fixed", "idf"}:
        raise ValueError("a fitted vectorizer has its terms")
    terms = decode_value(fitted["terms"], arrays, used)
    if not (
        isinstance(terms, np.ndarray)
        and terms.ndim == 1
        and len(terms)
        and all(type(term) is str for term in terms)
        and len(set(terms)) == len(terms)
    ):
        raise ValueError("its terms are distinct strings, one at least")
    if not isinstance(fitted["fixed"], bool) or fitted["fixed"] != (
        vectorizer.vocabulary is not None
    ):
        raise ValueError("its vocabulary is fixed exactly where one was given")
    # The indices as fit leaves them: NumPy's where max_features chose the
    # terms (see fastnb.text.CountVectorizer.fit_transform).
    indices = range(len(terms))
    if vectorizer.max_features is not None and not fitted["fixed"]:
        indices = np.arange(len(terms))
    vectorizer.vocabulary_ = dict(zip(terms.tolist(), indices, strict=True))
    vectorizer.fixed_vocabulary_ = fitted["fixed"]
    idf = decode_value(fitted["idf"], arrays, used)
    if isinstance(vectorizer, _text.TfidfVectorizer) and vectorizer.use_idf:
        transformer = TfidfTransformer(
            norm=vectorizer.norm,
            use_idf=True,
            smooth_idf=vectorizer.smooth_idf,
            sublinear_tf=vectorizer.sublinear_tf,
        )
        transformer.idf_ = checked_idf(idf, len(terms))
        transformer.n_features_in_ = len(terms)
        vectorizer._tfidf = transformer
    elif isinstance(vectorizer, _text.TfidfVectorizer):
        if idf is not None:
            raise ValueError("a TfidfVectorizer without use_idf has no idf_")
        vectorizer._tfidf = TfidfTransformer(
            norm=vectorizer.norm,
            use_idf=False,
            smooth_idf=vectorizer.smooth_idf,
            sublinear_tf=vectorizer.sublinear_tf,
        )
        vectorizer._tfidf.n_features_in_ = len(terms)
    elif idf is not None:
        raise ValueError("a CountVectorizer has no idf_")
    return vectorizer


def decoded_tfidf_transformer(fields, arrays, used):
    """scikit-learn's TfidfTransformer of a file's fields, checked."""
    if fields.keys() != {"params", "idf", "n_features_in"}:
        raise ValueError("a TfidfTransformer has parameters, idf_ and n_features_in_")
    transformer = decoded_params(TfidfTransformer, fields, arrays, used)
    n_features = fields["n_features_in"]
    if type(n_features) is not int or n_features < 1:
        raise ValueError("n_features_in_ is a positive int")
    idf = decode_value(fields["idf"], arrays, used)
    if transformer.use_idf:
        transformer.idf_ = checked_idf(idf, n_features)
    elif idf is not None:
        raise ValueError("a TfidfTransformer without use_idf has no idf_")
    transformer.n_features_in_ = n_features
    return transformer


def read_exactly(file, n_bytes, what):
    """``n_bytes`` from ``file``, read a chunk at a time; ModelFileError if the
    file ends first."""
    chunks = []
    remaining = n_bytes
    while remaining:
        chunk = file.read(min(remaining, READ_CHUNK))
        if not chunk:
            raise ModelFileError(
                f"The file ends within {what}: it is truncated or not a fastnb "
                "model file."
            )
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def check_signature(signature, header_bytes, key):
    if key is None:
        if signature != UNSIGNED:
            raise ModelFileError(
                "The file is signed: pass its key (fastnb.load(file, key=...)) "
                "to check its signature."
            )
        return
    if signature == UNSIGNED:
        raise ModelFileError("The file is not signed, and a key was given.")
    if not hmac.compare_digest(signature, sign(key, header_bytes)):
        raise ModelFileError(
            "The file's signature does not match the key: it was changed since "
            "it was signed, or signed with another key."
        )


def parse_header(header_bytes):
    """The header as a dict with exactly HEADER_KEYS, of this format version."""
    try:
        header = json.loads(header_bytes.decode("utf-8"), parse_constant=not_json)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelFileError(f"The file's header is not JSON: {exc}") from exc
    if not isinstance(header, dict):
        raise ModelFileError("The file's header is not a JSON object.")
    version = header.get("format_version")
    if (
        version not in (MODEL_FORMAT_VERSION, FORMAT_VERSION)
        or type(version) is not int
    ):
        written_by = header.get("fastnb_version")
        raise ModelFileError(
            f"The file is of format version {version!r} (written by fastnb "
            f"{written_by!r}); this fastnb reads format versions "
            f"{MODEL_FORMAT_VERSION} to {FORMAT_VERSION}."
        )
    keys = HEADER_KEYS if version == MODEL_FORMAT_VERSION else CONTENT_HEADER_KEYS
    if header.keys() != keys:
        missing, unknown = keys - header.keys(), header.keys() - keys
        raise ModelFileError(
            f"The file's header lacks {sorted(missing)} and has unknown "
            f"{sorted(unknown)}."
        )
    if not isinstance(header["arrays"], list):
        raise ModelFileError("The file's header lists no arrays.")
    return header


def not_json(constant):
    raise ValueError(f"{constant} is not JSON")


def array_names(header):
    """What each array of the header holds, by index: the name of the statistic
    (``'feature_count'``, ``'categories[2]'``) or of the value
    (``'classes'``, ``'params.class_prior'``) that refers to it.

    Read before the header is checked, for messages only: parts that are not
    what encode_value writes are passed over, and an array that nothing
    refers to has no name.
    """
    names = {}

    def walk(value, name):
        if isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, f"{name}[{i}]")
        elif isinstance(value, dict) and len(value) == 1:
            ((kind, content),) = value.items()
            if kind == "array" and type(content) is int:
                names.setdefault(content, name)
            elif kind == "dict" and isinstance(content, dict):
                for key, item in content.items():
                    walk(item, f"{name}.{key}" if name else key)
            elif kind == "tuple":
                walk(content, name)
            elif kind == "MEstimate" and isinstance(content, dict):
                for key, item in content.items():
                    walk(item, f"{name}.{key}")

    try:
        if "content" in header:
            walk(header["content"], "content")
        else:
            walk(header["params"], "params")
            walk(header["classes"], "classes")
            walk(header["feature_names_in"], "feature_names_in")
            # The statistics are the model: their names go without a prefix.
            walk(header["statistics"], "")
    except (RecursionError, KeyError):
        pass  # nested deeper than a model's header: decode_value refuses it
    return names


def array_label(index, name):
    """How messages name the header's array ``index``, holding ``name``."""
    if not name:
        return f"array {index}"
    if not name.isprintable():
        name = repr(name)[1:-1]
    if len(name) > MAX_NAME_CHARS:
        name = name[: MAX_NAME_CHARS - 3] + "..."
    return f"array '{name}' ({index})"


def array_spec(spec, label):
    """(dtype, shape, byte count, is_object, sha256) of the header's array."""
    where = f"The file's {label}"
    if not isinstance(spec, dict) or spec.keys() != {
        "dtype",
        "shape",
        "object",
        "sha256",
    }:
        raise ModelFileError(f"{where} is not described as an array is.")
    dtype, shape = spec["dtype"], spec["shape"]
    if not isinstance(dtype, str) or not ARRAY_DTYPE.fullmatch(dtype):
        raise ModelFileError(f"{where} has dtype {dtype!r}, which a file cannot hold.")
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_DIMENSIONS
        or not all(type(n) is int and n >= 0 for n in shape)
    ):
        raise ModelFileError(f"{where} has shape {shape!r}, which a file cannot hold.")
    if not isinstance(spec["object"], bool) or not isinstance(spec["sha256"], str):
        raise ModelFileError(f"{where} is not described as an array is.")
    dtype = np.dtype(dtype)
    n_bytes = math.prod(shape) * dtype.itemsize
    return dtype, tuple(shape), n_bytes, spec["object"], spec["sha256"]


def read_array(file, spec, label):
    dtype, shape, n_bytes, is_object, sha256 = spec
    data = read_exactly(file, n_bytes, f"its {label}")
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ModelFileError(
            f"The file's {label} does not match its checksum: it is "
            "damaged or was changed."
        )
    if dtype.kind == "U" and n_bytes and np.frombuffer(data, "<u4").max() > 0x10FFFF:
        # Beyond Unicode: NumPy would fail to make them str.
        raise ModelFileError(f"The file's {label} holds invalid characters.")
    array = np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    if is_object:
        array = np.array(array.tolist(), dtype=object).reshape(shape)
    return array


def decode_value(value, arrays, used):
    """A value written by encode_value; each array may be used once."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [decode_value(v, arrays, used) for v in value]
    if not isinstance(value, dict) or len(value) != 1:
        raise ValueError(f"{value!r} is not a value a model file holds")
    ((kind, content),) = value.items()
    if kind == "array" and type(content) is int and content not in used:
        used.add(content)
        return arrays[content]
    if kind == "dict" and isinstance(content, dict):
        return {k: decode_value(v, arrays, used) for k, v in content.items()}
    if kind == "tuple" and isinstance(content, list):
        return tuple(decode_value(v, arrays, used) for v in content)
    if kind == "float" and content in ("nan", "inf", "-inf"):
        return float(content)
    if kind == "dtype" and content in ("float32", "float64"):
        return np.dtype(content)
    if kind == "scalar_type" and content in SCALAR_TYPES:
        return np.dtype(content).type
    if (
        kind == "MEstimate"
        and isinstance(content, dict)
        and content.keys()
        == {
            "m",
            "prior",
        }
    ):
        return MEstimate(
            decode_value(content["m"], arrays, used),
            decode_value(content["prior"], arrays, used),
        )
    raise ValueError(f"{value!r} is not a value a model file holds")
