"""The label policy of the pane headers (tui.panes.labels): labels never dropped for a status,
shortened to the part that tells them apart, statuses in a short form when space is short."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from tui.panes.labels import fit_header, fit_label, label_core, shared_ends, short_status, status_forms

NODES = [f"eagle3-llama3.1-8b-node{i:02d}-tp8.log" for i in range(1, 17)]
LONG = "sglang-eagle3-llama-3.1-8b-instruct-tp2-run-"
AB = [f"{LONG}broken.log", f"{LONG}fixed.log"]
OLD = "live (last line 11 d ago, by the log's clock)"


def test_shared_ends_stop_at_separators():
    start, end = shared_ends(NODES)
    assert NODES[4][:start] == "eagle3-llama3.1-8b-" and NODES[4][-end:] == "-tp8.log"
    assert shared_ends(["only.log"]) == (0, 0) and shared_ends([]) == (0, 0)
    assert shared_ends(["a.log", "a.log.1"]) == (2, 0)  # a label inside another keeps its end


def test_core_keeps_what_differs_never_a_shared_middle():
    assert [label_core(n, NODES) for n in NODES[:2]] == ["…node01…", "…node02…"]
    assert label_core(AB[0], AB) == "…broken…" and label_core(AB[1], AB) == "…fixed…"
    assert label_core("alone.log", ()) == "alone.log"


@pytest.mark.parametrize("width", range(8, 40))
def test_fit_label_tells_every_node_apart_at_every_width(width):
    shown = [fit_label(n, width, NODES) for n in NODES]
    assert len(set(shown)) == len(NODES), shown
    for name, s in zip(NODES, shown):
        assert cell_len(s) <= width
        assert name[19:25] in s, (width, s)  # "node05": the part that differs, whole
        assert s == name or "…" in s  # nothing cut without an ellipsis


def test_fit_label_gives_back_the_shared_start_when_there_is_room():
    assert fit_label(NODES[4], 40, NODES) == NODES[4]
    assert fit_label(NODES[4], 20, NODES) == "…1-8b-node05-tp8.log"
    assert fit_label(NODES[4], 8, NODES) == "…node05…"
    assert fit_label(AB[0], 20, AB).endswith("broken.log")


@pytest.mark.parametrize("width", range(12, 26))
def test_a_label_holding_its_own_ellipsis_never_shows_two_in_a_row(width):
    """An SSH label shortens its remote path (``logbox:…/blue/server.log``): cutting the shared
    start must not stop right before that ellipsis ("……/blue", "…:…/blue" at 80 columns)."""
    peers = ["logbox:…/blue/server.log", "logbox:…/green/server.log"]
    s = fit_label(peers[0], width, peers)
    assert cell_len(s) <= width and "……" not in s and "…:…" not in s, s
    assert "blue" in s


@pytest.mark.parametrize(
    ("status", "short"),
    [
        (OLD, "live · 11 d old"),
        ("idle for 3 min, by the log's clock", "idle 3 min"),
        ("idle for 42 s", "idle 42 s"),
        ("reconnecting (attempt 2)", "reconnecting 2"),
        ("error (no such file: /x)", "error"),
        ("waiting (no file matches yet)", "waiting"),
        ("replaying 20× 45%", "replay 45%"),
        ("ended", "ended"),
        ("live", "live"),
    ],
)
def test_each_status_has_a_short_form(status, short):
    assert short_status(status) == short
    assert status_forms(status)[:2] == tuple(dict.fromkeys((status, short)))[:2]


def test_frozen_forms_say_frozen():
    assert all("frozen" in f for f in status_forms(OLD, frozen=True))


@pytest.mark.parametrize("width", [20, 30, 36, 46, 60, 80, 120])
def test_header_keeps_the_label_and_a_whole_status(width):
    for tag, label in zip("AB", ("ab_a.log", "ab_b.log")):
        fit = fit_header(
            label, OLD, width, peers=("ab_a.log", "ab_b.log"), tag=tag, extra="4,001 lines · 1,524 records"
        )
        assert cell_len(fit.text) <= width, fit
        assert fit.tag == tag and fit.label == label  # never dropped for the status
        assert fit.status in status_forms(OLD) or fit.status.endswith("…")
        if width >= 30:
            assert fit.status in (OLD, "live · 11 d old"), fit
    wide = fit_header(
        "ab_a.log", OLD, 120, peers=("ab_a.log", "ab_b.log"), extra="4,001 lines · 1,524 records"
    )
    assert wide.status == OLD and wide.counts == "4,001 lines · 1,524 records"


@pytest.mark.parametrize("width", [24, 30, 40, 46, 52])
def test_header_of_a_node_grid_shows_the_node(width):
    shown = [fit_header(n, OLD, width, peers=NODES) for n in NODES]
    assert len({f.label for f in shown}) == len(NODES)
    for name, fit in zip(NODES, shown):
        assert name[19:25] in fit.label and cell_len(fit.text) <= width, fit
        assert fit.status in status_forms(OLD), fit
        if width >= 30:
            assert fit.status in ("live · 11 d old", OLD), fit


REASON = (
    "A: n=393 but consecutive values are strongly correlated: about 9 independent values; "
    "wait for ~69 more records"
)


def test_verdict_forms_keep_the_advice_and_whole_numbers():
    from tui.panes.pane_numbers import insufficient_short, raw_vs_adjusted, verdict_forms

    c = {"verdict": "insufficient", "reason": REASON, "diff": 0.8, "ci95": None}
    forms = verdict_forms(c)
    assert (
        forms[0].startswith("insufficient data (A: n=393") and forms[-1] == "insufficient: A ~69 more records"
    )
    assert insufficient_short("need at least 30 records on each side (have 3 and 40)").startswith("need at")
    higher = {"verdict": "higher", "diff": 0.23, "ci95": [0.15, 0.31]}
    assert verdict_forms(higher) == ("+0.23 (95% CI +0.15 … +0.31): B higher", "+0.23: B higher")
    why = raw_vs_adjusted(c, {"verdict": "higher"}, "fixed")
    assert why.startswith("raw: insufficient (A strongly correlated") and why.endswith(
        "equal batch size: fixed higher"
    )
    assert raw_vs_adjusted(higher, higher) == ""


def test_title_names_look_alike_sources_by_what_differs():
    from tui.panes.labels import title_of

    assert title_of(["ab_a.log", "ab_b.log"]) == "ab_a.log · ab_b.log"
    assert title_of(NODES[:3]) == "eagle3-llama3.1-8b-{node01,node02,node03}-tp8.log"
    assert title_of(["x.log", "y.txt", "z"]) == "x.log · y.txt · z"
