"""Cost of the integrity check when a release file is read, against reading the same release
from a file without a record (format version 2: parse + content checks), in the same run.

``SSCPRelease.load`` of a version-3 file also serialises the parsed document canonically and
hashes it (SHA-256; with a key also HMAC-SHA256); measured for releases of d columns
((d + 1)^2 entries per matrix).

Run: .venv/bin/python benchmarks/bench_release_file.py [--columns 50 200 400]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import numpy as np
from _timing import best_of, table

from dpreg.covariance import SSCPRelease, release_sscp
from dpreg.privacy import create_key_file


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--columns", type=int, nargs="+", default=[50, 200, 400])
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        key = d / "k.key"
        create_key_file(key)
        for cols in args.columns:
            g = np.random.default_rng(0)
            names = [f"c{j}" for j in range(cols)]
            data = g.uniform(0, 1, (500, cols))
            rel = release_sscp(data, columns=names, bounds={c: (0, 1) for c in names},
                               epsilon=1.0, delta=1e-6)
            v3 = rel.save(d / f"v3_{cols}.json")
            signed = rel.save(d / f"signed_{cols}.json", key=key)
            doc = json.loads(v3.read_text())
            del doc["integrity"]
            doc["format_version"] = 2
            v2 = d / f"v2_{cols}.json"
            v2.write_text(json.dumps(doc, indent=1))
            size = os.path.getsize(v3) / 2**20
            base = best_of(lambda: SSCPRelease.load(v2), repeat=3)
            digest = best_of(lambda: SSCPRelease.load(v3), repeat=3)
            mac = best_of(lambda: SSCPRelease.load(signed, key=key), repeat=3)
            rows.append((f"{cols} columns ({size:.1f} MiB)", f"{base * 1e3:.0f}",
                         f"{digest * 1e3:.0f}", f"{digest / base:.2f}x", f"{mac * 1e3:.0f}",
                         f"{mac / base:.2f}x"))
    print(table(rows, ("release", "v2 load ms", "v3 digest ms", "ratio", "v3 HMAC ms",
                       "ratio")))


if __name__ == "__main__":
    main()
