"""Child process of test_memory_cap.py: warm up on a small file, cap the address space at
(current size + CAP_MB) with RLIMIT_AS, then either load the big file with pandas or stream
two releases from it (``release_sscp``, then ``regress(..., method="noisy-stats")``); prints a
line per step (LOADED / RELEASED / MEMORYERROR / ERR ...)."""

import resource
import sys
import warnings

warnings.simplefilter("ignore")

import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402

import dpreg  # noqa: E402
from dpreg.covariance import release_sscp  # noqa: E402

big, small, mode, cap_mb, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
pa.set_cpu_count(1)
pa.set_io_thread_count(1)
cols = [f"c{j}" for j in range(k)]
kw = dict(columns=cols, bounds=[(0.0, 1.0)] * k, epsilon=1.0, delta=1e-6, rng=1)
# every code path once (imports, thread pools, allocator arenas) before the cap
pd.read_parquet(small)
release_sscp(small, **kw)
ns_kw = dict(method="noisy-stats", epsilon=1.0, bounds={"c0": (0.0, 1.0), "c1": (0.0, 1.0)},
             random_state=1)
dpreg.regress(small, "c1 ~ c0", **ns_kw)


def vm_bytes() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize")


cap = vm_bytes() + cap_mb * 2**20
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
try:
    if mode == "pandas":
        print("LOADED", len(pd.read_parquet(big)))
    else:  # both streamed releases under the one cap: the SSCP matrix, then a simple one-x
        # release (noisy-stats: the same chunked reading)
        rel = release_sscp(big, **kw)
        print("RELEASED", rel.metadata["sigma"] > 0, flush=True)
        res = dpreg.regress(big, "c1 ~ c0", **ns_kw)
        print("RELEASED", res.nobs > 1_000_000 and not res.failed)
except MemoryError as exc:  # pyarrow's ArrowMemoryError is a MemoryError
    print("MEMORYERROR", type(exc).__name__)
except Exception as exc:
    print("ERR", type(exc).__name__, str(exc)[:300])
