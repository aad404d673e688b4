"""The brief numbers of a compact pane (pane_numbers(..., brief=True)) are the full numbers with
only what the compact form does not show left out: every value it shows is the same."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tui.core.formats import LineParser
from tui.core.sources.base import LineBatch
from tui.core.stats import SourceStats
from tui.panes.pane_numbers import pane_numbers

SAMPLES = Path(__file__).parent.resolve().parents[1] / "sample_logs"
LEFT_OUT = {  # (the pooled value is shown in compact panes too: kept)
    ("accept_rate", "definition"),
    ("accept_rate", "definition_words"),
    ("accept_rate", "normalised_mean"),
    ("accept_rate", "normalised_hw"),
    ("accept_rate", "drafts_per_step"),
    ("accept_rate", "how"),
    ("brief",),
}


def flat(d: object, at: tuple = ()) -> dict:
    out = {}
    for f in dataclasses.fields(d):  # type: ignore[arg-type]
        k, v = f.name, getattr(d, f.name)
        if dataclasses.is_dataclass(v) and (*at, k) not in LEFT_OUT:
            out.update(flat(v, (*at, k)))
        else:
            out[(*at, k)] = v
    return out


@pytest.mark.parametrize("name", ["sglang_eagle3_restart.log", "vllm_v1_eagle3.log", "ab_a.log"])
def test_brief_numbers_are_the_full_ones_less_what_is_not_shown(name):
    lines = (SAMPLES / name).read_text().splitlines()
    st = SourceStats("x")
    st.feed(LineParser("x").feed_batch(LineBatch("x", lines, list(range(len(lines))), 1)))
    for index in [s.index for s in st.segments]:
        full, brief = flat(pane_numbers(st, index)), flat(pane_numbers(st, index, brief=True))
        assert full.keys() == brief.keys()
        differ = {
            k for k in full if full[k] != brief[k] and not (full[k] != full[k] and brief[k] != brief[k])
        }
        assert differ <= LEFT_OUT
        assert all(brief[k] is None for k in LEFT_OUT - {("brief",)})
        assert brief[("brief",)] is True and full[("brief",)] is False
    assert full[("accept_len", "n")] > 0 and full[("accept_rate", "definition")] is not None
