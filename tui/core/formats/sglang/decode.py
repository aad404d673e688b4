"""SGLang: ``Decode batch`` metric lines (docs/formats.md, "SGLang").

Every form since 2024 is read: ``Decode batch.`` and ``Decode batch,``, the optional `` [N]``
iteration tag and the ``iter: N,`` form, the trailing ``, ``, fields that come and go
(``accept rate``, ``cuda/npu/cpu graph``, PD ``pre-allocated usage``..., hybrid
``#full token``/``#swa token``/``mamba usage``) and unknown extras, which land in ``extra``.
Terminal-clipped keys (``token usaccept rate: 0.32``) are recovered by their known suffix.
"""

from __future__ import annotations

import re

from tui.core.formats.sglang.grammar import DECODE, DECODE_FIELDS, DECODE_SHAPE
from tui.core.formats.shapes import INT, text_regex
from tui.core.formats.text import rank_of, to_float, to_int
from tui.core.model.records import Malformed, Record

ANCHOR = DECODE

_HEAD = re.compile(r"Decode batch(?: \[(\d+)\])?(?:[.,]| iter: (\d+),)(?: iter: (\d+),)?")

# key -> (Record attribute, converter): the grammar's table
KNOWN = DECODE_FIELDS
# the fields that are quantities of their own (Record.more, tui.core.model.quantities), not attributes
_MORE = frozenset(attr for attr, _ in KNOWN.values()) - frozenset(Record.__slots__)
# Keys recoverable when a terminal clipped the line and glued a cut key to them
# ("token usaccept rate: 0.32"). Not "token usage": "swa token usage" is a real key.
# "block accept len" is a key of its own (0.5.23), read before this recovery is tried.
_SUFFIXES = ("gen throughput (token/s)", "accept rate", "accept len", "#running-req", "#queue-req")


def _graph(value: str) -> bool | None:
    v = value.strip()
    if v == "True":
        return True
    if v == "False":
        return False
    return None


# The common modern forms (2025-05 onwards, non-hybrid), read in one match; every other form
# goes through the general key-by-key reader below, which gives the same values for these.
# The pattern is the grammar's shape (the one the scanners read); a line without the graph field,
# or with an accept rate but no accept len, is read by the general reader too.
_CANON = text_regex(DECODE_SHAPE)


def parse_decode(source: str, line_no: int, offset: int, text: str, at: int, raw: str) -> Record | Malformed:
    """``text`` is the cleaned line and ``at`` the index of ``Decode batch`` in it."""
    c = _CANON.match(text, at)
    if c is not None and c.group(11) is not None and (c.group(6) is not None or c.group(7) is None):
        it, _, run, tok, usage, al, ar, cap, block, label, graph, tput, queue = c.groups()
        rec = Record(
            source,
            line_no,
            offset,
            "sglang",
            "decode",
            raw,
            None,
            rank_of(text[:at]),
            float(al) if al is not None else None,
            float(ar) if ar is not None else None,
            running_req=int(run),
            tokens=int(tok),
            token_usage=float(usage),
            throughput=float(tput),
            queue_req=int(queue),
            graph=graph == "True",
        )
        if it is not None:
            rec.extra["iter"] = it
        if cap is not None or block is not None:
            rec.more = {
                n: float(v) for n, v in (("cap_len", cap), ("block_accept_len", block)) if v is not None
            }
        if label != "cuda":
            rec.extra["graph_label"] = f"{label} graph"
        return rec
    m = _HEAD.match(text, at)
    if m is None:
        return Malformed(source, line_no, offset, "Decode batch without its separator", raw)
    rec = Record(source=source, line_no=line_no, offset=offset, family="sglang", kind="decode", raw=raw)
    rec.rank = rank_of(text[:at])
    it = m.group(1) or m.group(2) or m.group(3)
    if it is not None:
        rec.extra["iter"] = it
    body = text[m.end() :].strip().rstrip(",").strip()
    known = 0
    for part in body.split(", "):
        key, sep, value = part.partition(": ")
        key = key.strip()
        if not sep:
            if part.strip():
                rec.extra.setdefault("unparsed", part.strip())
            continue
        spec = KNOWN.get(key)
        if spec is None and key.endswith(" graph"):
            g = _graph(value)
            if g is None:
                return Malformed(source, line_no, offset, f"bad value for {key!r}: {value.strip()!r}", raw)
            rec.graph = g
            if key != "cuda graph":
                rec.extra["graph_label"] = key
            known += 1
            continue
        if spec is None:
            for suffix in _SUFFIXES:
                if key.endswith(suffix) and key != suffix:
                    rec.extra["clipped_key"] = key
                    key, spec = suffix, KNOWN[suffix]
                    break
        if spec is None:
            rec.extra[key] = value.strip()
            continue
        attr, kind = spec
        num = to_int(value) if kind == INT else to_float(value)
        if num is None:
            return Malformed(source, line_no, offset, f"bad value for {key!r}: {value.strip()!r}", raw)
        if key.startswith("#full") or key.startswith("full"):
            rec.extra[key] = value.strip()
        if attr in _MORE:
            rec.more = {**(rec.more or {}), attr: num}
        else:
            setattr(rec, attr, num)
        known += 1
    if known == 0:
        return Malformed(source, line_no, offset, "Decode batch line with no readable field", raw)
    if rec.accept_len is not None and not (rec.accept_len >= 1.0 or rec.accept_len != rec.accept_len):
        rec.extra["note"] = "accept len below 1 (impossible for SGLang): kept as printed"
    return rec
