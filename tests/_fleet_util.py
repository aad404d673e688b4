"""A Prometheus HTTP API answered in process (an ``httpx.MockTransport``) for the fleet screen's
functional and snapshot tests: a fixed fleet of vLLM engines (counters) and SGLang ranks (a gauge)
over 60 steps ending at a fixed time, so screens are the same on every run. The end-to-end tests
use a real Prometheus (tests/integration/test_fleet_prometheus.py)."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs

import httpx

END = 1_764_597_600.0  # 2025-12-01 14:00:00 UTC
STEP = 30.0


def vllm_instances(n: int) -> list[dict]:
    """n vLLM engines: names that differ only in the middle, two groups, one of them poor."""
    out = []
    for i in range(n):
        al = 1.05 if i == 3 else 2.4 + 0.05 * (i % 5)
        out.append(
            {
                "labels": {
                    "instance": f"gpu-node{i + 1:02d}.cluster.local:8000",
                    "job": "vllm",
                    "engine": "0",
                    "group": "canary" if i % 2 else "stable",
                    "model_name": "llama-3.1-8b",
                },
                "al": al,
                "drafts_per_step": 40 + 3 * i,
            }
        )
    return out


def sglang_instances(n: int) -> list[dict]:
    return [
        {
            "labels": {
                "instance": "sgl-a:30000",
                "job": "sglang",
                "dp_rank": str(d),
                "tp_rank": "0",
                "pp_rank": "0",
            },
            "al": 2.9 - 0.1 * d,
        }
        for d in range(n)
    ]


def _counter_values(inst: dict, quantity: str, times: list[float]) -> list[list]:
    """Cumulative counts at each step: drafts and accepted tokens vary from step to step by a fixed
    pattern (the same on every run), around the instance's accept len."""
    out, total = [], 0.0
    base = inst["drafts_per_step"] * 30
    for k, t in enumerate(times):
        d = base + (k * 37 % 11 - 5) * 20
        a = max(0, round((inst["al"] - 1 + ((k * 13 % 7) - 3) * 0.02) * d))
        inc = {"drafts": d, "accepted": a, "draft_tokens": 3 * d, "gen_tokens": a + d}.get(quantity)
        if inc is None:
            return [[t, "8"] for t in times] if quantity == "running" else []
        total += inc if k else 0
        out.append([t, str(total)])
    return out


class FakePrometheus:
    """Answers ``time()`` and ``query_range`` for the fleet's and the history source's queries."""

    def __init__(self, vllm: int = 8, sglang: int = 2) -> None:
        self.vllm, self.sglang = vllm_instances(vllm), sglang_instances(sglang)
        self.calls = 0

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        q = parse_qs(request.url.query.decode())
        query = q.get("query", [""])[0]
        if request.url.path.endswith("/query") and query == "time()":
            return self._ok({"resultType": "scalar", "result": [END, str(END)]})
        if request.url.path.endswith("/query") and query.startswith("max(count_over_time("):
            # the history probe: samples of the fullest series in the window (one a step)
            window = float(re.search(r"\[(\d+)s\]\)\)$", query).group(1))  # type: ignore[union-attr]
            return self._ok(
                {
                    "resultType": "vector",
                    "result": [{"metric": {}, "value": [END, str(int(window / STEP) + 1)]}],
                }
            )
        if request.url.path.endswith("/query") and query.endswith("s]"):
            # the scrape-interval probe: raw samples of the last minute, one every STEP seconds
            values = [[END - 60 + k * STEP, "1"] for k in range(3)]
            return self._ok(
                {"resultType": "matrix", "result": [{"metric": {"job": "vllm"}, "values": values}]}
            )
        if not request.url.path.endswith("/query_range"):
            return httpx.Response(404, text="not found")
        start, end, step = (float(q[k][0]) for k in ("start", "end", "step"))
        times = [start + k * step for k in range(int((end - start) / step) + 1)]
        name = re.search(r'__name__="([^"]+)"', query)
        wanted = dict(re.findall(r'(\w+)="([^"]*)"', query.split("{", 1)[1])) if "{" in query else {}
        wanted.pop("__name__", None)
        series = []
        metric = name.group(1) if name else ""
        for inst in self.vllm:
            if not metric.startswith("vllm:") or any(inst["labels"].get(k) != v for k, v in wanted.items()):
                continue
            quantity = {
                "vllm:spec_decode_num_accepted_tokens_total": "accepted",
                "vllm:spec_decode_num_drafts_total": "drafts",
                "vllm:spec_decode_num_draft_tokens_total": "draft_tokens",
                "vllm:generation_tokens_total": "gen_tokens",
                "vllm:num_requests_running": "running",
            }.get(metric)
            if quantity:
                series.append({"metric": inst["labels"], "values": _counter_values(inst, quantity, times)})
        for inst in self.sglang:
            if metric != "sglang:spec_accept_length" or any(
                inst["labels"].get(k) != v for k, v in wanted.items()
            ):
                continue
            series.append({"metric": inst["labels"], "values": [[t, str(inst["al"])] for t in times]})
        return self._ok({"resultType": "matrix", "result": [s for s in series if s["values"]]})

    @staticmethod
    def _ok(data: dict) -> httpx.Response:
        return httpx.Response(200, text=json.dumps({"status": "success", "data": data}))

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handler)
