"""Test servers for metrics sources: vLLM- and SGLang-like ``/metrics`` endpoints built with
prometheus-client from the metric names of docs/formats-metrics.md and the PR 24049 paste
(``../shared/reference/real_logs/vllm_prom_vllm-project-vllm_24049.txt``), held-out TensorRT-LLM,
llama.cpp and adaptive-SGLang servers written from the upstream metric names (issue 12 item 4),
served over real sockets on 127.0.0.1."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

MODEL = "/home/models/Qwen3-0.6B"  # as in the PR 24049 paste


class FakeVllm:
    """vLLM V1 spec-decode counters per engine (labels engine, model_name), plus the generation
    tokens counter and the running requests gauge."""

    def __init__(self, engines: int = 2, k: int = 3, model: str = MODEL) -> None:
        self.engines, self.k, self.model = engines, k, model
        # a step is seen whole or not at all by a scrape (served from another thread): the tests
        # count exact increments
        self._lock = threading.Lock()
        self.restart()

    def restart(self) -> None:
        """A new server process: every counter from zero, new _created times."""
        r = self.registry = CollectorRegistry()
        lab = ["model_name", "engine"]
        self.drafts = Counter(
            "vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", lab, registry=r
        )
        self.draft_tokens = Counter(
            "vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", lab, registry=r
        )
        self.accepted = Counter(
            "vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", lab, registry=r
        )
        self.per_pos = Counter(
            "vllm:spec_decode_num_accepted_tokens_per_pos",
            "Accepted tokens per draft position.",
            lab + ["position"],
            registry=r,
        )
        self.gen = Counter(
            "vllm:generation_tokens", "Number of generation tokens processed.", lab, registry=r
        )
        self.running = Gauge(
            "vllm:num_requests_running", "Number of requests in model execution batches.", lab, registry=r
        )
        for e in range(self.engines):
            for c in (self.drafts, self.draft_tokens, self.accepted, self.gen):
                c.labels(self.model, str(e))
            self.running.labels(self.model, str(e)).set(0)
            for i in range(self.k):
                self.per_pos.labels(self.model, str(e), str(i))

    def step(self, engine: int, drafts: int, per_pos: list[int], running: int = 4) -> None:
        """``drafts`` drafts of k tokens, ``per_pos[i]`` accepted at position i (prefix-accepted)."""
        e = str(engine)
        with self._lock:
            self.drafts.labels(self.model, e).inc(drafts)
            self.draft_tokens.labels(self.model, e).inc(drafts * self.k)
            self.accepted.labels(self.model, e).inc(sum(per_pos))
            for i, v in enumerate(per_pos):
                self.per_pos.labels(self.model, e, str(i)).inc(v)
            self.gen.labels(self.model, e).inc(drafts + sum(per_pos))
            self.running.labels(self.model, e).set(running)

    def text(self) -> str:
        with self._lock:
            return generate_latest(self.registry).decode()


class FakeSglang:
    """SGLang scheduler gauges per rank (labels model_name, engine_type, tp_rank, pp_rank, dp_rank),
    set as log_decode_stats sets them, and a tokenizer counter."""

    def __init__(self, dp: int = 2, model: str = "Qwen/Qwen3-8B") -> None:
        self.dp, self.model = dp, model
        self.restart()

    def restart(self) -> None:
        r = self.registry = CollectorRegistry()
        lab = ["model_name", "engine_type", "tp_rank", "pp_rank", "dp_rank"]
        self.al = Gauge(
            "sglang:spec_accept_length",
            "The average acceptance length of speculative decoding.",
            lab,
            registry=r,
        )
        self.rate = Gauge(
            "sglang:spec_accept_rate",
            "The average acceptance rate of speculative decoding "
            "(`accepted drafts / proposed drafts` in batch).",
            lab,
            registry=r,
        )
        self.tput = Gauge("sglang:gen_throughput", "The generation throughput (token/s).", lab, registry=r)
        self.run = Gauge("sglang:num_running_reqs", "The number of running requests.", lab, registry=r)
        self.gen = Counter(
            "sglang:generation_tokens", "Number of generation tokens processed.", ["model_name"], registry=r
        )
        self.gen.labels(self.model)
        for d in range(self.dp):
            for g in (self.al, self.rate, self.tput, self.run):
                g.labels(*self._lv(d)).set(0)

    def _lv(self, dp: int) -> list[str]:
        return [self.model, "unified", str(dp), "0", str(dp)]

    def decode(self, dp: int, al: float, rate: float, tput: float, running: int = 8) -> None:
        lv = self._lv(dp)
        self.al.labels(*lv).set(al)
        self.rate.labels(*lv).set(rate)
        self.tput.labels(*lv).set(tput)
        self.run.labels(*lv).set(running)
        self.gen.labels(self.model).inc(int(tput))

    def prefill(self, dp: int, running: int) -> None:
        """A prefill log line re-sets every gauge; the spec ones keep their values."""
        self.run.labels(*self._lv(dp)).set(running)

    def text(self) -> str:
        return generate_latest(self.registry).decode()


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 (keep-alive), no access log on stderr."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *a) -> None:
        pass


def serve(handler: type[BaseHTTPRequestHandler], port: int = 0) -> ThreadingHTTPServer:
    """``handler`` served on 127.0.0.1:``port`` (0: any free port) by a daemon thread."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


class PromServer:
    """``GET /metrics`` on 127.0.0.1 (real sockets) answering ``body()``; ``stop()`` then
    ``start()`` again is a server that goes away and comes back on the same port.
    ``mode``: "plain" (Content-Length), "chunked", "gzip" (when asked), "close" (no length),
    or an int HTTP status to answer instead. ``path``: where the metrics are served (TensorRT-LLM:
    ``/prometheus/metrics``)."""

    def __init__(self, body, port: int = 0, mode: str | int = "plain", path: str = "/metrics") -> None:
        self.body = body
        self.path = path
        self.port = port
        self.mode = mode
        self.requests = 0
        self.server: ThreadingHTTPServer | None = None

    def start(self) -> PromServer:
        outer = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                outer.requests += 1
                if self.path.split("?")[0] != outer.path:
                    return self._send(404, b"not found\n")
                if isinstance(outer.mode, int):
                    return self._send(outer.mode, b"no\n")
                self._send(200, outer.body().encode())

            def _send(self, code: int, data: bytes) -> None:
                mode = outer.mode
                self.send_response(code)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                if mode == "gzip" and "gzip" in (self.headers.get("Accept-Encoding") or ""):
                    data = gzip.compress(data)
                    self.send_header("Content-Encoding", "gzip")
                if mode == "chunked":
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for i in range(0, len(data), 700):
                        part = data[i : i + 700]
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.write(b"0\r\n\r\n")
                    return
                if mode == "close":
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(data)
                    self.close_connection = True
                    return
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = serve(Handler, self.port)
        self.port = self.server.server_address[1]
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"


def reference_exposition(path) -> str:
    """The PR 24049 paste (a Prometheus query table) written back as exposition text."""
    lines = []
    for row in open(path, encoding="utf-8").read().splitlines()[1:]:
        if "|" not in row or row.startswith("--"):
            continue
        series, _, value = row.rpartition("|")
        series = series.strip().replace(", ", ",")
        lines.append(f"{series} {value.strip()}")
    return "\n".join(lines) + "\n"


class FakeTrtllm:
    """``tensorrt_llm/metrics/collector.py``'s series (prefix ``trtllm_``, labels model_name and
    engine_type): iteration counters moved every iteration, per-position counters when a request
    finishes, the config info gauge set once. Each request drafts k tokens per step and accepts a
    prefix of them."""

    def __init__(self, k: int = 4, info: bool = True, method: str = "Eagle3") -> None:
        self.k, self.info, self.method = k, info, method
        self.restart()

    def restart(self) -> None:
        r = self.registry = CollectorRegistry()
        lab = ["model_name", "engine_type"]
        self.lv = ["meta-llama/Llama-3.1-8B-Instruct", "trtllm"]
        self.draft = Counter("trtllm_spec_decode_num_draft_tokens", "draft tokens", lab, registry=r)
        self.acc = Counter("trtllm_spec_decode_num_accepted_tokens", "accepted tokens", lab, registry=r)
        self.gen = Counter("trtllm_generation_tokens", "generation tokens", lab, registry=r)
        self.drafted_pos = Counter(
            "trtllm_spec_decode_drafted_tokens", "drafted per position", lab + ["token_position"], registry=r
        )
        self.acc_pos = Counter(
            "trtllm_spec_decode_accepted_tokens",
            "accepted per position",
            lab + ["token_position"],
            registry=r,
        )
        self.running = Gauge("trtllm_num_requests_running", "running", lab, registry=r)
        self.al_gauge = Gauge("trtllm_spec_decode_acceptance_length", "last iteration", lab, registry=r)
        if self.info:
            info = Gauge(
                "trtllm_speculative_config_info",
                "spec config",
                lab + ["spec_enabled", "spec_method", "spec_num_tokens"],
                registry=r,
            )
            info.labels(*self.lv, "true", self.method, str(self.k)).set(1)
        self.draft.labels(*self.lv)
        self.acc.labels(*self.lv)
        self.gen.labels(*self.lv)
        self.requests: dict[int, list[int]] = {}  # request -> accepted drafts of each of its steps
        self.iter_steps = self.iter_acc = 0  # truth, iteration population
        self.fin_steps = self.fin_acc = 0  # truth, finished-request population

    def iterate(self, accepted: dict[int, int]) -> None:
        """One iteration: request id -> drafts accepted at this step (0..k)."""
        for rid, a in accepted.items():
            self.requests.setdefault(rid, []).append(a)
        self.draft.labels(*self.lv).inc(self.k * len(accepted))
        self.acc.labels(*self.lv).inc(sum(accepted.values()))
        self.gen.labels(*self.lv).inc(sum(accepted.values()) + len(accepted))
        self.running.labels(*self.lv).set(len(accepted))
        self.al_gauge.labels(*self.lv).set(1 + sum(accepted.values()) / len(accepted))
        self.iter_steps += len(accepted)
        self.iter_acc += sum(accepted.values())

    def finish(self, rid: int) -> None:
        steps = self.requests.pop(rid)
        for i in range(self.k):
            self.drafted_pos.labels(*self.lv, str(i)).inc(len(steps))
            n = sum(1 for a in steps if a > i)
            if n:
                self.acc_pos.labels(*self.lv, str(i)).inc(n)
        self.fin_steps += len(steps)
        self.fin_acc += sum(steps)

    def text(self) -> str:
        return generate_latest(self.registry).decode()


def llamacpp_text(counters: dict[str, float], per_pos: list[int], processing: int, typed: bool = True) -> str:
    """llama-server's /metrics as server-context.cpp writes it (PR #26389): ``# HELP`` and
    ``# TYPE`` then ``llamacpp:<name> <value>`` with std::stringstream's default precision."""
    out = []
    for name, value in counters.items():
        if typed:
            out += [f"# HELP llamacpp:{name} {name}", f"# TYPE llamacpp:{name} counter"]
        out.append(f"llamacpp:{name} {value:g}")
    if typed:
        out += ["# HELP llamacpp:requests_processing r", "# TYPE llamacpp:requests_processing gauge"]
    out.append(f"llamacpp:requests_processing {processing}")
    if per_pos:
        name = "spec_decode_num_accepted_tokens_per_pos_total"
        if typed:
            out += [f"# HELP llamacpp:{name} per pos", f"# TYPE llamacpp:{name} counter"]
        out += [f'llamacpp:{name}{{position="{i}"}} {v}' for i, v in enumerate(per_pos)]
    return "\n".join(out) + "\n"


class FakeLlamacpp:
    """Counters updated when a request finishes (``on_prediction``), from the request's steps."""

    def __init__(self, suffix: str = "_total", typed: bool = True) -> None:
        self.suffix, self.typed = suffix, typed
        self.drafts = self.tokens = self.acc = self.predicted = 0
        self.pos: list[int] = []

    def request(self, steps: list[tuple[int, int]]) -> None:
        """steps: (drafted, accepted) of each verify step of one request."""
        for drafted, a in steps:
            self.drafts += 1
            self.tokens += drafted
            self.acc += a
            self.predicted += a + 1
            for i in range(a):
                if i == len(self.pos):
                    self.pos.append(0)
                self.pos[i] += 1

    def text(self, processing: int = 1) -> str:
        s = self.suffix
        counters = {
            "tokens_predicted_total": self.predicted,
            f"spec_decode_num_draft_tokens{s}": self.tokens,
            f"spec_decode_num_accepted_tokens{s}": self.acc,
            f"spec_decode_num_drafts{s}": self.drafts,
        }
        return llamacpp_text(counters, self.pos, processing, self.typed)


class FakeAdaptiveSglang(FakeSglang):
    """FakeSglang plus PR #25940's ``sglang:spec_num_steps`` / ``sglang:spec_num_draft_tokens``."""

    def restart(self) -> None:
        super().restart()
        lab = ["model_name", "engine_type", "tp_rank", "pp_rank", "dp_rank"]
        self.steps = Gauge("sglang:spec_num_steps", "Multiprocess metric", lab, registry=self.registry)
        self.ndt = Gauge("sglang:spec_num_draft_tokens", "Multiprocess metric", lab, registry=self.registry)

    def adaptive_decode(self, steps: int, accepted: int, verify: int, tput: float) -> None:
        """One decode-log window on every rank: ``verify`` steps accepted ``accepted`` drafts."""
        for d in range(self.dp):
            lv = self._lv(d)
            self.steps.labels(*lv).set(steps)
            self.ndt.labels(*lv).set(steps + 1)
            self.decode(d, 1 + accepted / verify, accepted / (verify * steps), tput + d)


def busy_vllm() -> tuple[FakeVllm, PromServer]:
    """Every scrape sees 10 more drafts on engine 0 (4 + 3 + 1 accepted: accept len 1.8)."""
    fake = FakeVllm(engines=1, k=3)

    def body() -> str:
        fake.step(0, 10, [4, 3, 1])
        return fake.text()

    return fake, PromServer(body).start()
