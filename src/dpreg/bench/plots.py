"""Figures of the reproductions: every PNG is written next to a CSV of the plotted numbers
(same stem), so the page can be checked and re-plotted without re-running anything."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["line_panel", "ecdf_groups", "release_ecdf", "scatter_pairs", "bar_groups"]

_MARKERS = "osD^v<>pPX*h"


def _plt() -> Any:
    from dpreg._extras import require

    require("matplotlib", "the reproductions' figures", extra="repro").use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out: Path, stem: str, data: pd.DataFrame) -> Path:
    plt = _plt()
    png = Path(out) / f"{stem}.png"
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    data.to_csv(Path(out) / f"{stem}.csv", index=False)
    return png


def line_panel(summary: pd.DataFrame, *, x: str, y: str, group: str, out: Path, stem: str,
               title: str, xlabel: str, ylabel: str, logx: bool = True, logy: bool = True,
               hline: float | None = None) -> list[Path]:
    """One line per ``group`` of ``y`` against ``x``; +∞ values are drawn as open markers at
    the top edge (a method whose Ĉ is infinite on some data set)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.2, 4.6), dpi=110)
    data = summary[[group, x, y]].copy().sort_values([group, x])
    finite = data[y].replace([np.inf, -np.inf], np.nan)
    top = float(np.nanmax(finite)) if finite.notna().any() else 1.0
    for i, (name, grp) in enumerate(data.groupby(group, sort=False)):
        vals = grp[y].to_numpy(float)
        xs = grp[x].to_numpy(float)
        ok = np.isfinite(vals)
        line, = ax.plot(xs[ok], vals[ok], marker=_MARKERS[i % len(_MARKERS)], ms=4, lw=1.3,
                        label=str(name))
        if (~ok & ~np.isnan(vals)).any():
            ax.plot(xs[~ok & ~np.isnan(vals)], np.full((~ok & ~np.isnan(vals)).sum(), top * 1.4),
                    ls="none", marker=_MARKERS[i % len(_MARKERS)], mfc="none",
                    color=line.get_color())
    if hline is not None:
        ax.axhline(hline, color="black", lw=0.8, ls="--")
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    return [_save(fig, out, stem, data)]


def ecdf_groups(rows: pd.DataFrame, *, out: Path, stem: str, title: str) -> list[Path]:
    """Empirical CDF over groups of Ĉ(0.68)/σ̂, one panel per ε (Alabi et al. Fig. 3 style)."""
    plt = _plt()
    eps_values = sorted(rows["epsilon"].unique())
    cols = min(3, len(eps_values))
    nrow = math.ceil(len(eps_values) / cols)
    fig, axes = plt.subplots(nrow, cols, figsize=(4.2 * cols, 3.4 * nrow), dpi=110,
                             squeeze=False)
    records = []
    for ax, eps in zip(axes.ravel(), eps_values):
        sub = rows[rows["epsilon"] == eps]
        for _i, (m, grp) in enumerate(sub.groupby("method", sort=False)):
            r = np.sort(grp["ratio_hat"].to_numpy(float))
            fin = r[np.isfinite(r)]
            if fin.size == 0:
                continue
            cdf = np.arange(1, fin.size + 1) / r.size
            ax.step(fin, cdf, where="post", label=m, lw=1.2)
            records += [{"epsilon": eps, "method": m, "ratio": v, "ecdf": c}
                        for v, c in zip(fin, cdf)]
        ax.axvline(1.0, color="black", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_ylim(0, 1)
        ax.set_title(f"ε = {eps:g}", fontsize=9)
        ax.set_xlabel("Ĉ(0.68)/σ̂(p̂₂₅)", fontsize=8)
        ax.grid(alpha=0.3, which="both")
    for ax in axes.ravel()[len(eps_values):]:
        ax.axis("off")
    axes[0, 0].legend(fontsize=6)
    axes[0, 0].set_ylabel("fraction of groups")
    fig.suptitle(title, fontsize=10)
    return [_save(fig, out, stem, pd.DataFrame(records))]


def release_ecdf(rows: pd.DataFrame, *, out: Path, stem: str, title: str, epsilon: float
                 ) -> list[Path]:
    """ECDF of the released p̃₂₅ per method with the OLS estimate ± 1 s.e. band (Fig. 4 style)."""
    plt = _plt()
    from scipy import stats

    sub = rows[rows["epsilon"] == epsilon]
    fig, ax = plt.subplots(figsize=(7.2, 4.6), dpi=110)
    records = []
    ols, se = float(sub["ols"].iloc[0]), float(sub["se_hat"].iloc[0])
    for _, r in sub.iterrows():
        if not isinstance(r.get("releases"), str):
            continue
        v = np.sort(np.array([float(t) for t in r["releases"].split()]))
        v = v[np.isfinite(v)]
        if v.size == 0:
            continue
        cdf = np.arange(1, v.size + 1) / v.size
        ax.step(v, cdf, where="post", label=r["method"], lw=1.2)
        records += [{"method": r["method"], "release": a, "ecdf": c} for a, c in zip(v, cdf)]
    grid = np.linspace(ols - 4 * se, ols + 4 * se, 200)
    ax.plot(grid, stats.norm.cdf(grid, ols, se), color="black", lw=1, ls=":",
            label="standard error (N(p̂, σ̂²))")
    ax.axvspan(ols - se, ols + se, color="grey", alpha=0.25)
    ax.set_xlim(ols - 8 * se, ols + 8 * se)
    ax.set_xlabel("released p̃₂₅ (data mapped to [0, 1])")
    ax.set_ylabel("ECDF over releases")
    ax.set_title(f"{title}, ε = {epsilon:g}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    records.append({"method": "OLS p̂25", "release": ols, "ecdf": math.nan})
    records.append({"method": "OLS se", "release": se, "ecdf": math.nan})
    return [_save(fig, out, stem, pd.DataFrame(records))]


def scatter_pairs(frame: pd.DataFrame, *, x: str, y: str, facet: str, out: Path, stem: str,
                  title: str, xlabel: str, ylabel: str, log: bool = True) -> list[Path]:
    """Scatter of ``y`` against ``x`` with the diagonal, one panel per ``facet`` value
    (Tang et al. style: points below the diagonal are wins of the method on the y axis)."""
    plt = _plt()
    facets = list(dict.fromkeys(frame[facet]))
    cols = min(3, len(facets))
    nrow = math.ceil(len(facets) / cols)
    fig, axes = plt.subplots(nrow, cols, figsize=(4.0 * cols, 3.8 * nrow), dpi=110,
                             squeeze=False)
    for ax, f in zip(axes.ravel(), facets):
        sub = frame[frame[facet] == f]
        xs, ys = sub[x].to_numpy(float), sub[y].to_numpy(float)
        ok = np.isfinite(xs) & np.isfinite(ys) & ((xs > 0) & (ys > 0) if log else True)
        ax.scatter(xs[ok], ys[ok], s=14)
        if ok.any():
            lo_v = float(min(xs[ok].min(), ys[ok].min()))
            hi_v = float(max(xs[ok].max(), ys[ok].max()))
            ax.plot([lo_v, hi_v], [lo_v, hi_v], color="black", lw=0.8, ls="--")
        if log and ok.any():
            ax.set_xscale("log")
            ax.set_yscale("log")
        if not ok.any():
            ax.text(0.5, 0.5, "no finite values (⊥)", ha="center", va="center",
                    transform=ax.transAxes)
        ax.set_title(str(f), fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.grid(alpha=0.3, which="both")
    for ax in axes.ravel()[len(facets):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    return [_save(fig, out, stem, frame)]


def bar_groups(frame: pd.DataFrame, *, cat: str, group: str, value: str, out: Path, stem: str,
               title: str, ylabel: str, ylim: tuple[float, float] | None = None) -> list[Path]:
    """Grouped bars of ``value`` per ``cat`` (x axis) and ``group`` (colour)."""
    plt = _plt()
    cats = list(dict.fromkeys(frame[cat]))
    groups = list(dict.fromkeys(frame[group]))
    fig, ax = plt.subplots(figsize=(max(6.5, 0.9 * len(cats) * max(1, len(groups)) / 2), 4.4),
                           dpi=110)
    width = 0.8 / max(1, len(groups))
    for i, g in enumerate(groups):
        sub = frame[frame[group] == g].set_index(cat)
        vals = [float(sub[value].get(c, np.nan)) if c in sub.index else np.nan for c in cats]
        ax.bar(np.arange(len(cats)) + i * width - 0.4 + width / 2, vals, width, label=str(g))
    ax.set_xticks(np.arange(len(cats)))
    ax.set_xticklabels([str(c) for c in cats], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    ax.axhline(0, color="black", lw=0.6)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)
    return [_save(fig, out, stem, frame)]
