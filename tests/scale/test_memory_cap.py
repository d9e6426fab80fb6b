"""A release streams a Parquet file larger than the memory it may use (issue 19).

A child process caps its address space (``RLIMIT_AS``) at its size after warm-up plus CAP_MB;
the file holds ~2× CAP_MB of float64 values.  Loading it with pandas must fail under that cap
(checked: otherwise the test would prove nothing), while ``release_sscp`` and ``regress(path, method="noisy-stats")`` on the path -- read in
batches by pyarrow.dataset, one batch in memory -- succeeds.  Arrow uses the system allocator
and one malloc arena in the child, so the cap measures what is really allocated."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

CAP_MB = 100
K = 8
ROWS = 2_500_000  # 8 float64 columns: 160 MB of values (the file is ~190 MB uncompressed)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_release_streams_a_file_larger_than_the_memory_cap(tmp_path):
    g = np.random.default_rng(0)
    big, small = tmp_path / "big.parquet", tmp_path / "small.parquet"
    with pq.ParquetWriter(big, pa.schema([(f"c{j}", pa.float64()) for j in range(K)]),
                          compression="none") as w:
        for _ in range(ROWS // 250_000):
            w.write_table(pa.table({f"c{j}": g.random(250_000) for j in range(K)}),
                          row_group_size=65_536)
    pq.write_table(pa.table({f"c{j}": g.random(1000) for j in range(K)}), small)
    assert big.stat().st_size > 1.5 * CAP_MB * 2**20
    env = {**os.environ, "ARROW_DEFAULT_MEMORY_POOL": "system", "MALLOC_ARENA_MAX": "1",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    child = Path(__file__).with_name("_memcap_child.py")

    def run(mode):
        out = subprocess.run([sys.executable, str(child), str(big), str(small), mode,
                              str(CAP_MB), str(K)], capture_output=True, text=True, env=env,
                             timeout=300)
        return (out.stdout.strip().splitlines() or [f"no output (rc {out.returncode}): "
                                                     f"{out.stderr[-300:]}"])

    assert run("pandas")[-1].startswith("MEMORYERROR")  # the whole file does not fit
    # release_sscp, then regress(method="noisy-stats"), in one child under the one cap
    assert run("stream") == ["RELEASED True", "RELEASED True"]
