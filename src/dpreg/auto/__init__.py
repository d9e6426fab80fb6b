"""DP algorithm selection (``method="auto"``) and bounds-free fitting (``bounds="private"``).

**Simple regression (one x).**  Alabi et al. (2022) found that the better of DP Theil-Sen and
noisy sufficient statistics depends on εn·var(x) and σ_e, which are private.  ``auto`` spends
``selection_fraction`` (default 5%) of ε, split equally, on two Laplace releases: nvar(x) =
Σ(x − x̄)² of the clipped x (:func:`dpreg.preprocess.noisy_nvar`) and the number of rows at or
beyond the bounds (:func:`dpreg.preprocess.noisy_boundary_count`).  It computes

    u = ε² · nvar̃(x) / w_x²     (w_x = width of the x bounds)
    sharẽ = count̃ / n,  z = count̃ / √n,  σ̃_x² = nvar̃(x) / (n·w_x²)     (n public: replace-one)

and runs, on the remaining ε, NoisyStats when ``u·(max(sharẽ, 0) + NS_S0) > NS_K`` and
``z·σ̃_x²/NS_SPREAD_REFERENCE < NS_BOUNDARY_LIMIT`` (:func:`choose_noisy_stats`), DP Theil-Sen
with the exponential-mechanism median and 10 round-robin matchings otherwise.  Because
σ_x² <= w_x²/4 for data inside the bounds, the NoisyStats branch is out of reach when
ε²·n·(NS_S0/4 + NS_BOUNDARY_LIMIT·NS_SPREAD_REFERENCE/√n) <= NS_K; then the choice is
Theil-Sen whatever the data and no budget is spent on selection (:func:`selection_possible`, a
function of public n and ε).  Why
these two: NoisyStats' privacy noise relative to its sampling error falls like
1/(ε·√nvar(x)·σ_e) while Theil-Sen's falls like 1/(ε·√n), so at a fixed ε·nvar(x) a larger ε
favours NoisyStats (u, not ε·nvar(x), separates dpreg's measurements); and clipping y biases
every mean-based estimate by a fixed amount but leaves the conditional median -- what Theil-Sen
estimates -- alone, and that bias counts against a sampling error that falls like 1/√n, so
NoisyStats only pays when the clipped count is small next to √n.  The constants were derived from
dpreg's own harness runs (``studies/auto.py`` in the source repository, docs/auto.md §3).

**Several x.**  With n public (replace-one, the relation the whole pipeline is stated for):

* some bounds ``"private"``: TukeyEM when the propose-test-release step is predicted to pass
  with probability >= ``TUKEY_PASS_PROBABILITY`` (:func:`tukey_pass_probability`, a computation
  on simulated Gaussian models -- public); it needs no bounds, so the bounds budget is saved;
* otherwise DP-GD (clipped full-batch DP gradient descent under replace-one, with its default
  step-count and clip rule; the clip grows for a response spread over much of its bounds, from
  DP-GD's own 5% release of the response's spread, so nothing is spent on a selection).
  Derived on development data only (docs/accuracy.md §12); with public bounds TukeyEM is no
  longer chosen (within 1.25× of the best method in 3 of the 13 development cells where the old
  rule picked it), nor AdaSSP (§12.6: once DP-GD's clip read the spread, DP-GD alone beat every
  threshold of the earlier spread selection).

**Bounds-free mode.**  ``x_bounds="private"`` / ``y_bounds="private"`` spends ``bounds_fraction``
(default 20%) of ε on DP bounds for every such column (:func:`dpreg.preprocess.propose_bounds`,
split equally between the columns), clips the data to them and passes them to the method as its
public bounds (post-processing of DP outputs).

Privacy: the pieces compose sequentially on one ledger; the result's ``privacy`` is the sum
(ε-DP for one x; (ε, δ)-DP for several), under replace-one neighbours with n public.
"""

from dpreg.auto.estimator import AutoDPRegression
from dpreg.auto.fit import charged_budget, check_options, fit_auto
from dpreg.auto.rules import (
    BOUNDS_FRACTION,
    NS_BOUNDARY_LIMIT,
    NS_K,
    NS_S0,
    NS_SPREAD_REFERENCE,
    NS_U_THRESHOLD,
    SELECTION_FRACTION,
    TS_MATCHINGS,
    TUKEY_PASS_PROBABILITY,
    boundary_statistic,
    choose_multivariate,
    choose_noisy_stats,
    choose_simple,
    choose_simple_array,
    selection_possible,
    selection_statistic,
    split_budget,
    split_selection,
    tukey_pass_probability,
)

__all__ = [
    "SELECTION_FRACTION",
    "BOUNDS_FRACTION",
    "NS_U_THRESHOLD",
    "NS_BOUNDARY_LIMIT",
    "NS_K",
    "NS_S0",
    "NS_SPREAD_REFERENCE",
    "TS_MATCHINGS",
    "TUKEY_PASS_PROBABILITY",
    "split_selection",
    "split_budget",
    "selection_statistic",
    "boundary_statistic",
    "choose_simple",
    "choose_simple_array",
    "choose_noisy_stats",
    "selection_possible",
    "tukey_pass_probability",
    "choose_multivariate",
    "fit_auto",
    "check_options",
    "charged_budget",
    "AutoDPRegression",
]
