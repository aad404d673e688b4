"""Prometheus ``/metrics`` text → specwatch records: the pure part of the metrics source (no I/O).

The page is parsed as it streams in (:class:`tui.core.sources.prom.sample_stream.SampleStream`:
only the families specwatch reads are kept, within bounds; the same samples prometheus-client's
parsers give). A :class:`Converter` keeps what it saw at the previous scrape and turns each new scrape into JSON lines of :class:`tui.core.model.records.Record`
fields (``LineBatch(kind="metrics")``, see :mod:`tui.core.sources.base`), or restart markers.
Every number is the server's own or follows from it by the formulas in docs/formats-metrics.md.
Which metric names a family exposes and how its records are made is the family's
(``Format.metrics``: ``tui/core/formats/<family>/metrics.py``); this module parses the text, sees
restarts and runs the families' readers in the registry's order.

The first scrape only sets the baseline (no record: a lifetime total is not a window). A counter
going back, or a changed ``_created`` / ``process_start_time_seconds``, is a restart: a
``counter_reset`` marker (a new segment), and the counters' values since the restart are the
first window of the new run.
"""

from __future__ import annotations

import time

from tui.core.formats import registry
from tui.core.formats.plugin import MetricsReader
from tui.core.sources.clock import naive_now
from tui.core.sources.prom.counters import IGNORED_LABELS, Scrape, ScrapeResult
from tui.core.sources.prom.sample_stream import PageError, SampleStream

__all__ = ["Converter", "MetricsParseError", "ScrapeResult", "naive_now"]

START = "process_start_time_seconds"

MetricsParseError = PageError  # not Prometheus text


def _key(labels: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in labels.items() if k not in IGNORED_LABELS))


class Converter:
    """Turns successive scrapes of one endpoint into records (see the module text)."""

    def __init__(self) -> None:
        self.scrapes = 0
        self._prev_mono: float | None = None
        self._counters: dict[tuple, float] = {}  # every *_total counter of the server, for restarts
        self._start: dict[tuple, float] = {}  # process start times and _created values
        self._started: set[str] = set()  # families whose start marker was sent
        self._readers: list[MetricsReader] = [r for f in registry.FORMATS if (r := f.metrics()) is not None]
        self._prefixes = tuple(p for f in registry.FORMATS for p in f.metric_prefixes)

    def page(self, content_type: str | None = None) -> SampleStream:
        """A parser for one scrape's page (fed as it arrives; :meth:`feed_samples` its samples)."""
        return SampleStream(self._prefixes, (START,), openmetrics="openmetrics" in (content_type or ""))

    def feed(
        self,
        text: str,
        *,
        wall: float | None = None,
        mono: float | None = None,
        content_type: str | None = None,
    ) -> ScrapeResult:
        """One scrape's text. ``wall``: time.time() of the scrape; ``mono``: time.monotonic()."""
        page = self.page(content_type)
        page.feed(text.encode("utf-8", "surrogateescape"))
        return self.feed_samples(page.close(), wall=wall, mono=mono)

    def feed_samples(
        self,
        samples: list[tuple[str, dict, float, str]],
        *,
        wall: float | None = None,
        mono: float | None = None,
    ) -> ScrapeResult:
        """One scrape's samples (of a :meth:`page`)."""
        wall = time.time() if wall is None else wall
        mono = time.monotonic() if mono is None else mono
        res = ScrapeResult()
        first = self.scrapes == 0
        self.scrapes += 1
        restarted = self._restart_seen(samples) and not first
        dt = mono - self._prev_mono if self._prev_mono is not None else None
        self._prev_mono = mono
        scrape = Scrape(naive_now(wall), dt, restarted, first, res, self._started)
        for reader in self._readers:
            reader.feed(samples, scrape)
        if not res.found:
            res.note = _no_spec_note(samples)
        return res

    # -- restarts -------------------------------------------------------------------------------
    def _restart_seen(self, samples) -> bool:
        """A counter of the server went back, or a start time / _created value changed."""
        seen = False
        counters: dict[tuple, float] = {}
        for name, labels, value, ftype in samples:
            if not (name.startswith(self._prefixes) or name == START):
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


def _no_spec_note(samples) -> str:
    for f in registry.FORMATS:
        if f.no_spec_note and any(name.startswith(f.metric_prefixes) for name, *_ in samples):
            return f.no_spec_note
    looked_for = ", ".join(f.looked_for for f in registry.FORMATS if f.looked_for)
    return f"no speculative-decoding metric in the response (looked for {looked_for})"
