"""scikit-learn's estimator checks for AutoDPRegression (several features: DP-GD or TukeyEM;
public bounds)."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpreg.auto import AutoDPRegression

B = (-10, 10)


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
@parametrize_with_checks([AutoDPRegression(epsilon=1.0, delta=1e-6, bounds_X=B, bounds_y=B,
                                           random_state=0)])
def test_sklearn_contract(estimator, check):
    check(estimator)
