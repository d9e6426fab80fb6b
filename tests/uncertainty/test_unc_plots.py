"""Plots (issue 18, item 6): results.plot() draws the coefficients with their DP-aware intervals
and returns the Axes; the per-group plots read a fit_by_group table and draw intervals when the
table has lower_*/upper_* columns; the CLI writes --plot files.  Agg backend throughout."""

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import dpreg  # noqa: E402
from dpreg.cli import app  # noqa: E402
from dpreg.exceptions import InvalidInputError  # noqa: E402
from dpreg.inference.plots import (  # noqa: E402
    interval_columns,
    plot_group_estimates,
    plot_groups,
    plot_interval_widths,
)

BOUNDS = {"x": (0, 1), "y": (0, 1)}


def frame(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    y = np.clip(0.2 + 0.5 * x + rng.normal(0, 0.1, n), 0, 1)
    return pd.DataFrame({"x": x, "y": y})


def test_results_plot_draws_estimates_and_their_intervals():
    r = dpreg.regress(frame(), "y ~ x", method="noisy-stats", epsilon=2.0, bounds=BOUNDS,
                      random_state=0, n_boot=200)
    fig, ax = plt.subplots()
    out = r.plot(alpha=0.1, ax=ax)
    assert out is ax
    ci = r.conf_int(0.1)
    segs = ax.collections[0].get_segments()  # one horizontal bar per coefficient
    assert len(segs) == 2
    for seg, (_name, row) in zip(segs, ci.iterrows()):
        assert seg[0][0] == pytest.approx(row["lower"]) and seg[1][0] == pytest.approx(row["upper"])
    xs = ax.lines[-1].get_xdata()
    np.testing.assert_allclose(xs, r.params.to_numpy())
    assert [t.get_text() for t in ax.get_yticklabels()] == ["intercept", "x"]
    assert "90% DP-aware interval" in [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close(fig)


def test_results_plot_without_interval_says_so_and_can_drop_the_intercept():
    r = dpreg.regress(frame(), "y ~ x", method="theil-sen-exp", epsilon=2.0, bounds=BOUNDS,
                      random_state=0)
    ax = r.plot(include_intercept=False)
    assert "no interval" in ax.get_title()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x"]
    assert not ax.collections  # no interval bars drawn
    plt.close(ax.figure)


def synthetic_table(n_groups=40, seed=1):
    rng = np.random.default_rng(seed)
    slope = rng.normal(0.5, 0.1, n_groups)
    width = rng.uniform(0.05, 0.4, n_groups)
    t = pd.DataFrame({"group": [f"g{k}" for k in range(n_groups)],
                      "n": rng.integers(30, 400, n_groups), "intercept": 0.2,
                      "slope": slope, "failed": False, "reason": "",
                      "pred_0.25": 0.2 + 0.25 * slope, "pred_0.75": 0.2 + 0.75 * slope})
    t["lower_slope"] = slope - width / 2
    t["upper_slope"] = slope + width / 2
    t["lower_pred_0.25"] = t["pred_0.25"] - width / 4
    t["upper_pred_0.25"] = t["pred_0.25"] + width / 4
    t.loc[3, ["slope", "pred_0.25", "pred_0.75", "lower_slope", "upper_slope"]] = np.nan
    t.loc[3, "failed"] = True
    return t, width


def test_group_plots_draw_intervals_from_lower_upper_columns():
    t, width = synthetic_table()
    assert interval_columns(t) == ["slope", "pred_0.25"]
    ax = plot_group_estimates(t, ["slope"])
    bars = ax.collections[0].get_segments()
    assert len(bars) == len(t) - 1  # the ⊥ group is left out
    got = sorted(seg[1][1] - seg[0][1] for seg in bars)
    np.testing.assert_allclose(got, sorted(np.delete(width, 3)))
    assert "1 ⊥ left out" in ax.get_title()
    ys = ax.lines[0].get_ydata()
    assert np.all(np.diff(ys) >= 0)  # sorted by the estimate
    plt.close(ax.figure)
    ax = plot_interval_widths(t)
    step = ax.lines[0]
    np.testing.assert_allclose(np.unique(step.get_xdata()), np.sort(np.delete(width, 3)))
    assert step.get_ydata()[-1] == pytest.approx(1.0)
    plt.close(ax.figure)
    fig = plot_groups(t)
    assert len(fig.axes) == 2
    plt.close(fig)


def test_group_plots_on_a_real_table_without_interval_columns():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"g": np.repeat(["a", "b", "c"], 200), "x": rng.uniform(0, 1, 600)})
    df["y"] = np.clip(0.3 * df["x"] + rng.normal(0, 0.1, 600), 0, 1)
    table = dpreg.fit_by_group(df, "g", "x", "y", method="noisy-stats", epsilon=2.0,
                               bounds=BOUNDS, groups=["a", "b", "c"], random_state=0)
    assert interval_columns(table) == []
    ax = plot_group_estimates(table)
    assert "no per-group intervals" in ax.get_title()
    assert len(ax.lines) == 1 + sum(c.startswith("pred_") for c in table.columns)
    plt.close(ax.figure)
    with pytest.raises(InvalidInputError, match="no per-group interval columns"):
        plot_interval_widths(table)
    fig = plot_groups(table)
    assert len(fig.axes) == 1
    plt.close(fig)
    with pytest.raises(InvalidInputError, match="not in the table"):
        plot_group_estimates(table, ["nope"])


def test_cli_plot_files(tmp_path):
    path = tmp_path / "d.csv"
    frame().to_csv(path, index=False)
    png = tmp_path / "fit.png"
    out = CliRunner().invoke(app, ["fit", str(path), "--y", "y", "--x", "x", "-m", "noisy-stats",
                                   "-e", "2", "-b", "x=0:1", "-b", "y=0:1", "--seed",
                                   str(2**100), "--plot", str(png), "--json"])
    assert out.exit_code == 0, out.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    g = frame(600)
    g["grp"] = np.repeat(["a", "b", "c"], 200)
    gpath = tmp_path / "g.csv"
    g.to_csv(gpath, index=False)
    keys = tmp_path / "keys.txt"
    keys.write_text("a\nb\nc\n")
    gpng = tmp_path / "groups.png"
    out = CliRunner().invoke(app, ["fit-groups", str(gpath), "--by", "grp", "--y", "y", "--x",
                                   "x", "-m", "noisy-stats", "-e", "2", "-b", "x=0:1", "-b",
                                   "y=0:1", "--out", str(tmp_path / "t.csv"), "--groups-file",
                                   str(keys), "--plot", str(gpng), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["plot"] == str(gpng)
    assert gpng.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = CliRunner().invoke(app, ["fit", str(path), "--y", "y", "--x", "x", "-m", "noisy-stats",
                                   "-e", "2", "-b", "x=0:1", "-b", "y=0:1", "--plot",
                                   str(tmp_path / "fit.unknownext")])
    assert bad.exit_code == 1 and "could not write the plot" in bad.output
