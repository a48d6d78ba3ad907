"""fit.py - the arithmetic of the cost bench: a line fitted by least squares
(fit) or with an instrument (fit_iv, what the bench uses),
y = a + b x with the slope's 95 % interval from Student's t (n - 2 degrees
of freedom) and R^2, and ratios of slopes with their intervals by the delta
method (first-order error propagation). Standard library only."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "overhead"))
from stats import t95  # noqa: E402


class Line:
    """A fitted line: slope, intercept, the slope's standard error and 95 %
    half-width, R^2, and n points."""

    def __init__(self, slope, intercept, se, half, r2, n):
        self.slope, self.intercept, self.se, self.half, self.r2, self.n = (
            slope, intercept, se, half, r2, n)

    def as_dict(self):
        return {"slope": self.slope, "intercept": self.intercept, "slope_se": self.se,
                "slope_ci95": self.half, "r2": self.r2, "n": self.n}


def fit(xs, ys):
    """Least squares of ys on xs. None for fewer than 3 points or when all
    xs are equal (no slope to find)."""
    n = len(xs)
    if n != len(ys) or n < 3:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    syy = sum((y - my) ** 2 for y in ys)
    b = sxy / sxx
    a = my - b * mx
    sse = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    se = math.sqrt(sse / (n - 2) / sxx)
    r2 = 1.0 - sse / syy if syy > 0 else 1.0
    return Line(b, a, se, t95(n - 2) * se, r2, n)


def ratio(num, den, shared=None):
    """(num - shared) / (den - shared) of slopes (Line objects; shared may be
    None: then num / den), with a 95 % half-width by the delta method:
    Var(N/D) ~ (N/D)^2 (Var N/N^2 + Var D/D^2 - 2 Cov(N,D)/(N D)), where
    the fits are independent but for the shared slope subtracted from both
    (Cov = Var shared). The normal 1.96 is used: the combined degrees of
    freedom are many. Returns (ratio, half-width), or (None, None) when the
    denominator is not clearly above zero."""
    n, d = num.slope, den.slope
    vn, vd, cov = num.se ** 2, den.se ** 2, 0.0
    if shared is not None:
        n -= shared.slope
        d -= shared.slope
        vs = shared.se ** 2
        vn, vd, cov = vn + vs, vd + vs, vs
    if d <= 0 or d < 2 * math.sqrt(vd):
        return None, None
    r = n / d
    rel = vd / d ** 2 - (2 * cov / (n * d) if n else 0.0) + (vn / n ** 2 if n else 0.0)
    var = r * r * rel if n else vn / d ** 2
    return r, 1.96 * math.sqrt(max(0.0, var))


def fit_iv(xs, ys, zs):
    """The line y = a + b x by instrumental variables, z the instrument
    (one instrument: b = Cov(z, y) / Cov(z, x)). The cost bench's x, the
    samples taken on the workload, is the sampling rate times the workload's
    own CPU time, so whatever else lengthens that CPU time raises x too and
    least squares (fit) leans towards 1/rate; the nominal rate z is set by
    the bench and moves x only through the profiler. The slope's standard
    error is the usual IV one: sigma^2 Szz / Szx^2, sigma^2 from the
    residuals on n - 2 degrees of freedom; R^2 is 1 - SSE/Syy of the IV
    line. None for fewer than 3 points or no variation in z or x."""
    n = len(xs)
    if n != len(ys) or n != len(zs) or n < 3:
        return None
    mx, my, mz = sum(xs) / n, sum(ys) / n, sum(zs) / n
    szx = sum((z - mz) * (x - mx) for z, x in zip(zs, xs))
    szz = sum((z - mz) ** 2 for z in zs)
    if szx == 0 or szz == 0:
        return None
    b = sum((z - mz) * (y - my) for z, y in zip(zs, ys)) / szx
    a = my - b * mx
    sse = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    syy = sum((y - my) ** 2 for y in ys)
    se = math.sqrt(sse / (n - 2) * szz) / abs(szx)
    r2 = 1.0 - sse / syy if syy > 0 else 1.0
    return Line(b, a, se, t95(n - 2) * se, r2, n)
