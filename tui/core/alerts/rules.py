"""Alert rules as texts (``--alert RULE``, or ``alerts = [...]`` in specwatch.toml) read into
:class:`Rule` (pure Python); :mod:`.engine` evaluates them::

    accept_len < 2.0 for 2m      METRIC OP NUMBER [for DURATION] [clear=NUMBER]
    accept_rate <= 0.6
    verdict=lower [for 30s]      the A/B verdict (B relative to A) is lower|higher|no_difference|insufficient
    drift [METRIC]               the change-point test (tui.core.stats.drift) found a sustained shift

``METRIC`` is accept_len, accept_rate or throughput; ``OP`` one of ``< <= > >=``; ``DURATION`` a
number with ``s``, ``m`` or ``h`` (``90s``, ``2m``, ``1.5h``). ``clear=NUMBER`` (threshold rules
only, last) is the level the value must be back at before the rule can resolve: at or above it for
``<``/``<=``, at or below it for ``>``/``>=``; it may equal the threshold (no margin) but not lie on
the firing side of it. Without it the margin is :func:`default_margin`.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

METRICS = ("accept_len", "accept_rate", "throughput")
VERDICTS = ("lower", "higher", "no_difference", "insufficient")
OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}

_THRESHOLD_RX = re.compile(r"([A-Za-z_]\w*)\s*(<=|>=|<|>|==|=|!=)\s*(\S+?)(?:\s+for\s+(\S+))?")
_VERDICT_RX = re.compile(r"verdict\s*==?\s*(\S+?)(?:\s+for\s+(\S+))?")
_DRIFT_RX = re.compile(r"drift(?:\s+(\S+))?")
_DURATION_RX = re.compile(r"(\d+(?:\.\d+)?)([smh])")
_CLEAR_RX = re.compile(r"(.*?)\s*\bclear\s*=\s*(\S+)")
MARGIN_SHARE = 0.02  # the default clear margin: at least 2% of the threshold
CLEAR_Z = 3.0  # … and at least this many (autocorrelation-corrected) standard errors of the value


class RuleError(ValueError):
    """A rule text that cannot be read; the message names the bad part."""


@dataclass(frozen=True, slots=True)
class Rule:
    text: str
    kind: str  # "threshold", "verdict" or "drift"
    metric: str = "accept_len"
    op: str = ""
    threshold: float = math.nan
    duration: float = 0.0  # seconds; 0: each value on its own
    verdict: str = ""
    clear: float = math.nan  # threshold rules: the clear= level; nan: the default margin

    def holds(self, value: float) -> bool:
        return OPS[self.op](value, self.threshold)

    def clear_level(self, stderr: float = 0.0) -> float:
        """The level the value must be back at (or past) to count as clear: ``clear=`` when
        given, else the threshold moved away from the firing side by :func:`default_margin`."""
        if not math.isnan(self.clear):
            return self.clear
        margin = default_margin(self.threshold, stderr)
        return self.threshold + margin if self.op in ("<", "<=") else self.threshold - margin

    def cleared(self, value: float, stderr: float = 0.0) -> bool:
        """The condition no longer holds and ``value`` is at or past :meth:`clear_level`."""
        if self.holds(value):
            return False
        level = self.clear_level(stderr)
        return value >= level if self.op in ("<", "<=") else value <= level


def default_margin(threshold: float, stderr: float) -> float:
    """The larger of 2% of the threshold and :data:`CLEAR_Z` times ``stderr`` (the value's own
    standard error, corrected for autocorrelation: :meth:`tui.core.alerts.engine._Window.stderr`).

    Three standard errors, not one: a window mean at the threshold stays more than one standard
    error above it for the 30 s a resolve needs several times an hour (simulated AR(1) logs at
    2.0, one record every 1–2 s, ``accept_len<2.0 for 30s``, 45 minutes, 60 seeds each: with the
    true one-SE margin, 40 seeds, a median of 2–5 fire/resolve pairs at φ = 0.5–0.95; with 3 SE as estimated
    here, exactly one fire and one resolve (after a rise to 2.5) in 59/60 runs at φ = 0.5, 58/60
    at 0.7, 60/60 at 0.9 and 54/60 at 0.95)."""
    return max(MARGIN_SHARE * abs(threshold), CLEAR_Z * stderr if math.isfinite(stderr) else 0.0)


def _duration(rule: str, text: str) -> float:
    try:
        return parse_duration(text)
    except RuleError as exc:
        raise RuleError(f"{rule!r}: {exc}") from None


def parse_duration(text: str) -> float:
    m = _DURATION_RX.fullmatch(text.strip())
    if m is None:
        raise RuleError(f"bad duration {text!r}: write a number with s, m or h (30s, 2m, 1.5h)")
    seconds = float(m.group(1)) * UNITS[m.group(2)]
    if seconds <= 0:
        raise RuleError(f"bad duration {text!r}: must be more than 0")
    return seconds


def parse_rule(text: str) -> Rule:
    """One rule text → :class:`Rule`; :class:`RuleError` names what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise RuleError("empty alert rule (e.g. 'accept_len<2.0 for 2m', 'verdict=lower', 'drift')")
    t = " ".join(text.split())
    low = t.lower()
    clear = math.nan
    if re.search(r"\bclear\b", low):
        clear, t = _clear(text, t)
        low = t.lower()
    if low.startswith("verdict"):
        m = _VERDICT_RX.fullmatch(low)
        if m is None:
            raise RuleError(f"{text!r}: write verdict=lower|higher|no_difference|insufficient [for DURATION]")
        if m.group(1) not in VERDICTS:
            raise RuleError(f"{text!r}: unknown verdict {m.group(1)!r}; one of {', '.join(VERDICTS)}")
        hold = _duration(text, m.group(2)) if m.group(2) else 0.0
        return Rule(t, "verdict", verdict=m.group(1), duration=hold)
    if low == "drift" or low.startswith("drift "):
        m = _DRIFT_RX.fullmatch(low)
        metric = (m.group(1) if m else None) or "accept_len"
        if metric not in METRICS:
            raise RuleError(f"{text!r}: unknown metric {metric!r} for drift; one of {', '.join(METRICS)}")
        return Rule(t, "drift", metric=metric)
    m = _THRESHOLD_RX.fullmatch(t)
    if m is None:
        raise RuleError(
            f"{text!r}: not a rule; write METRIC OP NUMBER [for DURATION] "
            "(e.g. 'accept_len<2.0 for 2m'), verdict=VERDICT or drift"
        )
    name, op, num, dur = m.groups()
    if name not in METRICS:
        raise RuleError(f"{text!r}: unknown metric {name!r}; one of {', '.join(METRICS)}")
    if op not in OPS:
        raise RuleError(f"{text!r}: unknown comparison {op!r}; one of {' '.join(OPS)}")
    threshold = _finite(
        num, f"{text!r}: {num!r} is not a number", f"{text!r}: the threshold must be a finite number"
    )
    seconds = _duration(text, dur) if dur else 0.0
    if not math.isnan(clear) and (clear < threshold if op in ("<", "<=") else clear > threshold):
        side = "at or above" if op in ("<", "<=") else "at or below"
        raise RuleError(f"{text!r}: clear={clear:g} must be {side} the threshold {num}")
    full = " ".join(text.split())
    return Rule(full, "threshold", metric=name, op=op, threshold=threshold, duration=seconds, clear=clear)


def _clear(text: str, t: str) -> tuple[float, str]:
    """``clear=NUMBER`` at the end of ``t`` → (the level, the rule text before it)."""
    m = _CLEAR_RX.fullmatch(t)
    if m is None:
        raise RuleError(f"{text!r}: write clear=NUMBER at the end (e.g. 'accept_len<2.0 for 30s clear=2.1')")
    head, num = m.groups()
    low = head.lower()
    if not head or low.startswith("verdict") or low == "drift" or low.startswith("drift "):
        raise RuleError(f"{text!r}: clear= applies only to METRIC OP NUMBER rules")
    if num[0] in "+-":
        raise RuleError(f"{text!r}: clear={num}: write the level itself (clear=2.1), not a margin")
    level = _finite(
        num,
        f"{text!r}: clear={num}: {num!r} is not a number",
        f"{text!r}: clear={num}: must be a finite number",
    )
    return level, head


def _finite(num: str, not_number: str, not_finite: str) -> float:
    """``num`` as a finite float, else a RuleError with the message that fits."""
    try:
        x = float(num)
    except ValueError:
        raise RuleError(not_number) from None
    if not math.isfinite(x):
        raise RuleError(not_finite)
    return x


def parse_rules(texts: list[str]) -> list[Rule]:
    return [parse_rule(t) for t in texts]
