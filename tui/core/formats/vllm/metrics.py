"""vLLM's ``/metrics`` → records (docs/formats-metrics.md; the converter is
:class:`tui.core.sources.prom.exposition.Converter`).

* **V1**, per ``engine`` label: the counters ``vllm:spec_decode_num_drafts_total``,
  ``_num_draft_tokens_total``, ``_num_accepted_tokens_total`` and
  ``_num_accepted_tokens_per_pos_total{position}`` give exact window values from their deltas
  since the previous scrape: accept len = 1 + Δaccepted/Δdrafts, accept rate =
  Δaccepted/Δdraft_tokens, per position i = Δaccepted_pos_i/Δdrafts. No draft in the window
  (Δdrafts == 0) is idle: no record. Throughput = Δ``vllm:generation_tokens_total`` / seconds
  between the two scrapes; running requests = ``vllm:num_requests_running`` at the scrape.
* **V0**: the gauges ``vllm:spec_decode_draft_acceptance_rate`` and
  ``vllm:spec_decode_efficiency`` are cumulative since start, like the V0 log line: records are
  marked ``cumulative`` with the V0 rate definition. V0's counters are not used (V0 increments
  them by its cumulative totals at each stats log, so their deltas are not interval counts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tui.core.formats.plugin import MetricsReader
from tui.core.formats.vllm.rates import RATE_VLLM_V0_CUMULATIVE
from tui.core.model.records import RATE_DRAFTS
from tui.core.sources.prom.counters import Scrape, count, fingerprinted, finite, key, prefix

V1 = {
    "vllm:spec_decode_num_drafts_total": "drafts",
    "vllm:spec_decode_num_draft_tokens_total": "draft_tokens",
    "vllm:spec_decode_num_accepted_tokens_total": "accepted",
    "vllm:generation_tokens_total": "gen_tokens",
}
V1_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
V1_CREATED = "vllm:spec_decode_num_drafts_created"
RUNNING = "vllm:num_requests_running"
V0_RATE, V0_EFF = "vllm:spec_decode_draft_acceptance_rate", "vllm:spec_decode_efficiency"


def vllm_rank(labels: dict) -> str | None:
    engine = labels.get("engine")
    return f"{prefix(labels)}engine {engine}" if engine is not None else (labels.get("instance") or None)


@dataclass(slots=True)
class Engine:
    family: str
    labels: dict
    values: dict[str, float] = field(default_factory=dict)  # drafts, draft_tokens, accepted, gen_tokens
    pos: dict[int, float] = field(default_factory=dict)
    created: float | None = None
    running: float | None = None


def engine_order(labels: dict) -> tuple:
    e = labels.get("engine", "")
    return (labels.get("instance", ""), int(e) if e.isdigit() else 0, e)


def lifetime(e: Engine) -> dict:
    drafts, dtok, acc = (
        e.values.get("drafts", 0.0),
        e.values.get("draft_tokens"),
        e.values.get("accepted", 0.0),
    )
    out = {
        "drafts": int(round(drafts)),
        "draft_tokens": None if dtok is None else int(round(dtok)),
        "accepted": int(round(acc)),
        "accept_len": 1.0 + acc / drafts if drafts > 0 else None,
        "accept_rate": acc / dtok if dtok else None,
        "per_position": [e.pos[i] / drafts for i in sorted(e.pos)] if drafts > 0 and e.pos else None,
        "since": e.created,
    }
    return out


def window(e: Engine, base: Engine | None, dt: float | None, ts: float) -> dict | None:
    """The record of one engine's window (``base`` None: the counters count from zero)."""

    def delta(name: str) -> float | None:
        cur = e.values.get(name)
        if cur is None:
            return None
        if base is None:
            return cur
        old = base.values.get(name)
        return None if old is None else cur - old

    d_drafts, d_acc, d_tok = delta("drafts"), delta("accepted"), delta("draft_tokens")
    if not d_drafts or d_drafts <= 0 or d_acc is None:
        return None  # no draft in the window: idle
    rec: dict = {
        "family": e.family,
        "timestamp": ts,
        "rank": vllm_rank(e.labels),
        "accept_len": 1.0 + d_acc / d_drafts,
        "accepted": int(round(d_acc)),
        "num_drafts": float(round(d_drafts)),
        "rate_definition": RATE_DRAFTS,
    }
    if d_tok is not None and d_tok > 0:
        rec["accept_rate"] = d_acc / d_tok
        rec["drafted"] = int(round(d_tok))
    if e.pos and (base is None or set(base.pos) >= set(e.pos)):
        rec["per_position"] = [
            (e.pos[i] - (base.pos[i] if base is not None else 0.0)) / d_drafts for i in sorted(e.pos)
        ]
    d_gen = delta("gen_tokens")
    window = dt if base is not None else None
    if d_gen is not None and window and window > 0:
        rec["throughput"] = d_gen / window
    if finite(e.running):
        rec["running_req"] = int(e.running)  # type: ignore[arg-type]
    extra = {"source": "metrics"}
    if window:
        extra["window_s"] = f"{window:.3f}"
    if base is None:
        extra["window"] = "since restart"
    rec["extra"] = extra
    return rec


def v0_record(family: str, g: dict, ts: float) -> dict | None:
    rate = g.get(V0_RATE)
    if not finite(rate):
        return None
    extra = {"source": "metrics"}
    if finite(g.get(V0_EFF)):
        extra["system_efficiency"] = repr(g[V0_EFF])
    return {
        "family": family,
        "timestamp": ts,
        "rank": g["labels"].get("instance") or None,
        "accept_rate": rate,
        "cumulative": True,
        "rate_definition": RATE_VLLM_V0_CUMULATIVE,
        "extra": extra,
    }


class VllmMetrics(MetricsReader):
    """V1 counters per engine; without them, the V0 gauges."""

    def __init__(self, family: str) -> None:
        self.family = family
        self._engines: dict[tuple, Engine] = {}  # V1, previous scrape
        self._gauges: dict[tuple, tuple] = {}  # V0 fingerprints of the previous scrape

    def feed(self, samples: list[tuple[str, dict, float, str]], scrape: Scrape) -> None:
        engines, v0 = self._collect(samples)
        if engines:
            scrape.res.found.append(f"vLLM V1 spec-decode counters ({count(len(engines), 'engine')})")
            self._v1(engines, scrape)
        elif v0:
            scrape.res.found.append("vLLM V0 spec-decode gauges")
            any_g = next(iter(v0.values()))["labels"]
            config = {"model": any_g["model_name"]} if any_g.get("model_name") else {}
            scrape.start_or_reset(self.family, scrape.restarted, config)
            fingerprinted(
                v0,
                scrape,
                self._gauges,
                lambda labels: labels.get("instance") or "",
                lambda g: (g.get(V0_RATE), g.get(V0_EFF)),
                lambda g, ts: v0_record(self.family, g, ts),
            )

    def _collect(self, samples):
        engines: dict[tuple, Engine] = {}
        v0: dict[tuple, dict] = {}
        running: dict[tuple, float] = {}
        for name, labels, value, _ in samples:
            if name in V1 or name == V1_POS or name == V1_CREATED:
                k = key(labels)
                if name == "vllm:generation_tokens_total":
                    running.setdefault(("gen",) + k, value)
                    continue
                e = engines.get(k)
                if e is None:
                    e = engines[k] = Engine(self.family, {n: v for n, v in labels.items() if n != "position"})
                if name == V1_POS:
                    try:
                        e.pos[int(labels.get("position", ""))] = value
                    except ValueError:
                        pass
                elif name == V1_CREATED:
                    e.created = value
                else:
                    e.values[V1[name]] = value
            elif name == RUNNING:
                running[key(labels)] = value
            elif name in (V0_RATE, V0_EFF):
                v0.setdefault(key(labels), {"labels": labels})[name] = value
        for k, e in engines.items():
            if ("gen",) + k in running:
                e.values["gen_tokens"] = running[("gen",) + k]
            e.running = running.get(k)
        engines = {k: e for k, e in engines.items() if "drafts" in e.values and "accepted" in e.values}
        v0 = {k: g for k, g in v0.items() if V0_RATE in g}
        return engines, v0

    def _v1(self, engines: dict[tuple, Engine], scrape: Scrape) -> None:
        any_e = next(iter(engines.values()))
        k = max((len(e.pos) for e in engines.values()), default=0)
        config: dict = {}
        if any_e.labels.get("model_name"):
            config["model"] = any_e.labels["model_name"]
        if k:
            config["speculative_config"] = {"num_speculative_tokens": k}
        went_back = {g for g, e in engines.items() if self._went_back(g, e)}
        restarted = scrape.restarted
        scrape.start_or_reset(self.family, restarted or bool(went_back), config)
        for g, e in sorted(engines.items(), key=lambda kv: engine_order(kv[1].labels)):
            scrape.res.lifetime[vllm_rank(e.labels) or "all"] = lifetime(e)
            prev = self._engines.get(g)
            if prev is None and not restarted:
                continue  # the baseline of this engine
            base = None if (prev is None or restarted or g in went_back) else prev
            rec = window(e, base, scrape.dt, scrape.ts)
            if rec is not None:
                scrape.record(rec)
        self._engines = engines

    def _went_back(self, g: tuple, e: Engine) -> bool:
        prev = self._engines.get(g)
        if prev is None:
            return False
        if prev.created is not None and e.created is not None and prev.created != e.created:
            return True
        if any(e.values.get(n, math.inf) < v for n, v in prev.values.items()):
            return True
        return any(e.pos.get(i, math.inf) < v for i, v in prev.pos.items())
