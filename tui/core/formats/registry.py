"""The line parser of one source: finds the server family of each line by its message anchor
(never by one prefix: forks and logging configs change prefixes) and dispatches to the family
module. It keeps the little state lines need from earlier lines: the vLLM engine line before a
spec line, V0 cumulative counters, hard-wrapped args dumps, timestamps without a year.

``feed`` never raises: any unexpected failure on a line is reported as :class:`Malformed`.
"""

from __future__ import annotations

from typing import Literal

from tui.core.formats import (
    grammar,
    llamacpp,
    llamacpp_stats,
    markers,
    ollama,
    sglang,
    sglang_finish,
    vllm,
    vllm_bench,
)
from tui.core.formats.text import at_message_start, clean
from tui.core.formats.timestamps import TimestampReader
from tui.core.model.records import Item, Malformed, Marker, Oversized, Record, metrics_item
from tui.core.sources.base import LineBatch
from tui.core.sources.lines import OVERSIZED_LEAD, oversized_bytes

MAX_CONTINUATION = 256 * 1024  # cap on a hard-wrapped args dump being re-joined

# A line holding none of the grammar's anchors yields nothing (the scanners skip the same lines).
_ANCHORS = grammar.ANCHORS


class LineParser:
    """Parses the lines of one source into :mod:`tui.core.model.records` items."""

    def __init__(
        self, source: str, *, year: int | None = None, ref_time: float | Literal["now"] | None = "now"
    ) -> None:
        """``year`` / ``ref_time``: where vLLM's year-less stamps get their year (see
        :class:`TimestampReader`): a file's mtime; "now" for a live source; None: no year known."""
        self.source = source
        self.family: str | None = None  # the first family seen
        self.lines = 0
        self._ts = TimestampReader(year, ref_time)
        self._vllm = vllm.VllmState()
        self._pending_args: tuple[str, str] | None = None  # (kind, joined text)
        self._stats = llamacpp_stats.StatsState()
        self._bench: vllm_bench.BenchBlock | None = None  # a `vllm bench serve` block being read

    @property
    def idle(self) -> bool:
        """True when no hard-wrapped args dump is pending: a chunk may then skip this parser
        (the vLLM engine line a spec line pairs with is settled by the caller through
        :attr:`vllm_state`, the year of year-less stamps through :attr:`timestamps`)."""
        return self._pending_args is None and self._bench is None

    @property
    def vllm_state(self) -> vllm.VllmState:
        return self._vllm

    def set_reference(self, ref_time: float) -> None:
        """The year of vLLM's year-less stamps comes from ``ref_time`` (the file's mtime, from
        its ``opened`` event) rather than from the clock: an old log keeps its own year."""
        self._ts.set_reference(ref_time)

    def reset(self) -> None:
        """Forget cross-line state (after truncation, rotation, a switch to a newer file)."""
        self._vllm.reset()
        self._pending_args = None
        self._stats.reset()
        self._bench = None

    def feed_batch(self, batch: LineBatch) -> list[Item]:
        if batch.kind == "metrics":
            return self._metrics_batch(batch)
        out: list[Item] = []
        no = batch.first_line_no
        for line, off in zip(batch.lines, batch.offsets):
            item = self.feed(line, no, off)
            if item is not None:
                out.append(item)
            no += 1
        return out

    def feed(self, line: str, line_no: int, offset: int) -> Item | None:
        self.lines += 1
        try:
            return self._parse(line, line_no, offset)
        except Exception as exc:  # never raise on input; say what happened instead
            return Malformed(
                self.source, line_no, offset, f"parser error: {type(exc).__name__}: {exc}", line[:4096]
            )

    def _parse(self, line: str, line_no: int, offset: int) -> Item | None:
        if self._pending_args is not None:
            nbytes = oversized_bytes(line)
            if nbytes is not None:
                self._pending_args = None
                return Oversized(self.source, line_no, offset, nbytes)
            cont = self._continue_args(line, line_no, offset)
            if cont is not None:
                return cont
        if self._bench is not None:
            done, got = vllm_bench.feed_block(self._bench, self.source, line)
            if not done:
                return None
            self._bench = None
            if got is not None:
                return got
        if not any(a in line for a in _ANCHORS):
            # an oversized line stands in as "\n<bytes>" (see tui.core.sources.lines)
            nbytes = oversized_bytes(line) if line[:1] == OVERSIZED_LEAD else None
            return None if nbytes is None else Oversized(self.source, line_no, offset, nbytes)
        text = clean(line)
        at = text.find(sglang_finish.ANCHOR)
        if at >= 0 and at_message_start(text, at):  # first: its request text may hold anything
            req = sglang_finish.parse_finish(self.source, line_no, offset, text, at, line)
            return self._stamp(req, text) if req is not None else None
        at = text.find(sglang.ANCHOR)
        if at >= 0 and at_message_start(text, at):
            item = sglang.parse_decode(self.source, line_no, offset, text, at, line)
            return self._stamp(item, text)
        at = text.find(vllm.SPEC_ANCHOR)
        anchor = vllm.SPEC_ANCHOR
        if at < 0:
            at = text.find(vllm.V0_ANCHOR)
            anchor = vllm.V0_ANCHOR
        if at >= 0 and at_message_start(text, at):
            item = vllm.parse_spec(self.source, line_no, offset, text, at, anchor, line, self._vllm)
            return self._stamp(item, text)
        if "Avg prompt throughput" in text:
            at = text.find(vllm.ENGINE_ANCHOR)
            if at < 0 or not at_message_start(text, at):
                at = text.find("Avg prompt throughput")
            if at_message_start(text, at):
                return vllm.parse_engine(
                    self.source, line_no, offset, text, at, self._ts.read(text), self._vllm
                )
        at = text.find(llamacpp.ANCHOR)
        if at >= 0 and ("accepted" in text and "generated" in text):
            timing = llamacpp.parse_timing(self.source, line_no, offset, text, at, line)
            if isinstance(timing, Record):  # the statistics lines after it: llamacpp_stats
                self._stats.saw_request(timing.accept_len is not None)
            return self._stamp(timing, text) if timing is not None else None
        if llamacpp_stats.ANCHOR in text:
            st = llamacpp_stats.parse_stats(self.source, line_no, offset, text, line, self._stats)
            return self._stamp(st, text) if st is not None else None
        at = text.find(ollama.ANCHOR)
        if at >= 0:
            mlx = ollama.parse_mlx(self.source, line_no, offset, text, at, line)
            return self._stamp(mlx, text) if mlx is not None else None
        if vllm_bench.ANCHOR in text:
            self._bench = vllm_bench.BenchBlock(line_no, offset, line)
            return None
        found = markers.detect(text)
        if found is None:
            return None
        kind, family, config, version = found
        if kind in ("server_args", "args_dict"):
            tail = text[text.find("server_args=") :] if kind == "server_args" else text
            if not tail.rstrip().endswith(")") and not tail.rstrip().endswith("}"):
                self._pending_args = (kind, tail)
        if family and self.family is None:
            self.family = family
        return Marker(self.source, line_no, offset, family, kind, line, self._ts.read(text), config, version)

    def _metrics_batch(self, batch: LineBatch) -> list[Item]:
        """Records that a metrics source already computed, one JSON object per line."""
        out: list[Item] = []
        for i, (line, off) in enumerate(zip(batch.lines, batch.offsets)):
            no = batch.first_line_no + i
            self.lines += 1
            item: Item
            try:
                item = metrics_item(self.source, no, off, line)
            except (ValueError, TypeError) as exc:
                item = Malformed(self.source, no, off, f"bad metrics record: {exc}", line[:4096])
            if isinstance(item, Record) and self.family is None:
                self.family = item.family
            out.append(item)
        return out

    @property
    def timestamps(self) -> TimestampReader:
        return self._ts

    def _stamp(self, item: Record | Malformed, text: str) -> Record | Malformed:
        if isinstance(item, Record):
            item.timestamp = self._ts.read(text)
            if item.timestamp is None and item.family == "llamacpp":
                item.elapsed = self._ts.elapsed(text)
            if self.family is None:
                self.family = item.family
        return item

    def _continue_args(self, line: str, line_no: int, offset: int) -> Marker | None:
        """A hard-wrapped args dump goes on until a line with its own prefix or the closer."""
        kind, joined = self._pending_args  # type: ignore[misc]
        s = line.strip()
        if not s or s.startswith("[") or self._ts.read(s) is not None or len(joined) > MAX_CONTINUATION:
            self._pending_args = None
            return None
        if sglang.ANCHOR in s or vllm.SPEC_ANCHOR in s:
            self._pending_args = None
            return None
        joined += s
        done = s.endswith(")") or s.endswith("}")
        self._pending_args = None if done else (kind, joined)
        config = markers.parse_kv_args(joined) if kind == "server_args" else markers.parse_dict_args(joined)
        return Marker(
            self.source, line_no, offset, "sglang", kind, line, None, config, None, continuation=True
        )
