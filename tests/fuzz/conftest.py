"""Fuzz helpers: make ``fuzzlib`` importable and dump per-target example counts.

Set ``DPREG_FUZZ_EXAMPLES`` to change the number of Hypothesis examples per target (default
40 in the fast suite) and ``DPREG_FUZZ_STATS=FILE`` to append the counts as JSON lines.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("DPREG_FUZZ_STATS")
    if not path:
        return
    import fuzzlib

    with open(path, "a") as fh:
        fh.write(json.dumps({"pid": os.getpid(), "counts": fuzzlib.COUNTS}) + "\n")
