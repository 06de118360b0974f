"""scikit-learn's messages: where scikit-learn's naive_bayes raises or warns,
fastnb's error or warning for the same problem contains scikit-learn's text,
so that code and tests matching on it keep working. fastnb may say more
(where the first bad value is, what to do).

Each case runs on both libraries; the expected text is what scikit-learn
says, read at run time.
"""

import warnings

import numpy as np
import pytest
import sklearn.naive_bayes

import fastnb

X = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0], [2.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
Y = np.array([0, 1, 0, 1])


def with_nan(X):
    X = X.copy()
    X[1, 1] = np.nan
    return X


def with_inf(X):
    X = X.copy()
    X[2, 0] = np.inf
    return X


def first_line(message):
    """scikit-learn's NaN message goes on for lines about imputers; fastnb
    keeps its first sentence and says where the NaN is."""
    return message.splitlines()[0]


# name: (estimator, action on a class of it, which part of scikit-learn's
# message fastnb must contain). The action raises or warns in both libraries.
CASES = {
    "partial_fit without classes": (
        "MultinomialNB",
        lambda cls: cls().partial_fit(X, Y),
        str,
    ),
    "partial_fit with other classes": (
        "MultinomialNB",
        lambda cls: (
            cls().partial_fit(X, Y, classes=[0, 1]).partial_fit(X, Y, classes=[0, 1, 2])
        ),
        str,
    ),
    "GaussianNB partial_fit with other classes": (
        "GaussianNB",
        lambda cls: (
            cls().partial_fit(X, Y, classes=[0, 1]).partial_fit(X, Y, classes=[0, 1, 2])
        ),
        str,
    ),
    "unknown label in partial_fit": (
        "GaussianNB",
        lambda cls: cls().partial_fit(X, Y, classes=[0, 1]).partial_fit(X, Y + 1),
        str,
    ),
    "alpha array of the wrong length": (
        "MultinomialNB",
        lambda cls: cls(alpha=np.ones(2)).fit(X, Y),
        str,
    ),
    "BernoulliNB alpha array of the wrong length": (
        "BernoulliNB",
        lambda cls: cls(alpha=np.ones(2)).fit(X, Y),
        str,
    ),
    "negative value in alpha": (
        "MultinomialNB",
        lambda cls: cls(alpha=np.array([1.0, -1.0, 1.0])).fit(X, Y),
        str,
    ),
    "negative alpha": (
        "ComplementNB",
        lambda cls: cls(alpha=-1.0).fit(X, Y),
        str,
    ),
    "alpha too small": (
        "MultinomialNB",
        lambda cls: cls(alpha=0.0, force_alpha=False).fit(X, Y),
        str,
    ),
    "alpha array too small": (
        "MultinomialNB",
        lambda cls: cls(alpha=np.array([1.0, 0.0, 1.0]), force_alpha=False).fit(X, Y),
        str,
    ),
    "class_prior of the wrong length": (
        "MultinomialNB",
        lambda cls: cls(class_prior=[0.2, 0.3, 0.5]).fit(X, Y),
        str,
    ),
    "priors of the wrong length": (
        "GaussianNB",
        lambda cls: cls(priors=[0.2, 0.3, 0.5]).fit(X, Y),
        str,
    ),
    "priors not summing to 1": (
        "GaussianNB",
        lambda cls: cls(priors=[0.2, 0.3]).fit(X, Y),
        str,
    ),
    "negative priors": (
        "GaussianNB",
        lambda cls: cls(priors=[-0.2, 1.2]).fit(X, Y),
        str,
    ),
    "negative var_smoothing": (
        "GaussianNB",
        lambda cls: cls(var_smoothing=-1.0).fit(X, Y),
        str,
    ),
    "negative counts": (
        "MultinomialNB",
        lambda cls: cls().fit(-X, Y),
        str,
    ),
    "ComplementNB negative counts": (
        "ComplementNB",
        lambda cls: cls().fit(-X, Y),
        str,
    ),
    "negative category codes": (
        "CategoricalNB",
        lambda cls: cls().fit(-X, Y),
        str,
    ),
    "min_categories of the wrong type": (
        "CategoricalNB",
        lambda cls: cls(min_categories=np.array([2.0, 2.0, 2.0])).fit(X, Y),
        str,
    ),
    "NaN in X": ("MultinomialNB", lambda cls: cls().fit(with_nan(X), Y), first_line),
    "GaussianNB NaN in X": (
        "GaussianNB",
        lambda cls: cls().fit(with_nan(X), Y),
        first_line,
    ),
    "CategoricalNB NaN in X": (
        "CategoricalNB",
        lambda cls: cls().fit(with_nan(X), Y),
        first_line,
    ),
    "infinity in X": (
        "MultinomialNB",
        lambda cls: cls().fit(with_inf(X), Y),
        str,
    ),
    "GaussianNB infinity in X at predict": (
        "GaussianNB",
        lambda cls: cls().fit(X, Y).predict(with_inf(X)),
        str,
    ),
    "NaN in X at predict": (
        "BernoulliNB",
        lambda cls: cls().fit(X, Y).predict(with_nan(X)),
        first_line,
    ),
    "sample_weight of the wrong length": (
        "MultinomialNB",
        lambda cls: cls().fit(X, Y, sample_weight=np.ones(3)),
        str,
    ),
    "y of the wrong length": ("GaussianNB", lambda cls: cls().fit(X, Y[:3]), str),
    "X with fewer features at predict": (
        "MultinomialNB",
        lambda cls: cls().fit(X, Y).predict(X[:, :2]),
        str,
    ),
    "X with fewer features in partial_fit": (
        "GaussianNB",
        lambda cls: cls().partial_fit(X, Y, classes=[0, 1]).partial_fit(X[:, :2], Y),
        str,
    ),
    "X without samples": ("CategoricalNB", lambda cls: cls().fit(X[:0], Y[:0]), str),
    "not fitted": ("ComplementNB", lambda cls: cls().predict(X), str),
}


def outcome(module, name, action):
    """(exception or warning class, message) of the action with ``module``'s
    estimator; fails if the action neither raises nor warns."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            action(getattr(module, name))
        except Exception as exc:
            return type(exc), str(exc)
    assert caught, f"{module.__name__}.{name}: neither raised nor warned"
    return caught[0].category, str(caught[0].message)


@pytest.mark.parametrize("case", CASES)
def test_fastnb_says_what_scikit_learn_says(case):
    name, action, expected_part = CASES[case]
    sklearn_type, sklearn_message = outcome(sklearn.naive_bayes, name, action)
    fastnb_type, fastnb_message = outcome(fastnb, name, action)
    assert issubclass(fastnb_type, sklearn_type)
    assert expected_part(sklearn_message) in fastnb_message


@pytest.mark.parametrize(
    "name", ["MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB"]
)
def test_unknown_labels_in_partial_fit_use_gaussian_nb_s_words(name):
    # scikit-learn's discrete estimators ignore a label that is not among
    # the classes; fastnb refuses it, in the words of scikit-learn's GaussianNB.
    _, expected = outcome(
        sklearn.naive_bayes,
        "GaussianNB",
        lambda cls: cls().partial_fit(X, Y, classes=[0, 1]).partial_fit(X, Y + 1),
    )
    model = getattr(fastnb, name)().partial_fit(X, Y, classes=[0, 1])
    with pytest.raises(ValueError) as raised:
        model.partial_fit(X, Y + 1)
    assert expected in str(raised.value)
