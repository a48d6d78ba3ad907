#!/usr/bin/env python3
"""fit_test.py - the cost bench's fit on synthetic data whose answer is
known: a line with Gaussian noise of known size; the slope and its 95 %
interval must be recovered, the interval must cover the true slope about
95 % of the time, and the ratio's delta-method interval must cover the true
ratio. Seeded, so deterministic; asserts numbers, never times."""
import os
import random
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fit  # noqa: E402


def synthetic(rng, slope, intercept, sigma, xs):
    return [intercept + slope * x + rng.gauss(0, sigma) for x in xs]


class FitTest(unittest.TestCase):
    def test_exact_line(self):
        xs = [0, 1e5, 2e5, 4e5, 8e5]
        line = fit.fit(xs, [2.0 + 3e-5 * x for x in xs])
        self.assertAlmostEqual(line.slope, 3e-5, places=12)
        self.assertAlmostEqual(line.intercept, 2.0, places=9)
        self.assertAlmostEqual(line.r2, 1.0, places=9)
        self.assertLess(line.half, 1e-12)

    def test_known_standard_error(self):
        # 4 points at x = 0, 1, 2, 3 with residuals +1, -1, -1, +1:
        # SSE = 4, Sxx = 5, se = sqrt(4 / 2 / 5), t(2) = 4.303
        line = fit.fit([0, 1, 2, 3], [1, 1, 3, 7])
        self.assertAlmostEqual(line.slope, 2.0)
        self.assertAlmostEqual(line.se, (4 / 2 / 5) ** 0.5)
        self.assertAlmostEqual(line.half, 4.303 * (4 / 2 / 5) ** 0.5)

    def test_interval_covers_true_slope(self):
        rng = random.Random(15)
        xs = [r for r in (0, 25e3, 50e3, 100e3, 200e3) for _ in range(6)]
        covered = 0
        trials = 400
        for _ in range(trials):
            line = fit.fit(xs, synthetic(rng, 30e-6, 4.0, 0.05, xs))
            self.assertAlmostEqual(line.slope, 30e-6, delta=5 * line.se)
            covered += abs(line.slope - 30e-6) <= line.half
        # 95 % nominal: 400 trials put the count within 365..394 with >99.9 %
        self.assertGreaterEqual(covered, 365)
        self.assertLessEqual(covered, 394)

    def test_too_few_points(self):
        self.assertIsNone(fit.fit([1, 2], [1, 2]))
        self.assertIsNone(fit.fit([1, 1, 1], [1, 2, 3]))

    def test_ratio_above_floor(self):
        rng = random.Random(7)
        xs = [r for r in (0, 25e3, 50e3, 100e3, 200e3) for _ in range(8)]
        covered = 0
        trials = 300
        for _ in range(trials):
            floor = fit.fit(xs, synthetic(rng, 20e-6, 4.0, 0.02, xs))
            perf = fit.fit(xs, synthetic(rng, 26e-6, 4.0, 0.02, xs))
            lcpi = fit.fit(xs, synthetic(rng, 22e-6, 4.0, 0.02, xs))
            r, half = fit.ratio(lcpi, perf, floor)  # true: 2 / 6
            covered += abs(r - 1 / 3) <= half
            plain, _ = fit.ratio(lcpi, perf)
            self.assertAlmostEqual(plain, lcpi.slope / perf.slope)
        self.assertGreaterEqual(covered, int(0.90 * trials))

    def test_ratio_undefined_when_denominator_is_noise(self):
        xs = [0, 1, 2, 3, 4]
        floor = fit.fit(xs, [0, 1.1, 1.9, 3.2, 3.9])
        same = fit.fit(xs, [0, 0.9, 2.1, 2.8, 4.1])
        self.assertEqual(fit.ratio(floor, same, floor), (None, None))

    def test_iv_recovers_cost_when_samples_follow_cpu_time(self):
        # the bench's situation: samples = rate x the workload's CPU time, so
        # noise in the CPU time (other load, caches) moves the samples too and
        # OLS on samples leans towards 1/rate; the rate as instrument does not
        rng = random.Random(3)
        cost, rates = 15e-6, [0, 2500, 5000, 10000, 20000]
        zs = [r for r in rates for _ in range(8)]
        covered = 0
        trials = 300
        for _ in range(trials):
            ys, xs = [], []
            for r in zs:
                work = 3.0 * (1 + rng.gauss(0, 0.08))  # 8 % noise in the work itself
                y = work / (1 - cost * r)  # y = work + cost * (r * y)
                ys.append(y)
                xs.append(r * y)
            iv = fit.fit_iv(xs, ys, zs)
            covered += abs(iv.slope - cost) <= iv.half
        self.assertGreaterEqual(covered, int(0.90 * trials))


if __name__ == "__main__":
    unittest.main()
