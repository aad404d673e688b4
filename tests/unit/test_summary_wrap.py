"""``summary``'s text wrapped to the terminal never splits a value from its interval, count or
key (``0.156 ± 0.033``, ``(n=765, ~13 independent)``, ``weighted 1.89``)."""

from __future__ import annotations

import pytest

from tui.cli.summary_fit import fit


@pytest.mark.parametrize("width", range(40, 90, 3))  # a glued piece wider than a line is broken
def test_summary_wrapping_keeps_a_value_with_its_interval(width):
    line = (
        "    seg 0 opened by server_args; start 2026-11-20 09:00:01; accept rate (printed) "
        "0.156 ± 0.034 (n=765, ~13 independent); rate (drafts) 0.156 ± 0.033 (n=765, ~13 independent); "
        "min 1.00  max 3.00  last 2.27  weighted 1.89 [8 batch-size bins in common]"
    )
    out = fit([line], width)
    joined = "\n".join(out)
    for whole in (
        "0.156 ± 0.034",
        "0.156 ± 0.033",
        "(n=765, ~13 independent)",
        "weighted 1.89",
        "[8 batch-size",
    ):
        assert whole in joined, joined
    assert all(len(x) <= width for x in out) and not any(x.rstrip().endswith("±") for x in out)
    assert " ".join(" ".join(out).split()) == " ".join(line.split())  # nothing lost or added
