"""The optional dependencies of dpreg: which extra installs each, and the error when one is
missing.

``pip install dpreg`` gives the library (numpy, scipy, pandas, pyarrow, formulaic,
scikit-learn); everything else is imported where it is used, never on ``import dpreg``, and goes
through :func:`require` (or :func:`missing_extra` for a module that lives behind its extra, the
CLI), so that a missing one is a :class:`~dpreg.exceptions.MissingExtraError` naming the extra
to install -- raised before anything is computed or charged.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from dpreg.exceptions import MissingExtraError

__all__ = ["EXTRA_OF", "require", "missing_extra", "install_hint"]

#: the extra of ``pyproject.toml`` that installs each optional top-level module
EXTRA_OF: dict[str, str] = {
    "typer": "cli",
    "rich": "cli",
    "matplotlib": "plots",
    "statsmodels": "repro",
    "numba": "fast",
    "pyspark": "spark",
    "plotnine": "data",
}


def install_hint(extra: str) -> str:
    """``pip install 'dpreg[EXTRA]'``."""
    return f"pip install 'dpreg[{extra}]'"


def _error(module: str, what: str, extra: str | None) -> MissingExtraError:
    top = module.split(".")[0]
    extra = extra or EXTRA_OF[top]
    return MissingExtraError(f"{top} is not installed; it is needed by {what}: "
                             f"{install_hint(extra)} (the [{extra}] extra)")


def require(module: str, what: str, *, extra: str | None = None) -> ModuleType:
    """Import ``module`` (e.g. ``"matplotlib.pyplot"``) and return it, or raise
    :class:`MissingExtraError`: ``what`` (the feature, e.g. ``"RegressionResults.plot"``)
    needs it and ``extra`` (default: :data:`EXTRA_OF` of its top-level package) installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if _missing_top(exc, module):
            raise _error(module, what, extra) from exc
        raise  # the module is there but failed to import: its own error says why


def missing_extra(exc: ImportError, what: str, *, extra: str) -> None:
    """For ``except ImportError as exc`` around the imports of a module that lives behind an
    extra (the CLI): raise a :class:`MissingExtraError` when ``exc`` is a missing optional
    dependency (one of :data:`EXTRA_OF`); otherwise return, and the caller re-raises ``exc``."""
    name = (exc.name or "").split(".")[0]
    if name in EXTRA_OF:
        raise _error(name, what, extra) from exc


def _missing_top(exc: ImportError, module: str) -> bool:
    """Whether ``exc`` says that ``module`` (or its top-level package) is not installed."""
    name = exc.name or ""
    return not name or module == name or module.startswith(name + ".") \
        or name.split(".")[0] == module.split(".")[0]
