"""Exact noise throughput (secure: CSPRNG; seeded: SHAKE256 streams) vs OpenDP's samplers and
numpy's float noise (the simulation opt-in).

Everything is measured in the same run on the same machine; the table prints draws per second
and the ratio to OpenDP's discrete samplers (the issue's target: >= 1e6 draws/s for dpreg).

Run: .venv/bin/python benchmarks/bench_secure_noise.py [--draws 1000000]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from _timing import best_of, table

from dpreg._random import simulation_generator
from dpreg.mechanisms import gaussian, laplace
from dpreg.mechanisms import secure as S
from dpreg.privacy import ZCDP


def _opendp_samplers(n: int) -> dict[str, object]:
    """OpenDP measurements drawing n discrete Laplace / Gaussian values (None if unavailable)."""
    try:
        import opendp.prelude as dp
    except ImportError:  # pragma: no cover - optional oracle
        return {}
    dp.enable_features("contrib")
    space = (dp.vector_domain(dp.atom_domain(T=int)),)
    lap = dp.m.make_laplace(*space, dp.l1_distance(T=int), scale=2.0**14)
    gau = dp.m.make_gaussian(*space, dp.l2_distance(T=float), scale=2.0**14)
    zeros = [0] * n
    return {"laplace": lambda: lap(zeros), "gaussian": lambda: gau(zeros)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=1_000_000)
    ap.add_argument("--opendp-draws", type=int, default=20_000,
                    help="OpenDP is ~50x slower: time it on fewer draws (rate is per draw)")
    args = ap.parse_args()
    n, m = args.draws, args.opendp_draws
    v = np.zeros(n)
    g = np.random.default_rng(0)
    rows: list[tuple[str, str, str, str]] = []
    rates: dict[str, float] = {}

    def add(label: str, seconds: float, draws: int, ref: str | None) -> None:
        rate = draws / seconds
        rates[label] = rate
        ratio = f"{rate / rates[ref]:.1f}x" if ref and ref in rates else "-"
        rows.append((label, f"{seconds * 1e3:.1f} ms / {draws:,}", f"{rate:,.0f}", ratio))

    od = _opendp_samplers(m)
    if od:
        add("OpenDP discrete Laplace (scale 2^14)", best_of(od["laplace"], repeat=3), m, None)
        add("OpenDP discrete Gaussian (sd 2^14)", best_of(od["gaussian"], repeat=3), m, None)
    lap_ref = "OpenDP discrete Laplace (scale 2^14)"
    gau_ref = "OpenDP discrete Gaussian (sd 2^14)"
    add("dpreg discrete_laplace (scale 2^14)",
        best_of(lambda: S.discrete_laplace(2**14, n), repeat=3), n, lap_ref)
    add("dpreg discrete_gaussian (sd 2^14)",
        best_of(lambda: S.discrete_gaussian(2.0**14, n), repeat=3), n, gau_ref)
    add("dpreg laplace(rng=None) secure, 1 release of 1e6 coords",
        best_of(lambda: laplace(v, sensitivity=1.0, epsilon=1.0), repeat=3), n, lap_ref)
    add("dpreg gaussian(rng=None) secure, 1 release of 1e6 coords",
        best_of(lambda: gaussian(v, sensitivity=1.0, budget=ZCDP(0.5)), repeat=3), n, gau_ref)
    add("dpreg laplace(rng=Generator) seeded, 1 release of 1e6 coords",
        best_of(lambda: laplace(v, sensitivity=1.0, epsilon=1.0, rng=g), repeat=3), n, lap_ref)
    add("dpreg gaussian(rng=Generator) seeded, 1 release of 1e6 coords",
        best_of(lambda: gaussian(v, sensitivity=1.0, budget=ZCDP(0.5), rng=g), repeat=3), n,
        gau_ref)
    sim = simulation_generator(0)
    add("numpy float Laplace (simulation mode)",
        best_of(lambda: laplace(v, sensitivity=1.0, epsilon=1.0, rng=sim), repeat=3), n, lap_ref)
    add("numpy float normal (simulation mode)",
        best_of(lambda: gaussian(v, sensitivity=1.0, budget=ZCDP(0.5), rng=sim), repeat=3), n,
        gau_ref)
    print(table(rows, ("sampler", "time", "draws/s", "vs OpenDP")))
    ok = all(rates[k] >= 1e6 for k in rates if k.startswith("dpreg discrete"))
    print(f"\ndpreg discrete samplers >= 1e6 draws/s: {ok}")
    if not math.isfinite(sum(rates.values())):  # pragma: no cover
        raise SystemExit(1)


if __name__ == "__main__":
    main()
