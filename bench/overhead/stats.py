"""stats.py - the arithmetic of the overhead tables: mean and a 95 %
confidence interval from Student's t-distribution (the samples are few, so
the normal approximation would be too narrow). Standard library only."""
import math

# two-sided 95 % critical values of t for 1..30 degrees of freedom
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t95(df):
    """The t critical value for df degrees of freedom (1.96 beyond 120)."""
    if df < 1:
        return float("nan")
    if df <= 30:
        return _T95[df - 1]
    return 2.021 if df <= 40 else 2.000 if df <= 60 else 1.980 if df <= 120 else 1.960


def mean_ci(xs):
    """(mean, half-width of the 95 % CI) of xs; the half-width is None for n < 2."""
    n = len(xs)
    if n == 0:
        return None, None
    m = sum(xs) / n
    if n < 2:
        return m, None
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, t95(n - 1) * sd / math.sqrt(n)


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None
