"""SGLang's ``/metrics`` → records (docs/formats-metrics.md; the converter is
:class:`tui.core.sources.prom.exposition.Converter`).

The gauges ``sglang:spec_accept_length`` / ``sglang:spec_accept_rate`` are set to the values of
each ``Decode batch`` log line (so they hold the latest decode interval only) and set again,
unchanged, at each prefill log line. A record is made for a rank when (accept length, accept
rate, ``sglang:gen_throughput``) differs from the previous scrape: the throughput is a
full-precision tokens/s float of that interval, so two intervals practically never share the
triple, and an unchanged triple is the same interval seen again (an idle server makes no
record). Intervals logged between two scrapes other than the latest are not seen: records are a
sample of the decode intervals, one per scrape at most. An accept length of 0 is the gauge's
value before any decode (or speculative decoding off): no record.
``sglang:spec_num_steps`` / ``sglang:spec_num_draft_tokens`` (adaptive speculation) are the
segment's config: a change opens a segment (marker ``spec_steps``), so that each segment's
normalised rate uses the one D its records ran with (docs/formats-metrics.md).
"""

from __future__ import annotations

from tui.core.formats.plugin import MetricsReader
from tui.core.sources.prom.counters import Scrape, count, fingerprinted, finite, key, prefix

SGL_AL, SGL_RATE, SGL_TPUT = "sglang:spec_accept_length", "sglang:spec_accept_rate", "sglang:gen_throughput"
# no running requests for SGLang: sglang:num_running_reqs is also set at prefill log lines, so at a
# scrape it need not be the batch size of the decode interval the spec gauges hold
SGL_STEPS, SGL_NDT = "sglang:spec_num_steps", "sglang:spec_num_draft_tokens"
# 0.5.23 (observability/metrics_collector.py): gauges set from the same decode interval as the
# accept length (0 when no cap was scheduled / outside the cap-accept mode: not printed), and the
# counter of verify calls of the finished requests (incremented at each request's end)
SGL_CAP, SGL_BLOCK = "sglang:spec_cap_length", "sglang:spec_block_accept_length"
SGL_VERIFY = "sglang:spec_verify_calls_total"
_MORE = ((SGL_CAP, "cap_len"), (SGL_BLOCK, "block_accept_len"))
SGL_NAMES = (SGL_AL, SGL_RATE, SGL_TPUT, SGL_STEPS, SGL_NDT, SGL_CAP, SGL_BLOCK, SGL_VERIFY)


def sglang_rank(labels: dict) -> str:
    parts = [f"DP{labels['dp_rank']}"] if labels.get("dp_rank") not in (None, "") else []
    parts.append(f"TP{labels.get('tp_rank', '0')}")
    if labels.get("pp_rank") not in (None, "", "0"):
        parts.append(f"PP{labels['pp_rank']}")
    return prefix(labels) + " ".join(parts)


def agreed(values) -> int | None:
    """The one positive integer all ranks report (None when absent, 0 or not agreed)."""
    got = {int(v) for v in values if finite(v) and v > 0 and float(v).is_integer()}
    return got.pop() if len(got) == 1 else None


def sglang_record(family: str, g: dict, ts: float) -> dict | None:
    al = g.get(SGL_AL)
    if not finite(al) or al <= 0:  # type: ignore[operator]
        return None  # 0: no decode yet, or speculative decoding off
    rec: dict = {
        "family": family,
        "timestamp": ts,
        "rank": sglang_rank(g["labels"]),
        "accept_len": al,
        "extra": {"source": "metrics"},
    }
    if finite(g.get(SGL_RATE)):
        rec["accept_rate"] = g[SGL_RATE]
    if finite(g.get(SGL_TPUT)):
        rec["throughput"] = g[SGL_TPUT]
    for name, what in ((SGL_STEPS, "num_steps"), (SGL_NDT, "num_draft_tokens")):
        if finite(g.get(name)) and g[name] > 0:
            rec["extra"][what] = f"{g[name]:g}"
    more = {what: g[name] for name, what in _MORE if finite(g.get(name)) and g[name] > 0}
    if more:
        rec["more"] = more
    if finite(g.get(SGL_VERIFY)):  # a running total since the server started (finished requests)
        rec["extra"]["spec_verify_calls_total"] = f"{g[SGL_VERIFY]:g}"
    return rec


class SglangMetrics(MetricsReader):
    """The spec gauges per rank, and the steps in force as the segment's config."""

    def __init__(self, family: str) -> None:
        self.family = family
        self._gauges: dict[tuple, tuple] = {}  # fingerprints of the previous scrape
        self._steps: tuple | None = None  # (spec_num_steps, spec_num_draft_tokens) in force

    def feed(self, samples: list[tuple[str, dict, float, str]], scrape: Scrape) -> None:
        groups: dict[tuple, dict] = {}
        for name, labels, value, _ in samples:
            if name in SGL_NAMES:
                groups.setdefault(key(labels), {"labels": labels})[name] = value
        groups = {k: g for k, g in groups.items() if SGL_AL in g}
        if not groups:
            return
        scrape.res.found.append(f"SGLang spec gauges ({count(len(groups), 'rank')})")
        any_g = next(iter(groups.values()))["labels"]
        config = {"model": any_g["model_name"]} if any_g.get("model_name") else {}
        self._steps_marker(groups, scrape, config)
        fingerprinted(
            groups,
            scrape,
            self._gauges,
            sglang_rank,
            lambda g: (g.get(SGL_AL), g.get(SGL_RATE), g.get(SGL_TPUT), g.get(SGL_STEPS), g.get(SGL_NDT)),
            # (the cap gauges are set with the accept length; the verify counter moves at request
            # ends, not at decode intervals: neither makes a new interval)
            lambda g, ts: sglang_record(self.family, g, ts),
        )

    def _steps_marker(self, groups: dict[tuple, dict], scrape: Scrape, config: dict) -> None:
        """The steps in force (``sglang:spec_num_steps`` / ``_num_draft_tokens``, adaptive
        speculation) are the segment's config: a change opens a new segment (``spec_steps``), so
        each segment's rate normalisation uses the one D its records ran with."""
        steps = agreed(g.get(SGL_STEPS) for g in groups.values())
        ndt = agreed(g.get(SGL_NDT) for g in groups.values())
        if steps is not None:
            config["speculative_num_steps"] = steps
        if ndt is not None:
            config["speculative_num_draft_tokens"] = ndt
        sig = (steps, ndt)
        changed = sig != (None, None) and sig != self._steps  # also: first known (gauges set late)
        if sig != (None, None):
            self._steps = sig
        if self.family in scrape.started and not scrape.restarted and changed:
            scrape.marker("spec_steps", self.family, config)
        else:
            scrape.start_or_reset(self.family, scrape.restarted, config)
