"""Batched per-group randomness: every batched path equals the unbatched one bit for bit, and
the comparisons reject a wrong generator order.

* :class:`dpreg.mechanisms._pcg64.PCG64Rows` -- numpy's SeedSequence → PCG64 seeding and
  ``random_raw`` as array arithmetic over rows -- against numpy's own objects;
* :meth:`RowRandomness.seed_sequences` (what seeded ``fit_by_group`` uses) against
  :meth:`RowRandomness.seeded` with one numpy object per row: keys, take, generator;
* ``group_randomness`` against the per-group generators of the reference loop
  (``group_generator``), for every kind of key, and the seeded tables of the vectorised
  methods against the reference loop.
"""

import numpy as np
import pandas as pd
import pytest

from dpreg import fit_by_group
from dpreg.grouped._common import (
    _key_words,
    _key_words_array,
    group_generator,
    group_randomness,
    group_seed_sequence,
    make_spec,
)
from dpreg.mechanisms import RowRandomness, laplace_rows
from dpreg.mechanisms._pcg64 import PCG64Rows, run_entropy_words

BOUNDS = {"x": (0.0, 1.0), "y": (0.0, 1.0)}

ENTROPIES = [0, 2, 2**32, 2**40 + 7, 2**128 - 1, 2**300 + 12345, [1, 2, 3], [5, [2**70, 9]],
             np.random.SeedSequence(123).entropy]


def _numpy_rows(entropy, words):
    return [np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=tuple(int(w) for w in k)))
            for k in words]


@pytest.mark.parametrize("entropy", ENTROPIES)
def test_pcg64_rows_are_numpys_generators(entropy):
    g = np.random.default_rng(1)
    words = g.integers(0, 2**32, size=(40, 4), dtype=np.uint64)
    words[0] = 0
    words[1] = 2**32 - 1
    rows = PCG64Rows.from_seed_sequences(entropy, words)
    assert rows is not None and rows.rows == 40
    ref = _numpy_rows(entropy, words)
    # several raw calls of different lengths, on all rows and on a subset
    for count in (1, 4, 12):
        got = rows.raw(np.arange(40), count)
        assert np.array_equal(got, np.stack([r.random_raw(count) for r in ref]))
    sub = np.array([3, 17, 5])
    got = rows.raw(sub, 3)
    assert np.array_equal(got, np.stack([ref[j].random_raw(3) for j in sub]))
    assert np.array_equal(rows.raw(np.arange(40), 2),
                          np.stack([r.random_raw(2) for r in ref]))


def test_pcg64_rows_spawn_keys_of_other_lengths():
    for k in (1, 2, 7):
        words = np.arange(6 * k, dtype=np.uint64).reshape(6, k) * 977
        rows = PCG64Rows.from_seed_sequences(99, words)
        assert rows is not None
        assert np.array_equal(rows.raw(np.arange(6), 5),
                              np.stack([r.random_raw(5) for r in _numpy_rows(99, words)]))


def test_pcg64_rows_generator_hands_a_row_over_without_repeating_outputs():
    words = np.arange(20, dtype=np.uint64).reshape(5, 4)
    rows = PCG64Rows.from_seed_sequences(7, words)
    ref = _numpy_rows(7, words)
    assert np.array_equal(rows.raw(np.arange(5), 2), np.stack([r.random_raw(2) for r in ref]))
    gen = rows.generator(2)  # row 2 now lives in a numpy Generator
    assert gen.standard_normal() == np.random.Generator(ref[2]).standard_normal()
    assert rows.generator(2) is gen
    assert np.array_equal(rows.raw(np.arange(5), 3), np.stack([r.random_raw(3) for r in ref]))


def test_entropy_words_are_numpys():
    for ent in ENTROPIES:
        words = run_entropy_words(ent)
        assert words is not None
        # numpy pads the run entropy to the pool size; the words themselves agree
        pool = np.random.SeedSequence(ent).pool
        mine = np.random.SeedSequence(words).pool
        assert np.array_equal(pool, mine)
    assert run_entropy_words(-1) is None and run_entropy_words("12") is None
    assert run_entropy_words(True) is None


def test_seed_sequences_equal_one_numpy_object_per_row():
    g = np.random.default_rng(2)
    words = g.integers(0, 2**32, size=(30, 4), dtype=np.uint64)
    fast = RowRandomness.seed_sequences(5, words)
    slow = RowRandomness.seeded(_numpy_rows(5, words))
    assert fast._lanes is not None and slow._lanes is None
    assert fast.keys(2) == slow.keys(2)
    assert fast.flat_keys(1) == slow.flat_keys(1)
    sel = np.array([4, 0, 29, 11])
    assert fast.take(sel).flat_keys(3) == slow.take(sel).flat_keys(3)
    assert fast.generator(11).random() == slow.generator(11).random()
    assert fast.keys(1) == slow.keys(1)  # rows 4, 0, 29, 11 advanced alike in both
    assert fast.keys(0) == slow.keys(0) == [[] for _ in range(30)]
    assert not fast.is_secure and not fast.is_simulation()
    # the comparison rejects a wrong row order: the same generators, rows reversed
    rev = RowRandomness.seed_sequences(5, words[::-1])
    fresh = RowRandomness.seed_sequences(5, words)
    got, want = rev.flat_keys(1), fresh.flat_keys(1)
    assert got != want and got[::-1] == want


def test_seed_sequences_of_an_unsupported_entropy_fall_back_to_numpy_objects():
    words = np.arange(8, dtype=np.uint64).reshape(2, 4)
    ent = np.array([1, 2], dtype=np.uint32)  # an array: numpy's objects are used
    rr = RowRandomness.seed_sequences(ent, words)
    assert rr._lanes is None
    assert rr.flat_keys(1) == RowRandomness.seeded(_numpy_rows(ent, words)).flat_keys(1)
    assert RowRandomness.seed_sequences(5, np.zeros((0, 4), dtype=np.uint64)).rows == 0


def test_laplace_rows_with_batched_generators_equal_one_call_per_group():
    g = np.random.default_rng(3)
    words = g.integers(0, 2**32, size=(25, 4), dtype=np.uint64)
    values = g.normal(size=25)
    sens = g.uniform(0.5, 2.0, 25)
    fast = laplace_rows(values, sensitivity=sens, epsilon=0.7,
                        rng=RowRandomness.seed_sequences(8, words))
    loop = laplace_rows(values, sensitivity=sens, epsilon=0.7,
                        rng=RowRandomness.seeded(_numpy_rows(8, words)))
    assert np.array_equal(fast, loop)
    from dpreg.mechanisms import laplace

    for j in (0, 13, 24):  # row j is the single call with row j's own generator
        gen = np.random.Generator(_numpy_rows(8, words[j:j + 1])[0])
        assert laplace(values[j], sensitivity=sens[j], epsilon=0.7, rng=gen) == fast[j]
    swapped = laplace_rows(values, sensitivity=sens, epsilon=0.7,
                           rng=RowRandomness.seed_sequences(8, words[[1, 0, *range(2, 25)]]))
    assert not np.array_equal(swapped[:2], fast[:2])


KEYS = [0, 1, 7, 2**40, -3, 2.5, "a", "tract-17", True, False, ("x", 3), (1, 2.0)]


def test_key_words_array_is_key_words():
    assert np.array_equal(_key_words_array(KEYS), np.array([_key_words(k) for k in KEYS]))
    assert _key_words_array([]).shape == (0, 4)


@pytest.mark.parametrize("root,keys", [
    (5, list(range(50))), (2**127 + 3, [-2, 0, 2**40, 2.5, 3.0]), (None, ["a", "tract-17"]),
    (11, [True, False])])
def test_group_randomness_is_the_reference_loops_generators(root, keys):
    spec = make_spec(["k", "x", "y"], None, "k", "x", "y", method="noisy-stats", epsilon=1.0,
                     bounds=BOUNDS, delta=None, groups=keys,
                     random_state=root if root is not None else np.random.SeedSequence(),
                     options={})
    rr = group_randomness(spec, spec.keys)
    assert rr._lanes is not None
    got = rr.flat_keys(2)
    want = []
    for k in spec.keys:
        gen = group_generator(spec, k)
        raw = gen.bit_generator.random_raw(8).astype("<u8").tobytes()
        want += [raw[:32], raw[32:]]
    assert got == want
    k0 = spec.keys[0]  # the generators are group_seed_sequence's
    assert got[0] == np.random.PCG64(group_seed_sequence(spec.root, k0)).random_raw(4).astype(
        "<u8").tobytes()


def _table(groups, seed, sizes):
    g = np.random.default_rng(seed)
    n = g.choice(sizes, groups)
    keys = np.repeat(np.arange(groups), n)
    x = g.uniform(-0.1, 1.1, keys.size)
    y = 0.2 + 0.5 * x + g.normal(0, 0.2, keys.size)
    return pd.DataFrame({"k": keys, "x": x, "y": y}).sample(frac=1, random_state=seed)


@pytest.mark.parametrize("method", ["noisy-stats", "dp-intercept", "dp-gd"])
def test_batched_seeded_table_equals_the_per_group_loop(method):
    df = _table(150, 4, (0, 1, 2, 5, 9, 60, 129, 300))
    kw = dict(method=method, epsilon=1.0, bounds=BOUNDS, groups=list(range(150)),
              random_state=2**100 + 17, n_iter=15) if method == "dp-gd" else dict(
        method=method, epsilon=1.0, bounds=BOUNDS, groups=list(range(150)),
        random_state=2**100 + 17)
    loc = fit_by_group(df, "k", "x", "y", **kw)
    ref = fit_by_group(df, "k", "x", "y", backend="reference", **kw)
    assert loc.attrs["backend"] == "local"
    pd.testing.assert_frame_equal(loc, ref)
    other = fit_by_group(df, "k", "x", "y", **{**kw, "random_state": 2**100 + 18})
    ok = ~loc["failed"]
    assert (loc.loc[ok, "intercept"] != other.loc[ok, "intercept"]).all()


# --------------------------------------------------------------------------- the integrator's
# checks (issue 32 item 8b review): every row of a sizeable batch, random entropy and keys; a
# changed algorithm fails loudly; secure mode never uses the arrays
def _all_rows_agree(entropy, words, count=3):
    rows = PCG64Rows.from_seed_sequences(entropy, words)
    assert rows is not None
    ref = _numpy_rows(entropy, words)
    for g, r in enumerate(ref):  # the seeded state of every row, then its first outputs
        st = r.state["state"]
        assert rows._state(g) == (st["state"], st["inc"]), (entropy, g)
    got = rows.raw(np.arange(len(ref)), count)
    want = np.stack([r.random_raw(count) for r in ref])
    bad = np.flatnonzero((got != want).any(axis=1))
    assert bad.size == 0, (entropy, bad[:10])


def test_pcg64_rows_every_row_of_a_large_batch_with_random_entropy_and_keys():
    """3,000 rows of random 32-bit spawn words (every carry of the 128-bit arithmetic gets
    exercised many times) under a fresh random entropy (printed on failure) and a seeded
    256-bit one; shorter and longer keys on 500 rows."""
    g = np.random.default_rng(20261203)
    fresh = np.random.SeedSequence().entropy  # numpy's own 128-bit random entropy
    for entropy in (fresh, int(g.integers(0, 2**63)) << 193 | 12345):
        words = g.integers(0, 2**32, size=(3000, 4), dtype=np.uint64)
        _all_rows_agree(entropy, words)
    for k in (1, 3, 6):
        _all_rows_agree(int(g.integers(0, 2**62)), g.integers(0, 2**32, size=(500, k),
                                                               dtype=np.uint64))


def test_pcg64_rows_fail_loudly_when_numpys_algorithm_differs(monkeypatch):
    """If the array arithmetic ever stopped being numpy's (a changed constant here), building
    the rows raises -- it never hands out streams that are not numpy's."""
    from dpreg.mechanisms import _pcg64

    words = np.arange(12, dtype=np.uint64).reshape(3, 4)
    monkeypatch.setattr(_pcg64, "_MULT_B", _pcg64._MULT_B ^ 2)
    with pytest.raises(RuntimeError, match="numpy"):
        PCG64Rows.from_seed_sequences(5, words)
    with pytest.raises(RuntimeError, match="numpy"):
        RowRandomness.seed_sequences(5, words)


def test_secure_tables_never_use_the_array_generators(monkeypatch):
    """Secure mode (random_state=None) draws from os.urandom: group_randomness is secure and
    PCG64Rows is never built (a table would fail here if it were)."""
    from dpreg.mechanisms import _pcg64

    def refuse(*a, **k):
        raise AssertionError("PCG64Rows used in secure mode")

    spec = make_spec(["k", "x", "y"], None, "k", "x", "y", method="noisy-stats", epsilon=1.0,
                     bounds=BOUNDS, delta=None, groups=[1, 2, 3], random_state=None,
                     options={})
    monkeypatch.setattr(_pcg64.PCG64Rows, "from_seed_sequences", classmethod(refuse))
    rr = group_randomness(spec, spec.keys)
    assert rr.is_secure and rr._lanes is None and rr.flat_keys(1) is None
    df = _table(20, 1, (5, 9))
    for method in ("noisy-stats", "dp-intercept", "dp-gd"):  # the vectorised methods
        out = fit_by_group(df, "k", "x", "y", method=method, epsilon=1.0, bounds=BOUNDS,
                           groups=list(range(20)), n_iter=5) if method == "dp-gd" else \
            fit_by_group(df, "k", "x", "y", method=method, epsilon=1.0, bounds=BOUNDS,
                         groups=list(range(20)))
        assert out.attrs["backend"] == "local" and len(out) == 20
    # the probe can fail: a seeded table does build the arrays
    with pytest.raises(AssertionError, match="secure mode"):
        fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1.0, bounds=BOUNDS,
                     groups=list(range(20)), random_state=3)
