"""``specwatch summary --format markdown``: the summary as GitHub Markdown, for a pull-request
comment. Per source a table of its figures, its segment table and the last two segments'
verdict; with two sources the B − A verdicts. Every text from outside (labels, paths, config
values, messages) goes through :func:`md`: controls made visible, Markdown's active characters
escaped, so a file name cannot open a link, a table cell or a code span."""

from __future__ import annotations

from collections.abc import Sequence

from tui.cli.summary_text import (
    SEG_HEADER,
    added_figures,
    adjusted_text,
    mean_ci,
    no_acceptance_warning,
    pooled_text,
    segment_row,
    throughput_text,
    verdict_text,
)
from tui.core.model.quantities import Output
from tui.core.model.sanitize import visible
from tui.core.model.summary import Comparison, Source, Summary

# Characters with a meaning in GitHub Markdown (inline or in a table), each escaped with "\".
_ACTIVE = "\\`*_[]<>|#&~!"
_ESCAPE = {ord(c): "\\" + c for c in _ACTIVE}


def md(text: object) -> str:
    """``text`` as inert Markdown on one line: controls (and line breaks) shown as symbols,
    Markdown's active characters (``\\ ` * _ [ ] < > | # & ~ !``) escaped."""
    return visible(str(text)).translate(_ESCAPE)


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub table; every cell (header too) escaped with :func:`md`."""
    out = ["| " + " | ".join(md(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    return out


def _figures(src: Source) -> list[list[str]]:
    al, ar = src.accept_len, src.accept_rate
    rows = [
        ["lines", str(src.lines)],
        ["records", str(src.records)],
        ["malformed", str(src.malformed)],
    ]
    if src.family:
        rows.append(["family", src.family])
    rows.append(["accept len", mean_ci(al)])
    if al.pooled is not None:
        rows.append(["accept len, pooled", pooled_text(al.pooled)])
        if al.pooled.method:  # the drafts were not printed as such
            rows.append(["drafts of the pooled accept len", al.pooled.method])
    if ar.n:
        rows.append(["accept rate (mean of printed values)", mean_ci(ar, 3)])
    if ar.pooled is not None:
        rows.append(["accept rate, pooled", pooled_text(ar.pooled, 3)])
    if src.accept_len_derived is not None:
        rows.append(["accept len (derived from counters)", mean_ci(src.accept_len_derived)])
    rows += [[words, value] for words, value in added_figures(src.more, Output.MARKDOWN)]
    for seg in src.segments if len(src.segments) > 1 else ():
        rows += [[f"seg {seg.index} {w}", v] for w, v in added_figures(seg.more, Output.MARKDOWN)]
    return rows


def render_source(src: Source) -> list[str]:
    """One source: its heading, warnings, figures, segment table and segment verdict."""
    out = [f"### {md(src.label)} ({md(src.source)})", ""]
    warnings = list(src.warnings)
    if not warnings:
        plain = no_acceptance_warning(src)
        warnings = [plain.strip().removeprefix("warning: ")] if plain else []
    out += [f"> **warning:** {md(w)}" for w in warnings]
    if warnings:
        out.append("")
    if len(src.segments) > 1:  # the text output's caveat: a mean over several runs
        out += [
            f"All {len(src.segments)} segments together (different runs mixed: compare the segments):",
            "",
        ]
    out += md_table(["", "value"], _figures(src))
    out.append("")
    out += md_table(SEG_HEADER, [segment_row(seg) for seg in src.segments])
    out.append("")
    sc = src.segment_comparison
    if sc is not None:
        first, last = sc.segments
        out.append(f"**Last two segments ({md(first)} → {md(last)}):** {md(verdict_text(sc))}")
        out.append(f"at equal batch size: {md(adjusted_text(sc.accept_len_load_adjusted))}")
        out.append("")
    return out


def render_comparison(c: Comparison) -> list[str]:
    """The B − A verdicts as a table."""
    a, b = c.a, c.b
    out = [
        "### B − A",
        "",
        f"A = {md(a.label)} (segment {md(a.segment)}), B = {md(b.label)} (segment {md(b.segment)})",
        "",
    ]
    rows = [["accept len", verdict_text(c.accept_len)]]
    rows.append(["accept len at equal batch size", adjusted_text(c.accept_len_load_adjusted)])
    if c.accept_rate is not None:
        note = c.accept_rate.note
        rows.append(["accept rate", verdict_text(c.accept_rate) + (f" [{note}]" if note else "")])
    if c.throughput.ratio is not None:
        rows.append(["generation throughput", throughput_text(c.throughput, c)])
    return out + md_table(["", "verdict"], rows) + [""]


def render(out: Summary) -> str:
    """The whole typed ``summary`` result (what ``--json`` prints) as Markdown."""
    lines = ["## specwatch summary", ""]
    for src in out.sources:
        lines += render_source(src)
    if out.comparison is not None:
        lines += render_comparison(out.comparison)
    return "\n".join(lines).rstrip("\n") + "\n"
