"""Alert rules as texts (``--alert RULE``, or ``alerts = [...]`` in specwatch.toml) read into
:class:`Rule` (pure Python); :mod:`.engine` evaluates them::

    accept_len < 2.0 for 2m      METRIC OP NUMBER [for DURATION]
    accept_rate <= 0.6
    verdict=lower [for 30s]      the A/B verdict (B relative to A) is lower|higher|no_difference|insufficient
    drift [METRIC]               the change-point test (tui.core.stats.drift) found a sustained shift

``METRIC`` is accept_len, accept_rate or throughput; ``OP`` one of ``< <= > >=``; ``DURATION`` a
number with ``s``, ``m`` or ``h`` (``90s``, ``2m``, ``1.5h``).
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

    def holds(self, value: float) -> bool:
        return OPS[self.op](value, self.threshold)


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
    try:
        threshold = float(num)
    except ValueError:
        raise RuleError(f"{text!r}: {num!r} is not a number") from None
    if not math.isfinite(threshold):
        raise RuleError(f"{text!r}: the threshold must be a finite number")
    seconds = _duration(text, dur) if dur else 0.0
    return Rule(t, "threshold", metric=name, op=op, threshold=threshold, duration=seconds)


def parse_rules(texts: list[str]) -> list[Rule]:
    return [parse_rule(t) for t in texts]
