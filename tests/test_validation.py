import math

import numpy as np
import pandas as pd
import pytest

from dpreg import InvalidInputError
from dpreg._validation import (
    check_bounds,
    check_delta,
    check_epsilon,
    check_int,
    check_mu,
    check_probability,
    check_rho,
    check_rng,
    check_xy,
)


class TestRng:
    def test_none_gives_fresh_generators(self):
        a, b = check_rng(None), check_rng(None)
        assert isinstance(a, np.random.Generator)
        assert a.random() != b.random()

    def test_int_is_reproducible(self):
        assert check_rng(7).random() == check_rng(7).random()

    def test_seed_sequence(self):
        ss = np.random.SeedSequence(5)
        assert check_rng(ss).random() == np.random.default_rng(np.random.SeedSequence(5)).random()

    def test_generator_is_passed_through(self):
        g = np.random.default_rng(1)
        assert check_rng(g) is g

    def test_random_state_is_accepted(self):
        assert isinstance(check_rng(np.random.RandomState(3)), np.random.Generator)

    @pytest.mark.parametrize("bad", [-1, True, "seed", 1.5, [1, 2]])
    def test_bad(self, bad):
        with pytest.raises(InvalidInputError, match="rng"):
            check_rng(bad)


class TestScalars:
    @pytest.mark.parametrize("bad", [0, -1, -0.0, math.nan, "1", None, True])
    def test_epsilon_rejects(self, bad):
        with pytest.raises(InvalidInputError) as info:
            check_epsilon(bad)
        msg = str(info.value)
        assert "epsilon" in msg and "0 <" in msg and repr(bad) in msg

    def test_epsilon_inf(self):
        assert check_epsilon(math.inf) == math.inf
        with pytest.raises(InvalidInputError):
            check_epsilon(math.inf, allow_inf=False)

    @pytest.mark.parametrize("bad", [-0.1, 1.0, 1.5, math.nan, math.inf, "x"])
    def test_delta_rejects(self, bad):
        with pytest.raises(InvalidInputError, match=r"0 <= delta < 1"):
            check_delta(bad)

    def test_delta_zero(self):
        assert check_delta(0.0) == 0.0
        with pytest.raises(InvalidInputError, match=r"0 < delta < 1"):
            check_delta(0.0, allow_zero=False)

    @pytest.mark.parametrize("fn,name", [(check_rho, "rho"), (check_mu, "mu")])
    def test_rho_mu(self, fn, name):
        assert fn(0.5) == 0.5
        for bad in (0, -1, math.nan):
            with pytest.raises(InvalidInputError, match=name):
                fn(bad)

    def test_int_and_probability(self):
        assert check_int(3, "k", minimum=1) == 3
        with pytest.raises(InvalidInputError, match="k"):
            check_int(0, "k", minimum=1)
        with pytest.raises(InvalidInputError):
            check_int(2.5, "k")
        with pytest.raises(InvalidInputError, match="alpha"):
            check_probability(1.0, "alpha")


class TestBounds:
    def test_ok(self):
        assert check_bounds((0, 1)) == (0.0, 1.0)
        assert check_bounds(np.array([-1.0, 2.0]), "x_bounds") == (-1.0, 2.0)

    @pytest.mark.parametrize(
        "bad", [(1, 0), (0, 0), (math.nan, 1), (0, math.inf), "ab", (1,), None, (0, 1, 2), ("a", 1)]
    )
    def test_bad(self, bad):
        with pytest.raises(InvalidInputError) as info:
            check_bounds(bad, "x_bounds")
        assert "x_bounds" in str(info.value) and "lo < hi" in str(info.value)


class TestArrays:
    def test_ok(self):
        x, y = check_xy([1, 2, 3], [4, 5, 6])
        assert x.dtype == np.float64 and y.shape == (3,)

    def test_bool_is_numeric(self):
        x, _ = check_xy([True, False], [1, 2])
        assert list(x) == [1.0, 0.0]

    @pytest.mark.parametrize("bad", [[1, np.nan, 3], [1, np.inf, 3], [1, -np.inf, 3]])
    def test_non_finite(self, bad):
        with pytest.raises(InvalidInputError, match="finite"):
            check_xy(bad, [1, 2, 3])

    def test_empty(self):
        with pytest.raises(InvalidInputError, match="non-empty"):
            check_xy([], [])

    def test_mismatched(self):
        with pytest.raises(InvalidInputError, match="same number of rows; they differ"):
            check_xy([1, 2, 3], [1, 2])

    def test_min_rows(self):
        with pytest.raises(InvalidInputError, match="at least 3 rows"):
            check_xy([1, 2], [1, 2], min_rows=3)

    @pytest.mark.parametrize("bad", [["a", "b"], np.array([1 + 2j, 3j]), [object(), 1],
                                     np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]")])
    def test_non_numeric(self, bad):
        with pytest.raises(InvalidInputError, match="real numbers"):
            check_xy(bad, [1, 2])

    def test_dataframe_non_numeric_columns_named(self):
        df = pd.DataFrame({"a": [1.0, 2.0], "city": ["x", "y"]})
        with pytest.raises(InvalidInputError, match="city"):
            check_xy(df, [1, 2], x_ndim=2)

    def test_wrong_ndim(self):
        with pytest.raises(InvalidInputError, match="ndim"):
            check_xy(np.ones((2, 2)), [1, 2], x_ndim=1)
        with pytest.raises(InvalidInputError, match="ndim"):
            check_xy([1, 2], np.ones((2, 2)))
