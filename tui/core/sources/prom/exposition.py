"""Prometheus ``/metrics`` text → specwatch records: the pure part of the metrics source (no I/O).

The text is parsed with prometheus-client's parser. A :class:`Converter` keeps what it saw at the
previous scrape and turns each new scrape into JSON lines of :class:`tui.core.model.records.Record`
fields (``LineBatch(kind="metrics")``, see :mod:`tui.core.sources.base`), or restart markers.
Every number is the server's own or follows from it by the formulas in docs/formats-metrics.md:

* **vLLM V1**, per ``engine`` label: the counters ``vllm:spec_decode_num_drafts_total``,
  ``_num_draft_tokens_total``, ``_num_accepted_tokens_total`` and
  ``_num_accepted_tokens_per_pos_total{position}`` give exact window values from their deltas
  since the previous scrape: accept len = 1 + Δaccepted/Δdrafts, accept rate =
  Δaccepted/Δdraft_tokens, per position i = Δaccepted_pos_i/Δdrafts. No draft in the window
  (Δdrafts == 0) is idle: no record. Throughput = Δ``vllm:generation_tokens_total`` / seconds
  between the two scrapes; running requests = ``vllm:num_requests_running`` at the scrape.
* **SGLang**: the gauges ``sglang:spec_accept_length`` / ``sglang:spec_accept_rate`` are
  set to the values of each ``Decode batch`` log line (so they hold the latest decode interval
  only) and set again, unchanged, at each prefill log line. A record is made for a rank when
  (accept length, accept rate, ``sglang:gen_throughput``) differs from the previous scrape: the
  throughput is a full-precision tokens/s float of that interval, so two intervals practically
  never share the triple, and an unchanged triple is the same interval seen again (an idle
  server makes no record). Intervals logged between two scrapes other than the latest are not
  seen: records are a sample of the decode intervals, one per scrape at most. An accept length
  of 0 is the gauge's value before any decode (or speculative decoding off): no record.
  ``sglang:spec_num_steps`` / ``sglang:spec_num_draft_tokens`` (adaptive speculation) are the
  segment's config: a change opens a segment (marker ``spec_steps``), so that each segment's
  normalised rate uses the one D its records ran with (docs/formats-new.md §9).
* **llama.cpp** and **TensorRT-LLM**: cumulative spec-decode counters, differenced like vLLM V1's
  (:mod:`tui.core.sources.prom.counters`); ``trtllm_speculative_config_info`` is the config.
* **vLLM V0**: the gauges ``vllm:spec_decode_draft_acceptance_rate`` and
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

from tui.core.sources.prom import counters
from tui.core.sources.prom.gauges import (
    SGL_AL,
    SGL_NAMES,
    SGL_NDT,
    SGL_RATE,
    SGL_STEPS,
    SGL_TPUT,
    V0_EFF,
    V0_RATE,
    agreed,
    sglang_rank,
    sglang_record,
    v0_record,
)
from tui.core.sources.prom.vllm import (
    RUNNING,
    V1,
    V1_CREATED,
    V1_POS,
    Engine,
    engine_order,
    lifetime,
    vllm_rank,
    window,
)

START = "process_start_time_seconds"
LOOKED_FOR = (
    f"{SGL_AL}, vllm:spec_decode_num_drafts_total, {V0_RATE}, llamacpp:spec_decode_num_drafts_total, "
    "trtllm_spec_decode_num_accepted_tokens_total"
)
_FAMILY_PREFIXES = ("vllm:", "sglang:", "llamacpp:", "trtllm_")
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


class Converter:
    """Turns successive scrapes of one endpoint into records (see the module text)."""

    def __init__(self) -> None:
        self.scrapes = 0
        self._engines: dict[tuple, Engine] = {}  # vLLM V1, previous scrape
        self._prev_mono: float | None = None
        self._gauges: dict[tuple, tuple] = {}  # (family, key) -> fingerprint of the previous scrape
        self._counters: dict[tuple, float] = {}  # every *_total counter of the server, for restarts
        self._start: dict[tuple, float] = {}  # process start times and _created values
        self._started: set[str] = set()  # families whose start marker was sent
        self._prev_counters: dict[str, dict[tuple, counters.Counters]] = {}  # llama.cpp, TensorRT-LLM
        self._trt_method: dict[tuple, str] = {}  # how each TensorRT-LLM run counts verify steps
        self._trt_info: tuple | None = None  # trtllm_speculative_config_info labels last seen
        self._sgl_steps: tuple | None = None  # SGLang (spec_num_steps, spec_num_draft_tokens) in force

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
        lcpp, trt, trt_info = counters.collect(samples)
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
        if lcpp:
            res.found.append("llama.cpp spec-decode counters")
            self._counter_family("llamacpp", lcpp, None, ts, dt, restarted, res)
        if trt:
            res.found.append("TensorRT-LLM spec-decode counters")
            self._counter_family("trtllm", trt, trt_info, ts, dt, restarted, res)
        if not res.found:
            res.note = _no_spec_note(samples)
        return res

    # -- restarts -------------------------------------------------------------------------------
    def _restart_seen(self, samples) -> bool:
        """A counter of the server went back, or a start time / _created value changed."""
        seen = False
        counters: dict[tuple, float] = {}
        for name, labels, value, ftype in samples:
            if not (name.startswith(_FAMILY_PREFIXES) or name == START):
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
        engines: dict[tuple, Engine] = {}
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
                    e = engines[key] = Engine(labels={k: v for k, v in labels.items() if k != "position"})
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
            elif name in SGL_NAMES:
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
        self, engines: dict[tuple, Engine], ts: float, dt: float | None, restarted: bool, res: ScrapeResult
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
        for key, e in sorted(engines.items(), key=lambda kv: engine_order(kv[1].labels)):
            res.lifetime[vllm_rank(e.labels) or "all"] = lifetime(e)
            prev = self._engines.get(key)
            if prev is None and not restarted:
                continue  # the baseline of this engine
            base = None if (prev is None or restarted or key in went_back) else prev
            rec = window(e, base, dt, ts)
            if rec is not None:
                res.lines.append(json.dumps(rec))
        self._engines = engines

    def _went_back(self, key: tuple, e: Engine) -> bool:
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
        if family == "sglang":
            self._sglang_steps(groups, ts, restarted, config, res)
        else:
            self._start_or_reset(family, ts, restarted, config, res)
        order = sglang_rank if family == "sglang" else (lambda labels: labels.get("instance") or "")
        for key, g in sorted(groups.items(), key=lambda kv: order(kv[1]["labels"])):
            fp: tuple[Any, ...]
            if family == "sglang":
                fp = (g.get(SGL_AL), g.get(SGL_RATE), g.get(SGL_TPUT), g.get(SGL_STEPS), g.get(SGL_NDT))
            else:
                fp = (g.get(V0_RATE), g.get(V0_EFF))
            gkey = (family, key)
            old = self._gauges.get(gkey)
            self._gauges[gkey] = fp
            if first or fp == old:
                continue  # the baseline, or the same interval seen again
            rec = sglang_record(g, ts) if family == "sglang" else v0_record(g, ts)
            if rec is not None:
                res.lines.append(json.dumps(rec))

    def _sglang_steps(
        self, groups: dict[tuple, dict], ts: float, restarted: bool, config: dict, res: ScrapeResult
    ) -> None:
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
        changed = sig != (None, None) and sig != self._sgl_steps  # also: first known (gauges set late)
        if sig != (None, None):
            self._sgl_steps = sig
        if "sglang" in self._started and not restarted and changed:
            self._marker("spec_steps", "sglang", ts, config, res)
        else:
            self._start_or_reset("sglang", ts, restarted, config, res)

    # -- llama.cpp and TensorRT-LLM: cumulative counters -----------------------------------------
    def _counter_family(
        self,
        family: str,
        groups: dict[tuple, counters.Counters],
        info: dict | None,
        ts: float,
        dt: float | None,
        restarted: bool,
        res: ScrapeResult,
    ) -> None:
        prev_groups = self._prev_counters.get(family, {})
        any_c = next(iter(groups.values()))
        k: int | None = None
        if family == "trtllm":
            config = counters.trt_config(info, any_c.labels)
            k = config.get("speculative_config", {}).get("num_speculative_tokens")
            sig = counters.info_signature(info)
            if info is not None:
                # new config labels: a restart with another config (the gauge is set once at start)
                restarted = restarted or (self._trt_info is not None and sig != self._trt_info)
                self._trt_info = sig
        else:
            config = {}
        went_back = {key for key, c in groups.items() if key in prev_groups and c.went_back(prev_groups[key])}
        self._start_or_reset(family, ts, restarted or bool(went_back), config, res)
        for key, c in sorted(groups.items(), key=lambda kv: kv[1].labels.get("instance") or ""):
            life = counters.lifetime(c, k)
            if life["drafts"] is not None:  # unknown without k or per-position counters: not "no draft"
                res.lifetime[c.labels.get("instance") or "all"] = life
            prev = prev_groups.get(key)
            if prev is None and not restarted:
                continue  # the baseline
            base = None if (prev is None or restarted or key in went_back) else prev
            method: str | None = None
            if family == "trtllm":
                if base is None:
                    self._trt_method.pop(key, None)
                method = self._trt_method.get(key) or counters.trt_method(c, base, k)
                if method is None:
                    continue  # idle
                self._trt_method[key] = method
            rec = counters.window(c, base, dt, ts, method=method, k=k)
            if rec is not None:
                res.lines.append(json.dumps(rec))
        self._prev_counters[family] = groups


def _no_spec_note(samples) -> str:
    names = {name.split(":", 1)[0] if ":" in name else name.split("_", 1)[0] for name, *_ in samples}
    if "vllm" in names:
        return "vLLM metrics without spec-decode counters: speculative decoding is off on this server"
    if "trtllm" in names:
        return (
            "TensorRT-LLM metrics without spec-decode counters: speculative decoding off, or "
            "enable_iter_perf_stats / return_perf_metrics not set"
        )
    if "llamacpp" in names:
        return (
            "llama.cpp metrics without spec-decode counters: speculative decoding off, or a build "
            "before PR #26389"
        )
    return f"no speculative-decoding metric in the response (looked for {LOOKED_FOR})"


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"
