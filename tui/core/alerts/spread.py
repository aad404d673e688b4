"""How much a window's mean really varies: the standard-error estimates of the alert margin
(:meth:`tui.core.alerts.engine._Window.stderr`, docs/alerts.md)."""

from __future__ import annotations

import math

from tui.core.stats.drift import ar1_phi

PHI_MAX = 0.99
MAD_SD = 1.4826  # sd of a normal variable / the median of its absolute value

__all__ = ["ar1_stderr", "block_stderr", "plain_stderr", "robust_block_stderr"]


def plain_stderr(xs: list[float], n: int) -> float:
    """``sd(xs) / √n`` (0 with fewer than two values)."""
    if n < 1 or len(xs) < 2:
        return 0.0
    mean = sum(xs) / len(xs)
    return math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1) / n)


def robust_block_stderr(blocks: list[float]) -> float:
    """:func:`block_stderr` from the median of ``|b_i − b_{i−2}|`` instead of their mean square
    (``MAD_SD · median / √2``, the same value for normal block means): a level shift, in two of
    the differences, hardly moves it (0 with fewer than 3 blocks)."""
    d = sorted(abs(blocks[i] - blocks[i - 2]) for i in range(2, len(blocks)))
    if not d:
        return 0.0
    mid = len(d) // 2
    med = d[mid] if len(d) % 2 else (d[mid - 1] + d[mid]) / 2
    return MAD_SD * med / math.sqrt(2.0)


def block_stderr(blocks: list[float]) -> float:
    """The standard error of one block mean from consecutive block means ``b``:
    ``√(mean((b_i − b_{i−2})²) / 2)`` (0 with fewer than 3)."""
    sq = [(blocks[i] - blocks[i - 2]) ** 2 for i in range(2, len(blocks))]
    return math.sqrt(sum(sq) / (2.0 * len(sq))) if sq else 0.0


def ar1_stderr(xs: list[float], n: int) -> float:
    """The standard error of the mean of ``n`` consecutive values of an AR(1) series fitted to
    ``xs``: variance ``s²``, lag-1 autocorrelation ``φ`` (bias-corrected, one standard error up,
    below 1), ``var = s²/n · ((1 + φ)/(1 − φ) − 2φ(1 − φⁿ)/(n(1 − φ)²))``; 0 with fewer than 8."""
    m = len(xs)
    if m < 8 or n < 1:
        return 0.0
    got = ar1_phi(xs, 1.0, PHI_MAX)
    if got is None:
        return 0.0
    ss, phi = got
    f = (1.0 + phi) / (1.0 - phi) - 2.0 * phi * (1.0 - phi**n) / (n * (1.0 - phi) ** 2)
    return math.sqrt(ss / (m - 1) / n * max(f, 1.0))
