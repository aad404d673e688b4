"""The engine that evaluates alert rules (:mod:`.rules`) on a watched source's records (pure
Python; no pydantic, no Textual).

With ``for D`` the value compared is the **rolling mean** of the metric over the last D seconds
(records whose time is in ``(t − D, t]``), and it is compared only once the source has been
watched for at least D; without it, each record's own value. Time is the log's own timestamp when the record has one, else when it arrived.

Firing is edge-triggered: a rule fires once when its condition starts to hold, then stays
firing (no further alerts) until the value has been *clear* for ``rearm`` seconds (default 30;
at least D), when a ``resolved`` alert is emitted and the rule is armed again. A threshold rule is
clear only when the value is back past the threshold by a margin (hysteresis): at its
``clear=`` level when the rule names one, else by the larger of 2% of the threshold and three
standard errors of the value compared (with D: :meth:`_Window.stderr`, corrected for the
autocorrelation of neighbouring records, and measured on the **clear stretch** and on the blocks
of the rule's history by a median that the dip's level shifts cannot move — never on the dip's
level: the mean-square of block differences that a dip's entry and exit enter used to hold the
margin wide for minutes after a clean recovery; without D: 0, so 2%); a value between the
threshold and that level restarts the clear time. A verdict
rule is clear as soon as the verdict changes. A new segment (a restart) starts the windows afresh
and resolves firing threshold and drift alerts. Drift alerts carry ``suggest = "new_segment"``.

Alerts see what the statistics see: a value the statistics refuse (:func:`tui.core.stats.checks.refusal`,
the one rule: not finite, or physically impossible, e.g. accept len outside [1, k + 1] or a rate
outside [0, 1]) is skipped, not counted as data, before it enters a window, a drift detector or a
per-record rule. k is the record's own per-position list length when it has one, else the
segment's draft depth when the caller knows it (``depth``), else unknown (bound k ≤ MAX_DEPTH).
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from tui.core.alerts.rules import OPS, Rule, RuleError, parse_duration, parse_rule
from tui.core.alerts.spread import ar1_stderr, block_stderr, plain_stderr, robust_block_stderr
from tui.core.stats.checks import admissible, record_refusals
from tui.core.stats.drift import DriftDetector

# Rule, RuleError and the parsers are here too for the callers that import them with the engine
__all__ = [
    "Alert",
    "AlertEngine",
    "Rule",
    "RuleError",
    "ar1_stderr",
    "block_stderr",
    "local_now",
    "parse_duration",
    "parse_rule",
    "robust_block_stderr",
]

REARM = 30.0


@dataclass(frozen=True, slots=True)
class Alert:
    rule: str  # the rule text
    source: str  # the source name (verdict rules: "A → B")
    value: float | str | None  # the value compared, the verdict, or the recent mean (drift)
    since: float  # when the condition began to hold (seconds, the same clock as the observations)
    message: str
    state: str = "firing"  # "firing" or "resolved"
    time: float = 0.0  # when the engine noticed
    suggest: str | None = None  # "new_segment" for drift

    def as_dict(self) -> dict:
        return {
            "rule": self.rule,
            "source": self.source,
            "state": self.state,
            "value": self.value,
            "since": self.since,
            "time": self.time,
            "message": self.message,
            "suggest": self.suggest,
        }


BLOCKS = 60  # window-long blocks kept for the standard error (the last 60 windows)
MIN_BLOCKS = 6  # fewer: an AR(1) fit to the values so far
EARLY = 4096  # values kept for that fit (the latest), and of a clear stretch


@dataclass(slots=True)
class _Window:
    """The values of one metric of one source over the last ``span`` seconds, and a rule's state.

    Besides the rolling window it keeps the means of consecutive ``span``-long blocks of the
    values (the last :data:`BLOCKS`) and, while the rule fires and its mean is back past the
    threshold, the values of that *clear stretch* (:meth:`stretch_add`, :meth:`end_stretch`), from
    which :meth:`stderr` reads how much a window's mean really varies (see there)."""

    span: float
    values: deque = field(default_factory=deque)  # (t, value)
    total: float = 0.0
    first_t: float | None = None
    last_t: float | None = None
    firing: bool = False
    since: float | None = None  # when the condition began to hold (or began to be clear)
    clear_since: float | None = None
    blocks: deque = field(default_factory=lambda: deque(maxlen=BLOCKS))  # block means
    block_start: float | None = None
    block_sum: float = 0.0
    block_n: int = 0
    # the values until MIN_BLOCKS blocks exist (for the early AR(1) fit)
    early: deque = field(default_factory=lambda: deque(maxlen=EARLY))
    stretch: deque = field(default_factory=lambda: deque(maxlen=EARLY))  # the clear stretch's values
    _se: float = 0.0  # stderr() as last computed, and the stretch's length then (-1: none)
    _se_at: int = -1

    def add(self, t: float, v: float) -> float:
        if self.last_t is not None and t < self.last_t:  # the clock went back: start over
            self.values.clear()
            self.total = 0.0
            self.first_t = None
            self.blocks.clear()
            self.block_start, self.block_sum, self.block_n = None, 0.0, 0
            self.early.clear()
            self.end_stretch()
        if self.first_t is None:
            self.first_t = t
        self.last_t = t
        self._block(t, v)
        self.values.append((t, v))
        self.total += v
        while self.values and self.values[0][0] <= t - self.span:
            self.total -= self.values.popleft()[1]
        if not self.values:
            return v
        if len(self.values) == 1:
            self.total = self.values[0][1]  # no rounding left over
        return self.total / len(self.values)

    def _block(self, t: float, v: float) -> None:
        if self.span <= 0:
            return
        if self.block_start is None:
            self.block_start = t
        elif t >= self.block_start + self.span:
            if self.block_n:
                self.blocks.append(self.block_sum / self.block_n)
                if len(self.blocks) >= MIN_BLOCKS:
                    self.early.clear()
            self.block_start += self.span * math.floor((t - self.block_start) / self.span)
            self.block_sum, self.block_n = 0.0, 0
        self.block_sum += v
        self.block_n += 1
        if len(self.blocks) < MIN_BLOCKS:
            self.early.append(v)

    def stretch_add(self, v: float) -> None:
        """A value of the clear stretch (the first one begins it)."""
        self.stretch.append(v)

    def end_stretch(self) -> None:
        """Back in the dip, fired or resolved: no clear stretch."""
        self.stretch.clear()
        self._se_at = -1

    def stderr(self) -> float:
        """The standard error of the window's mean while the rule fires, corrected for
        autocorrelation and measured where the dip's level cannot enter: the largest of

        * the clear stretch's own: the plain ``sd / √n`` of its values (the window's n; 0 with
          fewer than two) and the AR(1) value of its values (:func:`ar1_stderr`: φ bias-corrected
          and one standard error up, so a short stretch gives a wide margin);
        * the history's: once :data:`MIN_BLOCKS` blocks exist, the spread of the block means
          themselves (each block a window long, so its mean varies as the window's does, whatever
          the correlation between records), by :func:`robust_block_stderr` over the last
          :data:`BLOCKS` — a median of differences two blocks apart, which the entry into a dip
          and the exit from it (two differences each) cannot move, where their mean square held
          the margin wide for up to 60 windows after a clean recovery; before that, the AR(1)
          value of the values so far (the last :data:`EARLY`).

        Computed again only when the stretch has grown by an eighth (at least 4 values) since the
        last time (the fits are linear in the values kept, and every record asks)."""
        m = len(self.stretch)
        if self._se_at >= 0 and m - self._se_at < max(4, self._se_at // 8):
            return self._se
        n = len(self.values)
        xs = list(self.stretch)
        got = max(plain_stderr(xs, n), ar1_stderr(xs, n))
        if len(self.blocks) < MIN_BLOCKS:
            got = max(got, ar1_stderr(list(self.early), n))
        else:
            got = max(got, robust_block_stderr(list(self.blocks)))
        self._se, self._se_at = got, m
        return got


def _deep(rule: Rule, mean: float, stderr: float) -> bool:
    """``mean`` is past the threshold by as much as the clear level is on the other side: the
    dip again, not the noise of a level at the threshold (which stays in the clear stretch)."""
    margin = abs(rule.clear_level(stderr) - rule.threshold)
    return mean < rule.threshold - margin if rule.op in ("<", "<=") else mean > rule.threshold + margin


class AlertEngine:
    """Evaluates rules against observations; every method returns the alerts it raised.

    ``rules`` apply to every source; ``per_source`` adds rules for one source name.
    """

    def __init__(
        self, rules: list[Rule], per_source: dict[str, list[Rule]] | None = None, *, rearm: float = REARM
    ) -> None:
        self.rules = list(rules)
        self.per_source = {k: list(v) for k, v in (per_source or {}).items()}
        self.rearm = rearm
        self._windows: dict[tuple[str, str], _Window] = {}
        self._drift: dict[tuple[str, str], DriftDetector] = {}
        self._drift_firing: dict[tuple[str, str], Alert] = {}
        self._verdicts: dict[tuple[str, str], _Window] = {}
        self._segment: dict[str, int] = {}
        self._plan: dict[str, dict[str, list[tuple[Rule, tuple[str, str]]]]] = {}

    def __bool__(self) -> bool:
        return bool(self.rules) or any(self.per_source.values())

    def rules_for(self, source: str) -> list[Rule]:
        return self.rules + self.per_source.get(source, [])

    def wants(self, source: str) -> set[str]:
        """The metrics some rule of ``source`` looks at (the caller can skip the others)."""
        return set(self._by_metric(source))

    def _by_metric(self, source: str) -> dict[str, list[tuple[Rule, tuple[str, str]]]]:
        """``source``'s record rules by metric, each with its state key (built once)."""
        got = self._plan.get(source)
        if got is None:
            got = {}
            for r in self.rules_for(source):
                if r.kind != "verdict":
                    got.setdefault(r.metric, []).append((r, (r.text, source)))
            self._plan[source] = got
        return got

    # -- observations ----------------------------------------------------------------------
    def observe(
        self,
        source: str,
        metric: str,
        value: float | None,
        t: float,
        segment: int = 0,
        depth: int | None = None,
    ) -> list[Alert]:
        """One value of ``metric`` for ``source`` at time ``t`` (seconds), in ``segment``; a value
        the statistics refuse (``depth``: the draft depth k when known) is skipped like a gap."""
        out: list[Alert] = []
        if self._segment.get(source, segment) != segment:
            out += self.new_segment(source, t)
        self._segment[source] = segment
        if value is None or not admissible(metric, value, depth):
            return out  # a gap (or a refused value) is a gap: never a zero
        for rule, key in self._by_metric(source).get(metric, ()):
            if rule.kind == "drift":
                out += self._observe_drift(rule, key, value, t)
                continue
            w = self._windows.get(key)
            if w is None:
                w = self._windows[key] = _Window(rule.duration)
            mean = w.add(t, value)
            assert w.first_t is not None
            if rule.duration and t - w.first_t < rule.duration:
                continue  # not watched for the whole window yet
            holds = OPS[rule.op](mean, rule.threshold)
            if w.firing:
                se = w.stderr() if rule.duration else 0.0
                if not holds or (w.stretch and not _deep(rule, mean, se)):
                    w.stretch_add(value)  # the clear stretch (a level at the threshold stays in it)
                elif w.stretch:
                    w.end_stretch()  # back in the dip
                if not holds and not rule.cleared(mean, se):
                    holds = True  # back past the threshold but not past the clear level: still firing
            if holds is w.firing and (w.clear_since is None or not holds):
                continue  # nothing changes (the common case)
            out += self._edge(rule, w, source, holds, mean, t)
        return out

    def observe_record(
        self,
        source: str,
        rec: Any,
        segment: int = 0,
        arrival: float | None = None,
        depth: int | None = None,
    ) -> list[Alert]:
        """A record's accept_len / accept_rate / throughput (any object with those attributes and
        ``timestamp``), at the log's own time when it has one, else ``arrival`` (default: now on
        the local wall clock, the same naive seconds the logs' timestamps are read as). Values the
        statistics refuse (:func:`record_refusals`; ``depth``: the segment's draft depth k when
        known, the record's own per-position list first) are gaps; a refused timestamp counts as none.
        A record of a synthetic acceptance run (``extra["synthetic"]``, a benchmarking mode whose
        acceptance is drawn at random) is no measurement: no rule sees it."""
        extra = getattr(rec, "extra", None)
        if extra and extra.get("synthetic"):
            return []
        bad = record_refusals(rec, depth)
        ts = None if "timestamp" in bad else rec.timestamp
        t = ts if ts is not None else (local_now() if arrival is None else arrival)
        out: list[Alert] = []
        for metric in self._by_metric(source):
            value = None if metric in bad else getattr(rec, metric, None)
            out += self.observe(source, metric, value, t, segment, depth)
        return out

    def verdict(self, a: str, b: str, verdict: str, t: float) -> list[Alert]:
        """The A/B verdict of ``b`` relative to ``a`` at time ``t``."""
        out: list[Alert] = []
        pair = f"{a} → {b}"
        for rule in self.rules:
            if rule.kind != "verdict":
                continue
            w = self._verdicts.get((rule.text, pair))
            if w is None:
                w = self._verdicts[(rule.text, pair)] = _Window(rule.duration)
            holds = verdict == rule.verdict
            if holds and w.since is None:
                w.since = t
            elif not holds:
                w.since = None
            ok = holds and w.since is not None and t - w.since >= rule.duration
            out += self._edge(rule, w, pair, ok, verdict, t, clear_now=not holds)
        return out

    def new_segment(self, source: str, t: float) -> list[Alert]:
        """A restart (or the user's ``n``): windows start afresh; a drift alert is resolved."""
        out = []
        for key in [k for k in self._windows if k[1] == source]:
            w = self._windows.pop(key)
            if w.firing:
                since = w.since if w.since is not None else t
                msg = f"{source}: {key[0]} ended with the segment (a new segment started)"
                out.append(Alert(key[0], source, None, since, msg, "resolved", t))
        for key in [k for k in self._drift if k[1] == source]:
            self._drift[key].reset()
            fired = self._drift_firing.pop(key, None)
            if fired is not None:
                msg = f"{source}: new segment started after the drift of {fired.value}"
                out.append(Alert(key[0], source, fired.value, fired.since, msg, "resolved", t))
        return out

    # -- internals ---------------------------------------------------------------------------
    def _edge(
        self, rule: Rule, w: _Window, source: str, holds: bool, value, t: float, clear_now: bool = False
    ) -> list[Alert]:
        if holds:
            w.clear_since = None
            if w.firing:
                return []
            w.firing = True
            w.end_stretch()
            since = w.since if rule.kind == "verdict" and w.since is not None else t - rule.duration
            w.since = since
            return [Alert(rule.text, source, value, since, _fire_message(rule, source, value), "firing", t)]
        if not w.firing:
            return []
        if w.clear_since is None:
            w.clear_since = t
        if t - w.clear_since >= max(self.rearm, rule.duration) or (clear_now and rule.kind == "verdict"):
            w.firing = False
            since = w.since if w.since is not None else t
            w.since = None
            w.clear_since = None
            w.end_stretch()
            msg = f"{source}: {rule.text} cleared (now {_fmt(value)})"  # value: the mean or verdict now
            return [Alert(rule.text, source, value, since, msg, "resolved", t)]
        return []

    def _observe_drift(self, rule: Rule, key: tuple[str, str], value: float, t: float) -> list[Alert]:
        det = self._drift.get(key)
        if det is None:
            det = self._drift[key] = DriftDetector()
        alarm = det.add(value, t)
        if alarm is None or key in self._drift_firing:
            return []
        source = key[1]
        msg = (
            f"{source}: {rule.metric} drifted {alarm.direction} from {alarm.baseline:.3g} to "
            f"{alarm.recent:.3g} within this segment (a new segment is suggested)"
        )
        since = alarm.since_time if alarm.since_time is not None else t
        a = Alert(rule.text, source, round(alarm.recent, 6), since, msg, "firing", t, "new_segment")
        self._drift_firing[key] = a
        return [a]


def local_now() -> float:
    """Now as naive local wall-clock seconds (as :attr:`tui.core.model.records.Record.timestamp`)."""
    now = time.time()
    return now + (time.localtime(now).tm_gmtoff or 0)


def _fmt(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _fire_message(rule: Rule, source: str, value) -> str:
    if rule.kind == "verdict":
        return f"{source}: verdict is {value}" + (f" for {rule.duration:g}s" if rule.duration else "")
    what = f"mean {rule.metric} over {rule.duration:g}s" if rule.duration else rule.metric
    return f"{source}: {what} = {_fmt(value)} ({rule.text})"
