"""``AutoDPRegression``: DP algorithm selection and bounds-free fitting as an estimator."""

from __future__ import annotations

from typing import Any

from dpreg.auto.fit import fit_auto
from dpreg.auto.rules import BOUNDS_FRACTION, SELECTION_FRACTION
from dpreg.exceptions import InvalidInputError
from dpreg.linear_model import DPRegressorBase, feature_names, resolve_bounds_X

__all__ = ["AutoDPRegression"]


class AutoDPRegression(DPRegressorBase):
    """Chooses the DP regression method privately and fits it (see :mod:`dpreg.auto`).

    One feature: ``selection_fraction`` of ε buys a noisy εn·var(x); NoisyStats or DP
    Theil-Sen (exponential median, 10 matchings) is run on the rest.  Several features:
    TukeyEM when its PTR step is predicted to pass (n, d public), else DP-GD.
    ``bounds_X="private"`` / ``bounds_y="private"`` (bounds-free mode) spends
    ``bounds_fraction`` of ε on DP bounds first.  The guarantee is ε-DP (one feature) or
    (ε, δ)-DP (several), replace-one neighbours with n public, for the whole pipeline; every
    step is charged to ``ledger``.  After ``fit``: ``method_`` (the chosen method),
    ``bounds_`` (bounds used, private ones included) and ``selection_`` (what the choice saw
    and spent), plus the usual ``coef_``, ``intercept_``, ``results_``, ``privacy_``.

    Parameters
    ----------
    epsilon, delta:
        Total budget of the pipeline (δ required with several features).
    bounds_X, bounds_y:
        Public ``(lo, hi)`` bounds (one pair, or one per feature), or ``"private"``.
    selection_fraction, bounds_fraction:
        Shares of ε for the selection statistics (default 0.05: noisy nvar(x) and the noisy
        count of rows on the bounds, half each) and the DP bounds (0.20).
    coarse_range:
        Public range searched by the DP bounds (default ±10⁶).
    fit_intercept, random_state, ledger:
        As for the other estimators.
    raise_on_failure:
        ``True`` (default): a ⊥ release (the mechanism's failure output) raises
        :class:`~dpreg.exceptions.MechanismFailure` from ``fit``.  ``False``: ``fit`` returns
        the estimator with ``results_.failed`` True and ``results_.reason`` (``predict`` then
        raises ``MechanismFailure``).  Either way the budget stays charged: ⊥ is itself a
        private output (docs/architecture.md, "Failure (⊥) policy").
    """

    def __init__(self, *, epsilon: float | None = None, delta: float | None = None,
                 bounds_X: Any = None, bounds_y: Any = None,
                 selection_fraction: float = SELECTION_FRACTION,
                 bounds_fraction: float = BOUNDS_FRACTION, coarse_range: Any = None,
                 fit_intercept: bool = True, random_state: Any = None, ledger: Any = None,
                 raise_on_failure: bool = True) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.selection_fraction = selection_fraction
        self.bounds_fraction = bounds_fraction
        self.coarse_range = coarse_range
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.ledger = ledger
        self.raise_on_failure = raise_on_failure

    def _fit(self, X: Any, y: Any) -> AutoDPRegression:
        eps = self._required_epsilon()
        Xa, ya = self._validate(X, y)
        d = Xa.shape[1]
        if isinstance(self.bounds_X, str):
            if self.bounds_X != "private":
                raise InvalidInputError(f"bounds_X must be (lo, hi) pairs or 'private'; got "
                                        f"{self.bounds_X!r}")
            bx: Any = "private"
        else:
            bx = resolve_bounds_X(self.bounds_X, d)
        if self.bounds_y is None:
            raise InvalidInputError("bounds_y is required: public (lo, hi) bounds for y, or "
                                    "'private' (bounds-free mode)")
        names = feature_names(X, d)
        res = fit_auto(Xa, ya, epsilon=eps, delta=self.delta, x_bounds=bx, y_bounds=self.bounds_y,
                       x_names=names, y_name="y", fit_intercept=bool(self.fit_intercept),
                       selection_fraction=self.selection_fraction,
                       bounds_fraction=self.bounds_fraction, coarse_range=self.coarse_range,
                       ledger=self.ledger, random_state=self.random_state)
        info = res.extra["auto"]
        self.method_ = info["method"]
        self.selection_ = dict(info)
        self.bounds_ = dict(res.bounds or {})
        return self._store(res)  # type: ignore[return-value]
