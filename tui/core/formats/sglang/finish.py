"""SGLang: the per-request ``Finish:`` line (``--log-requests``; docs/formats.md, "SGLang Finish").

``[2026-03-02 14:05:11] Finish: obj=GenerateReqInput(...), out={'meta_info': {...}}`` (2026: an
optional ``, headers={...}`` between ``obj=`` and ``out=``). The ``meta_info`` dict is a Python
literal (single quotes, ``True``/``None``), read with :func:`ast.literal_eval` from the *last*
``'meta_info': {`` after ``out=`` (earlier ones may sit in the request or the generated text).
Each key era is read (0.5.23's cap fields too: :func:`_cap_fields`); the newest canonical key wins over its backward-compatible alias so that
nothing is counted twice. A request without spec keys (``spec_verify_ct == 0``: a one-token
completion, an abort before decode) has no acceptance: it yields nothing.
"""

from __future__ import annotations

import ast

from tui.core.formats.sglang.grammar import FINISH
from tui.core.model.records import RATE_DRAFTS, Malformed, Record

ANCHOR = FINISH

_HIST_KEYS = ("spec_correct_drafts_histogram", "spec_accept_histogram")
_ACCEPTED_KEYS = ("spec_num_correct_drafts", "spec_accepted_drafts", "spec_accept_token_num")
_PROPOSED_KEYS = ("spec_num_proposed_drafts", "spec_proposed_drafts", "spec_draft_token_num")
_META = "'meta_info': {"


def _balanced(text: str, start: int) -> str | None:
    """The ``{...}`` opening at ``start``, quotes respected; None when the line ends first."""
    depth, quote, i, n = 0, "", start, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        i += 1
    return None


def _first(meta: dict, keys: tuple[str, ...]) -> object:
    for k in keys:
        if meta.get(k) is not None:
            return meta[k]
    return None


def _num(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def _cap_fields(meta: dict, rec: Record) -> None:
    """0.5.23 (DSpark): ``spec_cap_length`` (cap tokens / verify steps, the bonus slot included)
    and ``spec_block_accept_length`` (uncapped block accept tokens / verify steps), each present
    only when the server scheduled caps / ran its cap-accept mode, and
    ``spec_cap_lens_histogram`` (verify steps whose window was 0, 1, 2, ... tokens). Kept as
    printed (``Record.more``, the histogram in ``extra``); with no printed cap length the
    histogram's mean, Σ i·h_i / Σ h_i, is the same figure (``extra["cap_len_from"]``)."""
    more = {}
    for key, name in (("spec_cap_length", "cap_len"), ("spec_block_accept_length", "block_accept_len")):
        v = _num(meta.get(key))
        if v is not None:
            more[name] = v
    hist = meta.get("spec_cap_lens_histogram")
    if isinstance(hist, list) and hist and all(type(x) is int and x >= 0 for x in hist):
        rec.extra["cap_lens_histogram"] = ",".join(map(str, hist))
        if "cap_len" not in more and sum(hist):
            more["cap_len"] = sum(i * h for i, h in enumerate(hist)) / sum(hist)
            rec.extra["cap_len_from"] = "spec_cap_lens_histogram"
    if more:
        rec.more = more


def parse_finish(
    source: str, line_no: int, offset: int, text: str, at: int, raw: str
) -> Record | Malformed | None:
    """``text`` is the cleaned line and ``at`` the index of ``Finish: obj=`` in it."""
    out = text.find(", out=", at)
    if out < 0:
        return None  # cut before the output (a request still running never prints Finish)
    m = text.rfind(_META, out)
    if m < 0:
        return None
    body = _balanced(text, m + len(_META) - 1)
    if body is None:  # cut (a terminal, a paste): whether it held spec keys is unknown
        return None
    try:
        meta = ast.literal_eval(body)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return Malformed(source, line_no, offset, "Finish: meta_info is not a Python literal", raw[:4096])
    if not isinstance(meta, dict):
        return None
    verify = _num(meta.get("spec_verify_ct"))
    al = _num(meta.get("spec_accept_length"))
    hist_v = _first(meta, _HIST_KEYS)
    hist: tuple[int, ...] | None = None
    if isinstance(hist_v, list) and hist_v and all(type(x) is int and x >= 0 for x in hist_v):
        hist = tuple(hist_v)
    if not verify and al is None and hist is None:
        return None  # no speculative decoding in this request
    rec = Record(source, line_no, offset, "sglang", "request", raw)
    rec.rank = ""
    rec.accept_len = al
    rec.accept_rate = _num(meta.get("spec_accept_rate"))
    if rec.accept_rate is not None:
        rec.rate_definition = RATE_DRAFTS  # accepted / (verify steps x drafts per step)
    acc, prop = _num(_first(meta, _ACCEPTED_KEYS)), _num(_first(meta, _PROPOSED_KEYS))
    rec.accepted = int(acc) if acc is not None else None
    rec.drafted = int(prop) if prop is not None else None
    rec.num_drafts = verify or None
    rec.step_histogram = hist
    _cap_fields(meta, rec)
    completion = _num(meta.get("completion_tokens"))
    if completion is not None:
        rec.extra["completion_tokens"] = str(int(completion))
    # Derived, by the documented formulas, in order of preference: histogram, counts, tokens.
    steps: int = 0 if hist is None else sum(hist)
    if hist is not None and steps:
        rec.accept_len_derived = 1.0 + sum(i * h for i, h in enumerate(hist)) / steps
    elif verify and acc is not None:
        rec.accept_len_derived = 1.0 + acc / verify
    elif verify and completion is not None:
        rec.accept_len_derived = completion / verify
    if rec.accept_len is None and rec.accept_len_derived is None:
        return None
    return rec
