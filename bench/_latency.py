"""Line-to-record latency of ``specwatch stream --jsonl``: each written line carries its sequence
number (``#running-req``) and the microsecond it was written (``#token``); the reader notes when
each record arrived."""

from __future__ import annotations

import json
import subprocess
import threading
import time


def line(seq: int) -> str:
    """An SGLang decode line stamped with ``seq`` and the current time in microseconds."""
    us = time.time_ns() // 1000
    return (
        f"[2026-01-02 03:04:05 TP0] Decode batch, #running-req: {seq}, #token: {us}, token usage: 0.42, "
        f"accept len: 2.61, accept rate: 0.65, cuda graph: True, gen throughput (token/s): 812.33, "
        f"#queue-req: 0\n"
    )


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


class LatencyReader:
    """Reads ``proc``'s JSON lines in a daemon thread until ``n`` records arrived: ``got`` maps
    each line's sequence number to its latency in ms, ``dupes`` counts records seen twice.
    Construction waits (30 s) for the ``opened`` event, else kills ``proc`` and exits."""

    def __init__(self, proc: subprocess.Popen, n: int) -> None:
        self.proc = proc
        self.n = n
        self.got: dict[int, float] = {}
        self.dupes = 0
        self.opened, self.done = threading.Event(), threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.opened.wait(30):
            proc.kill()
            raise SystemExit(f"stream did not start: {proc.stderr.read().decode() if proc.stderr else ''}")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            now = time.time_ns() // 1000
            o = json.loads(raw)
            if o["kind"] == "event" and o["event"] == "opened":
                self.opened.set()
            elif o["kind"] == "record":
                if o["running_req"] in self.got:
                    self.dupes += 1
                self.got[o["running_req"]] = (now - o["tokens"]) / 1000.0
                if len(self.got) == self.n:
                    self.done.set()
