"""One refusal rule for every consumer (issue 23): :func:`record_refusals` on one record says
exactly what :func:`clean` refuses of the same record in the statistics, and a pane's points (what
scales, sparklines, charts and the app's alerts read) carry no refused value, whether the lines came
one by one or as a scanned buffer."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from _pane_util import batches, fed
from _refused_util import generated_log

from tui.core.formats import LineParser
from tui.core.model.columns import RecordColumns
from tui.core.model.records import Record
from tui.core.stats.checks import admissible, clean, record_refusals, refusal

ROOT = Path(__file__).resolve().parents[2]
VLLM = (
    "INFO 11-20 10:00:{s:02d} [metrics.py:100] SpecDecoding metrics: Mean acceptance length: {al}, "
    "Accepted throughput: 10.00 tokens/s, Drafted throughput: 30.00 tokens/s, Accepted: {acc} tokens, "
    "Drafted: {dr} tokens, Per-position acceptance rate: 0.800, 0.500, 0.300, Avg Draft acceptance rate: 53.3%\n"
)


def records(lines: list[str]) -> list[Record]:
    parser = LineParser("a", year=2026, ref_time=None)
    return [r for n, x in enumerate(lines, 1) if isinstance(r := parser.feed(x, n, 0), Record)]


def refused_by_clean(rec: Record, depth: int | None) -> dict[str, str]:
    """field -> bucket of what :func:`clean` refuses in a one-record run."""
    _, refused, _ = clean(RecordColumns.from_records([rec]), depth)
    out = {k: "nonfinite" for k in refused.nonfinite}
    out.update({k: "out_of_range" for k in refused.out_of_range})
    return out


def bucket(why: str) -> str:
    return "nonfinite" if why == "not finite" else "out_of_range"


def mixed_records() -> list[Record]:
    mixed, _ = generated_log(3, bad_every=5)
    vllm = [
        VLLM.format(s=i, al=al, acc=acc, dr=dr)
        for i, (al, acc, dr) in enumerate(
            [("2.60", 48, 90), ("4.10", 48, 90), ("3.99", 48, 90), ("2.60", 95, 90), ("inf", 10, 90)]
        )
    ]
    return records(mixed[:200] + vllm)


@pytest.mark.parametrize("depth", [None, 2, 3, 64])
def test_one_record_is_refused_as_the_statistics_refuse_it(depth):
    recs = mixed_records()
    assert len(recs) > 200
    seen = set()
    for rec in recs:
        got = {k: bucket(v) for k, v in record_refusals(rec, depth).items()}
        assert got == refused_by_clean(rec, depth), rec.raw
        seen |= set(got)
    assert {"accept_len", "accept_rate", "accepted"} <= seen  # every kind of refusal was exercised


def test_the_record_s_own_list_bounds_before_the_segment_depth():
    rec = records([VLLM.format(s=1, al="4.10", acc=48, dr=90)])[0]
    assert rec.per_position is not None and len(rec.per_position) == 3
    assert record_refusals(rec, None) == {"accept_len": "out of range"}  # k = 3 from the list: at most 4
    assert record_refusals(rec, 8) == {"accept_len": "out of range"}
    assert refusal("accept_len", 4.1, depth=8) is None  # without the list, the segment's k = 8 allows it
    assert refusal("accept_len", 4.1, depth=2) == "out of range"
    assert refusal("accept_rate", math.nan) == "not finite"
    assert admissible("throughput", 1e6) and not admissible("throughput", -1.0)


@pytest.mark.parametrize("bulk", [False, True])
def test_a_pane_s_points_carry_no_refused_value(tmp_path, bulk):
    mixed, clean_lines = generated_log(5)
    path = tmp_path / "mixed.log"
    path.write_text("".join(mixed))
    st, _ = fed(batches(path), bulk)
    pts = list(st.history)
    assert len(pts) == len(mixed)  # every record is a point (a refused value is a gap in it)
    values = [p.accept_len for p in pts]
    assert all(v is None or admissible("accept_len", v) for v in values)
    assert all(p.accept_rate is None or admissible("accept_rate", p.accept_rate) for p in pts)
    want = [r.accept_len for r in records(clean_lines)]
    assert [v for v in values if v is not None] == want  # the same values as the log without them
    assert values.count(None) == len(mixed) - len(clean_lines)


@pytest.mark.parametrize("bulk", [False, True])
def test_points_use_the_segment_s_draft_depth(tmp_path, bulk):
    """ab_a.log's config says k = 3 (accept len at most 4): 4.50 is refused by the statistics, so it
    is no point on a chart either."""
    lines = (ROOT / "sample_logs" / "ab_a.log").read_text().splitlines(True)[:300]
    out = []
    for i, x in enumerate(lines):
        out.append(x)
        if "accept len" in x and i % 10 == 0:
            out.append(re.sub(r"accept len: [0-9.]+", "accept len: 4.50", x))
    path = tmp_path / "k3.log"
    path.write_text("".join(out))
    st, _ = fed(batches(path), bulk)
    assert st.depth(st.stats.segment_index) == 3
    pts = list(st.history)
    assert len(pts) == st.stats.records
    assert max(p.accept_len for p in pts if p.accept_len is not None) <= 4.0
    assert sum(p.accept_len is None for p in pts) == st.stats.refused.out_of_range["accept_len"] > 5
