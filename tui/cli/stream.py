"""``specwatch stream [--jsonl] [--from start|end|-N] [--no-follow] SOURCE...``: headless live output.

Follows every source at once (interleaved by arrival) until interrupted (Ctrl-C: exit 130, SIGTERM:
143, SIGHUP: 129, with one line on stderr, after the sources are closed);
stops by itself when every source has ended (stdin and commands at their end, files with
``--no-follow``). Exit status 1 when a source failed (missing file with --no-follow, permission
denied, a command that exited non-zero), 2 for bad arguments.

``--jsonl`` writes one JSON object per line, flushed as soon as a batch of lines is read:

* ``{"kind": "record", "source", "segment", "timestamp", "accept_len", "accept_rate", ...,
  "path", "raw"}`` for each metric line (every field of :class:`tui.core.model.records.RecordModel`,
  whose own ``kind`` -- decode, spec, spec_v0, timing -- is written as ``record_kind``);
* ``{"kind": "event", "source", "event", "message", "path", "time", "segment", "data"}`` for
  source events (opened, truncated, rotated, switched, waiting, idle, eof, error, exited,
  stderr: one object per stderr line). ``segment`` is the segment the following lines go to: a
  file change (truncated, rotated, switched) keeps it; only a startup in the content (a
  ``marker``) or a ``restarted`` mark opens the next one;
* ``{"kind": "marker", ...}`` for startup/restart markers, ``{"kind": "malformed", ...}`` for
  metric lines that could not be read, ``{"kind": "engine", ...}`` for vLLM engine stats lines,
  ``{"kind": "oversized", "line_no", "offset", "bytes", ...}`` for a line longer than 1 MiB (not read).

* ``{"kind": "alert", "source", "segment", "state", "rule", "value", "since", "time", "message",
  "suggest"}`` when an alert rule (``--alert RULE`` or specwatch.toml) fires (``state``:
  ``firing``) or clears (``resolved``); a drift alert carries ``"suggest": "new_segment"``. In
  text mode: one ``[SOURCE] ALERT ...`` / ``[SOURCE] alert resolved ...`` line. Verdict rules
  (two sources) use the B − A verdict on accept len, checked at most once a second and at the end.

Non-finite numbers (vLLM prints ``nan`` when nothing was drafted) are written as ``null``. Every
string keeps its value (``raw`` is the line exactly as read, ``message`` / ``path`` as given), but
no control or bidi character is written raw: C0, DEL, C1 and U+202A–U+202E / U+2066–U+2069 are
``\\uXXXX`` escapes (:func:`tui.core.model.sanitize.json_text`), other Unicode is written as is.

``--exit-on-alert``: exit with status 3 right after printing the first firing alert (a CI gate);
status 3 is used for nothing else.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import time
from contextlib import aclosing
from datetime import datetime
from typing import Any

from tui.cli.alert_args import EXIT_ON_ALERT, Alerting
from tui.cli.live_args import add_live_arguments, live_setup
from tui.core.alerts.engine import Alert, local_now
from tui.core.model.quantities import Output, added
from tui.core.model.records import EngineStats, Malformed, Marker, Oversized, Record, format_ts
from tui.core.model.sanitize import json_text, number, visible
from tui.core.pipeline.follow import Followed
from tui.core.pipeline.follow import follow as follow_sources
from tui.core.sources.base import EventKind, LineBatch, SourceEvent
from tui.core.sources.spec import SourceSpecError, open_source, source_labels
from tui.core.stats.verdicts import comparison

HELP = "print the records of live logs as they arrive (text or JSON lines)"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "stream",
        help=HELP,
        description=HELP + ". SOURCE is a file (followed by name, like tail -F), "
        "a quoted glob (follows the newest match), - (stdin), cmd:'COMMAND' (its stdout; use 2>&1 for "
        "docker logs), host:/path or host:'/dir/*.log' (over ssh), metrics+http://HOST:PORT/metrics (a server's "
        "Prometheus endpoint, scraped), or a name from specwatch.toml; LABEL=SOURCE sets the label.",
    )
    p.add_argument("sources", nargs="+", metavar="SOURCE")
    p.add_argument("--jsonl", action="store_true", help="one JSON object per line (records and events)")
    add_live_arguments(p)
    from tui.cli.window_args import add_window_arguments

    add_window_arguments(p)
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    start, specs, options = live_setup(args, "stream")
    from tui.cli.window_args import stream_window_options

    options.update(stream_window_options(args, specs))
    streamer = Streamer(
        specs,
        jsonl=args.jsonl,
        follow=not args.no_follow,
        start=start,
        options=options,
        alerting=getattr(args, "alerting", None),
    )
    try:
        # a stop signal cancels the run (tui.cli.signals): main() prints one line, 128 + signal
        return asyncio.run(streamer.run())
    except BrokenPipeError:
        _silence_stdout()
        return 0


def _silence_stdout() -> None:
    """After a broken pipe (``| head``), keep the interpreter from complaining at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class Streamer:
    def __init__(
        self,
        specs,
        *,
        jsonl: bool,
        follow: bool,
        start,
        options: dict[str, Any],
        out=None,
        alerting: Alerting | None = None,
    ) -> None:
        self.specs = specs
        self.alerting = alerting
        self._verdict_at = 0.0  # time.monotonic() of the last verdict check
        self.jsonl = jsonl
        self.follow = follow
        self.start = start
        self.options = options
        self.out = out or sys.stdout
        self.states = [Followed(s.name, lab) for s, lab in zip(specs, source_labels(specs))]

    async def run(self) -> int:
        sources = []
        try:
            for spec in self.specs:
                sources.append(open_source(spec, follow=self.follow, start=self.start, **self.options))
        except SourceSpecError as exc:
            for s in sources:
                await s.aclose()
            print(f"specwatch stream: {visible(str(exc))}", file=sys.stderr)
            return 2
        try:
            async with aclosing(follow_sources(sources, self.states)) as batches:
                async for i, batch, items in batches:
                    text = self.render(self.states[i], batch, items)
                    fired = [] if self._should_exit() else self._verdicts(final=False)
                    if text or fired:
                        self.out.write(text + self._finish(fired))
                        self.out.flush()
                    if self._should_exit():
                        return EXIT_ON_ALERT
            fired = [] if self._should_exit() else self._verdicts(final=True)
            if fired:
                self.out.write(self._finish(fired))
                self.out.flush()
            if self._should_exit():
                return EXIT_ON_ALERT
        finally:
            if self.alerting is not None:
                self.alerting.finish()
        failed = [st for st in self.states if st.error]
        for st in failed:
            print(visible(f"specwatch stream: {st.name}: {st.error}"), file=sys.stderr)
        return 1 if failed else 0

    # -- alerts -------------------------------------------------------------------------------
    def _should_exit(self) -> bool:
        return self.alerting is not None and self.alerting.exit_on_alert and bool(self.alerting.fired)

    def _record_alerts(self, st: Followed, rec: Record, seg: int) -> list[str]:
        assert self.alerting is not None
        alerts = self.alerting.engine.observe_record(
            st.name, rec, seg, depth=st.depth(seg)
        )  # no timestamp: now
        self.alerting.handle(alerts)
        return [self._alert_line(a, seg) for a in alerts]

    def _verdicts(self, *, final: bool) -> list[str]:
        """Two sources: the B − A verdict on accept len, at most once a second and at the end."""
        al = self.alerting
        now = time.monotonic()
        if al is None or len(self.states) != 2 or not (final or now - self._verdict_at >= 1.0):
            return []
        self._verdict_at = now
        a_st, b_st = self.states
        verdict = comparison(a_st.stats, b_st.stats)["accept_len"]["verdict"]
        alerts = al.engine.verdict(a_st.name, b_st.name, verdict, local_now())
        al.handle(alerts)
        return [self._alert_line(a, b_st.stats.segment_index) for a in alerts]

    def _alert_line(self, a: Alert, seg: int) -> str:
        if self.jsonl:
            return _dumps(
                {
                    "kind": "alert",
                    "source": a.source,
                    "segment": seg,
                    "state": a.state,
                    "rule": a.rule,
                    "value": a.value,
                    "since": format_ts(a.since),
                    "time": format_ts(a.time),
                    "message": a.message,
                    "suggest": a.suggest,
                }
            )
        what = a.message.removeprefix(f"{a.source}: ")
        if a.state == "resolved":
            return f"[{a.source}] alert resolved: {what}\n"
        return f"[{a.source}] ALERT {what}, since {format_ts(a.since)}\n"

    # -- one batch in, text out ---------------------------------------------------------------
    def render(self, st: Followed, batch: LineBatch | SourceEvent, items: list) -> str:
        """The output for a batch already fed to ``st`` (``items``: what it held, with segments)."""
        out: list[str] = []
        if isinstance(batch, SourceEvent):
            self._event(st, batch, out)
            return self._finish(out)
        for it, seg in items:
            self._item(st, it, seg, batch.path, out)
            if self.alerting is not None and isinstance(it, Record):
                out += self._record_alerts(st, it, seg)
                if self._should_exit():
                    break  # the CI gate: nothing after the alert
        return self._finish(out)

    def _finish(self, out: list[str]) -> str:
        """The text form: every entry is one line whose names, paths and messages come from
        outside, so each is made visible (a control sequence in it is shown, never obeyed).
        JSON lines keep the text's value (``raw`` is the whole line as read), written by
        :func:`json_text`: no control or bidi character is raw in them, each is a ``\\uXXXX`` escape."""
        if self.jsonl:
            return "".join(out)
        return "".join(visible(s[:-1]) + "\n" for s in out)

    def _item(self, st: Followed, it, seg: int, path: str | None, out: list[str]) -> None:
        if isinstance(it, Record):
            out.append(self._record_json(st, it, seg, path) if self.jsonl else self._record_text(st, it, seg))
        elif isinstance(it, Marker):
            if self.jsonl:
                out.append(
                    _dumps(
                        {
                            "kind": "marker",
                            "source": st.name,
                            "segment": seg,
                            "marker": it.kind,
                            "line_no": it.line_no,
                            "offset": it.offset,
                            "timestamp": format_ts(it.timestamp),
                            "family": it.family,
                            "version": it.version,
                            "continuation": it.continuation,
                            "config": it.config,
                            "path": path,
                            "raw": it.raw,
                        }
                    )
                )
            elif not it.continuation:
                out.append(f"[{st.name}] -- marker {it.kind} at line {it.line_no} (segment {seg})\n")
        elif isinstance(it, Malformed):
            if self.jsonl:
                out.append(
                    _dumps(
                        {
                            "kind": "malformed",
                            "source": st.name,
                            "segment": seg,
                            "line_no": it.line_no,
                            "offset": it.offset,
                            "reason": it.reason,
                            "path": path,
                            "raw": it.raw,
                        }
                    )
                )
            else:
                out.append(f"[{st.name}] -- malformed line {it.line_no}: {it.reason}\n")
        elif isinstance(it, Oversized):
            if self.jsonl:
                out.append(
                    _dumps(
                        {
                            "kind": "oversized",
                            "source": st.name,
                            "segment": seg,
                            "line_no": it.line_no,
                            "offset": it.offset,
                            "bytes": it.nbytes,
                            "path": path,
                        }
                    )
                )
            else:
                out.append(f"[{st.name}] -- oversized line {it.line_no}: {it.nbytes} bytes, not read\n")
        elif isinstance(it, EngineStats) and self.jsonl:
            out.append(
                _dumps(
                    {
                        "kind": "engine",
                        "source": st.name,
                        "segment": seg,
                        "line_no": it.line_no,
                        "offset": it.offset,
                        "timestamp": format_ts(it.timestamp),
                        "engine": it.engine,
                        "throughput": it.throughput,
                        "running_req": it.running_req,
                        "waiting_req": it.waiting_req,
                        "kv_usage": it.kv_usage,
                        "process": it.process,
                        "path": path,
                    }
                )
            )

    def _record_json(self, st: Followed, r: Record, seg: int, path: str | None) -> str:
        m = r.as_dict()
        d: dict[str, Any] = {
            "kind": "record",
            "source": st.name,
            "segment": seg,
            "timestamp": m.pop("timestamp"),
            "accept_len": m.pop("accept_len"),
            "accept_rate": m.pop("accept_rate"),
        }
        m.pop("source", None)
        d["record_kind"] = m.pop("kind")  # decode / spec / spec_v0 / timing
        raw = m.pop("raw")
        d.update(m)
        # the values the statistics (and alerts, charts) leave out, with why: field -> reason
        d["refused"] = st.refusals(r, seg) or None
        d["path"] = path
        d["raw"] = raw
        return _dumps(d)

    def _record_text(self, st: Followed, r: Record, seg: int) -> str:
        parts = [f"[{st.name}]", format_ts(r.timestamp) or "-", f"seg {seg}"]
        if r.rank:
            parts.append(r.rank)
        for key, value, digits in (
            ("accept_len", r.accept_len, 2),
            ("accept_rate", r.accept_rate, 3),
            ("accept_len~", r.accept_len_derived, 2),
            ("accept_rate~", r.accept_rate_derived, 3),
            ("accepted", r.accepted, 0),  # the counts, where a line prints them (the rate may not)
            ("drafted", r.drafted, 0),
            ("throughput", r.throughput, 1),
            ("running", r.running_req, 0),
            ("queue", r.queue_req, 0),
        ):
            if value is not None:
                parts.append(f"{key}={number(value, digits)}")
        for q in added():  # the quantities registered beyond the built-in ones (a family's own)
            x = r.value(q.name) if q.shown_in(Output.TEXT) else None
            if x is not None:
                parts.append(f"{q.name}={number(x, q.digits)}")
        refused = st.refusals(r, seg)
        if refused:
            parts.append("refused: " + ", ".join(f"{k} {why}" for k, why in refused.items()))
        if r.extra.get("synthetic"):  # a benchmarking mode's random acceptance, not measured
            parts.append("SYNTHETIC")
        return " ".join(parts) + "\n"

    def _event(self, st: Followed, ev: SourceEvent, out: list[str]) -> None:
        seg = st.stats.segment_index
        lines = ev.data.get("lines") if ev.kind == EventKind.STDERR else None
        messages = lines if isinstance(lines, list) else [ev.message]
        data = {k: v for k, v in ev.data.items() if k != "lines"}
        for msg in messages:
            if self.jsonl:
                out.append(
                    _dumps(
                        {
                            "kind": "event",
                            "source": st.name,
                            "event": ev.kind.value,
                            "message": msg,
                            "path": ev.path,
                            "time": _iso(ev.time),
                            "segment": seg,
                            "data": data,
                        }
                    )
                )
            elif ev.kind == EventKind.STDERR:
                out.append(f"[{st.name}] stderr: {msg}\n")
            else:
                out.append(f"[{st.name}] -- {ev.kind.value}: {msg}\n")


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t).astimezone().isoformat(timespec="milliseconds")


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _dumps(d: dict) -> str:
    try:
        return json_text(d, allow_nan=False, default=str) + "\n"
    except ValueError:  # a NaN/inf somewhere: write it as null
        return json_text(_clean(d), allow_nan=False, default=str) + "\n"
