"""The readable form of ``specwatch summary`` (plain text tables, no colours)."""

from __future__ import annotations

DEFINITION_WORDS = {
    "accepted_drafts_over_proposed_drafts": "accepted/proposed drafts",
    "sglang_al_over_num_draft_tokens": "AL/num_draft_tokens",
    "sglang_al_over_steps_plus_1": "AL/(num_steps+1)",
    "vllm_v0_cumulative_accepted_over_drafted": "V0 cumulative",
}
VERDICT_WORDS = {
    "higher": "B is higher",
    "lower": "B is lower",
    "no_difference": "no significant difference",
    "insufficient": "insufficient data",
}


def _f(v, digits: int = 2) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def mean_ci(st: dict | None, digits: int = 2) -> str:
    """``2.41 ± 0.05 (n=1500)``; the CI half-width is shown when there is one."""
    if not st or not st.get("n"):
        return "— (n=0)"
    ci = st.get("ci95")
    hw = f" ± {(ci[1] - ci[0]) / 2:.{digits}f}" if ci else ""
    return f"{st['mean']:.{digits}f}{hw} (n={st['n']})"


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return ["  " + fmt.format(*header), "  " + fmt.format(*("-" * w for w in widths))] + [
        "  " + fmt.format(*r) for r in rows
    ]


def render_source(src: dict) -> list[str]:
    out = [
        f"{src['label']}  ({src['source']})",
        f"  lines {src['lines']}, records {src['records']}, malformed {src['malformed']}"
        + (f", family {src['family']}" if src.get("family") else ""),
    ]
    al, ar = src.get("accept_len") or {}, src.get("accept_rate") or {}
    out.append(
        f"  accept len   {mean_ci(al)}  min {_f(al.get('min'))}  max {_f(al.get('max'))}"
        f"  last {_f(al.get('last'))}  weighted {_f(al.get('weighted_mean'))}"
    )
    if ar.get("n"):
        out.append(f"  accept rate  {mean_ci(ar, 3)}  (as printed)")
    if src.get("elapsed"):  # llama.cpp prints time since the server started, not a date
        out.append(
            f"  elapsed      {src['elapsed']['first']} to {src['elapsed']['last']} (since the server started)"
        )
    if src.get("accept_len_derived"):
        out.append(f"  accept len (derived from V0 counters)  {mean_ci(src['accept_len_derived'])}")
    rows = []
    for seg in src["segments"]:
        norm = seg.get("accept_rate_normalized")
        rd = seg.get("rate_definition") or {}
        rows.append(
            [
                str(seg["index"]),
                seg["reason"],
                seg.get("start_time") or seg.get("first_record_time") or "—",
                seg["label"],
                str(seg["records"]),
                mean_ci(seg["accept_len"]),
                mean_ci(seg["accept_rate"], 3) if seg["accept_rate"]["n"] else "—",
                mean_ci(norm, 3) if norm and norm.get("n") else "—",
                DEFINITION_WORDS.get(rd.get("printed_definition") or "", "unknown")
                if seg["accept_rate"]["n"]
                else "—",
            ]
        )
    out += _table(
        rows,
        [
            "seg",
            "opened by",
            "start",
            "config",
            "records",
            "accept len",
            "accept rate (printed)",
            "rate (drafts)",
            "printed definition",
        ],
    )
    for seg in src["segments"]:
        for rank, r in (seg.get("ranks") or {}).items():
            out.append(
                f"    seg {seg['index']} rank {rank or '(untagged)'}: accept len {mean_ci(r['accept_len'])}"
            )
        if seg.get("per_position"):
            pp = ", ".join(f"{v:.3f}" for v in seg["per_position"])
            out.append(f"    seg {seg['index']} per-position acceptance: {pp}")
        draft = (seg.get("config") or {}).get("draft") or {}
        if draft:
            ids = draft.get("aux_layer_ids")
            bits = [
                draft.get("architecture") or "",
                f"aux layers {ids}" if ids is not None else "",
                draft.get("note") or "",
            ]
            out.append(f"    seg {seg['index']} draft config: " + "; ".join(b for b in bits if b))
        for d in seg.get("diagnostics") or []:
            out.append(f"    seg {seg['index']} {d['level']}: {d['message']}")
    out += render_metrics(src.get("metrics"))
    sc = src.get("segment_comparison")
    if sc:
        out.append(f"  last two segments ({sc['segments'][0]} → {sc['segments'][1]}): {_cmp(sc)}")
    return out


def render_metrics(m: dict | None) -> list[str]:
    """What a metrics source adds: scrapes, and vLLM's lifetime totals since the server started."""
    if not m:
        return []
    out = [
        f"  scraped {m['where']} {m['scrapes']} times"
        + (f", every {m['interval']:g} s" if m.get("interval") else "")
        + (f"; error: {m['error']}" if m.get("error") else "")
    ]
    for rank, t in (m.get("lifetime") or {}).items():
        if not t.get("drafts"):
            out.append(f"    {rank} since start: no draft yet")
            continue
        pp = t.get("per_position")
        out.append(
            f"    {rank} since start: accept len {_f(t.get('accept_len'))}, accept rate "
            f"{_f(t.get('accept_rate'), 3)} ({t['accepted']} accepted / {t.get('draft_tokens')} drafted tokens, "
            f"{t['drafts']} drafts)" + (f", per position {', '.join(f'{v:.3f}' for v in pp)}" if pp else "")
        )
    return out


def _cmp(c: dict) -> str:
    if c.get("diff") is None or not c.get("ci95"):
        return f"{VERDICT_WORDS[c['verdict']]} ({c.get('reason', '')})"
    lo, hi = c["ci95"]
    return f"{c['diff']:+.2f} (95% CI {lo:+.2f} … {hi:+.2f}): {VERDICT_WORDS[c['verdict']]}"


def render(out: dict) -> str:
    lines: list[str] = []
    for src in out["sources"]:
        lines += render_source(src)
        lines.append("")
    c = out.get("comparison")
    if c:
        lines.append(
            f"A = {c['a']['label']} (segment {c['a']['segment']}), "
            f"B = {c['b']['label']} (segment {c['b']['segment']})"
        )
        lines.append(f"  accept len B − A: {_cmp(c['accept_len'])}")
        if c.get("accept_rate"):
            lines.append(
                f"  accept rate B − A: {_cmp(c['accept_rate'])}"
                + (f"  [{c['accept_rate']['note']}]" if c["accept_rate"].get("note") else "")
            )
        lines.append("")
    return "\n".join(lines)
