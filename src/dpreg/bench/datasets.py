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
* ``diamonds`` -- the Diamonds data of Amin et al. (53,940 diamonds; the copy bundled with
  plotnine, MIT licence: ``pip install 'dpreg[data]'``) with the authors' preprocessing: label
  price, the ordinal grades cut, color and clarity replaced by integers 1..k in their order,
  features carat, cut, color, clarity, depth, table, x, y, z (:func:`diamonds_frame`).
* ``randhie`` -- statsmodels' RAND Health Insurance Experiment (20,190 × 10): medical visits
  on the nine covariates of the statsmodels example (a larger stand-in).
* ``default`` -- ISLP Default (10,000 credit-card holders): balance on income and a student
  indicator (a larger stand-in).
* ``caravan`` -- ISLP Caravan (5,822 customers × 85 coded socio-demographic and product-ownership
  attributes): the purchase indicator (0/1) as a linear probability model (a stand-in with many
  features).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpreg.exceptions import InvalidInputError

__all__ = ["SimpleGroups", "simple_groups", "MultiData", "multivariate", "MULTIVARIATE_NAMES",
           "STOCK_BOUNDS", "DIAMONDS_GRADES", "DIAMONDS_FEATURES", "diamonds_frame"]

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
    from dpreg._extras import require

    cbook = require("matplotlib.cbook", "the stock data set (matplotlib's sample data)",
                    extra="repro")

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
                      "nyse", "bikeshare-mv", "wage", "diamonds", "randhie", "default", "caravan")

#: Diamonds' ordinal grades, worst to best (the order of the GIA scales); Amin et al. replace
#: each grade by its position 1..k
DIAMONDS_GRADES = {
    "cut": ("Fair", "Good", "Very Good", "Premium", "Ideal"),
    "color": ("J", "I", "H", "G", "F", "E", "D"),
    "clarity": ("I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"),
}
DIAMONDS_FEATURES = ("carat", "cut", "color", "clarity", "depth", "table", "x", "y", "z")
#: public bounds from the grading scales and gemmology, not from the data: carats up to 6, depth
#: and table percentages 40-100, dimensions up to 12 mm (a 6-carat round brilliant is about 12 mm
#: across; the few recording errors above are clipped), prices up to $20,000 (the data set's
#: documented price range is $326-$18,823)
_DIAMONDS = {"carat": (0.0, 6.0), "cut": (1.0, 5.0), "color": (1.0, 7.0), "clarity": (1.0, 8.0),
             "depth": (40.0, 100.0), "table": (40.0, 100.0), "x": (0.0, 12.0), "y": (0.0, 12.0),
             "z": (0.0, 12.0), "price": (0.0, 20_000.0)}
#: RAND HIE (statsmodels' codebook): visits, log coinsurance (0..ln 101), indicators, log
#: incentive and deductible payments (below ln 10^4), chronic-disease index (<= 60)
_RANDHIE = {"lncoins": (0.0, 4.7), "idp": (0.0, 1.0), "lpi": (0.0, 9.3), "fmde": (0.0, 9.3),
            "physlm": (0.0, 1.0), "disea": (0.0, 60.0), "hlthg": (0.0, 1.0), "hlthf": (0.0, 1.0),
            "hlthp": (0.0, 1.0), "mdvis": (0.0, 80.0)}
#: ISLP Default: income up to $100,000 a year, student 0/1, credit-card balance up to $3,000
_DEFAULT = {"income": (0.0, 100_000.0), "student": (0.0, 1.0), "balance": (0.0, 3_000.0)}


def diamonds_frame() -> pd.DataFrame:
    """Diamonds with Amin et al.'s preprocessing (the ordinal grades as integers 1..k in
    :data:`DIAMONDS_GRADES` order; price last).  Needs plotnine (``pip install 'dpreg[data]'``)."""
    try:
        from plotnine.data import diamonds
    except ImportError as exc:  # optional extra
        raise InvalidInputError(
            "the diamonds data set needs plotnine (MIT), which bundles it: pip install "
            "'dpreg[data]'") from exc
    raw = diamonds.copy()
    out = pd.DataFrame({c: raw[c].astype(float) for c in ("carat", "depth", "table", "x", "y",
                                                          "z")})
    for col, levels in DIAMONDS_GRADES.items():
        codes = pd.Categorical(raw[col].astype(str), categories=list(levels)).codes
        if (codes < 0).any():
            raise InvalidInputError(f"diamonds: unexpected {col} grade (expected {levels})")
        out[col] = codes.astype(float) + 1.0
    out["price"] = raw["price"].astype(float)
    return out[[*DIAMONDS_FEATURES, "price"]]


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
    if name == "diamonds":
        f = diamonds_frame()
        cols = list(DIAMONDS_FEATURES)
        return MultiData(name, f[cols].to_numpy(), f["price"].to_numpy(), cols,
                         [_DIAMONDS[c] for c in cols], _DIAMONDS["price"],
                         "Diamonds (53,940; plotnine's copy, MIT): price ~ carat + cut + color + "
                         "clarity + depth + table + x + y + z, the grades as integers 1..k (Amin "
                         "et al.'s preprocessing); bounds from the grading scales, dimensions "
                         "<= 12 mm, price <= $20,000")
    if name == "randhie":
        from dpreg._extras import require

        sm = require("statsmodels.api", "the randhie data set (bundled with statsmodels)",
                     extra="repro")

        raw = sm.datasets.randhie.load_pandas().data
        cols = [c for c in _RANDHIE if c != "mdvis"]
        return MultiData(name, raw[cols].astype(float).to_numpy(),
                         raw["mdvis"].astype(float).to_numpy(), cols,
                         [_RANDHIE[c] for c in cols], _RANDHIE["mdvis"],
                         "statsmodels RAND Health Insurance Experiment (20,190 person-years): "
                         "medical visits ~ the nine covariates of the statsmodels example; "
                         "bounds from the codebook (log payments below ln 10⁴, visits <= 80)")
    if name == "default":
        from ISLP import load_data

        raw = load_data("Default")
        X = np.column_stack([raw["income"].astype(float),
                             (raw["student"].astype(str) == "Yes").astype(float)])
        return MultiData(name, X, raw["balance"].astype(float).to_numpy(), ["income", "student"],
                         [_DEFAULT["income"], _DEFAULT["student"]], _DEFAULT["balance"],
                         "ISLP Default (10,000 card holders): balance ~ income + student; "
                         "bounds: income <= $100,000, balance <= $3,000 (a card limit)")
    if name == "caravan":
        from ISLP import load_data

        raw = load_data("Caravan")
        cols = [c for c in raw.columns if c != "Purchase"]
        X = raw[cols].astype(float).to_numpy()
        # the codebook's scales: every attribute is a small non-negative code; the largest
        # code of any attribute in the published codebook is 41 (customer subtype)
        bx = [(0.0, 41.0 if c == "MOSTYPE" else (10.0 if c in ("MOSHOOFD", "MAANTHUI") else 9.0))
              for c in cols]
        y = (raw["Purchase"].astype(str) == "Yes").astype(float).to_numpy()
        return MultiData(name, X, y, cols, bx, (0.0, 1.0),
                         "ISLP Caravan (5,822 customers, 85 coded attributes): caravan-policy "
                         "purchase (0/1) as a linear probability model; bounds from the codebook "
                         "(subtype 1–41, main type and number of houses 1–10, every other code 0–9)")
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
