"""The readable form of ``specwatch summary`` (plain text tables, no colours)."""

from __future__ import annotations

from tui.core.sanitize import number

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
    return number(v, digits)


def mean_ci(st: dict | None, digits: int = 2) -> str:
    """``2.41 ± 0.05 (n=1500)``; the CI half-width is shown when there is one."""
    if not st or not st.get("n"):
        return "— (n=0)"
    ci = st.get("ci95")
    mean = st["mean"]
    if not ci or ci[0] is None or ci[1] is None:  # a bound JSON could not hold (inf, nan) is null
        hw = ""
    elif abs((ci[0] + ci[1]) / 2 - mean) < 10 ** -(digits + 1):
        hw = f" ± {number((ci[1] - ci[0]) / 2, digits)}"
    else:  # clamped to the possible range: not symmetric
        hw = f" [{number(ci[0], digits)}, {number(ci[1], digits)}]"
    ess = st.get("effective_n")
    eff = ""
    if ess is not None and ess < 0.9 * st["n"]:
        eff = f", ~{ess:.0f} independent" if ess >= 1 else ", <1 independent"
    return f"{number(mean, digits)}{hw} (n={st['n']}{eff})"


def pooled_text(p: dict | None, num: str, den: str, digits: int = 2) -> str:
    """``2.61 [2.58, 2.64] (15300 accepted / 9000 drafts)``."""
    if not p or p.get("value") is None:
        return "—"
    ci = p.get("ci95")
    ends = f" [{number(ci[0], digits)}, {number(ci[1], digits)}]" if ci and None not in ci else ""
    return f"{number(p['value'], digits)}{ends} ({p[num]:.0f} accepted / {p[den]:.0f} {den})"


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
        + (f", family {src['family']}" if src.get("family") else "")
        + _oversized(src.get("oversized")),
    ]
    al, ar = src.get("accept_len") or {}, src.get("accept_rate") or {}
    out.append(
        f"  accept len   {mean_ci(al)}  min {_f(al.get('min'))}  max {_f(al.get('max'))}"
        f"  last {_f(al.get('last'))}  weighted {_f(al.get('weighted_mean'))}"
    )
    if al.get("pooled"):
        out.append(
            f"  accept len, pooled 1 + Σaccepted/Σdrafts   {pooled_text(al['pooled'], 'accepted', 'drafts')}"
        )
    if ar.get("n"):
        out.append(f"  accept rate  {mean_ci(ar, 3)}  (mean of printed values)")
    if ar.get("pooled"):
        out.append(
            f"  accept rate, pooled Σaccepted/Σdrafted     {pooled_text(ar['pooled'], 'accepted', 'drafted', 3)}"
        )
    if src.get("elapsed"):  # llama.cpp prints time since the server started, not a date
        out.append(
            f"  elapsed      {src['elapsed']['first']} to {src['elapsed']['last']} (since the server started)"
        )
    if src.get("accept_len_derived"):
        out.append(f"  accept len (derived from counters)  {mean_ci(src['accept_len_derived'])}")
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
        out += request_line(seg)
        if seg.get("per_position"):
            pp = ", ".join(number(v, 3) for v in seg["per_position"])
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


def request_line(seg: dict) -> list[str]:
    """The segment's per-request acceptance (issue 12), one line; nothing without requests."""
    r = seg.get("requests")
    if not r:
        return []
    al = r["accept_len"]
    text = f"    seg {seg['index']} requests: n {r['n']}"
    if r["n"]:
        text += f", accept len mean {_f(al['mean'])}  p10 {_f(al['p10'])}  p50 {_f(al['p50'])}  p90 {_f(al['p90'])}"
    if r.get("step_histogram"):
        text += f"; steps accepting 0..k drafts {r['step_histogram']}"
    return [text]


def _oversized(o: dict | None) -> str:
    if not o or not o.get("lines"):
        return ""
    return f", oversized {o['lines']} (not read; {o['bytes']:,} bytes, largest {o['largest']:,})"


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
            f"{t['drafts']} drafts)" + (f", per position {', '.join(number(v, 3) for v in pp)}" if pp else "")
        )
    return out


ESTIMATOR_WORDS = {"pooled": "pooled counts", "mean_of_lines": "mean of printed values"}


def _cmp(c: dict) -> str:
    how = f" [{ESTIMATOR_WORDS[c['estimator']]}]" if c.get("estimator") else ""
    if c.get("diff") is None or not c.get("ci95"):
        return f"{VERDICT_WORDS[c['verdict']]} ({c.get('reason', '')}){how}"
    lo, hi = c["ci95"]
    return (
        f"{number(c['diff'], signed=True)} (95% CI {number(lo, signed=True)} … {number(hi, signed=True)}): "
        f"{VERDICT_WORDS[c['verdict']]}{how}"
    )


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
