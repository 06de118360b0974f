"""What the estimators that wrap a fastnb estimator share (OneVsRestNB,
SemiSupervisedNB): the wrapped estimator, MultinomialNB by default, copied
unfitted for each model they make, and the input it takes.

Above the families (it names the default one), below the wrappers.
"""

from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone

from fastnb._base import BaseNB
from fastnb._discrete import MultinomialNB


class WrapsNB(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """A classifier made of models of its ``estimator`` parameter."""

    _parameter_constraints: dict = {"estimator": [BaseNB, None]}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self._inner().__sklearn_tags__()
        tags.input_tags = inner.input_tags
        tags.classifier_tags.poor_score = inner.classifier_tags.poor_score
        return tags

    def _inner(self):
        """An unfitted copy of the wrapped estimator (MultinomialNB by default)."""
        if self.estimator is None:
            return MultinomialNB()
        return clone(self.estimator)
