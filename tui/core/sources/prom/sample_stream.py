"""A ``/metrics`` page parsed as it streams in, keeping only what specwatch reads, within bounds.

A server's page can hold millions of series (55 MB for 10^6): held whole and parsed by
prometheus-client, one scrape took 1.5 GB and minutes. :class:`SampleStream` takes the body chunk
by chunk (:meth:`feed`), splits it into lines and

* keeps only the samples of the metric families specwatch reads — names starting with a server
  family's prefix (``sglang:``, ``vllm:``, ...: ``Format.metric_prefixes``) and
  ``process_start_time_seconds`` — every other line is looked at by its first character only (a
  page that is no Prometheus text, an HTML error page say, is still told as such);
* keeps at most :data:`MAX_PER_NAME` series of one sample name and :data:`MAX_SERIES` in all; the
  rest are counted, and :meth:`capped` says which names lost how many (the scraper turns it into a
  warning): a histogram with a label per request cannot crowd out the spec counters;
* gives each kept sample the family type prometheus-client's parsers give it (the text format's
  and OpenMetrics' own rules for which sample names belong to a ``# TYPE``), so that the readers
  see the same ``(name, labels, value, type)`` tuples as before (a test compares the two).

Memory is the kept samples plus one line; time is one pass over the bytes.
"""

from __future__ import annotations

__all__ = ["MAX_PER_NAME", "MAX_SERIES", "PageError", "SampleStream"]

MAX_PER_NAME = 10_000
MAX_SERIES = 50_000
MAX_LINE = 1 << 20  # one line longer than this is no exposition text

Sample = tuple[str, dict, float, str]

_NAME_START = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:")

# Which sample names a ``# TYPE NAME T`` covers (suffixes of NAME), as prometheus-client reads them.
_TEXT_SUFFIXES = {"summary": ("_count", "_sum", ""), "histogram": ("_count", "_sum", "_bucket")}
_OM_SUFFIXES = {
    "counter": ("_total", "_created"),
    "summary": ("", "_count", "_sum", "_created"),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "gaugehistogram": ("_bucket", "_gcount", "_gsum"),
    "info": ("_info",),
}


class PageError(ValueError):
    """Not Prometheus text (the message says where)."""


class SampleStream:
    """One page's samples (see the module's docstring); ``openmetrics``: the page's content type
    is OpenMetrics (its own rules for families and exemplars)."""

    def __init__(
        self,
        prefixes: tuple[str, ...],
        names: tuple[str, ...] = (),
        *,
        openmetrics: bool = False,
        max_per_name: int = MAX_PER_NAME,
        max_series: int = MAX_SERIES,
    ) -> None:
        self._prefixes = prefixes
        self._names = frozenset(names)
        self._wanted = tuple(p.encode() for p in (*prefixes, *names))
        self._om = openmetrics
        self._max_per_name = max_per_name
        self._max_series = max_series
        self._tail = b""
        self._family = ""  # the current # TYPE / # HELP family, its type and its sample names
        self._type = "unknown"
        self._allowed: tuple[str, ...] = ()
        self._per_name: dict[str, int] = {}
        self.dropped: dict[str, int] = {}  # series not kept, by sample name
        self.samples: list[Sample] = []
        self.lines = 0
        self.json = False  # the page is JSON (TensorRT-LLM's /metrics): not parsed
        self._started = False  # the page's first byte that is not white space seen

    # -- input ---------------------------------------------------------------------------------
    def feed(self, chunk: bytes) -> None:
        if not self._started:
            first = chunk.lstrip()[:1]
            if not first:
                self._tail += chunk
                return
            self._started = True
            self.json = first in (b"[", b"{")
        if self.json:
            return
        data = self._tail + chunk if self._tail else chunk
        lines = data.split(b"\n")
        self._tail = lines.pop()
        if len(self._tail) > MAX_LINE:
            raise PageError(f"not Prometheus text (a line longer than {MAX_LINE >> 20} MiB)")
        for line in lines:
            self._line(line)

    def close(self) -> list[Sample]:
        """The end of the page: its samples."""
        if self.json:
            raise PageError("not Prometheus text (the page is JSON)")
        if self._tail:
            tail, self._tail = self._tail, b""
            self._line(tail)
        return self.samples

    def capped(self) -> str:
        """What was left out for the bounds ("" when nothing was)."""
        if not self.dropped:
            return ""
        total = sum(self.dropped.values())
        worst = sorted(self.dropped.items(), key=lambda kv: -kv[1])[:3]
        names = ", ".join(f"{n} ({c:,} more)" for n, c in worst)
        return (
            f"{total:,} series of the metrics specwatch reads were not kept (at most "
            f"{self._max_per_name:,} per name and {self._max_series:,} in all): {names}"
        )

    # -- lines ---------------------------------------------------------------------------------
    def _line(self, raw: bytes) -> None:
        self.lines += 1
        line = raw.strip()
        if not line:
            return
        first = line[0]
        if first == 0x23:  # '#'
            if line.startswith((b"# TYPE ", b"# HELP ", b"#\tTYPE", b"#\tHELP")):
                self._comment(line)
            return
        if not line.startswith(self._wanted):
            if first not in _NAME_START:
                raise PageError(f"not Prometheus text (line {self.lines}: {line[:60]!r})")
            self._other()
            return
        self._sample(line)

    def _comment(self, line: bytes) -> None:
        parts = line.decode("utf-8", "replace").split(None, 3)
        if len(parts) < 3:
            return
        kind, name = parts[1], parts[2]
        if name == self._family:
            if kind == "TYPE":
                self._set_type(parts[3].strip() if len(parts) > 3 else "")
            return
        self._family = name
        if kind == "TYPE":
            self._set_type(parts[3].strip() if len(parts) > 3 else "")
        else:
            self._type, self._allowed = "unknown", (name,)

    def _set_type(self, typ: str) -> None:
        if not typ:
            raise PageError(f"not Prometheus text (a TYPE line without a type, line {self.lines})")
        name = self._family
        if self._om:
            self._type = typ
            self._allowed = tuple(name + s for s in _OM_SUFFIXES.get(typ, ("",)))
        else:
            self._type = "unknown" if typ == "untyped" else typ
            self._allowed = tuple(name + s for s in _TEXT_SUFFIXES.get(typ, ("",)))

    def _other(self) -> None:
        """A sample line of a family not read: only the text format's family rule applies (a
        sample outside the current family ends it)."""
        if not self._om:
            self._family, self._type, self._allowed = "", "unknown", ()

    def _sample(self, line: bytes) -> None:
        end = len(line)
        for stop in (line.find(b"{"), line.find(b" "), line.find(b"\t")):
            if 0 <= stop < end:
                end = stop
        name = line[:end].decode("utf-8", "replace")
        if name not in self._allowed:
            if not self._om:
                self._family, self._allowed = "", ()
            typ = "unknown"
        else:
            typ = self._type
        if not (name.startswith(self._prefixes) or name in self._names):
            return  # a longer name that only starts like one of ours: the prefix test was on bytes
        if not self._om and typ == "counter" and not name.endswith("_total"):
            name += "_total"  # prometheus-client's text parser reads a counter so
        seen = self._per_name.get(name, 0)
        if seen >= self._max_per_name or len(self.samples) >= self._max_series:
            self.dropped[name] = (
                self.dropped.get(name, 0) + 1
            )  # counted, not parsed: the bound holds the time too
            return
        _, labels, value = _parse(line.decode("utf-8", "replace"), self.lines, self._om)
        self._per_name[name] = seen + 1
        self.samples.append((name, labels, value, typ))


def _parse(text: str, line_no: int, om: bool) -> tuple[str, dict, float]:
    """``name{label="value",...} value [timestamp] [# exemplar]``."""
    n = len(text)
    i = 0
    while i < n and text[i] not in "{ \t":
        i += 1
    name = text[:i]
    labels: dict[str, str] = {}
    if i < n and text[i] == "{":
        i = _labels(text, i + 1, labels, line_no)
    rest = text[i:].split()
    if not rest:
        raise PageError(f"not Prometheus text (line {line_no}: no value for {name[:60]!r})")
    try:
        value = float(rest[0])
    except ValueError:
        raise PageError(f"not Prometheus text (line {line_no}: value {rest[0][:30]!r})") from None
    if len(rest) > 1 and rest[1] != "#" and not om:
        try:
            float(rest[1])  # a timestamp (not used)
        except ValueError:
            raise PageError(f"not Prometheus text (line {line_no}: {text[:60]!r})") from None
    return name, labels, value


def _labels(text: str, i: int, out: dict[str, str], line_no: int) -> int:
    """The labels from ``text[i]`` (just past ``{``) to the closing brace; the index after it."""
    n = len(text)
    while True:
        while i < n and text[i] in " \t,":
            i += 1
        if i < n and text[i] == "}":
            return i + 1
        eq = text.find("=", i)
        if eq < 0:
            raise PageError(f"not Prometheus text (line {line_no}: labels {text[:60]!r})")
        key = text[i:eq].strip()
        i = eq + 1
        while i < n and text[i] in " \t":
            i += 1
        if i >= n or text[i] != '"':
            raise PageError(f"not Prometheus text (line {line_no}: label {key[:30]!r} not quoted)")
        i += 1
        start, parts = i, []
        while True:
            j = text.find('"', i)
            if j < 0:
                raise PageError(f"not Prometheus text (line {line_no}: an unterminated label value)")
            k = j
            while k > start and text[k - 1] == "\\":
                k -= 1
            if (j - k) % 2 == 0:  # not escaped
                parts.append(text[start:j])
                i = j + 1
                break
            i = j + 1
        raw = "".join(parts)
        out[key] = _unescape(raw) if "\\" in raw else raw
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] == ",":
            i += 1
        elif i < n and text[i] == "}":
            return i + 1
        elif i >= n:
            raise PageError(f"not Prometheus text (line {line_no}: labels not closed)")


def _unescape(s: str) -> str:
    out, i, n = [], 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\" and i + 1 < n:
            nxt = s[i + 1]
            out.append("\n" if nxt == "n" else nxt if nxt in '\\"' else c + nxt)
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)
