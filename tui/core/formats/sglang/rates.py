"""Which definition a printed SGLang ``accept rate`` used (SGLang's rate definitions by era).

SGLang changed the formula three times:

* Oct 2025 (PR #11572): ``AL / (num_steps + 1)``
* Nov 2025 (PR #13212): ``AL / num_draft_tokens`` (the same as above when topk == 1)
* Apr 2026 (PR #23530): ``(AL − 1) / (num_draft_tokens − 1)`` = accepted drafts / proposed drafts

The normalised rate is always *accepted drafts / proposed drafts* = ``(AL − 1) / D`` with ``D``
the drafts proposed per request per verify step (SGLang ``ndt − 1``, vLLM ``k``). It is an exact
linear function of accept len, so its statistics are those of accept len, re-expressed
(:func:`tui.core.stats.rates.normalise_transform`).

The printed definition is read off the numbers: both values are rounded to 2 decimals, so a
pair (AL, rate) fits a formula with denominator D when ``|rate − f(AL)| ≤ 0.005 + 0.005/D``.
"""

from __future__ import annotations

import calendar

from tui.core.formats.families import data
from tui.core.formats.rate_definition import RateDefinition
from tui.core.model.records import RATE_DRAFTS

# the family's own definitions of the printed rate (family.toml's [rates], in its order)
RATE_SGLANG_AL_OVER_STEPS1, RATE_SGLANG_AL_OVER_NDT = data("sglang").rates  # AL/(steps+1), AL/ndt

_EPS = 1e-9


def _fits_drafts(al: float, rate: float, d: int) -> bool:
    return abs(rate - (al - 1.0) / d) <= 0.005 + 0.005 / d + _EPS


def _fits_al_over(al: float, rate: float, denom: int) -> bool:
    return abs(rate - al / denom) <= 0.005 + 0.005 / denom + _EPS


def _all_fit(pairs: list[tuple[float, float]], fn, d: int) -> int:
    return sum(1 for al, r in pairs if fn(al, r, d))


# A log line cannot come from a build newer than itself: formulas not merged yet by the date
# of the first record are ruled out (naive wall-clock seconds, as records carry them).
DRAFTS_SINCE = calendar.timegm((2026, 4, 23, 0, 0, 0, 0, 0, 0))  # PR #23530
AL_OVER_NDT_SINCE = calendar.timegm((2025, 11, 13, 0, 0, 0, 0, 0, 0))  # PR #13212
STEPS1_SINCE = calendar.timegm((2025, 10, 13, 0, 0, 0, 0, 0, 0))  # PR #11572


def infer_sglang(
    pairs: list[tuple[float, float]], num_steps: int | None, ndt: int | None, first_ts: float | None = None
) -> RateDefinition:
    """Decide the printed definition from (accept len, accept rate) pairs and the config."""
    return _infer(pairs, num_steps, ndt, first_ts)


def _allowed(definition: str, first_ts: float | None) -> bool:
    if first_ts is None or first_ts < 946684800:  # unknown or time-only (no date) timestamps
        return True
    if definition == RATE_DRAFTS:
        return first_ts >= DRAFTS_SINCE
    if definition == RATE_SGLANG_AL_OVER_NDT:
        return first_ts >= AL_OVER_NDT_SINCE
    if definition == RATE_SGLANG_AL_OVER_STEPS1:  # replaced by AL/ndt in Nov 2025
        return STEPS1_SINCE <= first_ts < AL_OVER_NDT_SINCE
    return True


def _dated(first_ts: float | None) -> bool:
    return first_ts is not None and first_ts >= 946684800


def _infer(
    pairs: list[tuple[float, float]], num_steps: int | None, ndt: int | None, first_ts: float | None
) -> RateDefinition:
    n = len(pairs)
    if ndt is not None and ndt > 1:
        d = ndt - 1
        if not pairs:
            return RateDefinition(None, d, "config (no accept rate printed)")
        fits = {
            RATE_DRAFTS: _all_fit(pairs, _fits_drafts, d),
            RATE_SGLANG_AL_OVER_NDT: _all_fit(pairs, _fits_al_over, ndt),
        }
        # AL/(steps+1) is a formula of its own when steps+1 != ndt; when they are equal (topk 1)
        # it gives the same numbers as AL/ndt and only the log's date tells which build it was.
        oct_nov = _dated(first_ts) and _allowed(RATE_SGLANG_AL_OVER_STEPS1, first_ts)
        if num_steps is not None and (num_steps + 1 != ndt or oct_nov):
            fits[RATE_SGLANG_AL_OVER_STEPS1] = _all_fit(pairs, _fits_al_over, num_steps + 1)
            if num_steps + 1 == ndt:
                fits[RATE_SGLANG_AL_OVER_NDT] = 0  # dated Oct-Nov 2025: the older formula
        fits = {k: (v if _allowed(k, first_ts) else 0) for k, v in fits.items()}
        best = max(fits, key=lambda k: fits[k])
        tied = [k for k, v in fits.items() if v == fits[best]]
        if fits[best] == 0:
            return RateDefinition(None, d, "config", 0, n, "no known formula fits the printed rates")
        if len(tied) > 1:
            return RateDefinition(None, d, "config", fits[best], n, "printed rates fit more than one formula")
        return RateDefinition(best, d, "config + values", fits[best], n)
    # No config: look for a whole denominator that fits every pair.
    informative = [(al, r) for al, r in pairs if r > 0.02]
    if not informative:
        return RateDefinition(None, None, "unknown (no config, no usable rate)", 0, n)
    found: list[tuple[str, int, int]] = []
    for d in range(1, 33):
        c = _all_fit(pairs, _fits_drafts, d)
        if c == n and _allowed(RATE_DRAFTS, first_ts):
            found.append((RATE_DRAFTS, d, c))
        c2 = _all_fit(pairs, _fits_al_over, d + 1)
        if c2 == n and _allowed(RATE_SGLANG_AL_OVER_NDT, first_ts):
            found.append((RATE_SGLANG_AL_OVER_NDT, d, c2))
        elif c2 == n and _dated(first_ts) and _allowed(RATE_SGLANG_AL_OVER_STEPS1, first_ts):
            found.append((RATE_SGLANG_AL_OVER_STEPS1, d, c2))  # AL/(steps+1), steps = d
    if len(found) == 1:
        definition, d, c = found[0]
        return RateDefinition(definition, d, "inferred from values (no config)", c, n)
    if not found:
        return RateDefinition(None, None, "unknown (no config)", 0, n, "no whole denominator fits every pair")
    return RateDefinition(
        None,
        None,
        "unknown (no config)",
        0,
        n,
        "several denominators fit: " + ", ".join(f"{k}/{d}" for k, d, _ in found[:4]),
    )
