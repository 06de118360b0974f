"""scikit-learn's API conformance checks on every fastnb estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

import fastnb


@parametrize_with_checks(
    [fastnb.MultinomialNB(), fastnb.ComplementNB(), fastnb.BernoulliNB()]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
