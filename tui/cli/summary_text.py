"""The readable form of ``specwatch summary`` (plain text tables, no colours), read from the typed
result (:class:`tui.core.model.summary.Summary`): the same numbers as the JSON and the Markdown."""

from __future__ import annotations

from tui.cli.summary_fit import fit, table, terminal_width
from tui.core.formats import families
from tui.core.formats.rate_definition import words
from tui.core.model import quantities
from tui.core.model.quantities import Output
from tui.core.model.sanitize import number, visible
from tui.core.model.summary import (
    Comparison,
    Interval,
    LoadAdjusted,
    PooledLen,
    PooledRate,
    Ratio,
    Scraped,
    Segment,
    Source,
    Stat,
    Summary,
    Verdict,
)
from tui.core.sources.identity import plural

DEFINITION_WORDS = words()
VERDICT_WORDS = {
    "higher": "B is higher",
    "lower": "B is lower",
    "no_difference": "no significant difference",
    "insufficient": "insufficient data",
}


def mean_ci(st: Stat | None, digits: int = 2) -> str:
    """``2.41 ± 0.05 (n=1500)``; the CI half-width is shown when there is one."""
    if st is None:
        return "— (n=0)"
    return mean_ci_of(st.n, st.mean, st.ci95, st.effective_n, digits)


def mean_ci_of(
    n: int, mean: float | None, ci: Interval | None, ess: float | None = None, digits: int = 2
) -> str:
    """:func:`mean_ci` of the parts: a mean, its interval, n and the effective n."""
    if not n or mean is None:
        return "— (n=0)"
    if not ci or ci[0] is None or ci[1] is None:  # a bound JSON could not hold (inf, nan) is null
        hw = ""
    elif abs((ci[0] + ci[1]) / 2 - mean) < 10 ** -(digits + 1):
        hw = f" ± {number((ci[1] - ci[0]) / 2, digits)}"
    else:  # clamped to the possible range: not symmetric
        hw = f" [{number(ci[0], digits)}, {number(ci[1], digits)}]"
    eff = ""
    if ess is not None and ess < 0.9 * n:
        eff = f", ~{ess:.0f} independent" if ess >= 1 else ", <1 independent"
    return f"{number(mean, digits)}{hw} (n={n}{eff})"


def pooled_text(p: PooledLen | PooledRate | None, digits: int = 2) -> str:
    """``2.61 [2.58, 2.64] (15300 accepted / 9000 drafts)``."""
    if p is None or p.value is None:
        return "—"
    ci = p.ci95
    ends = f" [{number(ci[0], digits)}, {number(ci[1], digits)}]" if ci and None not in ci else ""
    den, words = (p.drafts, "drafts") if isinstance(p, PooledLen) else (p.drafted, "drafted")
    return f"{number(p.value, digits)}{ends} ({p.accepted:.0f} accepted / {den:.0f} {words})"


FORMATS_READ = families.lines_read() + ", Prometheus /metrics spec-decode counters"  # from the families' data
# Segment table columns, the least important first to go when the terminal is narrow.
SEG_HEADER = [
    "seg",
    "opened by",
    "start",
    "config",
    "records",
    "accept len",
    "accept rate (printed)",
    "rate (drafts)",
    "printed definition",
]
SEG_DROP = (8, 7, 2, 1, 6, 3)  # a dropped config column is printed below the table instead


def has_acceptance(d: Source | Segment) -> bool:
    """Any acceptance value at all (printed, pooled from counts, or derived)."""
    al, ar = d.accept_len, d.accept_rate
    return bool(al.n or al.pooled or ar.n or ar.pooled or d.accept_len_derived)


def no_acceptance_warning(src: Source) -> str | None:
    """The warning for a source with lines but no acceptance value (shown when the source has no
    other ``warnings``: a binary file's says more)."""
    if not src.lines or has_acceptance(src):
        return None
    what = f"{plural(src.records, 'metric line')}, none with acceptance" if src.records else "no metric line"
    read = f"{plural(src.lines, 'line')} read"
    told = [x.message for seg in src.segments for x in seg.diagnostics if x.code == "server_note"]
    if told:  # the server said why (its own line, shown with the segment's diagnostics too)
        return f"  warning: no speculative-decoding metric: {read}, {what}: {told[-1]}"
    base = " (expected: it is labelled baseline)" if src.label.lower() == "baseline" else ""
    return (
        f"  warning: no speculative-decoding metric found — is speculation on?{base} "
        f"{read}, {what}; formats read: {FORMATS_READ}"
    )


def _read_as(src: Source) -> list[str]:
    """The files of a set or a compressed file, in the order read, and the time window."""
    out = []
    files = src.files or []
    if len(files) > 1 or any(f.compression for f in files):
        said = [f.path + (f" ({f.compression})" if f.compression else "") for f in files]
        out.append("  read " + " → ".join(said))
    w = src.window
    if w is not None:
        out.append(
            f"  window {w.since or 'start'} → {w.until or 'end'}"
            f" ({w.skipped_bytes or 0} bytes before it skipped"
            + (
                f"; its segment's startup lines, {w.context_bytes} bytes, read for its config"
                if w.context_bytes
                else ""
            )
            + (f"; found {w.search}: the clock goes back" if w.search == "in order" else "")
            + ")"
        )
    return out


def render_source(src: Source, width: int = 10**6) -> list[str]:
    out = [
        f"{src.label}  ({src.source})",
        f"  lines {src.lines}, records {src.records}, malformed {src.malformed}"
        + (f", family {src.family}" if src.family else "")
        + _oversized(src),
    ]
    out += _read_as(src)
    warn: list[str | None] = [f"  warning: {w}" for w in src.warnings]
    out += [w for w in warn or [no_acceptance_warning(src)] if w]
    whole = _whole_file(src)
    several = len(src.segments) > 1
    if not several:  # one segment: the whole file is that segment
        out += whole
    if src.elapsed is not None:  # llama.cpp prints time since the server started, not a date
        out.append(f"  elapsed      {src.elapsed.first} to {src.elapsed.last} (since the server started)")
    if src.accept_len_derived is not None:
        out.append(f"  accept len (derived from counters)  {mean_ci(src.accept_len_derived)}")
    rows = [segment_row(seg) for seg in src.segments]
    tab, kept = table(rows, SEG_HEADER, width, SEG_DROP)
    out += tab
    dropped = [i for i in SEG_DROP if i not in kept]
    for seg, row in zip(src.segments, rows):  # what the narrow table left out, below it
        if 3 in dropped:
            out.append(f"    seg {seg.index} config: {row[3]}")
        rest = [f"{SEG_HEADER[i]} {row[i]}" for i in sorted(dropped) if i != 3 and row[i] != "—"]
        if rest:
            out.append(f"    seg {seg.index} " + "; ".join(rest))
    out += _draft_notes(src.segments)
    for seg in src.segments:
        for rank, r in (seg.ranks or {}).items():
            out.append(f"    seg {seg.index} rank {rank or '(untagged)'}: accept len {mean_ci(r.accept_len)}")
        out += request_line(seg)
        if seg.per_position:
            pp = ", ".join(number(v, 3) for v in seg.per_position)
            out.append(f"    seg {seg.index} per-position acceptance: {pp}")
        out += _by_load(seg) + _payoff(seg)
        out += [
            f"    seg {seg.index} {words}: {value}" for words, value in added_figures(seg.more, Output.TEXT)
        ]
        for d in seg.diagnostics:
            out.append(f"    seg {seg.index} {d.level}: {d.message}")
    out += render_metrics(src.metrics)
    sc = src.segment_comparison
    if sc is not None:
        out.append(f"  last two segments ({sc.segments[0]} → {sc.segments[1]}): {verdict_text(sc)}")
        out.append(f"    at equal batch size: {adjusted_text(sc.accept_len_load_adjusted)}")
    if several:  # the segments first: a mean over several configs is not the headline
        out.append(
            f"  all {len(src.segments)} segments together (different runs mixed: compare the segments):"
        )
        out += ["  " + line for line in whole]
    return out


def _whole_file(src: Source) -> list[str]:
    """The whole file's accept len and rate (every segment together)."""
    al, ar = src.accept_len, src.accept_rate
    out = [
        f"  accept len   {mean_ci(al)}  min {number(al.min)}  max {number(al.max)}"
        f"  last {number(al.last)}  weighted {number(al.weighted_mean)}"
    ]
    if al.pooled is not None:
        out.append(f"  accept len, pooled 1 + Σaccepted/Σdrafts   {pooled_text(al.pooled)}")
        if al.pooled.method:  # the drafts were not printed as such
            out.append(f"    ({al.pooled.method})")
    if ar.n:
        out.append(f"  accept rate  {mean_ci(ar, 3)}  (mean of printed values)")
    if ar.pooled is not None:
        out.append(f"  accept rate, pooled Σaccepted/Σdrafted     {pooled_text(ar.pooled, 3)}")
    out += [f"  {words}  {value}" for words, value in added_figures(src.more, Output.TEXT)]
    return out


def added_figures(more: dict[str, Stat] | None, output: Output) -> list[tuple[str, str]]:
    """(words, mean ± CI) of each quantity registered beyond the built-in ones (a family's own)
    that ``output`` shows: ``draft latency (ms)``, ``3.20 ± 0.10 (n=40)``."""
    out = []
    for name, st in (more or {}).items():
        q = quantities.find(name)
        if q is None or not q.shown_in(output):
            continue
        out.append((f"{q.label} ({q.unit})" if q.unit else q.label, mean_ci(st, q.digits)))
    return out


def segment_row(seg: Segment) -> list[str]:
    """One segment's cells, in the order of :data:`SEG_HEADER`."""
    norm = seg.accept_rate_normalized
    printed = bool(seg.accept_rate.n)
    return [
        str(seg.index),
        seg.reason,
        seg.start_time or seg.first_record_time or "—",
        seg.label,
        str(seg.records),
        mean_ci(seg.accept_len),
        mean_ci(seg.accept_rate, 3) if printed else "—",
        mean_ci(norm, 3) if norm is not None and norm.n else "—",
        DEFINITION_WORDS.get(seg.rate_definition.printed_definition or "", "unknown") if printed else "—",
    ]


def _draft_notes(segments: list[Segment]) -> list[str]:
    """The draft model's config.json facts, once per source for each distinct text: when they were
    found, or — a note that it could not be read — only where acceptance collapsed (where the
    aux layer ids would explain it)."""
    notes: dict[str, list[int]] = {}
    for seg in segments:
        draft = seg.config.get("draft") or {}  # the server's config: plain data, as read
        if not draft:
            continue
        ids = draft.get("aux_layer_ids")
        found = bool(draft.get("architecture") or ids is not None)
        stuck = any(d.code == "accept_len_stuck_at_1" for d in seg.diagnostics)
        if not found and not stuck:
            continue
        bits = [
            draft.get("architecture") or "",
            f"aux layers {ids}" if ids is not None else "",
            draft.get("note") or "",
        ]
        notes.setdefault("; ".join(b for b in bits if b), []).append(seg.index)
    return [f"    seg {', '.join(map(str, idx))} draft config: {text}" for text, idx in notes.items()]


def _by_load(seg: Segment) -> list[str]:
    strata = seg.by_batch_size
    if len(strata) < 2:
        return []
    cells = []
    for s in strata:
        lo, hi = s.running_req
        rng = f"{lo}" if lo == hi else f"{lo}–{hi if hi is not None else ''}"
        cells.append(f"{rng}: {mean_ci_of(s.n, s.accept_len.mean, s.accept_len.ci95)}")
    return [f"    seg {seg.index} accept len by batch size (#running-req): " + " · ".join(cells)]


def _payoff(seg: Segment) -> list[str]:
    sp = seg.speculation
    gen = sp.generation_throughput.mean
    acc = sp.accepted_tokens_per_s.mean
    if gen is None or acc is None:
        return []
    rej = sp.rejected_tokens_per_s.mean
    share = sp.draft_share.value if sp.draft_share is not None else None
    bits = [f"{number(gen, 0)} tokens/s generated", f"{number(acc, 0)} accepted draft tokens/s"]
    if rej is not None:
        bits.append(f"{number(rej, 0)} rejected draft tokens/s")
    if share is not None:
        bits.append(f"{number(100 * share, 0)}% of output tokens from drafts")
    return [
        f"    seg {seg.index} speculation: " + ", ".join(bits) + " (from the mean throughput and accept len)"
    ]


def request_line(seg: Segment) -> list[str]:
    """The segment's per-request acceptance (issue 12), one line; nothing without requests."""
    r = seg.requests
    if r is None:
        return []
    al = r.accept_len
    text = f"    seg {seg.index} requests: n {r.n}"
    if r.n:
        text += f", accept len mean {number(al.mean)}  p10 {number(al.p10)}  p50 {number(al.p50)}  p90 {number(al.p90)}"
    if r.step_histogram:
        text += f"; steps accepting 0..k drafts {r.step_histogram}"
    return [text]


def _oversized(src: Source) -> str:
    o = src.oversized
    if o is None or not o.lines:
        return ""
    return f", oversized {o.lines} (not read; {o.bytes:,} bytes, largest {o.largest:,})"


def render_metrics(m: Scraped | None) -> list[str]:
    """What a metrics source adds: scrapes, and vLLM's lifetime totals since the server started."""
    if m is None:
        return []
    out = [
        f"  scraped {m.where} {m.scrapes} times"
        + (f", every {m.interval:g} s" if m.interval else "")
        + (f"; error: {m.error}" if m.error else "")
    ]
    for rank, t in m.lifetime.items():  # the server's totals: plain data, as scraped
        if not t.get("drafts"):
            out.append(f"    {rank} since start: no draft yet")
            continue
        pp = t.get("per_position")
        out.append(
            f"    {rank} since start: accept len {number(t.get('accept_len'))}, accept rate "
            f"{number(t.get('accept_rate'), 3)} ({t['accepted']} accepted / {t.get('draft_tokens')} drafted tokens, "
            f"{t['drafts']} drafts)" + (f", per position {', '.join(number(v, 3) for v in pp)}" if pp else "")
        )
    return out


ESTIMATOR_WORDS = {"pooled": "pooled counts", "mean_of_lines": "mean of printed values"}


def verdict_text(c: Verdict | LoadAdjusted) -> str:
    how = f" [{ESTIMATOR_WORDS[c.estimator]}]" if c.estimator else ""
    if c.diff is None or not c.ci95:
        return f"{VERDICT_WORDS[c.verdict]} ({c.reason}){how}"
    lo, hi = c.ci95
    return (
        f"{number(c.diff, signed=True)} (95% CI {number(lo, signed=True)} … {number(hi, signed=True)}): "
        f"{VERDICT_WORDS[c.verdict]}{how}"
    )


def render(out: Summary, width: int | None = None) -> str:
    """The text, fitted to ``width`` columns (default: the terminal's, see :func:`terminal_width`)."""
    width = width or terminal_width()
    lines: list[str] = []
    for src in out.sources:
        lines += render_source(src, width)
        lines.append("")
    c = out.comparison
    if c is not None:
        lines.append(f"A = {c.a.label} (segment {c.a.segment}), B = {c.b.label} (segment {c.b.segment})")
        lines.append(f"  accept len B − A: {verdict_text(c.accept_len)}")
        lines.append(f"  accept len B − A at equal batch size: {adjusted_text(c.accept_len_load_adjusted)}")
        if c.accept_rate is not None:
            lines.append(
                f"  accept rate B − A: {verdict_text(c.accept_rate)}"
                + (f"  [{c.accept_rate.note}]" if c.accept_rate.note else "")
            )
        if c.throughput.ratio is not None:
            lines.append(f"  {throughput_text(c.throughput, c)}")
        lines.append("")
    return "\n".join(fit([visible(ln) for ln in lines], width))


def adjusted_text(adj: LoadAdjusted) -> str:
    load = adj.load.note
    extra = f"{len(adj.strata)} batch-size bins in common" + (f"; {load}" if load else "")
    return f"{verdict_text(adj)} [{extra}]"


THROUGHPUT_WORDS = {
    "higher": "faster",
    "lower": "slower",
    "no_difference": "no significant difference",
    "insufficient": "insufficient data",
}


def throughput_text(t: Ratio, c: Comparison) -> str:
    if t.baseline:
        base, spec = (c.a, c.b) if t.baseline == "a" else (c.b, c.a)
        what = f"generation throughput {spec.label} / {base.label} (baseline)"
    else:
        what = "generation throughput B / A"
    ci = t.ci95
    if not ci:
        return f"{what}: {number(t.ratio)}×, {THROUGHPUT_WORDS[t.verdict]} ({t.reason})"
    return f"{what}: {number(t.ratio)}× (95% CI {number(ci[0])} … {number(ci[1])}): {THROUGHPUT_WORDS[t.verdict]}"
