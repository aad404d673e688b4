"""Prometheus ``/metrics`` text → specwatch records: the pure part of the metrics source (no I/O).

The text is parsed with prometheus-client's parser. A :class:`Converter` keeps what it saw at the
previous scrape and turns each new scrape into JSON lines of :class:`tui.core.records.Record`
fields (``LineBatch(kind="metrics")``, see :mod:`tui.core.sources.base`), or restart markers.
Every number is the server's own or follows from it by the formulas of log_formats.md §1.7/§2.6:

* **vLLM V1** (§2.6), per ``engine`` label: the counters ``vllm:spec_decode_num_drafts_total``,
  ``_num_draft_tokens_total``, ``_num_accepted_tokens_total`` and
  ``_num_accepted_tokens_per_pos_total{position}`` give exact window values from their deltas
  since the previous scrape: accept len = 1 + Δaccepted/Δdrafts, accept rate =
  Δaccepted/Δdraft_tokens, per position i = Δaccepted_pos_i/Δdrafts. No draft in the window
  (Δdrafts == 0) is idle: no record. Throughput = Δ``vllm:generation_tokens_total`` / seconds
  between the two scrapes; running requests = ``vllm:num_requests_running`` at the scrape.
* **SGLang** (§1.7): the gauges ``sglang:spec_accept_length`` / ``sglang:spec_accept_rate`` are
  set to the values of each ``Decode batch`` log line (so they hold the latest decode interval
  only) and set again, unchanged, at each prefill log line. A record is made for a rank when
  (accept length, accept rate, ``sglang:gen_throughput``) differs from the previous scrape: the
  throughput is a full-precision tokens/s float of that interval, so two intervals practically
  never share the triple, and an unchanged triple is the same interval seen again (an idle
  server makes no record). Intervals logged between two scrapes other than the latest are not
  seen: records are a sample of the decode intervals, one per scrape at most. An accept length
  of 0 is the gauge's value before any decode (or speculative decoding off): no record.
* **vLLM V0** (§2.6): the gauges ``vllm:spec_decode_draft_acceptance_rate`` and
  ``vllm:spec_decode_efficiency`` are cumulative since start, like the V0 log line: records are
  marked ``cumulative`` with the V0 rate definition. V0's counters are not used (V0 increments
  them by its cumulative totals at each stats log, so their deltas are not interval counts).

The first scrape only sets the baseline (no record: a lifetime total is not a window). A counter
going back, or a changed ``_created`` / ``process_start_time_seconds``, is a restart: a
``counter_reset`` marker (a new segment), and the counters' values since the restart are the
first window of the new run.
"""

from __future__ import annotations

import calendar
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

from tui.core.records import RATE_DRAFTS, RATE_VLLM_V0_CUMULATIVE

V1 = {
    "vllm:spec_decode_num_drafts_total": "drafts",
    "vllm:spec_decode_num_draft_tokens_total": "draft_tokens",
    "vllm:spec_decode_num_accepted_tokens_total": "accepted",
    "vllm:generation_tokens_total": "gen_tokens",
}
V1_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
V1_CREATED = "vllm:spec_decode_num_drafts_created"
SGL_AL, SGL_RATE, SGL_TPUT = "sglang:spec_accept_length", "sglang:spec_accept_rate", "sglang:gen_throughput"
V0_RATE, V0_EFF = "vllm:spec_decode_draft_acceptance_rate", "vllm:spec_decode_efficiency"
RUNNING = "vllm:num_requests_running"
START = "process_start_time_seconds"
LOOKED_FOR = f"{SGL_AL}, vllm:spec_decode_num_drafts_total, {V0_RATE}"
_IGNORED_LABELS = ("position", "instance", "job")


def naive_now(t: float | None = None) -> float:
    """Wall-clock seconds as records carry them: the local time read as if it were UTC."""
    t = time.time() if t is None else t
    return calendar.timegm(time.localtime(t)) + (t % 1.0)


@dataclass(slots=True)
class ScrapeResult:
    lines: list[str] = field(default_factory=list)  # JSON records and markers, in order
    found: list[str] = field(default_factory=list)  # what was recognised, e.g. "vLLM V1 (2 engines)"
    lifetime: dict[str, dict] = field(default_factory=dict)  # vLLM V1 totals since start, per rank
    note: str = ""  # why nothing could be used (no spec-decode metric, ...)
    resets: int = 0


class MetricsParseError(ValueError):
    pass


def parse_samples(text: str, content_type: str | None = None) -> list[tuple[str, dict, float, str]]:
    """(sample name, labels, value, family type) of every sample, by prometheus-client's parser."""
    if content_type and "openmetrics" in content_type:
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    else:
        from prometheus_client.parser import text_string_to_metric_families
    out = []
    try:
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                out.append((s.name, s.labels, float(s.value), fam.type))
    except Exception as exc:  # the parser raises ValueError, IndexError, ... on bad text
        raise MetricsParseError(f"not Prometheus text ({type(exc).__name__}: {str(exc)[:120]})") from None
    return out


def _key(labels: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in labels.items() if k not in _IGNORED_LABELS))


def _prefix(labels: dict) -> str:
    inst = labels.get("instance")
    return f"{inst} " if inst else ""


def vllm_rank(labels: dict) -> str | None:
    engine = labels.get("engine")
    return f"{_prefix(labels)}engine {engine}" if engine is not None else (labels.get("instance") or None)


def sglang_rank(labels: dict) -> str:
    parts = [f"DP{labels['dp_rank']}"] if labels.get("dp_rank") not in (None, "") else []
    parts.append(f"TP{labels.get('tp_rank', '0')}")
    if labels.get("pp_rank") not in (None, "", "0"):
        parts.append(f"PP{labels['pp_rank']}")
    return _prefix(labels) + " ".join(parts)


@dataclass(slots=True)
class _Engine:
    labels: dict
    values: dict[str, float] = field(default_factory=dict)  # drafts, draft_tokens, accepted, gen_tokens
    pos: dict[int, float] = field(default_factory=dict)
    created: float | None = None
    running: float | None = None


def _finite(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


class Converter:
    """Turns successive scrapes of one endpoint into records (see the module text)."""

    def __init__(self) -> None:
        self.scrapes = 0
        self._engines: dict[tuple, _Engine] = {}  # vLLM V1, previous scrape
        self._prev_mono: float | None = None
        self._gauges: dict[tuple, tuple] = {}  # (family, key) -> fingerprint of the previous scrape
        self._counters: dict[tuple, float] = {}  # every *_total counter of the server, for restarts
        self._start: dict[tuple, float] = {}  # process start times and _created values
        self._started: set[str] = set()  # families whose start marker was sent

    def feed(
        self,
        text: str,
        *,
        wall: float | None = None,
        mono: float | None = None,
        content_type: str | None = None,
    ) -> ScrapeResult:
        """One scrape's text. ``wall``: time.time() of the scrape; ``mono``: time.monotonic()."""
        samples = parse_samples(text, content_type)
        wall = time.time() if wall is None else wall
        mono = time.monotonic() if mono is None else mono
        ts = naive_now(wall)
        res = ScrapeResult()
        first = self.scrapes == 0
        self.scrapes += 1
        restarted = self._restart_seen(samples) and not first
        engines, v0, sgl = self._collect(samples)
        dt = mono - self._prev_mono if self._prev_mono is not None else None
        self._prev_mono = mono
        if engines:
            res.found.append(f"vLLM V1 spec-decode counters ({_count(len(engines), 'engine')})")
            self._vllm(engines, ts, dt, restarted, res)
        elif v0:
            res.found.append("vLLM V0 spec-decode gauges")
            self._fingerprinted("vllm", v0, ts, restarted, first, res)
        if sgl:
            res.found.append(f"SGLang spec gauges ({_count(len(sgl), 'rank')})")
            self._fingerprinted("sglang", sgl, ts, restarted, first, res)
        if not res.found:
            vllm_seen = any(name.startswith("vllm:") for name, *_ in samples)
            res.note = (
                "vLLM metrics without spec-decode counters: speculative decoding is off on this server"
                if vllm_seen
                else f"no speculative-decoding metric in the response (looked for {LOOKED_FOR})"
            )
        return res

    # -- restarts -------------------------------------------------------------------------------
    def _restart_seen(self, samples) -> bool:
        """A counter of the server went back, or a start time / _created value changed."""
        seen = False
        counters: dict[tuple, float] = {}
        for name, labels, value, ftype in samples:
            if not (name.startswith("vllm:") or name.startswith("sglang:") or name == START):
                continue
            key = (name, _key(labels) + tuple(sorted((k, v) for k, v in labels.items() if k == "position")))
            if name == START or name.endswith("_created"):
                old = self._start.get(key)
                if old is not None and value != old:
                    seen = True
                self._start[key] = value
            elif ftype in ("counter", "unknown", "untyped") and name.endswith("_total"):
                counters[key] = value
                old = self._counters.get(key)
                if old is not None and value < old:
                    seen = True
        self._counters = counters
        return seen

    # -- grouping --------------------------------------------------------------------------------
    def _collect(self, samples):
        engines: dict[tuple, _Engine] = {}
        v0: dict[tuple, dict] = {}
        sgl: dict[tuple, dict] = {}
        running: dict[tuple, float] = {}
        for name, labels, value, _ in samples:
            if name in V1 or name == V1_POS or name == V1_CREATED:
                key = _key(labels)
                if name == "vllm:generation_tokens_total":
                    running.setdefault(("gen",) + key, value)
                    continue
                e = engines.get(key)
                if e is None:
                    e = engines[key] = _Engine(labels={k: v for k, v in labels.items() if k != "position"})
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
                running[_key(labels)] = value
            elif name in (V0_RATE, V0_EFF):
                v0.setdefault(_key(labels), {"labels": labels})[name] = value
            elif name in (SGL_AL, SGL_RATE, SGL_TPUT):
                sgl.setdefault(_key(labels), {"labels": labels})[name] = value
        for key, e in engines.items():
            if ("gen",) + key in running:
                e.values["gen_tokens"] = running[("gen",) + key]
            e.running = running.get(key)
        engines = {k: e for k, e in engines.items() if "drafts" in e.values and "accepted" in e.values}
        sgl = {k: g for k, g in sgl.items() if SGL_AL in g}
        v0 = {k: g for k, g in v0.items() if V0_RATE in g}
        return engines, v0, sgl

    # -- markers ---------------------------------------------------------------------------------
    def _marker(self, kind: str, family: str, ts: float, config: dict, res: ScrapeResult) -> None:
        res.lines.append(json.dumps({"marker": kind, "family": family, "timestamp": ts, "config": config}))

    def _start_or_reset(
        self, family: str, ts: float, restarted: bool, config: dict, res: ScrapeResult
    ) -> None:
        if family not in self._started:
            self._started.add(family)
            self._marker("metrics_start", family, ts, config, res)
        elif restarted:
            res.resets += 1
            self._marker("counter_reset", family, ts, config, res)

    # -- vLLM V1 ---------------------------------------------------------------------------------
    def _vllm(
        self, engines: dict[tuple, _Engine], ts: float, dt: float | None, restarted: bool, res: ScrapeResult
    ) -> None:
        any_e = next(iter(engines.values()))
        k = max((len(e.pos) for e in engines.values()), default=0)
        config: dict = {}
        if any_e.labels.get("model_name"):
            config["model"] = any_e.labels["model_name"]
        if k:
            config["speculative_config"] = {"num_speculative_tokens": k}
        went_back = {key for key, e in engines.items() if self._went_back(key, e)}
        self._start_or_reset("vllm", ts, restarted or bool(went_back), config, res)
        for key, e in sorted(engines.items(), key=lambda kv: _engine_order(kv[1].labels)):
            res.lifetime[vllm_rank(e.labels) or "all"] = _lifetime(e)
            prev = self._engines.get(key)
            if prev is None and not restarted:
                continue  # the baseline of this engine
            base = None if (prev is None or restarted or key in went_back) else prev
            rec = _window(e, base, dt, ts)
            if rec is not None:
                res.lines.append(json.dumps(rec))
        self._engines = engines

    def _went_back(self, key: tuple, e: _Engine) -> bool:
        prev = self._engines.get(key)
        if prev is None:
            return False
        if prev.created is not None and e.created is not None and prev.created != e.created:
            return True
        if any(e.values.get(n, math.inf) < v for n, v in prev.values.items()):
            return True
        return any(e.pos.get(i, math.inf) < v for i, v in prev.pos.items())

    # -- SGLang and vLLM V0: gauges that hold the latest interval ---------------------------------
    def _fingerprinted(
        self,
        family: str,
        groups: dict[tuple, dict],
        ts: float,
        restarted: bool,
        first: bool,
        res: ScrapeResult,
    ) -> None:
        any_g = next(iter(groups.values()))["labels"]
        config = {"model": any_g["model_name"]} if any_g.get("model_name") else {}
        self._start_or_reset(family, ts, restarted, config, res)
        order = sglang_rank if family == "sglang" else (lambda labels: labels.get("instance") or "")
        for key, g in sorted(groups.items(), key=lambda kv: order(kv[1]["labels"])):
            fp: tuple[Any, ...]
            if family == "sglang":
                fp = (g.get(SGL_AL), g.get(SGL_RATE), g.get(SGL_TPUT))
            else:
                fp = (g.get(V0_RATE), g.get(V0_EFF))
            gkey = (family, key)
            old = self._gauges.get(gkey)
            self._gauges[gkey] = fp
            if first or fp == old:
                continue  # the baseline, or the same interval seen again
            rec = _sglang_record(g, ts) if family == "sglang" else _v0_record(g, ts)
            if rec is not None:
                res.lines.append(json.dumps(rec))


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _engine_order(labels: dict) -> tuple:
    e = labels.get("engine", "")
    return (labels.get("instance", ""), int(e) if e.isdigit() else 0, e)


def _lifetime(e: _Engine) -> dict:
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


def _window(e: _Engine, base: _Engine | None, dt: float | None, ts: float) -> dict | None:
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
        "family": "vllm",
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
    if _finite(e.running):
        rec["running_req"] = int(e.running)  # type: ignore[arg-type]
    extra = {"source": "metrics"}
    if window:
        extra["window_s"] = f"{window:.3f}"
    if base is None:
        extra["window"] = "since restart"
    rec["extra"] = extra
    return rec


def _sglang_record(g: dict, ts: float) -> dict | None:
    al = g.get(SGL_AL)
    if not _finite(al) or al <= 0:  # type: ignore[operator]
        return None  # 0: no decode yet, or speculative decoding off
    rec: dict = {
        "family": "sglang",
        "timestamp": ts,
        "rank": sglang_rank(g["labels"]),
        "accept_len": al,
        "extra": {"source": "metrics"},
    }
    if _finite(g.get(SGL_RATE)):
        rec["accept_rate"] = g[SGL_RATE]
    if _finite(g.get(SGL_TPUT)):
        rec["throughput"] = g[SGL_TPUT]
    return rec


def _v0_record(g: dict, ts: float) -> dict | None:
    rate = g.get(V0_RATE)
    if not _finite(rate):
        return None
    extra = {"source": "metrics"}
    if _finite(g.get(V0_EFF)):
        extra["system_efficiency"] = repr(g[V0_EFF])
    return {
        "family": "vllm",
        "timestamp": ts,
        "rank": g["labels"].get("instance") or None,
        "accept_rate": rate,
        "cumulative": True,
        "rate_definition": RATE_VLLM_V0_CUMULATIVE,
        "extra": extra,
    }
