"""Which noisy-stats releases should carry an interval: the rule on n·ε alone against rules on
the release (evaluation only; issue 30, item 3).

For every repetition a real seeded ``noisy_stats(..., inference=True)`` release is made; its
interval is then computed whatever any rule says, so that every rule is judged on the same
releases:

``n·ε rule``        the rule before issue 30: offered when the public nvar-noise share
                    s = 4√2(1 − 1/n)/(0.3nε) is at most 2.5 % (n·ε >= ~755).
``release k, ...``  offered when the release's noisy nvar~ = Σ(x − x̄)² + L₂ is at least k
                    times the public noise sd √2·b of L₂ (r~ = nvar~/(√2b) >= k): with the
                    interval as it was (``plain``: nvar's posterior given only that the release
                    is not ⊥), with the selection conditioned on and a flat prior below the
                    threshold (``flat``), or with the prior ∝ (t/nvar)^½ there (``adjusted``,
                    what the library does).
``library``         the library's rule (:func:`dpreg.simple._interval_rule.interval_refusal`):
                    s <= 2.5 % offered (plain interval), s > 5 % refused, between the
                    ``release 3, adjusted`` rule; its intervals are the library's own
                    (``to_regression_results``).

Recorded per release: r~, the intervals at every α (percentile, the default) and their
coverage of the truth (as :mod:`studies.dpci_real`: ``residual`` and ``fixed`` truths of the
real sets; the synthetic designs of :mod:`studies.dpci`, fresh samples every repetition,
``synthetic-<design>-<n>``), width, the non-private OLS t-interval width on the same data and
whether the interval excludes its own estimate.  Intervals are computed only where some rule
offers them, so cells where a rule offers rarely can be run with many releases.

``python -m studies.interval_rule --datasets diabetes,star98,boston,fair --epsilons 0.5,1,4
--reps 400 --out F.csv``
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["release_records", "summarise_rules", "cell_design", "RULES"]

ALPHAS = (0.05, 0.1)


def rules(k: float = 3.0) -> tuple[tuple[str, str, float | None], ...]:
    """(rule, interval variant, k) of the study; k None = the rule's own decision column.
    ``k`` is the release rule's (the library uses 3)."""
    return (("n·ε rule", "plain", None), ("library", "library", None),
            (f"release {k:g}, plain", "plain", k), (f"release {k:g}, flat", f"flat {k:g}", k),
            (f"release {k:g}, adjusted", f"adjusted {k:g}", k))


RULES = rules()


def cell_design(name: str, kind: str) -> tuple[Any, int, np.ndarray]:
    """(design, n, truth): a real set of :mod:`studies.dpci_real` (``kind`` residual/fixed) or
    a synthetic design of :mod:`studies.dpci` (``name`` "synthetic-<design>-<n>")."""
    if name.startswith("synthetic-"):
        from studies.dpci import design

        dname, n = name.removeprefix("synthetic-").rsplit("-", 1)
        des = design(dname, 1)
        return des, int(n), des.truth
    from studies.dpci_real import real_design

    return real_design(name, kind, True)


def _boot(spec: dict[str, Any], threshold: float, power: float, n_boot: int) -> Any:
    from dpreg.inference.dpci.engine import ParametricBootstrap
    from dpreg.inference.dpci.noisy_stats import NoisyStatsModel

    model = NoisyStatsModel(released=spec["released"], n=spec["n"], x_bounds=spec["x_bounds"],
                            y_bounds=spec["y_bounds"], scales=spec["scales"],
                            eps_intercept=spec["eps_intercept"], offer_threshold=threshold,
                            low_prior_power=power)
    return ParametricBootstrap(model, n_boot=n_boot, rng=spec["seed"])


def release_records(name: str, kind: str, *, epsilon: float, reps: int, seed: int = 0,
                    alphas: Sequence[float] = ALPHAS, n_boot: int = 1000,
                    explore: bool = True, k: float = 3.0) -> pd.DataFrame:
    """One row per release × interval variant × α × parameter (⊥ / no-interval releases: one
    row).  ``explore``: also the variants the library does not use (``plain`` under the
    release rule, ``flat``); ``k``: the release rule's threshold for those variants (the
    library's own intervals use its k = 3 whatever this is)."""
    from dpreg.simple import noisy_stats
    from dpreg.simple._interval_rule import (
        INTERVAL_MAX_NVAR_NOISE_SHARE,
        interval_nvar_noise_share,
    )
    from studies.dpci import _ols

    des, n, truth = cell_design(name, kind)
    xb, yb = des.x_bounds[0], des.y_bounds
    share = interval_nvar_noise_share(n, epsilon, xb)
    public_ok = share <= INTERVAL_MAX_NVAR_NOISE_SHARE
    ss = np.random.SeedSequence(seed, spawn_key=(sum(map(ord, name)), len(kind),
                                                 int(epsilon * 1000)))
    names = ["intercept", "slope"]
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    for r, child in enumerate(ss.spawn(reps)):
        s_data, s_rel = child.spawn(2)
        X, y = des.sample(n, np.random.default_rng(s_data))
        seed_rel = int(s_rel.generate_state(1, dtype=np.uint64)[0] >> 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = noisy_stats(X[:, 0], y, epsilon=epsilon, x_bounds=xb, y_bounds=yb,
                              inference=True, rng=seed_rel)
        base: dict[str, Any] = {"rep": r}
        if res.failed:
            rows.append({**base, "failed": True})
            continue
        spec = res.inference
        assert spec is not None
        sd = math.sqrt(2.0) * spec["scales"]["nvar"]
        rt = spec["released"]["nvar"] / sd if sd > 0 else math.inf
        lib = res.to_regression_results(n_boot=n_boot)
        base.update(failed=False, r_tilde=rt, library=not lib.extra.get("dp_ci_refused"),
                    unidentified=float(lib.extra.get("dp_ci_unidentified_mass", 0.0)))
        variants: list[tuple[str, Any]] = []
        if base["library"]:
            variants.append(("library", lib.bootstrap))
        if public_ok and base["library"]:
            variants.append(("plain", lib.bootstrap))  # the library's interval is the plain one
        elif public_ok or (explore and rt >= k):
            variants.append(("plain", _boot(spec, 0.0, 0.0, n_boot)))
        if rt >= k:
            t = k * sd
            variants.append((f"adjusted {k:g}", _boot(spec, t, 0.5, n_boot)))
            if explore:
                variants.append((f"flat {k:g}", _boot(spec, t, 0.0, n_boot)))
        if not variants:
            rows.append({**base, "variant": "none"})
            continue
        beta_np, se_np = _ols(X, y)
        est = np.array([spec["released"]["intercept"], spec["released"]["slope"]])
        for label, boot in variants:
            for a in alphas:
                lo, hi = boot.interval_arrays(a)
                tq = float(stats.t.ppf(1 - a / 2, n - 2))
                for j, nm in enumerate(names):
                    rows.append({**base, "variant": label, "alpha": a, "param": nm,
                                 "covered": bool(lo[j] <= truth[j] <= hi[j]),
                                 "width": float(hi[j] - lo[j]),
                                 "ols_width": float(2 * tq * se_np[j]),
                                 "excludes_estimate": bool(est[j] < lo[j] or est[j] > hi[j])})
    out = pd.DataFrame(rows)
    out.attrs.update(name=name, kind=kind, n=n, epsilon=epsilon, reps=reps, share=share,
                     public_ok=public_ok, k=k, seconds=time.time() - t0)
    return out


def summarise_rules(df: pd.DataFrame) -> pd.DataFrame:
    """Per rule × α × parameter: offered intervals and their share of all releases (⊥
    included), coverage given offered and its Monte Carlo SE √(p(1−p)/m) at the nominal p,
    verdict against the band [1 − α − 0.01, 1 − α + 0.03] (and widened by 2 MC SE), median
    width / OLS width, share excluding the estimate."""
    a = df.attrs
    meta = {"data": a["name"], "kind": a["kind"], "n": a["n"], "epsilon": a["epsilon"],
            "share": a["share"]}
    reps = int(a["reps"])
    rel = df.drop_duplicates("rep").set_index("rep")
    ok = ~rel["failed"].astype(bool)
    out = []
    for label, variant, k in rules(float(a.get("k", 3.0))):
        if label == "n·ε rule":
            offered = ok & bool(a["public_ok"])
        elif label == "library":
            offered = ok & rel.get("library", pd.Series(False, index=rel.index)).astype(
                "boolean").fillna(False).astype(bool)
        else:
            assert k is not None
            offered = ok & (rel.get("r_tilde", pd.Series(0.0, index=rel.index)) >= k)
        keep = set(offered[offered.astype(bool)].index)
        g_all = df[df["rep"].isin(keep) & (df.get("variant") == variant)]
        if keep and g_all.empty:
            continue  # a variant not computed in this run (explore=False)
        for al in ALPHAS:
            for p in ("intercept", "slope"):
                g = g_all[(g_all["alpha"] == al) & (g_all["param"] == p)]
                m = len(g)
                nominal = 1 - al
                cov = float(g["covered"].mean()) if m else math.nan
                se = math.sqrt(nominal * (1 - nominal) / m) if m else math.nan
                lo_b, hi_b = nominal - 0.01, nominal + 0.03
                verdict = ("none offered" if not m else "in band" if lo_b <= cov <= hi_b else
                           "in band ±2 MC SE" if lo_b - 2 * se <= cov <= hi_b + 2 * se else
                           "over" if cov > hi_b else "UNDER")
                lib_rule = label == "library" and "unidentified" in g
                inf = (g["unidentified"] < al / 2) if lib_rule else pd.Series(True, g.index)
                out.append({**meta, "rule": label, "alpha": al, "param": p, "reps": reps,
                            "offered": m, "offered_share": m / reps,
                            # the library's flag at α: nvar's posterior below the threshold
                            # < α/2 (only the library's intervals carry it)
                            "informative_share": float(inf.mean()) if m and lib_rule
                            else math.nan,
                            "width_ratio_informative": float(
                                (g["width"] / g["ols_width"])[inf].median())
                            if m and lib_rule and inf.any() else math.nan,
                            "coverage": cov,
                            "mc_se": se, "verdict": verdict,
                            "width_ratio": float((g["width"] / g["ols_width"]).median())
                            if m else math.nan,
                            "excludes_estimate": float(g["excludes_estimate"].mean())
                            if m else math.nan})
    return pd.DataFrame(out)


def markdown_table(tab: pd.DataFrame, rules: Sequence[str] = ("n·ε rule", "library")) -> str:
    """One Markdown row per cell × rule: offered share, coverage (min–max over the two
    coefficients) at 95% and 90% with the MC SE, verdict count, median width / OLS width."""
    lines = ["| data (n) | truth | ε | share | rule | offered | coverage 95% | coverage 90% | "
             "MC SE 95% / 90% | in band / ±2 SE / rows | width / OLS | informative 90% "
             "(width / OLS) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (d, kind, eps), g in tab.groupby(["data", "kind", "epsilon"], sort=False):
        for rule in rules:
            h = g[g["rule"] == rule]
            if h.empty:
                continue
            head = (f"| {d} ({int(h['n'].iloc[0])}) | {kind} | {eps:g} | "
                    f"{h['share'].iloc[0]:.1%} | {rule} | ")
            m = int(h["offered"].max())
            if m == 0:
                lines.append(head + "0 | – | – | – | – | – | – |")
                continue

            def rng(al: float, h: pd.DataFrame = h) -> str:
                c = h[np.isclose(h["alpha"], al)]["coverage"]
                return f"{c.min():.3f}–{c.max():.3f}"

            se = "/".join(f"{h[np.isclose(h['alpha'], al)]['mc_se'].iloc[0]:.3f}"
                          for al in ALPHAS)
            inb = int(h["verdict"].eq("in band").sum())
            in2 = int(h["verdict"].isin(["in band", "in band ±2 MC SE"]).sum())
            wr = h["width_ratio"]
            h90 = h[np.isclose(h["alpha"], 0.1)]
            wi = h90["width_ratio_informative"]
            share_i = h90["informative_share"].iloc[0]
            info = "–" if pd.isna(share_i) else (f"{share_i:.0%}" + (
                f" ({wi.min():.1f}–{wi.max():.1f})" if wi.notna().any() else ""))
            lines.append(head + f"{m} ({h['offered_share'].max():.0%}) | {rng(0.05)} | "
                         f"{rng(0.1)} | {se} | {inb} / {in2} / {len(h)} | "
                         f"{wr.min():.1f}–{wr.max():.1f} | {info} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="diabetes,star98,boston,fair")
    p.add_argument("--kinds", default="residual,fixed")
    p.add_argument("--epsilons", default="0.5,1,4")
    p.add_argument("--reps", type=int, default=400)
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--k", type=float, default=3.0,
                   help="the release rule's k of the explored variants (the library: 3)")
    p.add_argument("--library-only", action="store_true",
                   help="only the variants the library uses (faster)")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    tabs = []
    for ds in a.datasets.split(","):
        kinds = ["synthetic"] if ds.startswith("synthetic-") else a.kinds.split(",")
        for kind in kinds:
            for eps in (float(v) for v in a.epsilons.split(",")):
                df = release_records(ds, kind, epsilon=eps, reps=a.reps, seed=a.seed,
                                     n_boot=a.n_boot, explore=not a.library_only, k=a.k)
                tab = summarise_rules(df)
                tab["seconds"] = round(df.attrs["seconds"], 1)
                tabs.append(tab)
                if a.out:
                    pd.concat(tabs, ignore_index=True).to_csv(a.out, index=False)
                with pd.option_context("display.width", 250, "display.max_columns", 30):
                    show = tab[["data", "kind", "epsilon", "rule", "alpha", "param",
                                "offered_share", "coverage", "mc_se", "verdict", "width_ratio"]]
                    print(show.round(3).to_string(index=False), flush=True)
                    print(f"({df.attrs['seconds']:.0f} s)", flush=True)
    print(markdown_table(pd.concat(tabs, ignore_index=True)))


if __name__ == "__main__":
    main()
