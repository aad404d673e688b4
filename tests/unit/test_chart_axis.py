"""The chart's axes and its plotext drawing, without an app: wall-clock ticks by the log's clock,
points thinned to the plot's dots, strips of the exact size, outside text inert, a hint when the
size cannot hold the axes."""

from __future__ import annotations

import calendar

from tui.widgets.chart_axis import cut, elapsed_ticks, runs, thin, tick_count, time_ticks
from tui.widgets.history_chart import ChartData, ChartSeries, build_strips

COLOURS = {"primary": (80, 160, 255), "accent": (255, 160, 0), "foreground-muted": (128, 128, 128)}


def naive(text: str) -> float:
    """A log's printed time as naive seconds (its fields, timegm'd, as the app keeps them)."""
    return float(
        calendar.timegm(tuple(map(int, text.replace("-", " ").replace(":", " ").split())) + (0, 0, 0))
    )


def test_time_ticks_are_round_wall_clock_times_of_the_log():
    ticks, labels = time_ticks(naive("2026-11-20 09:00:01"), naive("2026-11-20 09:21:44"), 5)
    assert labels == ["09:05", "09:10", "09:15", "09:20"]
    assert ticks[0] == naive("2026-11-20 09:05:00")


def test_time_ticks_show_seconds_for_short_spans_and_the_date_across_midnight():
    _, labels = time_ticks(naive("2026-11-20 09:00:01"), naive("2026-11-20 09:00:50"), 4)
    assert labels[0] == "09:00:15" and all(len(t) == 8 for t in labels)
    _, labels = time_ticks(naive("2026-11-20 23:40:00"), naive("2026-11-21 00:20:00"), 4)
    assert labels == ["11-20 23:40", "23:50", "11-21 00:00", "00:10", "00:20"]


def test_thin_keeps_at_most_one_mean_point_per_bucket():
    xs = [float(i) for i in range(1000)]
    ys = [float(i % 2) for i in range(1000)]
    tx, ty = thin(xs, ys, 100)
    assert len(tx) == 100 and all(abs(y - 0.5) < 1e-9 for y in ty)
    assert thin(xs[:50], ys[:50], 100) == (xs[:50], ys[:50])


def test_build_strips_exact_size_time_ticks_and_inert_labels():
    xs = [naive("2026-11-20 09:00:00") + 2 * i for i in range(600)]
    data = ChartData(
        [ChartSeries("accept len", xs, [2.0 + (i % 7) / 10 for i in range(600)])],
        [(xs[300], "seg 1: \x1b[31mred\x1b[0m", "accent")],
        [],
        (1.0, 3.0),
        xlabel="accept len (x: time by the log's clock)",
        time_axis=True,
    )
    strips = build_strips(data, 100, 20, COLOURS)
    assert len(strips) == 20 and all(s.cell_length == 100 for s in strips)
    text = "\n".join(s.text for s in strips)
    assert "09:05" in text and "09:15" in text and "x: time by the log's clock" in text
    assert "\x1b" not in text and "seg 1: ␛[31mred" in text  # the label shown, never obeyed


def test_build_strips_draws_in_the_rows_there_are_and_gives_a_hint_only_below_them():
    two = ChartData([ChartSeries("a", [0.0, 1.0], [1.0, 2.0]), ChartSeries("b", [0.0, 1.0], [2.0, 1.0])])
    for h in (2, 3, 4, 6):  # the legend in the last row, the plot (unframed below 6 rows) above it
        strips = build_strips(two, 78, h, COLOURS)
        assert len(strips) == h and all(s.cell_length == 78 for s in strips)
        assert strips[-1].text.startswith("⣿⣿ a   ⣿⣿ b") and "no room" not in "".join(s.text for s in strips)
    strips = build_strips(two, 78, 1, COLOURS)
    assert len(strips) == 1 and all(s.cell_length == 78 for s in strips)
    assert "no room for the chart's axes here" in "".join(s.text for s in strips)


def test_ticks_fill_the_width_and_a_short_span_still_gets_two():
    lo, hi = naive("2026-11-20 09:00:00"), naive("2026-11-20 09:17:00")
    assert len(time_ticks(lo, hi, tick_count(40))[0]) >= 3  # a grid pane's chart at 200x60
    assert len(time_ticks(lo, hi, tick_count(190))[0]) >= 8  # the whole width
    ticks, labels = time_ticks(lo, lo + 70, 2)  # fewer than two round minutes in it: finer steps
    assert len(ticks) >= 2, labels
    _, labels = elapsed_ticks(0.0, 1800.0, 4)
    assert labels == ["+0 s", "+10 min", "+20 min", "+30 min"]


def test_a_series_is_cut_into_runs_at_restarts_and_idle_gaps():
    xs = [0.0, 1.0, 2.0, 3.0, 40.0, 41.0, 42.0, 43.0, 44.0]  # 37 s idle after a 1 s cadence
    assert runs(xs) == [(0, 4), (4, 9)]
    assert runs(xs, {7}) == [(0, 4), (4, 7), (7, 9)]  # and a restart at point 7
    assert runs([0.0, 1.0, 2.0]) == [(0, 3)]


def test_no_line_is_drawn_across_a_gap():
    xs = [float(i) for i in range(50)] + [float(i) for i in range(150, 200)]
    ys = [2.0] * 100
    one = build_strips(ChartData([ChartSeries("al", xs, ys)], ylim=(1.0, 3.0)), 80, 10, COLOURS)
    row = next(s.text for s in one if "⠒" in s.text or "⠉" in s.text or "⣀" in s.text)
    plot = row[5:-1]
    gap = plot[len(plot) * 55 // 200 : len(plot) * 145 // 200]  # the middle of the gap: nothing drawn
    assert gap.strip() == "", row


def test_labels_are_cut_with_an_ellipsis():
    assert cut("seg 1: EAGLE3 steps=5 topk=1", 12) == "seg 1: EAGL…"
    assert cut("short", 12) == "short"


def test_marks_closer_than_their_labels_keep_their_lines_and_label_only_in_their_own_room():
    """A storm of rotations marks the chart every few columns: each mark keeps its line, and its
    label is drawn only in the room before the next mark (cut, or left out), never over the next
    one ("rotrorotarotated" before); a mark alone, and the last, keeps its whole label."""
    xs = [float(i) for i in range(101)]
    marks = [(10.0, "rotated"), (40.0, "rotated"), (42.0, "rotated"), (44.0, "rotated"), (80.0, "M1")]
    data = ChartData(
        [ChartSeries("al", xs, [2.0 + (i % 7) / 10 for i in range(101)])], marks=marks, ylim=(1.0, 3.0)
    )
    text = "\n".join(s.text for s in build_strips(data, 100, 12, {**COLOURS, "warning": (255, 200, 0)}))
    (row,) = [line for line in text.split("\n") if "rotated" in line]
    assert "M1" in row and row.count("rotated") == 2  # the first, and the last of the three close ones
    assert not any(ch.isalpha() for ch in row.replace("rotated", "").replace("M1", ""))  # no pieces
