"""``auto``: a private choice among the other methods (:mod:`dpreg.auto`), with DP bounds where
none are public.  The selector sits above the method registry (it fits the method it chooses
through its spec), so this spec names its functions by dotted path and imports them when
used."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dpreg._spec import IntervalSupport, MethodSpec, load

__all__ = ["AutoSpec", "SPECS"]


class AutoSpec(MethodSpec):
    name = "auto"
    algorithm = "private choice among the above (dpreg.auto)"
    features = "any"
    delta = "multi-x"
    guarantee = "one x: ε-DP; several x: (ε, δ)-DP"
    relation = "replace-one"
    min_rows = 2
    privacy_notes = ("accounting.md",)
    order = 1000
    estimator = "dpreg.auto:AutoDPRegression"
    is_selector = True
    target = "that of the method it chooses (the summary names it)"
    needs_bounds = False  # bounds="private": DP bounds from part of ε
    needs_rows = "it chooses privately among methods, some of which need every row"
    interval = IntervalSupport(
        missing="none: the chosen method's release gives no interval here",
        fit_statistics="the chosen method's release has no residual or total sum of squares")

    def check_options(self, options: Mapping[str, Any], *,
                      context: Mapping[str, Any] | None = None, fill: bool = False
                      ) -> dict[str, Any]:
        """``auto``'s own options and those it passes on to the chosen method
        (:func:`dpreg.auto.check_options`)."""
        load("dpreg.auto:check_options")(dict(options))
        return dict(options)

    def budget(self, *, epsilon: float, delta: float | None, options: Mapping[str, Any],
               n_features: int = 1) -> Any:
        return load("dpreg.auto:charged_budget")(epsilon=epsilon, delta=delta,
                                                 options=dict(options), n_features=n_features)

    def fit(self, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float | None,
            x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
            x_names: list[str], y_name: str, fit_intercept: bool, ledger: Any,
            random_state: Any, options: dict[str, Any], ci_alpha: float | None = None) -> Any:
        return load("dpreg.auto:fit_auto")(
            X, y, epsilon=epsilon, delta=delta, x_bounds=x_bounds, y_bounds=y_bounds,
            x_names=x_names, y_name=y_name, fit_intercept=fit_intercept, ledger=ledger,
            random_state=random_state, **options)


SPECS = (AutoSpec(),)
