"""Real data for the reproductions (all shipped inside installed packages; nothing downloaded).

Stand-ins, where a paper's data set is not available offline, are named as such:

* ``stock`` -- stand-in for the UCI Istanbul Stock Exchange data of Alabi et al. §7.1.2 (not
  available offline): monthly log returns of the Nasdaq Composite (y) on the S&P 500 (x), the
  last 250 months (2001-10 to 2022-06) of the monthly index table that ships with matplotlib
  (``mpl-data/sample_data/Stocks.csv``, source Yahoo Finance).  Like the paper's data it is a
  stock-index-on-stock-index regression of 250 near-normal returns.  Public bounds: monthly
  index log returns within ±0.35 (the largest monthly moves of either index since 1990 are
  about −0.26).
* ``bikeshare`` -- :func:`dpreg.data.load_dataset` ("bikeshare"): UCI Capital Bikeshare 2011
  (ISLP), riders on normalised temperature in 144 small data sets (two-month block × hour,
  41–62 rows), the half-year-per-block analogue of the paper's 288 data sets of 45–62 rows.
* multivariate sets (:func:`multivariate`): the ``dpreg.data`` registry with its documented
  bounds, plus ``bikeshare-mv`` (ISLP Bikeshare, 6 features) and ``wage`` (ISLP Wage: wage on
  age, education level and year; the closest offline analogue of Bain et al.'s PUMS income ~
  age + educ).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpreg.exceptions import InvalidInputError

__all__ = ["SimpleGroups", "simple_groups", "MultiData", "multivariate", "MULTIVARIATE_NAMES",
           "STOCK_BOUNDS"]

STOCK_BOUNDS = (-0.35, 0.35)
STOCK_ROWS = 250


@dataclass(frozen=True)
class SimpleGroups:
    """One or more small (x, y) data sets mapped to [0, 1] with public bounds."""

    name: str
    keys: list[str]
    xs: list[np.ndarray]
    ys: list[np.ndarray]
    description: str
    x_bounds: tuple[float, float]
    y_bounds: tuple[float, float]


def _to_unit(v: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    lo, hi = bounds
    return (np.clip(v, lo, hi) - lo) / (hi - lo)


def _stock_frame() -> pd.DataFrame:
    import matplotlib.cbook as cbook

    path = cbook.get_sample_data("Stocks.csv", asfileobj=False)
    raw = pd.read_csv(path, comment="#", parse_dates=["Date"])
    raw = raw.dropna(subset=["^GSPC", "^IXIC"]).sort_values("Date")
    ret = np.log(raw[["^GSPC", "^IXIC"]]).diff().dropna()
    ret["Date"] = raw["Date"].loc[ret.index]
    return ret.tail(STOCK_ROWS).reset_index(drop=True)


def simple_groups(source: str) -> SimpleGroups:
    """``"stock"`` (one data set) or ``"bikeshare"`` (144 groups), x and y in [0, 1]."""
    if source == "stock":
        f = _stock_frame()
        x = _to_unit(f["^GSPC"].to_numpy(float), STOCK_BOUNDS)
        y = _to_unit(f["^IXIC"].to_numpy(float), STOCK_BOUNDS)
        first, last = f["Date"].iloc[0], f["Date"].iloc[-1]
        return SimpleGroups(
            "stock", ["nasdaq~sp500"], [x], [y],
            f"monthly log returns, Nasdaq Composite on S&P 500, {len(f)} months "
            f"{first:%Y-%m} to {last:%Y-%m} (matplotlib sample data, Yahoo Finance); "
            f"bounds ±{STOCK_BOUNDS[1]} mapped to [0, 1]",
            STOCK_BOUNDS, STOCK_BOUNDS)
    if source == "bikeshare":
        from dpreg.data import load_dataset

        ds = load_dataset("bikeshare")
        frame = ds.frame
        keys, xs, ys = [], [], []
        for key, grp in frame.groupby("group", sort=True):
            keys.append(str(key))
            xs.append(_to_unit(grp["temp"].to_numpy(float), ds.bounds["temp"]))
            ys.append(_to_unit(grp["bikers"].to_numpy(float), ds.bounds["bikers"]))
        return SimpleGroups(
            "bikeshare", keys, xs, ys,
            "UCI Capital Bikeshare 2011 (ISLP): riders on normalised temperature, 144 groups "
            "(two-month block × hour, 41–62 rows); riders/1000 and temp in [0, 1]",
            ds.bounds["temp"], ds.bounds["bikers"])
    raise InvalidInputError(f"source must be 'stock' or 'bikeshare'; got {source!r}")


@dataclass(frozen=True)
class MultiData:
    """A multivariate regression data set with public bounds (one pair per feature)."""

    name: str
    X: np.ndarray
    y: np.ndarray
    features: list[str]
    bounds_X: list[tuple[float, float]]
    bounds_y: tuple[float, float]
    description: str


_BIKE_MV = {"temp": (0.0, 1.0), "hum": (0.0, 1.0), "windspeed": (0.0, 1.0),
            "workingday": (0.0, 1.0), "hr": (0.0, 23.0), "season": (1.0, 4.0),
            "bikers": (0.0, 1000.0)}
_WAGE = {"age": (18.0, 80.0), "education": (1.0, 5.0), "year": (2003.0, 2009.0),
         "wage": (0.0, 350.0)}

MULTIVARIATE_NAMES = ("diabetes", "statecrime", "grunfeld", "fair", "longley", "stackloss",
                      "nyse", "bikeshare-mv", "wage")


def multivariate(name: str) -> MultiData:
    """A real multivariate data set (see the module doc for sources and bounds)."""
    if name == "bikeshare-mv":
        from ISLP import load_data

        raw = load_data("Bikeshare")
        cols = ["temp", "hum", "windspeed", "workingday", "hr", "season"]
        X = raw[cols].astype(float).to_numpy()
        return MultiData(name, X, raw["bikers"].astype(float).to_numpy(), cols,
                         [_BIKE_MV[c] for c in cols], _BIKE_MV["bikers"],
                         "ISLP Bikeshare 2011 hourly: bikers ~ temp + hum + windspeed + "
                         "workingday + hr + season (documented [0, 1] normalisations, hr 0–23, "
                         "season 1–4, riders ≤ 1000)")
    if name == "wage":
        from ISLP import load_data

        raw = load_data("Wage")
        edu = raw["education"]
        level = (edu.cat.codes + 1) if hasattr(edu, "cat") else edu.astype(str).str[0].astype(int)
        frame = pd.DataFrame({"age": raw["age"].astype(float),
                              "education": np.asarray(level, dtype=float),
                              "year": raw["year"].astype(float)})
        cols = list(frame.columns)
        return MultiData(name, frame.to_numpy(), raw["wage"].astype(float).to_numpy(), cols,
                         [_WAGE[c] for c in cols], _WAGE["wage"],
                         "ISLP Wage (3,000 Mid-Atlantic men, 2003–2009): wage (k$) ~ age + "
                         "education level (1–5) + year; bounds: working ages 18–80, the five "
                         "survey levels, the survey years, wages ≤ 350 k$")
    from dpreg.data import list_datasets, load_dataset

    if name not in list_datasets():
        raise InvalidInputError(
            f"unknown data set {name!r}; available: {', '.join(MULTIVARIATE_NAMES)}")
    ds = load_dataset(name)
    cols = list(ds.x)
    frame = ds.frame
    bx = [(float(ds.bounds[c][0]), float(ds.bounds[c][1])) for c in cols]
    by = (float(ds.bounds[ds.y][0]), float(ds.bounds[ds.y][1]))
    return MultiData(name, frame[cols].astype(float).to_numpy(),
                     frame[ds.y].astype(float).to_numpy(), cols, bx, by,
                     f"{ds.description} ({ds.source}); bounds: {ds.bounds_note}")
