"""The fleet's answer as JSON (``fleet --json``) and as a plain text table (``fleet``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TextIO

from tui.core.fleet.fetch import Fleet
from tui.core.fleet.rows import Instance, log_view
from tui.core.model.sanitize import json_text, number, visible


def instance_dict(inst: Instance) -> dict:
    e = inst.estimate
    ci = e.ci95() if e is not None else None
    return {
        "family": inst.family,
        "kind": inst.kind,
        "name": inst.name,
        "labels": inst.labels,
        "accept_len": inst.accept_len,
        "ci95": list(ci) if ci else None,
        "method": e.method if e is not None else None,
        "steps": e.n if e is not None else 0,
        "accepted": inst.accepted if inst.kind == "counters" else None,
        "drafts": inst.drafts if inst.kind == "counters" else None,
        "accept_rate": inst.accept_rate,
        "throughput": inst.throughput,
        "running": inst.running,
        "resets": inst.resets,
        "last_seen": _iso(inst.last_seen),
        "flags": inst.flags,
        "samples": inst.samples,
        "nonfinite_refused": inst.nonfinite,
        "draft_tokens_per_draft": inst.k,
        "shift": None
        if inst.shift is None
        else {
            "at": _iso(inst.shift.t),
            "before": inst.shift.before,
            "after": inst.shift.after,
            "z": inst.shift.z,
            "window_accept_len": inst.window_estimate.value if inst.window_estimate else None,
        },
        "down_for_s": inst.down_for,
        # through a log's statistics (tui.core.fleet.rows.shared_statistics): what the checks
        # refused, a segment per restart, the current segment's rate definition and diagnostics
        "refused": None if inst.refused is None else {"steps": inst.refused_steps, **inst.refused.to_dict()},
        **log_view(inst),
        "vs_group": inst.vs_group,
        "trend": [list(x) for x in inst.steps],  # [unix seconds, accept len or null (idle)] per step
    }


def fleet_dict(f: Fleet, with_instances: bool = True) -> dict:
    return {
        "prometheus": f.url,
        "end": _iso(f.end),
        "window_s": f.window,
        "span_s": f.span,  # the part of the window with history (the range queried)
        "scrape_interval_s": f.interval,
        "step_s": f.step,
        "queries": f.queries,
        "instances": [instance_dict(i) for i in f.instances] if with_instances else [],
        "groups": [g.to_dict() for g in f.groups],
        "comparison": f.comparison,
        "warnings": f.warnings,
    }


def write_json(f: Fleet, out: TextIO) -> None:
    """``fleet --json``: the text of ``json_text(fleet_dict(f), indent=2)``, written one instance
    at a time (10,000 instances' dicts and their text held at once cost ~150 MB)."""
    kw: dict = {"allow_nan": False, "default": str}
    doc = fleet_dict(f, with_instances=False)
    mark = "\x00instances\x00"
    doc["instances"] = mark
    head, tail = json_text(doc, indent=2, **kw).split(json_text(mark), 1)
    out.write(head)
    if not f.instances:
        out.write("[]")
    for n, inst in enumerate(f.instances):
        text = json_text(instance_dict(inst), indent=2, **kw).replace("\n", "\n    ")
        out.write(("[\n    " if n == 0 else ",\n    ") + text)
    if f.instances:
        out.write("\n  ]")
    out.write(tail + "\n")


def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def text_table(f: Fleet, width: int = 120) -> str:
    """One line per instance (worst first), the groups, and the comparison."""
    lines = [
        f"{visible(f.url)} · window {f.window:g} s ending {_iso(f.end)}"
        + (f" (history {f.span:g} s)" if f.span and f.span < f.window else "")
        + f" · step {f.step:g} s · {len(f.instances)} instances"
    ]
    for w in f.warnings:
        lines.append(f"prometheus warning: {w}")
    rows = sorted(f.instances, key=lambda i: (i.kind != "down", i.accept_len is None, i.accept_len or 0.0))
    name_w = max((len(visible(i.name)) for i in rows), default=8)  # whole names: rows never read alike
    for inst in rows:
        e = inst.estimate
        ci = e.ci95() if e is not None else None
        al = number(inst.accept_len, 2)
        hw = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else ""
        kind = "" if inst.kind == "counters" else " (gauge mean)"
        tp = f" · {number(inst.throughput, 0)} tok/s" if inst.throughput is not None else ""
        flags = f" · {', '.join(inst.flags)}" if inst.flags else ""
        line = f"{inst.family:8} {visible(inst.name):{name_w}} accept len {al}{hw}{kind}{tp}{flags}"
        lines.append(visible(line))
    for g in f.groups:
        ci = g.ci95()
        lines.append(
            visible(
                f"group {g.name}: accept len {number(g.value, 2)}"
                + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
                + f" over {g.units} of {g.instances} instances"
            )
        )
    c = f.comparison
    if c is not None:
        lines += [visible(x) for x in comparison_text(c).split("\n")]
        la = c.get("load_adjusted")
        if la is not None:
            if la["ci95"]:
                lo, hi = la["ci95"]
                lines.append(
                    f"  at equal batch size: {la['diff']:+.3f} (95% CI {lo:+.3f} … {hi:+.3f}): {la['verdict']}"
                )
            else:
                lines.append(f"  at equal batch size: {la['verdict']}: {la['reason']}")
    return "\n".join(lines) + "\n"


def comparison_text(c: dict) -> str:
    """The canary verdict in words: B − A, the question it answers, n, the interval, the window;
    ``insufficient`` with the reason."""
    a, b = c["a"], c["b"]
    head = f"B − A ({b['selector']} − {a['selector']}), {c.get('question', '')}: "
    if c["ci95"]:
        lo, hi = c["ci95"]
        head += f"{c['diff']:+.3f} (95% CI {lo:+.3f} … {hi:+.3f}): {c['verdict']}"
    else:
        head += f"{c['verdict']}: {c['reason']}"
    n = f"A: {a.get('units', 0)} servers, {a.get('steps', 0)} steps; B: {b.get('units', 0)} servers, {b.get('steps', 0)} steps"
    w = c.get("window") or {}
    if w:
        n += f"; window {w.get('span_s', 0):g} s ending {_iso(w.get('end'))}, step {w.get('step_s', 0):g} s"
    out = [head, "  " + n]
    pop = c.get("population")
    if pop is not None:
        if pop.get("ci95"):
            lo, hi = pop["ci95"]
            out.append(
                f"  {pop['question']}: {pop['diff']:+.3f} (95% CI {lo:+.3f} … {hi:+.3f}): {pop['verdict']}"
            )
        else:
            out.append(f"  {pop['question']}: {pop['verdict']}: {pop['reason']}")
    return "\n".join(out)
