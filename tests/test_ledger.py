import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from fractions import Fraction

import numpy as np
import pytest

from dpreg import (
    GDP,
    ZCDP,
    ApproxDP,
    BudgetExceededError,
    InvalidInputError,
    Ledger,
    PureDP,
    compose,
)
from dpreg.privacy.budgets import gdp_epsilon, zcdp_epsilon


class TestInMemory:
    def test_spend_and_refuse(self):
        led = Ledger(PureDP(1.0))
        led.spend(PureDP(0.6), "first")
        with pytest.raises(BudgetExceededError, match="would exceed"):
            led.spend(PureDP(0.5), "second")
        assert [e.label for e in led.events()] == ["first"]
        assert led.spent() == PureDP(0.6)
        assert led.remaining().epsilon == pytest.approx(0.4)

    def test_decimal_charges_fit(self):
        led = Ledger(PureDP(1.0))
        for _ in range(10):
            led.spend(PureDP(0.1))
        with pytest.raises(BudgetExceededError):
            led.spend(PureDP(1e-6))
        assert len(led.events()) == 10

    def test_split_parts_always_fit(self):
        total = PureDP(0.7)
        led = Ledger(total, slack=0.0)  # no tolerance at all: split() is exact
        for part in total.split([1] * 97):
            led.spend(part)
        assert Fraction(led.spent().epsilon) <= Fraction(0.7)

    def test_kinds(self):
        with pytest.raises(InvalidInputError, match="cannot account"):
            Ledger(PureDP(1)).spend(GDP(0.1))
        with pytest.raises(InvalidInputError, match="cannot account"):
            Ledger(GDP(1)).spend(PureDP(0.1))
        z = Ledger(ZCDP(1.0))
        z.spend(PureDP(1.0))  # ε=1 pure -> ρ=0.5
        z.spend(GDP(0.6))  # -> ρ=0.18
        assert z.spent().rho == pytest.approx(0.68)
        with pytest.raises(BudgetExceededError):
            z.spend(ZCDP(0.33))
        z.spend(ZCDP(0.31))

    def test_approx_ledger_gdp_exact_curve(self):
        led = Ledger(ApproxDP(1.0, 1e-6))
        led.spend(GDP(0.1))
        led.spend(GDP(0.2))
        mu = math.sqrt(0.1**2 + 0.2**2)
        assert led.spent().epsilon == pytest.approx(gdp_epsilon(mu, 1e-6), rel=1e-12)
        assert led.spent().delta == 1e-6

    def test_approx_ledger_mixed(self):
        led = Ledger(ApproxDP(2.0, 1e-6))
        led.spend(ApproxDP(0.5, 4e-7))
        led.spend(ZCDP(0.01))
        led.spend(PureDP(0.1))
        expected = 0.6 + zcdp_epsilon(0.01, 6e-7)
        assert led.spent().epsilon == pytest.approx(expected, rel=1e-12)

    def test_approx_ledger_needs_delta_for_concentrated(self):
        led = Ledger(ApproxDP(5.0, 0.0))
        with pytest.raises(BudgetExceededError):
            led.spend(ZCDP(0.001))
        led.spend(PureDP(5.0))

    def test_refusal_records_nothing(self):
        led = Ledger(ApproxDP(1.0, 1e-6))
        led.spend(ApproxDP(0.9, 5e-7))
        before = (led.spent(), len(led.events()))
        with pytest.raises(BudgetExceededError):
            led.spend(ApproxDP(0.2, 1e-7))
        assert (led.spent(), len(led.events())) == before
        assert led.can_spend(ApproxDP(0.1, 1e-7))
        assert not led.can_spend(ApproxDP(0.1, 6e-7))

    def test_infinite(self):
        with pytest.raises(BudgetExceededError):
            Ledger(PureDP(100)).spend(PureDP(math.inf))
        Ledger(PureDP(math.inf)).spend(PureDP(1e9))

    def test_bad_args(self):
        with pytest.raises(InvalidInputError, match="total"):
            Ledger(None)
        with pytest.raises(InvalidInputError, match="budget"):
            Ledger(PureDP(1)).spend(0.5)  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError, match="label"):
            Ledger(PureDP(1)).spend(PureDP(0.1), label=3)  # type: ignore[arg-type]


def _hammer(led: Ledger, n_threads: int, n_charges: int, max_charge: float, seed: int):
    returned: list = [[] for _ in range(n_threads)]
    refused = [0] * n_threads
    start = threading.Barrier(n_threads)

    def worker(i: int) -> None:
        g = np.random.default_rng([seed, i])
        start.wait()
        for _ in range(n_charges):
            b = PureDP(float(g.uniform(0, max_charge)))
            try:
                returned[i].append(led.spend(b, f"t{i}"))
            except BudgetExceededError:
                refused[i] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [e for r in returned for e in r], sum(refused)


class TestConcurrency:
    def test_64_threads_1000_charges(self):
        total = PureDP(10.0)
        led = Ledger(total, slack=0.0)
        events, refused = _hammer(led, 64, 1000, 4e-4, seed=1)
        assert refused > 0  # the total was actually reached
        exact = sum(Fraction(e.budget.epsilon) for e in events)
        assert exact <= Fraction(10.0)
        assert {e.id for e in events} == {e.id for e in led.events()}
        assert len(led.events()) == len(events)
        assert led.spent().epsilon == compose([e.budget for e in events]).epsilon

    def test_threads_sqlite(self, tmp_path):
        led = Ledger(PureDP(0.5), tmp_path / "l.db", slack=0.0)
        events, refused = _hammer(led, 8, 60, 3e-3, seed=2)
        assert refused > 0
        assert sum(Fraction(e.budget.epsilon) for e in events) <= Fraction(0.5)
        led.close()
        again = Ledger(PureDP(0.5), tmp_path / "l.db")
        assert {e.id for e in again.events()} == {e.id for e in events}


class TestPersistence:
    def test_reopen(self, tmp_path):
        path = tmp_path / "ledger.db"
        with Ledger(ApproxDP(1.0, 1e-6), path) as led:
            led.spend(PureDP(0.25), "a")
            led.spend(GDP(0.1), "b")
        again = Ledger(None, path)
        assert again.total == ApproxDP(1.0, 1e-6)
        assert [e.label for e in again.events()] == ["a", "b"]
        assert again.spent() == led.spent()

    def test_total_mismatch(self, tmp_path):
        path = tmp_path / "ledger.db"
        Ledger(PureDP(1.0), path).close()
        with pytest.raises(InvalidInputError, match="must match"):
            Ledger(PureDP(2.0), path)

    def test_new_file_needs_total(self, tmp_path):
        with pytest.raises(InvalidInputError, match="total must be given"):
            Ledger(None, tmp_path / "missing.db")

    def test_two_handles_share_the_budget(self, tmp_path):
        path = tmp_path / "shared.db"
        a = Ledger(PureDP(1.0), path)
        b = Ledger(PureDP(1.0), path)
        a.spend(PureDP(0.6))
        with pytest.raises(BudgetExceededError):
            b.spend(PureDP(0.6))  # b catches up on a's charge before deciding
        b.spend(PureDP(0.4))
        with pytest.raises(BudgetExceededError):
            a.spend(PureDP(0.01))


CHARGER = textwrap.dedent(
    """
    import sys
    from dpreg import Ledger, PureDP, BudgetExceededError
    led = Ledger(PureDP(1e6), sys.argv[1])
    i = 0
    while True:
        ev = led.spend(PureDP(0.001), f"c{i}")
        print(ev.id, flush=True)   # the result is handed back only after the charge committed
        i += 1
    """
)


def kill_mid_charging(path, n_returned: int, delay: float = 0.0) -> list[int]:
    """Start a charging process, read ``n_returned`` committed charges, wait ``delay`` seconds
    (so that the kill lands at an arbitrary point inside ``spend``/the SQLite commit rather
    than right after a print) and SIGKILL it."""
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-c", CHARGER, str(path)], stdout=subprocess.PIPE,
                            text=True, env=env)
    seen = []
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.append(int(line))
        if len(seen) >= n_returned:
            break
    if delay > 0:
        time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return seen


def check_ledger_after_kill(path, seen):
    led = Ledger(None, path)  # opens and parses
    ids = {e.id for e in led.events()}
    assert set(seen) <= ids, "a charge whose result was returned was forgotten"
    assert Fraction(led.spent().epsilon) >= Fraction(0.001) * len(seen) * (1 - Fraction(1, 10**9))
    led.spend(PureDP(0.001))  # still usable
    led.close()


@pytest.mark.parametrize("n_returned", [1, 7, 40])
def test_sigkill_never_forgets_returned_charges(tmp_path, n_returned):
    path = tmp_path / "crash.db"
    seen = kill_mid_charging(path, n_returned)
    check_ledger_after_kill(path, seen)


@pytest.mark.slow
def test_sigkill_many_times(tmp_path):
    g = np.random.default_rng(5)
    for trial in range(200):
        path = tmp_path / f"crash{trial}.db"
        seen = kill_mid_charging(path, int(g.integers(1, 60)), delay=float(g.uniform(0, 0.005)))
        check_ledger_after_kill(path, seen)
