"""Public default ranges of the simple-regression releases, computed from the public bounds only.

* :func:`default_prediction_range` -- the output range of DP Theil-Sen's predictions;
* :func:`default_slope_range` -- the slope range of the Sarathy–Vadhan slope interval.
"""

from __future__ import annotations

from typing import Any

from dpreg._validation import DEPRECATED, check_bounds, renamed_parameters

__all__ = ["default_prediction_range", "default_slope_range"]


@renamed_parameters(bounds_y="y_bounds")
def default_prediction_range(y_bounds: tuple[float, float], *, bounds_y: Any = DEPRECATED
                             ) -> tuple[float, float]:
    """Public default output range for DP Theil-Sen predictions: ``y_bounds`` widened by half
    its width on each side (Alabi et al. Table 1: [−0.5, 1.5] for y in [0, 1]).  ``bounds_y=``
    is the deprecated spelling of ``y_bounds`` (kept for one release)."""
    lo, hi = check_bounds(y_bounds, "y_bounds")
    w = hi - lo
    return (lo - 0.5 * w, hi + 0.5 * w)


def default_slope_range(x_bounds: tuple[float, float], y_bounds: tuple[float, float]
                        ) -> tuple[float, float]:
    """Public default range for DP slopes: ±10·(y width)/(x width).

    Any line through two points of the bounding box with x-distance at least a tenth of the
    x range has a slope in this range; steeper pair slopes are clipped (the median is robust to
    that unless more than half the pairs are that steep).
    """
    r = 10.0 * (y_bounds[1] - y_bounds[0]) / (x_bounds[1] - x_bounds[0])
    return (-r, r)
