"""What the fleet view asks a Prometheus for, per server family: the series a family's servers
export for speculative decoding, as PromQL selectors. Each family's plug-in gives its own
(:meth:`tui.core.formats.plugin.Format.fleet`); the fleet's queries are built from these only.

Two kinds:

* **counters** (vLLM V1, llama.cpp, TensorRT-LLM; specwatch's own exporter): accepted draft tokens
  and drafts (verify steps) are cumulative counters, so a window's accept len is exact:
  ``1 + increase(accepted) / increase(drafts)`` pooled over the window (a counter reset, i.e. a
  restart, is handled by ``increase``); ``draft_tokens`` gives the accept rate.
* **gauge** (SGLang; specwatch's exporter of a log without counts): the server sets a gauge to
  the accept len of its last logged interval; a window's value is the mean of its samples
  (``avg_over_time``), labelled as such (not pooled: no counts exist).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Series:
    """One metric: its name and fixed label matchers (e.g. ``position="0"``)."""

    name: str
    matchers: str = ""  # PromQL label matchers without braces, e.g. 'position="0"'

    def selector(self, extra: str = "") -> str:
        """``name{matchers, extra}`` (``extra``: the user's matchers, without braces)."""
        parts = [p for p in (self.matchers, extra) if p]
        return f'{{__name__="{self.name}"' + "".join(f", {p}" for p in parts) + "}"


# the quantities a family may name, and how series of one instance are combined (default: summed)
QUANTITIES = (
    "accepted",
    "drafts",
    "draft_tokens",
    "gen_tokens",
    "accept_len",
    "throughput",
    "running",
    "created",
)
AGGREGATION = {"accept_len": "avg", "throughput": "avg", "running": "avg", "created": "max"}


@dataclass(frozen=True, slots=True)
class FleetNames:
    """A family's spec-decode series for the fleet view."""

    family: str
    kind: str  # "counters" or "gauge"
    accepted: Series | None = None  # accepted draft tokens (counter)
    drafts: Series | None = None  # drafts / verify steps (counter)
    draft_tokens: Series | None = None  # drafted tokens (counter)
    accept_len: Series | None = None  # the gauge (kind "gauge")
    gen_tokens: Series | None = None  # generated tokens (counter), for throughput
    throughput: Series | None = None  # a throughput gauge, when no counter exists
    running: Series | None = None  # running requests (gauge): the load
    # the drafts counter's ``_created`` time (prometheus-client exports it): a new value is a
    # restart even when the new count already exceeds the old one at the next scrape
    created: Series | None = None
    # labels besides instance / job that tell one serving instance from another on a host
    instance_labels: tuple[str, ...] = ()

    def series(self) -> list[tuple[str, Series, str]]:
        """(quantity, its series, how an instance's series are combined) for each it names."""
        out = []
        for q in QUANTITIES:
            s = getattr(self, q)
            if s is not None:
                out.append((q, s, AGGREGATION.get(q, "sum")))
        return out


# specwatch's own exporter (``specwatch export``): log-only servers, a gauge of the current
# segment's accept len over its last records (not a server family: no plug-in of its own)
SPECWATCH = FleetNames(
    "specwatch",
    "gauge",
    accept_len=Series("specwatch_accept_len_window_mean", 'rank="all", current="true"'),
    instance_labels=("host", "source"),
)
