"""scripts/runs.py's confidence interval of a median of benchmark rounds."""

import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import runs  # noqa: E402


def test_interval_ranks_match_the_binomial_tables():
    # Ranks of the 95 % interval of the median (e.g. Conover, Practical Nonparametric
    # Statistics, table A3; the 1-based order statistics x_(k), x_(n+1-k)).
    for n, k in [(6, 1), (9, 2), (10, 2), (12, 3), (17, 5), (20, 6), (50, 18)]:
        med, lo, hi, covered = runs.median_interval(list(range(1, n + 1)))
        assert (lo, hi) == (k, n + 1 - k), n
        assert covered >= 0.95 and med == (n + 1) / 2
        # One rank further in would cover less than 95 %.
        inner = 1 - 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
        assert k + 1 > (n + 1) // 2 or inner < 0.95, n


def test_too_few_rounds_give_the_range_and_say_so():
    med, lo, hi, covered = runs.median_interval([3.0, 1.0, 2.0, 4.0])
    assert (med, lo, hi) == (2.5, 1.0, 4.0)
    assert covered == 1 - 2 / 16


def test_interval_holds_the_true_median_as_often_as_it_says():
    # Skewed rounds (a lognormal slowdown, as a busy neighbour gives): the interval of 15
    # rounds must hold the true median (1.0) in at least its stated share of 4000 trials,
    # within three standard errors.
    rng = random.Random(7)
    n, trials = 15, 4000
    covered = runs.median_interval(range(n))[3]
    hits = 0
    for _ in range(trials):
        xs = [math.exp(rng.gauss(0.0, 0.3)) for _ in range(n)]
        _, lo, hi, _ = runs.median_interval(xs)
        hits += lo <= 1.0 <= hi
    sigma = math.sqrt(covered * (1 - covered) / trials)
    assert hits / trials >= covered - 3 * sigma
    # And it is not the whole range: it would hold the median every time.
    assert hits < trials


def test_text_names_the_interval_and_rounds():
    text = runs.median_text([1.0, 1.1, 0.9, 1.2, 0.8, 1.05, 0.95, 1.0, 1.02, 0.98])
    assert text == "1.000 (0.900-1.100, 98 % interval of the median, 10 rounds)"
