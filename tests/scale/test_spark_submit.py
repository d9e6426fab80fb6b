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

@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.slow  # a JVM of its own and a wheel build: 40 s to 3 min on 2 shared cores
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
            "from dpreg.grouped._segments import segment_sums\n"
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
