"""Student's t quantiles without scipy: the regularised incomplete beta function, Newton's method
from the Cornish-Fisher expansion (a few evaluations: the quantile is recomputed whenever the
effective sample size moves, i.e. at every refresh of a live pane), bisection where Newton does
not settle."""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

_NORMAL = NormalDist()  # the standard normal: its quantile is the Newton start below


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (Numerical Recipes, modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    bt = math.exp(lbt)
    if x < (a + 1.0) / (a + b + 2.0):
        return bt * _betacf(a, b, x) / a
    return 1.0 - bt * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    x = df / (df + t * t)
    tail = 0.5 * betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t > 0 else tail


def _t_pdf(t: float, df: float) -> float:
    h = (df + 1.0) / 2.0
    return math.exp(
        math.lgamma(h) - math.lgamma(df / 2.0) - 0.5 * math.log(df * math.pi) - h * math.log1p(t * t / df)
    )


@lru_cache(maxsize=512)
def t_ppf(p: float, df: float) -> float:
    """The p-quantile of Student's t with ``df`` degrees of freedom (df may be fractional), to
    about 1e-12."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError("p must be in (0, 1) and df > 0")
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    if df >= 3.0:  # Newton from the Cornish-Fisher expansion: converges in a few steps
        z = _NORMAL.inv_cdf(p)
        z3, z5 = z**3, z**5
        t = z + (z3 + z) / (4.0 * df) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df)
        for _ in range(12):
            step = (t_cdf(t, df) - p) / _t_pdf(t, df)
            t -= step
            if not math.isfinite(t):
                break
            if abs(step) <= 1e-13 * max(1.0, abs(t)):
                return t
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def t975(df: float) -> float:
    """Two-sided 95% critical value."""
    return t_ppf(0.975, round(df, 3))
