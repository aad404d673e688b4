"""The fleet screen's model without Textual: what a refresh answered, how the rows are sorted,
filtered and grouped, and each row's cells as plain text (labels come from outside: made visible,
never markup). The screen (:mod:`tui.screens.fleet`) only draws it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tui.core.fleet.fetch import Fleet, FleetQuery
from tui.core.fleet.rows import Instance, Packed
from tui.core.model.sanitize import number, visible
from tui.core.sources.prom.api import PromAuth

SORTS = ("accept len", "instance", "family", "throughput", "flags")
BARS = "▁▂▃▄▅▆▇█"


@dataclass
class FleetPlan:
    """What ``specwatch fleet`` opens: the Prometheus, how to ask it, how often."""

    url: str
    query: FleetQuery
    auth: PromAuth = field(default_factory=PromAuth)
    timeout: float = 10.0
    refresh: float = 5.0
    transport: Any = None  # an httpx transport (tests: httpx.MockTransport); None: the network
    logs: str | None = None  # [fleet] logs: where a row's log is (tui.core.fleet.logs)
    follow_logs: bool = True  # False: a row's log is read to its end once (not followed)


def trend(steps: list[tuple[float, float | None]], width: int) -> str:
    """A sparkline of the newest ``width`` steps on their own range; an idle step is a blank."""
    if isinstance(steps, Packed):  # the values as held: no tuple made per step
        vals: list[float | None] = [None if v != v else v for v in steps.column(1)[-width:]]
    else:
        vals = [v for _, v in steps][-width:]
    xs = [v for v in vals if v is not None]
    if not xs:
        return ""
    lo, hi = min(xs), max(xs)
    span = hi - lo
    out = []
    for v in vals:
        if v is None:
            out.append(" ")
        else:
            k = 0 if span <= 0 else int((v - lo) / span * (len(BARS) - 1) + 0.5)
            out.append(BARS[k])
    return "".join(out)


def shortened(names: list[str], width: int) -> dict[str, str]:
    """Each name, when they do not all fit in ``width``, with the part every name shares at its
    start and at its end elided (``gpu-node04…``, ``…-b:8000``): the part that tells rows apart is
    kept. A part still too long loses its middle (both ends tell names apart in mixed naming
    schemes: ``inference-prod…server-2``); names that would still read alike stay whole (the
    table cuts them with … but two rows never look the same)."""
    longest = max(map(len, names), default=0)
    if longest <= width or len(names) < 2:
        return {n: n for n in names}
    pre = len(_common(names))
    suf = len(_common([n[::-1] for n in names]))
    out = {}
    for n in names:
        a, b = pre, len(n) - suf
        a = max(0, min(a, b - 1))
        core = n[a:b] if b > a else n
        text = ("…" if a > 0 else "") + core + ("…" if b < len(n) else "")
        if len(text) > width:
            head = (width - 1) // 2
            text = text[:head] + "…" + text[len(text) - (width - 1 - head) :]
        out[n] = text
    seen: dict[str, int] = {}
    for v in out.values():
        seen[v] = seen.get(v, 0) + 1
    return {n: (v if seen[v] == 1 else n) for n, v in out.items()}


def _common(names: list[str]) -> str:
    """The common start of ``names``, ending at a separator (so a word is not split)."""
    first = min(names)
    last = max(names)
    i = 0
    while i < len(first) and i < len(last) and first[i] == last[i]:
        i += 1
    cut = max((first.rfind(c, 0, i) for c in "-.: /"), default=-1)
    return first[: cut + 1] if cut >= 0 else ""


def flag_text(inst: Instance) -> str:
    return ", ".join(inst.flags)


@dataclass
class FleetView:
    """Sort, filter and group of the rows; the last answer and error."""

    fleet: Fleet | None = None
    error: str | None = None
    sort: int = 0  # index into SORTS
    filter: str = ""  # a substring or re:REGEX of the row's text
    group_by: str | None = None  # a label, or None: the query's grouping
    updated: float | None = None  # time.time() of the last good answer
    asking_since: float | None = None  # time.time() when the refresh in flight began (None: none)
    failed: float | None = None  # time.time() of the last failed refresh
    interval: float = 5.0  # the refresh interval (rows older than it are late: their age is said)
    _rows: tuple | None = field(default=None, repr=False, compare=False)  # (key, fleet, rows): rows()

    def cycle_sort(self) -> str:
        self.sort = (self.sort + 1) % len(SORTS)
        return SORTS[self.sort]

    def labels_seen(self) -> list[str]:
        if self.fleet is None:
            return []
        names = sorted({k for i in self.fleet.instances for k in i.labels})
        return [n for n in names if n not in ("instance", "job")] + ["instance", "job"]

    def cycle_group(self) -> str | None:
        labels = [None, *self.labels_seen()]
        i = labels.index(self.group_by) if self.group_by in labels else 0
        self.group_by = labels[(i + 1) % len(labels)]
        return self.group_by

    def matches(self, inst: Instance) -> bool:
        if not self.filter:
            return True
        text = " ".join([inst.family, inst.name, *inst.labels.values(), *inst.flags])
        if self.filter.startswith("re:"):
            try:
                return re.search(self.filter[3:], text, re.I) is not None
            except re.error:
                return True  # the screen says the pattern is bad; nothing is hidden for it
        return self.filter.lower() in text.lower()

    def filter_error(self) -> str | None:
        if self.filter.startswith("re:"):
            try:
                re.compile(self.filter[3:])
            except re.error as exc:
                return f"bad regular expression: {exc}"
        return None

    def rows(self) -> list[Instance]:
        """The rows shown: filtered, sorted, grouped (kept until the answer or the view changes:
        the status line counts them every second, 1,000 rows' sort costs ~5 ms)."""
        if self.fleet is None:
            return []
        key = (id(self.fleet), len(self.fleet.instances), self.sort, self.filter, self.group_by)
        if self._rows is not None and self._rows[0] == key and self._rows[1] is self.fleet:
            return list(self._rows[2])
        rows = self._sorted()
        self._rows = (key, self.fleet, rows)
        return list(rows)

    def _sorted(self) -> list[Instance]:
        assert self.fleet is not None
        rows = [i for i in self.fleet.instances if self.matches(i)]
        key = SORTS[self.sort]
        if key == "accept len":
            # down targets first (they say nothing else), then worst first, idle last
            rows.sort(key=lambda i: (i.kind != "down", i.accept_len is None, i.accept_len or 0.0, i.name))
        elif key == "instance":
            rows.sort(key=lambda i: i.name)
        elif key == "family":
            rows.sort(key=lambda i: (i.family, i.name))
        elif key == "throughput":
            rows.sort(key=lambda i: (i.throughput is None, -(i.throughput or 0.0), i.name))
        else:
            rows.sort(key=lambda i: (not i.flags, i.name))
        if self.group_by:
            g = self.group_by
            rows.sort(key=lambda i: i.labels.get(g, ""))  # stable: sorted within each group
        return rows

    def columns(self, width: int) -> list[str]:
        cols = ["family", "instance"]
        query_by = list(self.fleet.group_by) if self.fleet is not None else []
        for g in [*query_by, *([self.group_by] if self.group_by else [])]:
            if g not in cols:
                cols.append(g)
        cols += ["accept len", "95% CI"]
        if width >= 100:
            cols += ["trend", "tok/s"]
        cols.append("flags")
        if width >= 140:
            cols.append("vs group")
        return cols

    def cells(
        self, inst: Instance, cols: list[str], trend_width: int = 16, names: dict[str, str] | None = None
    ) -> list[str]:
        e = inst.estimate
        ci = e.ci95() if e is not None else None
        out: list[str] = []
        for c in cols:
            if c == "family":
                out.append(inst.family)
            elif c == "instance":
                out.append(names.get(inst.name, inst.name) if names else inst.name)
            elif c == "accept len":
                out.append(number(inst.accept_len, 2) + ("~" if inst.kind == "gauge" else ""))
            elif c == "95% CI":
                out.append(f"{ci[0]:.2f}–{ci[1]:.2f}" if ci else "—")
            elif c == "trend":
                out.append(trend(inst.steps, trend_width))
            elif c == "tok/s":
                out.append(number(inst.throughput, 0))
            elif c == "flags":
                out.append(flag_text(inst))
            elif c == "vs group":
                vs: dict[str, Any] | None = inst.vs_group
                out.append("—" if vs is None else str(vs.get("verdict", "")).replace("_", " "))
            else:
                out.append(inst.labels.get(c, ""))
        return [visible(x) for x in out]

    def status(self, url: str, now: float, width: int = 160, lines: int = 2) -> str:
        """The status line: where, how many rows, the window, how old the rows are, a refresh in
        flight (and for how long), the last error, the groups; at most ``lines`` lines of
        ``width`` cells (groups that do not fit are counted, never allowed to push the rows off
        the screen)."""
        head = [visible(url)]
        f = self.fleet
        if f is not None:
            shown = len(self.rows())
            head.append(
                f"{shown} of {len(f.instances)} instances"
                if shown != len(f.instances)
                else f"{shown} instances"
            )
            down = sum(1 for i in f.instances if i.kind == "down")
            if down:
                head.append(f"{down} down")
            head.append(f"window {duration_text(f.window)}")
            head.append("to " + datetime.fromtimestamp(f.end, UTC).strftime("%H:%M:%SZ"))
        if self.updated is not None and now - self.updated > max(2.0, self.interval):
            head.append(f"rows {age_text(now - self.updated)} old")  # late: a slow Prometheus
        if self.asking_since is not None:
            running = now - self.asking_since
            head.append(f"refreshing ({age_text(running)})…" if running >= 1.0 else "refreshing…")
        elif f is None and not self.error:
            head.append("asking Prometheus…")
        if self.error:
            when = f" ({age_text(now - self.failed)} ago)" if self.failed is not None else ""
            head.append(f"error: {self.error}{when}")
        tail = [f"sorted by {SORTS[self.sort]}" + (f", grouped by {self.group_by}" if self.group_by else "")]
        if self.filter:
            bad = self.filter_error()
            tail.append(f"filter {self.filter!r}" + (f" ({bad}: nothing hidden)" if bad else ""))
        groups: list[str] = []
        if f is not None:
            for g in f.groups:
                ci = g.ci95()
                name = g.name if not g.name.endswith("=") else g.name + "(none)"
                groups.append(f"{name}: {number(g.value, 2)}" + (f" ({ci[0]:.2f}–{ci[1]:.2f})" if ci else ""))
            c = f.comparison
            if c is not None:
                tail.append(verdict_text(c))
        budget = max(20, int(width * lines * 0.9) - 2)  # room for where the lines wrap
        parts = head + tail
        used = len(" · ".join(parts))
        kept = []
        for i, gtext in enumerate(groups):
            more = len(groups) - i - 1
            room = budget - used - len(gtext) - 3 - (len(f" · +{more} groups (b: group rows)") if more else 0)
            if room < 0:
                kept.append(f"+{len(groups) - i} groups (b: group rows)")
                break
            kept.append(gtext)
            used += len(gtext) + 3
        text = visible(" · ".join(head + tail + kept))
        return text if len(text) <= budget else text[: budget - 1] + "…"


def age_text(seconds: float) -> str:
    s = max(0.0, seconds)
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 172800:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} d"


def duration_text(seconds: float) -> str:
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= n and seconds % n == 0:
            return f"{seconds / n:g}{unit}"
    return f"{seconds:g}s"


def verdict_text(c: dict) -> str:
    """The canary verdict in one line: which question it answers, B − A with its interval, n and
    the window (``insufficient`` with the reason)."""
    a, b = c["a"], c["b"]
    sel = f"{b.get('selector', 'B')} − {a.get('selector', 'A')}"
    if c.get("ci95"):
        lo, hi = c["ci95"]
        body = f"{c['verdict'].replace('_', ' ')}: {c['diff']:+.3f} ({lo:+.3f}…{hi:+.3f})"
    else:
        body = f"{c['verdict']} ({c.get('reason', '')})"
    w = c.get("window") or {}
    n = f"n = {a.get('units', 0)}+{b.get('units', 0)} servers, {a.get('steps', 0)}+{b.get('steps', 0)} steps"
    if w:
        n += f", {duration_text(w.get('span_s') or 0.0)} to " + datetime.fromtimestamp(
            w["end"], UTC
        ).strftime("%H:%M:%SZ")
    return visible(f"canary {sel} ({c.get('question', 'these servers')}): {body}; {n}")
