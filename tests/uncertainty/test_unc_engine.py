"""The parametric-bootstrap engine: interval constructions, ⊥ replicates, caching, transforms."""

import math

import numpy as np
import pytest
from scipy import stats

from dpreg.exceptions import InvalidInputError
from dpreg.inference import RegressionResults
from dpreg.inference.dpci import BootstrapModel, ParametricBootstrap
from dpreg.inference.dpci.engine import KINDS
from dpreg.privacy import Neighbouring, PrivacyStatement, PureDP


class GaussianModel(BootstrapModel):
    """Estimate ~ N(θ, s²) exactly (known s): every construction is the z interval."""

    names = ["a", "b"]
    description = "toy"

    def __init__(self, est=(1.0, -2.0), sd=(0.5, 2.0), fail=0.0, shift=0.0):
        self.est = np.array(est)
        self.sd = np.array(sd)
        self.fail = fail
        self.shift = shift

    def released(self):
        return self.est.copy(), np.diag(self.sd**2)

    def replicate(self, size, rng):
        draws = self.est + self.shift + rng.standard_normal((size, 2)) * self.sd
        cov = np.broadcast_to(np.diag(self.sd**2), (size, 2, 2)).copy()
        ok = rng.random(size) >= self.fail
        return draws, cov, ok

    def confidence_draws(self, size, rng):
        """The exact confidence distribution of a Gaussian estimate, N(θ̂, s²) (used by
        kind="inversion")."""
        return self.est + rng.standard_normal((size, 2)) * self.sd


@pytest.mark.parametrize("kind", KINDS)
def test_every_construction_recovers_the_z_interval(kind):
    boot = ParametricBootstrap(GaussianModel(), n_boot=40_000, kind=kind, rng=1)
    ci = boot.conf_int(0.1)
    z = stats.norm.ppf(0.95)
    # quantile MC error with B = 40,000 is about 0.01 sd
    for j, (mu, sd) in enumerate([(1.0, 0.5), (-2.0, 2.0)]):
        assert ci["lower"].iloc[j] == pytest.approx(mu - z * sd, abs=0.04 * sd)
        assert ci["upper"].iloc[j] == pytest.approx(mu + z * sd, abs=0.04 * sd)
    assert list(ci.index) == ["a", "b"]


def test_basic_corrects_a_bias_that_percentile_keeps():
    """Replicates centred 1.0 above the estimate (a bias the world reproduces): the basic
    interval moves down by it, the percentile interval up."""
    m = GaussianModel(shift=1.0)
    perc = ParametricBootstrap(m, n_boot=20_000, kind="percentile", rng=2).conf_int(0.05)
    basic = ParametricBootstrap(m, n_boot=20_000, kind="basic", rng=2).conf_int(0.05)
    mid_p = (perc["lower"] + perc["upper"]) / 2
    mid_b = (basic["lower"] + basic["upper"]) / 2
    np.testing.assert_allclose(mid_p - m.est, 1.0, atol=0.05)
    np.testing.assert_allclose(mid_b - m.est, -1.0, atol=0.05)


def test_failed_replicates_are_dropped_and_counted():
    boot = ParametricBootstrap(GaussianModel(fail=0.3), n_boot=5000, rng=3)
    assert boot.draws.shape[0] == pytest.approx(3500, abs=150)
    assert boot.failure_rate == pytest.approx(0.3, abs=0.03)
    # all replicates failing: no interval, NaN (never a made-up number)
    none = ParametricBootstrap(GaussianModel(fail=1.0), n_boot=100, rng=3)
    assert none.conf_int(0.05).isna().all().all()


def test_draws_are_cached_and_reused_for_every_alpha():
    boot = ParametricBootstrap(GaussianModel(), n_boot=500, rng=4)
    a = boot.conf_int(0.05)
    b = boot.conf_int(0.05)
    assert a.equals(b)
    w05 = (a["upper"] - a["lower"]).to_numpy()
    w10 = (boot.conf_int(0.1)["upper"] - boot.conf_int(0.1)["lower"]).to_numpy()
    assert np.all(w10 < w05)


def test_linear_interval_and_transform():
    m = GaussianModel()
    boot = ParametricBootstrap(m, n_boot=20_000, rng=5)
    est, lo, hi = boot.linear_interval([1.0, 0.0], 0.05)
    ci = boot.conf_int(0.05)
    assert est == pytest.approx(1.0)
    assert lo == pytest.approx(ci.loc["a", "lower"]) and hi == pytest.approx(ci.loc["a", "upper"])
    # a + b has sd √(0.25 + 4)
    est, lo, hi = boot.linear_interval([1.0, 1.0], 0.05, offset=10.0)
    assert est == pytest.approx(9.0)
    assert hi - lo == pytest.approx(2 * 1.96 * math.sqrt(4.25), rel=0.04)
    # reparametrisation φ = 2θ + 1 under new names
    tb = ParametricBootstrap(m, n_boot=20_000, rng=5,
                             transform=(2 * np.eye(2), np.ones(2), ["u", "v"]))
    np.testing.assert_allclose(tb.estimate, [3.0, -3.0])
    np.testing.assert_allclose(tb.se, [1.0, 4.0])
    np.testing.assert_allclose(tb.conf_int(0.05).to_numpy(), 2 * ci.to_numpy() + 1, rtol=0.03)


def test_validation():
    with pytest.raises(InvalidInputError, match="kind"):
        ParametricBootstrap(GaussianModel(), kind="bca")
    with pytest.raises(InvalidInputError, match="n_boot"):
        ParametricBootstrap(GaussianModel(), n_boot=10)
    boot = ParametricBootstrap(GaussianModel(), n_boot=100, rng=0)
    with pytest.raises(InvalidInputError, match="alpha"):
        boot.conf_int(1.5)
    with pytest.raises(InvalidInputError, match="weights"):
        boot.linear_interval([1.0], 0.05)


def test_results_show_the_interval_method_and_cache_it():
    boot = ParametricBootstrap(GaussianModel(), n_boot=300, rng=6)
    stmt = PrivacyStatement(PureDP(1.0), Neighbouring.REPLACE_ONE, "toy", "test", True, {})
    calls = []

    def fn(alpha):
        calls.append(alpha)
        return boot.conf_int(alpha)

    r = RegressionResults(boot.estimate, names=["a", "b"], privacy=stmt, method="toy",
                          bse=boot.se, interval_fn=fn, uncertainty="DP-aware: toy",
                          ci_method="parametric bootstrap (percentile)", bootstrap=boot)
    r.conf_int(0.05)
    r.conf_int(0.05)
    assert calls == [0.05]
    text = str(r.summary())
    assert "Interval method:" in text and "parametric bootstrap (percentile)" in text
    assert r.to_dict()["ci_method"] == "parametric bootstrap (percentile)"
    # without an explicit label the method is derived and still reported
    plain = RegressionResults([1.0], names=["a"], privacy=stmt, method="toy", bse=[0.1])
    assert plain.ci_method.startswith("Wald")
    none = RegressionResults([1.0], names=["a"], privacy=stmt, method="toy")
    assert none.ci_method == "none"
