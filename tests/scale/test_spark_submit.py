"""The cluster example of docs/scale.md, run as documented with ``spark-submit --master
local[2]``: the wheel shipped with ``--py-files``, the executors reading a Parquet nation.
Skipped without pyspark/Java (like the other Spark tests)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dpreg.data import write_nation

ROOT = Path(__file__).resolve().parents[2]


def _spark_submit() -> Path:
    """The spark-submit next to this interpreter (pyspark's), or skip."""
    pytest.importorskip("pyspark")
    submit = Path(sys.executable).with_name("spark-submit")
    if not submit.exists() or not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        pytest.skip("spark-submit or a Java runtime is not available")
    return submit


def _build_wheel(tmp_path: Path) -> Path:
    """dpreg's wheel, built from this checkout without dependencies."""
    wheels = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "-w", str(wheels),
                    "--no-deps", "--no-build-isolation", "-q"], check=True, timeout=300)
    (wheel,) = wheels.glob("dpreg-*.whl")
    return wheel


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.slow  # a JVM of its own and a wheel build: 40 s to 3 min on 2 shared cores
def test_spark_submit_example_with_the_wheel_shipped(tmp_path):
    submit = _spark_submit()
    wheel = _build_wheel(tmp_path)
    write_nation(tmp_path / "points", 60, rng=1)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               DPREG_DISABLE_NUMBA="1")
    out = tmp_path / "releases.csv"
    proc = subprocess.run(
        [str(submit), "--master", "local[2]", "--py-files", str(wheel),
         "--conf", "spark.executorEnv.DPREG_DISABLE_NUMBA=1",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
         "--conf", "spark.sql.execution.arrow.pyspark.enabled=true",
         str(ROOT / "examples" / "spark_fit_groups.py"), str(tmp_path / "points"), str(out),
         "--tracts", "60", "--method", "dp-gd"],
        capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "60 tracts (60 released)" in proc.stdout
    assert "parallel composition" in proc.stdout
    table = pd.read_csv(out)
    assert list(table["group"]) == list(range(60)) and not table["failed"].any()
    assert table["slope"].notna().all()


_PACKED_DRIVER = """
import sys

import pandas as pd
from pyspark.sql import SparkSession

import dpreg

path = sys.argv[1]
spark = SparkSession.builder.appName("dpreg packed env").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
kw = dict(method="theil-sen-exp", pairs=1, epsilon=1.0, groups=list(range(12)), random_state=5,
          bounds={"parent_rank": (0.0, 1.0), "child_rank": (0.0, 1.0)})
spk = dpreg.fit_by_group(path, "tract", "parent_rank", "child_rank", backend="spark",
                         spark=spark, **kw)
loc = dpreg.fit_by_group(path, "tract", "parent_rank", "child_rank", **kw)
assert spk.attrs["backend"] == "spark" and spk.attrs["privacy"] == loc.attrs["privacy"]
# the core per group on the executors, rows in original order: bit-identical to local
pd.testing.assert_frame_equal(spk, loc)
assert not spk["failed"].any(), spk
where = (spark.sparkContext.parallelize([0], 1)
         .map(lambda _: (sys.executable, __import__("dpreg").__file__)).first())
print("EXECUTOR_PYTHON", where[0])
print("EXECUTOR_DPREG", where[1])
print("EQUAL", len(spk))
spark.stop()
"""


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.slow  # a venv with dpreg's dependencies, packed, and 3 JVMs: 3-6 min, ~3 GB disk
def test_spark_submit_with_a_packed_venv_in_archives(tmp_path):
    """The packed-environment route of docs/scale.md: a fresh venv with the dpreg wheel (and
    pyarrow), packed by ``venv-pack``, shipped with ``--archives env.tar.gz#env`` and run by
    the executors as ``PYSPARK_PYTHON=./env/bin/python``; the per-group releases (Theil-Sen,
    fitted on the executors by ``applyInPandas``) equal the local backend's for the same seed,
    and the executors imported dpreg from the unpacked archive, not from this environment.

    Master ``local-cluster[2,1,1024]`` (two executor JVMs, each in its own working directory,
    as on a cluster), not ``local[2]``: in local mode the Python workers run in the driver's
    working directory while the archive is unpacked under SparkFiles' root, so the relative
    ``./env/bin/python`` does not exist there ("Cannot run program ./env/bin/python")."""
    import pyspark

    submit = _spark_submit()
    pytest.importorskip("venv_pack", reason="venv-pack (the [spark] extra) is not installed")
    wheel = _build_wheel(tmp_path)
    env_dir = tmp_path / "env"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(env_dir)], check=True, timeout=300)
    # dpreg with its runtime dependencies and pyarrow (Arrow for applyInPandas); pyspark
    # itself comes from SPARK_HOME's pyspark.zip on the workers (on a cluster whose nodes have
    # no Spark Python files, add pyspark too, as docs/scale.md does)
    install = subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel),
         "pyarrow>=18"], capture_output=True, text=True, timeout=900)
    if install.returncode != 0:
        pytest.skip("could not install dpreg's dependencies into a fresh venv (no package "
                    f"index?): {install.stderr[-500:]}")
    archive = tmp_path / "env.tar.gz"
    subprocess.run([str(Path(sys.executable).with_name("venv-pack")), "-p", str(env_dir),
                    "-o", str(archive), "--compress-level", "1", "-q"], check=True,
                   timeout=900)
    write_nation(tmp_path / "points", 12, rng=2)
    (tmp_path / "driver.py").write_text(_PACKED_DRIVER, encoding="utf-8")
    run_dir = tmp_path / "run"  # not tmp_path: "./env" must not resolve to the unpacked venv
    run_dir.mkdir()
    # the executors' working directories go to SPARK_HOME/work: a SPARK_HOME of links to
    # pyspark's files under tmp_path keeps them (two unpacked copies) out of this environment
    spark_home = tmp_path / "spark_home"
    spark_home.mkdir()
    for entry in Path(pyspark.__file__).parent.iterdir():
        if entry.name != "work":
            (spark_home / entry.name).symlink_to(entry)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "DPREG_DISABLE_NUMBA")}
    env.update(PYSPARK_PYTHON="./env/bin/python", PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_HOME=str(spark_home))
    proc = subprocess.run(
        [str(submit), "--master", "local-cluster[2,1,1024]", "--archives", f"{archive}#env",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
         "--conf", "spark.sql.execution.arrow.pyspark.enabled=true",
         str(tmp_path / "driver.py"), str(tmp_path / "points")],
        capture_output=True, text=True, env=env, timeout=900, cwd=run_dir)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-4000:])
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines()
                 if line.startswith(("EXECUTOR_", "EQUAL")))
    assert lines["EQUAL"] == "12"
    # the executors ran the packed interpreter and the dpreg of the archive unpacked in their
    # working directory (SPARK_HOME/work/<app>/<executor>/env), not the venv it was packed from
    exe, mod = Path(lines["EXECUTOR_PYTHON"]), Path(lines["EXECUTOR_DPREG"])
    assert exe.parts[-3:] == ("env", "bin", "python"), exe
    assert exe.is_relative_to(spark_home / "work"), exe
    unpacked = exe.parent.parent
    assert mod.is_relative_to(unpacked / "lib"), (mod, unpacked)


def test_dpreg_imports_and_runs_from_a_zipped_wheel(tmp_path):
    """``--py-files dpreg-*.whl`` puts the wheel (a zip archive) on sys.path: numba has no
    cache locator for a source inside a ``.whl`` (only ``.zip``), so the kernels decorated at
    import (smooth sensitivity, per-group segment sums) must compile without the disk cache
    rather than fail at ``import dpreg.mechanisms.smooth`` (first with DPREG_DISABLE_NUMBA=1, as the documented
    command may set it, then with numba: dpreg.simple.fast's kernels too)."""
    import zipfile

    pytest.importorskip("numba")
    archive = tmp_path / "dpreg-0.0-py3-none-any.whl"
    src = ROOT / "src"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in (src / "dpreg").rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts:
                zf.write(f, f.relative_to(src).as_posix())
    code = ("import numpy as np, dpreg\n"
            "from dpreg.simple._segments import segment_sums\n"
            "import dpreg.mechanisms.smooth\n"
            f"assert dpreg.__file__.startswith({str(archive)!r}), dpreg.__file__\n"
            "print(segment_sums(np.arange(10.0), np.array([0, 4, 10])))\n")
    env = dict(os.environ, PYTHONPATH=str(archive), DPREG_DISABLE_NUMBA="1")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["[", "6.", "39.]"]

    # with numba enabled: the all-pairs Theil-Sen kernels (dpreg.simple.fast) compile without
    # the disk cache too, instead of failing at import ("cannot cache function")
    code = ("import numpy as np, dpreg\n"
            "from dpreg.simple import theil_sen\n"
            "from dpreg.simple.fast import _kernels\n"
            f"assert dpreg.__file__.startswith({str(archive)!r}), dpreg.__file__\n"
            "assert _kernels.HAVE_NUMBA\n"
            "rng = np.random.default_rng(0); x = rng.uniform(0, 1, 600)\n"
            "r = theil_sen(x, 0.5 * x + rng.normal(0, 0.1, 600), epsilon=50.0,\n"
            "              output_range=(-2.0, 2.0), rng=1)\n"
            "print(abs(r.slope - 0.5) < 0.2)\n")
    env = {k: v for k, v in os.environ.items() if k != "DPREG_DISABLE_NUMBA"}
    env["PYTHONPATH"] = str(archive)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["True"]
