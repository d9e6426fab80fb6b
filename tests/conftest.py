"""Shared fixtures (statistical helpers live in ``_stats.py``)."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import settings

from dpreg.exceptions import PrivacyLeakWarning

# Property tests search deterministically (same examples every run) so CI is reproducible;
# set HYPOTHESIS_PROFILE=explore locally for a randomised search.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _build_the_cli_once() -> None:
    """typer's ``CliRunner().invoke(app, ...)`` rebuilds the click command from the typer app
    on every call (~75 ms of CPU: the signature and type hints of every command), several
    times the cost of most in-process CLI calls.  The app does not change during the tests,
    so the command is built once per app and reused (a click command is reusable; the real
    entry point builds it once per process).  Fails loudly if typer renames the hook."""
    import functools

    import typer.testing

    build = typer.testing._get_command
    if not isinstance(build, functools._lru_cache_wrapper):
        typer.testing._get_command = functools.cache(build)


_build_the_cli_once()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """``--dist loadgroup`` (the Makefile's): give every test marked ``xdist_group(NAME)`` the
    node-id suffix ``@NAME`` by which the scheduler sends a group to one worker, so that the
    Spark tests share one worker and one JVM.  pytest-xdist does this itself by writing
    ``item._nodeid``, which pytest >= 9.2 no longer reads (its node ids are structured,
    ``item._id``): the groups were silently ignored and the Spark tests started a JVM on each
    worker (pytest-dev/pytest-xdist#1386).  Where xdist's suffix took effect this does nothing."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = {str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                 for m in item.iter_markers("xdist_group")}
        if not names:
            continue
        suffix = "@" + "_".join(sorted(names))
        if item.nodeid.endswith(suffix) or not hasattr(item, "_id"):
            continue
        item._id = type(item._id).parse(item.nodeid + suffix)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261120)


@pytest.fixture
def no_leak_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield


def spark_unavailable() -> str | None:
    """Why the Spark tests cannot run here (None when they can)."""
    import shutil

    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark/pyarrow are not installed (pip install 'dpreg[spark]')"
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        return "no Java runtime (install Java 17+, e.g. apt-get install openjdk-17-jre-headless)"
    return None


@pytest.fixture(scope="session")
def spark():
    """One local[2] SparkSession per test session (per xdist worker): the JVM starts once.
    Executors run this interpreter (``PYSPARK_PYTHON``), so they import this checkout's dpreg."""
    import sys

    reason = spark_unavailable()
    if reason:
        pytest.skip(reason)
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    session = (SparkSession.builder.master("local[2]").appName("dpreg-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.driver.memory", "1g")
               # the tests' jobs are short: C1-only JIT and the serial GC (no GC threads) start
               # the JVM with about half the CPU (measured: 46 s -> 28 s of CPU for a session
               # and one applyInPandas job on the 2-core machine)
               .config("spark.driver.extraJavaOptions",
                       "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
