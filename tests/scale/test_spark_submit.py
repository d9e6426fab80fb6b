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

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark"),
              pytest.mark.slow]  # a JVM of its own and a wheel build: ~40-60 s


def test_spark_submit_example_with_the_wheel_shipped(tmp_path):
    pytest.importorskip("pyspark")
    submit = Path(sys.executable).with_name("spark-submit")
    if not submit.exists() or not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        pytest.skip("spark-submit or a Java runtime is not available")
    wheels = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "-w", str(wheels),
                    "--no-deps", "--no-build-isolation", "-q"], check=True, timeout=300)
    (wheel,) = wheels.glob("dpreg-*.whl")
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
